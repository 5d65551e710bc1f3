//! The host's own indirect draws: one multi-draw over meshes packed in shared buffers, each
//! command's `firstInstance` naming its object's transform (as GPU-driven engines draw),
//! against the CPU ray oracle; a GPU draw count that stops short of the commands; culling on
//! and off alike; and what cannot be honoured (rectangles, features not enabled) refused.

use ash::vk;
use glam::{Mat4, Quat, UVec2, Vec3};
use picking_vk::{
    draw::Aabb, draw::BufferRange, draw::IndexWidth, draw::IndirectDraws, draw::Instances, draw::Positions, draw::Triangles, ObjectId, PickDraw, PickError,
    PickFeatures, PickQuery, PickRequest, PickerConfig, PixelRect, RectMode, Viewport,
};
use picking_vk_context::HostBuffer;
use picking_vk_tests::harness::{random_pixels, Gpu};
use picking_vk_tests::oracle::{Oracle, OracleCamera};
use picking_vk_tests::scene::{Mesh, Object, Scene};

const W: u32 = 160;
const H: u32 = 120;
const OBJECTS: usize = 10;

struct Packed {
    draw: PickDraw,
    /// The oracle's scene: object `i` is command `i`.
    scene: Scene,
    count: HostBuffer,
    _buffers: Vec<HostBuffer>,
}

