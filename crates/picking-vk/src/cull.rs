//! Pick-ray culling: before recording, keep only the draws and instances whose bounds the
//! ray through the pixel centre meets. Bounds are padded by two pixel footprints, so a draw
//! the rasterizer could still cover (vertex snapping moves edges by 1/256 px) is never culled:
//! results are identical with and without culling.

use crate::bounds::Aabb;
use crate::draw::PickDraw;
use crate::request::{visible_instance_ranges, Ignore, PickRequest};
use crate::view_math::{CameraSnapshot, Ray};
use glam::{Mat4, UVec2, Vec3};
use std::collections::HashMap;
use std::sync::{Arc, Weak};

/// The pick ray in f32 with how wide a pixel is along it: `footprint(t) = a + b * t`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PixelRay {
    origin: Vec3,
    dir: Vec3,
    a: f32,
    b: f32,
}

impl PixelRay {
    pub fn new(camera: &CameraSnapshot, pixel: UVec2) -> Option<Self> {
        let ray = camera.pixel_ray(pixel)?;
        let (mut a, mut b) = (0.0f64, 0.0f64);
        // Neighbouring pixel rays (inwards, so they exist at every border) give the footprint.
        for n in [UVec2::new(pixel.x ^ 1, pixel.y), UVec2::new(pixel.x, pixel.y ^ 1)] {
            let other: Ray = camera.pixel_ray(n)?;
            a = a.max((other.origin - ray.origin).length());
            b = b.max((other.direction - ray.direction).length());
        }
        Some(PixelRay { origin: ray.origin.as_vec3(), dir: ray.direction.as_vec3(), a: a as f32, b: b as f32 })
    }

    /// Padding at distance `t`: two pixel footprints plus float slack.
    fn margin(&self, t: f32) -> f32 {
        2.0 * (self.a + self.b * t.max(0.0)) + 1e-5 * (1.0 + t.abs())
    }

    /// Whether the ray (from its origin on) passes within the padded sphere.
    fn meets_sphere(&self, center: Vec3, radius: f32) -> bool {
        let v = center - self.origin;
        let t = v.dot(self.dir);
        let dist2 = if t > 0.0 { (v.length_squared() - t * t).max(0.0) } else { v.length_squared() };
        let r = radius + self.margin(t.max(0.0) + radius);
        dist2 <= r * r
    }
}

/// Slab test: whether the ray (from its origin on) meets box `b` grown by `pad`. NaN from a
/// zero direction component on a slab boundary counts as a hit: conservative, which is why
/// the comparisons are negated rather than flipped.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
fn ray_meets_box(origin: Vec3, inv_dir: Vec3, b: &Aabb, pad: f32) -> bool {
    let t1 = (b.min - pad - origin) * inv_dir;
    let t2 = (b.max + pad - origin) * inv_dir;
    let near = t1.min(t2).max_element();
    let far = t1.max(t2).min_element();
    !(near > far) && !(far < 0.0)
}

fn max_stretch(m: &Mat4) -> f32 {
    m.x_axis.truncate().length().max(m.y_axis.truncate().length()).max(m.z_axis.truncate().length())
}

/// Bounding sphere of a box under a transform: centre moved, radius scaled by the largest
/// axis stretch. Cheap enough to do for every draw every frame.
fn world_sphere(local: &Aabb, m: &Mat4) -> (Vec3, f32) {
    (m.transform_point3(local.center()), local.half_extent().length() * max_stretch(m))
}

/// A bounding-volume hierarchy over boxes: the instances of a draw (in its model space), or
/// the draws of a shared draw list (in world space).
pub(crate) struct BoxBvh {
    nodes: Vec<BvhNode>,
    items: Vec<(Aabb, u32)>,
    /// Half diagonal of each item's box, in `items` order.
    item_radius: Vec<f32>,
    /// For draw lists: each item's exact box in its own space, tested at the leaves so only
    /// true candidates reach the caller. In `items` order, for memory locality.
    exact: Vec<ExactBox>,
}

/// A draw's local box and the inverse of its model matrix.
#[derive(Clone, Copy)]
pub(crate) struct ExactBox {
    inverse: Mat4,
    local: Aabb,
    /// Largest stretch of `inverse`: world distances to local ones.
    inverse_stretch: f32,
}

