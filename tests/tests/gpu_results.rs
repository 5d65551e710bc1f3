//! GPU results (`PickerConfig::gpu_results`) read by a host pass in the same command buffer
//! through the public GLSL include: they equal the CPU results of the same frame on random
//! scenes (points, radius under both rules, rectangles in both modes, objects drawn by several
//! draws); over a 200-frame script with an orbiting camera and a cursor that moves every
//! frame, the host's tint pass marks exactly what that frame's full-resolution ID image has
//! under the cursor, in the snapped disc and inside the rubber band, while the ring path's
//! one-frame-late answer does not; and the texels the results pass stages resolve to the
//! answers the readback copies give.

use ash::vk;
use glam::{Mat4, UVec2, Vec3};
use picking_vk::debug::Texels;
use picking_vk::{DetailMode, ObjectId, PickQuery, PickRequest, Picker, PickerConfig, PixelRect, QueryResult, RectMode, Snap, Viewport};
use picking_vk_tests::harness::{random_pixels, random_scene_camera, Gpu};
use picking_vk_tests::results_reader::{assert_matches_cpu, frame, key_of, ResultsReader, NO_INSTANCE};
use picking_vk_tests::scene::Scene;
use picking_vk_tests::snap_oracle::{brute_force, thin_scene};

/// Every object and instance of `scene`, and two IDs it does not hold.
fn scene_keys(scene: &Scene) -> Vec<[u32; 3]> {
    let mut keys = vec![];
    for o in &scene.objects {
        let id = ObjectId::new(o.id).unwrap();
        match &o.instances {
            Some(list) => keys.extend((0..list.len() as u32).map(|i| key_of(id, Some(i)))),
            None => keys.push(key_of(id, None)),
        }
    }
    keys.push([12345, 0, NO_INSTANCE]);
    keys.push([keys[0][0], keys[0][1], 7]);
    keys
}

#[test]
fn gpu_results_equal_the_cpu_results_of_the_same_frame() {
    const W: u32 = 96;
    const H: u32 = 72;
    let gpu = Gpu::new();
    let select_through = gpu.ctx.picking_features.contains(picking_vk::PickFeatures::SELECT_THROUGH);
    assert!(select_through, "lavapipe offers fragmentStoresAndAtomics");
    let mut reader = ResultsReader::new(&gpu.ctx, 4096);
    let (mut hits_compared, mut found, mut members) = (0, 0, 0);
    for seed in picking_vk_tests::harness::seeds(0..6) {
        let scene = Scene::random(700 + seed);
        let mut gs = scene.upload(&gpu.ctx);
        // Odd seeds give the draws priorities (-1, 0, 1): the radius rules rank by them first.
        for (k, draw) in gs.draws.iter_mut().enumerate() {
            draw.priority = if seed % 2 == 1 { (k % 3) as i16 - 1 } else { 0 };
        }
        // From seed 3 on, every third draw takes the previous draw's ID: an object drawn by
        // several draws (instanced or not) has several spans, and a rectangle holds it when
        // any of them has pixels.
        if seed >= 3 {
            for k in (2..gs.draws.len()).step_by(3) {
                gs.draws[k].id = gs.draws[k - 1].id;
            }
        }
        let (view, proj) = random_scene_camera(picking_vk::DepthConvention::Standard, W, H);
        let request = PickRequest::new(Viewport::full(W, H), view, proj);
        // The results pass's workgroup follows max_radius: 320 threads of 2 disc pixels each
        // (8), 192 of 4 (6), 640 of 1 (12).
        let max_radius = [8, 6, 12][seed as usize % 3];
        let mut picker = gpu.picker(PickerConfig::default().with_gpu_results(true).with_max_queries(8).with_max_radius(max_radius));
        let keys = scene_keys(&scene);
        let mut rng = fastrand::Rng::with_seed(seed);
        for round in 0..4 {
            let p = random_pixels(seed * 31 + round, 5, W, H);
            let corner = UVec2::new(rng.u32(0..W / 2), rng.u32(0..H / 2));
            let band = PixelRect::spanning(corner, corner + UVec2::new(rng.u32(4..W / 2), rng.u32(4..H / 2)));
            let queries = [
                PickQuery::Point(p[0]),
                PickQuery::Point(p[1]),
                PickQuery::Point(p[0]),
                PickQuery::Radius { pixel: p[2], radius: max_radius, snap: Snap::Nearest },
                PickQuery::Radius { pixel: p[3], radius: max_radius.min(7), snap: Snap::Thin },
                PickQuery::Rect { rect: band, mode: RectMode::Visible },
                PickQuery::Rect { rect: PixelRect::spanning(p[4], p[4] + UVec2::new(20, 15)), mode: RectMode::All },
                PickQuery::Radius { pixel: p[4], radius: 3, snap: Snap::Thin },
            ];
            let (seen, cpu) = frame(&gpu, &mut picker, &mut reader, &request, &queries, &gs.draws, &keys);
            assert_eq!((seen.frame, seen.query_count), (cpu.frame, queries.len() as u32), "the header names the frame and its set");
            let (h, f, m) = assert_matches_cpu(&seen, &cpu, &keys, &format!("seed {seed} round {round}"));
            (hits_compared, found, members) = (hits_compared + h, found + f, members + m);
        }
        drop((picker, gs));
    }
    assert!(hits_compared >= 6 * 4 * 6 && found > 60, "{hits_compared} hits compared, {found} found");
    assert!(members > 50, "{members} rectangle memberships seen");
    drop(reader);
    gpu.assert_no_validation_messages();
}

