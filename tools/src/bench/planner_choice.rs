//! Where each planner wins for a shared list's plain draws, and what `Planner::Auto` chose
//! there (`--planner-choice`): sets of 1, 2, 4, 8 and 16 points, a 64x64 and a 256x256
//! rectangle and the whole view, each recorded by a `Planner::Cpu`, a `Planner::Gpu` and a
//! `Planner::Auto` picker, without and with `PickerConfig::gpu_results`, in the same frames
//! (timestamps, a full barrier between sets; the planners take turns going first), with the
//! CPU µs of recording each set and of taking its results. Auto planned a set on the GPU
//! where its frame's `PickStats::gpu_plan` is set (these scenes have no instances). Parity:
//! every answer of the GPU and Auto pickers against the CPU planner's. With `cold`, a clear of
//! a 128 MiB image and a full barrier come before each set (untimed), so that each finds none
//! of its data in the GPU's caches, as a pick after a frame of other GPU work does; without
//! it the sets run back to back and find the data their earlier frames left.

use crate::gpu_planning::answers;
use crate::gpu_timing::{camera, count_parity, full_barrier, median, take_frame};
use crate::scenes::BenchScene;
use ash::vk;
use glam::UVec2;
use picking_vk::config::Planner;
use picking_vk::{PickQuery, PickRequest, Picker, PickerConfig, PixelRect, RectMode, Viewport};
use picking_vk_context::VulkanContext;
use std::time::Instant;

/// The sets, in the order each planner records them.
const SETS: [&str; 8] = ["point", "2 points", "4 points", "8 points", "16 points", "rect 64x64", "rect 256x256", "whole view"];
const POINT_SETS: [usize; 5] = [1, 2, 4, 8, 16];
/// The pickers of each set: the three planners, without and then with GPU results.
const PICKERS: [(Planner, bool); 6] =
    [(Planner::Cpu, false), (Planner::Gpu, false), (Planner::Auto, false), (Planner::Cpu, true), (Planner::Gpu, true), (Planner::Auto, true)];
const P: usize = PICKERS.len();
const N: usize = SETS.len();

pub const HEADER: &str = "| scene | set | GPU results | CPU planner: GPU ms / CPU µs record, take | GPU planner: GPU ms / CPU µs record, take | GPU + CPU ms: CPU planner, GPU planner | Auto: GPU ms / CPU µs record, take | Auto planned on the GPU (frames) |\n|---|---|---|---|---|---|---|---|";

pub struct ChoiceTimings {
    /// Median GPU ms per picker (`PICKERS` order) and set.
    gpu_ms: [[f64; N]; P],
    /// Median CPU µs of recording, per picker and set.
    cpu_us: [[f64; N]; P],
    /// Median CPU µs of taking the results, per picker and set.
    take_us: [[f64; N]; P],
    /// Per set, the frames in which Auto planned on the GPU, without and with GPU results.
    auto_gpu: [[usize; N]; 2],
    frames: usize,
    /// GPU- and Auto-planned answers equal to the CPU-planned ones, of those compared.
    pub parity: (usize, usize),
}

/// The sets of one frame: `POINT_SETS` points at random pixels, then the rectangles.
fn frame_sets(rng: &mut fastrand::Rng, (w, h): (u32, u32)) -> [Vec<PickQuery>; N] {
    let mut pixel = || UVec2::new(rng.u32(..w), rng.u32(..h));
    let points = POINT_SETS.map(|n| (0..n).map(|_| PickQuery::Point(pixel())).collect::<Vec<_>>());
    let rect = |side: u32, at: UVec2| {
        let corner = at.saturating_sub(UVec2::splat(side / 2)).min(UVec2::new(w, h).saturating_sub(UVec2::splat(side)));
        vec![PickQuery::Rect { rect: PixelRect::new(corner, (corner + UVec2::splat(side)).min(UVec2::new(w, h))), mode: RectMode::Visible }]
    };
    let [p1, p2, p4, p8, p16] = points;
    let (r64, r256) = (rect(64, pixel()), rect(256, pixel()));
    let view = vec![PickQuery::Rect { rect: PixelRect::new(UVec2::ZERO, UVec2::new(w, h)), mode: RectMode::Visible }];
    [p1, p2, p4, p8, p16, r64, r256, view]
}

