//! Latency from a pick request to its result in a real frame loop (pick + lit frame, fences
//! per frame in flight), in frames and microseconds: the ring path for 1, 2 and 3 frames in
//! flight, and the same-frame path (the pick submitted first with a fence of its own and
//! waited for at once with `Picker::wait_results`, as the viewer does so that its panel shows
//! the frame's hover; the lit frame after it).

use crate::gpu_timing::{camera, median};
use crate::scenes::BenchScene;
use ash::vk;
use glam::UVec2;
use picking_vk::{HostSignal, PickQuery, PickRequest, Picker, PickerConfig, Viewport};
use picking_vk_context::VulkanContext;
use picking_vk_host::{vk_util, FrameStyle, LitPass, Offscreen, COLOR_FORMAT};
use std::time::Instant;

pub struct Latency {
    pub frames_in_flight: usize,
    /// Taken in the frame that asked (`wait_results`), not a frame or more later.
    pub same_frame: bool,
    pub frames: f64,
    pub micros: f64,
    /// The 99th percentile.
    pub p99_micros: f64,
}

pub fn measure(
    ctx: &VulkanContext,
    scene: &BenchScene,
    (w, h): (u32, u32),
    frames_in_flight: usize,
    frames: usize,
    same_frame: bool,
) -> Result<Latency, String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let d = &ctx.device;
    let cam = camera(w, h);
    // SAFETY: the context outlives the picker.
    let mut picker = unsafe { Picker::new(ctx.host_device(), PickerConfig::default().with_frames_in_flight(frames_in_flight)) }.map_err(|x| e(&x))?;
    let lit = LitPass::new(ctx, COLOR_FORMAT, vk::ImageLayout::TRANSFER_SRC_OPTIMAL, picking_vk::DepthConvention::Standard).map_err(|x| e(&x))?;
    let target = Offscreen::new(ctx, &lit, vk::Extent2D { width: w, height: h }).map_err(|x| e(&x))?;
    let mut styles = Vec::new();
    for _ in 0..frames_in_flight {
        let mut s = FrameStyle::new(ctx, &scene.gpu).map_err(|x| e(&x))?;
        // SAFETY: a fresh style, never drawn with.
        unsafe { s.update(None, None, None) }.map_err(|x| e(&x))?;
        styles.push(s);
    }
    // One per frame in flight, in a pool of their own; dropped below after the device idles.
    let cmds = ctx.command_buffers(frames_in_flight as u32).map_err(|x| e(&x))?;
    // The same-frame path's early submissions, one per frame in flight.
    let early = ctx.command_buffers(frames_in_flight as u32).map_err(|x| e(&x))?;
    // Signalled, so the first wait returns; destroyed below.
    let fences: Vec<vk::Fence> = (0..2 * frames_in_flight).map(|_| vk_util::fence(d, true)).collect::<Result<_, _>>().map_err(|x| e(&x))?;
    let (fences, early_fences) = fences.split_at(frames_in_flight);
    let mut pending: Vec<Option<(u64, Instant)>> = vec![None; frames_in_flight];
    let (mut lat_frames, mut lat_us) = (vec![], vec![]);
    let viewport = vk_util::viewport(0, 0, w, h);
    let mut rng = fastrand::Rng::with_seed(7);
    let result = (|| -> Result<(), String> {
        for frame in 0..frames as u64 {
            let slot = (frame % frames_in_flight as u64) as usize;
            // SAFETY: the fence is live; waiting on it is what any frame loop does here.
            unsafe { d.wait_for_fences(&[fences[slot]], true, u64::MAX) }.map_err(|x| e(&x))?;
            if let Some((at_frame, at)) = pending[slot].take() {
                // SAFETY: the slot's frame completed.
                if unsafe { picker.take_results(slot) }.map_err(|x| e(&x))?.is_some_and(|f| f.pick(0).is_some()) {
                    lat_frames.push((frame - at_frame) as f64);
                    lat_us.push(at.elapsed().as_secs_f64() * 1e6);
                }
            }
            let cmd = cmds[slot];
            let pixel = UVec2::new(rng.u32(..w), rng.u32(..h));
            let request = PickRequest::new(Viewport::full(w, h), cam.view, cam.projection);
            // SAFETY: the slot's previous submissions completed; everything recorded outlives them.
            unsafe {
                d.reset_fences(&[fences[slot]]).map_err(|x| e(&x))?;
                if same_frame {
                    let (pick_cmd, fence) = (early[slot], early_fences[slot]);
                    d.reset_fences(&[fence]).map_err(|x| e(&x))?;
                    d.begin_command_buffer(pick_cmd, &vk::CommandBufferBeginInfo::default()).map_err(|x| e(&x))?;
                    picker.record(pick_cmd, slot, &request, &[PickQuery::Point(pixel)], &scene.gpu.pick_draws).map_err(|x| e(&x))?;
                    d.end_command_buffer(pick_cmd).map_err(|x| e(&x))?;
                    pending[slot] = Some((frame, Instant::now()));
                    let submit = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&pick_cmd));
                    d.queue_submit(ctx.queue, &[submit], fence).map_err(|x| e(&x))?;
                    // At once: the frame needs the answer before it records the rest (its panel).
                    let taken = picker.wait_results(slot, HostSignal::Fence(fence), std::time::Duration::from_secs(1)).map_err(|x| e(&x))?;
                    if let (true, Some((_, at))) = (taken.is_some_and(|f| f.pick(0).is_some()), pending[slot].take()) {
                        lat_frames.push(0.0);
                        lat_us.push(at.elapsed().as_secs_f64() * 1e6);
                    }
                }
                d.begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default()).map_err(|x| e(&x))?;
                if !same_frame {
                    picker.record(cmd, slot, &request, &[PickQuery::Point(pixel)], &scene.gpu.pick_draws).map_err(|x| e(&x))?;
                    pending[slot] = Some((frame, Instant::now()));
                }
                lit.begin(cmd, target.framebuffer(), target.extent());
                lit.draw_scene(cmd, &scene.gpu, 0, &styles[slot], &cam, viewport, None);
                lit.end(cmd);
                d.end_command_buffer(cmd).map_err(|x| e(&x))?;
                let submit = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&cmd));
                d.queue_submit(ctx.queue, &[submit], fences[slot]).map_err(|x| e(&x))?;
            }
        }
        Ok(())
    })();
    let _ = ctx.wait_idle();
    // SAFETY: the device is idle.
    unsafe {
        for f in fences.iter().chain(early_fences) {
            d.destroy_fence(*f, None);
        }
    }
    drop((cmds, early));
    result?;
    let p99 = percentile(&mut lat_us, 0.99);
    Ok(Latency { frames_in_flight, same_frame, frames: median(&mut lat_frames), micros: median(&mut lat_us), p99_micros: p99 })
}

/// The `q` quantile of `v` (nearest rank).
fn percentile(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 * q).ceil() as usize).clamp(1, v.len()) - 1]
}
