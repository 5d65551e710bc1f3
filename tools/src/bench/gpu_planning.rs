//! GPU planning on the instance field, side by side in the same frames (timestamp queries, a
//! full barrier between sets): the field's instances known to the CPU (as vertex attributes
//! with a CPU copy of their transforms: the CPU planner culls them) against the same
//! transforms written each frame by a host compute pass into a storage buffer the picker
//! reads (no CPU copy: the GPU planner culls them, the CPU planner must draw them all). Sets:
//! one point, 16 points and the whole-view `Visible` rectangle, and the full-resolution ID
//! pass. A third family reads the CPU-known transforms with the GPU planner (`Planner::Gpu`,
//! vertex attributes of the host pass's buffer, `InstanceBinding::VertexAndStorageBuffer`):
//! the two planners on the same instances. CPU: recording each set (the families take turns
//! going first). Parity: every GPU-planned answer against the CPU-known one.

use crate::gpu_timing::{camera, count_parity, full_barrier, median, take_frame};
use crate::scenes::BenchScene;
use ash::vk;
use glam::UVec2;
use picking_vk::config::Planner;
use picking_vk::debug::{IdCopy, IdImage};
use picking_vk::draw::{BufferRange, InstanceBinding, Instances};
use picking_vk::{FrameResults, PickQuery, PickRequest, Picker, PickerConfig, PixelRect, QueryResult, RectMode, Viewport};
use picking_vk_context::VulkanContext;
use picking_vk_host::InstanceMotion;
use serde_json::json;
use std::time::Instant;

/// The timed sets: (instances, planner, queries); then the full-resolution ID pass.
pub const SETS: [&str; 10] = [
    "CPU-known, CPU planner: point",
    "CPU-known, CPU planner: 16 points",
    "CPU-known, CPU planner: whole view",
    "GPU-written, GPU planner: point",
    "GPU-written, GPU planner: 16 points",
    "GPU-written, GPU planner: whole view",
    "GPU-written, CPU planner (unculled): point",
    "CPU-known, GPU planner: point",
    "CPU-known, GPU planner: 16 points",
    "CPU-known, GPU planner: whole view",
];

/// The query set of timed set `k`: one point, 16 points, or the whole view.
fn queries_of(k: usize) -> usize {
    match k {
        6 => 0,
        7.. => k - 7,
        _ => k % 3,
    }
}

pub const HEADER: &str = "| scene | CPU-known (CPU planner) point / 16 pts / view ms | GPU-written (GPU planner) point / 16 pts / view ms | GPU-written unculled point ms | full-res ID ms | GPU-planned / CPU-known point | unculled / CPU-known point | 16 pts / point (GPU planner) | view / full-res ID: CPU-known, GPU-planned | CPU record µs CPU-known point / 16 | CPU record µs GPU-planned point / 16 | 16 pts / point CPU (GPU planner) | survivors per point | whole view: survivors / commands / fallbacks | CPU-known (GPU planner) point / 16 pts / view ms | GPU / CPU planner on CPU-known: point, 16 pts, view | CPU record µs CPU-known, GPU planner point / 16 | GPU-written: planner's passes ms point / 16 pts | parity |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|";

pub struct PlanningTimings {
    /// Median GPU ms per set (`SETS` order), then the full-resolution ID pass.
    pub gpu_ms: [f64; 11],
    /// Median CPU µs recording each set.
    pub cpu_us: [f64; 10],
    /// Median instances the GPU plan drew for the point set.
    pub survivors: f64,
    /// Medians for the GPU-planned whole view: survivors, the commands (runs) that drew
    /// them, and pairs that fell back to their whole range.
    pub view_plan: [f64; 3],
    /// Median GPU ms of the GPU planner's own passes (`PickStats::gpu_plan_time_ns`) for the
    /// GPU-written point and 16 points.
    pub plan_ms: [f64; 2],
    /// GPU-planned answers equal to the CPU-known ones, of those compared.
    pub parity: (usize, usize),
}

/// The order the sets are recorded in: the three families take turns going first, so none
/// always follows another's whole-view rectangle (its cold caches); the unculled point last.
fn record_order(frame: usize) -> [usize; 10] {
    let families = [[0, 1, 2], [3, 4, 5], [7, 8, 9]];
    let mut order = [6; 10];
    for (k, family) in (0..3).map(|k| families[(frame + k) % 3]).enumerate() {
        order[3 * k..3 * k + 3].copy_from_slice(&family);
    }
    order
}

/// What must agree: each pick's hit (object, instance, depth), each rectangle's objects.
pub fn answers(results: &FrameResults) -> Vec<String> {
    let key = |r: &QueryResult| match r {
        QueryResult::Rect(rect) => format!("{:?}", rect.objects),
        other => format!("{:?}", other.pick().and_then(|p| p.hit.as_ref()).map(|h| (h.id, h.instance, h.depth))),
    };
    results.results.iter().map(key).collect()
}

