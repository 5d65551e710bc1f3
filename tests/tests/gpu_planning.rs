//! GPU planning (`Planner`): a host's compute pass writes its instances' transforms each
//! frame, and the picker culls them on the GPU. The answers are those of the CPU planner
//! (which must draw such instances whole) and of no culling at all, every frame, for points,
//! radius queries and a rectangle in one set, for triangles, hooked draws (discarding, and
//! adjusting the world inside their box), lines and points; the planner's bound, exceeded,
//! falls back to drawing whole ranges with the same answers. The pickers ask for detail
//! where the device has it (not lavapipe), so that there the answers hold each hit's face
//! and barycentrics too.

use ash::vk;
use glam::{Mat4, UVec2, Vec3};
use picking_vk::config::{DetailStatus, Planner};
use picking_vk::draw::{BufferRange, DrawList, InstanceBinding, Instances, RasterState, Topology, Triangles};
use picking_vk::hooks::{DrawHooks, HookProgram, HookSource};
use picking_vk::request::Ignore;
use picking_vk::{DetailMode, FrameResults, ObjectId, PickDraw, PickQuery, PickRequest, Picker, PickerConfig, PixelRect, QueryResult, RectMode, Snap};
use picking_vk_host::InstanceMotion;
use picking_vk_tests::harness::{look, random_pixels, Gpu};
use picking_vk_tests::scene::{Mesh, Object, Scene};
use std::collections::BTreeSet;
use std::sync::Arc;

const W: u32 = 160;
const H: u32 = 120;
const INSTANCES: u32 = 2000;

/// The instances a host's compute pass moves each frame: a grid of 50 columns, 0.35 apart,
/// each spun and scaled its own way, at depths that differ per instance.
fn writer(gpu: &Gpu) -> InstanceMotion {
    InstanceMotion::new(&gpu.ctx, &grid(INSTANCES, |i| i), 0.4 * 0.35).expect("instance motion")
}

/// `count` transforms, instance `i` at grid place `place(i)` (rows of 50 around the view's
/// centre).
fn grid(count: u32, place: impl Fn(u32) -> u32) -> Vec<Mat4> {
    let spacing = 0.35;
    let rows = (place(count - 1) / 50 + 1) as f32;
    (0..count)
        .map(place)
        .map(|i| {
            let fi = i as f32;
            let cell = Vec3::new((i % 50) as f32 - 25.0, (i / 50) as f32 - rows / 2.0, 0.0) * spacing;
            let scale = spacing * (0.3 + 0.2 * (fi * 2.3).sin());
            Mat4::from_scale_rotation_translation(
                Vec3::splat(scale),
                glam::Quat::from_rotation_z(fi),
                cell + Vec3::new(0.0, 0.0, -9.0 - 2.0 * (fi * 1.7).sin()),
            )
        })
        .collect()
}

/// Two draws over the writer's buffer, an indexed sphere over every instance and an unindexed
/// box, shifted, over its last two fifths (neither has a CPU copy of its transforms), then two
/// plain spheres.
fn draws(gpu: &Gpu, writer: &InstanceMotion) -> (picking_vk_tests::scene::GpuScene, Vec<PickDraw>) {
    let mut scene = Scene::default();
    scene.meshes.push(Mesh::sphere(6, 10));
    scene.meshes.push(Mesh::cuboid(Vec3::new(0.8, 0.5, 0.6)).unindexed());
    scene.objects.push(Object::new(1, 0, Mat4::IDENTITY));
    scene.objects.push(Object::new(2, 1, Mat4::from_translation(Vec3::new(0.37, 0.21, 0.5))));
    // Two plain spheres in front, drawn after the planned draws: batched runs are plain
    // indirect draws, which must not inherit a planned pair's count (lavapipe keeps it).
    for (id, x) in [(3, -1.0), (4, 1.2)] {
        scene.objects.push(Object::new(id, 0, Mat4::from_translation(Vec3::new(x, 0.3, -6.0)) * Mat4::from_scale(Vec3::splat(0.7))));
    }
    let uploaded = scene.upload(&gpu.ctx);
    let range = BufferRange { buffer: writer.transforms.buffer, offset: 0, size: writer.transforms.size };
    let storage = |draw: &PickDraw, first: u32, count: u32| {
        let mut d = draw.clone().with_instance_binding(InstanceBinding::StorageBuffer).with_instances(Instances { range, stride: 64, first, count });
        d.instance_transforms = None;
        assert!(d.bounds.is_some(), "the draws have local bounds");
        d
    };
    let n = writer.count();
    let draws =
        vec![storage(&uploaded.draws[0], 0, n), storage(&uploaded.draws[1], n / 5 * 3, n - n / 5 * 3), uploaded.draws[2].clone(), uploaded.draws[3].clone()];
    (uploaded, draws)
}

/// Six covered pixels and five random ones as points, four radius queries, a rectangle of
/// visible objects (2 x 2 tiles) and one of everything (select-through: every fragment
/// counts, so an instance drawn twice would show).
fn queries(covered: &[UVec2], seed: u64) -> Vec<PickQuery> {
    let random = random_pixels(seed, 9, W, H);
    let mut q: Vec<PickQuery> = covered.iter().take(6).chain(&random[..5]).map(|&p| PickQuery::Point(p)).collect();
    for (k, &pixel) in random[5..].iter().enumerate() {
        let snap = if k % 2 == 0 { Snap::Nearest } else { Snap::Thin };
        q.push(PickQuery::Radius { pixel, radius: 3 + k as u32, snap });
    }
    q.push(PickQuery::Rect { rect: PixelRect::new(UVec2::new(30, 20), UVec2::new(90, 70)), mode: RectMode::Visible });
    q.push(PickQuery::Rect { rect: PixelRect::new(UVec2::new(50, 40), UVec2::new(80, 60)), mode: RectMode::All });
    q
}

/// Writes the transforms for `time` and picks `queries` in the same command buffer.
fn frame(
    gpu: &Gpu,
    picker: &mut Picker,
    writer: &InstanceMotion,
    request: &PickRequest<'_>,
    queries: &[PickQuery],
    draws: DrawList<'_>,
    time: f32,
) -> FrameResults {
    let request = (*request).with_host_writes(vk::PipelineStageFlags::COMPUTE_SHADER, vk::AccessFlags::SHADER_WRITE);
    gpu.run(|cmd| {
        // SAFETY: recording outside a render pass; the buffers outlive the wait; the picker
        // orders the writer's writes before its reads.
        unsafe {
            writer.record(cmd, time);
            picker.record(cmd, 0, &request, queries, draws).expect("record");
        }
    });
    // SAFETY: `run` waited for the frame.
    unsafe { picker.take_results(0) }.expect("resolve").expect("pending")
}

/// The pickers of the tests that pick `queries`' sets (points, radius queries, rectangles of
/// both modes; up to 17 queries with the points some tests add): detail where the device has
/// it, rectangle tiles of 40 x 32.
fn query_set_config() -> PickerConfig {
    PickerConfig::default().with_detail(DetailMode::IfEnabled).with_max_queries(17).with_rect_tile(40, 32).with_rect_entries(8192)
}

/// What must agree between planners: each pick's pixel and hit, each rectangle's objects.
fn answers(results: &FrameResults) -> Vec<String> {
    results
        .results
        .iter()
        .map(|r| match r {
            QueryResult::Point(p) => format!("{:?} {:?}", p.pixel, p.hit),
            QueryResult::Radius { result, hit_pixel, .. } => format!("{hit_pixel:?} {:?}", result.hit),
            QueryResult::Rect(rect) => format!("{:?}", rect.objects),
        })
        .collect()
}

fn hit_instances(results: &FrameResults) -> BTreeSet<(ObjectId, Option<u32>)> {
    results.results.iter().filter_map(QueryResult::pick).filter_map(|p| p.hit.as_ref()).map(|h| (h.id, h.instance)).collect()
}

/// The spheres' ID (draw 0 of [`draws`]) and rules that ignore their instance 7 and
/// instances 100 to 149: a point's or disc's plan has three ranges of them.
fn split_spheres() -> (ObjectId, [Ignore; 2]) {
    let sphere = ObjectId::new(1).unwrap();
    (sphere, [Ignore::instance(sphere, 7), Ignore::Instances { id: sphere, start: 100, count: 50 }])
}

