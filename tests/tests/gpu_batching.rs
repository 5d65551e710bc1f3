//! Batched recording (runs of draws that share buffers become one indirect draw) changes the
//! CPU cost, never the answer: every pixel returns the same ID, instance and depth bits as
//! draws recorded one by one, including draws past the batch capacity.

use glam::{Mat4, Quat, UVec2, Vec3};
use picking_vk::{DepthConvention, ObjectId, PickDraw, PickRequest, PickerConfig, Viewport};
use picking_vk_tests::harness::{random_pixels, random_scene_camera, Gpu};
use picking_vk_tests::scene::Scene;

const W: u32 = 160;
const H: u32 = 120;
const SLOTS: usize = 48;
const BATCH_ROWS: u32 = 12;

/// Many draws made from few buffers: each object of a random scene is drawn several times
/// in a row with other poses and IDs, so consecutive draws share their buffers (long runs),
/// and instanced draws and layout changes split the runs.
fn shared_buffer_draws(base: &[PickDraw], seed: u64) -> Vec<PickDraw> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut out = vec![];
    let mut id = 1u64 << 40;
    for draw in base {
        for _ in 0..4 {
            let t = Vec3::new(rng.f32() * 5.0 - 2.5, rng.f32() * 3.6 - 1.8, -4.0 - rng.f32() * 6.0);
            let axis = Vec3::new(rng.f32() - 0.5, rng.f32() - 0.5, rng.f32() - 0.5).normalize_or(Vec3::Y);
            let scale = Vec3::new(0.4 + rng.f32(), 0.4 + rng.f32(), 0.4 + rng.f32());
            let mut d = draw.clone().with_model(Mat4::from_scale_rotation_translation(scale, Quat::from_axis_angle(axis, rng.f32() * 6.0), t));
            d.id = ObjectId::new(id).unwrap();
            id += 1 + rng.u64(..50);
            out.push(d);
        }
    }
    out
}

#[test]
fn batched_recording_never_changes_a_result() {
    let gpu = Gpu::new();
    let (mut compared, mut hits, mut max_recorded) = (0usize, 0usize, 0u64);
    for (seed, depth, culling) in [(71, DepthConvention::Standard, false), (72, DepthConvention::Reverse, false), (73, DepthConvention::Standard, true)] {
        let gs = Scene::random(seed).upload(&gpu.ctx);
        let draws = shared_buffer_draws(&gs.draws, seed);
        let (view, proj) = random_scene_camera(depth, W, H);
        let config = PickerConfig::default().with_frames_in_flight(SLOTS).with_culling(culling).with_batch_rows(BATCH_ROWS);
        let mut batched = gpu.picker(config);
        let mut direct = gpu.picker(config.with_batch_rows(0));
        assert!(batched.batching_active(), "lavapipe offers multiDrawIndirect and drawIndirectFirstInstance; the context enables them");
        assert!(!direct.batching_active());
        let memory = batched.memory();
        assert!(memory.draw_batches >= SLOTS as u64 * u64::from(BATCH_ROWS) * 100, "{memory:?}");
        assert_eq!(direct.memory().draw_batches, 0);
        let mut pixels = vec![UVec2::new(0, 0), UVec2::new(W - 1, H - 1), UVec2::new(W / 2, H / 2)];
        pixels.extend(random_pixels(seed, 2 * SLOTS - 3, W, H));
        let request = PickRequest::new(Viewport::full(W, H), view, proj);
        for chunk in pixels.chunks(SLOTS) {
            let a = gpu.pick_batch(&mut batched, &request, chunk, &draws);
            let b = gpu.pick_batch(&mut direct, &request, chunk, &draws);
            for ((ra, rb), p) in a.iter().zip(&b).zip(chunk) {
                let key = |r: &picking_vk::PickResult| r.hit.as_ref().map(|h| (h.id, h.instance, h.depth.to_bits(), h.draw_index));
                assert_eq!(key(ra), key(rb), "seed {seed} {depth:?} culling {culling} pixel {p}: batched vs direct");
                assert_eq!(ra.stats.pass, rb.stats.pass);
                hits += usize::from(ra.hit.is_some());
                max_recorded = max_recorded.max(ra.stats.pass.draws_recorded);
                compared += 1;
            }
        }
        assert_eq!(batched.memory(), memory, "batch buffers are allocated once");
        drop((batched, direct, gs));
    }
    eprintln!("batching parity: {compared} pixels identical batched and direct ({hits} hits); up to {max_recorded} draws per pick, {BATCH_ROWS} rows per slot");
    assert!(hits > compared / 3, "the scenes cover much of the view");
    assert!(max_recorded > 2 * u64::from(BATCH_ROWS), "some picks overflow the batch rows and record the rest directly");
    gpu.assert_no_validation_messages();
}

#[test]
fn batching_stays_off_unless_the_host_enabled_its_features() {
    let gpu = Gpu::new();
    let features = gpu.ctx.picking_features.intersection(picking_vk::PickFeatures::DETAIL);
    assert!(gpu.ctx.picking_features.contains(picking_vk::PickFeatures::BATCHING), "the context enables batching where offered");
    let host = gpu.ctx.host_device().with_features(features);
    // SAFETY: the context's handles belong together and outlive the picker.
    let picker = unsafe { picking_vk::Picker::new(host, PickerConfig::default()) }.unwrap();
    assert!(!picker.batching_active());
    assert_eq!(picker.memory().draw_batches, 0);
    drop(picker);
    gpu.assert_no_validation_messages();
}
