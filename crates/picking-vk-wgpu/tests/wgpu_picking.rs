//! The wgpu bridge on lavapipe, wgpu's validation and the Khronos layer (synchronization
//! validation included) on: the example's scene picked against a CPU ray cast, the pick in
//! one submission with the app's rendering and a compute pass that moves instances, the
//! frame slots, and what is refused.

mod common;
use common::RecordPick;

use common::scene::{example_scene, orbit_camera, SceneRenderer};
use glam::{Mat4, UVec2, Vec3};
use picking_vk::{PickQuery, PickRequest, PixelRect, QueryResult, RectMode};
use picking_vk_tests::oracle::{ObjectKey, Oracle};
use picking_vk_wgpu::{viewport, VertexPositions, WgpuDraw, WgpuPickError, WgpuPicker};
use std::collections::BTreeSet;
use std::time::Duration;

use common::app::{App, HEIGHT, WIDTH};
const POINTS: usize = 300;

fn key_of(result: &QueryResult) -> Option<ObjectKey> {
    result.pick().and_then(|p| p.hit.as_ref()).map(|h| (h.id.get(), h.instance))
}

/// Checks a rectangle's set against the oracle over every pixel of it: what the ray cast
/// finds without doubt is in the set, and the set holds nothing the ray cast cannot find.
fn check_rect(oracle: &Oracle, rect: PixelRect, mode: RectMode, found: &BTreeSet<ObjectKey>) -> usize {
    let (mut sure, mut possible) = (BTreeSet::new(), BTreeSet::new());
    for y in rect.min.y..rect.max.y {
        for x in rect.min.x..rect.max.x {
            let pixel = UVec2::new(x, y);
            let answer = oracle.pick(pixel);
            let key = answer.hit.map(|h| (h.id, h.instance));
            let (all_sure, all_maybe) = oracle.all_hits(pixel);
            match mode {
                RectMode::Visible => {
                    if !answer.ambiguous {
                        sure.extend(key);
                    } else {
                        possible.extend(all_sure.iter().chain(&all_maybe).copied());
                    }
                    possible.extend(key);
                }
                _ => {
                    sure.extend(all_sure.iter().copied());
                    possible.extend(all_sure.iter().chain(&all_maybe).copied());
                }
            }
        }
    }
    assert!(sure.is_subset(found), "{mode:?} {rect:?}: the ray cast finds {:?} that the pick misses", sure.difference(found).collect::<Vec<_>>());
    assert!(found.is_subset(&possible), "{mode:?} {rect:?}: the pick finds {:?} that no ray meets", found.difference(&possible).collect::<Vec<_>>());
    sure.len()
}