#[test]
fn gpu_planned_instances_a_compute_pass_moves_pick_as_cpu_planned_and_unculled() {
    let gpu = Gpu::new();
    let writer = writer(&gpu);
    let (scene, draws) = draws(&gpu, &writer);
    let (view, proj, viewport) = look(Vec3::new(0.0, 0.0, -2.0), Vec3::new(0.0, 0.0, -9.0), W, H);
    let (sphere, ignore) = split_spheres();
    let request = PickRequest::new(viewport, view, proj).with_ignore(&ignore);
    let config = query_set_config().with_gpu_plan_capacity(128, 16_384);
    let mut gpu_planned = gpu.picker(config.with_planner(Planner::Gpu));
    let mut auto = gpu.picker(config);
    let mut cpu_planned = gpu.picker(config.with_planner(Planner::Cpu));
    let mut unculled = gpu.picker(config.with_culling(false));
    // The same draws as a shared list (kept across frames: the instances move on the GPU).
    let shared: Arc<[PickDraw]> = draws.clone().into();
    let mut gpu_shared = gpu.picker(config.with_planner(Planner::Gpu));
    // Per slot (two by default): 260 bytes a pair, 20 a command, a bit per instance the
    // pairs may test (2^18 by default), a summary bit per 64 and a survivor count (4 bytes)
    // per 2,048, the view-projection in f64
    // (128 bytes), the count of compacted rows taken (4 bytes) and the frame's totals (20
    // bytes), rounded up to 16 bytes;
    // nothing per draw or instance of the scene (a borrowed list has no table). `Planner::Gpu` (lavapipe has
    // `shaderFloat64`) also holds, per slot, the rows a frame may draw of a shared list's
    // table (16,384 of 80 bytes by default) with a near key each (4 bytes), a span row per
    // command (80 bytes) and as many compacted rows as rows (80 bytes); and with `Auto` too,
    // a bit per draw a table may hold (131,072 by default) for the rows ignore rules leave
    // out (`Auto` builds the rows with its first set that takes a table: none here).
    let planner_bytes = 2 * (128 * 260 + 16_384 * 20 + (1 << 18) / 8 + (1 << 12) / 8 + (1 << 7) * 4 + 128 + 4 + 20_u64 + (1 << 17) / 8).next_multiple_of(16);
    let rows_bytes = 2 * (16_384 * 84 + 16_384 * 80 + 16_384 * 80);
    assert_eq!((gpu_planned.memory().planner, auto.memory().planner), (planner_bytes + rows_bytes, planner_bytes), "a GPU planner's buffers are reported");
    assert_eq!((cpu_planned.memory().planner, unculled.memory().planner), (0, 0), "no GPU planner, no buffers");
    let (mut seen, mut first_hits, mut moved) = (BTreeSet::new(), None, false);
    for (f, time) in [0.0f32, 0.7, 1.9, 3.1].into_iter().enumerate() {
        // The frame's transforms, for choosing covered pixels.
        // SAFETY: recording outside a render pass; `run` waits.
        gpu.run(|cmd| unsafe { writer.record(cmd, time) });
        let covered = gpu.covered_pixels(&request, &draws, f as u64);
        assert!(covered.len() > 2000, "the field covers much of the view: {}", covered.len());
        let queries = queries(&covered, 40 + f as u64);
        let want = frame(&gpu, &mut unculled, &writer, &request, &queries, (&draws).into(), time);
        for (name, picker, list) in [
            ("GPU", &mut gpu_planned, DrawList::from(&draws)),
            ("Auto", &mut auto, DrawList::from(&draws)),
            ("CPU", &mut cpu_planned, DrawList::from(&draws)),
            ("GPU, shared list", &mut gpu_shared, DrawList::from(&shared)),
        ] {
            let got = frame(&gpu, picker, &writer, &request, &queries, list, time);
            assert_eq!(answers(&got), answers(&want), "frame {f}: {name}-planned against unculled");
            let stats = got.results[0].pick().unwrap().stats.gpu_plan;
            if name == "CPU" {
                assert_eq!(stats, None, "the CPU planner plans nothing on the GPU");
                continue;
            }
            let stats = stats.expect("the GPU planned the storage instances");
            // Per point and radius query and per rectangle tile (four of the visible one, one
            // of the other), a pair per range: the spheres' three, the boxes' one.
            assert_eq!(stats.ranges, (15 + 4 + 1) * 4, "frame {f}: {stats:?}");
            // The points' and discs' pairs are walked (storage instances, no hooks), the
            // tiles' finished.
            assert_eq!(stats.walked, 15 * 4, "frame {f}: {stats:?}");
            assert_eq!(stats.fallbacks, 0, "frame {f}: the default bound holds this set: {stats:?}");
            assert!(stats.survivors > 0 && stats.survivors * 20 < stats.instances_tested, "frame {f}: the pass culls most instances: {stats:?}");
            // A command per run of consecutive survivors: a tile's rows of the grid merge.
            assert!(stats.commands >= stats.ranges / 4 && stats.commands * 3 < stats.survivors * 2, "frame {f}: {stats:?}");
        }
        let hits = hit_instances(&want);
        assert!(hits.len() >= 6, "frame {f}: the covered points hit instances: {hits:?}");
        assert!(hits.iter().all(|(id, i)| !(*id == sphere && (*i == Some(7) || (100..150).contains(&i.unwrap_or(0))))), "ignored instances never hit");
        moved |= first_hits.as_ref().is_some_and(|h: &BTreeSet<_>| *h != hits);
        first_hits.get_or_insert(hits.clone());
        seen.extend(hits);
    }
    assert!(moved, "the instances move between frames");
    assert!(seen.len() >= 20, "instances hit over the frames: {}", seen.len());
    drop((gpu_planned, auto, cpu_planned, unculled, gpu_shared, scene, writer));
    gpu.assert_no_validation_messages();
}

#[test]
fn auto_plans_on_the_gpu_only_what_the_cpu_cannot_cull() {
    let gpu = Gpu::new();
    let writer = writer(&gpu);
    let (scene, mut draws) = draws(&gpu, &writer);
    // The spheres get a CPU copy of their transforms (what the writer wrote for time 0).
    let transforms = written_transforms(&gpu, &writer);
    draws[0] = draws[0].clone().with_instance_transforms(transforms.into());
    let (view, proj, viewport) = look(Vec3::new(0.0, 0.0, -2.0), Vec3::new(0.0, 0.0, -9.0), W, H);
    let request = PickRequest::new(viewport, view, proj);
    let queries: Vec<PickQuery> = random_pixels(3, 8, W, H).into_iter().map(PickQuery::Point).collect();
    let mut auto = gpu.picker(PickerConfig::default());
    let mut gpu_planned = gpu.picker(PickerConfig::default().with_planner(Planner::Gpu));
    let a = frame(&gpu, &mut auto, &writer, &request, &queries, (&draws).into(), 0.0);
    let g = frame(&gpu, &mut gpu_planned, &writer, &request, &queries, (&draws).into(), 0.0);
    assert_eq!(answers(&a), answers(&g));
    // Auto: the CPU culls the spheres, the GPU only the boxes (one range per point). Gpu: the
    // CPU leaves the spheres' instances to the GPU too.
    let (a, g) = (a.results[0].pick().unwrap().stats, g.results[0].pick().unwrap().stats);
    assert_eq!(a.gpu_plan.map(|s| s.ranges), Some(8), "{a:?}");
    assert!(a.pass.instances_culled > 0, "{a:?}");
    assert_eq!(g.gpu_plan.map(|s| s.ranges), Some(16), "{g:?}");
    assert_eq!(g.pass.instances_culled, 0, "{g:?}");
    drop((auto, gpu_planned, scene, writer));
    gpu.assert_no_validation_messages();
}

#[test]
fn the_planners_bound_exceeded_draws_whole_ranges_with_the_same_answers() {
    let gpu = Gpu::new();
    let writer = writer(&gpu);
    let (scene, draws) = draws(&gpu, &writer);
    let (view, proj, viewport) = look(Vec3::new(0.0, 0.0, -2.0), Vec3::new(0.0, 0.0, -9.0), W, H);
    let request = PickRequest::new(viewport, view, proj);
    // Four pairs of one command each: the other pairs stay as the CPU planned them, and a
    // pair with more than one run of survivors falls back to its whole range (a walked pair
    // draws its survivors with its one command).
    let mut bounded = gpu.picker(PickerConfig::default().with_planner(Planner::Gpu).with_gpu_plan_capacity(4, 4));
    let mut unculled = gpu.picker(PickerConfig::default().with_culling(false));
    let mut fallbacks = 0;
    for (f, time) in [0.3f32, 2.2].into_iter().enumerate() {
        // SAFETY: recording outside a render pass; `run` waits.
        gpu.run(|cmd| unsafe { writer.record(cmd, time) });
        let covered = gpu.covered_pixels(&request, &draws, 9 + f as u64);
        // A rectangle first (a tile: a pair per draw), whose tile meets more runs of
        // instances than one command holds, then radius queries (walked).
        let rect = PixelRect::new(UVec2::new(20, 20), UVec2::new(100, 80));
        let mut queries = vec![PickQuery::Rect { rect, mode: RectMode::Visible }];
        queries.extend(covered.iter().take(4).map(|&pixel| PickQuery::Radius { pixel, radius: 8, snap: Snap::Nearest }));
        queries.extend(covered[4..12].iter().map(|&p| PickQuery::Point(p)));
        let want = frame(&gpu, &mut unculled, &writer, &request, &queries, (&draws).into(), time);
        let got = frame(&gpu, &mut bounded, &writer, &request, &queries, (&draws).into(), time);
        assert_eq!(answers(&got), answers(&want), "frame {f}");
        let stats = got.results[1].pick().unwrap().stats.gpu_plan.expect("planned on the GPU");
        assert_eq!(stats.ranges, 4, "at most the configured pairs: {stats:?}");
        assert_eq!(stats.walked, 2, "the discs' pairs that fit are walked: {stats:?}");
        fallbacks += stats.fallbacks;
    }
    assert!(fallbacks > 0, "some pair overflowed its one command");
    drop((bounded, unculled, scene, writer));
    gpu.assert_no_validation_messages();
}

#[test]
fn an_entry_the_bound_cuts_is_drawn_whole_by_runs_not_walked() {
    // The spheres' instances split into three ranges (two ignore rules); two pairs a frame:
    // the first point's spheres take two, their third range stays as the CPU planned it. The
    // draw is recorded with one pipeline, so none of its ranges may be walked: a walked
    // pipeline drawing the third range would find the other pairs' survivors, not its own.
    let gpu = Gpu::new();
    let writer = writer(&gpu);
    let (scene, draws) = draws(&gpu, &writer);
    let (view, proj, viewport) = look(Vec3::new(0.0, 0.0, -2.0), Vec3::new(0.0, 0.0, -9.0), W, H);
    let (sphere, ignore) = split_spheres();
    let request = PickRequest::new(viewport, view, proj).with_ignore(&ignore);
    let mut cut = gpu.picker(PickerConfig::default().with_planner(Planner::Gpu).with_gpu_plan_capacity(2, 64));
    let mut whole = gpu.picker(PickerConfig::default().with_planner(Planner::Gpu).with_gpu_plan_capacity(3, 64));
    let mut unculled = gpu.picker(PickerConfig::default().with_culling(false));
    // SAFETY: recording outside a render pass; `run` waits.
    gpu.run(|cmd| unsafe { writer.record(cmd, 0.0) });
    let covered = gpu.covered_pixels(&request, &draws, 3);
    let mut hits = 0;
    for &pixel in covered.iter().take(60) {
        let queries = [PickQuery::Point(pixel)];
        let want = frame(&gpu, &mut unculled, &writer, &request, &queries, (&draws).into(), 0.0);
        // Points on the spheres' instances (most lie in the third range).
        if want.results[0].pick().unwrap().hit.as_ref().is_none_or(|h| h.id != sphere) || hits == 6 {
            continue;
        }
        hits += 1;
        for (name, picker, walked) in [("cut", &mut cut, 0), ("whole", &mut whole, 3)] {
            let got = frame(&gpu, picker, &writer, &request, &queries, (&draws).into(), 0.0);
            assert_eq!(answers(&got), answers(&want), "{name} at {pixel}");
            let stats = got.results[0].pick().unwrap().stats.gpu_plan.expect("planned on the GPU");
            assert_eq!(stats.walked, walked, "{name}: {stats:?}");
        }
    }
    assert_eq!(hits, 6, "points on the spheres");
    drop((cut, whole, unculled, scene, writer));
    gpu.assert_no_validation_messages();
}

/// Records the writer's pass for time 0 and reads back the transforms it wrote.
fn written_transforms(gpu: &Gpu, writer: &InstanceMotion) -> Vec<Mat4> {
    // SAFETY: recording outside a render pass; `run` waits.
    gpu.run(|cmd| unsafe { writer.record(cmd, 0.0) });
    // SAFETY: the writer's pass completed.
    let bytes = unsafe { writer.transforms.read_bytes() }.unwrap();
    bytes.chunks_exact(64).map(|m| Mat4::from_cols_slice(&m.chunks_exact(4).map(|w| f32::from_ne_bytes(w.try_into().unwrap())).collect::<Vec<_>>())).collect()
}

