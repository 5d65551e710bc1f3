//! Contributors: the host's own draws in the pick pass. Billboards (camera-facing squares the
//! vertex shader builds, drawn through `picking_vk_host::Billboards`) among the meshes of
//! random scenes, against the ray oracle with the billboards as world-space triangles: IDs
//! depth-sort against meshes, hits name the contributor, its local index and instance, in
//! point and radius queries, in the full-size ID image, on every pass path; placed anew per
//! frame in flight, they pick where they were last placed; bad ranges are refused, and a
//! contributor is asked its range once a recording.

use glam::{UVec2, Vec3};
use picking_vk::debug::{IdCopy, IdImage};
use picking_vk::{
    contributor::ContributorHit, contributor::PickContributor, DepthConvention, PickError, PickQuery, PickRequest, PickerConfig, QueryResult, Snap, Viewport,
};
use picking_vk_host::{Billboard, Billboards};
use picking_vk_tests::harness::{random_pixels, random_scene_camera, Gpu};
use picking_vk_tests::oracle::{Oracle, OracleCamera};
use picking_vk_tests::scene::{Mesh, Object, Scene};

const W: u32 = 160;
const H: u32 = 120;
const FIRST_ID: u64 = 77;

/// Billboards scattered through the random scene's volume (in front of, among and behind
/// its objects).
fn billboards(seed: u64) -> Vec<Billboard> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..40)
        .map(|_| Billboard {
            centre: Vec3::new(rng.f32() * 5.0 - 2.5, rng.f32() * 3.6 - 1.8, -3.0 - rng.f32() * 7.0),
            size: 0.3 + rng.f32() * 0.6,
            color: [1.0, 0.5, 0.2, 1.0],
        })
        .collect()
}

/// The oracle's scene: `scene`'s objects, then each billboard `keep` admits as two world
/// triangles facing the camera of `view`.
fn with_billboards(scene: &Scene, boards: &[Billboard], view: glam::Mat4, keep: impl Fn(usize) -> bool) -> Scene {
    let mut out = Scene { meshes: scene.meshes.clone(), objects: scene.objects.clone() };
    for (i, b) in boards.iter().enumerate().filter(|(i, _)| keep(*i)) {
        let [t0, t1] = b.triangles(view);
        out.meshes.push(Mesh { positions: [t0, t1].concat(), indices: None });
        out.objects.push(Object::new(FIRST_ID + i as u64, out.meshes.len() - 1, glam::Mat4::IDENTITY));
    }
    out
}

/// Point picks of `pixels` (in chunks of the picker's 64 queries), as (pixel, hit ID).
fn pick_points(
    gpu: &Gpu,
    picker: &mut picking_vk::Picker,
    request: &PickRequest<'_>,
    pixels: &[UVec2],
    draws: &[picking_vk::PickDraw],
) -> Vec<(UVec2, Option<u64>)> {
    let mut out = vec![];
    for chunk in pixels.chunks(64) {
        let queries: Vec<PickQuery> = chunk.iter().map(|&p| PickQuery::Point(p)).collect();
        // SAFETY: recording outside a render pass; the draws' buffers and the contributors
        // outlive the wait.
        gpu.run(|cmd| unsafe { picker.record(cmd, 0, request, &queries, draws) }.map(|_| ()).expect("record"));
        // SAFETY: `run` waited for the frame.
        let results = unsafe { picker.take_results(0) }.expect("resolve").expect("pending");
        for (pixel, result) in chunk.iter().zip(&results.results) {
            let QueryResult::Point(r) = result else { unreachable!() };
            out.push((*pixel, r.hit.as_ref().map(|h| h.id.get())));
        }
    }
    out
}

