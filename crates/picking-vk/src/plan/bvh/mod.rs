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
mod tests;
