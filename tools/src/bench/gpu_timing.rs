//! GPU time of each approach, measured side by side in the same frames with timestamp
//! queries (a full barrier between approaches isolates them), and the picker's CPU time in
//! two settings: in the frame, as a host pays it (the pick recorded right after the host's
//! lit pass, into the same command buffer), and isolated (each variant into a scratch command
//! buffer right after the previous frame's fence wait, in rotating order, so none pays for
//! the driver growing a fresh command buffer).

use crate::scenes::BenchScene;
use ash::vk;
use glam::{Mat4, UVec2};
use picking_vk::debug::{IdCopy, IdImage};
use picking_vk::{FrameResults, PickQuery, PickRequest, Picker, PickerConfig, Viewport};
use picking_vk_context::VulkanContext;
use picking_vk_host::{vk_util, CameraMatrices, FrameStyle, LitPass, Offscreen, COLOR_FORMAT};
use std::time::Instant;

pub const APPROACHES: [&str; 5] =
    ["picker (culling, shared list)", "picker (no culling)", "full-size target, scissored", "full-resolution ID pass", "lit main pass"];

pub struct Timings {
    /// Median GPU milliseconds per approach, in `APPROACHES` order.
    pub gpu_ms: [f64; 5],
    /// Median CPU microseconds of recording a pick (culling + recording), isolated: shared
    /// list with a hierarchy (`record` with `&Arc`), no culling, and per-frame list culling
    /// (`record` with a borrowed slice).
    pub cpu_us: [f64; 3],
    /// Median CPU microseconds of `record` over the shared list inside the frame, after the
    /// host's lit pass.
    pub in_frame_us: f64,
    /// Median draws recorded per pick: culling (shared list), no culling.
    pub draws_recorded: [f64; 2],
    pub instances_culled: u64,
}

pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// After a frame `run_once` waited for: every picker's results (in order) and the frame's
/// `timestamps.len()` timestamps from `pool`.
pub fn take_frame(d: &ash::Device, pickers: &mut [Picker], pool: vk::QueryPool, timestamps: &mut [u64]) -> Result<Vec<FrameResults>, String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let mut results = Vec::with_capacity(pickers.len());
    for picker in pickers {
        // SAFETY: the caller's `run_once` waited for the frame.
        results.push(unsafe { picker.take_results(0) }.map_err(|x| e(&x))?.ok_or("no results")?);
    }
    // SAFETY: the frame completed; every query was written.
    unsafe { d.get_query_pool_results(pool, 0, timestamps, vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT) }.map_err(|x| e(&x))?;
    Ok(results)
}

/// Adds to `parity` how many of `got`'s answers equal `want`'s, of how many.
pub fn count_parity(want: &[String], got: &[String], parity: &mut (usize, usize)) {
    parity.0 += want.iter().zip(got).filter(|(a, b)| a == b).count();
    parity.1 += want.len();
}

pub fn full_barrier(d: &ash::Device, cmd: vk::CommandBuffer) {
    let b = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::MEMORY_WRITE)
        .dst_access_mask(vk::AccessFlags::MEMORY_READ | vk::AccessFlags::MEMORY_WRITE);
    // SAFETY: `cmd` is recording outside a render pass.
    unsafe {
        d.cmd_pipeline_barrier(cmd, vk::PipelineStageFlags::ALL_COMMANDS, vk::PipelineStageFlags::ALL_COMMANDS, vk::DependencyFlags::empty(), &[b], &[], &[])
    };
}

/// Keeps the GPU busy for `ms` milliseconds (full-resolution ID passes of `scene`, nothing
/// read back) before a table is timed. The CPU-only parts of a scene (parity, the CPU BVH)
/// leave the GPU idle long enough for its clocks to drop, and ten warm-up frames of a 15 µs
/// pick do not raise them again: two of four scenes then timed every pick at about 2.3x its
/// steady cost, in every table after the first.
pub fn settle_clocks(ctx: &VulkanContext, scene: &BenchScene, (w, h): (u32, u32), ms: u64) -> Result<(), String> {
    if ms == 0 {
        return Ok(());
    }
    let e = |x: &dyn std::fmt::Display| x.to_string();
    // SAFETY: the context outlives the image.
    let mut image = unsafe { IdImage::new(ctx.host_device(), w, h) }.map_err(|x| e(&x))?;
    let cam = camera(w, h);
    let request = PickRequest::new(Viewport::full(w, h), cam.view, cam.projection);
    let start = Instant::now();
    while start.elapsed().as_millis() < u128::from(ms) {
        // SAFETY: recording outside a render pass; the scene's buffers outlive the wait.
        ctx.run_once(|cmd| unsafe { image.record(cmd, &request, &scene.gpu.pick_draws, None, IdCopy::Nothing) }).map_err(|x| e(&x))?.map_err(|x| e(&x))?;
    }
    Ok(())
}

