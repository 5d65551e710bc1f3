//! Query sets: many points, pick radius and rectangles in one frame, checked against a
//! full-resolution ID image (points, radius, `Visible` rectangles, exact pixel counts), the
//! CPU ray oracle with all hits (`All` rectangles), separate picks, and culling off.

use glam::{Mat4, UVec2};
use picking_vk::debug::Texels;
use picking_vk::error::{Input, Limit};
use picking_vk::{
    DepthConvention, ObjectId, PickDraw, PickError, PickFeatures, PickQuery, PickRequest, PickerConfig, PixelRect, QueryResult, RectMode, Snap, Viewport,
};
use picking_vk_tests::harness::{random_pixels, random_scene_camera, Gpu};
use picking_vk_tests::oracle::{Oracle, OracleCamera};
use picking_vk_tests::scene::Scene;
use std::collections::BTreeMap;

const W: u32 = 160;
const H: u32 = 120;

/// The object key a rectangle reports: the ID, and the instance for instanced draws.
fn key_of(t: &Texels, instanced: &impl Fn(u64) -> bool) -> Option<(u64, Option<u32>)> {
    let id = ObjectId::from_words(t.id)?.get();
    Some((id, instanced(id).then_some(t.draw_instance[1])))
}

fn nearer(a: f32, b: f32, depth: DepthConvention) -> bool {
    match depth {
        DepthConvention::Standard => a < b,
        DepthConvention::Reverse => a > b,
    }
}

#[test]
fn sixteen_points_in_one_frame_equal_sixteen_separate_picks() {
    let gpu = Gpu::new();
    let gs = Scene::random(11).upload(&gpu.ctx);
    let (view, proj) = random_scene_camera(DepthConvention::Standard, W, H);
    let vp = Viewport::full(W, H);
    let request = PickRequest::new(vp, view, proj);
    let mut set_picker = gpu.picker(PickerConfig::default());
    let mut single = gpu.picker(PickerConfig::default().with_frames_in_flight(16));
    let covered = gpu.covered_pixels(&request, &gs.draws, 5);
    let mut pixels: Vec<UVec2> = covered.iter().take(12).copied().collect();
    pixels.extend(random_pixels(9, 16 - pixels.len(), W, H));
    let queries: Vec<PickQuery> = pixels.iter().map(|&p| PickQuery::Point(p)).collect();
    let set = gpu.run_queries(&mut set_picker, &request, &queries, &gs.draws);
    let separate = gpu.pick_batch(&mut single, &request, &pixels, &gs.draws);
    let mut hits = 0;
    for (i, one) in separate.iter().enumerate() {
        let QueryResult::Point(r) = &set.results[i] else { panic!("query {i} is a point") };
        assert_eq!(r.pixel, pixels[i]);
        let key = |r: &picking_vk::PickResult| r.hit.as_ref().map(|h| (h.id, h.instance, h.draw_index));
        assert_eq!(key(r), key(one), "pixel {}", pixels[i]);
        // The same pixel rasterized at another place in the target: depth to float rounding.
        if let (Some(a), Some(b)) = (&r.hit, &one.hit) {
            assert!((a.depth - b.depth).abs() <= 1e-6, "pixel {}: depth {} vs {}", pixels[i], a.depth, b.depth);
        }
        hits += usize::from(r.hit.is_some());
    }
    assert!(hits >= 12, "the covered pixels hit: {hits}");
    drop((set_picker, single, gs));
    gpu.assert_no_validation_messages();
}

