//! The picker under misuse and loss: a lost device is sticky and nothing it wrote is read;
//! a bad draw is refused whether or not the cursor's ray would cull it; `record` counts
//! skipped and culled draws alike for borrowed and shared lists; projective matrices are
//! never culled; views of billions of pixels are refused without overflow.

use glam::{Mat4, UVec2, Vec3, Vec4};
use picking_vk::{DepthConvention, PickError, PickQuery, PickRequest, PickerConfig, Viewport};
use picking_vk_tests::harness::{random_pixels, random_scene_camera, Gpu};
use picking_vk_tests::scene::{Mesh, Object, Scene};
use std::sync::Arc;

const W: u32 = 96;
const H: u32 = 64;

#[test]
fn a_lost_device_is_sticky_and_nothing_it_wrote_is_read() {
    let gpu = Gpu::new();
    let gs = Scene::random(41).upload(&gpu.ctx);
    let (view, proj) = random_scene_camera(DepthConvention::Standard, W, H);
    let request = PickRequest::new(Viewport::full(W, H), view, proj);
    let centre = UVec2::new(W / 2, H / 2);
    let mut picker = gpu.picker(PickerConfig::default().with_frames_in_flight(2));
    gpu.pick(&mut picker, &request, centre, &gs.draws);
    // A frame is recorded and submitted; then the host's own wait reports the loss.
    gpu.run(|cmd| {
        // SAFETY: recording outside a render pass; the draws outlive the wait in `run`.
        unsafe { picker.record(cmd, 1, &request, &[PickQuery::Point(centre)], &gs.draws) }.unwrap();
    });
    picker.mark_device_lost();
    assert!(picker.is_device_lost());
    // SAFETY: the frame completed (`run` waited); the picker must not read it anyway.
    assert!(matches!(unsafe { picker.take_results(1) }, Err(PickError::DeviceLost)));
    // SAFETY: as above.
    assert!(matches!(unsafe { picker.take_results(0) }, Err(PickError::DeviceLost)));
    let mut refused = None;
    gpu.run(|cmd| {
        // SAFETY: as above; a refused record records nothing.
        refused = Some(unsafe { picker.record(cmd, 0, &request, &[PickQuery::Point(centre)], &gs.draws) });
    });
    assert!(matches!(refused, Some(Err(PickError::DeviceLost))));
    assert!(!picker.is_pending(0) && !picker.is_pending(1));
    drop((picker, gs));
    gpu.assert_no_validation_messages();
}

#[test]
fn a_bad_draw_is_refused_even_where_culling_would_drop_it() {
    let gpu = Gpu::new();
    let scene = Scene {
        meshes: vec![Mesh::quad(1.0)],
        objects: vec![Object::new(1, 0, Mat4::IDENTITY), Object::new(2, 0, Mat4::from_translation(Vec3::new(50.0, 0.0, 0.0)))],
    };
    let gs = scene.upload(&gpu.ctx);
    let mut draws = gs.draws.clone();
    // The far draw (off screen, culled for any pixel) claims more vertices than its buffer holds.
    draws[1].positions.vertex_count += 1000;
    let (view, proj) = random_scene_camera(DepthConvention::Standard, W, H);
    let request = PickRequest::new(Viewport::full(W, H), view, proj);
    let centre = [PickQuery::Point(UVec2::new(W / 2, H / 2))];
    let mut picker = gpu.picker(PickerConfig::default().with_frames_in_flight(1).with_culling(true));
    let shared: Arc<[picking_vk::PickDraw]> = draws.clone().into();
    let mut outcomes = vec![];
    gpu.run(|cmd| {
        // SAFETY: recording outside a render pass; refused requests record nothing.
        outcomes.push(unsafe { picker.record(cmd, 0, &request, &centre, &draws) }.map(|_| ()));
        // SAFETY: as above.
        outcomes.push(unsafe { picker.record(cmd, 0, &request, &centre, &shared) }.map(|_| ()));
    });
    for outcome in outcomes {
        assert!(matches!(outcome, Err(PickError::InvalidDraw { index: 1, .. })), "{outcome:?}");
    }
    assert!(!picker.is_pending(0));
    drop((picker, gs));
    gpu.assert_no_validation_messages();
}

