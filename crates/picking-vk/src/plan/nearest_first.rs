//! Nearest-first planning of a point query over a shared draw list. A ray through a dense
//! scene meets hundreds of boxes, and occlusion ([`super::occlusion`]) later drops all but
//! the few in front of a sure hit. Walking the list's hierarchy best first (in the order the
//! ray enters its nodes) finds that sure hit among the first draws reached; from then on a
//! subtree whose draws all lie beyond it (by a summary of their boxes and rounding, see
//! [`DepthSummary`]) is skipped whole, so the draws occlusion would drop are never reached.
//!
//! A skipped subtree holds only draws that test depth the convention's way and are bounded
//! by their boxes. The argument also needs every draw that is drawn to test that way: the
//! caller checks the planned draws and plans again without skipping when one does not.

use super::admission::admits;
use super::bvh::NearestFirstVisit;
use super::chunks::Chunks;
use super::depth_keys::{DepthSummary, PixelDepth};
use super::occlusion::{can_occlude, Occlusion};
use super::ray::PixelRay;
use super::sphere::BoundingSphere;
use crate::draw::PickDraw;
use crate::request::camera::CameraSnapshot;
use crate::request::PickRequest;

/// Occluders tried per pixel, in the order reached. More than occlusion's own tries: the
/// first draws reached are often ones the padded ray only grazes, and a miss is cheap.
const MAX_WALK_TRIES: usize = 16;
/// Once a bound is proved, further occluders tried to tighten it (a nearer sure hit drops
/// more of what is drawn).
const MAX_TIGHTENING_TRIES: usize = 4;

/// The walk's state: the draws found, and the bound the best sure hit so far proves.
pub(crate) struct OccludingWalk<'a> {
    pub draws: &'a [PickDraw],
    pub request: &'a PickRequest<'a>,
    /// Per node and child slot of the hierarchy.
    pub summaries: &'a [[DepthSummary; 4]],
    /// Per draw, its world sphere where one bounds it.
    pub spheres: &'a [Option<BoundingSphere>],
    pub depth: &'a PixelDepth,
    pub camera: &'a CameraSnapshot,
    pub ray: &'a PixelRay,
    pub occlusion: &'a mut Occlusion,
    pub chunks: &'a mut Chunks,
    pub frame: u64,
    /// Draws whose exact box the ray meets, in the order reached.
    pub found: &'a mut Vec<u32>,
    pub bound: Option<f64>,
    /// Occluders tried before a bound was proved, and after.
    pub tries: usize,
    pub tightening_tries: usize,
    /// Whether a subtree was skipped for lying beyond the bound.
    pub skipped: bool,
}

