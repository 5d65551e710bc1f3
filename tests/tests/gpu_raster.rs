//! The host's raster state in the pick pass: face culling against the CPU ray oracle (which
//! culls by Vulkan's winding rule), depth compare ops on coplanar draws, depth bias on a decal,
//! and strips and fans with primitive restart against the same triangles as a list.

use ash::vk;
use glam::{Mat4, UVec2, Vec3};
use picking_vk::{
    draw::BufferRange, draw::Culling, draw::DepthBias, draw::IndexWidth, draw::RasterState, draw::Topology, draw::Triangles, DepthConvention, ObjectId,
    PickDraw, PickQuery, PickRequest, PickerConfig, Viewport,
};
use picking_vk_tests::harness::{look, random_pixels, random_scene_camera, Gpu};
use picking_vk_tests::oracle::{Oracle, OracleCamera};
use picking_vk_tests::scene::{Mesh, Object, Scene};

const W: u32 = 160;
const H: u32 = 120;

#[test]
fn culled_faces_are_not_picked_as_the_oracle_culls_them() {
    let gpu = Gpu::new();
    let (mut compared, mut culled_objects) = (0, 0);
    for seed in [81, 82, 83] {
        let mut scene = Scene::random(seed);
        let mut rng = fastrand::Rng::with_seed(seed);
        for obj in &mut scene.objects {
            let cull = [vk::CullModeFlags::NONE, vk::CullModeFlags::BACK, vk::CullModeFlags::FRONT][rng.usize(..3)];
            let front = [vk::FrontFace::COUNTER_CLOCKWISE, vk::FrontFace::CLOCKWISE][rng.usize(..2)];
            culled_objects += usize::from(cull != vk::CullModeFlags::NONE);
            obj.raster = RasterState::default().with_culling(cull, front);
        }
        let gs = scene.upload(&gpu.ctx);
        let (view, proj) = random_scene_camera(DepthConvention::Standard, W, H);
        let oracle = Oracle::new(&scene, OracleCamera::new(view, proj, [0.0, 0.0, f64::from(W), f64::from(H)]));
        let mut picker = gpu.picker(PickerConfig::default().with_frames_in_flight(64));
        let request = PickRequest::new(Viewport::full(W, H), view, proj);
        for chunk in random_pixels(seed, 256, W, H).chunks(64) {
            for (r, p) in gpu.pick_batch(&mut picker, &request, chunk, &gs.draws).iter().zip(chunk) {
                let want = oracle.pick(*p);
                if want.ambiguous {
                    continue;
                }
                assert_eq!(r.id().map(ObjectId::get), want.hit.as_ref().map(|h| h.id), "seed {seed} pixel {p}");
                // The same object's far side (front faces culled) is told apart by distance.
                if let (Some(got), Some(w)) = (&r.hit, &want.hit) {
                    assert!((got.distance - w.distance).abs() <= 1e-3 * w.distance, "seed {seed} pixel {p}: {} vs {}", got.distance, w.distance);
                }
                compared += 1;
            }
        }
        drop((picker, gs));
    }
    assert!(compared > 300 && culled_objects > 10, "compared {compared} pixels over {culled_objects} culled objects");
    gpu.assert_no_validation_messages();
}