/// The key of a pixel of the ID image: its object and instance (`instanced`: whether that ID's
/// draw is instanced), or `None` for the background.
fn texel_key(t: &Texels, instanced: &impl Fn(u64) -> bool) -> Option<[u32; 3]> {
    let id = ObjectId::from_words(t.id)?;
    Some(key_of(id, instanced(id.get()).then_some(t.draw_instance[1])))
}

/// What one frame answers: the object under the cursor, the snapped one, those in the band.
type FrameAnswers = (Option<[u32; 3]>, Option<[u32; 3]>, Vec<[u32; 3]>);

/// Pixels whose tint bit `bit` differs from `expected` (per pixel).
fn mismatches(bits: &[u32], bit: u32, expected: impl Fn(usize) -> bool) -> usize {
    bits.iter().enumerate().filter(|(i, b)| (*b & bit != 0) != expected(*i)).count()
}

#[test]
fn a_host_tint_pass_marks_what_is_under_the_cursor_in_the_same_frame_for_200_frames() {
    const W: u32 = 80;
    const H: u32 = 60;
    const SIZE: UVec2 = UVec2::new(W, H);
    const FRAMES: u32 = 200;
    const RADIUS: u32 = 5;
    let gpu = Gpu::new();
    let mut scene = thin_scene(61);
    // An instanced field among the rods, so instances are told apart too.
    let mut field = picking_vk_tests::scene::Object::new(90, 1, Mat4::from_translation(Vec3::new(0.0, -1.2, -6.0)));
    field.instances = Some(
        (0..6).map(|i| Mat4::from_scale_rotation_translation(Vec3::splat(0.3), glam::Quat::IDENTITY, Vec3::new(i as f32 * 0.7 - 1.8, 0.0, 0.0))).collect(),
    );
    scene.objects.push(field);
    let gs = scene.upload(&gpu.ctx);
    let instanced = |id: u64| id == 90;
    let mut picker = gpu.picker(PickerConfig::default().with_gpu_results(true).with_max_queries(4).with_max_radius(RADIUS));
    let mut reader = ResultsReader::new(&gpu.ctx, W * H);
    let proj = glam::camera::rh::proj::vulkan::perspective(0.9, W as f32 / H as f32, 0.5, 60.0);
    let (mut gpu_wrong, mut lag_wrong, mut tinted) = ([0usize; 3], [0usize; 3], [0usize; 3]);
    // The previous frame's answers: under the cursor, snapped, in the band.
    let mut previous: Option<FrameAnswers> = None;
    for f in 0..FRAMES {
        // The camera orbits the scene; the cursor sweeps a Lissajous path, moving every frame.
        let angle = f as f32 * 0.02;
        let eye = Vec3::new(6.0 * angle.sin(), 0.4, -6.0 + 6.0 * angle.cos());
        let view = glam::camera::rh::view::look_at_mat4(eye, Vec3::new(0.0, 0.0, -6.0), Vec3::Y);
        let request = PickRequest::new(Viewport::full(W, H), view, proj);
        let t = f as f32 * 0.11;
        let cursor = UVec2::new(((0.5 + 0.45 * t.sin()) * (W - 1) as f32) as u32, ((0.5 + 0.45 * (1.3 * t).cos()) * (H - 1) as f32) as u32);
        let band = PixelRect::spanning(cursor.saturating_sub(UVec2::new(12, 9)), (cursor + UVec2::new(6, 5)).min(SIZE - 1));
        let queries = [
            PickQuery::Point(cursor),
            PickQuery::Radius { pixel: cursor, radius: RADIUS, snap: Snap::Thin },
            PickQuery::Rect { rect: band, mode: RectMode::Visible },
        ];
        // The frame's full-resolution ID image: what the host's lit pass would show.
        let texels = gpu.id_image(&request, &gs.draws, W, H);
        let probes: Vec<[u32; 3]> = texels.iter().map(|t| texel_key(t, &instanced).unwrap_or([0, 0, NO_INSTANCE])).collect();
        let (seen, cpu) = frame(&gpu, &mut picker, &mut reader, &request, &queries, &gs.draws, &probes);
        // What that same frame's ID image says is under the cursor, in the snapped disc, in the band.
        let at = |p: UVec2| texel_key(&texels[(p.y * W + p.x) as usize], &instanced);
        let point = at(cursor);
        let snapped = brute_force(&texels, SIZE, cursor, RADIUS, Snap::Thin, &|_| 0).and_then(at);
        let mut band_keys: Vec<[u32; 3]> =
            (band.min.y..band.max.y).flat_map(|y| (band.min.x..band.max.x).map(move |x| UVec2::new(x, y))).filter_map(at).collect();
        band_keys.sort_unstable();
        band_keys.dedup();
        let key = |i: usize| texel_key(&texels[i], &instanced);
        let under_cursor = |i: usize| point.is_some() && key(i) == point;
        let in_disc = |i: usize| snapped.is_some() && key(i) == snapped;
        let in_band = |i: usize| key(i).is_some_and(|k| band_keys.contains(&k));
        let expected: [&dyn Fn(usize) -> bool; 3] = [&under_cursor, &in_disc, &in_band];
        for (q, want) in expected.iter().enumerate() {
            let bit = if q == 2 { 1 << (8 + 2) } else { 1 << q };
            gpu_wrong[q] += mismatches(&seen.bits, bit, want);
            tinted[q] += seen.bits.iter().filter(|b| *b & bit != 0).count();
        }
        // The ring path answers a frame late: the tint it has now is the previous frame's.
        if let Some((p_point, p_snapped, p_band)) = &previous {
            lag_wrong[0] += (0..texels.len()).filter(|&i| (p_point.is_some() && key(i) == *p_point) != expected[0](i)).count();
            lag_wrong[1] += (0..texels.len()).filter(|&i| (p_snapped.is_some() && key(i) == *p_snapped) != expected[1](i)).count();
            lag_wrong[2] += (0..texels.len()).filter(|&i| key(i).is_some_and(|k| p_band.contains(&k)) != expected[2](i)).count();
        }
        let cpu_key = |r: &QueryResult| r.pick().and_then(|p| p.hit.as_ref()).map(|h| key_of(h.id, h.instance));
        let QueryResult::Rect(rect) = &cpu.results[2] else { panic!("a rectangle result") };
        let mut cpu_band: Vec<[u32; 3]> = rect.objects.iter().map(|o| key_of(o.id, o.instance)).collect();
        cpu_band.sort_unstable();
        assert_eq!((cpu_key(&cpu.results[0]), cpu_key(&cpu.results[1]), &cpu_band), (point, snapped, &band_keys), "frame {f}: the CPU results agree");
        previous = Some((point, snapped, band_keys));
    }
    assert_eq!(gpu_wrong, [0, 0, 0], "pixels tinted wrongly through the GPU results (point, thin radius, band)");
    assert!(tinted.iter().all(|&t| t > 2000), "tinted pixels over the run: {tinted:?}");
    assert!(lag_wrong.iter().all(|&w| w > 0), "the ring path's one-frame lag shows: {lag_wrong:?}");
    eprintln!("200 frames: tinted {tinted:?} pixels, 0 wrong; one frame late: {lag_wrong:?} wrong");
    drop((reader, picker, gs));
    gpu.assert_no_validation_messages();
}

