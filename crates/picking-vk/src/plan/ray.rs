//! The pick ray as culling sees it: an f32 ray with how wide a pixel is along it, and the
//! padding that keeps culling conservative.

use crate::draw::Aabb;
use crate::request::camera::{CameraSnapshot, Ray};
use crate::request::query::PixelRect;
use glam::{DVec2, Mat3, Mat4, UVec2, Vec3};

/// Padding that grows linearly with distance: `pad(d) = base + slope * d`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PadLine {
    pub base: f32,
    pub slope: f32,
}

impl PadLine {
    pub fn at(self, distance: f32) -> f32 {
        self.base + self.slope * distance.max(0.0)
    }

    /// The same padding for geometry in another space: distances there are at most
    /// `to_world` times longer in world space, and world lengths at most `to_space` times
    /// longer there.
    pub fn in_space(self, to_world: f32, to_space: f32) -> PadLine {
        PadLine { base: self.base * to_space, slope: self.slope * to_world * to_space }
    }
}

/// Padding for one query: by the farthest a node's points can be from the ray origin (in the
/// query's space), and by ray parameter (a world distance, as the world ray is unit length).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Padding {
    pub by_reach: PadLine,
    pub along_ray: PadLine,
}

/// The pick ray in f32 with how wide a pixel is along it: `footprint(t) = a + b * t`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PixelRay {
    pub origin: Vec3,
    pub dir: Vec3,
    a: f32,
    b: f32,
    /// For a region of pixels: how far the rays through its corners stray from this one,
    /// `reach(t) = reach_a + reach_b * t` (0 for a single pixel).
    reach_a: f32,
    reach_b: f32,
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
        Some(PixelRay { origin: ray.origin.as_vec3(), dir: ray.direction.as_vec3(), a: a as f32, b: b as f32, reach_a: 0.0, reach_b: 0.0 })
    }

    /// A cone around the ray through the centre of `region` that holds every ray through its
    /// pixels: it reaches the rays through the corners of the region grown by one pixel (rays
    /// through a rectangle stray furthest at its corners), plus the usual two footprints.
    pub fn covering(camera: &CameraSnapshot, region: &PixelRect) -> Option<Self> {
        if region.area() == 1 {
            return Self::new(camera, region.min);
        }
        let (lo, hi) = (region.min.as_dvec2() - 1.0, region.max.as_dvec2() + 1.0);
        let centre = camera.ray_at((lo + hi) * 0.5)?;
        let footprint = Self::new(camera, region.min)?;
        let (mut ra, mut rb) = (0.0f64, 0.0f64);
        for corner in [lo, hi, DVec2::new(lo.x, hi.y), DVec2::new(hi.x, lo.y)] {
            let other = camera.ray_at(corner)?;
            ra = ra.max((other.origin - centre.origin).length());
            rb = rb.max((other.direction - centre.direction).length());
        }
        // A point at distance d from the centre ray's origin lies at most d + ra along a corner ray.
        Some(PixelRay {
            origin: centre.origin.as_vec3(),
            dir: centre.direction.as_vec3(),
            a: footprint.a,
            b: footprint.b,
            reach_a: (ra * (1.0 + rb)) as f32,
            reach_b: rb as f32,
        })
    }

    /// The same ray padded by `pixels` more footprints: what a line or point sprite that many
    /// pixels from its vertex still covers.
    pub fn widened(&self, pixels: f32) -> PixelRay {
        let grow = 1.0 + pixels.max(0.0) / 2.0;
        PixelRay { a: self.a * grow, b: self.b * grow, ..*self }
    }

    #[cfg(test)]
    pub fn from_parts(origin: Vec3, dir: Vec3, a: f32, b: f32) -> Self {
        PixelRay { origin, dir, a, b, reach_a: 0.0, reach_b: 0.0 }
    }

    /// Padding for geometry up to world distance `t` from the origin: two pixel footprints
    /// (vertex snapping moves edges by 1/256 px) plus slack for f32 rounding. Culling works
    /// in f32 world coordinates while the pick pass composes its matrices in f64, so the slack
    /// grows with how far from the origin the ray starts (2 ulps of it: its origin rounded to
    /// f32; box tests add what their own rounding loses).
    pub fn margin(&self) -> PadLine {
        let rounding = 2.0 * f32::EPSILON * self.origin.abs().max_element();
        PadLine { base: self.reach_a + 2.0 * self.a + 1e-5 + rounding, slope: self.reach_b + 2.0 * self.b + 1e-5 + 16.0 * f32::EPSILON }
    }

    /// The margin for a query in world space.
    pub fn world_padding(&self) -> Padding {
        Padding { by_reach: self.margin(), along_ray: self.margin() }
    }

    /// The margin for a query in a space whose distances are at most `to_world` times longer
    /// in world space, where world lengths are at most `to_space` times longer.
    pub fn padding_in_space(&self, to_world: f32, to_space: f32) -> Padding {
        Padding { by_reach: self.margin().in_space(to_world, to_space), along_ray: self.margin().in_space(1.0, to_space) }
    }

    /// The ray in the space `to_space` maps world space to.
    pub fn transformed(&self, to_space: &Mat4) -> SlabRay {
        SlabRay::new(to_space.transform_point3(self.origin), to_space.transform_vector3(self.dir))
    }

    pub fn slab(&self) -> SlabRay {
        SlabRay::new(self.origin, self.dir)
    }
}