#[test]
fn the_requests_culling_applies_to_draws_that_state_none_and_each_draw_can_override_it() {
    let gpu = Gpu::new();
    let (back, front) =
        (Culling::new(vk::CullModeFlags::BACK, vk::FrontFace::COUNTER_CLOCKWISE), Culling::new(vk::CullModeFlags::FRONT, vk::FrontFace::CLOCKWISE));
    let (mut compared, mut changed) = (0, 0);
    for seed in [84, 85] {
        // A third of the objects state nothing (the request's culling), a third are double
        // sided (an explicit NONE), a third cull front faces.
        let mut scene = Scene::random(seed);
        let mut as_culled = scene.clone();
        for (i, (obj, oracle_obj)) in scene.objects.iter_mut().zip(&mut as_culled.objects).enumerate() {
            let own = [None, Some(Culling::NONE), Some(front)][i % 3];
            obj.raster = RasterState { culling: own, ..RasterState::default() };
            oracle_obj.raster = RasterState { culling: Some(own.unwrap_or(back)), ..RasterState::default() };
        }
        let gs = scene.upload(&gpu.ctx);
        let (view, proj) = random_scene_camera(DepthConvention::Standard, W, H);
        let camera = || OracleCamera::new(view, proj, [0.0, 0.0, f64::from(W), f64::from(H)]);
        let (oracle, unculled) = (Oracle::new(&as_culled, camera()), Oracle::new(&scene, camera()));
        let mut picker = gpu.picker(PickerConfig::default().with_frames_in_flight(64));
        let built = picker.warm_up(&gs.draws, DepthConvention::Standard, back).unwrap();
        let request = PickRequest::new(Viewport::full(W, H), view, proj).with_culling(back.mode, back.front_face);
        let shared: std::sync::Arc<[PickDraw]> = gs.draws.clone().into();
        // Most of the view is empty and the oracle leaves out pixels within one of an edge: ask
        // mostly where the unculled scene shows a draw whose culling is not NONE, so the
        // comparison is about culling.
        let culled_here = |p: &UVec2| unculled.pick(*p).hit.is_some_and(|h| h.object % 3 != 1);
        let (on_culled, elsewhere): (Vec<UVec2>, Vec<UVec2>) = random_pixels(seed, (W * H) as usize, W, H).into_iter().partition(culled_here);
        let pixels: Vec<UVec2> = on_culled.into_iter().take(640).chain(elsewhere.into_iter().take(64)).collect();
        for chunk in pixels.chunks(64) {
            let borrowed = gpu.pick_batch(&mut picker, &request, chunk, &gs.draws);
            let kept = gpu.pick_batch(&mut picker, &request, chunk, &shared);
            for ((r, k), p) in borrowed.iter().zip(&kept).zip(chunk) {
                assert_eq!(r.hit, k.hit, "seed {seed} pixel {p}: a shared list culls as a borrowed one");
                let want = oracle.pick(*p);
                if want.ambiguous {
                    continue;
                }
                assert_eq!(r.id().map(ObjectId::get), want.hit.as_ref().map(|h| h.id), "seed {seed} pixel {p}");
                if let (Some(got), Some(w)) = (&r.hit, &want.hit) {
                    assert!((got.distance - w.distance).abs() <= 1e-3 * w.distance, "seed {seed} pixel {p}: {} vs {}", got.distance, w.distance);
                }
                let without = unculled.pick(*p);
                changed += usize::from(
                    !without.ambiguous && without.hit.map(|h| (h.id, (h.distance * 1e3) as i64)) != want.hit.map(|h| (h.id, (h.distance * 1e3) as i64)),
                );
                compared += 1;
            }
        }
        assert_eq!(picker.pipeline_count(), built, "seed {seed}: warm_up built the request culling's pipelines");
        drop((picker, gs, shared));
    }
    assert!(compared > 200 && changed > 30, "compared {compared} pixels, {changed} decided by the request's culling");
    gpu.assert_no_validation_messages();
}

/// Two coplanar quads (the same geometry and matrix), `first` drawn before `second`, both
/// with `raster`; what the pick at the centre names.
fn coplanar_pick(gpu: &Gpu, raster: RasterState, depth: DepthConvention) -> Option<u64> {
    let mut scene = Scene::default();
    scene.meshes.push(Mesh::quad(1.0));
    for id in [1, 2] {
        let mut obj = Object::new(id, 0, Mat4::IDENTITY);
        obj.raster = raster;
        scene.objects.push(obj);
    }
    let gs = scene.upload(&gpu.ctx);
    let (view, _, vp) = look(Vec3::new(0.2, 0.1, 3.0), Vec3::ZERO, 64, 64);
    let proj = match depth {
        DepthConvention::Standard => glam::camera::rh::proj::vulkan::perspective(0.9, 1.0, 0.1, 100.0),
        DepthConvention::Reverse => glam::camera::rh::proj::vulkan::perspective_infinite_reverse(0.9, 1.0, 0.1),
    };
    let mut picker = gpu.picker(PickerConfig::default());
    let id = gpu.pick(&mut picker, &PickRequest::new(vp, view, proj), UVec2::new(32, 32), &gs.draws).id().map(ObjectId::get);
    drop((picker, gs));
    id
}