/// Finding 4 of the soundness review: a contributor's objects that the request ignores or
/// filters out neither hit nor hide what lies behind them, as the picker's own draws.
#[test]
fn billboards_the_request_leaves_out_neither_hit_nor_occlude() {
    let gpu = Gpu::new();
    let mut picker = gpu.picker(PickerConfig::default().with_max_queries(64));
    let seed = 43;
    let scene = Scene::random(seed);
    let gs = scene.upload(&gpu.ctx);
    let boards = billboards(seed);
    let contributor = Billboards::new(&gpu.ctx, &boards, FIRST_ID).expect("billboards");
    let (view, proj) = random_scene_camera(DepthConvention::Standard, W, H);
    let list: [&dyn PickContributor; 1] = [&contributor];
    let all = PickRequest::new(Viewport::full(W, H), view, proj).with_contributors(&list);
    let id = |i: usize| picking_vk::ObjectId::new(FIRST_ID + i as u64).unwrap();
    // Billboards 0..10 ignored as objects, 12 as its own instance; 13's rule names another
    // instance (so 13 stays); odd billboards from 20 on are filtered out.
    let mut ignore: Vec<picking_vk::request::Ignore> = (0..10).map(|i| picking_vk::request::Ignore::Object(id(i))).collect();
    ignore.extend([picking_vk::request::Ignore::instance(id(12), 12), picking_vk::request::Ignore::instance(id(13), 0)]);
    let filter = |o: picking_vk::ObjectId| !(o.get() >= FIRST_ID + 20 && o.get() < FIRST_ID + 40 && (o.get() - FIRST_ID) % 2 == 1);
    let left_out = |i: usize| i < 10 || i == 12 || (i >= 20 && i % 2 == 1);
    let request = all.with_ignore(&ignore).with_filter(&filter);
    let camera = OracleCamera::new(view, proj, [0.0, 0.0, f64::from(W), f64::from(H)]);
    let everything = Oracle::new(&with_billboards(&scene, &boards, view, |_| true), camera);
    let admitted = Oracle::new(&with_billboards(&scene, &boards, view, |i| !left_out(i)), camera);
    // Pixels where the whole scene shows a billboard that is left out, and others.
    let covered = gpu.covered_pixels(&all, &gs.draws, seed);
    let board_of = |hit: Option<u64>| hit.and_then(|h| (FIRST_ID..FIRST_ID + boards.len() as u64).contains(&h).then(|| (h - FIRST_ID) as usize));
    let mut pixels: Vec<UVec2> = covered.iter().copied().filter(|&p| board_of(everything.pick(p).hit.map(|h| h.id)).is_some_and(left_out)).take(192).collect();
    pixels.extend(covered.iter().copied().take(128));
    let (mut agree, mut through, mut onto_behind) = (0, 0, 0);
    for (pixel, got) in pick_points(&gpu, &mut picker, &request, &pixels, &gs.draws) {
        assert!(!board_of(got).is_some_and(left_out), "pixel {pixel}: hit {got:?}, which the request leaves out");
        let want = admitted.pick(pixel);
        if want.ambiguous {
            continue;
        }
        assert_eq!(got, want.hit.map(|h| h.id), "pixel {pixel}");
        let shown = everything.pick(pixel);
        if board_of(shown.hit.map(|h| h.id)).is_some_and(left_out) {
            through += 1;
            onto_behind += usize::from(got.is_some());
        }
        agree += 1;
    }
    // Billboard 13 (a rule for another instance) and the even ones still win where they show.
    let kept: Vec<(UVec2, Option<u64>)> = pick_points(&gpu, &mut picker, &request, &covered[..covered.len().min(256)], &gs.draws);
    let kept_boards = kept.iter().filter(|(_, g)| board_of(*g).is_some()).count();
    eprintln!("left-out billboards: {agree} picks agree with the oracle, {through} through a left-out billboard ({onto_behind} onto what lies behind), {kept_boards} on kept ones");
    assert!(agree > 150 && through > 60 && onto_behind > 10 && kept_boards > 20, "{agree} / {through} / {onto_behind} / {kept_boards}");
    drop((gs, contributor));
    drop(picker);
    gpu.assert_no_validation_messages();
}