/// The image cleared before each set where the sets are measured cold: 128 MiB, past the
/// last-level cache of the GPUs measured (50 MiB on an H100, 60 MiB on an H200).
const EVICT: vk::Extent2D = vk::Extent2D { width: 4096, height: 2048 };

/// A device-local image whose clear evicts the GPU's caches, in `TRANSFER_DST_OPTIMAL`.
fn evict_image(ctx: &VulkanContext) -> Result<picking_vk_context::DeviceImage, String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let image = ctx
        .create_image(vk::Format::R32G32B32A32_UINT, EVICT, vk::ImageUsageFlags::TRANSFER_DST | vk::ImageUsageFlags::SAMPLED, vk::ImageAspectFlags::COLOR)
        .map_err(|x| e(&x))?;
    let to_transfer = vk::ImageMemoryBarrier::default()
        .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .old_layout(vk::ImageLayout::UNDEFINED)
        .new_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
        .image(image.image)
        .subresource_range(COLOR_RANGE);
    let (top, transfer) = (vk::PipelineStageFlags::TOP_OF_PIPE, vk::PipelineStageFlags::TRANSFER);
    // SAFETY: a fresh image, recorded outside a render pass; `run_once` waits.
    ctx.run_once(|cmd| unsafe { ctx.device.cmd_pipeline_barrier(cmd, top, transfer, vk::DependencyFlags::empty(), &[], &[], &[to_transfer]) })
        .map_err(|x| e(&x))?;
    Ok(image)
}

const COLOR_RANGE: vk::ImageSubresourceRange =
    vk::ImageSubresourceRange { aspect_mask: vk::ImageAspectFlags::COLOR, base_mip_level: 0, level_count: 1, base_array_layer: 0, layer_count: 1 };