#[test]
fn depth_compare_ops_decide_coplanar_draws_as_the_host_does() {
    let gpu = Gpu::new();
    let with = |op| RasterState::default().with_depth_compare(op);
    let std = DepthConvention::Standard;
    assert_eq!(coplanar_pick(&gpu, RasterState::default(), std), Some(1), "LESS: the first draw keeps the pixel");
    assert_eq!(coplanar_pick(&gpu, with(vk::CompareOp::LESS_OR_EQUAL), std), Some(2), "LESS_OR_EQUAL: the second wins the tie");
    assert_eq!(coplanar_pick(&gpu, with(vk::CompareOp::ALWAYS), std), Some(2));
    assert_eq!(coplanar_pick(&gpu, with(vk::CompareOp::NEVER), std), None);
    assert_eq!(coplanar_pick(&gpu, with(vk::CompareOp::EQUAL), std), None, "nothing equals the cleared far depth");
    let rev = DepthConvention::Reverse;
    assert_eq!(coplanar_pick(&gpu, RasterState::default(), rev), Some(1), "reverse-Z GREATER");
    assert_eq!(coplanar_pick(&gpu, with(vk::CompareOp::GREATER_OR_EQUAL), rev), Some(2));
    gpu.assert_no_validation_messages();
}

#[test]
fn depth_bias_pulls_a_decal_in_front_of_its_wall() {
    let gpu = Gpu::new();
    let pick_with = |bias: Option<DepthBias>| {
        let mut scene = Scene::default();
        scene.meshes.push(Mesh::quad(1.0));
        scene.meshes.push(Mesh::quad(0.3));
        scene.objects.push(Object::new(1, 0, Mat4::IDENTITY));
        // The decal sits a millimetre behind the wall, as coplanar decals end up after rounding.
        let mut decal = Object::new(2, 1, Mat4::from_translation(Vec3::new(0.0, 0.0, -0.001)));
        if let Some(b) = bias {
            decal.raster = RasterState::default().with_depth_bias(b);
        }
        scene.objects.push(decal);
        let gs = scene.upload(&gpu.ctx);
        let (view, proj, vp) = look(Vec3::new(0.0, 0.0, 3.0), Vec3::ZERO, 64, 64);
        let mut picker = gpu.picker(PickerConfig::default());
        let id = gpu.pick(&mut picker, &PickRequest::new(vp, view, proj), UVec2::new(32, 32), &gs.draws).id().map(ObjectId::get);
        drop((picker, gs));
        id
    };
    assert_eq!(pick_with(None), Some(1), "without bias the wall is nearer");
    assert_eq!(pick_with(Some(DepthBias { constant: -2000.0, clamp: 0.0, slope: 0.0 })), Some(2), "the host's bias brings the decal forward");
    assert_eq!(pick_with(Some(DepthBias { constant: 2000.0, clamp: 0.0, slope: 0.0 })), Some(1));
    gpu.assert_no_validation_messages();
}

