//! Skinned draws against the same meshes rigid, side by side in the same frames: a field of
//! tubes picked rigid (batched, and one draw each as deformed draws are recorded), skinned
//! with four influences from a joint buffer, and skinned with eight influences plus two morph
//! targets. Culling is off, so every variant draws every tube.
//! Two fields: many small tubes (per-draw costs dominate: rigid draws batch into one indirect
//! draw, deformed ones are drawn one by one with their push constants) and a few large ones
//! (vertex work dominates). GPU time from timestamp queries, CPU time of recording.

use crate::gpu_timing::{camera, full_barrier, median};
use ash::vk;
use glam::{Mat4, UVec2, Vec3};
use picking_vk::{DeformPose, PickDraw, PickRequest, Picker, PickerConfig, SkinInfluences, Viewport};
use picking_vk_context::VulkanContext;
use picking_vk_host::gpu_scene::PoseLayout;
use picking_vk_host::{GpuPrimitive, GpuScene, Primitive};
use std::sync::Arc;
use std::time::Instant;

pub const VARIANTS: [&str; 4] = ["rigid", "rigid, one draw each", "skinned, 4 influences", "skinned, 8 influences + 2 morph targets"];
/// Variants measured.
const N: usize = VARIANTS.len();

pub struct DeformTimings {
    pub tubes: usize,
    pub triangles: usize,
    pub gpu_ms: [f64; N],
    pub cpu_us: [f64; N],
}

/// A field: this many tubes of `rings` x `segments` quads.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub tubes: u32,
    pub rings: u32,
    pub segments: u32,
}

/// Many small tubes, and a few large ones.
pub const FIELDS: [Field; 2] = [Field { tubes: 200, rings: 32, segments: 16 }, Field { tubes: 20, rings: 128, segments: 128 }];

/// A tube along +Y over `bones` bones, `sets` sets of four influences per vertex (weights
/// falling off over the neighbouring bones), and `targets` morph targets.
fn tube(field: Field, sets: usize, targets: usize) -> Primitive {
    let bones = 8u32;
    let mut p = picking_vk_host::shapes::tube(0.2, 2.0, field.rings, field.segments, [1.0; 4]);
    p.skin = vec![SkinInfluences::default(); sets];
    for q in &p.positions {
        let along = q.y / 2.0 * bones as f32;
        for (s, set) in p.skin.iter_mut().enumerate() {
            let first = (along as u32 + 4 * s as u32).min(bones - 1);
            set.joints.push(std::array::from_fn(|k| (first + k as u32).min(bones - 1) as u16));
            set.weights.push(if s == 0 { [0.4, 0.3, 0.2, 0.1] } else { [0.0; 4] });
        }
    }
    p.morph_targets = (0..targets).map(|t| p.positions.iter().map(|q| Vec3::new(0.02 * (t as f32 + 1.0), q.y * 0.01, 0.0)).collect()).collect();
    p
}