/// Views of billions of pixels (finite, past the device's limits, or infinite) with rectangles
/// over all of them: the set is weighed and its tiles counted before the viewport meets the
/// device's limits, and those counts passed u64 (a panic with overflow checks on). Each must
/// be refused with an error, on both list paths, with one-pixel tiles and the default ones.
#[test]
fn views_of_billions_of_pixels_are_refused_not_overflowed() {
    let gpu = Gpu::new();
    let gs = Scene::random(43).upload(&gpu.ctx);
    let shared: Arc<[picking_vk::PickDraw]> = gs.draws.clone().into();
    let (view, proj) = random_scene_camera(DepthConvention::Standard, W, H);
    let everything = PickQuery::Rect { rect: picking_vk::PixelRect::new(UVec2::ZERO, UVec2::MAX), mode: picking_vk::RectMode::Visible };
    let huge =
        [Viewport { width: 4.0e9, height: 4.0e9, ..Viewport::full(W, H) }, Viewport { width: f32::INFINITY, height: f32::INFINITY, ..Viewport::full(W, H) }];
    for config in [PickerConfig::default().with_rect_tile(1, 1), PickerConfig::default()] {
        let mut picker = gpu.picker(config.with_frames_in_flight(1));
        for viewport in huge {
            let request = PickRequest::new(viewport, view, proj);
            let mut outcomes = vec![];
            gpu.run(|cmd| {
                // SAFETY: recording outside a render pass; refused requests record nothing.
                outcomes.push(unsafe { picker.record(cmd, 0, &request, &[everything; 2], &gs.draws) }.map(|_| ()));
                // SAFETY: as above.
                outcomes.push(unsafe { picker.record(cmd, 0, &request, &[everything; 2], &shared) }.map(|_| ()));
            });
            for outcome in outcomes {
                assert!(outcome.is_err(), "{viewport:?}: {outcome:?}");
            }
            assert!(!picker.is_pending(0));
        }
    }
    drop(gs);
    gpu.assert_no_validation_messages();
}

#[test]
fn per_frame_and_shared_lists_count_skipped_and_culled_draws_alike() {
    let gpu = Gpu::new();
    let mut gs = Scene::random(42).upload(&gpu.ctx);
    for (i, draw) in gs.draws.iter_mut().enumerate() {
        draw.pickable = i % 3 != 0;
    }
    // A projective model matrix (w depends on z): never culled, drawn as the host draws it.
    let mut projective = Mat4::from_translation(Vec3::new(0.0, 0.0, -5.0));
    projective.w_axis = Vec4::new(0.0, 0.0, -5.0, 1.02);
    gs.draws[1].model = projective;
    let (view, proj) = random_scene_camera(DepthConvention::Standard, W, H);
    let shared: Arc<[picking_vk::PickDraw]> = gs.draws.clone().into();
    let mut culled = gpu.picker(PickerConfig::default().with_frames_in_flight(2).with_culling(true));
    let mut full = gpu.picker(PickerConfig::default().with_frames_in_flight(1).with_culling(false));
    let request = PickRequest::new(Viewport::full(W, H), view, proj);
    let mut compared = 0;
    for p in random_pixels(42, 48, W, H) {
        let point = [PickQuery::Point(p)];
        let mut tickets = vec![];
        gpu.run(|cmd| {
            // SAFETY: recording outside a render pass; the draws outlive the wait in `run`.
            unsafe {
                tickets.push(culled.record(cmd, 0, &request, &point, &gs.draws).unwrap());
                tickets.push(culled.record(cmd, 1, &request, &point, &shared).unwrap());
                tickets.push(full.record(cmd, 0, &request, &point, &gs.draws).unwrap());
            }
        });
        // The two culling paths may keep different conservative supersets, but every draw is
        // counted once, and unpickable ones the same way.
        let [a, b] = [tickets[0].stats, tickets[1].stats];
        assert_eq!(a.draws_skipped, b.draws_skipped, "pixel {p}: {a:?} vs {b:?}");
        for s in [a, b] {
            assert_eq!((s.draws_recorded + s.draws_skipped + s.draws_culled) as usize, gs.draws.len(), "pixel {p}: {s:?}");
        }
        // SAFETY: `run` waited for the frame.
        let results = unsafe { [culled.take_results(0), culled.take_results(1), full.take_results(0)] }.map(|r| r.unwrap().unwrap().pick(0).unwrap().clone());
        let key = |r: &picking_vk::PickResult| r.hit.as_ref().map(|h| (h.id, h.instance, h.depth.to_bits(), h.draw_index));
        assert_eq!(key(&results[0]), key(&results[2]), "pixel {p}: culled vs full");
        assert_eq!(key(&results[1]), key(&results[2]), "pixel {p}: shared vs full");
        compared += 1;
    }
    assert_eq!(compared, 48);
    drop((culled, full, gs));
    gpu.assert_no_validation_messages();
}