/// What the GPU planner's answers are checked against.
#[derive(Clone, Copy, PartialEq)]
enum Reference {
    /// No culling: every instance drawn.
    Unculled,
    /// The CPU planner, given a CPU copy of the transforms: far cheaper on lavapipe where
    /// ranges are long (their equality with no culling is shown by the tests above).
    CpuKnown,
}

/// Picks the standard set over [`draws`] on the unmoved `transforms` with the GPU planner
/// (`rect_entries` table entries, `instances` tested at most) and with `reference`, and
/// asserts the answers agree; returns the GPU-planned frame.
fn gpu_planned_as(gpu: &Gpu, reference: Reference, transforms: &[Mat4], rect_entries: u32, instances: u32, seeds: (u64, u64)) -> FrameResults {
    let writer = InstanceMotion::new(&gpu.ctx, transforms, 0.0).expect("instance motion");
    let (scene, draws) = draws(gpu, &writer);
    let (view, proj, viewport) = look(Vec3::new(0.0, 0.0, -2.0), Vec3::new(0.0, 0.0, -9.0), W, H);
    let request = PickRequest::new(viewport, view, proj);
    let config = PickerConfig::default().with_max_queries(17).with_rect_tile(40, 32).with_rect_entries(rect_entries);
    let mut gpu_planned = gpu.picker(config.with_planner(Planner::Gpu).with_gpu_plan_capacity(128, 1 << 17).with_gpu_plan_instances(instances));
    let (mut reference_picker, reference_draws) = match reference {
        Reference::Unculled => (gpu.picker(config.with_culling(false)), draws.clone()),
        Reference::CpuKnown => {
            let written = written_transforms(gpu, &writer);
            let known = draws
                .iter()
                .map(|d| match d.instances {
                    Some(i) => d.clone().with_instance_transforms(written[i.first as usize..][..i.count as usize].into()),
                    None => d.clone(),
                })
                .collect();
            (gpu.picker(config.with_planner(Planner::Cpu)), known)
        }
    };
    // SAFETY: recording outside a render pass; `run` waits.
    gpu.run(|cmd| unsafe { writer.record(cmd, 0.0) });
    let covered = gpu.covered_pixels(&request, &draws, seeds.0);
    let queries = queries(&covered, seeds.1);
    let want = frame(gpu, &mut reference_picker, &writer, &request, &queries, (&reference_draws).into(), 0.0);
    let got = frame(gpu, &mut gpu_planned, &writer, &request, &queries, (&draws).into(), 0.0);
    assert_eq!(answers(&got), answers(&want));
    if reference == Reference::CpuKnown {
        let culled = want.results.iter().filter_map(|r| r.pick()).map(|p| p.stats.pass.instances_culled).sum::<u64>();
        assert!(culled > 0, "the reference culled on the CPU");
    }
    drop((gpu_planned, reference_picker, scene, writer));
    got
}

#[test]
fn instances_at_the_same_place_answer_as_drawn_in_order() {
    // Instances 5k to 5k + 4 stand at exactly the same place (the pass writes them unmoved):
    // every covered pixel is a depth tie between five instances, which only the order of
    // drawing decides (the first drawn wins a LESS test). The GPU plan draws its survivors in
    // instance order, as the host's draw and the unculled pass do: the points' and discs'
    // pairs by the walk, the tiles' by runs. The ranges (6,000 and 2,400 instances) span
    // several summary words (and the walk's counts), and runs of survivors cross from one
    // cull workgroup's bits to the next.
    let gpu = Gpu::new();
    let got = gpu_planned_as(&gpu, Reference::Unculled, &grid(6000, |i| i / 5), 1 << 15, 1 << 20, (5, 77));
    let stats = got.stats.gpu_plan.expect("planned on the GPU");
    assert_eq!(stats.ranges, (15 + 4 + 1) * 2, "every pair is planned: {stats:?}");
    assert_eq!(stats.walked, 15 * 2, "the points' and discs' pairs are walked: {stats:?}");
    assert!(stats.survivors > 0 && stats.fallbacks == 0, "{stats:?}");
    assert!(stats.commands * 4 < stats.survivors, "tied instances are drawn in runs: {stats:?}");
    // The first of each five wins (both instanced draws start at a multiple of five).
    let hits: Vec<u32> = hit_instances(&got).into_iter().filter_map(|(_, i)| i).collect();
    assert!(hits.len() >= 4 && hits.iter().all(|i| i % 5 == 0), "{hits:?}");
    gpu.assert_no_validation_messages();
}

/// Five parts of the writer's instances, each drawn its own way: spheres whose hook
/// discards every third instance and stripes of the world, boxes whose hook pulls their
/// vertices a quarter towards the instance's origin (inside the box, as the draw declares),
/// the spheres' edges as 3-pixel lines, their vertices as 5-pixel points, and boxes read as
/// vertex attributes.
fn kinds(gpu: &Gpu, writer: &InstanceMotion) -> (picking_vk_tests::scene::GpuScene, Vec<PickDraw>) {
    let mut scene = Scene::default();
    scene.meshes.push(Mesh::sphere(6, 10));
    scene.meshes.push(Mesh::cuboid(Vec3::new(0.8, 0.5, 0.6)));
    scene.objects.push(Object::new(5, 0, Mat4::IDENTITY));
    scene.objects.push(Object::new(6, 1, Mat4::IDENTITY));
    let uploaded = scene.upload(&gpu.ctx);
    let range = BufferRange { buffer: writer.transforms.buffer, offset: 0, size: writer.transforms.size };
    // Three rows of the grid each, around the middle of the view.
    let storage = |draw: &PickDraw, k: u32| {
        let mut d = draw.clone().with_instance_binding(InstanceBinding::StorageBuffer).with_instances(Instances {
            range,
            stride: 64,
            first: 700 + k * 150,
            count: 150,
        });
        d.instance_transforms = None;
        d
    };
    let discard = HookProgram::new(HookSource {
        name: "stripes".into(),
        discard: Some("bool pick_discard(PickFragment f) {\n    return f.instance % 3u == 1u || fract(f.world.x * 5.0) < 0.4;\n}\n".into()),
        ..Default::default()
    });
    let shrink = HookProgram::new(HookSource {
        name: "shrink".into(),
        world: Some("vec3 pick_world(PickVertex v) {\n    return v.world - 0.25 * (v.basis * v.local);\n}\n".into()),
        ..Default::default()
    });
    let mut adjusted = DrawHooks::new(shrink);
    adjusted.bounds_cover_adjustment = true;
    let outline = |topology, width: f32| {
        let mut d = storage(&uploaded.draws[0], if topology == Topology::LineList { 2 } else { 3 })
            .with_raster(RasterState::default().with_topology(topology, false).with_thickness(width, width));
        d.id = ObjectId::new(if topology == Topology::LineList { 7 } else { 8 }).unwrap();
        d.geometry = None;
        if let Triangles::Indexed { index_count, .. } = &mut d.triangles {
            // Whole segments: the triangles' indices taken two by two.
            *index_count -= *index_count % 2;
        }
        d
    };
    // Boxes whose transforms the pick reads as vertex attributes, from a buffer the host
    // says the planner may read as storage.
    let mut attributes = storage(&uploaded.draws[1], 4).with_instance_binding(InstanceBinding::VertexAndStorageBuffer);
    attributes.id = ObjectId::new(9).unwrap();
    let draws = vec![
        storage(&uploaded.draws[0], 0).with_hooks(DrawHooks::new(discard)),
        storage(&uploaded.draws[1], 1).with_hooks(adjusted),
        outline(Topology::LineList, 3.0),
        outline(Topology::PointList, 5.0),
        attributes,
    ];
    (uploaded, draws)
}

#[test]
fn hooked_line_point_and_vertex_attribute_instances_pick_as_cpu_planned_and_unculled() {
    let gpu = Gpu::new();
    let writer = writer(&gpu);
    let (scene, draws) = kinds(&gpu, &writer);
    let (view, proj, viewport) = look(Vec3::new(0.0, 0.0, -2.0), Vec3::new(0.0, 0.0, -9.0), W, H);
    let request = PickRequest::new(viewport, view, proj);
    let config = query_set_config().with_gpu_plan_capacity(128, 16_384);
    let mut gpu_planned = gpu.picker(config.with_planner(Planner::Gpu));
    let mut cpu_planned = gpu.picker(config.with_planner(Planner::Cpu));
    let mut unculled = gpu.picker(config.with_culling(false));
    let mut hit_ids = BTreeSet::new();
    for (f, time) in [0.4f32, 2.5].into_iter().enumerate() {
        // SAFETY: recording outside a render pass; `run` waits.
        gpu.run(|cmd| unsafe { writer.record(cmd, time) });
        // A pixel each draw covers alone (each kind is asked), then one of the whole scene.
        let mut covered: Vec<UVec2> = (0..draws.len()).filter_map(|k| gpu.covered_pixels(&request, &draws[k..k + 1], f as u64).first().copied()).collect();
        assert_eq!(covered.len(), draws.len(), "frame {f}: every draw is in view");
        covered.extend(gpu.covered_pixels(&request, &draws, 60 + f as u64).into_iter().take(1));
        let queries = queries(&covered, 90 + f as u64);
        let want = frame(&gpu, &mut unculled, &writer, &request, &queries, (&draws).into(), time);
        for (name, picker) in [("GPU", &mut gpu_planned), ("CPU", &mut cpu_planned)] {
            let got = frame(&gpu, picker, &writer, &request, &queries, (&draws).into(), time);
            assert_eq!(answers(&got), answers(&want), "frame {f}: {name}-planned against unculled");
            if name == "GPU" {
                let stats = got.results[0].pick().unwrap().stats.gpu_plan.expect("every kind is planned on the GPU");
                // A pair per point and radius query and per rectangle tile, for each of the five draws.
                assert_eq!(stats.ranges, (15 + 4 + 1) * 5, "frame {f}: {stats:?}");
                assert!(stats.survivors > 0 && stats.survivors * 10 < stats.instances_tested, "frame {f}: {stats:?}");
            }
        }
        let hits = hit_instances(&want);
        assert!(hits.iter().all(|(id, i)| !(id.get() == 5 && i.is_some_and(|i| i % 3 == 1))), "the discard hook drops every third sphere: {hits:?}");
        hit_ids.extend(hits.into_iter().map(|(id, _)| id.get()));
    }
    assert_eq!(hit_ids, BTreeSet::from([5, 6, 7, 8, 9]), "every kind is hit");
    drop((gpu_planned, cpu_planned, unculled, scene, writer));
    gpu.assert_no_validation_messages();
}

