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
use crate::gpu_plan::table::{TableGroup, TableIndex};
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
        let mut rows_culled = 0;
        for &index in &candidates {
            while let Some(g) = groups.next_if(|g| g.draw < index) {
                rows_culled += self.push_group(g, ray);
            }
            let Some(draw) = draws.get(index as usize) else { continue };
            // A non-instanced draw the hierarchy returned already passed its exact box test;
            // instanced ones and unbounded ones still go through the per-draw culling.
            let unbounded = cache.as_ref().is_none_or(|c| c.unbounded.binary_search(&index).is_ok());
            let tested = !unbounded && draw.instances.is_none();
            self.plan_draw(index, draw, request, if tested { None } else { Some(ray) });
        }
        for g in groups {
            rows_culled += self.push_group(g, ray);
        }
        // Unpickable draws count as skipped whether or not the hierarchy left them out, as
        // they do in `build`.
        let unpickable_left_out = cache.as_ref().map_or(0, |c| c.unpickable.iter().filter(|i| candidates.binary_search(i).is_err()).count());
        let in_table = cache.as_ref().map_or(0, |c| c.in_table);
        self.draw_caches[self.last_cache] = cache;
        self.stats.draws_skipped = self.stats.draws_skipped.saturating_add(unpickable_left_out as u64);
        let culled = draws.len() - candidates.len() - unpickable_left_out - in_table;
        self.stats.draws_culled = self.stats.draws_culled.saturating_add(culled as u64 + u64::from(rows_culled));
        self.candidates = candidates;
    }

    /// A table group's entry (its rows, one range) where the ray meets the group's world box;
    /// returns the rows culled (all of them where it does not).
    fn push_group(&mut self, g: &TableGroup, ray: &PixelRay) -> u32 {
        if g.world.is_some_and(|b| ray.slab().meets_padded(&b, ray.margin()).is_none()) {
            return g.rows;
        }
        let first_range = self.ranges.len() as u32;
        self.ranges.push((g.first_row, g.rows));
        self.entries.push(PlanEntry { draw: g.draw, first_range, range_count: 1, table: true, ..PlanEntry::default() });
        0
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

#[cfg(test)]
mod tests {
    use crate::draw::{Aabb, BufferRange, PickDraw, Positions, Triangles};
    use crate::gpu_plan::table::TableIndex;
    use crate::plan::{PixelRay, Plan};
    use crate::request::camera::CameraSnapshot;
    use crate::{ObjectId, PickRequest, Viewport};
    use ash::vk::{self, Handle};
    use glam::{Mat4, UVec2, Vec3};
    use std::sync::Arc;

    /// 16 unit boxes of buffer `buffer` in a row along z, at `x`.
    fn group(buffer: u64, x: f32) -> Vec<PickDraw> {
        let range = BufferRange { buffer: vk::Buffer::from_raw(buffer), offset: 0, size: 1200 };
        let bounds = Aabb { min: Vec3::splat(-0.5), max: Vec3::splat(0.5) };
        (0..16)
            .map(|k| {
                PickDraw::new(
                    ObjectId::new(1 + k).unwrap(),
                    Positions { range, stride: 12, vertex_count: 100 },
                    Triangles::NonIndexed { first_vertex: 0, vertex_count: 3 },
                )
                .with_bounds(bounds)
                .with_model(Mat4::from_translation(Vec3::new(x, 0.0, -5.0 - k as f32)))
            })
            .collect()
    }

    #[test]
    fn a_table_group_whose_world_box_the_ray_misses_is_not_planned() {
        let draws: Arc<[PickDraw]> = group(1, 0.0).into_iter().chain(group(2, 40.0)).collect();
        let (index, _) = TableIndex::of(&draws, 1000);
        assert_eq!(index.groups.len(), 2);
        let projection = glam::camera::rh::proj::vulkan::perspective(1.0, 1.0, 0.1, 100.0);
        let camera = CameraSnapshot::new(Mat4::IDENTITY, projection, Viewport::full(64, 64), None).unwrap();
        let ray = PixelRay::new(&camera, UVec2::new(32, 32)).unwrap();
        let request = PickRequest::new(Viewport::full(64, 64), Mat4::IDENTITY, projection);
        let mut plan = Plan::default();
        plan.build_shared(&request, &draws, Some(&ray), None, Some(&index));
        // The centre's ray meets the first group's boxes only: one entry, the other's 16 rows culled.
        let tables: Vec<u32> = plan.entries.iter().filter(|e| e.table).map(|e| e.draw).collect();
        assert_eq!(tables, vec![0]);
        assert_eq!(plan.stats.draws_culled, 16);
        // A camera moved to the second group plans it (and culls the first).
        let far = Mat4::from_translation(Vec3::new(-40.0, 0.0, 0.0));
        let camera = CameraSnapshot::new(far, projection, Viewport::full(64, 64), None).unwrap();
        let moved = PixelRay::new(&camera, UVec2::new(32, 32)).unwrap();
        plan.build_shared(&request, &draws, Some(&moved), None, Some(&index));
        assert_eq!(plan.entries.iter().filter(|e| e.table).map(|e| e.draw).collect::<Vec<_>>(), vec![16]);
    }
}
