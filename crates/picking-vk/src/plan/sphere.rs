//! Bounding spheres: a draw whose registered geometry mirrors what the GPU draws is also
//! bounded by the sphere around its vertices. A box under a rotation reaches up to sqrt(3)
//! times further than a round mesh does, so the sphere tightens both what the ray meets and
//! how near a draw can come (see [`super::depth_keys`]). Both bounds hold, so a draw is kept
//! only where both allow it, and culling stays conservative.

use super::depth_bounded_by_box;
use super::ray::{PadLine, SlabRay};
use crate::draw::{Aabb, PickDraw, PositionFormat, Triangles};
use foldhash::HashMap;
use glam::{DMat3, DVec3, Mat4};
use std::sync::Arc;

/// Relative slack on radii for f64 rounding, far below any padding.
const SLACK: f64 = 1e-9;

/// A sphere in world space.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct BoundingSphere {
    pub centre: DVec3,
    pub radius: f64,
}

/// Per geometry and triangle range: the radius of its vertices about its box's centre.
type RadiusKey = (usize, [u32; 3], [u32; 3]);

/// An upper bound on how much `m`'s linear part stretches a vector: the square root of
/// Gershgorin's bound on the largest eigenvalue of `m^T m` (exact for rotations and for
/// scales along the axes, unlike the Frobenius norm's sqrt(3) under rotation).
fn spectral_bound(m: &Mat4) -> f64 {
    let l = DMat3::from_mat4(m.as_dmat4());
    let gram = l.transpose() * l;
    let rows = [gram.row(0), gram.row(1), gram.row(2)];
    let largest = rows.iter().map(|r| r.abs().element_sum()).fold(0.0, f64::max);
    largest.sqrt() * (1.0 + SLACK)
}

/// Whether a draw with registered geometry and bounds can be bounded by its vertices' sphere:
/// its depth and coverage are bounded by its vertices under its matrix, and the registered
/// positions are the ones drawn.
fn sphere_bounds(draw: &PickDraw) -> bool {
    draw.position_format == PositionFormat::Float32x3 && depth_bounded_by_box(draw)
}

/// The world spheres of a draw list's draws (`None` where a sphere does not bound one),
/// each mesh range's radius measured once.
pub(crate) fn spheres_of(draws: &[PickDraw]) -> Vec<Option<BoundingSphere>> {
    let mut radii: HashMap<RadiusKey, Option<f64>> = HashMap::default();
    draws
        .iter()
        .map(|draw| {
            let (true, Some(geometry), Some(local)) = (sphere_bounds(draw), draw.geometry.as_ref(), draw.culling_bounds()) else { return None };
            let centre = local.center();
            let range = match draw.triangles {
                Triangles::NonIndexed { first_vertex, vertex_count } => [first_vertex, vertex_count, 0],
                Triangles::Indexed { first_index, index_count, vertex_offset, .. } => [first_index, index_count, vertex_offset as u32],
            };
            let key = (Arc::as_ptr(geometry) as usize, range, centre.to_array().map(f32::to_bits));
            let about = centre.as_dvec3();
            let radius = *radii.entry(key).or_insert_with(|| geometry.fold_drawn(&draw.triangles, 0.0, |r: f64, p| r.max((p.as_dvec3() - about).length())));
            let sphere = BoundingSphere {
                centre: draw.model.as_dmat4().transform_point3(centre.as_dvec3()),
                radius: radius? * (1.0 + SLACK) * spectral_bound(&draw.model),
            };
            (sphere.centre.is_finite() && sphere.radius.is_finite()).then_some(sphere)
        })
        .collect()
}

/// The part of `world` its sphere (if any) also bounds: both hold every vertex.
pub(crate) fn within_sphere(world: Aabb, sphere: Option<&BoundingSphere>) -> Aabb {
    let Some(s) = sphere.map(BoundingSphere::aabb) else { return world };
    let both = Aabb { min: world.min.max(s.min), max: world.max.min(s.max) };
    if both.min.cmple(both.max).all() {
        both
    } else {
        world
    }
}

impl BoundingSphere {
    /// Whether the ray (unit direction, from its origin on) passes within the sphere grown by
    /// `pad` at the farthest any point of the sphere lies from the origin. (Padding is a
    /// distance between points at equal distance along this ray and a neighbouring one, or a
    /// corner ray of a region: a point of the sphere at distance `d` from the origin lies
    /// within `pad(d)` of this ray's point at `d`. The sphere's own extent along the ray is
    /// not enough: for a wide region the corner rays stray by more than that.)
    pub fn meets(&self, ray: &SlabRay, pad: PadLine) -> bool {
        let (origin, dir) = (ray.origin.as_dvec3(), ray.dir.as_dvec3());
        let to_centre = self.centre - origin;
        let along = to_centre.dot(dir) / dir.length_squared();
        // The nearest point of the ray (from its origin on) to the centre.
        let nearest = origin + dir * along.max(0.0);
        let reach = self.radius + f64::from(pad.at((to_centre.length() + self.radius) as f32));
        let distance = (self.centre - nearest).length();
        distance <= reach * (1.0 + 1e-6)
    }