/// Random instanced objects (the random scene's meshes, 8 to 160 instances each: rotated,
/// scaled unevenly, some mirrored, some flattened to nothing, some behind the camera), bound
/// in turn as storage without and with CPU transforms, as vertex attributes the planner may
/// read as storage without and with them, and as plain vertex attributes.
fn random_instanced(seed: u64) -> Scene {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut scene = Scene::random(seed);
    scene.objects.clear();
    for k in 0..10 {
        let model = Mat4::from_translation(Vec3::new(rng.f32() * 4.0 - 2.0, rng.f32() * 3.0 - 1.5, -5.0 - rng.f32() * 4.0));
        let mut object = Object::new(1 + k, k as usize % scene.meshes.len(), model);
        let instances = (0..rng.u32(8..160))
            .map(|_| {
                let axis = Vec3::new(rng.f32() - 0.5, rng.f32() - 0.5, rng.f32() - 0.5).normalize_or(Vec3::Y);
                let mut scale = Vec3::new(0.1 + rng.f32() * 0.4, 0.1 + rng.f32() * 0.4, 0.1 + rng.f32() * 0.4);
                match rng.u8(0..20) {
                    0 => scale.x = -scale.x,
                    1 => scale = Vec3::ZERO,
                    _ => {}
                }
                let place = Vec3::new(rng.f32() * 5.0 - 2.5, rng.f32() * 4.0 - 2.0, rng.f32() * 6.0 - 3.0);
                // Now and then far behind the eye, or beside the view.
                let place = match rng.u8(0..25) {
                    0 => place + Vec3::new(0.0, 0.0, 12.0),
                    1 => place + Vec3::new(9.0, 0.0, 0.0),
                    _ => place,
                };
                Mat4::from_scale_rotation_translation(scale, glam::Quat::from_axis_angle(axis, rng.f32() * 6.0), place)
            })
            .collect();
        object.instances = Some(instances);
        scene.objects.push(object);
    }
    scene
}

#[test]
fn random_instanced_scenes_pick_alike_with_every_planner() {
    let gpu = Gpu::new();
    let config = query_set_config().with_gpu_plan_capacity(128, 16_384);
    let mut gpu_planned = gpu.picker(config.with_planner(Planner::Gpu));
    let mut auto = gpu.picker(config);
    let mut cpu_planned = gpu.picker(config.with_planner(Planner::Cpu));
    let mut unculled = gpu.picker(config.with_culling(false));
    let mut planned = [0u64; 2];
    for seed in picking_vk_tests::harness::seeds(0..6) {
        let scene = random_instanced(seed);
        let mut uploaded = scene.upload(&gpu.ctx);
        for (k, draw) in uploaded.draws.iter_mut().enumerate() {
            let (binding, cpu_copy) = match k % 5 {
                0 => (InstanceBinding::StorageBuffer, false),
                1 => (InstanceBinding::StorageBuffer, true),
                2 => (InstanceBinding::VertexAndStorageBuffer, false),
                3 => (InstanceBinding::VertexAndStorageBuffer, true),
                _ => (InstanceBinding::VertexBuffer, true),
            };
            *draw = draw.clone().with_instance_binding(binding);
            if !cpu_copy {
                draw.instance_transforms = None;
            }
        }
        let draws = &uploaded.draws;
        let depth = if seed % 2 == 0 { picking_vk::DepthConvention::Standard } else { picking_vk::DepthConvention::Reverse };
        let (view, proj) = picking_vk_tests::harness::random_scene_camera(depth, W, H);
        let request = PickRequest::new(picking_vk::Viewport::full(W, H), view, proj);
        let covered = gpu.covered_pixels(&request, draws, seed);
        if !picking_vk_tests::harness::assume(covered.len() > 500, format_args!("seed {seed}: the instances cover the view: {}", covered.len())) {
            continue;
        }
        let queries = queries(&covered, 300 + seed);
        let pick = |picker: &mut Picker| {
            // SAFETY: recording outside a render pass; the scene outlives the wait.
            gpu.run(|cmd| unsafe { picker.record(cmd, 0, &request, &queries, draws) }.map(|_| ()).expect("record"));
            // SAFETY: `run` waited.
            unsafe { picker.take_results(0) }.expect("resolve").expect("pending")
        };
        let want = pick(&mut unculled);
        if !picking_vk_tests::harness::assume(hit_instances(&want).len() >= 4, format_args!("seed {seed}: instances are hit")) {
            continue;
        }
        for (name, picker) in [("GPU", &mut gpu_planned), ("Auto", &mut auto), ("CPU", &mut cpu_planned)] {
            let got = pick(picker);
            assert_eq!(answers(&got), answers(&want), "seed {seed}: {name}-planned against unculled");
            let ranges = got.stats.gpu_plan.map_or(0, |s| s.ranges);
            match name {
                "GPU" => planned[0] += ranges,
                "Auto" => planned[1] += ranges,
                _ => assert_eq!(ranges, 0),
            }
        }
    }
    // Gpu takes four of every five draws, Auto the two without a CPU copy.
    assert!(planned[0] > planned[1] && planned[1] > 0, "pairs planned on the GPU (Gpu, Auto): {planned:?}");
    drop((gpu_planned, auto, cpu_planned, unculled));
    gpu.assert_no_validation_messages();
}

#[test]
fn a_range_longer_than_the_finishing_pass_takes_at_once_picks_alike() {
    // 530,000 instances, most far beside the view. 2,400 of them, every other instance with
    // instance 524,288 in their middle, stand small and dense inside the select-through
    // rectangle: a finishing workgroup of 256 threads (lavapipe's and NVIDIA's) takes 256
    // summary words, 524,288 instances, at once, so their runs are counted in two chunks; and
    // each is a run of its own, more runs in the rectangle's pair than the pass passes
    // through shared memory (1,024).
    const BOUNDARY: usize = 256 * 32 * 64;
    const COUNT: usize = 2400;
    let gpu = Gpu::new();
    let first = BOUNDARY - COUNT;
    let mut transforms = vec![Mat4::from_translation(Vec3::new(1000.0, 0.0, -9.0)); 530_000];
    // The grid (50 columns of 0.35, 48 rows, around (0, 0, -9)) shrunk into the rectangle,
    // each instance three times its size there (about a pixel across, overlapping).
    let into_rectangle =
        Mat4::from_translation(Vec3::new(-0.85, 0.56, -9.0)) * Mat4::from_scale(Vec3::splat(0.06)) * Mat4::from_translation(Vec3::new(0.0, 0.0, 9.0));
    for (k, m) in grid(COUNT as u32, |i| i).into_iter().enumerate() {
        transforms[first + 2 * k] = into_rectangle * m * Mat4::from_scale(Vec3::splat(3.0));
    }
    let got = gpu_planned_as(&gpu, Reference::CpuKnown, &transforms, 1 << 21, 1 << 25, (11, 12));
    let stats = got.stats.gpu_plan.expect("planned on the GPU");
    assert!(stats.survivors > 2 * 1024 && stats.commands > 2 * 1024 && stats.fallbacks == 0, "{stats:?}");
    // The select-through rectangle finds instances on both sides of the boundary.
    let QueryResult::Rect(rect) = &got.results[16] else { panic!("the select-through rectangle") };
    let instances: Vec<u32> = rect.objects.iter().filter_map(|o| o.instance).collect();
    assert!(instances.iter().any(|&i| (i as usize) < BOUNDARY) && instances.iter().any(|&i| i as usize >= BOUNDARY), "{instances:?}");
    gpu.assert_no_validation_messages();
}

/// A random scene's plain draws (every mesh kind, packed and interleaved buffers, both index
/// widths) with 600 spheres that share one mesh's buffers (one table group, drawn in runs;
/// in pairs at one place, the first only half the sphere; two blocks of them hooked, one
/// discarding stripes of the world, one pulling vertices in inside the box: groups of their
/// own),
/// a pair that cannot be picked and an instanced field between them, all moved `offset`
/// away from the origin with the camera (large worlds: the GPU composes each draw's matrix in
/// f64 exactly as the CPU does, so even the depths agree bit for bit).
fn random_shared_list(gpu: &Gpu, seed: u64, offset: Vec3) -> (picking_vk_tests::scene::GpuScene, Arc<[PickDraw]>) {
    let scene = Scene::random(seed);
    let uploaded = scene.upload(&gpu.ctx);
    let mut draws = uploaded.draws.clone();
    let sphere = draws.iter().position(|d| d.instances.is_none() && matches!(d.triangles, Triangles::Indexed { index_count, .. } if index_count > 300));
    let base = draws[sphere.unwrap_or(0)].clone();
    let mut rng = fastrand::Rng::with_seed(seed ^ 0x5eed);
    let mut model = Mat4::IDENTITY;
    for k in 0..600u64 {
        let mut d = base.clone();
        // In pairs at one place: the first draws only half the sphere, the second all of it
        // (a run of survivors ends where what the draws draw changes).
        if k % 2 == 0 {
            let place = Vec3::new(rng.f32() * 6.0 - 3.0, rng.f32() * 4.4 - 2.2, -3.0 - rng.f32() * 8.0);
            // A few large on screen (tens of pixels; in the table: after the unpickable 13th):
            // a cull test too tight by a fraction of their radius then cuts pixels beyond
            // the tests' padding.
            let scale = if (14..26).contains(&k) { 0.5 + rng.f32() * 0.4 } else { 0.05 + rng.f32() * 0.2 };
            model = Mat4::from_scale_rotation_translation(Vec3::splat(scale), glam::Quat::from_rotation_y(rng.f32() * 6.0), place);
            if let Triangles::Indexed { index_count, .. } = &mut d.triangles {
                *index_count = *index_count / 6 * 3;
            }
        }
        d.model = model;
        d.id = ObjectId::new(1_000_000 + k).expect("nonzero");
        // Now and then one the host cannot pick, which breaks the table's group.
        d.pickable = k % 97 != 13;
        if let Some(hooks) = shared_hooks(k) {
            d = d.with_hooks(hooks);
        }
        draws.push(d);
    }
    for d in &mut draws {
        d.model = Mat4::from_translation(offset) * d.model;
    }
    (uploaded, draws.into())
}