#[test]
fn gpu_results_are_refused_past_their_limits() {
    let gpu = Gpu::new();
    // SAFETY: the context's handles outlive the picker.
    let big_radius = unsafe { Picker::new(gpu.ctx.host_device(), PickerConfig::default().with_gpu_results(true).with_max_radius(13)) };
    assert!(matches!(big_radius, Err(picking_vk::PickError::InvalidInput { .. })), "max_radius over 12 is refused with GPU results");
    let plain = gpu.picker(PickerConfig::default());
    assert!(plain.gpu_results(0).is_err(), "no GPU results without the setting");
    let scene = Scene::random(5);
    let gs = scene.upload(&gpu.ctx);
    let (view, proj) = random_scene_camera(picking_vk::DepthConvention::Standard, 64, 48);
    let request = PickRequest::new(Viewport::full(64, 48), view, proj);
    let mut picker = gpu.picker(PickerConfig::default().with_gpu_results(true).with_gpu_result_draws(1).with_culling(false));
    assert!(picker.gpu_results(1).is_ok() && picker.gpu_results(2).is_err(), "a buffer per slot");
    let mut refused = false;
    gpu.run(|cmd| {
        // SAFETY: recording outside a render pass; the buffers outlive the wait.
        let r = unsafe { picker.record(cmd, 0, &request, &[PickQuery::Point(UVec2::new(32, 24))], &gs.draws) };
        refused = matches!(r, Err(picking_vk::PickError::Capacity { limit: picking_vk::error::Limit::GpuResultDraws, .. }));
    });
    assert!(refused, "17 unculled draws do not fit one row");
    let mem = picker.memory();
    assert!(mem.gpu_results > 0 && plain.memory().gpu_results == 0, "memory reports the GPU results' buffers");
    drop((picker, plain, gs));
    gpu.assert_no_validation_messages();
}

