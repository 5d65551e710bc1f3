//! Planning a frame: which draws and instances to record. Admission ([`admission`]) applies
//! `pickable`, the filter and the ignore rules; pick-ray culling then keeps only the draws
//! and instances whose bounds the ray through the pixel centre meets. Bounds are padded by
//! two pixel footprints, so a draw the rasterizer could still cover (vertex snapping moves
//! edges by 1/256 px) is never culled: results are identical with and without culling.

mod admission;
mod affine_box;
mod bvh;
mod chunks;
mod depth_keys;
mod geometry_cache;
mod nearest_first;
pub(crate) mod occlusion;
mod prefetch;
mod ray;
mod shared_list;
mod sphere;
mod sure_hit;

pub(crate) use crate::draw::reach_px;
use crate::draw::{Aabb, DrawLimits, PickDraw};
use crate::error::PickError;
use crate::handoff::PassStats;
use crate::host::config::Planner;
use crate::ignore::Ignore;
use crate::request::camera::CameraSnapshot;
use crate::request::PickRequest;
use admission::{admits, instance_ignored, visible_instance_ranges};
use affine_box::AffineBox;
use bvh::{BoxBvh, BvhScratch, NearestFirstQueue};
pub(crate) use chunks::run_of;
use chunks::{chunkable, Chunks, Cut};
use foldhash::HashMap;
use glam::{Mat4, UVec2};
use occlusion::Occlusion;
use ray::stretch_bound;
pub(crate) use ray::PixelRay;
use shared_list::DrawCache;
use std::sync::{Arc, Weak};

/// Largest gap between hit instances that is drawn rather than split into two draw calls.
const MERGE_GAP: u32 = 32;

/// Whether `m` maps points affinely (last row 0, 0, 0, 1): culling bounds a draw by its box
/// under the matrix, which holds only then.
fn is_affine(m: &Mat4) -> bool {
    m.row(3) == glam::Vec4::W
}

/// Whether a draw's depth at any pixel is bounded by its box under its model matrix.
pub(crate) fn depth_bounded_by_box(draw: &PickDraw) -> bool {
    draw.instances.is_none()
        && draw.hooks.as_ref().is_none_or(|h| !h.program.adjusts_world())
        && draw.deformation.is_none()
        && draw.indirect.is_none()
        && draw.raster.depth_bias.is_none()
        && draw.raster.topology.primitive() == crate::draw::PrimitiveKind::Triangle
        && is_affine(&draw.model)
}

/// A hierarchy over the instances of a draw, in its model space; `None` when an instance
/// transform is projective (its instances are then all drawn).
fn instance_bvh(local: &Aabb, transforms: &[Mat4]) -> Option<BoxBvh> {
    if !transforms.iter().all(is_affine) {
        return None;
    }
    let items = transforms.iter().enumerate().map(|(i, m)| {
        let bounds = local.transformed(m);
        Some((bounds, AffineBox::new(local, m, i as u32).or_else(|| AffineBox::axis_aligned(&bounds, i as u32))?))
    });
    BoxBvh::new(items.collect::<Option<Vec<_>>>()?)
}

struct CachedBvh {
    transforms: Weak<[Mat4]>,
    local: Aabb,
    bvh: Option<BoxBvh>,
    last_used: u64,
}

/// A point query's pixel, for occlusion: planned nearest first when the list is shared.
#[derive(Clone, Copy)]
pub(crate) struct PointTarget<'a> {
    pub camera: &'a CameraSnapshot,
    pub pixel: UVec2,
}