/// The hooks of shared sphere `k`: a discard hook over 208..304, a world-adjusting one over
/// 305..401 (each the same program: each block is one of the six groups of 96 that the
/// unpickable spheres bound).
fn shared_hooks(k: u64) -> Option<DrawHooks> {
    static PROGRAMS: std::sync::OnceLock<[Arc<HookProgram>; 2]> = std::sync::OnceLock::new();
    let [stripes, shrink] = PROGRAMS.get_or_init(|| {
        [
            HookProgram::new(HookSource {
                name: "shared stripes".into(),
                discard: Some("bool pick_discard(PickFragment f) {\n    return fract(f.world.y * 7.0) < 0.3;\n}\n".into()),
                ..Default::default()
            }),
            HookProgram::new(HookSource {
                name: "shared shrink".into(),
                world: Some("vec3 pick_world(PickVertex v) {\n    return v.world - 0.3 * (v.basis * v.local);\n}\n".into()),
                ..Default::default()
            }),
        ]
    });
    // Sphere 304 cannot be picked: it ends the first block's group.
    match k {
        k if (208..304).contains(&k) => Some(DrawHooks::new(stripes.clone())),
        k if (305..401).contains(&k) => {
            let mut hooks = DrawHooks::new(shrink.clone());
            hooks.bounds_cover_adjustment = true;
            Some(hooks)
        }
        _ => None,
    }
}

/// Up to 16 pixels on the silhouettes of the draws whose IDs `shared` holds (a pixel of one of
/// them beside a pixel of something else): where a cull test that is too tight shows first.
fn silhouette_pixels(gpu: &Gpu, request: &PickRequest<'_>, draws: &[PickDraw], shared: std::ops::Range<u64>) -> Vec<UVec2> {
    // SAFETY: the context's handles outlive the image.
    let mut image = unsafe { picking_vk::debug::IdImage::new(gpu.ctx.host_device(), W, H) }.expect("id image");
    // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
    gpu.run(|cmd| unsafe { image.record(cmd, request, draws, None, picking_vk::debug::IdCopy::Whole) }.map(|_| ()).expect("record"));
    // SAFETY: `run` waited.
    let texels = unsafe { image.read() }.expect("read");
    let id = |x: u32, y: u32| u64::from(texels[(y * W + x) as usize].id[0]) | u64::from(texels[(y * W + x) as usize].id[1]) << 32;
    let edge = |x: u32, y: u32| {
        let own = id(x, y);
        shared.contains(&own) && [(x + 1, y), (x, y + 1)].iter().any(|&(u, v)| u < W && v < H && id(u, v) != own)
    };
    (0..W * H).map(|i| (i % W, i / W)).filter(|&(x, y)| edge(x, y)).step_by(3).take(16).map(|(x, y)| UVec2::new(x, y)).collect()
}

#[test]
fn a_shared_lists_plain_draws_pick_alike_gpu_planned_cpu_planned_and_unculled() {
    let gpu = Gpu::new();
    assert!(gpu.ctx.picking_features.contains(picking_vk::PickFeatures::GPU_DRAW_PLANNING), "lavapipe offers shaderFloat64");
    let config = query_set_config();
    let mut gpu_planned = gpu.picker(config.with_planner(Planner::Gpu));
    let mut cpu_planned = gpu.picker(config.with_planner(Planner::Cpu));
    let mut unculled = gpu.picker(config.with_culling(false));
    // A table bound below the lists' plain draws: no table, the CPU plans them.
    let mut bounded = gpu.picker(config.with_planner(Planner::Gpu).with_gpu_plan_draws(100));
    let bounded_memory = bounded.memory().planner;
    // No rows for a frame (`gpu_plan_rows` 0): no tables at all, and no rows or ignored-row
    // bits held.
    let mut no_rows = gpu.picker(config.with_planner(Planner::Gpu).with_gpu_plan_rows(0));
    let no_rows_memory = no_rows.memory().planner;
    // Per slot: the rows, a near key a row, a span row a command (4,096), a compacted row a
    // row, the ignored-row bits.
    assert_eq!(gpu_planned.memory().planner - no_rows_memory, 2 * (16_384 * 164 + 4_096 * 80 + (1 << 17) / 8), "no rows, no ignored-row bits");
    // Rows for the frame's groups: the table holds 576 rows (six groups of 96), and every
    // query's ray meets every group's world box (the spheres are strewn over the view). With
    // room for 575 each query is planned on the CPU; with 576 on the GPU.
    let mut rows_short = gpu.picker(config.with_planner(Planner::Gpu).with_gpu_plan_rows(575));
    let mut rows_exact = gpu.picker(config.with_planner(Planner::Gpu).with_gpu_plan_rows(576));
    // Rows of 80 bytes, as many compacted rows, and keys of 4, the keys in whole 16 bytes (575
    // rows: 576 keys).
    let rows_bytes = |rows: u64| 2 * rows * 80 + rows.next_multiple_of(4) * 4;
    assert_eq!(
        gpu_planned.memory().planner - rows_short.memory().planner,
        2 * (rows_bytes(16_384) - rows_bytes(575)),
        "the rows are sized by the configuration"
    );
    let mut rows_exact_pairs = 0;
    // Pairs enough for every point of the silhouettes below with every group.
    let mut roomy = gpu.picker(config.with_planner(Planner::Gpu).with_gpu_plan_capacity(2048, 16_384).with_timestamps(true));
    let (mut tested, mut survivors, mut commands, mut fallbacks, mut occluded, mut short_of_bound) = (0, 0, 0, 0, 0, 0);
    let base_memory = gpu_planned.memory().planner;
    let (mut sphere_hits, mut ignore_changed) = (0, 0);
    for seed in picking_vk_tests::harness::seeds(0..6) {
        let offset = if seed % 6 >= 4 { Vec3::new(3.0e5, -2.0e5, 1.0e5) * (seed % 6) as f32 } else { Vec3::ZERO };
        let (scene, draws) = random_shared_list(&gpu, seed, offset);
        let depth = if seed % 2 == 0 { picking_vk::DepthConvention::Standard } else { picking_vk::DepthConvention::Reverse };
        let (view, proj) = picking_vk_tests::harness::random_scene_camera(depth, W, H);
        let request = PickRequest::new(picking_vk::Viewport::full(W, H), view * Mat4::from_translation(-offset), proj);
        let covered = gpu.covered_pixels(&request, &draws, seed);
        if !picking_vk_tests::harness::assume(covered.len() > 500, format_args!("seed {seed}: the draws cover the view: {}", covered.len())) {
            continue;
        }
        let queries = queries(&covered, 700 + seed);
        // The shared list (`&Arc`): the table plans with it.
        let pick_set = |picker: &mut Picker, queries: &[PickQuery]| gpu.run_queries(picker, &request, queries, &draws);
        let pick = |picker: &mut Picker| pick_set(picker, &queries);
        // The large shared spheres' silhouettes: a row's sphere test (or occlusion) that cuts
        // a covered pixel shows there.
        let edges: Vec<PickQuery> = silhouette_pixels(&gpu, &request, &draws, 1_000_014..1_000_026).into_iter().map(PickQuery::Point).collect();
        if !picking_vk_tests::harness::assume(edges.len() >= 8, format_args!("seed {seed}: silhouette pixels of the shared spheres: {}", edges.len())) {
            continue;
        }
        let (want_edges, got_edges) = (pick_set(&mut unculled, &edges), pick_set(&mut roomy, &edges));
        assert_eq!(answers(&got_edges), answers(&want_edges), "seed {seed}: silhouettes, GPU-planned against unculled");
        let pairs = got_edges.stats.gpu_plan.map_or(0, |s| s.ranges);
        assert!(pairs >= edges.len() as u64, "seed {seed}: every silhouette point culled on the GPU ({pairs} pairs)");
        // The planner's share of the frame's GPU time.
        let (plan_ns, frame_ns) = (got_edges.stats.gpu_plan_time_ns.expect("planned, timed"), got_edges.stats.gpu_time_ns.expect("timed"));
        assert!(plan_ns > 0.0 && plan_ns < frame_ns, "seed {seed}: planner {plan_ns} ns of {frame_ns} ns");
        let want = pick(&mut unculled);
        sphere_hits += hit_instances(&want).iter().filter(|(id, _)| (1_000_000..1_000_600).contains(&id.get())).count();
        if seed == 0 {
            // The table, built on the first frame: per plain draw in a group of 16 or more
            // that share their bindings (the shared spheres between unpickable ones; the
            // scene's own objects each have their buffers) a 60-byte row and a run-start bit;
            // here also a 52-byte run each (half and whole spheres alternate, so no two
            // neighbours draw the same); and the occluder meshes (the half and the whole
            // sphere, 36 bytes a triangle). Nothing per slot: the slots' rows are sized by
            // the configuration.
            let _ = pick(&mut gpu_planned);
            // Groups end at unpickable spheres and where the hooks change.
            let kind = |d: &PickDraw| {
                (d.pickable && (1_000_000..1_000_600).contains(&d.id.get()))
                    .then(|| shared_hooks(d.id.get() - 1_000_000).map(|h| h.program.source().name.clone()))
            };
            let runs = draws.chunk_by(|a, b| kind(a).is_some() && kind(a) == kind(b)).filter(|run| kind(&run[0]).is_some());
            let rows = runs.map(|run| run.len() as u64).filter(|&n| n >= 16).sum::<u64>();
            let grown = gpu_planned.memory().planner - base_memory;
            assert!((rows * (60 + 52)..rows * (60 + 52) + (64 << 10)).contains(&grown), "{rows} rows, {grown} bytes");
        }
        let pickers = [
            ("GPU", &mut gpu_planned),
            ("CPU", &mut cpu_planned),
            ("GPU, bounded", &mut bounded),
            ("GPU, no rows", &mut no_rows),
            ("GPU, 575 rows", &mut rows_short),
            ("GPU, 576 rows", &mut rows_exact),
        ];
        for (name, picker) in pickers {
            // Twice: the table is built on the first frame, and reused.
            for frame in 0..2 {
                let got = pick(picker);
                gpu.assert_no_validation_messages();
                let (a, b) = (answers(&got), answers(&want));
                let differ: Vec<_> =
                    a.iter().zip(&b).enumerate().filter(|(_, (x, y))| x != y).map(|(i, (x, y))| format!("{i}: {:.300} / {:.300}", x, y)).take(3).collect();
                assert!(differ.is_empty(), "seed {seed} frame {frame}: {name}-planned against unculled ({:?}): {differ:?}", got.stats.gpu_plan);
                if let (Some(stats), "GPU") = (got.stats.gpu_plan, name) {
                    (tested, survivors, commands, fallbacks) =
                        (tested + stats.instances_tested, survivors + stats.survivors, commands + stats.commands, fallbacks + stats.fallbacks);
                    occluded += stats.occluded;
                    // More queries by groups than the 64 pairs hold: the queries past them are
                    // planned on the CPU, so the pairs taken stop short of the bound.
                    assert!(stats.ranges <= 64, "seed {seed}: {} pairs", stats.ranges);
                    short_of_bound += u32::from(stats.ranges > 0 && stats.ranges < 64);
                }
                rows_exact_pairs += if name == "GPU, 576 rows" { got.stats.gpu_plan.map_or(0, |s| s.ranges) } else { 0 };
                if ["GPU, bounded", "GPU, no rows", "GPU, 575 rows"].contains(&name) {
                    // The random scene's instanced field is drawn as the CPU planned it under Gpu.
                    assert_eq!(got.stats.gpu_plan.map_or(0, |s| s.ranges), 0, "seed {seed}: {name}: nothing planned on the GPU");
                }
                if name == "GPU, bounded" || name == "GPU, no rows" {
                    let before = if name == "GPU, bounded" { bounded_memory } else { no_rows_memory };
                    assert_eq!(picker.memory().planner, before, "seed {seed}: {name}: no table held");
                }
            }
        }
        // Ignore rules over the table's rows: the large spheres by ID but the last. Their rows
        // are drawn nowhere: at their silhouettes the surfaces behind answer, as in the
        // unculled pass under the same rules. An instance rule naming the last one's instance 0
        // leaves it in: a draw without instances is left out by its ID only, on every path
        // (seed 7 found the table leaving it out).
        let sphere = |k: u64| ObjectId::new(1_000_000 + k).expect("nonzero");
        let ignore: Vec<Ignore> = (14..25).map(|k| Ignore::Object(sphere(k))).chain([Ignore::instance(sphere(25), 0)]).collect();
        let ignoring = PickRequest::new(picking_vk::Viewport::full(W, H), view * Mat4::from_translation(-offset), proj).with_ignore(&ignore);
        let pick_ignoring = |picker: &mut Picker| gpu.run_queries(picker, &ignoring, &edges, &draws);
        let (want, got) = (pick_ignoring(&mut unculled), pick_ignoring(&mut roomy));
        gpu.assert_no_validation_messages();
        assert_eq!(answers(&got), answers(&want), "seed {seed}: ignore rules, GPU-planned against unculled");
        assert!(got.stats.gpu_plan.is_some_and(|s| s.ranges >= edges.len() as u64), "seed {seed}: the table planned under ignore rules");
        assert!(hit_instances(&got).iter().all(|(id, _)| !(1_000_014..1_000_025).contains(&id.get())), "seed {seed}: an ignored sphere hit");
        ignore_changed += answers(&got).iter().zip(&answers(&got_edges)).filter(|(a, b)| a != b).count();
        // A filter refusing the same spheres: its rows too are drawn nowhere (the filter is
        // asked per ID of the table), with the unculled pass's answers under it.
        let refuse = |id: ObjectId| !(1_000_014..1_000_025).contains(&id.get());
        let filtered = PickRequest::new(picking_vk::Viewport::full(W, H), view * Mat4::from_translation(-offset), proj).with_filter(&refuse);
        let pick_filtered = |picker: &mut Picker| gpu.run_queries(picker, &filtered, &edges, &draws);
        let (want_filtered, got_filtered) = (pick_filtered(&mut unculled), pick_filtered(&mut roomy));
        gpu.assert_no_validation_messages();
        assert_eq!(answers(&got_filtered), answers(&want_filtered), "seed {seed}: a filter, GPU-planned against unculled");
        assert_eq!(answers(&got_filtered), answers(&want), "seed {seed}: the filter leaves out what the ignore rules do");
        assert!(got_filtered.stats.gpu_plan.is_some_and(|s| s.ranges >= edges.len() as u64), "seed {seed}: the table planned under a filter");
        drop(scene);
    }
    assert!(ignore_changed > 0, "the ignore rules changed answers at the spheres' silhouettes");
    // The points and radius queries' pairs over the table's groups: far fewer survivors than
    // rows tested, drawn in runs; 15 queries by the groups their rays meet would pass the 64
    // pairs' bound: the queries past it are planned on the CPU (the same results).
    assert!(sphere_hits >= 6, "the shared spheres are hit: {sphere_hits}");
    assert!(rows_exact_pairs > 0, "the table planned on the GPU within the frame's 576 rows");
    assert!(short_of_bound > 0, "frames whose later queries were planned on the CPU: {short_of_bound}");
    assert!(tested > 0 && survivors > 0 && survivors * 4 < tested, "rows tested {tested}, survivors {survivors}");
    assert!(commands > 0 && commands <= survivors && fallbacks == 0, "commands {commands}, survivors {survivors}, fallbacks {fallbacks}");
    // Points' pairs drop rows behind a sure hit of another (their occluder meshes).
    assert!(occluded > 0, "rows dropped behind sure hits: {occluded} (survivors {survivors})");
    drop((gpu_planned, cpu_planned, unculled, roomy, rows_short, rows_exact, no_rows));
    gpu.assert_no_validation_messages();
}