#[test]
fn example_scene_picks_like_a_ray_cast() {
    let adapter = common::adapter();
    let app = App::new(common::device(&adapter));
    let mut picker = common::picker(&app.gpu, 2, POINTS as u32 + 8);
    let data = example_scene();
    let oracle_scene = common::oracle_scene(&data, None);
    let mut rng = fastrand::Rng::with_seed(37);
    let (mut checked, mut hits, mut rect_objects) = (0, 0, 0);
    for angle in [0.3f32, 1.6, 2.9, 4.2, 5.5] {
        let camera = orbit_camera(angle, WIDTH as f32 / HEIGHT as f32);
        let oracle = common::oracle(&oracle_scene, camera.0, camera.1, WIDTH, HEIGHT);
        let pixels: Vec<UVec2> = (0..POINTS).map(|_| UVec2::new(rng.u32(0..WIDTH), rng.u32(0..HEIGHT))).collect();
        let mut queries: Vec<PickQuery> = pixels.iter().map(|&p| PickQuery::Point(p)).collect();
        let x = rng.u32(0..WIDTH - 60);
        let y = rng.u32(0..HEIGHT - 50);
        let rect = PixelRect { min: UVec2::new(x, y), max: UVec2::new(x + 60, y + 50) };
        let select_through = app.gpu.features().contains(picking_vk::PickFeatures::SELECT_THROUGH);
        let modes: &[RectMode] = if select_through { &[RectMode::Visible, RectMode::All] } else { &[RectMode::Visible] };
        queries.extend(modes.iter().map(|&mode| PickQuery::Rect { rect, mode }));
        let results = app.frame(&mut picker, camera, &queries, vec![], false);
        for (i, &pixel) in pixels.iter().enumerate() {
            let answer = oracle.pick(pixel);
            if answer.ambiguous {
                continue;
            }
            let expected = answer.hit.map(|h| (h.id, h.instance));
            assert_eq!(key_of(&results.results[i]), expected, "angle {angle}, pixel {pixel}");
            checked += 1;
            hits += usize::from(expected.is_some());
        }
        for (k, &mode) in modes.iter().enumerate() {
            let QueryResult::Rect(set) = &results.results[POINTS + k] else { panic!("a rectangle's result") };
            let found = set.objects.iter().map(|o| (o.id.get(), o.instance)).collect();
            rect_objects += check_rect(&oracle, rect, mode, &found);
        }
    }
    eprintln!("{checked} unambiguous pixels agree with the ray cast ({hits} on objects); rectangles: {rect_objects} objects found for sure");
    assert!(checked >= 1000, "only {checked} unambiguous pixels");
    assert!(hits >= 500 && rect_objects > 8, "the views must show the scene");
    common::assert_no_messages();
}

/// The app's compute pass moves the instanced field every frame; in the same submission the
/// picker picks and then the app renders: the pick sees the moved instances (no CPU copy of
/// them: the field's draw has none), ordered after the compute pass's writes by the bridge's
/// transitions, and the next frame's writes after the pick. (The layer on Debian 12,
/// 1.3.239, checks synchronization within each command buffer, not across the command
/// buffers of a submission: the ordering between wgpu's command buffers and the pick's is
/// wgpu's barriers from the transitions' states.)
#[test]
fn pick_in_one_submission_with_gpu_written_instances() {
    let adapter = common::adapter();
    let mut app = App::new(common::device(&adapter));
    let mut picker = common::picker(&app.gpu, 2, 64);
    let data = example_scene();
    let field = 4;
    let base = data.objects[field].instances.clone().expect("the field is instanced");
    let mover = common::mover::InstanceMover::new(&app.gpu.device, app.renderer.gpu_written_instances(field), base.len() as u32);
    let camera = orbit_camera(0.9, WIDTH as f32 / HEIGHT as f32);
    let mut rng = fastrand::Rng::with_seed(5);
    let mut instance_hits = 0;
    for frame in 0..4 {
        // The compute pass adds `offset` to every instance's translation.
        let offset = Vec3::new(-0.6 * frame as f32, 0.3 * frame as f32, 0.4 * frame as f32);
        let moved: Vec<Mat4> = base.iter().map(|m| Mat4::from_translation(offset) * *m).collect();
        let oracle = common::oracle(&common::oracle_scene(&data, Some((field, &moved))), camera.0, camera.1, WIDTH, HEIGHT);
        let pixels: Vec<UVec2> = (0..60).map(|_| UVec2::new(rng.u32(60..WIDTH - 40), rng.u32(40..HEIGHT - 40))).collect();
        let queries: Vec<PickQuery> = pixels.iter().map(|&p| PickQuery::Point(p)).collect();
        let compute = mover.record(&app.gpu.device, &app.gpu.queue, &base, offset);
        let results = app.frame(&mut picker, camera, &queries, vec![compute], true);
        for (i, &pixel) in pixels.iter().enumerate() {
            let answer = oracle.pick(pixel);
            if !answer.ambiguous {
                let expected = answer.hit.map(|h| (h.id, h.instance));
                assert_eq!(key_of(&results.results[i]), expected, "frame {frame}, pixel {pixel}");
                instance_hits += usize::from(expected.is_some_and(|(id, _)| id == 5));
            }
        }
    }
    assert!(instance_hits >= 10, "only {instance_hits} checked pixels on the moving instances");
    common::assert_no_messages();
}