/// What to record this frame: the admitted draws and, for instanced ones, which instances.
/// Reused every frame, so planning allocates nothing once warm.
#[derive(Default)]
pub(crate) struct Plan {
    pub entries: Vec<PlanEntry>,
    pub ranges: Vec<(u32, u32)>,
    /// Triangle runs of draws cut by chunk culling.
    pub runs: Vec<(u32, u32)>,
    scratch: Vec<u32>,
    candidates: Vec<u32>,
    bvh_scratch: BvhScratch,
    /// Per (instance transforms, local box): draws that share transforms but not bounds (the
    /// primitives of one instanced mesh) each keep their own hierarchy.
    bvhs: HashMap<(usize, [u32; 6]), CachedBvh>,
    /// Per shared list: its hierarchy over every draw, and (`[1]`) over the draws its GPU
    /// plan table leaves to the CPU.
    draw_caches: [Option<DrawCache>; 2],
    /// The cache the last shared plan used.
    last_cache: usize,
    /// Scratch: the table groups' entries, kept aside while occlusion prunes the others.
    table_entries: Vec<PlanEntry>,
    occlusion: Occlusion,
    /// Whether a nearest-first walk planned this pixel, and the bound it proved.
    walk_bound: Option<Option<f64>>,
    walk_queue: NearestFirstQueue,
    chunks: Chunks,
    frame: u64,
    /// Draws skipped and culled, and instances culled (`draws_recorded` stays 0 here).
    pub stats: PassStats,
    /// `Planner::Gpu`: the instances of draws the GPU plan takes are left to it.
    gpu_instances: bool,
}

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PlanEntry {
    pub draw: u32,
    /// Instance ranges (start, count) of the draw, as `ranges[first..first + count]`.
    pub first_range: u32,
    pub range_count: u32,
    /// Runs of triangles (first, count) drawn, as `runs[first..first + count]`; none: all.
    pub first_run: u32,
    pub run_count: u32,
    /// A group of the shared list's GPU plan table (`gpu_plan::table`): `draw` is its first
    /// draw, its one range its rows; the cull pass plans its draws.
    pub table: bool,
    /// A table group of a point query: how the GPU may drop its rows behind a sure hit.
    pub occlusion: Option<crate::gpu_plan::layout::TableOcclusion>,
}

/// Planned draws, with the instance ranges and triangle runs their entries index.
#[derive(Clone, Copy)]
pub(crate) struct Planned<'a> {
    pub entries: &'a [PlanEntry],
    pub ranges: &'a [(u32, u32)],
    pub runs: &'a [(u32, u32)],
}

impl Plan {
    /// A plan that, with `gpu_instances`, leaves the instances of draws the GPU plan takes to
    /// it (`Planner::Gpu`).
    pub fn leaving_instances_to_gpu(gpu_instances: bool) -> Self {
        Plan { gpu_instances, ..Plan::default() }
    }