#[test]
fn strips_and_fans_with_restart_pick_like_the_same_triangles_as_a_list() {
    let gpu = Gpu::new();
    let mut scene = Scene::default();
    scene.meshes.push(Mesh::sphere(10, 14));
    scene.objects.push(Object::new(7, 0, Mat4::from_scale(Vec3::splat(1.2))));
    let gs = scene.upload(&gpu.ctx);
    let list = gs.draws[0].clone();
    let indices = scene.meshes[0].indices.clone().expect("the sphere is indexed");
    // Each triangle (a, b, c) as a strip or fan of its own, restarts between them: a strip's
    // first triangle is (a, b, c), a fan's (b, c, a), the same triangle and winding.
    let mut restarted = vec![];
    for t in indices.chunks(3) {
        if !restarted.is_empty() {
            restarted.push(u32::MAX);
        }
        restarted.extend_from_slice(t);
    }
    let ib = gpu.ctx.upload(&restarted, vk::BufferUsageFlags::INDEX_BUFFER).expect("index buffer");
    let as_topology = |topology| {
        let triangles = Triangles::Indexed {
            range: BufferRange { buffer: ib.buffer, offset: 0, size: ib.size },
            width: IndexWidth::U32,
            first_index: 0,
            index_count: restarted.len() as u32,
            vertex_offset: 0,
        };
        // The CPU geometry as this draw reads it (restart indices included), for detail.
        let geometry = list.geometry.as_ref().map(|g| picking_vk::draw::MeshGeometry { indices: Some(restarted.clone()), ..(**g).clone() });
        let draw = PickDraw::new(list.id, list.positions, triangles)
            .with_model(list.model)
            .with_bounds(list.bounds.expect("bounds from the geometry"))
            .with_raster(RasterState::default().with_topology(topology, true));
        match geometry {
            Some(g) => draw.with_geometry(std::sync::Arc::new(g)),
            None => draw,
        }
    };
    let (view, proj) = random_scene_camera(DepthConvention::Standard, W, H);
    let request = PickRequest::new(Viewport::full(W, H), view, proj);
    let covered = gpu.covered_pixels(&request, std::slice::from_ref(&list), 9);
    assert!(covered.len() > 200, "the sphere fills part of the view: {}", covered.len());
    let mut picker = gpu.picker(PickerConfig::default().with_frames_in_flight(64).with_detail(picking_vk::DetailMode::IfEnabled));
    let mut detail_checked = 0;
    for topology in [Topology::TriangleStrip, Topology::TriangleFan] {
        let draws = [as_topology(topology)];
        let mut pixels: Vec<UVec2> = covered.iter().take(100).copied().collect();
        pixels.extend(random_pixels(5, 28, W, H));
        for chunk in pixels.chunks(64) {
            let as_list = gpu.pick_batch(&mut picker, &request, chunk, std::slice::from_ref(&list));
            let as_other = gpu.pick_batch(&mut picker, &request, chunk, &draws);
            for ((a, b), p) in as_list.iter().zip(&as_other).zip(chunk) {
                assert_eq!(a.id(), b.id(), "{topology:?} pixel {p}");
                // A fan starts each triangle at another vertex: depth may differ in the last bit.
                if let (Some(x), Some(y)) = (&a.hit, &b.hit) {
                    assert!((x.depth - y.depth).abs() <= 1e-6, "{topology:?} pixel {p}: {} vs {}", x.depth, y.depth);
                    // With the detail attachment (not on lavapipe), the strip's or fan's face
                    // names the same three vertices as the list's.
                    let vertices = |h: &picking_vk::PickHit| {
                        h.detail.and_then(|d| d.vertices).map(|mut v| {
                            v.sort_unstable();
                            v
                        })
                    };
                    if let (Some(va), Some(vb)) = (vertices(x), vertices(y)) {
                        assert_eq!(va, vb, "{topology:?} pixel {p}: the same triangle");
                        detail_checked += 1;
                    }
                }
            }
        }
    }
    if picker.detail_status() == &picking_vk::config::DetailStatus::Active {
        assert!(detail_checked > 100, "faces compared: {detail_checked}");
    }
    eprintln!("strip and fan faces compared with detail: {detail_checked}");
    // Restart with a list is refused (it needs primitiveTopologyListRestart).
    let bad = list.clone().with_raster(RasterState::default().with_topology(Topology::TriangleList, true));
    gpu.run(|cmd| {
        // SAFETY: recording outside a render pass; a refused pick records nothing.
        let err = unsafe { picker.record(cmd, 0, &request, &[PickQuery::Point(UVec2::ZERO)], &[bad]) }.expect_err("list restart");
        assert!(err.to_string().contains("primitiveTopologyListRestart"), "{err}");
    });
    drop((picker, ib, gs));
    gpu.assert_no_validation_messages();
}