/// The example scene's renderer, and a request from the orbit camera at 0.3.
fn orbit_scene(gpu: &picking_vk_wgpu::PickingDevice) -> (SceneRenderer, PickRequest<'static>) {
    let renderer = SceneRenderer::new(&gpu.device, &example_scene(), common::scene::COLOR_FORMAT);
    let camera = orbit_camera(0.3, WIDTH as f32 / HEIGHT as f32);
    (renderer, PickRequest::new(viewport(WIDTH, HEIGHT), camera.0, camera.1))
}

/// Results a frame later through the slots, a dropped pick, and recording beyond the slots.
#[test]
fn slots_poll_and_dropped_picks() {
    let adapter = common::adapter();
    let gpu = common::device(&adapter);
    let mut picker = common::picker(&gpu, 2, 4);
    let (renderer, request) = orbit_scene(&gpu);
    let queries = [PickQuery::Point(UVec2::new(160, 150))];
    let draws = renderer.pick_draws();
    // A pick submitted, then one dropped: only the first comes back.
    let first = picker.record_pick(&request, &queries, &draws).expect("recorded");
    let first_frame = first.ticket().frame;
    first.submit([], []).expect("submitted");
    let dropped = picker.record_pick(&request, &queries, &draws).expect("recorded");
    let dropped_ticket = dropped.ticket();
    drop(dropped);
    // Two slots: both in use now, the third record waits for the first and reuses the
    // dropped one's slot after it.
    let third = picker.record_pick(&request, &queries, &draws).expect("the first slot frees once its pick completed");
    let held = picker.record_pick(&request, &queries, &draws).expect("the dropped pick's slot is free");
    let held_frame = held.ticket().frame;
    assert!(matches!(picker.record_pick(&request, &queries, &draws), Err(WgpuPickError::SlotsFull { frames_in_flight: 2 })));
    assert!(matches!(picker.wait_results(&held.ticket(), Duration::from_secs(1)), Err(WgpuPickError::NotSubmitted)));
    assert!(picker.wait_results(&dropped_ticket, Duration::from_secs(1)).is_err(), "a dropped pick has no results");
    let third_ticket = third.ticket();
    third.submit([], []).expect("submitted");
    held.submit([], []).expect("submitted");
    gpu.device.poll(wgpu::PollType::wait_indefinitely()).expect("idle");
    let frames: Vec<u64> = picker.poll_results().expect("results").iter().map(|r| r.frame).collect();
    assert_eq!(frames, vec![first_frame, third_ticket.frame, held_frame], "every submitted pick, oldest first; the dropped one never");
    assert!(picker.poll_results().expect("results").is_empty(), "each result once");
    // Results nobody takes stay bounded: of 70 picks, the 64 newest are kept.
    let mut last = 0;
    for _ in 0..70 {
        let commands = picker.record_pick(&request, &queries, &draws).expect("recorded");
        last = commands.ticket().frame;
        commands.submit([], []).expect("submitted");
    }
    gpu.device.poll(wgpu::PollType::wait_indefinitely()).expect("idle");
    let kept: Vec<u64> = picker.poll_results().expect("results").iter().map(|r| r.frame).collect();
    assert_eq!(kept, (last - 63..=last).collect::<Vec<_>>(), "the 64 newest, oldest first");
    // A pick that outlives its picker is not submitted (its commands name the picker's
    // pipelines and images, destroyed with it); the app's own work still is.
    let orphan = picker.record_pick(&request, &queries, &draws).expect("recorded");
    drop(picker);
    let usage = wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ;
    let scratch = gpu.device.create_buffer(&wgpu::BufferDescriptor { label: Some("app's own"), size: 256, usage, mapped_at_creation: false });
    gpu.queue.write_buffer(&scratch, 0, &[7u8; 256]);
    let mut encoder = gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("after") });
    encoder.clear_buffer(&scratch, 0, None);
    orphan.submit([], [encoder.finish()]).expect("submitted");
    scratch.slice(..).map_async(wgpu::MapMode::Read, |r| r.expect("mapped"));
    gpu.device.poll(wgpu::PollType::wait_indefinitely()).expect("idle");
    assert!(scratch.slice(..).get_mapped_range().expect("mapped").to_vec().iter().all(|&b| b == 0), "the app's own work in `after` ran");
    common::assert_no_messages();
}