#[test]
fn a_pixel_asked_twice_in_one_set_is_drawn_once_and_answers_both() {
    let gpu = Gpu::new();
    let gs = Scene::random(12).upload(&gpu.ctx);
    let (view, proj) = random_scene_camera(DepthConvention::Standard, W, H);
    let request = PickRequest::new(Viewport::full(W, H), view, proj);
    let mut picker = gpu.picker(PickerConfig::default());
    let covered = gpu.covered_pixels(&request, &gs.draws, 5);
    let (a, b) = (covered[0], covered[covered.len() / 2]);
    // Hover and click at `a`, a radius query between them, `b` twice: three distinct points.
    let repeated = [
        PickQuery::Point(a),
        PickQuery::Radius { pixel: b, radius: 2, snap: Snap::Nearest },
        PickQuery::Point(a),
        PickQuery::Point(b),
        PickQuery::Point(b),
        PickQuery::Point(a),
    ];
    let distinct = [PickQuery::Point(a), PickQuery::Radius { pixel: b, radius: 2, snap: Snap::Nearest }, PickQuery::Point(b)];
    let mut record = |queries: &[PickQuery]| {
        let mut recorded = 0;
        // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
        gpu.run(|cmd| recorded = unsafe { picker.record(cmd, 0, &request, queries, &gs.draws) }.unwrap().stats.draws_recorded);
        // SAFETY: `run` waited for the frame.
        (recorded, unsafe { picker.take_results(0) }.unwrap().unwrap())
    };
    let (recorded_twice, twice) = record(&repeated);
    let (recorded_once, once) = record(&distinct);
    assert_eq!(recorded_twice, recorded_once, "each distinct pixel drawn once");
    assert_eq!(twice.results.len(), repeated.len());
    let point = |r: &QueryResult| match r {
        QueryResult::Point(p) => (p.pixel, p.hit.as_ref().map(|h| (h.id, h.instance, h.draw_index, h.depth.to_bits()))),
        other => panic!("not a point: {other:?}"),
    };
    for (k, expected) in [(0, 0), (2, 0), (3, 2), (4, 2), (5, 0)] {
        assert_eq!(point(&twice.results[k]), point(&once.results[expected]), "query {k}");
    }
    assert!(point(&once.results[0]).1.is_some() && point(&once.results[2]).1.is_some(), "both pixels are covered");
    let (QueryResult::Radius { hit_pixel, .. }, QueryResult::Radius { hit_pixel: expected, .. }) = (&twice.results[1], &once.results[1]) else {
        panic!("query 1 is a radius query")
    };
    assert_eq!(hit_pixel, expected);
    drop((picker, gs));
    gpu.assert_no_validation_messages();
}

#[test]
fn radius_queries_match_a_brute_force_search_of_the_id_image() {
    let gpu = Gpu::new();
    let mut checked = 0;
    for (seed, depth) in [(21, DepthConvention::Standard), (22, DepthConvention::Reverse)] {
        let gs = Scene::random(seed).upload(&gpu.ctx);
        let (view, proj) = random_scene_camera(depth, W, H);
        let vp = Viewport::full(W, H);
        let request = PickRequest::new(vp, view, proj);
        let texels = gpu.id_image(&request, &gs.draws, W, H);
        let mut picker = gpu.picker(PickerConfig::default());
        let mut rng = fastrand::Rng::with_seed(seed);
        for round in 0..4 {
            let queries: Vec<PickQuery> = (0..16)
                .map(|_| PickQuery::Radius { pixel: UVec2::new(rng.u32(..W), rng.u32(..H)), radius: [0, 1, 3, 8][rng.usize(..4)], snap: Snap::Nearest })
                .collect();
            let set = gpu.run_queries(&mut picker, &request, &queries, &gs.draws);
            for (q, r) in queries.iter().zip(&set.results) {
                let PickQuery::Radius { pixel, radius, .. } = *q else { unreachable!() };
                let QueryResult::Radius { result, hit_pixel, .. } = r else { panic!("a radius result") };
                // Brute force over the whole image: nearest centre, then depth, then row-major.
                let mut best: Option<(i64, f32, UVec2)> = None;
                for y in 0..H {
                    for x in 0..W {
                        let t = &texels[(y * W + x) as usize];
                        if t.id == [0, 0] {
                            continue;
                        }
                        let d = (i64::from(x) - i64::from(pixel.x)).pow(2) + (i64::from(y) - i64::from(pixel.y)).pow(2);
                        if d > i64::from(radius).pow(2) {
                            continue;
                        }
                        if best.is_none_or(|(bd, bz, _)| d < bd || (d == bd && nearer(t.depth, bz, depth))) {
                            best = Some((d, t.depth, UVec2::new(x, y)));
                        }
                    }
                }
                let expected = best.map(|(_, _, p)| p);
                assert_eq!(*hit_pixel, expected, "seed {seed} round {round} pixel {pixel} radius {radius}");
                if let Some(p) = expected {
                    let t = &texels[(p.y * W + p.x) as usize];
                    assert_eq!(result.id(), ObjectId::from_words(t.id));
                    assert_eq!(result.pixel, p);
                    checked += 1;
                } else {
                    assert!(result.hit.is_none());
                }
            }
        }
        drop((picker, gs));
    }
    assert!(checked > 40, "enough radius queries hit: {checked}");
    gpu.assert_no_validation_messages();
}