/// A cube and a sphere packed into one vertex and one index buffer, and one indexed command
/// per object with `firstInstance` = the object's index into the transform buffer.
fn packed(gpu: &Gpu, seed: u64) -> Packed {
    let meshes = [Mesh::cuboid(Vec3::new(0.5, 0.4, 0.3)), Mesh::sphere(8, 12)];
    let (mut positions, mut indices, mut spans) = (vec![], vec![], vec![]);
    for m in &meshes {
        let (first_index, vertex_offset) = (indices.len() as u32, positions.len() as i32);
        positions.extend(m.positions.iter().map(|p| p.to_array()));
        indices.extend(m.indices.clone().expect("indexed"));
        spans.push((first_index, (indices.len() as u32) - first_index, vertex_offset));
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut scene = Scene { meshes: meshes.to_vec(), objects: vec![] };
    let mut transforms = vec![];
    let mut commands: Vec<u32> = vec![];
    for i in 0..OBJECTS {
        let at = Vec3::new(rng.f32() * 3.0 - 1.5, rng.f32() * 2.0 - 1.0, -3.5 - rng.f32() * 3.0);
        let t = Mat4::from_scale_rotation_translation(Vec3::splat(0.8 + rng.f32() * 0.6), Quat::from_rotation_y(rng.f32() * 3.0), at);
        let mesh = i % 2;
        let (first_index, index_count, vertex_offset) = spans[mesh];
        commands.extend([index_count, 1, first_index, vertex_offset as u32, i as u32]);
        transforms.push(t);
        scene.objects.push(Object::new(1, mesh, t));
    }
    let ctx = &gpu.ctx;
    let vertex = ctx.upload(&positions, vk::BufferUsageFlags::VERTEX_BUFFER).unwrap();
    let index = ctx.upload(&indices, vk::BufferUsageFlags::INDEX_BUFFER).unwrap();
    let columns: Vec<[f32; 16]> = transforms.iter().map(Mat4::to_cols_array).collect();
    let instance = ctx.upload(&columns, vk::BufferUsageFlags::VERTEX_BUFFER).unwrap();
    let command = ctx.upload(&commands, vk::BufferUsageFlags::INDIRECT_BUFFER).unwrap();
    let count = ctx.upload(&[OBJECTS as u32], vk::BufferUsageFlags::INDIRECT_BUFFER).unwrap();
    let range = |b: &HostBuffer| BufferRange { buffer: b.buffer, offset: 0, size: b.size };
    let bounds = meshes.iter().filter_map(|m| Aabb::from_points(&m.positions)).reduce(|a, b| a.union(&b)).unwrap();
    let draw = PickDraw::new(
        ObjectId::new(1).unwrap(),
        Positions { range: range(&vertex), stride: 12, vertex_count: positions.len() as u32 },
        Triangles::Indexed { range: range(&index), width: IndexWidth::U32, first_index: 0, index_count: 0, vertex_offset: 0 },
    )
    .with_instances(Instances { range: range(&instance), stride: 64, first: 0, count: OBJECTS as u32 })
    .with_instance_transforms(transforms.into())
    .with_bounds(bounds)
    .with_indirect(IndirectDraws { commands: range(&command), stride: 20, max_draw_count: OBJECTS as u32, count: None });
    Packed { draw, scene, count, _buffers: vec![vertex, index, instance, command] }
}

fn camera() -> (Mat4, Mat4) {
    let view = glam::camera::rh::view::look_at_mat4(Vec3::new(0.2, 0.3, 1.5), Vec3::new(0.0, 0.0, -6.0), Vec3::Y);
    (view, glam::camera::rh::proj::vulkan::perspective(1.0, W as f32 / H as f32, 0.5, 40.0))
}

/// Picks `pixels` with `draws` and compares (ID, instance) with the oracle over the objects
/// the commands draw; returns (agreeing picks, hits).
fn check(gpu: &Gpu, culling: bool, draws: &[PickDraw], oracle_scene: &Scene, pixels: &[UVec2]) -> (usize, usize) {
    let mut picker = gpu.picker(PickerConfig::default().with_culling(culling));
    let (view, proj) = camera();
    let oracle = Oracle::new(oracle_scene, OracleCamera::new(view, proj, [0.0, 0.0, f64::from(W), f64::from(H)]));
    let request = PickRequest::new(Viewport::full(W, H), view, proj);
    let (mut agree, mut hits) = (0, 0);
    for &p in pixels {
        let want = oracle.pick(p);
        if want.ambiguous {
            continue;
        }
        let got = gpu.pick(&mut picker, &request, p, draws);
        // Command i draws object i: its instance is i.
        let want_key = want.hit.map(|h| (h.id, Some(h.object as u32)));
        assert_eq!(got.hit.as_ref().map(|h| (h.id.get(), h.instance)), want_key, "pixel {p} (culling {culling})");
        if let (Some(g), Some(w)) = (&got.hit, &want.hit) {
            assert!((g.distance - w.distance).abs() <= 1e-3 * w.distance, "pixel {p}: distance {} vs {}", g.distance, w.distance);
            hits += 1;
        }
        agree += 1;
    }
    (agree, hits)
}

#[test]
fn a_multi_draw_with_first_instance_object_indices_picks_like_the_oracle() {
    let gpu = Gpu::new();
    assert!(gpu.ctx.picking_features.contains(PickFeatures::BATCHING), "lavapipe has multiDrawIndirect and drawIndirectFirstInstance");
    let mut totals = (0, 0);
    for seed in picking_vk_tests::harness::seeds(0..3) {
        let p = packed(&gpu, seed);
        let (view, proj) = camera();
        let request = PickRequest::new(Viewport::full(W, H), view, proj);
        // Pixels the commands cover (the full-size ID image records them too), and others.
        let mut pixels: Vec<UVec2> = gpu.covered_pixels(&request, std::slice::from_ref(&p.draw), seed).into_iter().take(200).collect();
        pixels.extend(random_pixels(seed + 20, 100, W, H));
        for culling in [true, false] {
            let (agree, hits) = check(&gpu, culling, std::slice::from_ref(&p.draw), &p.scene, &pixels);
            totals = (totals.0 + agree, totals.1 + hits);
        }
    }
    eprintln!("indirect multi-draw: {} unambiguous picks agree with the oracle, {} hits", totals.0, totals.1);
    assert!(totals.0 > 600 && totals.1 > 400, "{totals:?}");
    gpu.assert_no_validation_messages();
}

#[test]
fn a_gpu_draw_count_below_the_commands_draws_only_those() {
    let gpu = Gpu::new();
    assert!(gpu.ctx.picking_features.contains(PickFeatures::INDIRECT_COUNT), "lavapipe has drawIndirectCount");
    let mut p = packed(&gpu, 7);
    let drawn = 6u32;
    // SAFETY: no GPU work uses the count buffer yet.
    unsafe { p.count.write(0, &[drawn]) }.unwrap();
    let mut indirect = p.draw.indirect.unwrap();
    indirect.count = Some(BufferRange { buffer: p.count.buffer, offset: 0, size: 4 });
    let draw = p.draw.clone().with_indirect(indirect);
    p.scene.objects.truncate(drawn as usize);
    let (view, proj) = camera();
    let request = PickRequest::new(Viewport::full(W, H), view, proj);
    let mut pixels: Vec<UVec2> = gpu.covered_pixels(&request, std::slice::from_ref(&p.draw), 31).into_iter().take(300).collect();
    pixels.extend(random_pixels(31, 100, W, H));
    let (agree, hits) = check(&gpu, true, std::slice::from_ref(&draw), &p.scene, &pixels);
    eprintln!("indirect count {drawn} of {OBJECTS}: {agree} picks agree, {hits} hits");
    assert!(agree > 150 && hits > 40, "{agree} / {hits}");
    drop(p);
    gpu.assert_no_validation_messages();
}

#[test]
fn what_indirect_draws_cannot_honour_is_refused() {
    let gpu = Gpu::new();
    let p = packed(&gpu, 3);
    let (view, proj) = camera();
    let request = PickRequest::new(Viewport::full(W, H), view, proj);
    let pixel = UVec2::new(80, 60);
    let mut picker = gpu.picker(PickerConfig::default());
    // Rectangles count instances the CPU knows; an indirect draw's are the GPU's.
    let rect = [PickQuery::Rect { rect: PixelRect::new(UVec2::ZERO, UVec2::new(W, H)), mode: RectMode::Visible }];
    let mut outcome = None;
    // SAFETY: recording outside a render pass; nothing is recorded on error.
    gpu.run(|cmd| outcome = Some(unsafe { picker.record(cmd, 0, &request, &rect, std::slice::from_ref(&p.draw)) }.map(|_| ())));
    assert!(matches!(outcome, Some(Err(PickError::InvalidDraw { index: 0, ref reason })) if reason.contains("rectangle")), "{outcome:?}");
    // A stride below the command, and a GPU count the host did not enable.
    let mut short = p.draw.indirect.unwrap();
    short.stride = 16;
    let without_count = gpu.ctx.picking_features.intersection(PickFeatures::BATCHING);
    // SAFETY: the context's handles outlive the picker.
    let mut plain = unsafe { picking_vk::Picker::new(gpu.ctx.host_device().with_features(without_count), PickerConfig::default()) }.unwrap();
    let mut counted = p.draw.indirect.unwrap();
    counted.count = Some(BufferRange { buffer: p.count.buffer, offset: 0, size: 4 });
    for (picker, draw, why) in
        [(&mut picker, p.draw.clone().with_indirect(short), "stride"), (&mut plain, p.draw.clone().with_indirect(counted), "drawIndirectCount")]
    {
        let mut outcome = None;
        // SAFETY: as above.
        gpu.run(|cmd| outcome = Some(unsafe { picker.record(cmd, 0, &request, &[PickQuery::Point(pixel)], std::slice::from_ref(&draw)) }.map(|_| ())));
        match outcome.unwrap() {
            Err(PickError::InvalidDraw { reason, .. }) => assert!(reason.contains(why), "{reason}"),
            other => panic!("expected InvalidDraw ({why}), got {other:?}"),
        }
    }
    // Nothing was recorded: the slot takes a pick.
    assert!(gpu.pick(&mut picker, &request, pixel, std::slice::from_ref(&p.draw)).stats.pass.draws_recorded <= 1);
    drop((picker, plain, p));
    gpu.assert_no_validation_messages();
}