/// A submission wgpu refuses (here: a buffer the pick draws, or one the app's `before` work
/// clears, destroyed after recording) runs nothing: `submit` says so, the pick is lost as if
/// dropped, and the picker goes on (no error from polling, its slots free, later picks right).
#[test]
fn a_submission_wgpu_refuses_loses_only_its_pick() {
    let adapter = common::adapter();
    let gpu = common::device(&adapter);
    let mut picker = common::picker(&gpu, 2, 4);
    let (renderer, request) = orbit_scene(&gpu);
    let pixel = UVec2::new(160, 150);
    let queries = [PickQuery::Point(pixel)];
    let draws = renderer.pick_draws();
    let good = |picker: &mut WgpuPicker| {
        let commands = picker.record_pick(&request, &queries, &draws).expect("recorded");
        let ticket = commands.ticket();
        commands.submit([], []).expect("submitted");
        let results = picker.wait_results(&ticket, Duration::from_secs(20)).expect("results");
        key_of(&results.results[0])
    };
    let expected = good(&mut picker);
    assert!(expected.is_some(), "the pixel shows the scene");
    // A draw whose vertex buffer is destroyed between recording and submitting.
    let positions: [f32; 9] = [-1.0, -1.0, 0.5, 3.0, -1.0, 0.5, -1.0, 3.0, 0.5];
    let usage = wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST;
    let doomed = gpu.device.create_buffer(&wgpu::BufferDescriptor { label: Some("doomed"), size: 36, usage, mapped_at_creation: false });
    let bytes: Vec<u8> = positions.iter().flat_map(|f| f.to_le_bytes()).collect();
    gpu.queue.write_buffer(&doomed, 0, &bytes);
    let id = picking_vk::ObjectId::new(4242).expect("nonzero");
    let cover = WgpuDraw::new(id, VertexPositions::tight(&doomed), 0..3).expect("built");
    let identity = PickRequest::new(viewport(WIDTH, HEIGHT), Mat4::IDENTITY, Mat4::IDENTITY);
    let commands = picker.record_pick(&identity, &queries, &[cover]).expect("recorded");
    let lost = commands.ticket();
    doomed.destroy();
    let err = commands.submit([], []).expect_err("wgpu refuses a destroyed buffer");
    assert!(matches!(err, WgpuPickError::Submit(_)) && err.is_recoverable(), "{err}");
    // The app's own work in `before` names a buffer destroyed before the submission.
    let scratch = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("app's own"),
        size: 256,
        usage: wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("before") });
    encoder.clear_buffer(&scratch, 0, None);
    let commands = picker.record_pick(&request, &queries, &draws).expect("recorded");
    let lost_too = commands.ticket();
    scratch.destroy();
    let err = commands.submit([encoder.finish()], []).expect_err("wgpu refuses the app's work");
    assert!(matches!(err, WgpuPickError::Submit(_)), "{err}");
    // Nothing of either ran, and the picker polls on: they have no results, their slots free.
    assert!(picker.poll_results().expect("polling is unaffected").is_empty());
    for ticket in [lost, lost_too] {
        let err = picker.wait_results(&ticket, Duration::from_secs(1)).expect_err("a refused pick has no results");
        assert!(matches!(err, WgpuPickError::Pick(picking_vk::PickError::StaleResult { .. })), "{err}");
    }
    for _ in 0..3 {
        assert_eq!(good(&mut picker), expected, "later picks answer as before");
    }
    common::assert_no_messages();
}