/// The results pass stages the point and radius texels in place of the readback copies: a
/// picker with GPU results and one without, recording the same sets into one command buffer,
/// resolve the same CPU results (detail included where the device offers it). Their passes
/// differ only in the attachments' final layout, so they stay compatible render passes.
#[test]
fn the_results_pass_stages_the_texels_the_copies_would() {
    const W: u32 = 96;
    const H: u32 = 72;
    let gpu = Gpu::new();
    let config = PickerConfig::default().with_max_queries(8).with_max_radius(12).with_detail(DetailMode::IfEnabled);
    let mut ring = gpu.picker(config);
    let mut with = gpu.picker(config.with_gpu_results(true));
    assert_eq!(ring.detail_status(), with.detail_status(), "both pickers answer with the same attachments");
    let (mut compared, mut found) = (0, 0);
    let seeds = picking_vk_tests::harness::seeds(0..4);
    for seed in seeds.clone() {
        let scene = Scene::random(900 + seed);
        let gs = scene.upload(&gpu.ctx);
        let (view, proj) = random_scene_camera(picking_vk::DepthConvention::Standard, W, H);
        let request = PickRequest::new(Viewport::full(W, H), view, proj);
        for round in 0..3 {
            let p = random_pixels(seed * 17 + round, 6, W, H);
            let queries = [
                PickQuery::Point(p[0]),
                PickQuery::Radius { pixel: p[1], radius: 8, snap: Snap::Nearest },
                PickQuery::Point(p[2]),
                PickQuery::Radius { pixel: p[3], radius: 5, snap: Snap::Thin },
                PickQuery::Rect { rect: PixelRect::spanning(p[4], p[4] + UVec2::new(24, 18)), mode: RectMode::Visible },
                PickQuery::Radius { pixel: p[5], radius: 12, snap: Snap::Thin },
            ];
            gpu.run(|cmd| {
                // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
                unsafe {
                    ring.record(cmd, 0, &request, &queries, &gs.draws).expect("record without GPU results");
                    with.record(cmd, 0, &request, &queries, &gs.draws).expect("record with GPU results");
                }
            });
            // SAFETY: `run` waited for the command buffer.
            let (a, b) = unsafe { (ring.take_results(0).expect("take").expect("pending"), with.take_results(0).expect("take").expect("pending")) };
            assert_eq!(a.results, b.results, "seed {seed} round {round}: the same texels, the same answers");
            compared += a.results.len();
            found += a.results.iter().filter_map(QueryResult::pick).filter(|p| p.hit.is_some()).count();
        }
        drop(gs);
    }
    assert!(compared == seeds.count() * 3 * 6 && found > 20, "{compared} results compared, {found} hits");
    drop((ring, with));
    gpu.assert_no_validation_messages();
}

