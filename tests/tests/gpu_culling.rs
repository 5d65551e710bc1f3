//! Pick-ray culling changes the cost, never the answer: with and without culling every pixel
//! returns the same ID, instance and depth bits. Also the statistics and timestamps.

use glam::{Mat4, Quat, UVec2, Vec3};
use picking_vk::{request::Ignore, DepthConvention, ObjectId, PickRequest, PickerConfig, Viewport};
use picking_vk_tests::harness::{random_pixels, random_scene_camera, Gpu};
use picking_vk_tests::scene::{Mesh, Object, Scene};

const W: u32 = 160;
const H: u32 = 120;
const BATCH: usize = 64;

fn camera(depth: DepthConvention) -> (Mat4, Mat4) {
    random_scene_camera(depth, W, H)
}

/// A random scene plus a box that crosses the near plane and a big stretched field.
fn scene(seed: u64) -> Scene {
    let mut s = Scene::random(seed);
    let eye = Vec3::new(0.3, 0.2, 1.0);
    let forward = (Vec3::new(0.0, 0.0, -6.0) - eye).normalize();
    s.objects.push(Object::new(0xABCD, 0, Mat4::from_translation(eye + forward * 0.55 + Vec3::new(0.35, -0.2, 0.0)) * Mat4::from_scale(Vec3::splat(0.3))));
    let mut field = Object::new(0xF1E1D, 0, Mat4::from_translation(Vec3::new(0.0, -1.0, -8.0)) * Mat4::from_scale(Vec3::new(1.5, 0.6, 1.0)));
    field.instances = Some(
        (0..400)
            .map(|i| {
                Mat4::from_scale_rotation_translation(
                    Vec3::splat(0.3),
                    Quat::from_rotation_y(i as f32 * 0.7),
                    Vec3::new((i % 20) as f32 * 0.5 - 5.0, ((i / 20) % 4) as f32 * 0.6, (i / 80) as f32 * -0.8),
                )
            })
            .collect(),
    );
    s.objects.push(field);
    s
}

fn border_and_random(seed: u64) -> Vec<UVec2> {
    let mut pixels = vec![
        UVec2::new(0, 0),
        UVec2::new(W - 1, 0),
        UVec2::new(0, H - 1),
        UVec2::new(W - 1, H - 1),
        UVec2::new(W / 2, 0),
        UVec2::new(0, H / 2),
        UVec2::new(W - 1, H / 2),
        UVec2::new(W / 2, H - 1),
    ];
    pixels.extend(random_pixels(seed, 440, W, H));
    pixels
}

#[test]
fn culling_never_changes_a_result() {
    let gpu = Gpu::new();
    let (mut compared, mut hits, mut culled_draws, mut culled_instances) = (0usize, 0usize, 0u64, 0u64);
    for (seed, depth) in [(51, DepthConvention::Standard), (52, DepthConvention::Reverse), (53, DepthConvention::Standard)] {
        let s = scene(seed);
        let gs = s.upload(&gpu.ctx);
        assert!(gs.draws.iter().all(|d| d.bounds.is_some()), "bounds derive from registered geometry");
        let (view, proj) = camera(depth);
        let vp = Viewport::full(W, H);
        let mut culled = gpu.picker(PickerConfig::default().with_frames_in_flight(BATCH).with_culling(true));
        let mut full = gpu.picker(PickerConfig::default().with_frames_in_flight(BATCH).with_culling(false));
        let field = ObjectId::new(0xF1E1D).unwrap();
        let ignore = [Ignore::Instances { id: field, start: 30, count: 50 }];
        for (k, chunk) in border_and_random(seed).chunks(BATCH).enumerate() {
            // Every other batch also ignores an instance range: both paths must agree on it.
            let ignoring: &[Ignore] = if k % 2 == 1 { &ignore } else { &[] };
            let request = PickRequest::new(vp, view, proj).with_ignore(ignoring);
            let a = gpu.pick_batch(&mut culled, &request, chunk, &gs.draws);
            let b = gpu.pick_batch(&mut full, &request, chunk, &gs.draws);
            for ((ra, rb), p) in a.iter().zip(&b).zip(chunk) {
                let key = |r: &picking_vk::PickResult| r.hit.as_ref().map(|h| (h.id, h.instance, h.depth.to_bits(), h.draw_index));
                assert_eq!(key(ra), key(rb), "seed {seed} {depth:?} pixel {p}: culled vs full");
                assert_eq!(rb.stats.pass.draws_culled, 0);
                culled_draws += ra.stats.pass.draws_culled;
                culled_instances += ra.stats.pass.instances_culled;
                assert!(ra.stats.pass.draws_recorded <= rb.stats.pass.draws_recorded);
                hits += usize::from(ra.hit.is_some());
                compared += 1;
            }
        }
        drop((culled, full, gs));
    }
    eprintln!("culling parity: {compared} pixels identical with and without culling ({hits} hits); {culled_draws} draws and {culled_instances} instances culled in total");
    assert!(culled_draws > compared as u64 * 5, "culling removes most draws");
    assert!(culled_instances > compared as u64 * 100, "and most instances of the field");
    gpu.assert_no_validation_messages();
}