#[test]
fn billboards_depth_sort_against_meshes_like_the_ray_oracle() {
    let gpu = Gpu::new();
    let mut picker = gpu.picker(PickerConfig::default().with_max_queries(64).with_detail(picking_vk::DetailMode::IfEnabled));
    let (mut agree, mut on_billboards, mut in_front, mut behind) = (0, 0, 0, 0);
    for (seed, depth) in [(41, DepthConvention::Standard), (42, DepthConvention::Reverse)] {
        let scene = Scene::random(seed);
        let gs = scene.upload(&gpu.ctx);
        let boards = billboards(seed);
        let contributor = Billboards::new(&gpu.ctx, &boards, FIRST_ID).expect("billboards");
        let (view, proj) = random_scene_camera(depth, W, H);
        let vp = Viewport::full(W, H);
        let list: [&dyn PickContributor; 1] = [&contributor];
        let request = PickRequest::new(vp, view, proj).with_contributors(&list);
        let camera = OracleCamera::new(view, proj, [0.0, 0.0, f64::from(W), f64::from(H)]);
        let oracle = Oracle::new(&with_billboards(&scene, &boards, view, |_| true), camera);
        let meshes_only = Oracle::new(&scene, camera);
        // Pixels the ID image (contributors included) covers, and some others.
        let mut pixels: Vec<UVec2> = gpu.covered_pixels(&request, &gs.draws, seed).into_iter().take(320).collect();
        pixels.extend(random_pixels(seed, 64, W, H));
        for chunk in pixels.chunks(64) {
            let queries: Vec<PickQuery> = chunk
                .iter()
                .enumerate()
                .map(|(k, &p)| if k % 4 == 3 { PickQuery::Radius { pixel: p, radius: 0, snap: Snap::Nearest } } else { PickQuery::Point(p) })
                .collect();
            // SAFETY: recording outside a render pass; the draws' buffers and the billboards
            // outlive the wait.
            gpu.run(|cmd| unsafe { picker.record(cmd, 0, &request, &queries, &gs.draws) }.map(|_| ()).expect("record"));
            // SAFETY: `run` waited for the frame.
            let results = unsafe { picker.take_results(0) }.expect("resolve").expect("pending");
            for (pixel, result) in chunk.iter().zip(&results.results) {
                let got = match result {
                    QueryResult::Point(r) | QueryResult::Radius { result: r, .. } => r,
                    QueryResult::Rect(_) => unreachable!(),
                };
                let want = oracle.pick(*pixel);
                if want.ambiguous {
                    continue;
                }
                let want_id = want.hit.map(|h| h.id);
                assert_eq!(got.hit.as_ref().map(|h| h.id.get()), want_id, "seed {seed} pixel {pixel}");
                if let (Some(g), Some(w)) = (&got.hit, &want.hit) {
                    assert!((g.distance - w.distance).abs() <= 1e-3 * w.distance, "pixel {pixel}: distance {} vs {}", g.distance, w.distance);
                    let board = (FIRST_ID..FIRST_ID + boards.len() as u64).contains(&w.id);
                    if board {
                        let local = w.id - FIRST_ID;
                        assert_eq!(g.contributor, Some(ContributorHit { contributor: 0, local }), "pixel {pixel}");
                        assert_eq!((g.instance, g.draw_index, g.detail), (Some(local as u32), u32::MAX, None));
                        on_billboards += 1;
                        // A billboard in front of a mesh hides it; the meshes alone would hit it.
                        in_front += usize::from(meshes_only.pick(*pixel).hit.is_some());
                    } else {
                        assert_eq!(g.contributor, None);
                        // Some mesh hits lie where a billboard stands behind them.
                        let (all, _) = oracle.all_hits(*pixel);
                        let any_board_behind = all.iter().any(|(id, _)| (FIRST_ID..FIRST_ID + boards.len() as u64).contains(id));
                        behind += usize::from(any_board_behind);
                    }
                }
                agree += 1;
            }
        }
        // The full-size ID image draws the contributor too: its pixel there is the pick's.
        // SAFETY: the context's handles outlive the image.
        let mut image = unsafe { IdImage::new(gpu.ctx.host_device(), W, H) }.expect("id image");
        // SAFETY: recording outside a render pass; the buffers outlive the wait.
        gpu.run(|cmd| unsafe { image.record(cmd, &request, &gs.draws, None, IdCopy::Whole) }.map(|_| ()).expect("record"));
        // SAFETY: `run` waited.
        let texels = unsafe { image.read() }.expect("read");
        let board_pixels = texels.iter().filter(|t| (FIRST_ID..FIRST_ID + 40).contains(&(u64::from(t.id[0]) | u64::from(t.id[1]) << 32))).count();
        assert!(board_pixels > 100, "the ID image shows billboards: {board_pixels}");
        drop((image, gs, contributor));
    }
    eprintln!("contributors: {agree} unambiguous picks agree with the oracle, {on_billboards} on billboards ({in_front} in front of a mesh), {behind} mesh hits with a billboard behind");
    assert!(agree > 300 && on_billboards > 60 && in_front > 10 && behind > 10, "{agree} / {on_billboards} / {in_front} / {behind}");
    drop(picker);
    gpu.assert_no_validation_messages();
}