struct BvhNode {
    bounds: Aabb,
    /// Half the box diagonal: with the centre, bounds the distance to anything inside.
    radius: f32,
    /// Leaf: first item and count; inner: left child index and 0.
    first: u32,
    count: u32,
    /// Inner nodes: right child index.
    right: u32,
}

const LEAF_SIZE: usize = 4;

/// Largest gap between hit instances that is drawn rather than split into two draw calls.
const MERGE_GAP: u32 = 32;

impl BoxBvh {
    /// Instance `i`'s box is `local` under `transforms[i]`.
    pub fn build(local: &Aabb, transforms: &[Mat4]) -> Option<Self> {
        Self::from_items(transforms.iter().enumerate().map(|(i, m)| (local.transformed(m), i as u32)).collect(), None)
    }

    /// `exact[i]`, when given, is the exact box of the item with index `i`.
    pub fn from_items(mut items: Vec<(Aabb, u32)>, exact: Option<&[Option<ExactBox>]>) -> Option<Self> {
        if items.is_empty() || items.iter().any(|(b, _)| !b.is_finite()) {
            return None;
        }
        let mut nodes = Vec::with_capacity(2 * items.len() / LEAF_SIZE + 1);
        Self::split(&mut items, 0, &mut nodes);
        let item_radius = items.iter().map(|(b, _)| b.half_extent().length()).collect();
        let exact = match exact {
            Some(e) => items
                .iter()
                .map(|(b, i)| e.get(*i as usize).copied().flatten().unwrap_or(ExactBox { inverse: Mat4::IDENTITY, local: *b, inverse_stretch: 1.0 }))
                .collect(),
            None => vec![],
        };
        Some(BoxBvh { nodes, items, item_radius, exact })
    }

    fn split(items: &mut [(Aabb, u32)], offset: usize, nodes: &mut Vec<BvhNode>) -> usize {
        let bounds = items.iter().skip(1).fold(items[0].0, |b, (i, _)| b.union(i));
        let me = nodes.len();
        nodes.push(BvhNode { bounds, radius: bounds.half_extent().length(), first: offset as u32, count: items.len() as u32, right: 0 });
        if items.len() <= LEAF_SIZE {
            return me;
        }
        let extent = bounds.max - bounds.min;
        let axis = if extent.x >= extent.y && extent.x >= extent.z {
            0
        } else if extent.y >= extent.z {
            1
        } else {
            2
        };
        let mid = items.len() / 2;
        items.select_nth_unstable_by(mid, |a, b| a.0.center()[axis].total_cmp(&b.0.center()[axis]));
        let (left, right) = items.split_at_mut(mid);
        let l = Self::split(left, offset, nodes);
        let r = Self::split(right, offset + mid, nodes);
        nodes[me].first = l as u32;
        nodes[me].count = 0;
        nodes[me].right = r as u32;
        me
    }

    /// Appends the instances whose padded box the (model-space) ray meets; `pad(d)` is the
    /// padding for geometry up to model-space distance `d` from the ray origin.
    fn query(&self, origin: Vec3, dir: Vec3, pad: impl Fn(f32) -> f32, out: &mut Vec<u32>) {
        let inv = dir.recip();
        let pad_for = |b: &Aabb, radius: f32| pad((b.center() - origin).length() + radius);
        let mut stack = [0u32; 64];
        let mut top = 1;
        while top > 0 {
            top -= 1;
            let node = &self.nodes[stack[top] as usize];
            if !ray_meets_box(origin, inv, &node.bounds, pad_for(&node.bounds, node.radius)) {
                continue;
            }
            if node.count > 0 {
                let range = node.first as usize..(node.first + node.count) as usize;
                for (k, ((b, i), r)) in self.items[range.clone()].iter().zip(&self.item_radius[range.clone()]).enumerate() {
                    let item_pad = pad_for(b, *r);
                    if !ray_meets_box(origin, inv, b, item_pad) {
                        continue;
                    }
                    if let Some(e) = self.exact.get(range.start + k) {
                        let (o, d) = (e.inverse.transform_point3(origin), e.inverse.transform_vector3(dir));
                        if !ray_meets_box(o, d.recip(), &e.local, item_pad * e.inverse_stretch) {
                            continue;
                        }
                    }
                    out.push(*i);
                }
            } else if top + 2 <= stack.len() {
                stack[top] = node.first;
                stack[top + 1] = node.right;
                top += 2;
            }
        }
    }
}