/// A sphere of `rings` and `segments` uploaded alone: the scene (kept alive while its draw is
/// used) and its draw.
fn sphere(gpu: &Gpu, rings: u32, segments: u32) -> (picking_vk_tests::scene::GpuScene, PickDraw) {
    let mut scene = Scene::default();
    scene.meshes.push(Mesh::sphere(rings, segments));
    scene.objects.push(Object::new(1, 0, Mat4::IDENTITY));
    let uploaded = scene.upload(&gpu.ctx);
    let draw = uploaded.draws[0].clone();
    (uploaded, draw)
}

/// 24 copies of `sphere` scaled by `scale`, one behind another on the view's axis from
/// `near` ahead of the eye, 1.5 apart, with IDs from `first_id`: one table group.
fn column(sphere: &PickDraw, first_id: u64, near: f32, scale: f32) -> Arc<[PickDraw]> {
    (0..24u64)
        .map(|k| {
            let mut d = sphere.clone();
            d.id = ObjectId::new(first_id + k).expect("nonzero");
            d.model = Mat4::from_translation(Vec3::new(0.0, 0.0, -near - 1.5 * k as f32)) * Mat4::from_scale(Vec3::splat(scale));
            d
        })
        .collect()
}

/// A column of 24 spheres, one behind another on the view's axis, in one table group: a point
/// at the column's centre keeps the nearest row and drops the 23 behind its sure hit, which
/// are then not drawn (the pair's survivors are counted after the drop), with the unculled
/// pass's answer; under ignore rules, the nearest row they leave in answers.
#[test]
fn rows_behind_a_sure_hit_are_not_drawn() {
    let gpu = Gpu::new();
    let (view, proj, viewport) = look(Vec3::ZERO, Vec3::new(0.0, 0.0, -1.0), W, H);
    let request = PickRequest::new(viewport, view, proj);
    let queries = [PickQuery::Point(UVec2::new(W / 2, H / 2))];
    let config = PickerConfig::default();
    let mut unculled = gpu.picker(config.with_culling(false));
    let mut gpu_planned = gpu.picker(config.with_planner(Planner::Gpu));
    // Spheres of 192 triangles (tried whole), then of 5,120 (past the 4,096 tried whole:
    // tried by the chunks near the pixel).
    for (rings, segments) in [(8, 12), (64, 40)] {
        let (uploaded, sphere) = sphere(&gpu, rings, segments);
        let column = column(&sphere, 100, 5.0, 1.0);
        let want = gpu.run_queries(&mut unculled, &request, &queries, &column);
        let (primitives, got) = gpu.run_queries_counted(&mut gpu_planned, &request, &queries, &column);
        assert_eq!(answers(&got), answers(&want));
        assert!(hit_instances(&want).contains(&(ObjectId::new(100).expect("nonzero"), None)), "the nearest sphere is hit: {:?}", answers(&want));
        let stats = got.stats.gpu_plan.expect("planned on the GPU");
        assert_eq!((stats.ranges, stats.instances_tested), (1, 24), "{stats:?}");
        assert_eq!((stats.survivors, stats.occluded), (1, 23), "{rings} x {segments}: only the nearest row is drawn: {stats:?}");
        // The nearest sphere's chunks at the pixel, its far side dropped behind its own hit.
        assert!(primitives <= 8 * 64 || rings == 8, "{rings} x {segments}: {primitives} primitives");
        // Ignore rules over the column: the nearest by its ID leaves the second to answer; a
        // rule naming instance 0 of a draw without instances leaves that draw in, on the
        // table as on every other path.
        let id = |k: u64| ObjectId::new(k).expect("nonzero");
        for (rules, hit) in [
            (vec![Ignore::Object(id(100))], 101),
            (vec![Ignore::instance(id(100), 0)], 100),
            (vec![Ignore::instance(id(101), 0), Ignore::Object(id(100))], 101),
        ] {
            let ignoring = PickRequest::new(viewport, view, proj).with_ignore(&rules);
            let (want, got) = (gpu.run_queries(&mut unculled, &ignoring, &queries, &column), gpu.run_queries(&mut gpu_planned, &ignoring, &queries, &column));
            assert_eq!(answers(&got), answers(&want), "{rules:?}");
            assert!(hit_instances(&got).contains(&(id(hit), None)), "{rules:?}: sphere {hit} answers: {:?}", answers(&got));
            assert!(got.stats.gpu_plan.is_some_and(|s| s.ranges == 1), "{rules:?}: planned on the GPU");
        }
        drop(uploaded);
    }
    drop((unculled, gpu_planned));
    gpu.assert_no_validation_messages();
}

