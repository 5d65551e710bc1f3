//! GPU planning of a shared list's plain draws (the scenes of separate draws), side by side in
//! the same frames (timestamp queries, a full barrier between sets): the CPU planner against
//! the GPU planner (`Planner::Gpu`: the list's table, uploaded once, culled by a compute pass
//! per group) for one point, 16 points, a radius-8 query, a 64x64 rectangle and a rectangle
//! over the whole view (both `Visible`; the whole view's pickers with `gpu_plan_instances`
//! 2^20 and `gpu_plan_rows` 2^15, so that every tile takes a pair and compacts its
//! survivors). CPU: recording each set (the two
//! planners take turns going first). Parity: every GPU-planned answer (object, instance and
//! depth: `gpu_planning::answers`) against the CPU-planned one.

use crate::gpu_planning::answers;
use crate::gpu_timing::{camera, count_parity, full_barrier, median, take_frame};
use crate::scenes::BenchScene;
use ash::vk;
use glam::UVec2;
use picking_vk::config::Planner;
use picking_vk::{PickQuery, PickRequest, Picker, PickerConfig, PixelRect, RectMode, Snap, Viewport};
use picking_vk_context::VulkanContext;
use serde_json::json;
use std::time::Instant;

/// The timed sets: (planner, queries), each planner's in the same order.
pub const SETS: [&str; 2 * PER] = [
    "CPU planner: point",
    "CPU planner: 16 points",
    "CPU planner: radius 8",
    "CPU planner: rect 64x64",
    "CPU planner: whole view",
    "GPU planner: point",
    "GPU planner: 16 points",
    "GPU planner: radius 8",
    "GPU planner: rect 64x64",
    "GPU planner: whole view",
];
/// Sets per planner.
const PER: usize = 5;

pub const HEADER: &str = "| scene | CPU planner point / 16 pts / radius ms | GPU planner point / 16 pts / radius ms | GPU / CPU planner: point, 16 pts, radius | CPU record µs CPU planner point / 16 | CPU record µs GPU planner point / 16 | 16 pts / point CPU: CPU planner, GPU planner | GPU planner 16 pts: pairs / rows tested / survivors / occluded / commands / fallbacks | 16 pts primitives drawn: CPU planner / GPU planner | GPU planner's passes ms: point / 16 pts | table bytes a draw | rect 64 / whole view ms: CPU planner, GPU planner | GPU / CPU planner: rect 64, whole view | CPU record µs rect 64 / whole view: CPU planner, GPU planner | GPU planner whole view: pairs / survivors / commands / compacted / fallbacks | parity |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|";

pub struct DrawPlanningTimings {
    /// Median GPU ms per set (`SETS` order).
    pub gpu_ms: [f64; 2 * PER],
    /// Median CPU µs recording each set.
    pub cpu_us: [f64; 2 * PER],
    /// Medians for the GPU planner's 16 points: pairs, rows tested, survivors, rows occluded,
    /// commands, fallbacks.
    pub plan: [f64; 6],
    /// Medians for the GPU planner's whole view: pairs (tiles), survivors, commands, pairs
    /// drawn compacted, fallbacks.
    pub view_plan: [f64; 5],
    /// GPU-planned answers equal to the CPU-planned ones, of those compared.
    pub parity: (usize, usize),
    /// Median primitives the input assembler received for 16 points: CPU planner, GPU
    /// planner (a pipeline statistics query; NaN without `pipelineStatisticsQuery`).
    pub primitives: [f64; 2],
    /// Median GPU ms of the GPU planner's own passes (`PickStats::gpu_plan_time_ns`), for
    /// one point and 16 points.
    pub plan_ms: [f64; 2],
    /// Bytes the list's table added to the GPU planner's memory (`PickMemory::planner`), per
    /// draw of the list: what GPU planning of plain draws keeps per draw (the slots' rows
    /// are sized by `PickerConfig::gpu_plan_rows`, not by the list).
    pub table_bytes_per_draw: f64,
}

