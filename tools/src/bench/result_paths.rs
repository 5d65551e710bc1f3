//! What GPU results and snapping add to a pick, side by side in the same frames (timestamp
//! queries, a full barrier between sets): a point, a radius-8 query under `Snap::Nearest`
//! and `Snap::Thin`, and a 64x64 rectangle, each recorded by a picker without and one with
//! `PickerConfig::gpu_results` (whose time includes its compute pass and copies). The two of
//! a pair swap order every frame. CPU: recording and taking each set, and what GPU results add
//! to recording (the median of each frame's difference within a pair). The frame starts with
//! a warm-up point pick with GPU results: the driver's once-per-command-buffer costs (the
//! first render pass, the first compute dispatch) fall there, and its own recording time is
//! reported beside the others.

use crate::gpu_timing::{camera, full_barrier, median};
use crate::scenes::BenchScene;
use ash::vk;
use glam::UVec2;
use picking_vk::{PickQuery, PickRequest, Picker, PickerConfig, PixelRect, RectMode, Snap, Viewport};
use picking_vk_context::VulkanContext;
use std::time::Instant;

/// The sets, each without and with GPU results.
pub const SETS: [&str; 4] = ["point", "radius 8 nearest", "radius 8 thin", "rect 64x64"];

/// Per set, without and with GPU results: one sample per frame.
type Samples = [[Vec<f64>; 2]; 4];

pub struct ResultPathTimings {
    /// Median GPU µs per set: `[without, with]` GPU results.
    pub gpu_us: [[f64; 2]; 4],
    /// Median CPU µs recording each set, without and with.
    pub record_us: [[f64; 2]; 4],
    /// Median over frames of the CPU µs GPU results add to recording each set (paired).
    pub record_added_us: [f64; 4],
    /// Median CPU µs recording the command buffer's first pick (a point with GPU results: the
    /// first render pass and compute dispatch there).
    pub first_dispatch_record_us: f64,
    /// Median CPU µs taking each set's results, without and with.
    pub take_us: [[f64; 2]; 4],
}

fn queries(k: usize, pixel: UVec2, (w, h): (u32, u32)) -> PickQuery {
    match k {
        0 => PickQuery::Point(pixel),
        1 => PickQuery::Radius { pixel, radius: 8, snap: Snap::Nearest },
        2 => PickQuery::Radius { pixel, radius: 8, snap: Snap::Thin },
        _ => {
            let min = pixel.min(UVec2::new(w, h).saturating_sub(UVec2::splat(64)));
            PickQuery::Rect { rect: PixelRect::new(min, (min + UVec2::splat(64)).min(UVec2::new(w, h))), mode: RectMode::Visible }
        }
    }
}

pub fn measure(ctx: &VulkanContext, scene: &BenchScene, (w, h): (u32, u32), warmup: usize, frames: usize, seed: u64) -> Result<ResultPathTimings, String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let d = &ctx.device;
    let cam = camera(w, h);
    let draws = &scene.gpu.pick_draws;
    let picker = |gpu_results: bool| {
        // Rectangles over the instance field may draw every instance: a table large enough.
        let config = PickerConfig::default().with_frames_in_flight(1).with_rect_entries(1 << 18).with_gpu_results(gpu_results).with_gpu_result_draws(1 << 16);
        // SAFETY: the context's handles belong together and outlive the picker.
        unsafe { Picker::new(ctx.host_device(), config) }.map_err(|x| e(&x))
    };
    let mut pickers: Vec<[Picker; 2]> = (0..SETS.len()).map(|_| Ok([picker(false)?, picker(true)?])).collect::<Result<_, String>>()?;
    let mut warm_up = picker(true)?;
    let slots = 2 * SETS.len() as u32 + 1;
    // SAFETY: plain query pool creation.
    let pool =
        unsafe { d.create_query_pool(&vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(slots), None) }.map_err(|x| e(&x))?;
    let period = f64::from(ctx.properties.limits.timestamp_period);
    let mut rng = fastrand::Rng::with_seed(seed);
    let (mut gpu, mut record, mut take): (Samples, Samples, Samples) = Default::default();
    let (mut added, mut first_dispatch): ([Vec<f64>; 4], Vec<f64>) = Default::default();
    for frame in 0..warmup + frames {
        let pixel = UVec2::new(rng.u32(..w), rng.u32(..h));
        let request = PickRequest::new(Viewport::full(w, h), cam.view, cam.projection);
        // The pair's order swaps every frame: (set, with GPU results) in recording order.
        let order: Vec<(usize, usize)> = (0..SETS.len()).flat_map(|k| if frame % 2 == 0 { [(k, 0), (k, 1)] } else { [(k, 1), (k, 0)] }).collect();
        let mut cpu_record = [[0.0; 2]; 4];
        let mut warm_up_us = 0.0;
        ctx.run_once(|cmd| -> Result<(), String> {
            // SAFETY: (whole block) `cmd` is recording outside a render pass; the scene's
            // buffers outlive the wait in `run_once`.
            unsafe {
                let t = Instant::now();
                warm_up.record(cmd, 0, &request, &[PickQuery::Point(pixel)], draws).map_err(|x| e(&x))?;
                warm_up_us = t.elapsed().as_secs_f64() * 1e6;
                full_barrier(d, cmd);
                d.cmd_reset_query_pool(cmd, pool, 0, slots);
                full_barrier(d, cmd);
                d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 0);
                for (position, &(k, on)) in order.iter().enumerate() {
                    let t = Instant::now();
                    pickers[k][on].record(cmd, 0, &request, &[queries(k, pixel, (w, h))], draws).map_err(|x| e(&x))?;
                    cpu_record[k][on] = t.elapsed().as_secs_f64() * 1e6;
                    full_barrier(d, cmd);
                    d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, position as u32 + 1);
                }
            }
            Ok(())
        })
        .map_err(|x| e(&x))??;
        warm_up.cancel(0).map_err(|x| e(&x))?;
        let mut t = vec![0u64; slots as usize];
        // SAFETY: the frame completed; every query was written.
        unsafe { d.get_query_pool_results(pool, 0, &mut t, vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT) }.map_err(|x| e(&x))?;
        for (k, pair) in pickers.iter_mut().enumerate() {
            for (on, picker) in pair.iter_mut().enumerate() {
                let start = Instant::now();
                // SAFETY: `run_once` waited for the frame.
                let taken = unsafe { picker.take_results(0) }.map_err(|x| e(&x))?.ok_or("no results")?;
                let us = start.elapsed().as_secs_f64() * 1e6;
                std::hint::black_box(taken);
                if frame >= warmup {
                    take[k][on].push(us);
                    record[k][on].push(cpu_record[k][on]);
                }
            }
        }
        if frame >= warmup {
            first_dispatch.push(warm_up_us);
            for (k, pair) in cpu_record.iter().enumerate() {
                added[k].push(pair[1] - pair[0]);
            }
            for (position, &(k, on)) in order.iter().enumerate() {
                gpu[k][on].push(t[position + 1].saturating_sub(t[position]) as f64 * period / 1e3);
            }
        }
    }
    // SAFETY: all work finished (`run_once` waits).
    unsafe { d.destroy_query_pool(pool, None) };
    let medians = |v: &mut Samples| std::array::from_fn(|k| std::array::from_fn(|on| median(&mut v[k][on])));
    Ok(ResultPathTimings {
        gpu_us: medians(&mut gpu),
        record_us: medians(&mut record),
        record_added_us: std::array::from_fn(|k| median(&mut added[k])),
        first_dispatch_record_us: median(&mut first_dispatch),
        take_us: medians(&mut take),
    })
}

