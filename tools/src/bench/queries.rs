//! Query sets, side by side in the same frames (timestamp queries, a full barrier between
//! approaches): one pick, 16 points in one set, a radius-8 query, rectangles of 64x64,
//! 256x256 and the whole view (`Visible`, reduced on the GPU), 256x256 `All`, and the
//! full-resolution ID pass without and with the readback of every pixel (the alternative to
//! reducing on the GPU; its CPU reduction of a 256x256 region is timed too). CPU: recording
//! one point vs 16 points (in alternating order, after an untimed warm-up set of the kind
//! recorded first), and taking their results.

use crate::gpu_timing::{camera, full_barrier, median};
use crate::scenes::BenchScene;
use ash::vk;
use glam::UVec2;
use picking_vk::debug::{IdCopy, IdImage};
use picking_vk::{PickQuery, PickRequest, Picker, PickerConfig, PixelRect, RectMode, Snap, Viewport};
use picking_vk_context::VulkanContext;
use std::collections::HashMap;
use std::time::Instant;

pub const APPROACHES: [&str; 9] = [
    "one pick",
    "16 points",
    "radius 8",
    "rect 64x64",
    "rect 256x256",
    "rect whole view",
    "rect 256x256 All",
    "full-res ID pass",
    "full-res ID pass + readback",
];

pub struct QueryTimings {
    /// Median GPU milliseconds, in `APPROACHES` order.
    pub gpu_ms: [f64; 9],
    /// Median CPU microseconds: record one point, record 16 points, take one, take 16.
    pub cpu_us: [f64; 4],
    /// Median CPU microseconds to reduce a 256x256 region of a read-back ID image.
    pub cpu_reduce_us: f64,
}

/// The order the seven query sets are recorded in: one point and 16 points swap every frame.
fn record_order(frame: usize) -> [usize; 7] {
    if frame.is_multiple_of(2) {
        [0, 1, 2, 3, 4, 5, 6]
    } else {
        [1, 0, 2, 3, 4, 5, 6]
    }
}

/// A rectangle of `size` around `centre`, kept inside the view.
fn rect_at(centre: UVec2, size: UVec2, (w, h): (u32, u32)) -> PixelRect {
    let size = size.min(UVec2::new(w, h));
    let min = centre.saturating_sub(size / 2).min(UVec2::new(w, h) - size);
    PixelRect::new(min, min + size)
}

