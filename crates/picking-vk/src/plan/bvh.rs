//! A four-wide bounding-volume hierarchy over boxes, built once and queried with the pick ray.
//!
//! Picking runs once a frame, after the host's own rendering has pushed the hierarchy out of
//! the CPU caches, so the query is shaped around memory latency rather than arithmetic: a node
//! is two cache lines holding four children's bounds (tested together), the walk goes level
//! by level so the loads of one level are independent of each other, and leaves are tested
//! last, as one batch, against each item's exact box (one cache line each).

use super::affine_box::AffineBox;
use super::prefetch::prefetch;
use super::ray::{Padding, SlabRay};
use crate::draw::Aabb;
use glam::{Vec3, Vec4};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Items per leaf.
const LEAF_SIZE: usize = 4;
/// Marks a child slot that holds nothing.
const EMPTY: u32 = u32::MAX;

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Node {
    /// Lane `k` of each is child `k`'s bounds on the x, y and z axes.
    min: [Vec4; 3],
    max: [Vec4; 3],
    /// Inner child: its node index; leaf child: its first item; or `EMPTY`.
    child: [u32; 4],
    /// Leaf child: its item count; inner child: 0.
    count: [u32; 4],
}

/// Reused between queries, so a query allocates nothing once warm.
#[derive(Default)]
pub(crate) struct BvhScratch {
    level: Vec<u32>,
    next_level: Vec<u32>,
    /// Leaves the ray meets: first item, item count, the padding that held for the leaf and
    /// where the ray enters it.
    leaves: Vec<(u32, u32, f32, f32)>,
}

pub(crate) struct BoxBvh {
    nodes: Vec<Node>,
    /// Exact boxes in leaf order, so a leaf's items are adjacent in memory.
    items: Vec<AffineBox>,
    /// Every leaf is one item whose exact box is its slot's bounds (see [`BoxBvh::of_boxes`]):
    /// the slot test is the item test.
    slots_exact: bool,
}

impl BoxBvh {
    /// Each item is its bounds in the hierarchy's space and its exact box. `None` when there
    /// are no items or a bound cannot be culled ([`Aabb::is_cullable`]).
    pub fn new(items: Vec<(Aabb, AffineBox)>) -> Option<Self> {
        Self::build(items, LEAF_SIZE, false)
    }

    /// Axis-aligned boxes of the hierarchy's own space, item `i` being `boxes[i]`: one per
    /// leaf, tested with their node's other children at once instead of one by one.
    pub fn of_boxes(boxes: &[Aabb]) -> Option<Self> {
        let items = boxes.iter().enumerate().map(|(i, b)| Some((*b, AffineBox::axis_aligned(b, i as u32)?)));
        Self::build(items.collect::<Option<Vec<_>>>()?, 1, true)
    }

    fn build(mut items: Vec<(Aabb, AffineBox)>, leaf_size: usize, slots_exact: bool) -> Option<Self> {
        if items.is_empty() || items.iter().any(|(b, _)| !b.is_cullable()) {
            return None;
        }
        let mut nodes = Vec::with_capacity(items.len() / leaf_size + 1);
        Self::build_node(&mut items, 0, leaf_size, &mut nodes);
        Some(BoxBvh { nodes, items: items.into_iter().map(|(_, e)| e).collect(), slots_exact })
    }

    /// Builds the node over `items` (whose first item is item `offset`), returning its index.
    fn build_node(items: &mut [(Aabb, AffineBox)], offset: usize, leaf_size: usize, nodes: &mut Vec<Node>) -> u32 {
        let me = nodes.len();
        nodes.push(Node { min: [Vec4::ZERO; 3], max: [Vec4::ZERO; 3], child: [EMPTY; 4], count: [0; 4] });
        // Two median splits make up to four groups; small inputs stay whole.
        let mut groups = [(0usize, 0usize); 4];
        let mut group_count = 0;
        let halves = if items.len() > leaf_size { split_at_median(items) } else { items.len() };
        for (start, len) in [(0, halves), (halves, items.len() - halves)] {
            if len == 0 {
                continue;
            }
            let quarter = if len > leaf_size { split_at_median(&mut items[start..start + len]) } else { len };
            for (s, l) in [(start, quarter), (start + quarter, len - quarter)] {
                if l > 0 {
                    groups[group_count] = (s, l);
                    group_count += 1;
                }
            }
        }
        for (k, &(start, len)) in groups[..group_count].iter().enumerate() {
            let group = &mut items[start..start + len];
            let bounds = group.iter().skip(1).fold(group[0].0, |b, (i, _)| b.union(i));
            let (child, count) =
                if len <= leaf_size { ((offset + start) as u32, len as u32) } else { (Self::build_node(group, offset + start, leaf_size, nodes), 0) };
            let node = &mut nodes[me];
            for axis in 0..3 {
                node.min[axis][k] = bounds.min[axis];
                node.max[axis][k] = bounds.max[axis];
            }
            node.child[k] = child;
            node.count[k] = count;
        }
        me as u32
    }