/// The planners take turns going first.
fn record_order(frame: usize) -> [usize; 2 * PER] {
    let first = if frame.is_multiple_of(2) { 0 } else { PER };
    std::array::from_fn(|k| (first + k) % (2 * PER))
}

pub fn measure(ctx: &VulkanContext, scene: &BenchScene, (w, h): (u32, u32), warmup: usize, frames: usize, seed: u64) -> Result<DrawPlanningTimings, String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let d = &ctx.device;
    let cam = camera(w, h);
    let draws = &scene.gpu.pick_draws;
    let picker = |planner: Planner, timestamps: bool, whole_view: bool| {
        // The whole view's rectangle takes an entry per draw it meets: a table large enough.
        let mut config = PickerConfig::default().with_frames_in_flight(1).with_planner(planner).with_timestamps(timestamps).with_rect_entries(1 << 18);
        if whole_view {
            // Its tiles (40 at 1920x1080) each take a pair over the table's group: survivor
            // bits for 40 x 10,000 rows, and compacted rows for their survivors.
            config = config.with_gpu_plan_instances(1 << 20).with_gpu_plan_rows(1 << 15);
        }
        // SAFETY: the context's handles belong together and outlive the picker.
        unsafe { Picker::new(ctx.host_device(), config) }.map_err(|x| e(&x))
    };
    let mut pickers = vec![];
    for planner in [Planner::Cpu, Planner::Gpu] {
        for k in 0..PER {
            pickers.push(picker(planner, false, k == PER - 1)?);
        }
    }
    // Probes, untimed, after the timed sets: the GPU planner's point and 16 points with the
    // picker's own timestamps (`PickStats::gpu_plan_time_ns`), which cost every set they time
    // about 0.02 ms on the H200 and so stay out of the timed ones.
    for _ in 0..2 {
        pickers.push(picker(Planner::Gpu, true, false)?);
    }
    let mut warm_up = picker(Planner::Cpu, false, false)?;
    let planner_before_table = pickers[PER].memory().planner;
    // SAFETY: plain query pool creation.
    let pool = unsafe { d.create_query_pool(&vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(2 * PER as u32 + 1), None) }
        .map_err(|x| e(&x))?;
    let stats = ctx.pipeline_statistics.then(|| {
        let info = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::PIPELINE_STATISTICS)
            .query_count(2 * PER as u32)
            .pipeline_statistics(vk::QueryPipelineStatisticFlags::INPUT_ASSEMBLY_PRIMITIVES);
        // SAFETY: plain query pool creation.
        unsafe { d.create_query_pool(&info, None) }
    });
    let stats = stats.transpose().map_err(|x| e(&x))?;
    let (mut primitives, mut plan_ms) = (<[Vec<f64>; 2]>::default(), <[Vec<f64>; 2]>::default());
    let period = f64::from(ctx.properties.limits.timestamp_period);
    let mut rng = fastrand::Rng::with_seed(seed);
    let (mut gpu, mut cpu): ([Vec<f64>; 2 * PER], [Vec<f64>; 2 * PER]) = (std::array::from_fn(|_| vec![]), std::array::from_fn(|_| vec![]));
    let (mut plan, mut view_plan, mut parity) = (<[Vec<f64>; 6]>::default(), <[Vec<f64>; 5]>::default(), (0, 0));
    let request = PickRequest::new(Viewport::full(w, h), cam.view, cam.projection);
    for frame in 0..warmup + frames {
        let pixel = UVec2::new(rng.u32(..w), rng.u32(..h));
        let points: Vec<PickQuery> = (0..16).map(|_| PickQuery::Point(UVec2::new(rng.u32(..w), rng.u32(..h)))).collect();
        let corner = pixel.saturating_sub(UVec2::splat(32)).min(UVec2::new(w, h).saturating_sub(UVec2::splat(64)));
        let rect = PixelRect::new(corner, (corner + UVec2::splat(64)).min(UVec2::new(w, h)));
        let view = PixelRect::new(UVec2::ZERO, UVec2::new(w, h));
        let sets = [
            vec![PickQuery::Point(pixel)],
            points,
            vec![PickQuery::Radius { pixel, radius: 8, snap: Snap::Nearest }],
            vec![PickQuery::Rect { rect, mode: RectMode::Visible }],
            vec![PickQuery::Rect { rect: view, mode: RectMode::Visible }],
        ];
        let mut record_us = [0.0; 2 * PER];
        ctx.run_once(|cmd| -> Result<(), String> {
            // SAFETY: (whole block) `cmd` is recording outside a render pass; the scene's
            // buffers and the targets outlive the wait in `run_once`.
            unsafe {
                warm_up.record(cmd, 0, &request, &[PickQuery::Point(pixel)], draws).map_err(|x| e(&x))?;
                full_barrier(d, cmd);
                d.cmd_reset_query_pool(cmd, pool, 0, 2 * PER as u32 + 1);
                full_barrier(d, cmd);
                if let Some(stats) = stats {
                    d.cmd_reset_query_pool(cmd, stats, 0, 2 * PER as u32);
                }
                d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 0);
                for (position, k) in record_order(frame).into_iter().enumerate() {
                    if let Some(stats) = stats {
                        d.cmd_begin_query(cmd, stats, k as u32, vk::QueryControlFlags::empty());
                    }
                    let t = Instant::now();
                    pickers[k].record(cmd, 0, &request, &sets[k % PER], draws).map_err(|x| e(&x))?;
                    record_us[k] = t.elapsed().as_secs_f64() * 1e6;
                    if let Some(stats) = stats {
                        d.cmd_end_query(cmd, stats, k as u32);
                    }
                    full_barrier(d, cmd);
                    d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, position as u32 + 1);
                }
                for k in 0..2 {
                    pickers[2 * PER + k].record(cmd, 0, &request, &sets[k], draws).map_err(|x| e(&x))?;
                }
            }
            Ok(())
        })
        .map_err(|x| e(&x))??;
        warm_up.cancel(0).map_err(|x| e(&x))?;
        let mut t = [0u64; 2 * PER + 1];
        let results = take_frame(d, &mut pickers, pool, &mut t)?;
        for k in 0..PER {
            count_parity(&answers(&results[k]), &answers(&results[k + PER]), &mut parity);
        }
        if let (Some(stats), true) = (stats, frame >= warmup) {
            let mut counts = [0u64; 2 * PER];
            // SAFETY: the frame completed; every query was written.
            unsafe { d.get_query_pool_results(stats, 0, &mut counts, vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT) }.map_err(|x| e(&x))?;
            primitives[0].push(counts[1] as f64);
            primitives[1].push(counts[PER + 1] as f64);
        }
        if frame >= warmup {
            for (position, k) in record_order(frame).into_iter().enumerate() {
                gpu[k].push(t[position + 1].saturating_sub(t[position]) as f64 * period / 1e6);
            }
            for (k, samples) in cpu.iter_mut().enumerate() {
                samples.push(record_us[k]);
            }
            for (k, samples) in plan_ms.iter_mut().enumerate() {
                samples.push(results[2 * PER + k].stats.gpu_plan_time_ns.map_or(f64::NAN, |ns| ns / 1e6));
            }
            let stats = results[PER + 1].stats.gpu_plan;
            for (k, v) in stats
                .map_or([f64::NAN; 6], |s| [s.ranges, s.instances_tested, s.survivors, s.occluded, s.commands, s.fallbacks].map(|x| x as f64))
                .into_iter()
                .enumerate()
            {
                plan[k].push(v);
            }
            let view =
                results[PER + 4].stats.gpu_plan.map_or([f64::NAN; 5], |s| [s.ranges, s.survivors, s.commands, s.compacted, s.fallbacks].map(|x| x as f64));
            for (samples, v) in view_plan.iter_mut().zip(view) {
                samples.push(v);
            }
        }
    }
    // SAFETY: all work finished (`run_once` waits).
    unsafe {
        d.destroy_query_pool(pool, None);
        if let Some(stats) = stats {
            d.destroy_query_pool(stats, None);
        }
    }
    Ok(DrawPlanningTimings {
        gpu_ms: std::array::from_fn(|k| median(&mut gpu[k])),
        cpu_us: std::array::from_fn(|k| median(&mut cpu[k])),
        plan: plan.each_mut().map(|v| median(v)),
        view_plan: view_plan.each_mut().map(|v| median(v)),
        parity,
        primitives: primitives.each_mut().map(|v| if v.is_empty() { f64::NAN } else { median(v) }),
        plan_ms: plan_ms.each_mut().map(|v| median(v)),
        table_bytes_per_draw: (pickers[PER].memory().planner - planner_before_table) as f64 / draws.len().max(1) as f64,
    })
}