/// Rectangles over a shared list's table, in both modes (the whole view, and one inside it
/// each): each tile culls the table's groups on the GPU (the only pairs: no point or radius
/// query), and every rectangle counts the objects of the unculled pass and of the CPU
/// planner, the table's draws among them.
#[test]
fn rectangles_over_a_shared_lists_table_count_alike() {
    let gpu = Gpu::new();
    let config = PickerConfig::default()
        .with_detail(DetailMode::IfEnabled)
        .with_max_queries(4)
        .with_rect_tile(40, 32)
        .with_rect_entries(8192)
        .with_gpu_plan_capacity(2048, 16_384);
    let mut gpu_planned = gpu.picker(config.with_planner(Planner::Gpu));
    let mut cpu_planned = gpu.picker(config.with_planner(Planner::Cpu));
    let mut unculled = gpu.picker(config.with_culling(false));
    let whole = PixelRect::new(UVec2::ZERO, UVec2::new(W, H));
    let inner = PixelRect::new(UVec2::new(30, 20), UVec2::new(110, 90));
    let queries = [
        PickQuery::Rect { rect: whole, mode: RectMode::Visible },
        PickQuery::Rect { rect: whole, mode: RectMode::All },
        PickQuery::Rect { rect: inner, mode: RectMode::Visible },
        PickQuery::Rect { rect: inner, mode: RectMode::All },
    ];
    // A rectangle table too small for the groups' rows (an entry each) but not for the
    // draws the CPU planner finds in the rectangle: the rectangle is planned on the CPU.
    let small = config.with_rect_entries(300);
    let (mut small_gpu, mut small_cpu) = (gpu.picker(small.with_planner(Planner::Gpu)), gpu.picker(small.with_planner(Planner::Cpu)));
    let (mut table_objects, mut pairs, mut culled, mut small_fits) = (0, 0, 0, 0);
    for seed in picking_vk_tests::harness::seeds(0..3) {
        let (scene, draws) = random_shared_list(&gpu, seed, Vec3::ZERO);
        let depth = if seed % 2 == 0 { picking_vk::DepthConvention::Standard } else { picking_vk::DepthConvention::Reverse };
        let (view, proj) = picking_vk_tests::harness::random_scene_camera(depth, W, H);
        let request = PickRequest::new(picking_vk::Viewport::full(W, H), view, proj);
        let pick = |picker: &mut Picker| gpu.run_queries(picker, &request, &queries, &draws);
        let want = pick(&mut unculled);
        for (name, picker) in [("GPU", &mut gpu_planned), ("CPU", &mut cpu_planned)] {
            // Twice: the table is built on the first frame, and reused.
            for frame in 0..2 {
                let got = pick(picker);
                gpu.assert_no_validation_messages();
                assert_eq!(answers(&got), answers(&want), "seed {seed} frame {frame}: {name}-planned rectangles against unculled");
                if let (Some(stats), "GPU") = (got.stats.gpu_plan, name) {
                    (pairs, culled) = (pairs + stats.ranges, culled + stats.instances_tested - stats.survivors);
                }
            }
        }
        let inner_only = [PickQuery::Rect { rect: PixelRect::new(UVec2::new(72, 52), UVec2::new(88, 68)), mode: RectMode::Visible }];
        let try_pick = |picker: &mut Picker| {
            let mut recorded = Ok(());
            // SAFETY: as above; a refused set records nothing.
            gpu.run(|cmd| recorded = unsafe { picker.record(cmd, 0, &request, &inner_only, &draws) }.map(|_| ()));
            // SAFETY: `run` waited.
            recorded.map(|()| answers(&unsafe { picker.take_results(0) }.expect("resolve").expect("pending")))
        };
        let (got, want_small) = (try_pick(&mut small_gpu), try_pick(&mut small_cpu));
        assert_eq!(got.as_ref().map_err(|e| e.to_string()), want_small.as_ref().map_err(|e| e.to_string()), "seed {seed}: a small rectangle table");
        small_fits += usize::from(want_small.is_ok());
        for result in &want.results {
            let QueryResult::Rect(rect) = result else { panic!("a rectangle's result") };
            table_objects += rect.objects.iter().filter(|o| (1_000_000..1_000_600).contains(&o.id.get())).count();
        }
        drop(scene);
    }
    assert!(table_objects > 0, "the rectangles count the table's draws");
    assert!(small_fits > 0, "the CPU planner's draws fit the small rectangle table");
    assert!(pairs > 0 && culled > 0, "the tiles culled the table's groups on the GPU: {pairs} pairs, {culled} rows culled");
}

/// 4,200 small spheres strewn over the view in one table group of three table runs (whole
/// spheres, then half spheres from row 1,000, then whole ones again from row 4,096: the
/// finishing workgroup's threads take 2,048 rows each, so the middle run crosses a thread's
/// rows and the last starts at one), in pairs at one place (depth ties the order of drawing
/// decides), under two whole-view rectangles (`Visible`, `All`: 16 tiles each) and points.
/// With three commands a pair, each tile's runs of survivors overflow its share, so it draws
/// its survivors from compacted copies of their rows, a command per table run: the
/// triangles of the survivors only (as many as when the runs fit), and the unculled pass's
/// answers. With compacted rows for only as many survivors as the group has rows, the pairs
/// that find too few left fall back to the whole group: the same answers, more triangles.
/// With pairs for one rectangle's tiles, the other is planned on the CPU: no tile draws the
/// group whole.
#[test]
fn pairs_past_their_commands_draw_their_survivors_compacted() {
    let gpu = Gpu::new();
    let (uploaded, base) = sphere(&gpu, 3, 4);
    let mut rng = fastrand::Rng::with_seed(7);
    let mut model = Mat4::IDENTITY;
    let draws: Arc<[PickDraw]> = (0..4200u64)
        .map(|k| {
            let mut d = base.clone();
            d.id = ObjectId::new(2000 + k).expect("nonzero");
            if k % 2 == 0 {
                let place = Vec3::new(rng.f32() * 8.0 - 4.0, rng.f32() * 6.0 - 3.0, -4.0 - rng.f32() * 8.0);
                model = Mat4::from_scale_rotation_translation(Vec3::splat(0.02 + rng.f32() * 0.1), glam::Quat::from_rotation_y(rng.f32() * 6.0), place);
            }
            d.model = model;
            if let (1000..4096, Triangles::Indexed { index_count, .. }) = (k, &mut d.triangles) {
                *index_count = *index_count / 6 * 3;
            }
            d
        })
        .collect();
    let (view, proj, viewport) = look(Vec3::ZERO, Vec3::new(0.0, 0.0, -1.0), W, H);
    let request = PickRequest::new(viewport, view, proj);
    let whole = PixelRect::new(UVec2::ZERO, UVec2::new(W, H));
    let mut queries = vec![PickQuery::Rect { rect: whole, mode: RectMode::Visible }, PickQuery::Rect { rect: whole, mode: RectMode::All }];
    queries.extend(gpu.covered_pixels(&request, &draws, 3).into_iter().take(4).map(PickQuery::Point));
    let config = PickerConfig::default()
        .with_max_queries(8)
        .with_rect_tile(40, 32)
        .with_rect_entries(1 << 14)
        .with_planner(Planner::Gpu)
        .with_detail(DetailMode::IfEnabled);
    let want = gpu.run_queries(&mut gpu.picker(config.with_culling(false)), &request, &queries, &draws);
    let pick = |config: PickerConfig| {
        let (primitives, got) = gpu.run_queries_counted(&mut gpu.picker(config), &request, &queries, &draws);
        gpu.assert_no_validation_messages();
        assert_eq!(answers(&got), answers(&want), "{config:?}");
        (primitives, got.stats.gpu_plan.expect("planned on the GPU"))
    };
    let (roomy_primitives, roomy) = pick(config.with_gpu_plan_capacity(64, 1 << 16));
    assert!(roomy.compacted == 0 && roomy.fallbacks == 0 && roomy.commands > 1000, "runs that fit: {roomy:?}");
    let three_commands = config.with_gpu_plan_capacity(64, 3 * 36);
    let (primitives, stats) = pick(three_commands);
    assert_eq!(stats.ranges, 36, "a pair per tile and point: {stats:?}");
    assert!(stats.compacted >= 32 && stats.fallbacks == 0 && stats.commands <= 3 * 36, "{stats:?}");
    assert_eq!((primitives, stats.survivors), (roomy_primitives, roomy.survivors), "only the survivors' triangles: {stats:?}");
    // The compacted rows hold 4,200 survivors: the whole view's tiles have more.
    let (short_primitives, short) = pick(three_commands.with_gpu_plan_rows(4200));
    assert!(short.compacted > 0 && short.fallbacks > 0 && short.compacted + short.fallbacks <= 36, "{short:?}");
    assert!(short_primitives > primitives + 4000 * 12, "{short_primitives} against {primitives}");
    // Pairs for the first rectangle's tiles and the points only: the second rectangle is
    // planned on the CPU (the points after it keep theirs), and no group is drawn whole.
    let (bounded_primitives, bounded) = pick(config.with_gpu_plan_capacity(20, 1 << 16));
    assert!(bounded.ranges == 20 && bounded.fallbacks == 0, "{bounded:?}");
    assert!(bounded_primitives < 2 * roomy_primitives, "{bounded_primitives} against {roomy_primitives}");
    drop(uploaded);
}