/// Billboards an animation moves: each frame in flight places them in a region of its own
/// (`Billboards::with_regions`, `place`), and a pick (and the ID image that finds covered
/// pixels) reads where the region last placed puts them: they agree with the oracle at their
/// new places, then back at the first ones, where picks under the other placement differ.
#[test]
fn billboards_placed_in_a_region_pick_where_that_region_puts_them() {
    let gpu = Gpu::new();
    let mut picker = gpu.picker(PickerConfig::default().with_max_queries(64));
    let seed = 44;
    let scene = Scene::random(seed);
    let gs = scene.upload(&gpu.ctx);
    let boards = billboards(seed);
    let moved: Vec<Billboard> = boards.iter().map(|b| Billboard { centre: b.centre + Vec3::new(0.6, -0.4, 0.0), ..*b }).collect();
    let mut contributor = Billboards::with_regions(&gpu.ctx, &boards, FIRST_ID, 2).expect("billboards");
    let (view, proj) = random_scene_camera(DepthConvention::Standard, W, H);
    let camera = OracleCamera::new(view, proj, [0.0, 0.0, f64::from(W), f64::from(H)]);
    let (mut agree, mut changed) = (0, 0);
    for (round, (region, placed, other)) in [(1u32, &moved, &boards), (0, &boards, &moved)].into_iter().enumerate() {
        let centres: Vec<Vec3> = placed.iter().map(|b| b.centre).collect();
        // SAFETY: every earlier frame was waited for.
        unsafe { contributor.place(region, &centres) }.expect("place");
        let list: [&dyn PickContributor; 1] = [&contributor];
        let request = PickRequest::new(Viewport::full(W, H), view, proj).with_contributors(&list);
        let oracle = Oracle::new(&with_billboards(&scene, placed, view, |_| true), camera);
        let elsewhere = Oracle::new(&with_billboards(&scene, other, view, |_| true), camera);
        // Pixels where either placement shows a billboard (every other one, in a grid), and some
        // others.
        let is_board = |hit: Option<picking_vk_tests::oracle::OracleHit>| hit.is_some_and(|h| (FIRST_ID..FIRST_ID + boards.len() as u64).contains(&h.id));
        let grid = (0..H).step_by(2).flat_map(|y| (0..W).step_by(2).map(move |x| UVec2::new(x, y)));
        let mut pixels: Vec<UVec2> = grid.filter(|&p| is_board(oracle.pick(p).hit) || is_board(elsewhere.pick(p).hit)).take(320).collect();
        pixels.extend(random_pixels(seed + round as u64, 64, W, H));
        for (pixel, got) in pick_points(&gpu, &mut picker, &request, &pixels, &gs.draws) {
            let want = oracle.pick(pixel);
            if want.ambiguous {
                continue;
            }
            assert_eq!(got, want.hit.map(|h| h.id), "round {round} pixel {pixel}");
            agree += 1;
            let before = elsewhere.pick(pixel);
            changed += usize::from(!before.ambiguous && before.hit.map(|h| h.id) != got);
        }
    }
    eprintln!("placed billboards: {agree} picks agree with the oracle, {changed} differ from the other placement's");
    assert!(agree > 250 && changed > 60, "{agree} / {changed}");
    // SAFETY: refused before anything is written.
    assert!(unsafe { contributor.place(2, &[]) }.is_err(), "a region past those made is refused");
    drop((gs, contributor));
    drop(picker);
    gpu.assert_no_validation_messages();
}

/// A contributor that only claims IDs.
struct Claims(std::ops::Range<u64>);