/// Per object and instance: (pixels, nearest depth, first pixel in row-major order).
type Expected = BTreeMap<(u64, Option<u32>), (u64, f32, UVec2)>;

fn expected_visible(texels: &[Texels], rect: PixelRect, depth: DepthConvention, instanced: &impl Fn(u64) -> bool) -> Expected {
    let mut out = Expected::new();
    for y in rect.min.y..rect.max.y {
        for x in rect.min.x..rect.max.x {
            let t = &texels[(y * W + x) as usize];
            let Some(key) = key_of(t, instanced) else { continue };
            let e = out.entry(key).or_insert((0, t.depth, UVec2::new(x, y)));
            e.0 += 1;
            if nearer(t.depth, e.1, depth) {
                e.1 = t.depth;
            }
        }
    }
    out
}

#[test]
fn visible_rectangles_report_exact_pixel_counts_across_tiles() {
    let gpu = Gpu::new();
    let mut objects_checked = 0;
    for (seed, depth) in [(31, DepthConvention::Standard), (32, DepthConvention::Reverse), (33, DepthConvention::Standard)] {
        let gs = Scene::random(seed).upload(&gpu.ctx);
        let instanced_ids: Vec<u64> = gs.draws.iter().filter(|d| d.instances.is_some()).map(|d| d.id.get()).collect();
        let instanced = |id: u64| instanced_ids.contains(&id);
        let (view, proj) = random_scene_camera(depth, W, H);
        let vp = Viewport::full(W, H);
        let request = PickRequest::new(vp, view, proj);
        let texels = gpu.id_image(&request, &gs.draws, W, H);
        // Small tiles, so rectangles span several.
        let mut picker = gpu.picker(PickerConfig::default().with_rect_tile(48, 40));
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut rects = vec![PixelRect::new(UVec2::ZERO, UVec2::new(W, H)), PixelRect::new(UVec2::new(70, 50), UVec2::new(71, 51))];
        for _ in 0..4 {
            let a = UVec2::new(rng.u32(..W), rng.u32(..H));
            let b = UVec2::new(rng.u32(..W), rng.u32(..H));
            rects.push(PixelRect::spanning(a, b));
        }
        let queries: Vec<PickQuery> = rects.iter().map(|&rect| PickQuery::Rect { rect, mode: RectMode::Visible }).collect();
        let set = gpu.run_queries(&mut picker, &request, &queries, &gs.draws);
        for (rect, r) in rects.iter().zip(&set.results) {
            let QueryResult::Rect(found) = r else { panic!("a rectangle result") };
            assert_eq!(found.rect, *rect);
            let expected = expected_visible(&texels, *rect, depth, &instanced);
            let got: Expected = found.objects.iter().map(|o| ((o.id.get(), o.instance), (o.pixels, o.depth, o.pixel))).collect();
            assert_eq!(got.len(), found.objects.len(), "one entry per object and instance");
            assert_eq!(got.keys().collect::<Vec<_>>(), expected.keys().collect::<Vec<_>>(), "seed {seed} rect {rect:?}: objects");
            for (key, (pixels, z, first)) in &expected {
                let (gp, gz, gfirst) = got[key];
                assert_eq!(gp, *pixels, "seed {seed} rect {rect:?} object {key:?}: pixel count");
                assert_eq!(gfirst, *first, "seed {seed} rect {rect:?} object {key:?}: first pixel");
                assert!((gz - z).abs() <= 1e-6, "seed {seed} rect {rect:?} object {key:?}: depth {gz} vs {z}");
                objects_checked += 1;
            }
        }
        drop((picker, gs));
    }
    assert!(objects_checked > 20, "objects compared: {objects_checked}");
    gpu.assert_no_validation_messages();
}