pub fn measure(
    ctx: &VulkanContext,
    scene: &BenchScene,
    (w, h): (u32, u32),
    (warmup, frames): (usize, usize),
    seed: u64,
    cold: bool,
) -> Result<ChoiceTimings, String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let d = &ctx.device;
    let cam = camera(w, h);
    let draws = &scene.gpu.pick_draws;
    // Rectangles' pickers as `gpu_planning_draws`'s whole view's: every tile takes a pair and
    // compacts its survivors. Points' pickers keep the defaults.
    let picker = |(planner, results): (Planner, bool), rect: bool| {
        let config = PickerConfig::default().with_frames_in_flight(1).with_planner(planner).with_rect_entries(1 << 18);
        let mut config = config.with_gpu_results(results).with_gpu_result_draws(1 << 16);
        if rect {
            config = config.with_gpu_plan_instances(1 << 20).with_gpu_plan_rows(1 << 15);
        }
        // SAFETY: the context's handles belong together and outlive the picker.
        unsafe { Picker::new(ctx.host_device(), config) }.map_err(|x| e(&x))
    };
    let mut pickers = vec![];
    for kind in PICKERS {
        for set in 0..N {
            pickers.push(picker(kind, set >= POINT_SETS.len())?);
        }
    }
    // A timestamp before and after each set.
    let count = 2 * (P * N) as u32;
    // SAFETY: plain query pool creation.
    let pool =
        unsafe { d.create_query_pool(&vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(count), None) }.map_err(|x| e(&x))?;
    let evict = if cold { Some(evict_image(ctx)?) } else { None };
    let period = f64::from(ctx.properties.limits.timestamp_period);
    let mut rng = fastrand::Rng::with_seed(seed);
    let samples = || -> Vec<Vec<f64>> { vec![vec![]; P * N] };
    let (mut gpu, mut cpu, mut take) = (samples(), samples(), samples());
    let (mut auto_gpu, mut parity) = ([[0; N]; 2], (0, 0));
    let request = PickRequest::new(Viewport::full(w, h), cam.view, cam.projection);
    for frame in 0..warmup + frames {
        let sets = frame_sets(&mut rng, (w, h));
        // The planners take turns going first.
        let order: Vec<usize> = (0..P * N).map(|k| (k + (frame % P) * N) % (P * N)).collect();
        let mut record_us = [0.0; P * N];
        ctx.run_once(|cmd| -> Result<(), String> {
            // SAFETY: (whole block) `cmd` is recording outside a render pass; the scene's
            // buffers and the targets outlive the wait in `run_once`.
            unsafe {
                d.cmd_reset_query_pool(cmd, pool, 0, count);
                full_barrier(d, cmd);
                for (position, &k) in order.iter().enumerate() {
                    if let Some(evict) = &evict {
                        let clear = vk::ClearColorValue { uint32: [frame as u32, position as u32, 0, 0] };
                        d.cmd_clear_color_image(cmd, evict.image, vk::ImageLayout::TRANSFER_DST_OPTIMAL, &clear, &[COLOR_RANGE]);
                        full_barrier(d, cmd);
                    }
                    d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 2 * position as u32);
                    let t = Instant::now();
                    pickers[k].record(cmd, 0, &request, &sets[k % N], draws).map_err(|x| e(&x))?;
                    record_us[k] = t.elapsed().as_secs_f64() * 1e6;
                    full_barrier(d, cmd);
                    d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 2 * position as u32 + 1);
                }
            }
            Ok(())
        })
        .map_err(|x| e(&x))??;
        let mut t = [0u64; 2 * P * N];
        // Each picker's results taken on its own, timed (the frame completed).
        let mut results = Vec::with_capacity(P * N);
        for (k, picker) in pickers.iter_mut().enumerate() {
            let start = Instant::now();
            // SAFETY: `run_once` waited for the frame.
            results.push(unsafe { picker.take_results(0) }.map_err(|x| e(&x))?.ok_or("no results")?);
            if frame >= warmup {
                take[k].push(start.elapsed().as_secs_f64() * 1e6);
            }
        }
        take_frame(d, &mut [], pool, &mut t)?;
        for k in 0..N {
            for variant in [0, 3] {
                for other in [1, 2] {
                    count_parity(&answers(&results[variant * N + k]), &answers(&results[(variant + other) * N + k]), &mut parity);
                }
            }
        }
        if frame >= warmup {
            for (position, &k) in order.iter().enumerate() {
                gpu[k].push(t[2 * position + 1].saturating_sub(t[2 * position]) as f64 * period / 1e6);
                cpu[k].push(record_us[k]);
            }
            for (variant, counts) in auto_gpu.iter_mut().enumerate() {
                for (set, n) in counts.iter_mut().enumerate() {
                    *n += usize::from(results[(2 + 3 * variant) * N + set].stats.gpu_plan.is_some());
                }
            }
        }
    }
    // SAFETY: all work finished (`run_once` waits).
    unsafe { d.destroy_query_pool(pool, None) };
    Ok(ChoiceTimings {
        gpu_ms: std::array::from_fn(|p| std::array::from_fn(|s| median(&mut gpu[p * N + s]))),
        cpu_us: std::array::from_fn(|p| std::array::from_fn(|s| median(&mut cpu[p * N + s]))),
        take_us: std::array::from_fn(|p| std::array::from_fn(|s| median(&mut take[p * N + s]))),
        auto_gpu,
        frames,
        parity,
    })
}

impl ChoiceTimings {
    /// A line per set and GPU results setting.
    pub fn lines(&self, scene: &str) -> Vec<String> {
        let (g, c, t) = (&self.gpu_ms, &self.cpu_us, &self.take_us);
        let cell = |p: usize, s: usize| format!("{:.4} / {:.1}, {:.1}", g[p][s], c[p][s], t[p][s]);
        let sum = |p: usize, s: usize| g[p][s] + (c[p][s] + t[p][s]) / 1e3;
        (0..N)
            .flat_map(|s| [(s, 0), (s, 3)])
            .map(|(s, v)| {
                format!(
                    "| {scene} | {} | {} | {} | {} | {:.4}, {:.4} | {} | {}/{} |",
                    SETS[s],
                    if v == 0 { "off" } else { "on" },
                    cell(v, s),
                    cell(v + 1, s),
                    sum(v, s),
                    sum(v + 1, s),
                    cell(v + 2, s),
                    self.auto_gpu[v / 3][s],
                    self.frames
                )
            })
            .collect()
    }
}