pub fn measure(ctx: &VulkanContext, scene: &BenchScene, (w, h): (u32, u32), warmup: usize, frames: usize, seed: u64) -> Result<PlanningTimings, String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let d = &ctx.device;
    let cam = camera(w, h);
    let known = &scene.gpu.pick_draws;
    // The host's pass writes the field's transforms every frame (unmoved: the CPU-known
    // field is the reference).
    let motion = InstanceMotion::new(ctx, &scene.transforms, 0.0).map_err(|x| e(&x))?;
    let range = BufferRange { buffer: motion.transforms.buffer, offset: 0, size: motion.transforms.size };
    let mut written =
        known[0].clone().with_instance_binding(InstanceBinding::StorageBuffer).with_instances(Instances { range, stride: 64, first: 0, count: motion.count() });
    written.instance_transforms = None;
    // The same buffer read as vertex attributes, with the CPU copy: for the GPU planner.
    let known_gpu = [written.clone().with_instance_binding(InstanceBinding::VertexAndStorageBuffer).with_instance_transforms(scene.transforms.clone().into())];
    let written = [written];
    let picker = |planner: Planner, whole_view: bool, timestamps: bool| {
        // The whole view draws up to every instance: table entries for them all, commands for
        // their runs, and its tiles each test the whole field (16 points too).
        let (entries, commands, instances) = if whole_view { (1 << 18, 1 << 18, 1 << 23) } else { (4096, 16_384, 1 << 21) };
        let config = PickerConfig::default()
            .with_frames_in_flight(1)
            .with_rect_entries(entries)
            .with_planner(planner)
            .with_gpu_plan_capacity(64, commands)
            .with_gpu_plan_instances(instances)
            .with_timestamps(timestamps);
        // SAFETY: the context's handles belong together and outlive the picker.
        unsafe { Picker::new(ctx.host_device(), config) }.map_err(|x| e(&x))
    };
    let mut pickers = vec![];
    let (cpu, auto, gpu) = (Planner::Cpu, Planner::Auto, Planner::Gpu);
    for (k, planner) in [cpu, cpu, cpu, auto, auto, auto, cpu, gpu, gpu, gpu].into_iter().enumerate() {
        pickers.push(picker(planner, queries_of(k) == 2, false)?);
    }
    // Probes, untimed, after the timed sets: the GPU-written point and 16 points with the
    // picker's own timestamps (`PickStats::gpu_plan_time_ns`), which cost every set they time
    // about 0.02 ms on the H200 and so stay out of the timed ones.
    for _ in 0..2 {
        pickers.push(picker(Planner::Auto, false, true)?);
    }
    let mut warm_up = picker(Planner::Auto, false, false)?;
    // SAFETY: as above.
    let mut ids = unsafe { IdImage::new(ctx.host_device(), w, h) }.map_err(|x| e(&x))?;
    // SAFETY: plain query pool creation.
    let pool =
        unsafe { d.create_query_pool(&vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(12), None) }.map_err(|x| e(&x))?;
    let period = f64::from(ctx.properties.limits.timestamp_period);
    let mut rng = fastrand::Rng::with_seed(seed);
    let (mut gpu, mut cpu): ([Vec<f64>; 11], [Vec<f64>; 10]) = Default::default();
    let (mut survivors, mut view_plan, mut parity) = (vec![], <[Vec<f64>; 3]>::default(), (0, 0));
    let mut plan_ms = <[Vec<f64>; 2]>::default();
    let request = PickRequest::new(Viewport::full(w, h), cam.view, cam.projection);
    let written_request = request.with_host_writes(vk::PipelineStageFlags::COMPUTE_SHADER, vk::AccessFlags::SHADER_WRITE);
    for frame in 0..warmup + frames {
        let pixel = UVec2::new(rng.u32(..w), rng.u32(..h));
        let points: Vec<PickQuery> = (0..16).map(|_| PickQuery::Point(UVec2::new(rng.u32(..w), rng.u32(..h)))).collect();
        let view = vec![PickQuery::Rect { rect: PixelRect::new(UVec2::ZERO, UVec2::new(w, h)), mode: RectMode::Visible }];
        let sets = [vec![PickQuery::Point(pixel)], points, view];
        let mut record_us = [0.0; 10];
        ctx.run_once(|cmd| -> Result<(), String> {
            // SAFETY: (whole block) `cmd` is recording outside a render pass; the scene's
            // buffers, the motion pass and the targets outlive the wait in `run_once`.
            unsafe {
                motion.record(cmd, frame as f32);
                warm_up.record(cmd, 0, &written_request, &[PickQuery::Point(pixel)], &written).map_err(|x| e(&x))?;
                full_barrier(d, cmd);
                d.cmd_reset_query_pool(cmd, pool, 0, 12);
                full_barrier(d, cmd);
                d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 0);
                for (position, k) in record_order(frame).into_iter().enumerate() {
                    let t = Instant::now();
                    match k {
                        0..3 => pickers[k].record(cmd, 0, &request, &sets[k], known),
                        3..7 => pickers[k].record(cmd, 0, &written_request, &sets[queries_of(k)], &written),
                        _ => pickers[k].record(cmd, 0, &written_request, &sets[queries_of(k)], &known_gpu),
                    }
                    .map_err(|x| e(&x))?;
                    record_us[k] = t.elapsed().as_secs_f64() * 1e6;
                    full_barrier(d, cmd);
                    d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, position as u32 + 1);
                }
                ids.record(cmd, &request, known, None, IdCopy::Nothing).map_err(|x| e(&x))?;
                full_barrier(d, cmd);
                d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 11);
                for k in 0..2 {
                    pickers[10 + k].record(cmd, 0, &written_request, &sets[k], &written).map_err(|x| e(&x))?;
                }
            }
            Ok(())
        })
        .map_err(|x| e(&x))??;
        warm_up.cancel(0).map_err(|x| e(&x))?;
        let mut t = [0u64; 12];
        let results = take_frame(d, &mut pickers, pool, &mut t)?;
        for k in 0..3 {
            let want = answers(&results[k]);
            for got in [answers(&results[k + 3]), answers(&results[k + 7])] {
                count_parity(&want, &got, &mut parity);
            }
        }
        if frame >= warmup {
            // Timestamp `position + 1` ends the set recorded at `position`; the ID pass follows.
            let mut order = record_order(frame).to_vec();
            order.push(10);
            for (position, k) in order.into_iter().enumerate() {
                gpu[k].push(t[position + 1].saturating_sub(t[position]) as f64 * period / 1e6);
            }
            for (k, samples) in cpu.iter_mut().enumerate() {
                samples.push(record_us[k]);
            }
            let stats = results[3].results[0].pick().and_then(|p| p.stats.gpu_plan);
            survivors.push(stats.map_or(f64::NAN, |s| s.survivors as f64));
            for (k, samples) in plan_ms.iter_mut().enumerate() {
                samples.push(results[10 + k].stats.gpu_plan_time_ns.map_or(f64::NAN, |ns| ns / 1e6));
            }
            let view = results[5].stats.gpu_plan;
            for (k, v) in view.map_or([f64::NAN; 3], |s| [s.survivors, s.commands, s.fallbacks].map(|x| x as f64)).into_iter().enumerate() {
                view_plan[k].push(v);
            }
        }
    }
    // SAFETY: all work finished (`run_once` waits).
    unsafe { d.destroy_query_pool(pool, None) };
    Ok(PlanningTimings {
        gpu_ms: std::array::from_fn(|k| median(&mut gpu[k])),
        cpu_us: std::array::from_fn(|k| median(&mut cpu[k])),
        survivors: median(&mut survivors),
        view_plan: view_plan.each_mut().map(|v| median(v)),
        plan_ms: plan_ms.each_mut().map(|v| median(v)),
        parity,
    })
}

