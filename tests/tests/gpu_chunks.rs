//! Chunk culling: a large mesh draws only the runs of its triangles the pick ray can meet.
//! Points and radius queries give the same object, instance, depth bits and draw as without
//! culling, and on devices with detail the same face and barycentrics (the GPU counts faces
//! from each run's start; the picker reports them within the draw).

use ash::vk;
use glam::{Mat4, Quat, UVec2, Vec3};
use picking_vk::{draw::RasterState, DepthConvention, DetailMode, FrameResults, PickQuery, PickRequest, PickResult, PickerConfig, QueryResult, Snap, Viewport};
use picking_vk_tests::harness::{random_pixels, random_scene_camera, Gpu};
use picking_vk_tests::scene::{Mesh, Object, Scene};

const W: u32 = 160;
const H: u32 = 120;

/// The random scene plus 40 objects of large meshes in front of it: an indexed sphere of
/// 1,536 triangles, a grid of 1,152 and a non-indexed sphere of 768, with u16 and u32
/// indices, some packed after unrelated geometry.
fn scene(seed: u64) -> Scene {
    let mut s = Scene::random(seed);
    let mut rng = fastrand::Rng::with_seed(seed ^ 0xc4);
    let sphere = s.meshes.len();
    s.meshes.push(Mesh::sphere(24, 32));
    s.meshes.push(Mesh::grid(24, 0.8));
    s.meshes.push(Mesh::sphere(16, 24).unindexed());
    for k in 0..40u64 {
        let distance = 3.0 + rng.f32() * 9.0;
        let t = Vec3::new((rng.f32() - 0.5) * distance * 1.1, (rng.f32() - 0.5) * distance * 0.8, 1.0 - distance);
        let axis = Vec3::new(rng.f32() - 0.5, rng.f32() - 0.5, rng.f32() - 0.5).normalize_or(Vec3::Y);
        let scale = Vec3::new(0.4 + rng.f32(), 0.4 + rng.f32(), 0.4 + rng.f32());
        let mut obj =
            Object::new(0x2000 + k, sphere + (k % 3) as usize, Mat4::from_scale_rotation_translation(scale, Quat::from_axis_angle(axis, rng.f32() * 6.0), t));
        let cull = [vk::CullModeFlags::NONE, vk::CullModeFlags::BACK, vk::CullModeFlags::FRONT][rng.usize(..3)];
        obj.raster = RasterState::default().with_culling(cull, vk::FrontFace::COUNTER_CLOCKWISE);
        obj.packed = k % 4 == 0;
        obj.index_width = if k % 2 == 0 { picking_vk::draw::IndexWidth::U16 } else { picking_vk::draw::IndexWidth::U32 };
        s.objects.push(obj);
    }
    s
}

fn run_queries(gpu: &Gpu, picker: &mut picking_vk::Picker, request: &PickRequest<'_>, queries: &[PickQuery], draws: &[picking_vk::PickDraw]) -> FrameResults {
    // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
    gpu.run(|cmd| unsafe { picker.record(cmd, 0, request, queries, draws) }.map(|_| ()).expect("record"));
    // SAFETY: `run` waited for the frame.
    unsafe { picker.take_results(0) }.expect("resolve").expect("pending")
}

/// What must not change: object, instance, depth bits, draw, and the detail's face and
/// barycentrics.
type HitKey = (picking_vk::ObjectId, Option<u32>, u32, u32, Option<(u32, [u32; 3])>);

fn key(r: &PickResult) -> Option<HitKey> {
    let h = r.hit.as_ref()?;
    Some((h.id, h.instance, h.depth.to_bits(), h.draw_index, h.detail.as_ref().map(|d| (d.face, d.gpu_barycentrics.map(f32::to_bits)))))
}