struct CachedBvh {
    transforms: Weak<[Mat4]>,
    local: Aabb,
    bvh: Option<BoxBvh>,
    last_used: u64,
}

/// A hierarchy over the world bounds of a shared draw list, valid while that list lives.
struct DrawCache {
    draws: Weak<[PickDraw]>,
    bvh: Option<BoxBvh>,
    /// Draws that cannot be bounded (no bounds, or instanced without CPU transforms), sorted.
    unbounded: Vec<u32>,
}

/// The exact box of a bounded, non-instanced draw with an invertible model matrix.
fn exact_box(draw: &PickDraw) -> Option<ExactBox> {
    let local = draw.bounds?;
    let inverse = draw.model.inverse();
    (draw.instances.is_none() && inverse.is_finite()).then(|| ExactBox { inverse, local, inverse_stretch: max_stretch(&inverse) })
}

/// What to record this frame: the admitted draws and, for instanced ones, which instances.
/// Reused every frame, so planning allocates nothing once warm.
#[derive(Default)]
pub(crate) struct Plan {
    pub entries: Vec<PlanEntry>,
    pub ranges: Vec<(u32, u32)>,
    scratch: Vec<u32>,
    candidates: Vec<u32>,
    bvhs: HashMap<usize, CachedBvh>,
    draw_cache: Option<DrawCache>,
    frame: u64,
    pub stats: CullStats,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct PlanEntry {
    pub draw: u32,
    /// Instance ranges (start, count) of the draw, as `ranges[first..first + count]`.
    pub first_range: u32,
    pub range_count: u32,
}

/// What culling did in one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CullStats {
    /// Draws left out by `pickable`, the filter or a whole-object ignore.
    pub draws_skipped: u32,
    /// Draws whose bounds the pick ray missed.
    pub draws_culled: u32,
    /// Instances of recorded draws whose bounds the pick ray missed.
    pub instances_culled: u32,
}

impl Plan {
    fn begin(&mut self) {
        self.entries.clear();
        self.ranges.clear();
        self.stats = CullStats::default();
        self.frame += 1;
    }

    fn end(&mut self) {
        if self.bvhs.len() > 64 {
            let frame = self.frame;
            self.bvhs.retain(|_, c| c.transforms.strong_count() > 0 && frame - c.last_used < 600);
        }
    }

    /// Plans the frame. With `ray`, bounded draws and instances the ray misses are dropped.
    /// O(draws): every draw's bounds are tested.
    pub fn build(&mut self, request: &PickRequest<'_>, draws: &[PickDraw], ray: Option<&PixelRay>) {
        self.begin();
        for (index, draw) in draws.iter().enumerate() {
            self.plan_draw(index as u32, draw, request, ray);
        }
        self.end();
    }

    /// Plans the frame over a shared draw list: a hierarchy of the draws' world bounds, built
    /// once per list, finds the draws the ray can meet in O(log n + hits).
    pub fn build_shared(&mut self, request: &PickRequest<'_>, draws: &Arc<[PickDraw]>, ray: Option<&PixelRay>) {
        let Some(ray) = ray else { return self.build(request, draws, None) };
        let fresh = self.draw_cache.as_ref().is_some_and(|c| c.draws.upgrade().is_some_and(|d| Arc::ptr_eq(&d, draws)));
        if !fresh {
            self.draw_cache = Some(Self::index_draws(draws));
        }
        self.begin();
        self.candidates.clear();
        if let Some(cache) = &self.draw_cache {
            if let Some(bvh) = &cache.bvh {
                bvh.query(ray.origin, ray.dir, |d| ray.margin(d), &mut self.candidates);
            }
            self.candidates.extend_from_slice(&cache.unbounded);
        }
        // Draw order decides depth ties: keep the host's order.
        self.candidates.sort_unstable();
        let candidates = std::mem::take(&mut self.candidates);
        let cache = self.draw_cache.take();
        for &index in &candidates {
            let Some(draw) = draws.get(index as usize) else { continue };
            // A non-instanced draw the hierarchy returned already passed its exact box test;
            // instanced ones and unbounded ones still go through the per-draw culling.
            let unbounded = cache.as_ref().is_none_or(|c| c.unbounded.binary_search(&index).is_ok());
            let tested = !unbounded && draw.instances.is_none();
            self.plan_draw(index, draw, request, if tested { None } else { Some(ray) });
        }
        self.draw_cache = cache;
        self.stats.draws_culled += (draws.len() - candidates.len()) as u32;
        self.candidates = candidates;
        self.end();
    }

