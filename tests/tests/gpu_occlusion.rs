//! Occlusion for point queries: a planned draw whose registered geometry surely covers the
//! pixel lets the picker drop every draw that lies surely behind it. The answer never
//! changes: dense random scenes (culled faces, LESS_OR_EQUAL and GREATER_OR_EQUAL compares,
//! depth bias, both depth conventions, a million units from the origin) give the same ID,
//! instance, depth bits and draw as picking without culling, while far fewer draws are
//! recorded than with ray culling alone (a radius-0 query: one pixel, no occlusion). Over a
//! shared draw list the hierarchy is walked nearest first and skips what lies behind a sure
//! hit: the same answers again, including in a scene where some draws test depth another
//! way (ALWAYS, or the opposite direction), where skipping must be undone.

use ash::vk;
use glam::{Mat4, Quat, UVec2, Vec3};
use picking_vk::{
    draw::DepthBias, draw::RasterState, DepthConvention, PickDraw, PickQuery, PickRequest, PickResult, PickerConfig, QueryResult, Snap, Viewport,
};
use picking_vk_tests::harness::{random_pixels, random_scene_camera, Gpu};
use picking_vk_tests::scene::{Object, Scene};

const W: u32 = 160;
const H: u32 = 120;
const BATCH: usize = 64;

/// A random scene plus 200 objects filling the view from 3 to 15 units away, with varied
/// raster state, everything moved by `offset` (the camera moves with it).
fn dense_scene(seed: u64, depth: DepthConvention, offset: Vec3, other_tests: bool) -> Scene {
    let mut s = Scene::random(seed);
    let mut rng = fastrand::Rng::with_seed(seed ^ 0x5eed);
    let nearer_or_equal = match depth {
        DepthConvention::Standard => vk::CompareOp::LESS_OR_EQUAL,
        DepthConvention::Reverse => vk::CompareOp::GREATER_OR_EQUAL,
    };
    for k in 0..200u64 {
        let distance = 4.0 + rng.f32() * 12.0;
        let t = Vec3::new((rng.f32() - 0.5) * distance * 1.2, (rng.f32() - 0.5) * distance * 0.9, 1.0 - distance);
        let axis = Vec3::new(rng.f32() - 0.5, rng.f32() - 0.5, rng.f32() - 0.5).normalize_or(Vec3::Y);
        let scale = Vec3::new(0.3 + rng.f32(), 0.3 + rng.f32(), 0.3 + rng.f32());
        let pose = Mat4::from_scale_rotation_translation(scale, Quat::from_axis_angle(axis, rng.f32() * 6.0), t);
        let mut obj = Object::new(0x1000 + k, rng.usize(..s.meshes.len()), pose);
        let mut raster = RasterState::default();
        let cull = [vk::CullModeFlags::NONE, vk::CullModeFlags::BACK, vk::CullModeFlags::FRONT][rng.usize(..3)];
        let front = if rng.bool() { vk::FrontFace::COUNTER_CLOCKWISE } else { vk::FrontFace::CLOCKWISE };
        raster = raster.with_culling(cull, front);
        if rng.u32(..4) == 0 {
            raster = raster.with_depth_compare(nearer_or_equal);
        }
        if other_tests && rng.u32(..40) == 0 {
            let farther = match depth {
                DepthConvention::Standard => vk::CompareOp::GREATER,
                DepthConvention::Reverse => vk::CompareOp::LESS,
            };
            raster = raster.with_depth_compare(if rng.bool() { vk::CompareOp::ALWAYS } else { farther });
        }
        if rng.u32(..10) == 0 {
            raster = raster.with_depth_bias(DepthBias { constant: if rng.bool() { -4.0 } else { 4.0 }, clamp: 0.0, slope: rng.f32() * 2.0 - 1.0 });
        }
        obj.raster = raster;
        obj.packed = k % 3 == 0;
        s.objects.push(obj);
    }
    for obj in &mut s.objects {
        obj.model = Mat4::from_translation(offset) * obj.model;
    }
    s
}

/// Picks each pixel with a radius-0 query: one pixel, culled by its ray, never by occlusion.
fn pick_radius_zero(gpu: &Gpu, picker: &mut picking_vk::Picker, request: &PickRequest<'_>, pixels: &[UVec2], draws: &[PickDraw]) -> Vec<PickResult> {
    gpu.run(|cmd| {
        for (slot, &pixel) in pixels.iter().enumerate() {
            // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
            unsafe { picker.record(cmd, slot, request, &[PickQuery::Radius { pixel, radius: 0, snap: Snap::Nearest }], draws) }.expect("record");
        }
    });
    (0..pixels.len())
        .map(|slot| {
            // SAFETY: `run` waited for the frame.
            let mut frame = unsafe { picker.take_results(slot) }.expect("resolve").expect("pending");
            match frame.results.remove(0) {
                QueryResult::Radius { result, .. } => result,
                other => panic!("a radius query answered {other:?}"),
            }
        })
        .collect()
}