/// Spheres of 768 triangles (12 chunks of 64) strewn over the view in one table group, a
/// third of them drawing only their first 200 triangles (too few chunks to cut: drawn whole),
/// and pairs of them at one place (depth ties the order of drawing decides): a GPU-planned
/// row draws only the chunks its pair's region meets, with the answers of the CPU planner
/// (which cuts the same chunks) and of no culling, for points (silhouettes too), radius
/// queries and rectangles; and with the spans past the pairs' commands (finished by runs).
/// Then columns on the view's axis: a point's pair draws the chunks whose outline meets its
/// pixel, in front of its sure hit.
#[test]
fn gpu_planned_rows_draw_only_the_chunks_their_region_meets() {
    let gpu = Gpu::new();
    let (uploaded, base) = sphere(&gpu, 16, 24);
    let Triangles::Indexed { index_count, .. } = base.triangles else { panic!("an indexed sphere") };
    assert_eq!(index_count, 3 * 768, "12 chunks of 64 triangles");
    // Detail where the device has it (not lavapipe): every hit's face, barycentrics and world
    // point, which a span past a row's first chunk gets from its span row's primitive base.
    let config = PickerConfig::default().with_max_queries(20).with_rect_tile(40, 32).with_rect_entries(8192).with_detail(DetailMode::IfEnabled);
    let mut gpu_planned = gpu.picker(config.with_planner(Planner::Gpu).with_gpu_plan_capacity(128, 1 << 14));
    let mut cpu_planned = gpu.picker(config.with_planner(Planner::Cpu));
    let mut unculled = gpu.picker(config.with_culling(false));
    // Fewer commands than pairs: spans that do not fit a pair's share are finished by runs,
    // or fall back to the group's own commands.
    let mut one_command = gpu.picker(config.with_planner(Planner::Gpu).with_gpu_plan_capacity(128, 16));
    let mut spheres_hit = 0;
    for seed in 0..2u64 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut model = Mat4::IDENTITY;
        let draws: Arc<[PickDraw]> = (0..48u64)
            .map(|k| {
                let mut d = base.clone();
                d.id = ObjectId::new(500 + k).expect("nonzero");
                if k % 4 != 1 {
                    let place = Vec3::new(rng.f32() * 6.0 - 3.0, rng.f32() * 4.4 - 2.2, -3.0 - rng.f32() * 8.0);
                    model = Mat4::from_scale_rotation_translation(Vec3::splat(0.3 + rng.f32() * 0.6), glam::Quat::from_rotation_y(rng.f32() * 6.0), place);
                }
                d.model = model;
                if let (0, Triangles::Indexed { index_count, .. }) = (k % 3, &mut d.triangles) {
                    *index_count = 600;
                }
                // The second half discards stripes: a hooked group, cut by its model and the
                // view-projection.
                d.hooks = if k >= 24 { shared_hooks(208) } else { None };
                d
            })
            .collect();
        let depth = if seed == 0 { picking_vk::DepthConvention::Standard } else { picking_vk::DepthConvention::Reverse };
        let (view, proj) = picking_vk_tests::harness::random_scene_camera(depth, W, H);
        let request = PickRequest::new(picking_vk::Viewport::full(W, H), view, proj);
        let covered = gpu.covered_pixels(&request, &draws, seed);
        let mut queries = queries(&covered, 40 + seed);
        queries.extend(silhouette_pixels(&gpu, &request, &draws, 500..548).into_iter().take(3).map(PickQuery::Point));
        let pick = |picker: &mut Picker| gpu.run_queries(picker, &request, &queries, &draws);
        let want = pick(&mut unculled);
        for (name, picker) in [("GPU", &mut gpu_planned), ("CPU", &mut cpu_planned), ("GPU, one command a pair", &mut one_command)] {
            assert_eq!(answers(&pick(picker)), answers(&want), "seed {seed}: {name} planner against unculled");
        }
        spheres_hit += hit_instances(&want).iter().filter(|(id, _)| (500..548).contains(&id.get())).count();
    }
    assert!(spheres_hit > 10, "{spheres_hit} spheres hit");
    // A column of whole spheres on the view's axis, 12 points on the nearest: each point's
    // pair keeps that sphere (most others lie behind its sure hit) and draws only the chunks
    // its pixel meets, a few of each sphere's 12.
    let (view, proj, viewport) = look(Vec3::ZERO, Vec3::new(0.0, 0.0, -1.0), W, H);
    let request = PickRequest::new(viewport, view, proj);
    let points: Vec<PickQuery> = (0..12u32).map(|k| PickQuery::Point(UVec2::new(W / 2 - 12 + 2 * k, H / 2 - 10 + (k * 7) % 20))).collect();
    let detail = *gpu_planned.detail_status() == DetailStatus::Active;
    // The column's frame, GPU-planned: the primitives it drew, and its results, which must
    // answer as the unculled pass's.
    let mut pick_column = |draws: &Arc<[PickDraw]>, name: &str| {
        let (primitives, got) = gpu.run_queries_counted(&mut gpu_planned, &request, &points, draws);
        assert_eq!(answers(&got), answers(&gpu.run_queries(&mut unculled, &request, &points, draws)), "{name}");
        (primitives, got)
    };
    let (primitives, got) = pick_column(&column(&base, 600, 4.0, 0.8), "column");
    assert_eq!(hit_instances(&got).len(), 1, "the nearest sphere: {:?}", answers(&got));
    if detail {
        let faces: Vec<u32> = got.results.iter().filter_map(|r| r.pick()?.hit.as_ref()?.detail.as_ref().map(|d| d.face)).collect();
        assert!(faces.len() == 12 && faces.iter().any(|&f| f >= 64), "hits past the first chunk, drawn from span rows: faces {faces:?}");
    }
    let stats = got.stats.gpu_plan.expect("planned on the GPU");
    assert!(stats.ranges == 12 && stats.survivors >= 12 && stats.occluded > 0, "{stats:?}");
    // The nearest sphere's far side lies behind the sure hit: its chunks are dropped too,
    // which leaves a chunk or two a row (2,048 triangles without the drop).
    assert!(primitives <= 2 * 64 * stats.survivors, "{primitives} primitives for {} rows of 768 triangles", stats.survivors);
    // The same column hooked: no occlusion (hooked rows keep theirs), so the spheres behind
    // the nearest survive too, and each draws only its chunks there.
    let mut hooked = base.clone();
    hooked.hooks = shared_hooks(208);
    let (primitives, got) = pick_column(&column(&hooked, 700, 4.0, 0.8), "hooked column");
    let stats = got.stats.gpu_plan.expect("planned on the GPU");
    assert!(stats.ranges == 12 && stats.occluded == 0 && stats.survivors > 4 * 12, "{stats:?}");
    assert!(primitives * 3 <= stats.survivors * 768, "{primitives} primitives for {} hooked rows of 768 triangles", stats.survivors);
    // The column tilted: its chunks' boxes lie across the view, where their pixel rectangles
    // reach far past their outlines. A chunk is kept where its outline meets the pixel, as the
    // CPU planner's ray meets its box, and the sure hit drops the far side the CPU keeps: under
    // half the CPU planner's triangles (lavapipe: 2,304 against 5,376; 3,328 without the
    // outline test, 4,608 without the far side's drop).
    let mut tilted = column(&base, 800, 4.0, 0.8).to_vec();
    for d in &mut tilted {
        d.model *= Mat4::from_rotation_z(0.8) * Mat4::from_rotation_x(0.5);
    }
    let tilted: Arc<[PickDraw]> = tilted.into();
    let (primitives, _) = pick_column(&tilted, "tilted column");
    let (cpu_primitives, _) = gpu.run_queries_counted(&mut cpu_planned, &request, &points, &tilted);
    assert!(2 * primitives < cpu_primitives, "{primitives} primitives GPU-planned against {cpu_primitives} CPU-planned");
    drop((gpu_planned, cpu_planned, unculled, one_command, uploaded));
    gpu.assert_no_validation_messages();
}

/// `Planner::Auto` plans a set over a shared list's plain draws with the list's table where
/// the set and the list are large enough (at least 100 table rows; and 8 point or radius
/// queries or more whose count times the rows reaches 2^15, or rectangles whose pixels in the
/// view times the rows reach 2^25, of at least 8,192 pixels each, 32,768 with GPU results);
/// elsewhere on the CPU. Either way its answers are the CPU planner's. Its table passes and
/// their rows are built when the first set takes a table, or by `warm_up` over a list that
/// has the rows: the planner's memory says when.
#[test]
fn auto_takes_the_table_for_large_sets_over_large_lists() {
    const VW: u32 = 320;
    const VH: u32 = 240;
    let gpu = Gpu::new();
    let (uploaded, base) = sphere(&gpu, 4, 6);
    // 4,096 spheres spread over the view, at depths 25 to 35: one table group.
    let draws: Arc<[PickDraw]> = (0..4096u64)
        .map(|k| {
            let mut d = base.clone();
            d.id = ObjectId::new(1 + k).expect("nonzero");
            let (x, y) = ((k % 64) as f32, (k / 64) as f32);
            let place = Vec3::new(x * 0.57 - 18.0, y * 0.42 - 13.3, -25.0 - ((k * 7) % 11) as f32);
            d.model = Mat4::from_translation(place) * Mat4::from_scale(Vec3::splat(0.25));
            d
        })
        .collect();
    let first = |n: usize| -> Arc<[PickDraw]> { draws[..n].into() };
    let (view, proj, viewport) = look(Vec3::ZERO, Vec3::new(0.0, 0.0, -1.0), VW, VH);
    let request = PickRequest::new(viewport, view, proj);
    let covered = gpu.covered_pixels(&request, &draws, 3);
    assert!(covered.len() > 4000, "{} pixels covered", covered.len());
    let points: Vec<PickQuery> = covered.iter().take(16).map(|&p| PickQuery::Point(p)).collect();
    let rect = |x: u32, y: u32, w: u32, h: u32| PickQuery::Rect { rect: PixelRect::new(UVec2::new(x, y), UVec2::new(x + w, y + h)), mode: RectMode::Visible };
    let config = query_set_config();
    let mut auto = gpu.picker(config.with_planner(Planner::Auto));
    let mut with_results = gpu.picker(config.with_planner(Planner::Auto).with_gpu_results(true));
    let mut cpu_planned = gpu.picker(config.with_planner(Planner::Cpu));
    let before = auto.memory().planner;
    let mut seven = points[..7].to_vec();
    seven.push(rect(20, 30, 128, 63));
    // (name, set, list, whether Auto takes the table without and with GPU results). The
    // whole view is 76,800 pixels: 2^25 pixel-rows from 437 rows.
    let sets = [
        ("one point", points[..1].to_vec(), draws.clone(), [false; 2]),
        ("7 points", points[..7].to_vec(), draws.clone(), [false; 2]),
        ("16 points over 2,047 rows", points.clone(), first(2047), [false; 2]),
        ("a 128x63 rectangle", vec![rect(20, 30, 128, 63)], draws.clone(), [false; 2]),
        ("7 points and a 128x63 rectangle", seven, draws.clone(), [false; 2]),
        ("a 128x64 rectangle, 64x64 of it in the view", vec![rect(256, 60, 128, 64)], draws.clone(), [false; 2]),
        ("the whole view over 436 rows", vec![rect(0, 0, VW, VH)], first(436), [false; 2]),
        ("8 points", points[..8].to_vec(), draws.clone(), [true; 2]),
        ("a 128x64 rectangle", vec![rect(20, 30, 128, 64)], draws.clone(), [true, false]),
        ("a 256x128 rectangle", vec![rect(20, 30, 256, 128)], draws.clone(), [true; 2]),
        ("16 points over 2,048 rows", points.clone(), first(2048), [true; 2]),
        ("the whole view over 437 rows", vec![rect(0, 0, VW, VH)], first(437), [true; 2]),
    ];
    let (mut hits, mut built) = (0, false);
    for (name, set, list, table) in sets {
        let want = answers(&gpu.run_queries(&mut cpu_planned, &request, &set, &list));
        for (picker, table, results) in [(&mut auto, table[0], "off"), (&mut with_results, table[1], "on")] {
            let got = gpu.run_queries(picker, &request, &set, &list);
            assert_eq!(got.stats.gpu_plan.is_some(), table, "{name}, GPU results {results}: planned on the GPU: {:?}", got.stats.gpu_plan);
            assert_eq!(answers(&got), want, "{name}, GPU results {results}");
            hits += usize::from(table) * hit_instances(&got).len();
        }
        // No table passes (and no table) before the first set that takes one.
        built |= table[0];
        assert_eq!(auto.memory().planner > before, built, "{name}: the planner's memory");
    }
    assert!(hits > 24, "{hits} objects hit by the points of sets planned with the table");
    // `warm_up` builds the table passes for a list with the rows some set needs (100), and
    // only for such a list.
    let mut warmed = gpu.picker(config.with_planner(Planner::Auto));
    let before = warmed.memory().planner;
    let warm_up = |picker: &mut Picker, list: &[PickDraw]| picker.warm_up(list, picking_vk::DepthConvention::Standard, picking_vk::draw::Culling::NONE);
    warm_up(&mut warmed, &draws[..99]).expect("warm up");
    assert_eq!(warmed.memory().planner, before, "99 rows: no table passes");
    warm_up(&mut warmed, &draws[..100]).expect("warm up");
    assert!(warmed.memory().planner > before, "100 rows: the table passes' rows");
    drop((auto, with_results, cpu_planned, warmed, uploaded));
    gpu.assert_no_validation_messages();
}
