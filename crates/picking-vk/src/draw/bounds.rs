//! Axis-aligned bounds for culling.

use glam::{Mat4, Vec3};

/// Boxes reaching farther than this from the origin are never culled: the f32 ray tests
/// multiply coordinates by coordinate-sized values, which overflow past about 1e19 (a mesh
/// with one vertex at 3e38 was culled whole, its ordinary triangles with it).
pub(crate) const MAX_CULLED_COORDINATE: f32 = 1e18;

/// A local-space axis-aligned box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// Smallest corner.
    pub min: Vec3,
    /// Largest corner.
    pub max: Vec3,
}

impl Aabb {
    /// The box around `points`; `None` when empty or when any point is not finite (glam's
    /// `min` and `max` would let a NaN wipe out the points folded before it).
    pub fn from_points(points: &[Vec3]) -> Option<Aabb> {
        if !points.iter().all(|p| p.is_finite()) {
            return None;
        }
        let mut it = points.iter();
        let first = *it.next()?;
        let b = it.fold(Aabb { min: first, max: first }, |b, p| Aabb { min: b.min.min(*p), max: b.max.max(*p) });
        b.is_finite().then_some(b)
    }

    /// Whether both corners are finite and ordered.
    pub fn is_finite(&self) -> bool {
        self.min.is_finite() && self.max.is_finite() && self.min.cmple(self.max).all()
    }

    /// Whether culling can test the box: finite, ordered, and within [`MAX_CULLED_COORDINATE`]
    /// of the origin.
    pub(crate) fn is_cullable(&self) -> bool {
        self.is_finite() && self.min.abs().max(self.max.abs()).max_element() < MAX_CULLED_COORDINATE
    }

    /// The centre point.
    pub fn center(&self) -> Vec3 {
        (self.min + self.max) * 0.5
    }

    /// Half the size along each axis.
    pub fn half_extent(&self) -> Vec3 {
        (self.max - self.min) * 0.5
    }

    /// The box around this box transformed by `m` (Arvo's method: exact for the corners),
    /// taken in f64 and rounded outwards: far from the origin (1e6, where f32 values are
    /// 0.06 apart) the box still holds every corner the GPU draws.
    pub fn transformed(&self, m: &Mat4) -> Aabb {
        let m = m.as_dmat4();
        let (lo, hi) = (self.min.as_dvec3(), self.max.as_dvec3());
        let (c, e) = ((lo + hi) * 0.5, (hi - lo) * 0.5);
        let c = m.transform_point3(c);
        let r = m.x_axis.truncate().abs() * e.x + m.y_axis.truncate().abs() * e.y + m.z_axis.truncate().abs() * e.z;
        let down = |v: glam::DVec3| v.as_vec3().to_array().map(|x| x.next_down());
        let up = |v: glam::DVec3| v.as_vec3().to_array().map(|x| x.next_up());
        Aabb { min: Vec3::from_array(down(c - r)), max: Vec3::from_array(up(c + r)) }
    }

    /// The box around both boxes.
    pub fn union(&self, o: &Aabb) -> Aabb {
        Aabb { min: self.min.min(o.min), max: self.max.max(o.max) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_box_far_from_the_origin_holds_its_corners_as_f64_places_them() {
        let b = Aabb { min: Vec3::new(-0.2, -0.1, -0.3), max: Vec3::new(0.25, 0.1, 0.05) };
        let m = Mat4::from_scale_rotation_translation(
            Vec3::new(0.3, 1.7, 0.9),
            glam::Quat::from_euler(glam::EulerRot::XYZ, 0.4, -1.2, 2.1),
            Vec3::new(1.5e6, -1.0e6, 5.0e5),
        );
        let t = b.transformed(&m);
        for k in 0..8 {
            let corner = Vec3::new([b.min.x, b.max.x][k & 1], [b.min.y, b.max.y][(k >> 1) & 1], [b.min.z, b.max.z][k >> 2]);
            let exact = m.as_dmat4().transform_point3(corner.as_dvec3());
            assert!(t.min.as_dvec3().cmple(exact).all() && exact.cmple(t.max.as_dvec3()).all(), "{exact} outside {t:?}");
        }
        // Rounded outwards by an ulp or so, not more.
        assert!((t.max - t.min).max_element() < 2.0, "{t:?}");
    }

    #[test]
    fn transformed_box_contains_every_transformed_corner() {
        let b = Aabb { min: Vec3::new(-1.0, 0.0, 2.0), max: Vec3::new(3.0, 1.0, 5.0) };
        let m = Mat4::from_scale_rotation_translation(
            Vec3::new(2.0, 0.5, 1.5),
            glam::Quat::from_euler(glam::EulerRot::XYZ, 0.3, 1.1, -0.7),
            Vec3::new(4.0, -2.0, 1.0),
        );
        let t = b.transformed(&m);
        for i in 0..8 {
            let corner =
                Vec3::new(if i & 1 == 0 { b.min.x } else { b.max.x }, if i & 2 == 0 { b.min.y } else { b.max.y }, if i & 4 == 0 { b.min.z } else { b.max.z });
            let p = m.transform_point3(corner);
            assert!(p.cmpge(t.min - 1e-5).all() && p.cmple(t.max + 1e-5).all(), "{p} outside {t:?}");
        }
        assert_eq!(Aabb::from_points(&[]), None);
        assert_eq!(Aabb::from_points(&[Vec3::NAN]), None);
        // A NaN after some points and before others: min/max would keep only the later ones.
        let mixed = [Vec3::new(-10.0, 0.0, 0.0), Vec3::new(-9.0, 1.0, 0.0), Vec3::NAN, Vec3::ZERO, Vec3::ONE];
        assert_eq!(Aabb::from_points(&mixed), None);
    }
}