    /// Appends the index of every item whose exact box, grown by `pad`, the ray meets, in no
    /// particular order. Nodes are padded for the farthest any point in them can be from the
    /// ray origin, so the padding never falls short for what is inside; items are then
    /// padded for where the ray leaves them.
    pub fn query(&self, ray: &SlabRay, pad: Padding, scratch: &mut BvhScratch, out: &mut Vec<u32>) {
        self.query_levels(ray, pad, scratch, |index, _| out.push(index));
    }

    /// As [`BoxBvh::query`], with where the padded ray enters each item, or a lower bound on
    /// it (the entry of its leaf), as `(entry, index)`.
    pub fn query_entries(&self, ray: &SlabRay, pad: Padding, scratch: &mut BvhScratch, out: &mut Vec<(f32, u32)>) {
        self.query_levels(ray, pad, scratch, |index, entry| out.push((entry, index)));
    }

    fn query_levels(&self, ray: &SlabRay, pad: Padding, scratch: &mut BvhScratch, mut found: impl FnMut(u32, f32)) {
        let BvhScratch { level, next_level, leaves } = scratch;
        level.clear();
        leaves.clear();
        level.push(0);
        let lanes_ray = LanesRay::new(ray);
        while !level.is_empty() {
            next_level.clear();
            for &index in level.iter() {
                let Some(node) = self.nodes.get(index as usize) else { continue };
                let (hits, near, far, pads) = lanes_ray.test(node, pad);
                // Exact leaf slots are their items: tested tight, as items are.
                let exact_hits = if self.slots_exact { lanes_ray.tighten(node, pad, (hits, far, pads)) } else { hits };
                for k in 0..4 {
                    if hits & (1 << k) == 0 || node.child[k] == EMPTY {
                        continue;
                    }
                    let items = self.leaf_items(node, k);
                    match node.count[k] {
                        0 => {
                            prefetch(self.nodes.get(node.child[k] as usize));
                            next_level.push(node.child[k]);
                        }
                        _ if self.slots_exact => {
                            if exact_hits & (1 << k) != 0 {
                                items.iter().for_each(|item| found(item.index, near[k]));
                            }
                        }
                        count => {
                            prefetch(Some(items));
                            leaves.push((node.child[k], count, pads[k], near[k]));
                        }
                    }
                }
            }
            std::mem::swap(level, next_level);
        }
        for &(first, count, leaf_pad, entry) in leaves.iter() {
            let Some(items) = self.items.get(first as usize..(first + count) as usize) else { continue };
            items.iter().filter(|item| item.meets_tight(ray, leaf_pad, pad.along_ray)).for_each(|item| found(item.index, entry));
        }
    }

    /// As [`BoxBvh::query`], but best first: child slots are visited in the order the padded
    /// ray enters them, and each item is reported as its leaf is reached. `visit` may learn
    /// from an item that slots farther on can be skipped, and is asked when one is reached.
    pub fn query_nearest_first(&self, ray: &SlabRay, pad: Padding, queue: &mut NearestFirstQueue, visit: &mut impl NearestFirstVisit) {
        let heap = &mut queue.heap;
        heap.clear();
        let lanes_ray = LanesRay::new(ray);
        let mut node_index = 0u32;
        loop {
            if let Some(node) = self.nodes.get(node_index as usize) {
                let (hits, near, _, pads) = lanes_ray.test(node, pad);
                for k in 0..4 {
                    if hits & (1 << k) != 0 && node.child[k] != EMPTY {
                        // The walk soon reads what this slot leads to: ask for it now.
                        match node.count[k] {
                            0 => prefetch(self.nodes.get(node.child[k] as usize)),
                            _ => prefetch(Some(self.leaf_items(node, k))),
                        }
                        // Entry distances are ordered by their bits once negatives are clamped.
                        let at = near[k].max(0.0).to_bits();
                        heap.push((Reverse(at), node_index, k as u8, pads[k].to_bits()));
                    }
                }
            }
            node_index = loop {
                let Some((_, parent, lane, leaf_pad)) = heap.pop() else { return };
                let Some(node) = self.nodes.get(parent as usize) else { continue };
                let k = usize::from(lane);
                if visit.skip(parent, k) {
                    continue;
                }
                match node.count[k] {
                    0 => break node.child[k],
                    _ => {
                        // A leaf's items take the padding its slot was tested with.
                        let leaf_pad = f32::from_bits(leaf_pad);
                        for item in self.leaf_items(node, k) {
                            if item.meets_tight(ray, leaf_pad, pad.along_ray) {
                                visit.item(item.index, || item.meets(ray, 0.0).is_some());
                            }
                        }
                    }
                }
            };
        }
    }

    /// The items of child slot `k` of `node` when it is a leaf (none for an inner slot).
    fn leaf_items(&self, node: &Node, k: usize) -> &[AffineBox] {
        self.items.get(node.child[k] as usize..(node.child[k] + node.count[k]) as usize).unwrap_or(&[])
    }