    /// World boxes of every boundable draw, once per shared list.
    fn index_draws(draws: &Arc<[PickDraw]>) -> DrawCache {
        let mut items = Vec::with_capacity(draws.len());
        let mut unbounded = vec![];
        for (i, draw) in draws.iter().enumerate() {
            let local = match (draw.bounds, draw.instances, draw.instance_transforms.as_ref()) {
                (Some(b), None, _) => Some(b),
                (Some(b), Some(inst), Some(t)) => t.iter().take(inst.count as usize).map(|m| b.transformed(m)).reduce(|a, c| a.union(&c)),
                _ => None,
            };
            match local.map(|b| b.transformed(&draw.model)).filter(Aabb::is_finite) {
                Some(world) => items.push((world, i as u32)),
                None => unbounded.push(i as u32),
            }
        }
        let exact: Vec<Option<ExactBox>> = draws.iter().map(exact_box).collect();
        DrawCache { draws: Arc::downgrade(draws), bvh: BoxBvh::from_items(items, Some(&exact)), unbounded }
    }

    /// Plans one draw; with `ray`, culls it (and its instances) against the ray.
    fn plan_draw(&mut self, index: u32, draw: &PickDraw, request: &PickRequest<'_>, ray: Option<&PixelRay>) {
        if !draw.pickable || !request.admits(draw.id) {
            self.stats.draws_skipped += 1;
            return;
        }
        let first_range = self.ranges.len() as u32;
        let culled = match (ray, draw.bounds) {
            (Some(ray), Some(local)) => self.cull_draw(ray, draw, &local, request.ignore),
            _ => {
                self.push_all_instances(draw, request.ignore);
                false
            }
        };
        if culled {
            self.stats.draws_culled += 1;
            self.ranges.truncate(first_range as usize);
            return;
        }
        let range_count = self.ranges.len() as u32 - first_range;
        self.entries.push(PlanEntry { draw: index, first_range, range_count });
    }

    fn push_all_instances(&mut self, draw: &PickDraw, ignore: &[Ignore]) {
        match draw.instances {
            Some(inst) => visible_instance_ranges(draw.id, inst.count, ignore, |s, c| self.ranges.push((s, c))),
            None => self.ranges.push((0, 1)),
        }
    }