/// Per-variant medians of side-by-side measurements: GPU milliseconds and CPU microseconds.
pub struct VariantTimes {
    pub gpu_ms: Vec<f64>,
    pub cpu_us: Vec<f64>,
}

/// Times `pickers.len()` variants side by side: each of `warmup + frames` frames records every
/// variant into one command buffer, in rotating order (so none always pays for cold caches),
/// each between full barriers and timestamps. `record(frame, k, picker, cmd)` records variant
/// `k` and returns its CPU microseconds (NaN keeps it out of the median); each picker's result
/// is taken after the frame. Medians over the frames after the warm-up.
pub fn time_variants(
    ctx: &VulkanContext,
    pickers: &mut [Picker],
    warmup: usize,
    frames: usize,
    mut record: impl FnMut(usize, usize, &mut Picker, vk::CommandBuffer) -> Result<f64, String>,
) -> Result<VariantTimes, String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let d = &ctx.device;
    let n = pickers.len();
    // SAFETY: plain query pool creation.
    let pool = unsafe { d.create_query_pool(&vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(2 * n as u32), None) }
        .map_err(|x| e(&x))?;
    let period = f64::from(ctx.properties.limits.timestamp_period);
    let mut gpu: Vec<Vec<f64>> = vec![vec![]; n];
    let mut cpu: Vec<Vec<f64>> = vec![vec![]; n];
    let mut run = || -> Result<(), String> {
        for frame in 0..warmup + frames {
            let mut record_us = vec![0.0; n];
            ctx.run_once(|cmd| -> Result<(), String> {
                // SAFETY: (whole block) `cmd` is recording outside a render pass; what the
                // pickers record outlives the wait in `run_once`.
                unsafe {
                    d.cmd_reset_query_pool(cmd, pool, 0, 2 * n as u32);
                    for i in 0..n {
                        let k = (i + frame) % n;
                        full_barrier(d, cmd);
                        d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 2 * k as u32);
                        record_us[k] = record(frame, k, &mut pickers[k], cmd)?;
                        full_barrier(d, cmd);
                        d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 2 * k as u32 + 1);
                    }
                }
                Ok(())
            })
            .map_err(|x| e(&x))??;
            for picker in pickers.iter_mut() {
                // SAFETY: `run_once` waited for the frame.
                unsafe { picker.take_results(0) }.map_err(|x| e(&x))?;
            }
            let mut t = vec![0u64; 2 * n];
            // SAFETY: the frame completed; every query was written.
            unsafe { d.get_query_pool_results(pool, 0, &mut t, vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT) }.map_err(|x| e(&x))?;
            if frame >= warmup {
                for k in 0..n {
                    gpu[k].push(t[2 * k + 1].saturating_sub(t[2 * k]) as f64 * period / 1e6);
                    if record_us[k].is_finite() {
                        cpu[k].push(record_us[k]);
                    }
                }
            }
        }
        Ok(())
    };
    let outcome = run();
    // SAFETY: all work finished (`run_once` waits).
    unsafe { d.destroy_query_pool(pool, None) };
    outcome?;
    Ok(VariantTimes { gpu_ms: gpu.iter_mut().map(|v| median(v)).collect(), cpu_us: cpu.iter_mut().map(|v| median(v)).collect() })
}

pub fn camera(width: u32, height: u32) -> CameraMatrices {
    let view = Mat4::IDENTITY;
    let projection = glam::camera::rh::proj::vulkan::perspective(1.0, width as f32 / height as f32, 0.1, 200.0);
    CameraMatrices { view, projection, eye: glam::Vec3::ZERO }
}