pub fn measure(ctx: &VulkanContext, scene: &BenchScene, (w, h): (u32, u32), warmup: usize, frames: usize, seed: u64) -> Result<QueryTimings, String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let d = &ctx.device;
    let cam = camera(w, h);
    let draws = &scene.gpu.pick_draws;
    let picker = |entries: u32| {
        let config = PickerConfig::default().with_frames_in_flight(1).with_rect_entries(entries);
        // SAFETY: the context's handles belong together and outlive the picker.
        unsafe { Picker::new(ctx.host_device(), config) }.map_err(|x| e(&x))
    };
    let mut pickers = Vec::new();
    // Rectangles over the instance field draw up to every instance: a table large enough.
    for entries in [4096, 4096, 4096, 1 << 18, 1 << 18, 1 << 18, 1 << 18] {
        pickers.push(picker(entries)?);
    }
    // Recorded first in every frame, untimed: the driver's first commands in a command buffer
    // cost it tens of microseconds on some devices, which an engine pays once for its own
    // passes before it picks; the timed sets all see a buffer already in use. It is a set of
    // the kind the frame times first (one point, or 16 points: `record_order`), so that each
    // of the two CPU-timed sets follows its own kind in half the frames and the other kind in
    // the other half: a warm-up of one point only had warmed the one point's code paths and
    // the driver's draw paths, and never the 16 points' dispatches and count draws.
    let mut warm_up = picker(1)?;
    // SAFETY: as above.
    let mut ids = unsafe { IdImage::new(ctx.host_device(), w, h) }.map_err(|x| e(&x))?;
    // SAFETY: as above.
    let mut ids_read = unsafe { IdImage::new(ctx.host_device(), w, h) }.map_err(|x| e(&x))?;
    // SAFETY: plain query pool creation.
    let pool =
        unsafe { d.create_query_pool(&vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(10), None) }.map_err(|x| e(&x))?;
    let period = f64::from(ctx.properties.limits.timestamp_period);
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut warm_rng = fastrand::Rng::with_seed(seed ^ 0x5741_524d);
    let mut gpu: [Vec<f64>; 9] = Default::default();
    let mut cpu: [Vec<f64>; 4] = Default::default();
    let mut reduce = vec![];
    for frame in 0..warmup + frames {
        let pixel = UVec2::new(rng.u32(..w), rng.u32(..h));
        let request = PickRequest::new(Viewport::full(w, h), cam.view, cam.projection);
        let points: Vec<PickQuery> = (0..16).map(|_| PickQuery::Point(UVec2::new(rng.u32(..w), rng.u32(..h)))).collect();
        // From their own generator: the timed sets' pixels stay those of earlier benchmarks.
        let warm_up_points: Vec<PickQuery> = (0..16).map(|_| PickQuery::Point(UVec2::new(warm_rng.u32(..w), warm_rng.u32(..h)))).collect();
        let rect = |size: u32, mode| PickQuery::Rect { rect: rect_at(pixel, UVec2::splat(size), (w, h)), mode };
        let sets: [Vec<PickQuery>; 7] = [
            vec![PickQuery::Point(pixel)],
            points,
            vec![PickQuery::Radius { pixel, radius: 8, snap: Snap::Nearest }],
            vec![rect(64, RectMode::Visible)],
            vec![rect(256, RectMode::Visible)],
            vec![PickQuery::Rect { rect: PixelRect::new(UVec2::ZERO, UVec2::new(w, h)), mode: RectMode::Visible }],
            vec![rect(256, RectMode::All)],
        ];
        let mut record_us = [0.0; 2];
        ctx.run_once(|cmd| -> Result<(), String> {
            // SAFETY: (whole block) `cmd` is recording outside a render pass; the scene's
            // buffers and the targets outlive the wait in `run_once`.
            unsafe {
                let warm_up_set = if record_order(frame)[0] == 0 { &sets[0] } else { &warm_up_points };
                warm_up.record(cmd, 0, &request, warm_up_set, draws).map_err(|x| e(&x))?;
                full_barrier(d, cmd);
                d.cmd_reset_query_pool(cmd, pool, 0, 10);
                full_barrier(d, cmd);
                d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 0);
                // The two CPU-timed sets alternate which is recorded first, so neither always
                // finds the other's data in the caches.
                for (position, k) in record_order(frame).into_iter().enumerate() {
                    let t = Instant::now();
                    pickers[k].record(cmd, 0, &request, &sets[k], draws).map_err(|x| e(&x))?;
                    if k < 2 {
                        record_us[k] = t.elapsed().as_secs_f64() * 1e6;
                    }
                    full_barrier(d, cmd);
                    d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, position as u32 + 1);
                }
                ids.record(cmd, &request, draws, None, IdCopy::Nothing).map_err(|x| e(&x))?;
                full_barrier(d, cmd);
                d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 8);
                ids_read.record(cmd, &request, draws, None, IdCopy::Whole).map_err(|x| e(&x))?;
                full_barrier(d, cmd);
                d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 9);
            }
            Ok(())
        })
        .map_err(|x| e(&x))??;
        let mut take_us = [0.0; 2];
        warm_up.cancel(0).map_err(|x| e(&x))?;
        for (k, picker) in pickers.iter_mut().enumerate() {
            let t = Instant::now();
            // SAFETY: `run_once` waited for the frame.
            let results = unsafe { picker.take_results(0) }.map_err(|x| e(&x))?.ok_or("no results")?;
            if k < 2 {
                take_us[k] = t.elapsed().as_secs_f64() * 1e6;
            }
            if results.results.len() != sets[k].len() {
                return Err(format!("{}: {} results for {} queries", APPROACHES[k], results.results.len(), sets[k].len()));
            }
        }
        // The readback alternative: reduce the 256x256 rectangle's texels on the CPU.
        // SAFETY: `run_once` waited for the copy.
        let texels = unsafe { ids_read.read() }.map_err(|x| e(&x))?;
        let r = rect_at(pixel, UVec2::splat(256), (w, h));
        let t = Instant::now();
        let mut objects: HashMap<([u32; 2], u32), (u32, f32)> = HashMap::new();
        for y in r.min.y..r.max.y {
            for x in r.min.x..r.max.x {
                let texel = &texels[(y * w + x) as usize];
                if texel.id != [0, 0] {
                    let entry = objects.entry((texel.id, texel.draw_instance[1])).or_insert((0, texel.depth));
                    entry.0 += 1;
                    entry.1 = entry.1.min(texel.depth);
                }
            }
        }
        let reduce_us = t.elapsed().as_secs_f64() * 1e6;
        std::hint::black_box(&objects);
        let mut t = [0u64; 10];
        // SAFETY: the frame completed; every query was written.
        unsafe { d.get_query_pool_results(pool, 0, &mut t, vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT) }.map_err(|x| e(&x))?;
        if frame >= warmup {
            // Timestamp `position + 1` ends the set recorded at `position`; the ID passes follow.
            let mut order = record_order(frame).to_vec();
            order.extend([7, 8]);
            for (position, k) in order.into_iter().enumerate() {
                gpu[k].push(t[position + 1].saturating_sub(t[position]) as f64 * period / 1e6);
            }
            for (k, v) in [record_us[0], record_us[1], take_us[0], take_us[1]].into_iter().enumerate() {
                cpu[k].push(v);
            }
            reduce.push(reduce_us);
        }
    }
    // SAFETY: all work finished (`run_once` waits).
    unsafe { d.destroy_query_pool(pool, None) };
    Ok(QueryTimings {
        gpu_ms: std::array::from_fn(|k| median(&mut gpu[k])),
        cpu_us: std::array::from_fn(|k| median(&mut cpu[k])),
        cpu_reduce_us: median(&mut reduce),
    })
}
