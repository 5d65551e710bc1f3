//! A box under an affine transform (a draw's local box under its model matrix), stored as the
//! map that takes it onto the cube [-1, 1]^3: testing a ray against it needs no matrix inverse
//! per frame, and the whole thing fits one cache line.

use super::ray::{away_from_zero, slab_exit, PadLine, SlabRay};
use crate::draw::Aabb;
use glam::{Mat4, Vec3, Vec4};

#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(crate) struct AffineBox {
    /// Rows of the map from the ray's space to cube coordinates: `c_i = rows[i] · (p, 1)`.
    rows: [Vec4; 3],
    /// Length of each row's linear part: how far a unit step in the ray's space moves each
    /// cube coordinate at most, so padding is exact per axis even for a flat box.
    row_norms: Vec3,
    /// The caller's index for this box.
    pub index: u32,
}

impl AffineBox {
    /// `local` under `model`; `None` when `model` is not invertible.
    pub fn new(local: &Aabb, model: &Mat4, index: u32) -> Option<Self> {
        let h = local.half_extent();
        // A flat box keeps its flat axis, thickened far below any padding.
        let h = h.max(Vec3::splat((1e-6 * h.max_element()).max(f32::MIN_POSITIVE.sqrt())));
        // In f64: far from the origin the inverse's translation is the difference of large
        // numbers.
        let to_cube =
            (glam::DMat4::from_scale(h.as_dvec3().recip()) * glam::DMat4::from_translation(-local.center().as_dvec3()) * model.as_dmat4().inverse()).as_mat4();
        if !to_cube.is_finite() {
            return None;
        }
        let rows = [to_cube.row(0), to_cube.row(1), to_cube.row(2)];
        let row_norms = Vec3::new(rows[0].truncate().length(), rows[1].truncate().length(), rows[2].truncate().length());
        row_norms.is_finite().then_some(AffineBox { rows, row_norms, index })
    }

    /// An axis-aligned box of the ray's space.
    pub fn axis_aligned(b: &Aabb, index: u32) -> Option<Self> {
        Self::new(b, &Mat4::IDENTITY, index)
    }

    /// Whether the ray meets the box grown by `pad`, with the padding then tightened to what
    /// the farthest point of that meeting needs: `along_ray` gives padding by ray parameter.
    pub fn meets_tight(&self, ray: &SlabRay, pad: f32, along_ray: PadLine) -> bool {
        let Some(far) = self.meets(ray, pad) else { return false };
        let tighter = along_ray.at(far);
        tighter >= pad || self.meets(ray, tighter).is_some()
    }

    /// Where the ray (from its origin on) leaves the box grown by `pad` on every side, as a
    /// ray parameter, if it meets it at all.
    pub fn meets(&self, ray: &SlabRay, pad: f32) -> Option<f32> {
        let [r0, r1, r2] = self.rows;
        let o = ray.origin.extend(1.0);
        let origin = Vec3::new(r0.dot(o), r1.dot(o), r2.dot(o));
        let dir = away_from_zero(Vec3::new(r0.truncate().dot(ray.dir), r1.truncate().dot(ray.dir), r2.truncate().dot(ray.dir)));
        // Far from the origin each cube coordinate of the ray's origin is a small difference
        // of large terms: what their rounding (and the rows') may have lost widens the cube.
        let lost = |r: Vec4| 4.0 * f32::EPSILON * (r * o).abs().element_sum();
        let reach = Vec3::ONE + self.row_norms * pad + Vec3::new(lost(r0), lost(r1), lost(r2));
        slab_exit(origin, dir.recip(), -reach, reach)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    impl AffineBox {
        fn meets_test(&self, ray: &SlabRay, pad: f32) -> bool {
            self.meets(ray, pad).is_some()
        }
    }

    #[test]
    fn affine_box_is_the_transformed_box_and_pads_per_axis() {
        let local = Aabb { min: Vec3::new(-1.0, -1.0, 0.0), max: Vec3::new(1.0, 1.0, 0.0) }; // flat in z
        let model = Mat4::from_scale_rotation_translation(Vec3::new(2.0, 1.0, 1.0), Quat::from_rotation_y(0.5), Vec3::new(0.0, 0.0, -10.0));
        let b = AffineBox::new(&local, &model, 7).unwrap();
        let center = model.transform_point3(Vec3::ZERO);
        let toward = |target: Vec3| SlabRay::new(Vec3::ZERO, (target - Vec3::ZERO).normalize());
        assert!(b.meets_test(&toward(center), 0.0), "through the centre");
        // Just inside and just outside the local x edge (world half width 2 along the rotated x).
        let edge = |x: f32| toward(model.transform_point3(Vec3::new(x, 0.0, 0.0)));
        assert!(b.meets_test(&edge(0.99), 0.0));
        assert!(!b.meets_test(&edge(1.01), 0.0));
        assert!(b.meets_test(&edge(1.01), 0.05), "padding reaches it");
        // A ray grazing the flat side misses unless padded.
        let shifted = SlabRay::new(model.transform_point3(Vec3::new(-5.0, 0.0, 0.01)), model.transform_vector3(Vec3::X));
        assert!(!b.meets_test(&shifted, 0.0));
        assert!(b.meets_test(&shifted, 0.011));
        assert!(AffineBox::new(&local, &Mat4::from_scale(Vec3::new(1.0, 0.0, 1.0)), 0).is_none(), "singular model");
    }

    #[test]
    fn rays_behind_or_parallel_are_decided_without_nan() {
        let b = AffineBox::axis_aligned(&Aabb { min: Vec3::splat(-1.0), max: Vec3::splat(1.0) }, 0).unwrap();
        assert!(!b.meets_test(&SlabRay::new(Vec3::new(0.0, 0.0, 5.0), Vec3::Z), 0.0), "box behind the origin");
        assert!(b.meets_test(&SlabRay::new(Vec3::new(0.0, 0.0, 0.5), Vec3::Z), 0.0), "origin inside");
        // Along a face plane: on the boundary any padding makes it a hit, just beyond it not.
        assert!(b.meets_test(&SlabRay::new(Vec3::new(-5.0, 1.0, 0.0), Vec3::X), 1e-6));
        assert!(!b.meets_test(&SlabRay::new(Vec3::new(-5.0, 1.001, 0.0), Vec3::X), 0.0));
    }
}
