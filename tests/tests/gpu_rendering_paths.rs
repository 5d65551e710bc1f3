//! Dynamic rendering against render passes: the same frames give the same results on both
//! paths (points, radius, both rectangle modes; random scenes, both depth conventions), and a
//! picker asked for dynamic rendering that the host did not enable is refused by name. The
//! whole GPU suite also runs on each path (`PICKING_VK_TEST_RENDERING`, see tools/test.sh).

use glam::UVec2;
use picking_vk::{
    config::PassRendering, error::Requirement, DepthConvention, FrameResults, PickDraw, PickError, PickFeatures, PickQuery, PickRequest, Picker, PickerConfig,
    PixelRect, QueryResult, RectMode, Snap, Viewport,
};
use picking_vk_tests::harness::{random_pixels, random_scene_camera, Gpu};
use picking_vk_tests::scene::Scene;

const W: u32 = 160;
const H: u32 = 120;

fn run_queries(gpu: &Gpu, picker: &mut Picker, request: &PickRequest<'_>, queries: &[PickQuery], draws: &[PickDraw]) -> FrameResults {
    // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
    gpu.run(|cmd| unsafe { picker.record(cmd, 0, request, queries, draws) }.map(|_| ()).expect("record"));
    // SAFETY: `run` waited for the frame.
    unsafe { picker.take_results(0) }.expect("resolve").expect("pending")
}

#[test]
fn render_passes_and_dynamic_rendering_give_the_same_results() {
    let gpu = Gpu::new();
    let features = gpu.ctx.picking_features;
    assert!(features.contains(PickFeatures::DYNAMIC_RENDERING), "the test device (lavapipe) offers dynamic rendering, and the context enables it");
    let mut hits = 0;
    let mut rect_objects = 0;
    for seed in picking_vk_tests::harness::seeds(0..4) {
        let gs = Scene::random(200 + seed).upload(&gpu.ctx);
        let depth = if seed % 2 == 0 { DepthConvention::Standard } else { DepthConvention::Reverse };
        let (view, proj) = random_scene_camera(depth, W, H);
        let request = PickRequest::new(Viewport::full(W, H), view, proj);
        let covered = gpu.covered_pixels(&request, &gs.draws, seed);
        let mut queries: Vec<PickQuery> = covered.iter().take(6).map(|&p| PickQuery::Point(p)).collect();
        queries.extend(random_pixels(seed, 4, W, H).into_iter().map(|pixel| PickQuery::Radius { pixel, radius: 5, snap: Snap::Nearest }));
        queries.push(PickQuery::Rect { rect: PixelRect::new(UVec2::new(10, 8), UVec2::new(150, 110)), mode: RectMode::Visible });
        if features.contains(PickFeatures::SELECT_THROUGH) {
            queries.push(PickQuery::Rect { rect: PixelRect::new(UVec2::new(30, 20), UVec2::new(120, 90)), mode: RectMode::All });
        }
        let mut results = vec![];
        for rendering in [PassRendering::RenderPass, PassRendering::Dynamic] {
            // A small rectangle tile, so the rectangles take several passes each.
            let config = PickerConfig::default().with_rendering(rendering).with_rect_tile(64, 48);
            // SAFETY: the context's handles outlive the picker.
            let mut picker = unsafe { Picker::new(gpu.ctx.host_device(), config) }.expect("picker");
            results.push(run_queries(&gpu, &mut picker, &request, &queries, &gs.draws).results);
        }
        assert_eq!(results[0], results[1], "seed {seed}: render pass and dynamic rendering disagree");
        for r in &results[0] {
            match r {
                QueryResult::Point(p) => hits += usize::from(p.hit.is_some()),
                QueryResult::Rect(rect) => rect_objects += rect.objects.len(),
                QueryResult::Radius { .. } => {}
            }
        }
    }
    assert!(hits >= 20, "the covered pixels hit something: {hits}");
    assert!(rect_objects >= 4, "the rectangles found objects: {rect_objects}");
    gpu.assert_no_validation_messages();
}

#[test]
fn dynamic_rendering_the_host_did_not_enable_is_refused_by_name() {
    let gpu = Gpu::new();
    let without = gpu.ctx.picking_features.intersection(PickFeatures::BATCHING | PickFeatures::SELECT_THROUGH | PickFeatures::DETAIL);
    let config = PickerConfig::default().with_rendering(PassRendering::Dynamic);
    // SAFETY: the context's handles belong together; a refused picker creates nothing.
    let refused = unsafe { Picker::new(gpu.ctx.host_device().with_features(without), config) };
    match refused {
        Err(PickError::Unsupported { missing }) => {
            assert!(missing.iter().any(|m| matches!(m, Requirement::Feature(name) if name.starts_with("dynamicRendering"))), "{missing:?}");
        }
        Err(other) => panic!("expected Unsupported, got {other}"),
        Ok(_) => panic!("dynamic rendering was not claimed by the host, yet the picker was made"),
    }
    // Claimed, it works.
    // SAFETY: as above.
    let picker = unsafe { Picker::new(gpu.ctx.host_device(), config) };
    assert!(picker.is_ok(), "{:?}", picker.err());
    drop(picker);
    gpu.assert_no_validation_messages();
}