pub fn measure(ctx: &VulkanContext, field: Field, (w, h): (u32, u32), warmup: usize, frames: usize, seed: u64) -> Result<DeformTimings, String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let d = &ctx.device;
    let cam = camera(w, h);
    let primitives = vec![GpuPrimitive::upload(ctx, &tube(field, 1, 0)).map_err(|x| e(&x))?, GpuPrimitive::upload(ctx, &tube(field, 2, 2)).map_err(|x| e(&x))?];
    let triangles = primitives[0].count as usize / 3;
    // Rows of 20 tubes in front of the camera, each bent by one shared joint palette.
    let models: Vec<Mat4> =
        (0..field.tubes).map(|i| Mat4::from_translation(Vec3::new(-4.75 + (i % 20) as f32 * 0.5, -2.0 + (i / 20) as f32 * 0.45, -6.0))).collect();
    let pose = PoseLayout { regions: 1, skin_joints: vec![8], weight_counts: vec![2] };
    let mut gpu = GpuScene::with_pose(ctx, primitives, &[], &[], pose).map_err(|x| e(&x))?;
    let palette: Vec<Mat4> = (0..8).map(|k| Mat4::from_rotation_z(0.04 * k as f32)).collect();
    let weights = [0.5f32, 0.25];
    // SAFETY: nothing was submitted with the scene yet.
    unsafe { gpu.write_pose(0, &[], &[&palette], &[&weights]) }.map_err(|x| e(&x))?;
    let cpu_pose = Arc::new(DeformPose { joint_matrices: palette.clone(), morph_weights: weights.to_vec() });
    let draw = |prim: usize, model: Mat4, deformed: bool| -> PickDraw {
        let d = gpu.primitives[prim].pick_draw(picking_vk::ObjectId::new(1).unwrap_or_else(|_| unreachable!()), false).with_model(model);
        match deformed.then(|| gpu.deformation(prim, 0, Some(0), (prim == 1).then_some(0), cpu_pose.clone())).flatten() {
            Some(def) => d.with_deformation(def),
            None => d,
        }
    };
    let rigid: Arc<[PickDraw]> = models.iter().map(|&m| draw(0, m, false)).collect();
    let lists: [Arc<[PickDraw]>; N] =
        [rigid.clone(), rigid, models.iter().map(|&m| draw(0, m, true)).collect(), models.iter().map(|&m| draw(1, m, true)).collect()];
    let mut pickers = vec![];
    for k in 0..N {
        // Variant 1 has no batch rows: every draw recorded on its own, as deformed ones are.
        let rows = if k == 1 { 0 } else { PickerConfig::default().batch_rows };
        let config = PickerConfig::default().with_frames_in_flight(1).with_culling(false).with_batch_rows(rows);
        // SAFETY: the context's handles belong together and outlive the picker.
        pickers.push(unsafe { Picker::new(ctx.host_device(), config) }.map_err(|x| e(&x))?);
    }
    // SAFETY: plain query pool creation.
    let pool = unsafe { d.create_query_pool(&vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(2 * N as u32), None) }
        .map_err(|x| e(&x))?;
    let period = f64::from(ctx.properties.limits.timestamp_period);
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut gpu_ms: [Vec<f64>; N] = Default::default();
    let mut cpu_us: [Vec<f64>; N] = Default::default();
    for frame in 0..warmup + frames {
        let pixel = UVec2::new(rng.u32(..w), rng.u32(..h));
        let request = PickRequest::new(pixel, Viewport::full(w, h), cam.view, cam.projection);
        let mut record_us = [0.0; N];
        ctx.run_once(|cmd| -> Result<(), String> {
            // SAFETY: (whole block) `cmd` is recording outside a render pass; the scene's
            // buffers outlive the wait in `run_once`.
            unsafe {
                d.cmd_reset_query_pool(cmd, pool, 0, 2 * N as u32);
                for i in 0..N {
                    let k = (i + frame) % N;
                    full_barrier(d, cmd);
                    d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 2 * k as u32);
                    let t = Instant::now();
                    pickers[k].record_shared(cmd, 0, &request, &lists[k]).map_err(|x| e(&x))?;
                    record_us[k] = t.elapsed().as_secs_f64() * 1e6;
                    full_barrier(d, cmd);
                    d.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, pool, 2 * k as u32 + 1);
                }
            }
            Ok(())
        })
        .map_err(|x| e(&x))??;
        for picker in &mut pickers {
            // SAFETY: `run_once` waited for the frame.
            unsafe { picker.take_result(0) }.map_err(|x| e(&x))?;
        }
        let mut t = [0u64; 2 * N];
        // SAFETY: the frame completed; every query was written.
        unsafe { d.get_query_pool_results(pool, 0, &mut t, vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT) }.map_err(|x| e(&x))?;
        if frame >= warmup {
            for k in 0..N {
                gpu_ms[k].push(t[2 * k + 1].saturating_sub(t[2 * k]) as f64 * period / 1e6);
                cpu_us[k].push(record_us[k]);
            }
        }
    }
    // SAFETY: all work finished (`run_once` waits).
    unsafe { d.destroy_query_pool(pool, None) };
    drop(pickers);
    Ok(DeformTimings {
        tubes: models.len(),
        triangles,
        gpu_ms: std::array::from_fn(|k| median(&mut gpu_ms[k])),
        cpu_us: std::array::from_fn(|k| median(&mut cpu_us[k])),
    })
}
