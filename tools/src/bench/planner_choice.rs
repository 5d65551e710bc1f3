//! Where each planner wins for a shared list's plain draws, and what `Planner::Auto` chose
//! there (`--planner-choice`): sets of 1, 2, 4, 8 and 16 points, a 64x64 and a 256x256
//! rectangle and the whole view, each recorded by a `Planner::Cpu`, a `Planner::Gpu` and a
//! `Planner::Auto` picker in the same frames (timestamps, a full barrier between sets; the
//! planners take turns going first), with the CPU µs of recording each. Auto planned a set on
//! the GPU where its frame's `PickStats::gpu_plan` is set (these scenes have no instances).
//! Parity: every answer of the GPU and Auto pickers against the CPU planner's.

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
const PLANNERS: [Planner; 3] = [Planner::Cpu, Planner::Gpu, Planner::Auto];
const N: usize = SETS.len();

pub const HEADER: &str = "| scene | set | CPU planner: GPU ms / CPU µs | GPU planner: GPU ms / CPU µs | GPU + CPU ms: CPU planner, GPU planner | Auto: GPU ms / CPU µs | Auto planned on the GPU (frames) |\n|---|---|---|---|---|---|---|";

pub struct ChoiceTimings {
    /// Median GPU ms per planner (`PLANNERS` order) and set.
    gpu_ms: [[f64; N]; 3],
    /// Median CPU µs of recording, per planner and set.
    cpu_us: [[f64; N]; 3],
    /// Per set, the frames in which Auto planned on the GPU.
    auto_gpu: [usize; N],
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

pub fn measure(ctx: &VulkanContext, scene: &BenchScene, (w, h): (u32, u32), warmup: usize, frames: usize, seed: u64) -> Result<ChoiceTimings, String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let d = &ctx.device;
    let cam = camera(w, h);
    let draws = &scene.gpu.pick_draws;
    // Rectangles' pickers as `gpu_planning_draws`'s whole view's: every tile takes a pair and
    // compacts its survivors. Points' pickers keep the defaults.
    let picker = |planner: Planner, rect: bool| {
        let mut config = PickerConfig::default().with_frames_in_flight(1).with_planner(planner).with_rect_entries(1 << 18);
        if rect {
            config = config.with_gpu_plan_instances(1 << 20).with_gpu_plan_rows(1 << 15);
        }
        // SAFETY: the context's handles belong together and outlive the picker.
        unsafe { Picker::new(ctx.host_device(), config) }.map_err(|x| e(&x))
    };
    let mut pickers = vec![];
    for planner in PLANNERS {
        for set in 0..N {
            pickers.push(picker(planner, set >= POINT_SETS.len())?);
        }
    }
    let count = (3 * N) as u32;
    // SAFETY: plain query pool creation.
    let pool = unsafe { d.create_query_pool(&vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(count + 1), None) }
        .map_err(|x| e(&x))?;
    let period = f64::from(ctx.properties.limits.timestamp_period);
    let mut rng = fastrand::Rng::with_seed(seed);
    let (mut gpu, mut cpu): (Vec<Vec<f64>>, Vec<Vec<f64>>) = (vec![vec![]; 3 * N], vec![vec![]; 3 * N]);
    let (mut auto_gpu, mut parity) = ([0; N], (0, 0));
    let request = PickRequest::new(Viewport::full(w, h), cam.view, cam.projection);
    for frame in 0..warmup + frames {
        let sets = frame_sets(&mut rng, (w, h));
        // The planners take turns going first.
        let order: Vec<usize> = (0..3 * N).map(|k| (k + (frame % 3) * N) % (3 * N)).collect();
        let mut record_us = [0.0; 3 * N];
        ctx.run_once(|cmd| -> Result<(), String> {
            // SAFETY: (whole block) `cmd` is recording outside a render pass; the scene's
            // buffers and the targets outlive the wait in `run_once`.
            unsafe {
                d.cmd_reset_query_pool(cmd, pool, 0, count + 1);
                full_barrier(d, cmd);
                d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 0);
                for (position, &k) in order.iter().enumerate() {
                    let t = Instant::now();
                    pickers[k].record(cmd, 0, &request, &sets[k % N], draws).map_err(|x| e(&x))?;
                    record_us[k] = t.elapsed().as_secs_f64() * 1e6;
                    full_barrier(d, cmd);
                    d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, position as u32 + 1);
                }
            }
            Ok(())
        })
        .map_err(|x| e(&x))??;
        let mut t = [0u64; 3 * N + 1];
        let results = take_frame(d, &mut pickers, pool, &mut t)?;
        for k in 0..N {
            count_parity(&answers(&results[k]), &answers(&results[N + k]), &mut parity);
            count_parity(&answers(&results[k]), &answers(&results[2 * N + k]), &mut parity);
        }
        if frame >= warmup {
            for (position, &k) in order.iter().enumerate() {
                gpu[k].push(t[position + 1].saturating_sub(t[position]) as f64 * period / 1e6);
                cpu[k].push(record_us[k]);
            }
            for (set, n) in auto_gpu.iter_mut().enumerate() {
                *n += usize::from(results[2 * N + set].stats.gpu_plan.is_some());
            }
        }
    }
    // SAFETY: all work finished (`run_once` waits).
    unsafe { d.destroy_query_pool(pool, None) };
    Ok(ChoiceTimings {
        gpu_ms: std::array::from_fn(|p| std::array::from_fn(|s| median(&mut gpu[p * N + s]))),
        cpu_us: std::array::from_fn(|p| std::array::from_fn(|s| median(&mut cpu[p * N + s]))),
        auto_gpu,
        frames,
        parity,
    })
}

impl ChoiceTimings {
    /// A line per set.
    pub fn lines(&self, scene: &str) -> Vec<String> {
        let (g, c) = (&self.gpu_ms, &self.cpu_us);
        (0..N)
            .map(|s| {
                format!(
                    "| {scene} | {} | {:.4} / {:.1} | {:.4} / {:.1} | {:.4}, {:.4} | {:.4} / {:.1} | {}/{} |",
                    SETS[s],
                    g[0][s],
                    c[0][s],
                    g[1][s],
                    c[1][s],
                    g[0][s] + c[0][s] / 1e3,
                    g[1][s] + c[1][s] / 1e3,
                    g[2][s],
                    c[2][s],
                    self.auto_gpu[s],
                    self.frames
                )
            })
            .collect()
    }
}
