//! Parity: the 1x1 pick pass against (a) a full-resolution ID render of the same scene and
//! (b) the CPU ray oracle, at random pixels of random scenes, their instanced field also
//! culled by the GPU planner.

use glam::Mat4;
use picking_vk::debug::IdImage;
use picking_vk::draw::InstanceBinding;
use picking_vk::{DepthConvention, ObjectId, PickDraw, PickRequest, PickerConfig};
use picking_vk_tests::harness::{random_pixels, random_scene_camera, Gpu};
use picking_vk_tests::oracle::{Oracle, OracleCamera};
use picking_vk_tests::scene::Scene;

const W: u32 = 160;
const H: u32 = 120;
const BATCH: usize = 64;

fn camera(depth: DepthConvention) -> (Mat4, Mat4) {
    random_scene_camera(depth, W, H)
}

#[test]
fn pick_pass_matches_full_resolution_id_render() {
    let gpu = Gpu::new();
    let mut compared = 0;
    let mut hits = 0;
    let mut depth_exact = 0;
    let mut worst_depth = 0.0f32;
    for (seed, depth) in [(1, DepthConvention::Standard), (2, DepthConvention::Reverse), (3, DepthConvention::Standard)] {
        let gs = Scene::random(seed).upload(&gpu.ctx);
        let (view, proj) = camera(depth);
        let vp = picking_vk::Viewport::full(W, H);
        let mut picker = gpu.picker(PickerConfig::default().with_frames_in_flight(BATCH));
        // SAFETY: the context's handles outlive the image.
        let mut full = unsafe { IdImage::new(gpu.ctx.host_device(), W, H) }.unwrap();
        let request = PickRequest::new(vp, view, proj);
        // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
        gpu.run(|cmd| unsafe { full.record(cmd, &request, &gs.draws, None, picking_vk::debug::IdCopy::Whole) }.map(|_| ()).unwrap());
        // SAFETY: `run` waited for completion.
        let texels = unsafe { full.read() }.unwrap();
        for chunk in random_pixels(seed * 77, 320, W, H).chunks(BATCH) {
            for (r, p) in gpu.pick_batch(&mut picker, &request, chunk, &gs.draws).iter().zip(chunk) {
                let t = texels[(p.y * W + p.x) as usize];
                assert_eq!(r.id(), ObjectId::from_words(t.id), "seed {seed} pixel {p}");
                if let Some(hit) = &r.hit {
                    hits += 1;
                    // Same fragment, but the rasterizer's depth plane is evaluated from a
                    // shifted origin: allow float rounding, and count exact matches.
                    let diff = (hit.depth - t.depth).abs();
                    assert!(diff <= 1e-6, "seed {seed} pixel {p}: depth {} vs {}", hit.depth, t.depth);
                    depth_exact += usize::from(diff == 0.0);
                    worst_depth = worst_depth.max(diff);
                    assert_eq!(hit.instance.unwrap_or(0), t.draw_instance[1], "seed {seed} pixel {p}: instance");
                }
                compared += 1;
            }
        }
        drop((picker, full, gs));
    }
    eprintln!("full-resolution parity: {compared}/{compared} pixels with identical ID and instance; of {hits} hits, {depth_exact} with bit-identical depth, worst difference {worst_depth:.1e}");
    assert!(hits > compared / 5, "scenes should cover a good part of the view");
    gpu.assert_no_validation_messages();
}

#[test]
fn pick_pass_agrees_with_the_cpu_ray_oracle_on_random_scenes() {
    let gpu = Gpu::new();
    let (mut agree, mut ambiguous, mut total, mut hits, mut gpu_plans) = (0usize, 0usize, 0usize, 0usize, 0usize);
    let mut worst_distance = 0.0f64;
    for seed in picking_vk_tests::harness::seeds(11..16) {
        let depth = if seed % 2 == 0 { DepthConvention::Reverse } else { DepthConvention::Standard };
        let scene = Scene::random(seed);
        let gs = scene.upload(&gpu.ctx);
        // The same draws with the instanced field's transforms known only to the GPU (read as
        // vertex attributes of a buffer the planner may read as storage): the GPU planner
        // culls its instances.
        let gpu_planned: Vec<PickDraw> = gs
            .draws
            .iter()
            .map(|d| match d.instances {
                Some(_) => {
                    let mut d = d.clone().with_instance_binding(InstanceBinding::VertexAndStorageBuffer);
                    d.instance_transforms = None;
                    d
                }
                None => d.clone(),
            })
            .collect();
        let (view, proj) = camera(depth);
        let vp = picking_vk::Viewport::full(W, H);
        let oracle = Oracle::new(&scene, OracleCamera::new(view, proj, [0.0, 0.0, W as f64, H as f64]));
        let mut picker = gpu.picker(PickerConfig::default().with_frames_in_flight(BATCH));
        let request = PickRequest::new(vp, view, proj);
        let pixels = random_pixels(seed * 31, 448, W, H);
        let chunks = pixels.chunks(BATCH).map(|c| (c, &gs.draws)).chain(pixels.chunks(BATCH).map(|c| (c, &gpu_planned)));
        for (chunk, draws) in chunks {
            for (r, &p) in gpu.pick_batch(&mut picker, &request, chunk, draws).iter().zip(chunk) {
                gpu_plans += usize::from(r.stats.gpu_plan.is_some_and(|s| s.ranges > 0));
                total += 1;
                let want = oracle.pick(p);
                if want.ambiguous {
                    ambiguous += 1;
                    continue;
                }
                let got = r.hit.as_ref().map(|h| (h.id.get(), h.instance));
                let expected = want.hit.map(|h| (h.id, h.instance));
                assert_eq!(got, expected, "seed {seed} {depth:?} pixel {p}: GPU {got:?}, oracle {:?}", want.hit);
                if let (Some(h), Some(w)) = (&r.hit, want.hit) {
                    hits += 1;
                    let rel = (h.distance - w.distance).abs() / w.distance;
                    worst_distance = worst_distance.max(rel);
                    assert!(rel < 2e-3, "seed {seed} pixel {p}: distance {} vs oracle {}", h.distance, w.distance);
                }
                agree += 1;
            }
        }
        drop((picker, gs));
    }
    eprintln!("CPU oracle parity: {agree} of {} unambiguous pixels agree ({hits} hits, worst relative distance error {worst_distance:.2e}; {gpu_plans} picks planned on the GPU); {ambiguous} of {total} pixels skipped as within a pixel of an edge/silhouette or a depth tie", total - ambiguous);
    assert!(agree >= 1000, "need at least 1000 compared pixels, got {agree}");
    assert!(gpu_plans > 20, "picks of the field planned on the GPU: {gpu_plans}");
    gpu.assert_no_validation_messages();
}