pub fn measure(ctx: &VulkanContext, scene: &BenchScene, (w, h): (u32, u32), warmup: usize, frames: usize, seed: u64) -> Result<Timings, String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let d = &ctx.device;
    let cam = camera(w, h);
    let vp = Viewport::full(w, h);
    let draws = &scene.gpu.pick_draws;
    let picker = |culling: bool| {
        // SAFETY: the context's handles belong together and outlive the picker.
        unsafe { Picker::new(ctx.host_device(), PickerConfig::default().with_frames_in_flight(1).with_culling(culling)) }.map_err(|x| e(&x))
    };
    let id_image = || {
        // SAFETY: as above.
        unsafe { IdImage::new(ctx.host_device(), w, h) }.map_err(|x| e(&x))
    };
    let (mut culled, mut unculled, mut listed) = (picker(true)?, picker(false)?, picker(true)?);
    let (mut blog, mut full) = (id_image()?, id_image()?);
    let lit = LitPass::new(ctx, COLOR_FORMAT, vk::ImageLayout::TRANSFER_SRC_OPTIMAL, picking_vk::DepthConvention::Standard).map_err(|x| e(&x))?;
    let target = Offscreen::new(ctx, &lit, vk::Extent2D { width: w, height: h }).map_err(|x| e(&x))?;
    let mut style = FrameStyle::new(ctx, &scene.gpu).map_err(|x| e(&x))?;
    // SAFETY: a fresh style, never drawn with.
    unsafe { style.update(None, None, None) }.map_err(|x| e(&x))?;
    // SAFETY: plain query pool creation.
    let pool =
        unsafe { d.create_query_pool(&vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(6), None) }.map_err(|x| e(&x))?;
    let period = f64::from(ctx.properties.limits.timestamp_period);
    // Its own pool, resettable per buffer; destroyed when `scratch_set` drops at the end.
    let scratch_set = ctx.command_buffers(1).map_err(|x| e(&x))?;
    let scratch = scratch_set[0];
    let mut rng = fastrand::Rng::with_seed(seed);
    let (mut gpu, mut cpu): ([Vec<f64>; 5], [Vec<f64>; 3]) = Default::default();
    let mut in_frame = vec![];
    let mut recorded_counts: [Vec<f64>; 2] = Default::default();
    let mut instances_culled = 0;
    let viewport = vk_util::viewport(0, 0, w, h);
    for frame in 0..warmup + frames {
        let pixel = UVec2::new(rng.u32(..w), rng.u32(..h));
        let request = PickRequest::new(vp, cam.view, cam.projection);
        let recorded = ctx.run_once(|cmd| -> Result<f64, String> {
            // SAFETY: (whole block) `cmd` is recording outside a render pass; all scene
            // buffers and targets outlive the wait in `run_once`.
            unsafe {
                d.cmd_reset_query_pool(cmd, pool, 0, 6);
                full_barrier(d, cmd);
                // The host's frame first, then the pick, as an engine records them.
                d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 0);
                lit.begin(cmd, target.framebuffer(), target.extent());
                lit.draw_scene(cmd, &scene.gpu, 0, &style, &cam, viewport, None);
                lit.end(cmd);
                full_barrier(d, cmd);
                d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 1);
                let t = Instant::now();
                culled.record(cmd, 0, &request, &[PickQuery::Point(pixel)], draws).map_err(|x| e(&x))?;
                let pick_us = t.elapsed().as_secs_f64() * 1e6;
                full_barrier(d, cmd);
                d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 2);
                unculled.record(cmd, 0, &request, &[PickQuery::Point(pixel)], &draws[..]).map_err(|x| e(&x))?;
                full_barrier(d, cmd);
                d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 3);
                blog.record(cmd, &request, draws, Some(pixel), IdCopy::Pixel(pixel)).map_err(|x| e(&x))?;
                full_barrier(d, cmd);
                d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 4);
                full.record(cmd, &request, draws, None, IdCopy::Nothing).map_err(|x| e(&x))?;
                full_barrier(d, cmd);
                d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 5);
                // Per-frame list culling: checked for the same answer, timed below.
                listed.record(cmd, 0, &request, &[PickQuery::Point(pixel)], &draws[..]).map_err(|x| e(&x))?;
                Ok(pick_us)
            }
        });
        let pick_us = recorded.map_err(|x| e(&x))??;
        // SAFETY: `run_once` waited: the slots' copies completed.
        let (a, b) = unsafe { (culled.take_results(0), unculled.take_results(0)) };
        // SAFETY: as above.
        let c = unsafe { listed.take_results(0) }.map_err(|x| e(&x))?.ok_or("no results")?;
        let (a, b) = (a.map_err(|x| e(&x))?.ok_or("no results")?, b.map_err(|x| e(&x))?.ok_or("no results")?);
        let (a, b, c) = (a.pick(0).ok_or("no result")?, b.pick(0).ok_or("no result")?, c.pick(0).ok_or("no result")?);
        if a.id() != b.id() || c.id() != b.id() {
            return Err(format!("culling changed the pick at {pixel}: {:?} / {:?} vs {:?}", a.id(), c.id(), b.id()));
        }
        let mut t = [0u64; 6];
        // SAFETY: the frame completed; all six queries were written.
        unsafe { d.get_query_pool_results(pool, 0, &mut t, vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT) }.map_err(|x| e(&x))?;
        if frame >= warmup {
            // Recorded as lit, culled, unculled, scissored, full; stored in `APPROACHES` order.
            let span = |k: usize| t[k + 1].saturating_sub(t[k]) as f64 * period / 1e6;
            for (k, at) in [1, 2, 3, 4, 0].into_iter().enumerate() {
                gpu[k].push(span(at));
            }
            in_frame.push(pick_us);
            let cpu_frame = cpu_times(d, scratch, frame, [&mut culled, &mut unculled, &mut listed], &request, pixel, &scene.gpu.pick_draws)?;
            for k in 0..3 {
                cpu[k].push(cpu_frame[k]);
            }
            recorded_counts[0].push(a.stats.pass.draws_recorded as f64);
            recorded_counts[1].push(b.stats.pass.draws_recorded as f64);
            instances_culled = instances_culled.max(a.stats.pass.instances_culled);
        }
    }
    // SAFETY: all work finished (`run_once` waits).
    unsafe { d.destroy_query_pool(pool, None) };
    // The scratch buffer was never submitted.
    drop(scratch_set);
    let gpu_ms = [0, 1, 2, 3, 4].map(|k| median(&mut gpu[k]));
    let cpu_us = [0, 1, 2].map(|k| median(&mut cpu[k]));
    let draws_recorded = [0, 1].map(|k| median(&mut recorded_counts[k]));
    Ok(Timings { gpu_ms, cpu_us, in_frame_us: median(&mut in_frame), draws_recorded, instances_culled })
}