/// A ray ready for slab tests. Direction components are kept away from zero (by far less than
/// any padding), so no test ever computes 0 * inf: every comparison is on numbers, never NaN.
/// A ray running exactly along a face plane may then just miss; culling always pads.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SlabRay {
    pub origin: Vec3,
    pub dir: Vec3,
    pub inv_dir: Vec3,
}

pub(crate) const TINY_DIRECTION: f32 = 1e-20;

/// Where a ray (`origin`, inverse direction `inv_dir`) leaves the box `lo..hi`, as a ray
/// parameter, if it meets the box from its origin on: the slab test every box test shares.
pub(crate) fn slab_exit(origin: Vec3, inv_dir: Vec3, lo: Vec3, hi: Vec3) -> Option<f32> {
    let (t1, t2) = ((lo - origin) * inv_dir, (hi - origin) * inv_dir);
    let (near, far) = (t1.min(t2).max_element(), t1.max(t2).min_element());
    (near <= far && far >= 0.0).then_some(far)
}

pub(crate) fn away_from_zero(v: Vec3) -> Vec3 {
    Vec3::select(v.abs().cmplt(Vec3::splat(TINY_DIRECTION)), Vec3::splat(TINY_DIRECTION), v)
}

impl SlabRay {
    pub fn new(origin: Vec3, dir: Vec3) -> Self {
        let dir = away_from_zero(dir);
        SlabRay { origin, dir, inv_dir: dir.recip() }
    }

    /// Whether the ray (from its origin on) meets `b` grown by the padding for the farthest
    /// any point of `b` can be from the origin (an L1 bound); returns that padding.
    pub fn meets_padded(&self, b: &Aabb, pad: PadLine) -> Option<f32> {
        let reach = (b.min - self.origin).abs().max((b.max - self.origin).abs()).element_sum();
        let p = pad.at(reach);
        slab_exit(self.origin, self.inv_dir, b.min - p, b.max + p).map(|_| p)
    }
}

/// An upper bound on how much `m`'s linear part stretches any vector: its Frobenius norm,
/// which is at least its largest singular value and at most sqrt(3) times it. (The longest
/// column is not a bound: under rotated non-uniform scale it falls short.)
pub(crate) fn stretch_bound(m: &Mat4) -> f32 {
    let l = Mat3::from_mat4(*m);
    (l.x_axis.length_squared() + l.y_axis.length_squared() + l.z_axis.length_squared()).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padded_box_test_includes_the_near_side_and_grows_with_distance() {
        let ray = PixelRay::from_parts(Vec3::ZERO, Vec3::NEG_Z, 0.0, 0.001);
        let (slab, margin) = (ray.slab(), ray.margin());
        let unit_at = |c: Vec3| Aabb { min: c - 0.5, max: c + 0.5 };
        assert!(slab.meets_padded(&unit_at(Vec3::new(0.0, 0.0, -10.0)), margin).is_some());
        assert!(slab.meets_padded(&unit_at(Vec3::new(1.0, 0.0, -10.0)), margin).is_none());
        // Two footprints at distance ~11 are ~0.022: a box 0.515 off-axis is still in reach.
        assert!(slab.meets_padded(&unit_at(Vec3::new(0.515, 0.0, -10.0)), margin).is_some(), "within two footprints");
        assert!(slab.meets_padded(&unit_at(Vec3::new(0.0, 0.0, 0.3)), margin).is_some(), "contains the origin");
        assert!(slab.meets_padded(&unit_at(Vec3::new(0.0, 0.0, 3.0)), margin).is_none(), "behind the ray");
    }

    #[test]
    fn stretch_bound_covers_rotated_non_uniform_scale() {
        // Shear-free but rotated: the largest column of the inverse understates its stretch.
        let m = Mat4::from_scale_rotation_translation(Vec3::new(1.0, 0.01, 1.0), glam::Quat::from_rotation_z(0.8), Vec3::ONE);
        let inv = m.inverse();
        let worst = (0..360).map(|deg| inv.transform_vector3(Vec3::new((deg as f32).to_radians().cos(), (deg as f32).to_radians().sin(), 0.0)).length());
        let worst = worst.fold(0.0f32, f32::max);
        assert!(stretch_bound(&inv) >= worst, "{} < {worst}", stretch_bound(&inv));
        assert!((stretch_bound(&Mat4::from_scale(Vec3::splat(3.0))) - 3.0 * 3f32.sqrt()).abs() < 1e-5);
    }
}