impl NearestFirstVisit for OccludingWalk<'_> {
    fn skip(&mut self, node: u32, slot: usize) -> bool {
        let Some(bound) = self.bound else { return false };
        let Some(summary) = self.summaries.get(node as usize).map(|s| s[slot]) else { return false };
        let beyond = self.depth.summary_key(&summary).is_some_and(|near| near > bound);
        self.skipped |= beyond;
        beyond
    }

    fn item(&mut self, index: u32, unpadded: impl FnOnce() -> bool) {
        let sphere = self.spheres.get(index as usize).copied().flatten();
        if sphere.is_some_and(|s| !s.meets(&self.ray.slab(), self.ray.margin())) {
            return;
        }
        self.found.push(index);
        let Some(draw) = self.draws.get(index as usize) else { return };
        let exhausted = if self.bound.is_some() { self.tightening_tries >= MAX_TIGHTENING_TRIES } else { self.tries >= MAX_WALK_TRIES };
        if exhausted || !can_occlude(draw) || !self.depth.tests_like(draw) || !admits(self.request, draw) {
            return;
        }
        // A sure hit needs the ray through the pixel centre to cross a triangle in the box
        // (the cheaper test first).
        if !unpadded() {
            return;
        }
        // A draw whose box lies beyond the bound cannot tighten it.
        let Some(near) = self.depth.near_key(draw, sphere.as_ref()) else { return };
        if self.bound.is_some_and(|b| near >= b) {
            return;
        }
        match self.bound {
            Some(_) => self.tightening_tries += 1,
            None => self.tries += 1,
        }
        if let Some(far) = self.occlusion.sure_far(self.depth, draw, self.camera, self.ray, self.chunks, self.frame) {
            self.bound = Some(self.bound.map_or(far, |b| b.min(far)));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::draw::{BufferRange, IndexWidth, MeshGeometry, PickDraw, Positions, Triangles};
    use crate::plan::{PixelRay, Plan, PointTarget};
    use crate::request::camera::CameraSnapshot;
    use crate::{draw::RasterState, ObjectId, PickRequest, Viewport};
    use ash::vk;
    use glam::{Mat4, UVec2, Vec3};
    use std::sync::Arc;

    /// A column of 2x2 squares facing the camera, one unit apart from z = -5 on: the first
    /// surely covers the centre pixel and hides the rest.
    fn column(count: u64) -> Vec<PickDraw> {
        let positions = vec![Vec3::new(-1.0, -1.0, 0.0), Vec3::new(1.0, -1.0, 0.0), Vec3::new(1.0, 1.0, 0.0), Vec3::new(-1.0, 1.0, 0.0)];
        let geometry = Arc::new(MeshGeometry { positions, indices: Some(vec![0, 1, 2, 0, 2, 3]), ..Default::default() });
        let range = BufferRange { buffer: vk::Buffer::null(), offset: 0, size: 1 << 10 };
        let triangles = Triangles::Indexed { range, width: IndexWidth::U32, first_index: 0, index_count: 6, vertex_offset: 0 };
        (0..count)
            .map(|k| {
                PickDraw::new(ObjectId::new(k + 1).unwrap(), Positions { range, stride: 12, vertex_count: 4 }, triangles)
                    .with_geometry(geometry.clone())
                    .with_model(Mat4::from_translation(Vec3::new(0.0, 0.0, -5.0 - k as f32)))
            })
            .collect()
    }

    /// Plans the centre pixel through the walk and occlusion: the planned draws' indices,
    /// draws culled, and draws the walk reached.
    fn plan_centre(draws: Vec<PickDraw>) -> (Vec<u32>, u64, usize) {
        let (w, h) = (64, 64);
        let projection = glam::camera::rh::proj::vulkan::perspective(1.0, 1.0, 0.1, 100.0);
        let camera = CameraSnapshot::new(Mat4::IDENTITY, projection, Viewport::full(w, h), None).unwrap();
        let pixel = UVec2::new(32, 32);
        let ray = PixelRay::new(&camera, pixel).unwrap();
        let request = PickRequest::new(Viewport::full(w, h), Mat4::IDENTITY, projection);
        let draws: Arc<[PickDraw]> = draws.into();
        let mut plan = Plan::default();
        plan.build_shared(&request, &draws, Some(&ray), Some(PointTarget { camera: &camera, pixel }), None);
        let reached = plan.candidates.len();
        plan.occlude(&draws, &camera, pixel, &ray);
        (plan.entries.iter().map(|e| e.draw).collect(), plan.stats.draws_culled, reached)
    }

    /// An octahedron of circumradius 1 (its box is the cube of side 2) under `model`.
    fn octahedron(id: u64, model: Mat4) -> PickDraw {
        let positions = vec![Vec3::X, -Vec3::X, Vec3::Y, -Vec3::Y, Vec3::Z, -Vec3::Z];
        let indices = vec![0, 2, 4, 2, 1, 4, 1, 3, 4, 3, 0, 4, 2, 0, 5, 1, 2, 5, 3, 1, 5, 0, 3, 5];
        let geometry = Arc::new(MeshGeometry { positions, indices: Some(indices), ..Default::default() });
        let range = BufferRange { buffer: vk::Buffer::null(), offset: 0, size: 1 << 10 };
        let triangles = Triangles::Indexed { range, width: IndexWidth::U32, first_index: 0, index_count: 24, vertex_offset: 0 };
        PickDraw::new(ObjectId::new(id).unwrap(), Positions { range, stride: 12, vertex_count: 6 }, triangles).with_geometry(geometry).with_model(model)
    }

    #[test]
    fn meshes_reaching_past_f32s_products_are_never_culled() {
        // A square straight ahead with one more triangle reaching 3e38 away: its box's ray
        // tests overflow, which once culled the whole mesh (per frame and over a shared list).
        let mut draws = column(1);
        let mut geometry = (**draws[0].geometry.as_ref().unwrap()).clone();
        geometry.positions.push(Vec3::new(-3.0e38, 0.0, -3.0e38));
        geometry.indices.as_mut().unwrap().extend([0, 1, 4]);
        let bounds = crate::draw::Aabb::from_points(&geometry.positions).unwrap();
        draws[0] = draws[0].clone().with_geometry(Arc::new(geometry)).with_bounds(bounds);
        let (planned, culled, _) = plan_centre(draws.clone());
        assert_eq!((planned, culled), (vec![0], 0));
        let (w, h) = (64, 64);
        let projection = glam::camera::rh::proj::vulkan::perspective(1.0, 1.0, 0.1, 100.0);
        let camera = CameraSnapshot::new(Mat4::IDENTITY, projection, Viewport::full(w, h), None).unwrap();
        let ray = PixelRay::new(&camera, UVec2::new(32, 32)).unwrap();
        let request = PickRequest::new(Viewport::full(w, h), Mat4::IDENTITY, projection);
        let mut plan = Plan::default();
        plan.build(&request, &draws, Some(&ray), None).unwrap();
        assert_eq!(plan.entries.len(), 1, "per frame");
    }

    #[test]
    fn round_meshes_the_ray_passes_by_are_culled_by_their_spheres() {
        // A mesh straight ahead, and around it six rotated ones whose boxes' corners reach the
        // centre pixel's ray and come nearer than the hit, while their spheres stay clear of
        // both: only the first can win the pixel.
        let target = octahedron(1, Mat4::from_translation(Vec3::new(0.2, 0.1, -5.0)));
        let mut draws = vec![target];
        for k in 0..6 {
            let angle = k as f32 * std::f32::consts::TAU / 6.0;
            let at = Vec3::new(1.35 * angle.cos(), 1.35 * angle.sin(), -5.6);
            // Each box turned so that a corner points at the ray.
            let towards = glam::Quat::from_rotation_arc(Vec3::new(1.0, 1.0, 1.0).normalize(), -at.truncate().extend(0.0).normalize());
            draws.push(octahedron(2 + k, Mat4::from_rotation_translation(towards, at)));
        }
        let ray_meets_box = |d: &PickDraw| {
            let exact = crate::plan::affine_box::AffineBox::new(&d.bounds.unwrap(), &d.model, 0).unwrap();
            exact.meets(&crate::plan::ray::SlabRay::new(Vec3::ZERO, -Vec3::Z), 0.0).is_some()
        };
        assert!(draws[1..].iter().all(ray_meets_box), "every box reaches the ray");
        let (planned, _, reached) = plan_centre(draws);
        assert_eq!(planned, vec![0], "the six spheres are clear of the ray");
        assert_eq!(reached, 1);
    }

    #[test]
    fn the_walk_skips_what_a_sure_hit_hides_unless_a_draw_tests_depth_another_way() {
        let (planned, culled, reached) = plan_centre(column(64));
        assert_eq!(planned, vec![0], "only the nearest square can win the pixel");
        assert_eq!(culled, 63);
        assert!(reached < 32, "whole subtrees behind the first square were skipped: {reached} of 64 reached");
        // One square far behind always passes its depth test: it wins the pixel if drawn
        // after the nearest, so nothing may be skipped or dropped.
        let mut draws = column(64);
        draws[40] = draws[40].clone().with_raster(RasterState::default().with_depth_compare(vk::CompareOp::ALWAYS));
        let (planned, _, reached) = plan_centre(draws);
        assert_eq!(planned, (0..64).collect::<Vec<u32>>());
        assert_eq!(reached, 64, "planned again without skipping");
    }
}