/// CPU microseconds of one pick recording for each picker (shared list, no culling, per-frame
/// list), all into one scratch command buffer that is never submitted. The order rotates each
/// frame, so whichever variant comes first (and pays for the driver growing a fresh command
/// buffer) differs; the medians leave that out.
fn cpu_times(
    d: &ash::Device,
    scratch: vk::CommandBuffer,
    frame: usize,
    pickers: [&mut Picker; 3],
    request: &PickRequest<'_>,
    pixel: UVec2,
    draws: &std::sync::Arc<[picking_vk::PickDraw]>,
) -> Result<[f64; 3], String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let mut out = [0.0; 3];
    let mut pickers = pickers.map(Some);
    // SAFETY: `scratch` is never submitted, so resetting and re-recording it is always
    // allowed; nothing recorded into it reaches the GPU, and each slot's previous frame
    // (submitted elsewhere) has completed.
    unsafe {
        d.reset_command_buffer(scratch, vk::CommandBufferResetFlags::empty()).map_err(|x| e(&x))?;
        d.begin_command_buffer(scratch, &vk::CommandBufferBeginInfo::default()).map_err(|x| e(&x))?;
    }
    for k in (0..3).map(|i| (i + frame) % 3) {
        let picker = pickers[k].take().ok_or("picker used twice")?;
        let t = Instant::now();
        // SAFETY: as above.
        let recorded = unsafe {
            if k == 0 {
                picker.record(scratch, 0, request, &[PickQuery::Point(pixel)], draws)
            } else {
                picker.record(scratch, 0, request, &[PickQuery::Point(pixel)], &draws[..])
            }
        };
        out[k] = t.elapsed().as_secs_f64() * 1e6;
        recorded.map_err(|x| e(&x))?;
        // The scratch frame is never submitted: forget it, so the slot takes the next pick.
        picker.cancel(0).map_err(|x| e(&x))?;
    }
    // SAFETY: as above.
    unsafe { d.end_command_buffer(scratch) }.map_err(|x| e(&x))?;
    Ok(out)
}