    /// Something per child slot of every node, summarized from the items below it (`of`
    /// each item's index, combined by `merge`), indexed as `[node][slot]`.
    pub fn slot_summaries<M: Copy + Default>(&self, of: impl Fn(u32) -> M, merge: impl Fn(M, M) -> M) -> Vec<[M; 4]> {
        let mut out = vec![[M::default(); 4]; self.nodes.len()];
        // Children come after their parent in `nodes` (built depth first): summarize backwards.
        for index in (0..self.nodes.len()).rev() {
            let node = &self.nodes[index];
            for k in 0..4 {
                if node.child[k] == EMPTY {
                    continue;
                }
                let summary = match node.count[k] {
                    0 => out.get(node.child[k] as usize).and_then(|lanes| lanes.iter().copied().reduce(&merge)),
                    _ => self.leaf_items(node, k).iter().map(|item| of(item.index)).reduce(&merge),
                };
                out[index][k] = summary.unwrap_or_default();
            }
        }
        out
    }
}

/// The child slots a nearest-first walk has yet to visit, nearest entry first: (entry
/// distance bits, node, slot, padding bits). Reused between walks.
#[derive(Default)]
pub(crate) struct NearestFirstQueue {
    heap: BinaryHeap<(Reverse<u32>, u32, u8, u32)>,
}

/// What a nearest-first walk asks of its caller.
pub(crate) trait NearestFirstVisit {
    /// Whether child slot `slot` of node `node` can be skipped.
    fn skip(&mut self, node: u32, slot: usize) -> bool;
    /// An item whose exact box the padded ray meets; `unpadded` tells whether the ray itself
    /// does.
    fn item(&mut self, index: u32, unpadded: impl FnOnce() -> bool);
}

/// The ray splatted across the four child slots of a node.
struct LanesRay {
    o: [Vec4; 3],
    inv: [Vec4; 3],
}

impl LanesRay {
    fn new(ray: &SlabRay) -> Self {
        LanesRay {
            o: [Vec4::splat(ray.origin.x), Vec4::splat(ray.origin.y), Vec4::splat(ray.origin.z)],
            inv: [Vec4::splat(ray.inv_dir.x), Vec4::splat(ray.inv_dir.y), Vec4::splat(ray.inv_dir.z)],
        }
    }

    /// Which children the ray meets (a bit each), where it enters and leaves each, and each
    /// child's padding: nodes are padded for the farthest any point in them can be from the
    /// origin.
    fn test(&self, node: &Node, pad: Padding) -> (u32, Vec4, Vec4, Vec4) {
        // Farthest distance (an L1 bound: no square root) from the origin to each child.
        let mut reach = Vec4::ZERO;
        for ((min, max), o) in node.min.iter().zip(&node.max).zip(&self.o) {
            reach += (*min - *o).abs().max((*max - *o).abs());
        }
        let pads = Vec4::splat(pad.by_reach.base) + Vec4::splat(pad.by_reach.slope) * reach;
        let (hits, near, far) = self.slabs(node, pads);
        (hits, near, far, pads)
    }

    /// Of the children `test` found met (`hits`, left at `far` under `pads`), those still
    /// met with the padding where the ray leaves them, as [`AffineBox::meets_tight`] tests
    /// one item: for leaf slots that are their item.
    fn tighten(&self, node: &Node, pad: Padding, (hits, far, pads): (u32, Vec4, Vec4)) -> u32 {
        let tighter = (Vec4::splat(pad.along_ray.base) + Vec4::splat(pad.along_ray.slope) * far.max(Vec4::ZERO)).min(pads);
        hits & self.slabs(node, tighter).0
    }

    /// The slab test of the ray against the four children grown by `pads`: which it meets,
    /// and where it enters and leaves each.
    fn slabs(&self, node: &Node, pads: Vec4) -> (u32, Vec4, Vec4) {
        let (mut near, mut far) = (Vec4::splat(f32::NEG_INFINITY), Vec4::splat(f32::INFINITY));
        for (((min, max), o), inv) in node.min.iter().zip(&node.max).zip(&self.o).zip(&self.inv) {
            let t1 = (*min - pads - *o) * *inv;
            let t2 = (*max + pads - *o) * *inv;
            near = near.max(t1.min(t2));
            far = far.min(t1.max(t2));
        }
        ((near.cmple(far) & far.cmpge(Vec4::ZERO)).bitmask(), near, far)
    }
}

/// Splits `items` at the median of their centres along the axis where the centres spread
/// most; returns the split point.
fn split_at_median(items: &mut [(Aabb, AffineBox)]) -> usize {
    let (lo, hi) = items.iter().fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), (b, _)| (lo.min(b.center()), hi.max(b.center())));
    let spread = hi - lo;
    let axis = if spread.x >= spread.y && spread.x >= spread.z {
        0
    } else if spread.y >= spread.z {
        1
    } else {
        2
    };
    let mid = items.len() / 2;
    items.select_nth_unstable_by(mid, |a, b| a.0.center()[axis].total_cmp(&b.0.center()[axis]));
    mid
}

#[cfg(test)]
mod tests {
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
}