#[test]
fn draws_without_bounds_are_always_drawn_and_timestamps_report_gpu_time() {
    let gpu = Gpu::new();
    let s = Scene {
        meshes: vec![Mesh::cuboid(Vec3::splat(0.5))],
        objects: (0..6).map(|i| Object::new(i + 1, 0, Mat4::from_translation(Vec3::new(i as f32 * 1.5 - 4.0, 0.0, -5.0)))).collect(),
    };
    let mut gs = s.upload(&gpu.ctx);
    for d in gs.draws.iter_mut().skip(3) {
        d.bounds = None;
    }
    let (view, proj) = camera(DepthConvention::Standard);
    let mut picker = gpu.picker(PickerConfig::default().with_frames_in_flight(1).with_timestamps(true));
    let r = gpu.pick(&mut picker, &PickRequest::new(Viewport::full(W, H), view, proj), UVec2::new(2, 2), &gs.draws);
    assert_eq!(r.stats.pass.draws_recorded, 3, "the three unbounded draws");
    assert_eq!(r.stats.pass.draws_culled, 3, "the three bounded ones the ray misses");
    let ns = r.stats.gpu_time_ns.expect("timestamps were asked for");
    assert!(ns > 0.0 && ns < 1e9, "{ns} ns");
    assert_eq!(r.stats.gpu_plan_time_ns, None, "nothing planned on the GPU");
    drop((picker, gs));
    gpu.assert_no_validation_messages();
}

#[test]
fn shared_draw_lists_cull_through_a_hierarchy_with_identical_results() {
    let gpu = Gpu::new();
    let (mut compared, mut visited) = (0usize, 0u64);
    for (seed, depth) in [(61, DepthConvention::Standard), (62, DepthConvention::Reverse)] {
        let s = scene(seed);
        let gs = s.upload(&gpu.ctx);
        let shared: std::sync::Arc<[picking_vk::PickDraw]> = gs.draws.clone().into();
        let (view, proj) = camera(depth);
        let vp = Viewport::full(W, H);
        let mut culled = gpu.picker(PickerConfig::default().with_frames_in_flight(BATCH).with_culling(true));
        let mut full = gpu.picker(PickerConfig::default().with_frames_in_flight(BATCH).with_culling(false));
        let request = PickRequest::new(vp, view, proj);
        for chunk in border_and_random(seed).chunks(BATCH) {
            let a = gpu.pick_batch(&mut culled, &request, chunk, &shared);
            let b = gpu.pick_batch(&mut full, &request, chunk, &gs.draws);
            for ((ra, rb), p) in a.iter().zip(&b).zip(chunk) {
                let key = |r: &picking_vk::PickResult| r.hit.as_ref().map(|h| (h.id, h.instance, h.depth.to_bits(), h.draw_index));
                assert_eq!(key(ra), key(rb), "seed {seed} {depth:?} pixel {p}");
                visited += ra.stats.pass.draws_recorded;
                compared += 1;
            }
        }
        drop((culled, full, gs));
    }
    eprintln!("shared-list culling parity: {compared} pixels identical; {:.1} draws recorded per pick on average", visited as f64 / compared as f64);
    gpu.assert_no_validation_messages();
}

#[test]
fn a_new_shared_list_rebuilds_the_hierarchy() {
    let gpu = Gpu::new();
    let s = Scene {
        meshes: vec![Mesh::cuboid(Vec3::splat(0.5))],
        objects: vec![
            Object::new(1, 0, Mat4::from_translation(Vec3::new(-2.0, 0.0, -6.0))),
            Object::new(2, 0, Mat4::from_translation(Vec3::new(2.0, 0.0, -6.0))),
        ],
    };
    let gs = s.upload(&gpu.ctx);
    let (view, proj) = camera(DepthConvention::Standard);
    let vp = Viewport::full(W, H);
    let mut picker = gpu.picker(PickerConfig::default().with_frames_in_flight(1));
    let to_pixel = |p: Vec3| {
        let c = proj * view * p.extend(1.0);
        UVec2::new(((c.x / c.w + 1.0) * 0.5 * W as f32) as u32, ((c.y / c.w + 1.0) * 0.5 * H as f32) as u32)
    };
    let request = PickRequest::new(vp, view, proj);
    let first: std::sync::Arc<[picking_vk::PickDraw]> = gs.draws.clone().into();
    assert_eq!(gpu.pick(&mut picker, &request, to_pixel(Vec3::new(-2.0, 0.0, -5.5)), &first).id(), ObjectId::new(1).ok());
    assert_eq!(gpu.pick(&mut picker, &request, to_pixel(Vec3::new(0.0, 0.0, -5.5)), &first).id(), None);
    // Object 1 moves to the middle: a new list, a new hierarchy.
    let mut moved = gs.draws.clone();
    moved[0].model = Mat4::from_translation(Vec3::new(0.0, 0.0, -6.0));
    let second: std::sync::Arc<[picking_vk::PickDraw]> = moved.into();
    assert_eq!(gpu.pick(&mut picker, &request, to_pixel(Vec3::new(0.0, 0.0, -5.5)), &second).id(), ObjectId::new(1).ok());
    assert_eq!(gpu.pick(&mut picker, &request, to_pixel(Vec3::new(-2.0, 0.0, -5.5)), &second).id(), None);
    // The list the picker indexes cannot be edited in place behind its back (its weak handle
    // makes `Arc::get_mut` refuse); the list it no longer indexes can.
    let (mut first, mut second) = (first, second);
    assert!(std::sync::Arc::get_mut(&mut second).is_none(), "the cached list is protected");
    assert!(std::sync::Arc::get_mut(&mut first).is_some(), "the previous list is released");
    drop((picker, gs));
    gpu.assert_no_validation_messages();
}