#[test]
fn select_through_rectangles_find_everything_the_ray_oracle_hits() {
    let gpu = Gpu::new();
    assert!(gpu.ctx.picking_features.contains(PickFeatures::SELECT_THROUGH), "lavapipe offers fragmentStoresAndAtomics");
    let mut sure_total = 0;
    for seed in [41, 42] {
        let scene = Scene::random(seed);
        let gs = scene.upload(&gpu.ctx);
        let (view, proj) = random_scene_camera(DepthConvention::Standard, W, H);
        let request = PickRequest::new(Viewport::full(W, H), view, proj);
        let oracle = Oracle::new(&scene, OracleCamera::new(view, proj, [0.0, 0.0, f64::from(W), f64::from(H)]));
        let mut picker = gpu.picker(PickerConfig::default().with_rect_tile(64, 64));
        let mut rng = fastrand::Rng::with_seed(seed);
        let rects: Vec<PixelRect> = (0..3)
            .map(|_| PixelRect::new(UVec2::new(rng.u32(..W - 40), rng.u32(..H - 30)), UVec2::ZERO))
            .map(|r| PixelRect::new(r.min, r.min + UVec2::new(40, 30)))
            .collect();
        let queries: Vec<PickQuery> = rects.iter().map(|&rect| PickQuery::Rect { rect, mode: RectMode::All }).collect();
        let set = gpu.run_queries(&mut picker, &request, &queries, &gs.draws);
        for (rect, r) in rects.iter().zip(&set.results) {
            let QueryResult::Rect(found) = r else { panic!("a rectangle result") };
            let got: Vec<(u64, Option<u32>)> = found.objects.iter().map(|o| (o.id.get(), o.instance)).collect();
            let (mut sure, mut maybe) = (vec![], vec![]);
            for y in rect.min.y..rect.max.y {
                for x in rect.min.x..rect.max.x {
                    let (s, m) = oracle.all_hits(UVec2::new(x, y));
                    sure.extend(s);
                    maybe.extend(m);
                }
            }
            sure.sort_unstable();
            sure.dedup();
            for key in &sure {
                assert!(got.contains(key), "seed {seed} rect {rect:?}: the oracle's certain hit {key:?} is missing from {got:?}");
            }
            for key in &got {
                assert!(sure.contains(key) || maybe.contains(key), "seed {seed} rect {rect:?}: {key:?} was reported but no ray meets it");
            }
            sure_total += sure.len();
            // Select-through sees at least what is visible.
            let visible = gpu.run_queries(&mut picker, &request, &[PickQuery::Rect { rect: *rect, mode: RectMode::Visible }], &gs.draws);
            let QueryResult::Rect(v) = &visible.results[0] else { unreachable!() };
            for o in &v.objects {
                assert!(got.contains(&(o.id.get(), o.instance)), "visible {:?} is in the select-through set", o.id);
            }
        }
        drop((picker, gs));
    }
    assert!(sure_total > 10, "objects the oracle was sure of: {sure_total}");
    gpu.assert_no_validation_messages();
}