#[test]
fn chunk_culling_never_changes_a_result() {
    let gpu = Gpu::new();
    let (mut compared, mut hits, mut faces, mut triangles_culled) = (0usize, 0usize, 0usize, 0u64);
    for (seed, depth) in [(81, DepthConvention::Standard), (82, DepthConvention::Reverse)] {
        let gs = scene(seed).upload(&gpu.ctx);
        let (view, proj) = random_scene_camera(depth, W, H);
        let config = PickerConfig::default().with_detail(DetailMode::IfEnabled);
        let mut culled = gpu.picker(config);
        let mut full = gpu.picker(config.with_culling(false));
        let pixels = random_pixels(seed, 320, W, H);
        let request = PickRequest::new(Viewport::full(W, H), view, proj);
        for chunk in pixels.chunks(16) {
            // Half points, half radius queries.
            let queries: Vec<PickQuery> = chunk
                .iter()
                .enumerate()
                .map(|(i, &pixel)| if i % 2 == 0 { PickQuery::Point(pixel) } else { PickQuery::Radius { pixel, radius: 3, snap: Snap::Nearest } })
                .collect();
            let a = run_queries(&gpu, &mut culled, &request, &queries, &gs.draws);
            let b = run_queries(&gpu, &mut full, &request, &queries, &gs.draws);
            triangles_culled += a.stats.pass.triangles_culled;
            assert_eq!(b.stats.pass.triangles_culled, 0);
            for ((ra, rb), p) in a.results.iter().zip(&b.results).zip(chunk) {
                let (ra, rb, pa, pb) = match (ra, rb) {
                    (QueryResult::Point(ra), QueryResult::Point(rb)) => (ra, rb, None, None),
                    (QueryResult::Radius { result: ra, hit_pixel: pa, .. }, QueryResult::Radius { result: rb, hit_pixel: pb, .. }) => (ra, rb, *pa, *pb),
                    other => panic!("mismatched results {other:?}"),
                };
                assert_eq!(pa, pb, "seed {seed} pixel {p}: radius hit pixel");
                assert_eq!(key(ra), key(rb), "seed {seed} {depth:?} pixel {p}: chunk-culled vs not culled");
                hits += usize::from(ra.hit.is_some());
                faces += usize::from(ra.hit.as_ref().is_some_and(|h| h.detail.is_some()));
                compared += 1;
            }
        }
        drop((culled, full, gs));
    }
    eprintln!(
        "chunk culling parity: {compared} points and radius queries identical ({hits} hits, {faces} with their face checked); {} triangles culled per query",
        triangles_culled / compared as u64
    );
    assert!(hits * 2 > compared, "most queries hit: {hits} of {compared}");
    let detail = gpu.ctx.picking_features.contains(picking_vk::PickFeatures::DETAIL);
    assert_eq!(faces > 0, detail, "faces are checked exactly where the device has detail");
    assert!(triangles_culled > 1000 * compared as u64, "chunk culling leaves out most of the large meshes: {triangles_culled}");
    gpu.assert_no_validation_messages();
}

#[test]
fn a_pick_on_a_large_mesh_reports_the_face_within_the_draw() {
    let gpu = Gpu::new();
    // One 1,536-triangle sphere straight ahead: its centre pixel lies on a face far from 0.
    let s = Scene { meshes: vec![Mesh::sphere(24, 32)], objects: vec![Object::new(5, 0, Mat4::from_translation(Vec3::new(0.0, 0.0, -6.0)))] };
    let gs = s.upload(&gpu.ctx);
    let (view, proj) = random_scene_camera(DepthConvention::Standard, W, H);
    let vp = Viewport::full(W, H);
    let config = PickerConfig::default().with_detail(DetailMode::IfEnabled);
    let mut culled = gpu.picker(config);
    let mut full = gpu.picker(config.with_culling(false));
    let request = PickRequest::new(vp, view, proj);
    let centre = UVec2::new(W / 2, H / 2);
    let a = gpu.pick(&mut culled, &request, centre, &gs.draws);
    let b = gpu.pick(&mut full, &request, centre, &gs.draws);
    assert!(a.hit.is_some(), "the sphere fills the centre");
    assert!(a.stats.pass.triangles_culled > 1000, "most of the sphere is left out: {}", a.stats.pass.triangles_culled);
    assert_eq!(key(&a), key(&b));
    if let Some(d) = a.hit.as_ref().and_then(|h| h.detail.as_ref()) {
        assert!(d.face >= 64, "a face beyond the first chunk: {}", d.face);
    }
    drop((culled, full, gs));
    gpu.assert_no_validation_messages();
}

#[test]
fn a_cut_draw_assembles_only_its_runs_with_and_without_batching() {
    let gpu = Gpu::new();
    // Two 1,536-triangle spheres side by side, both under the centre pixel's padded ray only
    // in part: each is cut to a few runs.
    let s = Scene {
        meshes: vec![Mesh::sphere(24, 32)],
        objects: vec![
            Object::new(5, 0, Mat4::from_translation(Vec3::new(-0.9, 0.0, -6.0))),
            Object::new(6, 0, Mat4::from_translation(Vec3::new(0.9, 0.0, -7.0))),
        ],
    };
    let gs = s.upload(&gpu.ctx);
    let (view, proj) = random_scene_camera(DepthConvention::Standard, W, H);
    let request = PickRequest::new(Viewport::full(W, H), view, proj);
    let centre_query = [PickQuery::Point(UVec2::new(W / 2, H / 2))];
    let total = 2 * 1536u64;
    let mut hits = vec![];
    for rows in [512, 0] {
        let mut picker = gpu.picker(PickerConfig::default().with_batch_rows(rows));
        // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
        let assembled = gpu.count_primitives(|cmd| unsafe { picker.record(cmd, 0, &request, &centre_query, &gs.draws) }.map(|_| ()).expect("record"));
        // SAFETY: the frame completed.
        let result = unsafe { picker.take_results(0) }.expect("resolve").expect("pending").pick(0).expect("a point's pick").clone();
        let culled = result.stats.pass.triangles_culled;
        assert!(culled > 1000, "batch rows {rows}: most of both spheres is left out ({culled})");
        assert_eq!(assembled, total - culled, "batch rows {rows}: the pass assembles exactly the runs it kept");
        hits.push(key(&result));
        drop(picker);
    }
    assert!(hits[0].is_some() && hits[0] == hits[1], "{hits:?}");
    drop(gs);
    gpu.assert_no_validation_messages();
}