/// The table's header: per set GPU µs without / with GPU results, what they add, snapping
/// against nearest (with GPU results), and CPU µs.
pub const HEADER: &str = "| scene | point µs (ring / +GPU results) | r8 nearest µs | r8 thin µs | rect 64 µs | GPU results add µs (point, r8 nearest, r8 thin, rect 64) | thin / nearest GPU (with GPU results) | CPU record µs point (ring / +GPU) | CPU record µs rect 64 (ring / +GPU) | GPU results add CPU µs (point, r8 nearest, r8 thin, rect 64; paired) | CPU record µs of the command buffer's first pick (first render pass and dispatch; point, GPU results) | CPU take µs r8 nearest / thin |\n|---|---|---|---|---|---|---|---|---|---|---|---|";

impl ResultPathTimings {
    pub fn line(&self, scene: &str) -> String {
        let pair = |k: usize| format!("{:.1} / {:.1}", self.gpu_us[k][0], self.gpu_us[k][1]);
        let added: Vec<String> = (0..SETS.len()).map(|k| format!("{:.1}", self.gpu_us[k][1] - self.gpu_us[k][0])).collect();
        let cpu_added: Vec<String> = self.record_added_us.iter().map(|v| format!("{v:.1}")).collect();
        format!(
            "| {scene} | {} | {} | {} | {} | {} | {:.2}x | {:.1} / {:.1} | {:.1} / {:.1} | {} | {:.1} | {:.1} / {:.1} |",
            pair(0),
            pair(1),
            pair(2),
            pair(3),
            added.join(", "),
            self.gpu_us[2][1] / self.gpu_us[1][1],
            self.record_us[0][0],
            self.record_us[0][1],
            self.record_us[3][0],
            self.record_us[3][1],
            cpu_added.join(", "),
            self.first_dispatch_record_us,
            self.take_us[1][0],
            self.take_us[2][0],
        )
    }

    pub fn json(&self, scene: &str) -> serde_json::Value {
        let per_set = |v: &[[f64; 2]; 4]| {
            SETS.iter().zip(v).map(|(s, p)| (s.to_string(), serde_json::json!({"ring": p[0], "gpu_results": p[1]}))).collect::<serde_json::Map<_, _>>()
        };
        let added = SETS.iter().zip(self.record_added_us).map(|(s, v)| (s.to_string(), serde_json::json!(v))).collect::<serde_json::Map<_, _>>();
        serde_json::json!({
            "scene": scene,
            "gpu_us": per_set(&self.gpu_us),
            "cpu_record_us": per_set(&self.record_us),
            "cpu_record_added_us": added,
            "cpu_record_first_dispatch_us": self.first_dispatch_record_us,
            "cpu_take_us": per_set(&self.take_us),
        })
    }
}
