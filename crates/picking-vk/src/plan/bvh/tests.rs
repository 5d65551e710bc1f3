use super::*;
use crate::plan::ray::PadLine;
use glam::Mat4;

fn grid_bvh() -> BoxBvh {
    let local = Aabb { min: Vec3::splat(-0.4), max: Vec3::splat(0.4) };
    let items = (0..1000)
        .map(|i| {
            let m = Mat4::from_translation(Vec3::new((i % 10) as f32, ((i / 10) % 10) as f32, (i / 100) as f32));
            (local.transformed(&m), AffineBox::new(&local, &m, i).unwrap())
        })
        .collect();
    BoxBvh::new(items).unwrap()
}

fn query(bvh: &BoxBvh, origin: Vec3, dir: Vec3, pad: f32) -> Vec<u32> {
    let mut out = vec![];
    let line = PadLine { base: pad, slope: 0.0 };
    bvh.query(&SlabRay::new(origin, dir), Padding { by_reach: line, along_ray: line }, &mut BvhScratch::default(), &mut out);
    out.sort_unstable();
    out
}

#[test]
fn finds_exactly_the_boxes_a_ray_crosses() {
    let bvh = grid_bvh();
    // A ray along +z through the column x = 3, y = 7.
    let want: Vec<u32> = (0..10).map(|z| 3 + 7 * 10 + z * 100).collect();
    assert_eq!(query(&bvh, Vec3::new(3.0, 7.0, -5.0), Vec3::Z, 0.0), want);
    assert!(query(&bvh, Vec3::new(3.5, 7.0, -5.0), Vec3::Z, 0.0).is_empty(), "between columns");
    assert_eq!(query(&bvh, Vec3::new(3.5, 7.0, -5.0), Vec3::Z, 0.11).len(), 20, "the pad reaches both neighbouring columns");
    assert!(query(&bvh, Vec3::new(3.0, 7.0, 9.5), Vec3::Z, 0.0).is_empty(), "all behind the origin");
}

/// Collects what a nearest-first walk reports, skipping nothing or every subtree whose
/// summary says it lies beyond depth `beyond` along -z.
struct Collect {
    found: Vec<u32>,
    summaries: Vec<[f32; 4]>,
    beyond: f32,
}

impl NearestFirstVisit for Collect {
    fn skip(&mut self, node: u32, slot: usize) -> bool {
        self.summaries[node as usize][slot] > self.beyond
    }
    fn item(&mut self, index: u32, _: impl FnOnce() -> bool) {
        self.found.push(index);
    }
}

#[test]
fn the_nearest_first_walk_finds_what_the_query_finds_and_skips_whole_subtrees() {
    let bvh = grid_bvh();
    let line = PadLine { base: 0.3, slope: 0.0 };
    let pad = Padding { by_reach: line, along_ray: line };
    // Distance of each item's nearest point from z = 15 (a camera looking down -z).
    let nearest = |i: u32| 15.0 - ((i / 100) as f32 + 0.4);
    let summaries = bvh.slot_summaries(nearest, f32::min);
    let ray = SlabRay::new(Vec3::new(3.2, 6.9, 15.0), Vec3::NEG_Z);
    let mut want = vec![];
    bvh.query(&ray, pad, &mut BvhScratch::default(), &mut want);
    want.sort_unstable();
    let mut all = Collect { found: vec![], summaries: summaries.clone(), beyond: f32::INFINITY };
    bvh.query_nearest_first(&ray, pad, &mut NearestFirstQueue::default(), &mut all);
    let mut found = all.found.clone();
    found.sort_unstable();
    assert_eq!(found, want);
    // Skipping what lies beyond distance 8 keeps everything nearer.
    let mut some = Collect { found: vec![], summaries, beyond: 8.0 };
    bvh.query_nearest_first(&ray, pad, &mut NearestFirstQueue::default(), &mut some);
    let near: Vec<u32> = want.iter().copied().filter(|&i| nearest(i) <= 8.0).collect();
    assert!(near.iter().all(|i| some.found.contains(i)) && some.found.len() < want.len(), "{:?} of {want:?}", some.found);
}