    /// Returns true when the whole draw is culled; otherwise leaves its ranges pushed.
    fn cull_draw(&mut self, ray: &PixelRay, draw: &PickDraw, local: &Aabb, ignore: &[Ignore]) -> bool {
        let (Some(inst), Some(transforms)) = (draw.instances, draw.instance_transforms.as_ref()) else {
            // Without CPU instance transforms, one sphere around the whole draw cannot be
            // derived; only non-instanced draws are tested.
            if draw.instances.is_some() {
                self.push_all_instances(draw, ignore);
                return false;
            }
            let (c, r) = world_sphere(local, &draw.model);
            if !(ray.meets_sphere(c, r) || !r.is_finite() || !c.is_finite()) {
                return true;
            }
            // The sphere is loose around a box: test the box itself, in model space, padded
            // by the margin at the sphere's far side.
            let inv = draw.model.inverse();
            if inv.is_finite() {
                let (o, d) = (inv.transform_point3(ray.origin), inv.transform_vector3(ray.dir));
                let pad = ray.margin((c - ray.origin).length() + r) * max_stretch(&inv);
                if !ray_meets_box(o, d.recip(), local, pad) {
                    return true;
                }
            }
            self.ranges.push((0, 1));
            return false;
        };
        let count = (inst.count as usize).min(transforms.len());
        let key = Arc::as_ptr(transforms) as *const Mat4 as usize;
        let frame = self.frame;
        let stale = self.bvhs.get(&key).is_none_or(|c| c.local != *local || c.transforms.upgrade().is_none_or(|t| !Arc::ptr_eq(&t, transforms)));
        if stale {
            self.bvhs.insert(key, CachedBvh { transforms: Arc::downgrade(transforms), local: *local, bvh: BoxBvh::build(local, transforms), last_used: frame });
        }
        let Some(cached) = self.bvhs.get_mut(&key) else { return false };
        cached.last_used = frame;
        let Some(bvh) = cached.bvh.as_ref() else {
            self.push_all_instances(draw, ignore);
            return false;
        };
        // The ray in model space. A node's pad is the world margin at the farthest distance
        // its geometry can be (model distance x the model's largest stretch), mapped back by
        // the inverse's largest stretch: conservative under non-uniform scale.
        let inv = draw.model.inverse();
        if !inv.is_finite() {
            self.push_all_instances(draw, ignore);
            return false;
        }
        let (to_world, to_model) = (max_stretch(&draw.model), max_stretch(&inv));
        self.scratch.clear();
        bvh.query(inv.transform_point3(ray.origin), inv.transform_vector3(ray.dir), |d| ray.margin(d * to_world) * to_model, &mut self.scratch);
        self.scratch.retain(|&i| (i as usize) < count && !ignored(draw, i, ignore));
        self.scratch.sort_unstable();
        self.stats.instances_culled += count as u32 - self.scratch.len() as u32;
        if self.scratch.is_empty() {
            return true;
        }
        // Runs separated by a few instances become one draw call: drawing extra real
        // instances cannot change the result, but an ignored one must never be drawn.
        let mut run: Option<(u32, u32)> = None;
        for &i in &self.scratch {
            run = match run {
                Some((s, c)) if s + c == i => Some((s, c + 1)),
                Some((s, c)) if i - (s + c) <= MERGE_GAP && !(s + c..i).any(|g| ignored(draw, g, ignore)) => Some((s, i + 1 - s)),
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

fn ignored(draw: &PickDraw, instance: u32, ignore: &[Ignore]) -> bool {
    ignore.iter().any(|rule| matches!(*rule, Ignore::Instances { id, start, count } if id == draw.id && instance >= start && instance - start < count))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bvh_finds_exactly_the_boxes_a_ray_crosses() {
        let local = Aabb { min: Vec3::splat(-0.4), max: Vec3::splat(0.4) };
        let transforms: Vec<Mat4> = (0..1000).map(|i| Mat4::from_translation(Vec3::new((i % 10) as f32, ((i / 10) % 10) as f32, (i / 100) as f32))).collect();
        let bvh = BoxBvh::build(&local, &transforms).unwrap();
        let mut out = vec![];
        // A ray along +z through the column x = 3, y = 7.
        bvh.query(Vec3::new(3.0, 7.0, -5.0), Vec3::Z, |_| 0.0, &mut out);
        out.sort_unstable();
        let want: Vec<u32> = (0..10).map(|z| 3 + 7 * 10 + z * 100).collect();
        assert_eq!(out, want);
        out.clear();
        bvh.query(Vec3::new(3.5, 7.0, -5.0), Vec3::Z, |_| 0.0, &mut out);
        assert!(out.is_empty(), "between columns");
        bvh.query(Vec3::new(3.5, 7.0, -5.0), Vec3::Z, |_| 0.11, &mut out);
        assert_eq!(out.len(), 20, "the pad reaches both neighbouring columns");
    }

    #[test]
    fn sphere_test_includes_the_near_side_and_pads() {
        let ray = PixelRay { origin: Vec3::ZERO, dir: Vec3::NEG_Z, a: 0.0, b: 0.001 };
        assert!(ray.meets_sphere(Vec3::new(0.0, 0.0, -10.0), 0.5));
        assert!(!ray.meets_sphere(Vec3::new(1.0, 0.0, -10.0), 0.5));
        assert!(ray.meets_sphere(Vec3::new(0.515, 0.0, -10.0), 0.5), "within two footprints");
        assert!(ray.meets_sphere(Vec3::new(0.0, 0.0, 0.3), 0.5), "contains the origin");
        assert!(!ray.meets_sphere(Vec3::new(0.0, 0.0, 3.0), 0.5), "behind the ray");
    }
}