// SAFETY: `record` records nothing; `ids` is the field, fixed.
unsafe impl PickContributor for Claims {
    fn ids(&self) -> std::ops::Range<u64> {
        self.0.clone()
    }
    unsafe fn record(&self, _: &picking_vk::contributor::ContributorContext<'_>) {}
}

#[test]
fn contributor_ranges_that_clash_are_refused() {
    let gpu = Gpu::new();
    let mut picker = gpu.picker(PickerConfig::default());
    let scene = Scene::random(3);
    let gs = scene.upload(&gpu.ctx);
    let (view, proj) = random_scene_camera(DepthConvention::Standard, W, H);
    let taken = scene.objects[0].id;
    // Which contributor is at fault (`None`: one whose range meets a draw's ID).
    let cases: Vec<(Vec<Claims>, &str, Option<usize>)> = vec![
        (vec![Claims(0..5)], "exclude 0", Some(0)),
        (vec![Claims(9..9)], "non-empty", Some(0)),
        (vec![Claims(10..20), Claims(15..30)], "shares IDs with contributor 0", Some(1)),
        (vec![Claims(taken..taken + 1)], "contributor's range", None),
    ];
    for (claims, expect, culprit) in cases {
        let list: Vec<&dyn PickContributor> = claims.iter().map(|c| c as &dyn PickContributor).collect();
        let request = PickRequest::new(Viewport::full(W, H), view, proj).with_contributors(&list);
        let mut err = None;
        // SAFETY: recording outside a render pass; an error records nothing.
        gpu.run(|cmd| err = unsafe { picker.record(cmd, 0, &request, &[PickQuery::Point(UVec2::new(5, 5))], &gs.draws) }.err());
        let message = err.as_ref().map(PickError::to_string).unwrap_or_default();
        assert!(message.contains(expect), "{message:?} should mention {expect:?}");
        if let Some(n) = culprit {
            assert!(matches!(err, Some(PickError::InvalidInput { input: picking_vk::error::Input::Contributor(i), .. }) if i == n), "{err:?}");
        }
    }
    drop((picker, gs));
    gpu.assert_no_validation_messages();
}

/// A contributor that counts how often it is asked its range, and gives a different one each
/// time (the trait no longer asks for a fixed one).
struct Counted(std::sync::atomic::AtomicU64);

// SAFETY: `record` records nothing.
unsafe impl PickContributor for Counted {
    fn ids(&self) -> std::ops::Range<u64> {
        let n = self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let start = 1u64 << 40 | n << 8;
        start..start + 16
    }
    unsafe fn record(&self, _: &picking_vk::contributor::ContributorContext<'_>) {}
}

#[test]
fn a_contributor_is_asked_its_range_once_a_recording() {
    let gpu = Gpu::new();
    let mut picker = gpu.picker(PickerConfig::default());
    let scene = Scene::random(4);
    let gs = scene.upload(&gpu.ctx);
    let (view, proj) = random_scene_camera(DepthConvention::Standard, W, H);
    let counted = Counted(Default::default());
    let list: [&dyn PickContributor; 1] = [&counted];
    let request = PickRequest::new(Viewport::full(W, H), view, proj).with_contributors(&list);
    // Three regions (each records the contributor) and a rectangle.
    let queries = [
        PickQuery::Point(UVec2::new(5, 5)),
        PickQuery::Point(UVec2::new(80, 60)),
        PickQuery::Radius { pixel: UVec2::new(40, 40), radius: 3, snap: Snap::Nearest },
        PickQuery::Rect { rect: picking_vk::PixelRect::new(UVec2::new(10, 10), UVec2::new(30, 30)), mode: picking_vk::RectMode::Visible },
    ];
    // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
    gpu.run(|cmd| unsafe { picker.record(cmd, 0, &request, &queries, &gs.draws) }.map(|_| ()).expect("record"));
    // SAFETY: `run` waited for the frame.
    unsafe { picker.take_results(0) }.expect("resolve").expect("pending");
    assert_eq!(counted.0.load(std::sync::atomic::Ordering::Relaxed), 1, "Picker::record asks once");
    // SAFETY: the context's handles outlive the image.
    let mut image = unsafe { IdImage::new(gpu.ctx.host_device(), W, H) }.expect("id image");
    // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
    gpu.run(|cmd| unsafe { image.record(cmd, &request, &gs.draws, None, IdCopy::Whole) }.map(|_| ()).expect("record the image"));
    assert_eq!(counted.0.load(std::sync::atomic::Ordering::Relaxed), 2, "IdImage::record asks once");
    drop((image, picker, gs));
    gpu.assert_no_validation_messages();
}