    /// Everything this plan records.
    pub fn planned(&self) -> Planned<'_> {
        Planned { entries: &self.entries, ranges: &self.ranges, runs: &self.runs }
    }

    fn begin(&mut self) {
        self.entries.clear();
        self.ranges.clear();
        self.runs.clear();
        self.stats = PassStats::default();
        self.walk_bound = None;
        self.frame += 1;
    }

    fn end(&mut self) {
        if self.bvhs.len() > 64 {
            let frame = self.frame;
            self.bvhs.retain(|_, c| c.transforms.strong_count() > 0 && frame - c.last_used < 600);
        }
    }

    /// Plans the frame. With `ray`, bounded draws and instances the ray misses are dropped.
    /// O(draws): every draw's bounds are tested. With `validate` (the device's limits), every
    /// draw is also validated in the same pass over the list, culled or not: a bad draw is an
    /// error whatever the cursor hits.
    pub fn build(&mut self, request: &PickRequest<'_>, draws: &[PickDraw], ray: Option<&PixelRay>, validate: Option<DrawLimits>) -> Result<(), PickError> {
        // Lines and points cover pixels away from their vertices: the ray grows for them all.
        let widened = ray.map(|r| r.widened(draws.iter().map(reach_px).fold(0.0, f32::max)));
        let ray = widened.as_ref();
        self.begin();
        for (index, draw) in draws.iter().enumerate() {
            if let Some(limits) = &validate {
                draw.validate(index, limits)?;
            }
            self.plan_draw(index as u32, draw, request, ray);
        }
        self.end();
        Ok(())
    }

    /// For a point query (one pixel, culled with its ray): drops the planned draws that a
    /// sure hit of another proves cannot win the pixel (see [`occlusion`]).
    pub fn occlude(&mut self, draws: &[PickDraw], camera: &CameraSnapshot, pixel: UVec2, ray: &PixelRay) {
        let walked = self.walk_bound.take();
        // Spheres are known for the shared list the plan was built over.
        let spheres = self.draw_caches[self.last_cache]
            .as_ref()
            .filter(|c| c.spheres.len() == draws.len() && c.draws.upgrade().is_some_and(|d| std::ptr::eq(d.as_ptr(), draws.as_ptr())));
        let spheres = spheres.map_or(&[][..], |c| &c.spheres[..]);
        // The table's groups are the GPU's to cull; the rest keep the host's order around them.
        // The groups draw at the pixel too: its depth only moves nearer if they test depth
        // the way the CPU's draws do.
        self.table_entries.clear();
        self.table_entries.extend(self.entries.iter().filter(|e| e.table));
        let alike = occlusion::tests_alike(&self.entries, draws, camera);
        self.entries.retain(|e| !e.table);
        let (culled, bound) = match alike {
            Some(_) => self.occlusion.prune(&mut self.entries, draws, spheres, camera, pixel, ray, &mut self.chunks, self.frame, walked),
            None => (0, None),
        };
        if !self.table_entries.is_empty() {
            let gpu = alike.and_then(|nearer| occlusion::table_occlusion(camera, pixel, (nearer, bound)));
            for e in &mut self.table_entries {
                e.occlusion = gpu.filter(|_| draws.get(e.draw as usize).is_some_and(occlusion::drops_rows));
            }
            self.entries.extend_from_slice(&self.table_entries);
            self.entries.sort_by_key(|e| e.draw);
        }
        self.stats.draws_culled = self.stats.draws_culled.saturating_add(u64::from(culled));
    }

    /// Cuts the planned draws of large meshes to the runs of triangles the ray can meet (see
    /// [`chunks`]); a draw none of whose chunks it meets is culled.
    pub fn cut_to_chunks(&mut self, draws: &[PickDraw], ray: &PixelRay) {
        let (chunks, runs, frame) = (&mut self.chunks, &mut self.runs, self.frame);
        let (mut culled, mut triangles_culled) = (0u64, 0u64);
        self.entries.retain_mut(|entry| {
            let Some(draw) = draws.get(entry.draw as usize).filter(|d| !entry.table && chunkable(d)) else { return true };
            let first = runs.len() as u32;
            match chunks.cut(draw, ray, frame, runs) {
                Cut::Whole => true,
                Cut::Runs(count) => {
                    (entry.first_run, entry.run_count) = (first, count);
                    let drawn: u32 = runs[first as usize..].iter().map(|r| r.1).sum();
                    triangles_culled += u64::from(draw.triangles.element_count() / 3 - drawn);
                    true
                }
                Cut::Nothing => {
                    culled += 1;
                    false
                }
            }
        });
        self.stats.draws_culled = self.stats.draws_culled.saturating_add(culled);
        self.stats.triangles_culled = self.stats.triangles_culled.saturating_add(triangles_culled);
    }

    /// Plans one draw; with `ray`, culls it (and its instances) against the ray.
    fn plan_draw(&mut self, index: u32, draw: &PickDraw, request: &PickRequest<'_>, ray: Option<&PixelRay>) {
        if !admits(request, draw) {
            self.stats.draws_skipped = self.stats.draws_skipped.saturating_add(1);
            return;
        }
        let first_range = self.ranges.len() as u32;
        let culled = match (ray, draw.culling_bounds()) {
            (Some(ray), Some(local)) if is_affine(&draw.model) => self.cull_draw(ray, draw, &local, request.ignore),
            // A projective model matrix is not bounded by a transformed box: never culled.
            _ => {
                self.push_all_instances(draw, request.ignore);
                false
            }
        };
        if culled {
            self.stats.draws_culled = self.stats.draws_culled.saturating_add(1);
            self.ranges.truncate(first_range as usize);
            return;
        }
        let range_count = self.ranges.len() as u32 - first_range;
        self.entries.push(PlanEntry { draw: index, first_range, range_count, ..PlanEntry::default() });
    }

    fn push_all_instances(&mut self, draw: &PickDraw, ignore: &[Ignore]) {
        match draw.instances {
            Some(inst) => visible_instance_ranges(draw, inst.count, ignore, |s, c| self.ranges.push((s, c))),
            None => self.ranges.push((0, 1)),
        }
    }

    /// Returns true when the whole draw is culled; otherwise leaves its ranges pushed.
    fn cull_draw(&mut self, ray: &PixelRay, draw: &PickDraw, local: &Aabb, ignore: &[Ignore]) -> bool {
        if self.gpu_instances && draw.instances.is_some() && crate::gpu_plan::plannable(draw, Planner::Gpu) {
            // Culling them here too would cost the CPU what planning them on the GPU saves.
            self.push_all_instances(draw, ignore);
            return false;
        }
        let (Some(inst), Some(transforms)) = (draw.instances, draw.instance_transforms.as_ref()) else {
            // Without CPU instance transforms, the instances cannot be bounded; only
            // non-instanced draws are tested.
            if draw.instances.is_some() {
                self.push_all_instances(draw, ignore);
                return false;
            }
            // The world box first (no inverse needed), then the exact local box. A box that is
            // not finite (or too far out) cannot be tested: the draw stays (and validation
            // refuses a matrix that is not finite).
            let (slab, margin, world) = (ray.slab(), ray.margin(), local.transformed(&draw.model));
            if world.is_cullable() {
                let Some(pad) = slab.meets_padded(&world, margin) else { return true };
                if AffineBox::new(local, &draw.model, 0).is_some_and(|exact| !exact.meets_tight(&slab, pad, margin)) {
                    return true;
                }
            }
            self.ranges.push((0, 1));
            return false;
        };
        // Validation holds the transforms to one per instance.
        let count = (inst.count as usize).min(transforms.len());
        let bounds_bits = [local.min.x, local.min.y, local.min.z, local.max.x, local.max.y, local.max.z].map(f32::to_bits);
        let key = (Arc::as_ptr(transforms) as *const Mat4 as usize, bounds_bits);
        let frame = self.frame;
        let stale = self.bvhs.get(&key).is_none_or(|c| c.local != *local || c.transforms.upgrade().is_none_or(|t| !Arc::ptr_eq(&t, transforms)));
        if stale {
            self.bvhs.insert(key, CachedBvh { transforms: Arc::downgrade(transforms), local: *local, bvh: instance_bvh(local, transforms), last_used: frame });
        }
        let Some(cached) = self.bvhs.get_mut(&key) else { return false };
        cached.last_used = frame;
        let Some(bvh) = cached.bvh.as_ref() else {
            self.push_all_instances(draw, ignore);
            return false;
        };
        // The ray in model space, padded by the world margin mapped there (conservative under
        // non-uniform scale: distances are bounded by the stretch of each direction's matrix).
        let inv = draw.model.inverse();
        if !inv.is_finite() {
            self.push_all_instances(draw, ignore);
            return false;
        }
        let pad = ray.padding_in_space(stretch_bound(&draw.model), stretch_bound(&inv));
        self.scratch.clear();
        bvh.query(&ray.transformed(&inv), pad, &mut self.bvh_scratch, &mut self.scratch);
        self.scratch.retain(|&i| (i as usize) < count && !instance_ignored(draw, i, ignore));
        self.scratch.sort_unstable();
        self.stats.instances_culled = self.stats.instances_culled.saturating_add((count - self.scratch.len()) as u64);
        if self.scratch.is_empty() {
            return true;
        }
        // Runs separated by a few instances become one draw call: drawing extra real
        // instances cannot change the result, but an ignored one must never be drawn.
        let mut run: Option<(u32, u32)> = None;
        for &i in &self.scratch {
            run = match run {
                Some((s, c)) if s + c == i => Some((s, c + 1)),
                Some((s, c)) if i - (s + c) <= MERGE_GAP && !(s + c..i).any(|g| instance_ignored(draw, g, ignore)) => Some((s, i + 1 - s)),
                Some(r) => {
                    self.ranges.push(r);
                    Some((i, 1))
                }
                None => Some((i, 1)),
            };
        }
        self.ranges.extend(run);
        false
    }
}

/// A small deterministic generator of numbers in [0, 1] for the planning tests (xorshift32).
#[cfg(test)]
pub(crate) fn test_rng(seed: u32) -> impl FnMut() -> f32 {
    let mut state = seed.max(1);
    move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state as f32 / u32::MAX as f32
    }
}