#[test]
fn culling_gives_identical_results_for_radius_and_rectangles() {
    let gpu = Gpu::new();
    // Per-frame and shared lists (culled through the hierarchy and bounding spheres), with the
    // usual field of view and a wide one, where rays through a rectangle's corners stray most.
    for (seed, shared, yfov) in [(51, false, 1.0), (52, false, 1.0), (53, true, 1.0), (54, true, 2.4), (55, false, 2.4)] {
        let gs = Scene::random(seed).upload(&gpu.ctx);
        let (view, _) = random_scene_camera(DepthConvention::Standard, W, H);
        let proj = glam::camera::rh::proj::vulkan::perspective(yfov, W as f32 / H as f32, 0.5, 40.0);
        let request = PickRequest::new(Viewport::full(W, H), view, proj);
        let list: std::sync::Arc<[PickDraw]> = gs.draws.clone().into();
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut queries = vec![];
        for _ in 0..6 {
            queries.push(PickQuery::Radius { pixel: UVec2::new(rng.u32(..W), rng.u32(..H)), radius: rng.u32(..=8), snap: Snap::Nearest });
            let a = UVec2::new(rng.u32(..W), rng.u32(..H));
            queries.push(PickQuery::Rect {
                rect: PixelRect::spanning(a, a + UVec2::new(rng.u32(..60), rng.u32(..40))),
                mode: [RectMode::Visible, RectMode::All][rng.usize(..2)],
            });
        }
        let mut culled = gpu.picker(PickerConfig::default().with_rect_tile(64, 48));
        let mut unculled = gpu.picker(PickerConfig::default().with_rect_tile(64, 48).with_culling(false));
        let a = if shared {
            // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
            gpu.run(|cmd| unsafe { culled.record(cmd, 0, &request, &queries, &list) }.map(|_| ()).expect("record"));
            // SAFETY: `run` waited for the frame.
            unsafe { culled.take_results(0) }.expect("resolve").expect("pending")
        } else {
            gpu.run_queries(&mut culled, &request, &queries, &gs.draws)
        };
        let b = gpu.run_queries(&mut unculled, &request, &queries, &gs.draws);
        assert!(a.stats.pass.draws_culled > 0, "culling culled something");
        assert_eq!(b.stats.pass.draws_culled, 0);
        for (i, (x, y)) in a.results.iter().zip(&b.results).enumerate() {
            match (x, y) {
                (QueryResult::Radius { result: r1, hit_pixel: p1, .. }, QueryResult::Radius { result: r2, hit_pixel: p2, .. }) => {
                    assert_eq!(
                        (p1, r1.hit.as_ref().map(|h| (h.id, h.instance, h.depth))),
                        (p2, r2.hit.as_ref().map(|h| (h.id, h.instance, h.depth))),
                        "query {i}"
                    );
                }
                (QueryResult::Rect(r1), QueryResult::Rect(r2)) => {
                    let strip = |r: &picking_vk::results::RectResult| {
                        r.objects.iter().map(|o| (o.id, o.instance, o.pixels, o.depth.to_bits(), o.pixel)).collect::<Vec<_>>()
                    };
                    assert_eq!(strip(r1), strip(r2), "query {i}: {:?}", queries[i]);
                }
                _ => panic!("query {i}: kinds differ"),
            }
        }
        drop((culled, unculled, list, gs));
    }
    gpu.assert_no_validation_messages();
}