/// GPU results over a shared list's GPU plan table (`Planner::Gpu`): random scenes with 96
/// spheres sharing one mesh, in four groups of 24 by priority (-1, 0, 1, 0: the radius rules
/// rank by it). The results buffer names a table row's own draw, instance and priority (by
/// its group) and lists a rectangle's table rows as its objects, as the CPU results do.
#[test]
fn gpu_results_over_a_shared_lists_table_equal_the_cpu_results() {
    const W: u32 = 96;
    const H: u32 = 72;
    let gpu = Gpu::new();
    assert!(gpu.ctx.picking_features.contains(picking_vk::PickFeatures::GPU_DRAW_PLANNING), "lavapipe offers shaderFloat64");
    let mut reader = ResultsReader::new(&gpu.ctx, 4096);
    let (mut found, mut members, mut rows_hit) = (0, 0, 0);
    for seed in picking_vk_tests::harness::seeds(0..3) {
        let mut scene = Scene::random(900 + seed);
        scene.meshes.push(picking_vk_tests::scene::Mesh::sphere(6, 10));
        let mesh = scene.meshes.len() - 1;
        let mut rng = fastrand::Rng::with_seed(seed);
        for k in 0..96u64 {
            let at = Vec3::new(rng.f32() * 4.0 - 2.0, rng.f32() * 3.0 - 1.5, -3.0 - rng.f32() * 5.0);
            let model = Mat4::from_scale_rotation_translation(Vec3::splat(0.1 + rng.f32() * 0.3), glam::Quat::IDENTITY, at);
            scene.objects.push(picking_vk_tests::scene::Object::new(5_000 + k, mesh, model));
        }
        let gs = scene.upload(&gpu.ctx);
        // The spheres draw from the first sphere's buffers: one group per priority block.
        let first = gs.draws.len() - 96;
        let base = gs.draws[first].clone();
        let draws: std::sync::Arc<[picking_vk::PickDraw]> = gs
            .draws
            .iter()
            .enumerate()
            .map(|(k, d)| {
                let mut d = d.clone();
                if k >= first {
                    (d.positions, d.triangles) = (base.positions, base.triangles);
                    d.priority = [-1, 0, 1, 0][(k - first) / 24];
                }
                d
            })
            .collect();
        let (view, proj) = random_scene_camera(picking_vk::DepthConvention::Standard, W, H);
        let request = PickRequest::new(Viewport::full(W, H), view, proj);
        let config = PickerConfig::default().with_gpu_results(true).with_max_queries(8).with_max_radius(8).with_rect_entries(4096);
        let mut picker = gpu.picker(config.with_planner(picking_vk::config::Planner::Gpu));
        let mut keys = scene_keys(&scene);
        keys.truncate(keys.len().min(4096));
        for round in 0..4 {
            let p = random_pixels(seed * 17 + round, 5, W, H);
            let queries = [
                PickQuery::Point(p[0]),
                PickQuery::Point(p[1]),
                PickQuery::Radius { pixel: p[2], radius: 8, snap: Snap::Nearest },
                PickQuery::Radius { pixel: p[3], radius: 6, snap: Snap::Thin },
                PickQuery::Rect { rect: PixelRect::spanning(p[4], p[4] + UVec2::new(30, 20)), mode: RectMode::Visible },
                PickQuery::Rect { rect: PixelRect::new(UVec2::ZERO, UVec2::new(W, H)), mode: RectMode::All },
            ];
            let (seen, cpu) = frame(&gpu, &mut picker, &mut reader, &request, &queries, &draws, &keys);
            let gpu_plan = cpu.stats.gpu_plan.expect("the table planned on the GPU");
            assert!(gpu_plan.ranges > 0, "seed {seed} round {round}: {gpu_plan:?}");
            let (_, f, m) = assert_matches_cpu(&seen, &cpu, &keys, &format!("seed {seed} round {round}"));
            (found, members) = (found + f, members + m);
            for r in &cpu.results {
                if let Some(hit) = r.pick().and_then(|p| p.hit.as_ref()) {
                    rows_hit += usize::from((5_000..5_096).contains(&hit.id.get()));
                }
            }
        }
        drop((picker, draws, gs));
    }
    assert!(found > 20 && members > 50 && rows_hit > 5, "{found} hits found, {members} memberships, {rows_hit} table rows hit");
    drop(reader);
    gpu.assert_no_validation_messages();
}