/// Bad draws are refused by name before anything is recorded, and non-Vulkan adapters too.
#[test]
fn refuses_what_it_cannot_pick() {
    let adapter = common::adapter();
    let gpu = common::device(&adapter);
    let uniform_only =
        gpu.device.create_buffer(&wgpu::BufferDescriptor { label: None, size: 1024, usage: wgpu::BufferUsages::UNIFORM, mapped_at_creation: false });
    let id = picking_vk::ObjectId::new(9).expect("nonzero");
    let err = WgpuDraw::new(id, VertexPositions::tight(&uniform_only), 0..3).expect_err("refused");
    assert!(matches!(err, WgpuPickError::BufferUsage { what: "vertex", usage: "VERTEX" }), "{err}");
    let vertices = gpu.device.create_buffer(&wgpu::BufferDescriptor { label: None, size: 1024, usage: wgpu::BufferUsages::VERTEX, mapped_at_creation: false });
    let doubles = VertexPositions { format: wgpu::VertexFormat::Float64x3, ..VertexPositions::tight(&vertices) };
    assert!(matches!(WgpuDraw::new(id, doubles, 0..3), Err(WgpuPickError::PositionFormat(wgpu::VertexFormat::Float64x3))));
    let past_end = VertexPositions { offset: 2048, ..VertexPositions::tight(&vertices) };
    assert!(matches!(WgpuDraw::new(id, past_end, 0..3), Err(WgpuPickError::BufferRange { what: "vertex", .. })));
    // 1024 bytes hold 85 positions: drawing 90 vertices is refused by the picker at record.
    let mut picker = common::picker(&gpu, 1, 1);
    let draw = WgpuDraw::new(id, VertexPositions::tight(&vertices), 0..90).expect("built");
    let request = PickRequest::new(viewport(WIDTH, HEIGHT), Mat4::IDENTITY, Mat4::IDENTITY);
    let err = picker.record_pick(&request, &[PickQuery::Point(UVec2::new(1, 1))], &[draw]).err().expect("refused");
    assert!(matches!(err, WgpuPickError::Pick(picking_vk::PickError::InvalidDraw { .. })), "{err}");
    // A buffer destroyed after its draw was built is refused at record, by name.
    let doomed = gpu.device.create_buffer(&wgpu::BufferDescriptor { label: None, size: 1024, usage: wgpu::BufferUsages::VERTEX, mapped_at_creation: false });
    let stale = WgpuDraw::new(id, VertexPositions::tight(&doomed), 0..3).expect("built");
    doomed.destroy();
    let err = picker.record_pick(&request, &[PickQuery::Point(UVec2::new(1, 1))], &[stale]).err().expect("refused");
    assert!(matches!(err, WgpuPickError::BufferRange { what: "draw", .. }), "{err}");
    // A buffer of another device is refused before anything is recorded with it.
    let other = common::device(&adapter);
    let foreign = other.device.create_buffer(&wgpu::BufferDescriptor { label: None, size: 1024, usage: wgpu::BufferUsages::VERTEX, mapped_at_creation: false });
    let alien = WgpuDraw::new(id, VertexPositions::tight(&foreign), 0..3).expect("built");
    let err = picker.record_pick(&request, &[PickQuery::Point(UVec2::new(1, 1))], &[alien]).err().expect("refused");
    assert!(matches!(err, WgpuPickError::Wgpu(_)), "{err}");
    // The picker is as it was: a good pick still works.
    let good = WgpuDraw::new(id, VertexPositions::tight(&vertices), 0..84).expect("built");
    let commands = picker.record_pick(&request, &[PickQuery::Point(UVec2::new(1, 1))], &[good]).expect("recorded");
    let ticket = commands.ticket();
    commands.submit([], []).expect("submitted");
    picker.wait_results(&ticket, Duration::from_secs(20)).expect("results");
    // Contributors are not bridged: their raw commands would escape the transitions.
    struct Nothing;
    // SAFETY: `record` records nothing; `ids` is constant.
    unsafe impl picking_vk::contributor::PickContributor for Nothing {
        fn ids(&self) -> std::ops::Range<u64> {
            1000..1001
        }
        unsafe fn record(&self, _: &picking_vk::contributor::ContributorContext<'_>) {}
    }
    let nothing: [&dyn picking_vk::contributor::PickContributor; 1] = [&Nothing];
    let with_contributor = PickRequest::new(request.viewport, request.view, request.projection).with_contributors(&nothing);
    let good = WgpuDraw::new(id, VertexPositions::tight(&vertices), 0..84).expect("built");
    let err = picker.record_pick(&with_contributor, &[PickQuery::Point(UVec2::new(1, 1))], &[good]).err().expect("refused");
    assert!(matches!(err, WgpuPickError::Pick(picking_vk::PickError::InvalidInput { .. })), "{err}");
    // A PickingDevice whose device or queue was swapped for one picking was not enabled on.
    let (mut device_swapped, mut queue_swapped) = (gpu.clone(), gpu.clone());
    device_swapped.device = other.device.clone();
    queue_swapped.queue = other.queue.clone();
    for (what, parts) in [("device", device_swapped), ("queue", queue_swapped)] {
        let err = WgpuPicker::new(&parts, picking_vk::PickerConfig::default()).err().expect("refused");
        assert!(matches!(err, WgpuPickError::ForeignDevice(w) if w == what), "{err}");
    }
    common::assert_no_messages();
}

#[test]
fn refuses_a_backend_other_than_vulkan() {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = wgpu::Backends::NOOP;
    desc.backend_options.noop.enable = true;
    let instance = wgpu::Instance::new(desc);
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default())).expect("the noop adapter");
    let err = picking_vk_wgpu::request_device(&adapter, &wgpu::DeviceDescriptor::default(), picking_vk::PickFeatures::NONE).expect_err("refused");
    assert!(matches!(&err, WgpuPickError::NotVulkan { backend } if backend.to_lowercase().contains("noop")), "{err}");
    assert!(err.to_string().contains("Vulkan"), "{err}");
    assert!(matches!(picking_vk_wgpu::offered(&adapter), Err(WgpuPickError::NotVulkan { .. })));
}