impl PlanningTimings {
    pub fn line(&self, scene: &str) -> String {
        let (g, c) = (&self.gpu_ms, &self.cpu_us);
        // The full-resolution ID pass follows the sets.
        let id = g[10];
        format!(
            "| {scene} | {:.4} / {:.4} / {:.4} | {:.4} / {:.4} / {:.4} | {:.4} | {:.4} | {:.2}x | {:.1}x | {:.2}x | {:.2}x / {:.2}x | {:.1} / {:.1} | {:.1} / {:.1} | {:.2}x | {:.0} | {:.0} / {:.0} / {:.0} | {:.4} / {:.4} / {:.4} | {:.2}x, {:.2}x, {:.2}x | {:.1} / {:.1} | {:.4} / {:.4} | {}/{} |",
            g[0],
            g[1],
            g[2],
            g[3],
            g[4],
            g[5],
            g[6],
            id,
            g[3] / g[0],
            g[6] / g[0],
            g[4] / g[3],
            g[2] / id,
            g[5] / id,
            c[0],
            c[1],
            c[3],
            c[4],
            c[4] / c[3],
            self.survivors,
            self.view_plan[0],
            self.view_plan[1],
            self.view_plan[2],
            g[7],
            g[8],
            g[9],
            g[7] / g[0],
            g[8] / g[1],
            g[9] / g[2],
            c[7],
            c[8],
            self.plan_ms[0],
            self.plan_ms[1],
            self.parity.0,
            self.parity.1
        )
    }

    pub fn json(&self, scene: &str) -> serde_json::Value {
        let mut gpu: serde_json::Map<_, _> = SETS.iter().zip(self.gpu_ms).map(|(s, v)| (s.to_string(), json!(v))).collect();
        gpu.insert("full-res ID pass".into(), json!(self.gpu_ms[10]));
        json!({
            "scene": scene,
            "gpu_ms": gpu,
            "cpu_record_us": SETS.iter().zip(self.cpu_us).map(|(s, v)| (s.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "survivors_per_point": self.survivors,
            "whole_view_plan": {"survivors": self.view_plan[0], "commands": self.view_plan[1], "fallbacks": self.view_plan[2]},
            "gpu_planner_passes_ms": {"point": self.plan_ms[0], "16 points": self.plan_ms[1]},
            "parity": [self.parity.0, self.parity.1],
        })
    }
}
