//! Skinned draws against the same meshes rigid, side by side in the same frames: a field of
//! tubes picked rigid (batched, and one draw each as deformed draws are recorded), skinned
//! with four influences from a joint buffer, and skinned with eight influences plus two morph
//! targets, each with the joints and weights read as vertex attributes and as storage words
//! (`Skin::streams_in_storage`). Culling is off, so every variant draws every tube.
//! Two fields: many small tubes (per-draw costs dominate: rigid draws batch into one indirect
//! draw, deformed ones are drawn one by one with their push constants) and a few large ones
//! (vertex work dominates). GPU time from timestamp queries, CPU time of recording.

use crate::gpu_timing::{camera, time_variants};
use glam::{Mat4, UVec2, Vec3};
use picking_vk::{deform::DeformPose, deform::SkinInfluences, PickDraw, PickQuery, PickRequest, Picker, PickerConfig, Viewport};
use picking_vk_context::VulkanContext;
use picking_vk_host::gpu_scene::PoseLayout;
use picking_vk_host::{GpuPrimitive, GpuScene, Primitive};
use std::sync::Arc;
use std::time::Instant;

pub const VARIANTS: [&str; 6] = [
    "rigid",
    "rigid, one draw each",
    "skinned, 4 influences, vertex attributes",
    "skinned, 4 influences, storage",
    "skinned, 8 influences + 2 morph targets, vertex attributes",
    "skinned, 8 influences + 2 morph targets, storage",
];
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
    // `deformed`: `Some(streams_in_storage)` for a skinned draw.
    let draw = |prim: usize, model: Mat4, deformed: Option<bool>| -> PickDraw {
        let d = gpu.primitives[prim].pick_draw(picking_vk::ObjectId::new(1).unwrap_or_else(|_| unreachable!()), false).with_model(model);
        match deformed.and_then(|storage| Some((storage, gpu.deformation(prim, 0, Some(0), (prim == 1).then_some(0), cpu_pose.clone())?))) {
            Some((storage, mut def)) => {
                if let Some(skin) = def.skin.as_mut() {
                    skin.streams_in_storage = storage;
                }
                d.with_deformation(def)
            }
            None => d,
        }
    };
    let list = |prim: usize, deformed: Option<bool>| -> Arc<[PickDraw]> { models.iter().map(|&m| draw(prim, m, deformed)).collect() };
    let rigid = list(0, None);
    let lists: [Arc<[PickDraw]>; N] = [rigid.clone(), rigid, list(0, Some(false)), list(0, Some(true)), list(1, Some(false)), list(1, Some(true))];
    let mut pickers = vec![];
    for k in 0..N {
        // Variant 1 has no batch rows: every draw recorded on its own, as deformed ones are.
        let rows = if k == 1 { 0 } else { PickerConfig::default().batch_rows };
        let config = PickerConfig::default().with_frames_in_flight(1).with_culling(false).with_batch_rows(rows);
        // SAFETY: the context's handles belong together and outlive the picker.
        pickers.push(unsafe { Picker::new(ctx.host_device(), config) }.map_err(|x| e(&x))?);
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    let pixels: Vec<UVec2> = (0..warmup + frames).map(|_| UVec2::new(rng.u32(..w), rng.u32(..h))).collect();
    let times = time_variants(ctx, &mut pickers, warmup, frames, |frame, k, picker, cmd| {
        let request = PickRequest::new(Viewport::full(w, h), cam.view, cam.projection);
        let t = Instant::now();
        // SAFETY: `cmd` is recording outside a render pass; the scene's buffers outlive the frame.
        unsafe { picker.record(cmd, 0, &request, &[PickQuery::Point(pixels[frame])], &lists[k]) }.map_err(|x| e(&x))?;
        Ok(t.elapsed().as_secs_f64() * 1e6)
    })?;
    drop(pickers);
    Ok(DeformTimings { tubes: models.len(), triangles, gpu_ms: std::array::from_fn(|k| times.gpu_ms[k]), cpu_us: std::array::from_fn(|k| times.cpu_us[k]) })
}
