//! Planning over a shared draw list (`DrawList::Shared`): a hierarchy of the draws'
//! world bounds, spheres and depth summaries is built once per list and kept while the list
//! lives, so a frame's plan costs O(log n + hits) instead of a pass over every draw.

use super::affine_box::AffineBox;
use super::bvh::BoxBvh;
use super::depth_keys::{DepthSummary, PixelDepth};
use super::nearest_first::OccludingWalk;
use super::sphere::{spheres_of, within_sphere, BoundingSphere};
use super::{is_affine, occlusion, prefetch, reach_px, PixelRay, Plan, PlanEntry, PointTarget};
use crate::draw::{Aabb, PickDraw};
use crate::gpu_plan::table::TableIndex;
use crate::request::PickRequest;
use std::sync::{Arc, Weak};

/// A hierarchy over the world bounds of a shared draw list, valid while that list lives.
pub(super) struct DrawCache {
    pub(super) draws: Weak<[PickDraw]>,
    pub(super) bvh: Option<BoxBvh>,
    /// Draws that cannot be bounded (no bounds, or instanced without CPU transforms), sorted.
    pub(super) unbounded: Vec<u32>,
    /// Draws with `pickable == false`, sorted.
    pub(super) unpickable: Vec<u32>,
    /// Per draw: the world sphere around its vertices, where one bounds it.
    pub(super) spheres: Vec<Option<BoundingSphere>>,
    /// Per node and child slot of `bvh`: how the draws below test depth, and their boxes.
    pub(super) summaries: Vec<[DepthSummary; 4]>,
    /// Whether any draw could prove a sure hit: without one, a nearest-first walk only costs.
    pub(super) has_occluders: bool,
    /// The farthest any draw's lines or points reach beyond their vertices, in pixels.
    pub(super) reach_px: f32,
    /// Draws left out for the GPU plan's table.
    pub(super) in_table: usize,
}

/// A bounded draw's world box (around all its instances when instanced with CPU transforms;
/// within its sphere, if it has one) and the exact box to test: its local box under its model
/// matrix when it is not instanced.
fn draw_bounds(draw: &PickDraw, index: u32, sphere: Option<&BoundingSphere>) -> Option<(Aabb, AffineBox)> {
    if !is_affine(&draw.model) || draw.instance_transforms.as_ref().is_some_and(|t| !t.iter().all(is_affine)) {
        return None;
    }
    let local = match (draw.culling_bounds(), draw.instances, draw.instance_transforms.as_ref()) {
        (Some(b), None, _) => b,
        (Some(b), Some(inst), Some(t)) => t.iter().take(inst.count as usize).map(|m| b.transformed(m)).reduce(|a, c| a.union(&c))?,
        _ => return None,
    };
    let world = Some(local.transformed(&draw.model)).filter(Aabb::is_cullable)?;
    let exact = draw.instances.is_none().then(|| AffineBox::new(&local, &draw.model, index)).flatten();
    Some((within_sphere(world, sphere), exact.or_else(|| AffineBox::axis_aligned(&world, index))?))
}

impl Plan {
    /// Plans the frame over a shared draw list: a hierarchy of the draws' world bounds, built
    /// once per list, finds the draws the ray can meet in O(log n + hits). With `point`, the
    /// hierarchy is walked nearest first and what lies surely behind a hit is never reached
    /// (see [`nearest_first`]); `occlude` then finishes the job. With `table`, the draws its
    /// rows hold are left to the GPU plan: the plan holds an entry per group instead, in the
    /// host's order among the draws the CPU planned.
    pub fn build_shared(
        &mut self,
        request: &PickRequest<'_>,
        draws: &Arc<[PickDraw]>,
        ray: Option<&PixelRay>,
        point: Option<PointTarget<'_>>,
        table: Option<&TableIndex>,
    ) {
        let Some(ray) = ray else {
            // Shared lists are validated once, by the owner.
            let _ = self.build(request, draws, None, None);
            return;
        };
        self.last_cache = usize::from(table.is_some());
        let cache = &mut self.draw_caches[self.last_cache];
        if !cache.as_ref().is_some_and(|c| c.draws.upgrade().is_some_and(|d| Arc::ptr_eq(&d, draws))) {
            *cache = Some(Self::index_draws(draws, table));
        }
        let given = ray;
        let widened = ray.widened(cache.as_ref().map_or(0.0, |c| c.reach_px));
        let ray = &widened;
        self.begin();
        self.candidates.clear();
        let occluders = self.draw_caches[self.last_cache].as_ref().is_some_and(|c| c.has_occluders);
        let depth = point.filter(|_| occluders).and_then(|p| Some((p, PixelDepth::for_convention(p.camera, p.pixel)?)));
        let mut skipped = false;
        if let Some(cache) = &self.draw_caches[self.last_cache] {
            match (&cache.bvh, &depth) {
                (Some(bvh), Some((target, depth))) => {
                    let mut walk = OccludingWalk {
                        draws,
                        request,
                        summaries: &cache.summaries,
                        spheres: &cache.spheres,
                        depth,
                        camera: target.camera,
                        ray,
                        occlusion: &mut self.occlusion,
                        chunks: &mut self.chunks,
                        frame: self.frame,
                        found: &mut self.candidates,
                        bound: None,
                        tries: 0,
                        tightening_tries: 0,
                        skipped: false,
                    };
                    bvh.query_nearest_first(&ray.slab(), ray.world_padding(), &mut self.walk_queue, &mut walk);
                    (self.walk_bound, skipped) = (Some(walk.bound), walk.skipped);
                }
                (Some(bvh), None) => {
                    bvh.query(&ray.slab(), ray.world_padding(), &mut self.bvh_scratch, &mut self.candidates);
                    let (slab, margin) = (ray.slab(), ray.margin());
                    self.candidates.retain(|&i| cache.spheres.get(i as usize).copied().flatten().is_none_or(|s| s.meets(&slab, margin)));
                }
                (None, _) => {}
            }
            self.candidates.extend_from_slice(&cache.unbounded);
        }
        // Draw order decides depth ties: keep the host's order.
        self.candidates.sort_unstable();
        for &index in &self.candidates {
            prefetch::prefetch(draws.get(index as usize));
        }
        self.plan_candidates(request, draws, ray, table);
        // Skipping was sound only if every drawn draw tests depth the convention's way.
        if let Some((_, depth)) = depth.filter(|_| skipped) {
            if !self.entries.iter().all(|e| draws.get(e.draw as usize).is_some_and(|d| depth.tests_like(d))) {
                return self.build_shared(request, draws, Some(given), None, table);
            }
        }
        self.end();
    }

