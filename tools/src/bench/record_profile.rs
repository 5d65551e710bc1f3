//! `--record-profile [SCENE] [POINTS] [gpu|cpu] [cold]`: the CPU cost of recording one query set,
//! alone, for a profiler (`perf record`). The scene's shared list is recorded into a command
//! buffer that is never submitted (each pass reset, recorded, ended and the picker's frame
//! cancelled), so the GPU does no work and only the picker's and the driver's recording
//! remain. Prints the median and minimum microseconds of `Picker::record` over the passes.
//! `gpu` picks with `Planner::Gpu` (the list's plain draws planned on the GPU), `cpu` with
//! `Planner::Cpu`, instead of the default. `cold` writes 256 MiB between passes (untimed), so
//! each records with the CPU's caches holding none of the picker's or the driver's data, as in
//! a frame whose host work ran since the last pick (the benchmark's query-set table records
//! its sets so).

use crate::config;
use crate::gpu_timing::{camera, median};
use crate::scenes::BenchScene;
use crate::scenes::SceneSpec;
use ash::vk;
use glam::UVec2;
use picking_vk::config::Planner;
use picking_vk::{PickQuery, PickRequest, Picker, PickerConfig, Viewport};
use picking_vk_context::{ContextOptions, VulkanContext};
use std::time::Instant;

/// Recording passes measured, after as many warm-up passes (cold: fewer, each costs the
/// eviction).
const PASSES: usize = 4000;
const COLD_PASSES: usize = 400;
/// Bytes written between cold passes: more than the last-level cache of the hosts measured.
const EVICT_BYTES: usize = 256 << 20;

/// Records `points` random points over the full configuration's scene `scene` (its index)
/// `PASSES` times with `planner` (with the caches evicted before each where `cold`); prints
/// the medians.
pub fn record_profile(scene: usize, points: usize, planner: Planner, cold: bool) -> Result<bool, String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let cfg = config(false);
    let spec: SceneSpec = *cfg.scenes.get(scene).ok_or("no such scene")?;
    let ctx = VulkanContext::new(&ContextOptions { validation: false, sync_validation: false, want_detail: false, ..Default::default() }).map_err(|x| e(&x))?;
    let built = BenchScene::build(&ctx, spec, 100 + scene as u64).map_err(|x| e(&x))?;
    let (w, h) = cfg.size;
    let cam = camera(w, h);
    let request = PickRequest::new(Viewport::full(w, h), cam.view, cam.projection);
    let config = PickerConfig::default().with_frames_in_flight(1).with_planner(planner);
    // SAFETY: the context's handles belong together and outlive the picker.
    let mut picker = unsafe { Picker::new(ctx.host_device(), config) }.map_err(|x| e(&x))?;
    let buffers = ctx.command_buffers(1).map_err(|x| e(&x))?;
    let (d, cmd) = (&ctx.device, buffers[0]);
    let mut rng = fastrand::Rng::with_seed(7);
    let passes = if cold { COLD_PASSES } else { PASSES };
    let mut evict = if cold { vec![0u8; EVICT_BYTES] } else { vec![] };
    let mut samples = Vec::with_capacity(passes);
    for pass in 0..2 * passes {
        // A write a cache line: the caches end up holding these lines only.
        for b in evict.iter_mut().step_by(64) {
            *b = b.wrapping_add(1);
        }
        std::hint::black_box(&evict);
        let queries: Vec<PickQuery> = (0..points).map(|_| PickQuery::Point(UVec2::new(rng.u32(..w), rng.u32(..h)))).collect();
        // SAFETY: the buffer was never submitted; the scene's buffers outlive the loop.
        unsafe {
            d.reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty()).map_err(|x| e(&x))?;
            d.begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT)).map_err(|x| e(&x))?;
            let t = Instant::now();
            picker.record(cmd, 0, &request, &queries, &built.gpu.pick_draws).map_err(|x| e(&x))?;
            if pass >= passes {
                samples.push(t.elapsed().as_secs_f64() * 1e6);
            }
            d.end_command_buffer(cmd).map_err(|x| e(&x))?;
        }
        picker.cancel(0).map_err(|x| e(&x))?;
    }
    let least = samples.iter().copied().fold(f64::INFINITY, f64::min);
    println!(
        "{} on {}, {planner:?} planner: {points} point(s), record median {:.1} µs, min {:.1} µs ({passes} passes{})",
        spec.name,
        ctx.device_name,
        median(&mut samples),
        least,
        if cold { ", caches evicted before each" } else { "" }
    );
    Ok(true)
}