#[test]
fn agrees_with_testing_every_box() {
    let bvh = grid_bvh();
    let mut next = crate::plan::test_rng(12345);
    for _ in 0..200 {
        let origin = Vec3::new(next() * 30.0 - 10.0, next() * 30.0 - 10.0, next() * 30.0 - 10.0);
        let dir = (Vec3::new(4.5, 4.5, 4.5) + Vec3::new(next(), next(), next()) * 8.0 - 4.0 - origin).normalize();
        let ray = SlabRay::new(origin, dir);
        let mut want: Vec<u32> = bvh.items.iter().filter(|item| item.meets(&ray, 0.05).is_some()).map(|item| item.index).collect();
        want.sort_unstable();
        assert_eq!(query(&bvh, origin, dir, 0.05), want);
        // Growing padding: everything within its own padding is found.
        let line = PadLine { base: 0.01, slope: 0.01 };
        let mut found = vec![];
        bvh.query(&ray, Padding { by_reach: line, along_ray: line }, &mut BvhScratch::default(), &mut found);
        let near_pad: Vec<u32> = bvh.items.iter().filter(|item| item.meets(&ray, line.base).is_some()).map(|item| item.index).collect();
        assert!(near_pad.iter().all(|i| found.contains(i)), "padding at distance 0 is the least any item gets");
    }
}

#[test]
fn boxes_tested_as_slots_find_what_their_items_would() {
    // Random boxes, some flat, queried with and without padding that grows with distance:
    // slots that are their items must find exactly what testing each item (tightened as
    // `meets_tight` does) finds, and report an entry no later than the item's own.
    let mut next = crate::plan::test_rng(777);
    let boxes: Vec<Aabb> = (0..300)
        .map(|i| {
            let min = Vec3::new(next(), next(), next()) * 20.0 - 10.0;
            let size = Vec3::new(next(), next(), if i % 7 == 0 { 0.0 } else { next() }) * 2.0;
            Aabb { min, max: min + size }
        })
        .collect();
    let bvh = BoxBvh::of_boxes(&boxes).unwrap();
    let exact: Vec<AffineBox> = boxes.iter().enumerate().map(|(i, b)| AffineBox::axis_aligned(b, i as u32).unwrap()).collect();
    for case in 0..200 {
        let origin = Vec3::new(next(), next(), next()) * 40.0 - 20.0;
        let ray = SlabRay::new(origin, (Vec3::new(next(), next(), next()) * 8.0 - 4.0 - origin).normalize());
        let line = if case % 2 == 0 { PadLine { base: 0.0, slope: 0.0 } } else { PadLine { base: 0.01, slope: 0.004 } };
        let pad = Padding { by_reach: line, along_ray: line };
        let mut found = vec![];
        bvh.query_entries(&ray, pad, &mut BvhScratch::default(), &mut found);
        let mut got: Vec<u32> = found.iter().map(|&(_, i)| i).collect();
        got.sort_unstable();
        // Each item padded for its farthest point from the origin, then tightened.
        let want: Vec<u32> = exact
            .iter()
            .filter(|item| {
                let b = &boxes[item.index as usize];
                let reach = (b.min - origin).abs().max((b.max - origin).abs()).element_sum();
                item.meets_tight(&ray, line.at(reach), line)
            })
            .map(|item| item.index)
            .collect();
        assert_eq!(got, want, "case {case}");
        for &(entry, i) in &found {
            let b = &boxes[i as usize];
            let t = ((b.min - ray.origin) * ray.inv_dir).min((b.max - ray.origin) * ray.inv_dir).max_element();
            assert!(entry <= t + 1e-4 * t.abs().max(1.0), "entry {entry} after the box's own {t}");
        }
    }
}