/// An app that asks wgpu for barycentrics as well as picking for detail: wgpu chains the
/// barycentric feature structure itself, and the device opens without a second one (two broke
/// VUID-VkDeviceCreateInfo-sType-unique). On an adapter without barycentrics (lavapipe) the
/// bridge offers no detail and wgpu no barycentrics.
#[test]
fn detail_beside_the_apps_own_barycentrics_opens_one_device() {
    let adapter = common::adapter();
    let offered = picking_vk_wgpu::offered(&adapter).expect("a Vulkan adapter");
    let barycentrics = adapter.features().contains(wgpu::Features::SHADER_BARYCENTRICS);
    if !barycentrics {
        assert!(!offered.contains(picking_vk::PickFeatures::DETAIL), "detail needs the barycentric extension wgpu reports as SHADER_BARYCENTRICS");
        return;
    }
    let desc = wgpu::DeviceDescriptor { required_features: wgpu::Features::SHADER_BARYCENTRICS, ..Default::default() };
    let gpu = picking_vk_wgpu::request_device(&adapter, &desc, offered).expect("the device");
    assert!(gpu.features().contains(picking_vk::PickFeatures::DETAIL) && gpu.device.features().contains(wgpu::Features::SHADER_BARYCENTRICS));
    let config = picking_vk::PickerConfig::default().with_detail(picking_vk::DetailMode::IfEnabled);
    let picker = WgpuPicker::new(&gpu, config).expect("the picker");
    assert_eq!(*picker.picker().detail_status(), picking_vk::config::DetailStatus::Active);
    drop(picker);
    common::assert_no_messages();
}