#[test]
fn occlusion_never_changes_a_point_result() {
    let gpu = Gpu::new();
    let (mut compared, mut hits, mut with_occlusion, mut ray_only, mut walked) = (0usize, 0usize, 0u64, 0u64, 0u64);
    let cases = [
        (71, DepthConvention::Standard, Vec3::ZERO, false),
        (72, DepthConvention::Reverse, Vec3::ZERO, false),
        (73, DepthConvention::Standard, Vec3::new(1.0e6, -2.5e5, 7.5e5), false),
        (74, DepthConvention::Reverse, Vec3::new(-3.0e5, 6.0e5, 2.0e5), true),
    ];
    for (seed, depth, offset, other_tests) in cases {
        let gs = dense_scene(seed, depth, offset, other_tests).upload(&gpu.ctx);
        let shared: std::sync::Arc<[PickDraw]> = gs.draws.clone().into();
        let (view, proj) = random_scene_camera(depth, W, H);
        let view = view * Mat4::from_translation(-offset);
        let vp = Viewport::full(W, H);
        let config = PickerConfig::default().with_frames_in_flight(BATCH);
        let mut culled = gpu.picker(config);
        let mut radius = gpu.picker(config);
        let mut nearest_first = gpu.picker(config);
        let mut full = gpu.picker(config.with_culling(false));
        let request = PickRequest::new(vp, view, proj);
        for chunk in random_pixels(seed, 4 * BATCH, W, H).chunks(BATCH) {
            let a = gpu.pick_batch(&mut culled, &request, chunk, &gs.draws);
            let b = gpu.pick_batch(&mut full, &request, chunk, &gs.draws);
            let c = pick_radius_zero(&gpu, &mut radius, &request, chunk, &gs.draws);
            let d = gpu.pick_batch(&mut nearest_first, &request, chunk, &shared);
            for ((((ra, rb), rc), rd), p) in a.iter().zip(&b).zip(&c).zip(&d).zip(chunk) {
                let key = |r: &PickResult| r.hit.as_ref().map(|h| (h.id, h.instance, h.depth.to_bits(), h.draw_index));
                assert_eq!(key(ra), key(rb), "seed {seed} {depth:?} offset {offset} pixel {p}: occlusion-culled vs not culled");
                assert_eq!(key(rd), key(rb), "seed {seed} {depth:?} offset {offset} pixel {p}: nearest-first over a shared list vs not culled");
                // The radius query's cell lies elsewhere in the target: depth to float rounding.
                let object = |r: &PickResult| r.hit.as_ref().map(|h| (h.id, h.instance, h.draw_index));
                assert_eq!(object(rc), object(rb), "seed {seed} {depth:?} offset {offset} pixel {p}: ray-culled vs not culled");
                if let (Some(x), Some(y)) = (&rc.hit, &rb.hit) {
                    assert!((x.depth - y.depth).abs() <= 1e-6, "pixel {p}: depth {} vs {}", x.depth, y.depth);
                }
                with_occlusion += ra.stats.pass.draws_recorded;
                ray_only += rc.stats.pass.draws_recorded;
                walked += rd.stats.pass.draws_recorded;
                hits += usize::from(ra.hit.is_some());
                compared += 1;
            }
        }
        drop((culled, radius, nearest_first, full, shared, gs));
    }
    eprintln!(
        "occlusion parity: {compared} pixels identical ({hits} hits); draws recorded per pick: {:.2} with occlusion, {:.2} nearest first over a shared list, {:.2} with ray culling alone",
        with_occlusion as f64 / compared as f64,
        walked as f64 / compared as f64,
        ray_only as f64 / compared as f64
    );
    assert!(hits * 2 > compared, "the dense cluster covers most pixels: {hits} of {compared}");
    assert!(with_occlusion * 4 < ray_only * 3, "occlusion drops a quarter or more of what the ray meets: {with_occlusion} vs {ray_only}");
    assert!(walked * 4 < ray_only * 3, "so does the nearest-first walk: {walked} vs {ray_only}");
    gpu.assert_no_validation_messages();
}