    /// Plans the draws the hierarchy found (`self.candidates`, sorted), with `table`'s groups
    /// in the host's order among them, and counts what it left out.
    fn plan_candidates(&mut self, request: &PickRequest<'_>, draws: &Arc<[PickDraw]>, ray: &PixelRay, table: Option<&TableIndex>) {
        let candidates = std::mem::take(&mut self.candidates);
        let cache = self.draw_caches[self.last_cache].take();
        let mut groups = table.map_or(&[][..], |t| &t.groups[..]).iter().peekable();
        for &index in &candidates {
            while let Some(g) = groups.next_if(|g| g.draw < index) {
                self.push_group(g.draw, g.first_row, g.rows);
            }
            let Some(draw) = draws.get(index as usize) else { continue };
            // A non-instanced draw the hierarchy returned already passed its exact box test;
            // instanced ones and unbounded ones still go through the per-draw culling.
            let unbounded = cache.as_ref().is_none_or(|c| c.unbounded.binary_search(&index).is_ok());
            let tested = !unbounded && draw.instances.is_none();
            self.plan_draw(index, draw, request, if tested { None } else { Some(ray) });
        }
        for g in groups {
            self.push_group(g.draw, g.first_row, g.rows);
        }
        // Unpickable draws count as skipped whether or not the hierarchy left them out, as
        // they do in `build`.
        let unpickable_left_out = cache.as_ref().map_or(0, |c| c.unpickable.iter().filter(|i| candidates.binary_search(i).is_err()).count());
        let in_table = cache.as_ref().map_or(0, |c| c.in_table);
        self.draw_caches[self.last_cache] = cache;
        self.stats.draws_skipped = self.stats.draws_skipped.saturating_add(unpickable_left_out as u64);
        let culled = draws.len() - candidates.len() - unpickable_left_out - in_table;
        self.stats.draws_culled = self.stats.draws_culled.saturating_add(culled as u64);
        self.candidates = candidates;
    }

    /// A table group's entry: its rows, one range.
    fn push_group(&mut self, draw: u32, first_row: u32, rows: u32) {
        let first_range = self.ranges.len() as u32;
        self.ranges.push((first_row, rows));
        self.entries.push(PlanEntry { draw, first_range, range_count: 1, table: true, ..PlanEntry::default() });
    }

    /// World boxes of every boundable draw (but those `table` holds), once per shared list.
    fn index_draws(draws: &Arc<[PickDraw]>, table: Option<&TableIndex>) -> DrawCache {
        let mut items = Vec::with_capacity(draws.len());
        let mut unbounded = vec![];
        let spheres = spheres_of(draws);
        let in_table = |i: usize| table.is_some_and(|t| t.in_table.get(i).copied().unwrap_or(false));
        for (i, draw) in draws.iter().enumerate() {
            if in_table(i) {
                continue;
            }
            match draw_bounds(draw, i as u32, spheres[i].as_ref()) {
                Some(item) => items.push(item),
                None => unbounded.push(i as u32),
            }
        }
        let unpickable = (0..draws.len() as u32).filter(|&i| !draws[i as usize].pickable).collect();
        let bvh = BoxBvh::new(items);
        let of = |i: u32| draws.get(i as usize).map_or(DepthSummary::default(), |d| DepthSummary::of(d, spheres[i as usize].as_ref()));
        let summaries = bvh.as_ref().map_or(vec![], |b| b.slot_summaries(of, DepthSummary::merge));
        let has_occluders = draws.iter().enumerate().any(|(i, d)| !in_table(i) && occlusion::may_occlude(d));
        let reach_px = draws.iter().map(reach_px).fold(0.0, f32::max);
        let in_table = (0..draws.len()).filter(|&i| in_table(i)).count();
        DrawCache { draws: Arc::downgrade(draws), bvh, unbounded, unpickable, spheres, summaries, has_occluders, reach_px, in_table }
    }
}