/// A host that keeps showing an earlier pick reads a slot's results in a submission that is
/// still waiting to run when the picker records the slot's next frame (here a timeline value
/// the host signals only after that). The waiting reader sees the earlier frame whole: the
/// next frame's words reach the buffer only through its own commands, behind the readers'
/// barrier.
#[test]
fn a_reader_still_waiting_to_run_reads_the_frame_it_was_recorded_after() {
    const W: u32 = 96;
    const H: u32 = 72;
    let gpu = Gpu::with_options(|o| o.timeline_semaphores = true);
    let scene = Scene::random(741);
    let gs = scene.upload(&gpu.ctx);
    let (view, proj) = random_scene_camera(picking_vk::DepthConvention::Standard, W, H);
    let request = PickRequest::new(Viewport::full(W, H), view, proj);
    let mut picker = gpu.picker(PickerConfig::default().with_gpu_results(true).with_max_queries(8));
    let mut reader = ResultsReader::new(&gpu.ctx, 4096);
    let keys = scene_keys(&scene);
    let covered = gpu.covered_pixels(&request, &gs.draws, 741);
    let (early, late) = covered.split_at(covered.len() / 2);
    let rect = |p: UVec2| PickQuery::Rect { rect: PixelRect::spanning(p, p + UVec2::new(12, 9)), mode: RectMode::Visible };
    let first: Vec<PickQuery> = early.iter().take(3).map(|&p| PickQuery::Point(p)).chain([rect(early[0])]).collect();
    let (seen, first_cpu) = frame(&gpu, &mut picker, &mut reader, &request, &first, &gs.draws, &keys);
    let (_, found, _) = assert_matches_cpu(&seen, &first_cpu, &keys, "the first frame");
    assert_eq!(found, 3, "every point of the first frame covers an object");
    // Another set, so the next frame's words differ (the header's set size, every hit): two
    // rectangles alone, whose results a copy carries over (no results pass runs).
    let next = [rect(late[0]), PickQuery::Rect { rect: PixelRect::spanning(late[1], late[1] + UVec2::new(30, 20)), mode: RectMode::All }];
    let mut kind = vk::SemaphoreTypeCreateInfo::default().semaphore_type(vk::SemaphoreType::TIMELINE);
    // SAFETY: the context enabled timeline semaphores.
    let gate = unsafe { gpu.ctx.device.create_semaphore(&vk::SemaphoreCreateInfo::default().push_next(&mut kind), None) }.unwrap();
    let cmds = gpu.ctx.command_buffers(2).unwrap();
    let (held, picked) = (cmds.buffers()[0], cmds.buffers()[1]);
    let results = picker.gpu_results(0).unwrap();
    let begin = vk::CommandBufferBeginInfo::default();
    // SAFETY: fresh primary command buffers of this device; the reader's last pass completed
    // (`frame` waited); the draws' buffers outlive the wait below; the queue is this test's.
    unsafe {
        let device = &gpu.ctx.device;
        device.begin_command_buffer(held, &begin).unwrap();
        reader.record(held, results, &keys);
        device.end_command_buffer(held).unwrap();
        let (waits, values, stages) = ([gate], [1u64], [vk::PipelineStageFlags::COMPUTE_SHADER]);
        let mut wait_values = vk::TimelineSemaphoreSubmitInfo::default().wait_semaphore_values(&values);
        let submit = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&held)).wait_semaphores(&waits).wait_dst_stage_mask(&stages);
        device.queue_submit(gpu.ctx.queue, &[submit.push_next(&mut wait_values)], vk::Fence::null()).unwrap();
        // The next frame into the same slot, recorded and submitted while the reader waits.
        device.begin_command_buffer(picked, &begin).unwrap();
        picker.record(picked, 0, &request, &next, &gs.draws).expect("record");
        device.end_command_buffer(picked).unwrap();
        device.queue_submit(gpu.ctx.queue, &[vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&picked))], vk::Fence::null()).unwrap();
        device.signal_semaphore(&vk::SemaphoreSignalInfo::default().semaphore(gate).value(1)).unwrap();
        gpu.ctx.wait_idle().unwrap();
    }
    // SAFETY: the queue is idle.
    let (seen, next_cpu) = unsafe { (reader.read(keys.len()), picker.take_results(0).expect("resolve").expect("pending")) };
    assert_eq!(next_cpu.results.len(), next.len());
    assert_matches_cpu(&seen, &first_cpu, &keys, "the reader held back while the next frame was recorded");
    // And a reader after the next frame reads the next frame.
    let (after, again) = frame(&gpu, &mut picker, &mut reader, &request, &next, &gs.draws, &keys);
    let (_, _, members) = assert_matches_cpu(&after, &again, &keys, "a reader after the next frame");
    assert!(members > 0, "the rectangles hold objects");
    // SAFETY: the queue is idle; nothing uses the semaphore.
    unsafe { gpu.ctx.device.destroy_semaphore(gate, None) };
    drop((cmds, picker, reader, gs));
    gpu.assert_no_validation_messages();
}
