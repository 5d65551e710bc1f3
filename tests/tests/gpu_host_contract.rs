//! The host contract as an engine meets it: its own viewport (y-flipped), its own depth
//! convention (read off the projection, a contradicting statement refused), and its own
//! draw indices and tags reported back whatever was culled.

use glam::{Mat4, UVec2};
use picking_vk::{DepthConvention, PickError, PickRequest, PickerConfig, Viewport};
use picking_vk_tests::harness::{random_pixels, random_scene_camera, Gpu};
use picking_vk_tests::scene::Scene;

const W: u32 = 160;
const H: u32 = 120;
const BATCH: usize = 64;

#[test]
fn a_y_flipped_viewport_picks_what_the_host_shows() {
    let gpu = Gpu::new();
    let mut picker = gpu.picker(PickerConfig::default().with_frames_in_flight(BATCH));
    let (mut compared, mut same, mut hits) = (0, 0, 0);
    for (seed, depth) in [(31, DepthConvention::Standard), (32, DepthConvention::Reverse)] {
        let gs = Scene::random(seed).upload(&gpu.ctx);
        let (view, proj) = random_scene_camera(depth, W, H);
        // The usual GL-style host: projection with y up, viewport flipped back with a
        // negative height. It shows exactly what the plain Vulkan setup shows.
        let y_up = Mat4::from_scale(glam::Vec3::new(1.0, -1.0, 1.0)) * proj;
        let flipped = Viewport { y: H as f32, height: -(H as f32), ..Viewport::full(W, H) };
        let pixels = random_pixels(seed, BATCH, W, H);
        let plain: Vec<_> = pixels.iter().map(|&p| PickRequest::new(p, Viewport::full(W, H), view, proj)).collect();
        let host: Vec<_> = pixels.iter().map(|&p| PickRequest::new(p, flipped, view, y_up)).collect();
        let a = gpu.pick_batch(&mut picker, &plain, &gs.draws);
        let b = gpu.pick_batch(&mut picker, &host, &gs.draws);
        for ((ra, rb), p) in a.iter().zip(&b).zip(&pixels) {
            compared += 1;
            hits += usize::from(ra.hit.is_some());
            if ra.id() == rb.id() {
                same += 1;
                if let (Some(ha), Some(hb)) = (&ra.hit, &rb.hit) {
                    assert!((ha.depth - hb.depth).abs() < 1e-5, "pixel {p}: depth {} vs {}", ha.depth, hb.depth);
                    assert!((ha.world - hb.world).length() < 1e-3 * ha.distance, "pixel {p}: {:?} vs {:?}", ha.world, hb.world);
                }
            }
        }
    }
    eprintln!("y-flipped viewport: {same}/{compared} pixels name the same object ({hits} hits)");
    // A mirrored pick agrees on about half the pixels; rasterization rounding may move a few edges.
    assert!(same * 100 >= compared * 98, "{same}/{compared}");
    assert!(hits * 5 > compared, "{hits} hits of {compared}: the scenes cover enough of the view");
    drop(picker);
    gpu.assert_no_validation_messages();
}

#[test]
fn the_depth_convention_is_read_off_the_projection_and_a_contradiction_is_refused() {
    let gpu = Gpu::new();
    let gs = Scene::random(33).upload(&gpu.ctx);
    let mut picker = gpu.picker(PickerConfig::default().with_frames_in_flight(2));
    let (view, reverse) = random_scene_camera(DepthConvention::Reverse, W, H);
    let pixel = UVec2::new(W / 2, H / 2);
    let request = PickRequest::new(pixel, Viewport::full(W, H), view, reverse);
    let inferred = gpu.pick(&mut picker, &request, &gs.draws);
    let stated = gpu.pick(&mut picker, &request.with_depth(DepthConvention::Reverse), &gs.draws);
    assert!(inferred.hit.is_some(), "the centre of the random scene is covered");
    assert_eq!(inferred.hit, stated.hit);
    let mut refused = None;
    gpu.run(|cmd| {
        // SAFETY: recording outside a render pass; a refused request records nothing.
        refused = Some(unsafe { picker.record(cmd, 0, &request.with_depth(DepthConvention::Standard), &gs.draws) });
    });
    match refused {
        Some(Err(PickError::InvalidRequest(why))) => assert!(why.contains("Standard") && why.contains("Reverse"), "{why}"),
        other => panic!("expected a refusal, got {:?}", other.map(|r| r.map(|_| ()))),
    }
    assert!(!picker.is_pending(0), "a refused request records nothing");
    drop(picker);
    gpu.assert_no_validation_messages();
}

#[test]
fn hits_report_the_hosts_draw_index_and_tag_whatever_was_culled() {
    let gpu = Gpu::new();
    let mut gs = Scene::random(34).upload(&gpu.ctx);
    for (i, draw) in gs.draws.iter_mut().enumerate() {
        draw.tag = 1000 + 7 * i as u64;
    }
    let (view, proj) = random_scene_camera(DepthConvention::Standard, W, H);
    let pixels = random_pixels(34, BATCH, W, H);
    let requests: Vec<_> = pixels.iter().map(|&p| PickRequest::new(p, Viewport::full(W, H), view, proj)).collect();
    let mut culled = gpu.picker(PickerConfig::default().with_frames_in_flight(BATCH).with_culling(true));
    let mut hits = 0;
    let mut culled_draws = 0;
    for r in gpu.pick_batch(&mut culled, &requests, &gs.draws) {
        culled_draws += r.stats.pass.draws_culled;
        let Some(hit) = r.hit else { continue };
        hits += 1;
        let draw = &gs.draws[hit.draw_index as usize];
        assert_eq!((draw.id, draw.tag), (hit.id, hit.tag), "the hit names the host's own draw");
    }
    assert!(hits > 10 && culled_draws > 0, "{hits} hits, {culled_draws} draws culled");
    drop(culled);
    gpu.assert_no_validation_messages();
}