#[test]
fn query_sets_refuse_bad_queries_and_record_nothing() {
    let gpu = Gpu::new();
    let gs = Scene::random(61).upload(&gpu.ctx);
    let (view, proj) = random_scene_camera(DepthConvention::Standard, W, H);
    let request = PickRequest::new(Viewport::full(W, H), view, proj);
    let mut picker = gpu.picker(PickerConfig::default().with_max_queries(4).with_rect_entries(2));
    let p = PickQuery::Point(UVec2::new(3, 3));
    let full = PickQuery::Rect { rect: PixelRect::new(UVec2::ZERO, UVec2::new(W, H)), mode: RectMode::Visible };
    let empty_rect = PickQuery::Rect { rect: PixelRect::new(UVec2::new(5, 5), UVec2::new(5, 9)), mode: RectMode::Visible };
    // Each refusal names its kind: which input, or which limit with its value and the ask.
    type Kind = fn(&PickError) -> bool;
    let cases: Vec<(Vec<PickQuery>, &str, Kind)> = vec![
        (vec![], "empty", |e| matches!(e, PickError::InvalidInput { input: Input::Query(None), .. })),
        (vec![p; 5], "too many", |e| matches!(e, PickError::Capacity { limit: Limit::Queries, configured: 4, asked: 5 })),
        (vec![PickQuery::Radius { pixel: UVec2::new(3, 3), radius: 9, snap: Snap::Nearest }], "radius", |e| {
            matches!(e, PickError::Capacity { limit: Limit::Radius, configured: 8, asked: 9 })
        }),
        (vec![PickQuery::Point(UVec2::new(W, 0))], "outside", |e| matches!(e, PickError::OutsideView { .. })),
        (vec![p, empty_rect], "empty rect", |e| matches!(e, PickError::InvalidInput { input: Input::Query(Some(1)), .. })),
        (vec![p, full], "table", |e| matches!(e, PickError::Capacity { limit: Limit::RectEntries, configured: 2, .. })),
    ];
    for (queries, what, kind) in cases {
        gpu.run(|cmd| {
            // SAFETY: recording outside a render pass; nothing is recorded on error.
            let err = unsafe { picker.record(cmd, 0, &request, &queries, &gs.draws) }.expect_err(what);
            assert!(kind(&err), "{what}: {err:?}");
            assert!(err.is_recoverable(), "{what}: {err}");
        });
        assert!(!picker.is_pending(0), "{what}: nothing pending");
    }
    // A valid set, then a second into the same pending slot: refused, never undefined.
    gpu.run(|cmd| {
        // SAFETY: as above.
        unsafe { picker.record(cmd, 0, &request, &[p], &gs.draws) }.unwrap();
        // SAFETY: as above; the slot is pending, so nothing is recorded.
        let again = unsafe { picker.record(cmd, 0, &request, &[p, p], &gs.draws) };
        assert!(matches!(again, Err(PickError::SlotPending { slot: 0, .. })), "{again:?}");
    });
    // SAFETY: `run` waited.
    let results = unsafe { picker.take_results(0) }.unwrap().unwrap();
    assert_eq!(results.results.len(), 1);
    assert!(results.get(picking_vk::results::QueryTicket { frame: results.frame + 1, index: 0 }).is_none(), "another frame's ticket");
    // Tiles are planned one by one on the CPU: a set needing more than the cap is refused
    // before anything is planned (4 views of 1x1 tiles are 76,800; 3 are 57,600).
    let mut tiny_tiles = gpu.picker(PickerConfig::default().with_max_queries(4).with_rect_tile(1, 1));
    gpu.run(|cmd| {
        // SAFETY: as above.
        let err = unsafe { tiny_tiles.record(cmd, 0, &request, &[full; 4], &gs.draws) }.expect_err("too many tiles");
        assert!(matches!(err, PickError::Capacity { limit: Limit::RectTiles, configured: 65_536, asked: 76_800 }), "{err:?}");
    });
    assert!(!tiny_tiles.is_pending(0));
    // SAFETY: the context's handles belong together; the picker is refused before it exists.
    let too_many_frames =
        unsafe { picking_vk::Picker::new(gpu.ctx.host_device(), PickerConfig::default().with_frames_in_flight(picking_vk::config::MAX_FRAMES_IN_FLIGHT + 1)) };
    assert!(matches!(too_many_frames, Err(PickError::InvalidInput { input: Input::Config("frames_in_flight"), .. })));
    let rows = PickerConfig::default().with_planner(picking_vk::config::Planner::Gpu).with_gpu_plan_rows((1 << 22) + 1);
    // SAFETY: as above.
    let too_many_rows = unsafe { picking_vk::Picker::new(gpu.ctx.host_device(), rows) };
    assert!(matches!(too_many_rows, Err(PickError::InvalidInput { input: Input::Config("gpu_plan_rows"), .. })));
    drop((picker, tiny_tiles, gs));
    gpu.assert_no_validation_messages();
}

#[test]
fn query_memory_is_sized_by_the_configuration_not_the_view() {
    let gpu = Gpu::new();
    let config = PickerConfig::default().with_max_queries(17);
    let picker = gpu.picker(config);
    let m = picker.memory();
    eprintln!("picker memory, 16 points + one 256x256 rectangle per frame, 2 slots: {m:?} = {} bytes", m.total());
    assert!(m.total() - m.planner <= 3 << 19, "<= 1.5 MiB besides the GPU planner: {}", m.total());
    // The GPU planner's default: 64 pairs of 260 bytes, 4,096 commands of 20, 2^18 survivor
    // bits with a summary bit per 64 and a survivor count (a word) per 2,048, the
    // view-projection, the compacted rows' count and the
    // frame's totals (5 words) per slot; where a table may be planned (lavapipe has
    // `shaderFloat64`), a bit per draw it may hold (2^17) for the rows ignore rules leave out;
    // rounded up to 16 bytes. No table rows: `Auto` builds them for its first set that takes a
    // table.
    assert_eq!(m.planner, 2 * (64 * 260 + 4096 * 20 + (1 << 18) / 8 + (1 << 12) / 8 + (1 << 7) * 4 + 128 + 4 + 20_u64 + (1 << 17) / 8).next_multiple_of(16));
    drop(picker);
    let _ = Mat4::IDENTITY;
    gpu.assert_no_validation_messages();
}