impl DrawPlanningTimings {
    pub fn line(&self, scene: &str) -> String {
        let (g, c, p) = (&self.gpu_ms, &self.cpu_us, &self.plan);
        let gpu = PER;
        format!(
            "| {scene} | {:.4} / {:.4} / {:.4} | {:.4} / {:.4} / {:.4} | {:.2}x, {:.2}x, {:.2}x | {:.1} / {:.1} | {:.1} / {:.1} | {:.2}x, {:.2}x | {:.0} / {:.0} / {:.0} / {:.0} / {:.0} / {:.0} | {:.0} / {:.0} | {:.4} / {:.4} | {:.1} | {:.4} / {:.3}, {:.4} / {:.3} | {:.2}x, {:.2}x | {:.1} / {:.1}, {:.1} / {:.1} | {:.0} / {:.0} / {:.0} / {:.0} / {:.0} | {}/{} |",
            g[0],
            g[1],
            g[2],
            g[gpu],
            g[gpu + 1],
            g[gpu + 2],
            g[gpu] / g[0],
            g[gpu + 1] / g[1],
            g[gpu + 2] / g[2],
            c[0],
            c[1],
            c[gpu],
            c[gpu + 1],
            c[1] / c[0],
            c[gpu + 1] / c[gpu],
            p[0],
            p[1],
            p[2],
            p[3],
            p[4],
            p[5],
            self.primitives[0],
            self.primitives[1],
            self.plan_ms[0],
            self.plan_ms[1],
            self.table_bytes_per_draw,
            g[3],
            g[4],
            g[gpu + 3],
            g[gpu + 4],
            g[gpu + 3] / g[3],
            g[gpu + 4] / g[4],
            c[3],
            c[4],
            c[gpu + 3],
            c[gpu + 4],
            self.view_plan[0],
            self.view_plan[1],
            self.view_plan[2],
            self.view_plan[3],
            self.view_plan[4],
            self.parity.0,
            self.parity.1
        )
    }

    pub fn json(&self, scene: &str) -> serde_json::Value {
        json!({
            "scene": scene,
            "gpu_ms": SETS.iter().zip(self.gpu_ms).map(|(s, v)| (s.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "cpu_record_us": SETS.iter().zip(self.cpu_us).map(|(s, v)| (s.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "gpu_planner_16_points": {"pairs": self.plan[0], "rows_tested": self.plan[1], "survivors": self.plan[2], "occluded": self.plan[3], "commands": self.plan[4], "fallbacks": self.plan[5]},
            "gpu_planner_whole_view": {"pairs": self.view_plan[0], "survivors": self.view_plan[1], "commands": self.view_plan[2], "compacted": self.view_plan[3], "fallbacks": self.view_plan[4]},
            "primitives_16_points": {"cpu_planner": self.primitives[0], "gpu_planner": self.primitives[1]},
            "gpu_planner_passes_ms": {"point": self.plan_ms[0], "16 points": self.plan_ms[1]},
            "table_bytes_per_draw": self.table_bytes_per_draw,
            "parity": [self.parity.0, self.parity.1],
        })
    }
}