    /// The axis-aligned box around the sphere, rounded outwards to f32.
    pub fn aabb(&self) -> Aabb {
        let (lo, hi) = (self.centre - self.radius, self.centre + self.radius);
        let (lo, hi) = (lo - lo.abs() * SLACK, hi + hi.abs() * SLACK);
        Aabb { min: lo.as_vec3() - lo.as_vec3().abs() * f32::EPSILON, max: hi.as_vec3() + hi.as_vec3().abs() * f32::EPSILON }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draw::{BufferRange, IndexWidth, MeshGeometry, Positions};
    use crate::ObjectId;
    use ash::vk;
    use glam::{Quat, Vec3};

    fn octahedron_draw(model: Mat4) -> PickDraw {
        let positions = vec![Vec3::X, -Vec3::X, Vec3::Y, -Vec3::Y, Vec3::Z, -Vec3::Z];
        let indices = vec![0, 2, 4, 2, 1, 4, 1, 3, 4, 3, 0, 4, 2, 0, 5, 1, 2, 5, 3, 1, 5, 0, 3, 5];
        let geometry = Arc::new(MeshGeometry { positions, indices: Some(indices), ..Default::default() });
        let range = BufferRange { buffer: vk::Buffer::null(), offset: 0, size: 1 << 10 };
        let triangles = Triangles::Indexed { range, width: IndexWidth::U32, first_index: 0, index_count: 24, vertex_offset: 0 };
        PickDraw::new(ObjectId::new(1).unwrap(), Positions { range, stride: 12, vertex_count: 6 }, triangles).with_geometry(geometry).with_model(model)
    }

    #[test]
    fn a_rotated_round_mesh_keeps_its_radius_and_a_scaled_one_its_largest_stretch() {
        let rotated = Mat4::from_rotation_translation(Quat::from_axis_angle(Vec3::new(1.0, 2.0, 3.0).normalize(), 0.7), Vec3::new(0.0, 0.0, -10.0));
        let s = spheres_of(&[octahedron_draw(rotated)])[0].unwrap();
        assert!((s.radius - 1.0).abs() < 1e-6, "a rotation does not stretch: {}", s.radius);
        assert!((s.centre - DVec3::new(0.0, 0.0, -10.0)).length() < 1e-6);
        // A rotated non-uniform scale: the bound is at least the largest stretch (3) and
        // every vertex lies inside.
        let model = Mat4::from_scale_rotation_translation(Vec3::new(3.0, 1.0, 0.5), Quat::from_rotation_z(0.4), Vec3::ZERO);
        let s = spheres_of(&[octahedron_draw(model)])[0].unwrap();
        assert!(s.radius >= 3.0 - 1e-5 && s.radius < 3.0 * 3f64.sqrt(), "{}", s.radius);
        for p in [Vec3::X, -Vec3::X, Vec3::Y, -Vec3::Y, Vec3::Z, -Vec3::Z] {
            assert!((model.transform_point3(p).as_dvec3() - s.centre).length() <= s.radius);
        }
    }

    #[test]
    fn the_padded_ray_meets_what_passes_within_radius_and_padding() {
        let sphere = BoundingSphere { centre: DVec3::new(0.0, 0.0, -10.0), radius: 1.0 };
        let ray = |x: f32| SlabRay::new(Vec3::new(x, 0.0, 0.0), -Vec3::Z);
        let none = PadLine { base: 0.0, slope: 0.0 };
        assert!(sphere.meets(&ray(0.99), none));
        assert!(!sphere.meets(&ray(1.01), none));
        assert!(sphere.meets(&ray(1.01), PadLine { base: 0.0, slope: 0.002 }), "padding grows with distance");
        // Behind the origin: only the part at or past the origin counts.
        let behind = SlabRay::new(Vec3::new(0.0, 0.0, -12.0), -Vec3::Z);
        assert!(!behind.dir.is_nan() && !sphere.meets(&behind, none));
        let inside = SlabRay::new(Vec3::new(0.0, 0.5, -10.5), Vec3::X);
        assert!(sphere.meets(&inside, none), "the origin inside the sphere");
    }

    #[test]
    fn a_wide_rectangle_keeps_what_its_corner_pixels_see() {
        // A 20x20 rectangle of a view with a field of 2.4 radians: its corner rays stray 1.3
        // radians from its centre ray. A small mesh straight down the ray of the corner pixel
        // must be planned (it was culled when the padding was taken at the sphere's extent
        // along the centre ray rather than at its distance from the origin).
        use crate::plan::{PixelRay, Plan};
        use crate::request::camera::CameraSnapshot;
        use crate::request::query::PixelRect;
        use crate::{PickRequest, Viewport};
        use glam::UVec2;
        let projection = glam::camera::rh::proj::vulkan::perspective(2.4, 64.0 / 48.0, 0.1, 100.0);
        let camera = CameraSnapshot::new(Mat4::IDENTITY, projection, Viewport::full(64, 48), None).unwrap();
        let rect = PixelRect::new(UVec2::new(27, 16), UVec2::new(47, 36));
        for corner in [UVec2::new(27, 16), UVec2::new(46, 35), UVec2::new(27, 35), UVec2::new(46, 16)] {
            let ray = camera.pixel_ray(corner).unwrap();
            let at = (ray.origin + ray.direction * 3.0).as_vec3();
            let draws: Arc<[PickDraw]> = vec![octahedron_draw(Mat4::from_translation(at) * Mat4::from_scale(Vec3::splat(0.2)))].into();
            let request = PickRequest::new(Viewport::full(64, 48), Mat4::IDENTITY, projection);
            let mut plan = Plan::default();
            plan.build_shared(&request, &draws, PixelRay::covering(&camera, &rect).as_ref(), None, None);
            assert_eq!(plan.entries.len(), 1, "the mesh down corner pixel {corner}'s ray is planned");
        }
    }

    #[test]
    fn draws_the_sphere_cannot_stand_for_get_none() {
        let mut unbounded = octahedron_draw(Mat4::IDENTITY);
        unbounded.bounds = None;
        let projective = octahedron_draw(Mat4::from_cols_array(&[1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.5, 0.0, 0.0, 0.0, 1.0]));
        let no_geometry = PickDraw { geometry: None, ..octahedron_draw(Mat4::IDENTITY) };
        assert_eq!(spheres_of(&[unbounded, projective, no_geometry]), vec![None, None, None]);
    }
}
