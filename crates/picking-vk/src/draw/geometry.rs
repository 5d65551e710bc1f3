//! [`MeshGeometry`]: the CPU copy of a draw's geometry, for detail results and bounds.

use crate::draw::deform::SkinInfluences;
use crate::draw::{Aabb, Triangles};
use crate::error::PickError;
use glam::{Vec2, Vec3};

/// A CPU copy of the geometry a draw reads, registered once and shared (never copied per
/// pick). Arrays mirror the buffers the draw binds: `indices` the index buffer range (as
/// u32), `positions` the vertices of the position range. Draws that share one engine buffer
/// share one `Arc<MeshGeometry>`: each draw's `triangles` say which part is its own, and only
/// that part bounds it (see [`crate::PickDraw::with_geometry`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshGeometry {
    /// Vertex positions, in the position buffer's order.
    pub positions: Vec<Vec3>,
    /// One normal per vertex, when the mesh has them.
    pub normals: Option<Vec<Vec3>>,
    /// One texture coordinate per vertex, when the mesh has them.
    pub uvs: Option<Vec<Vec2>>,
    /// The index buffer's indices, widened to u32, for indexed draws.
    pub indices: Option<Vec<u32>>,
    /// Skin influences per vertex (one entry per set of four), for detail on skinned draws:
    /// the sets the draw's [`Skin`](crate::deform::Skin) reads, `influences` first, then
    /// `more_influences`. A skinned hit whose geometry holds fewer has no surface (the GPU
    /// moved its vertices by joints the CPU was not given); sets past them are not read.
    pub skin: Vec<SkinInfluences>,
    /// Morph target position deltas, `[target][vertex]`, for detail on morphed draws.
    pub morph_targets: Vec<Vec<Vec3>>,
}

impl MeshGeometry {
    /// The three vertex positions of list triangle `t` of a draw of this geometry (`None` past
    /// its arrays).
    pub(crate) fn list_triangle(&self, triangles: &Triangles, t: u32) -> Option<[Vec3; 3]> {
        let element = |k: u32| -> Option<usize> {
            let e = t.checked_mul(3)?.checked_add(k)?;
            match *triangles {
                Triangles::NonIndexed { first_vertex, .. } => usize::try_from(first_vertex.checked_add(e)?).ok(),
                Triangles::Indexed { first_index, vertex_offset, .. } => {
                    let i = *self.indices.as_ref()?.get(usize::try_from(first_index.checked_add(e)?).ok()?)?;
                    usize::try_from(i64::from(i) + i64::from(vertex_offset)).ok()
                }
            }
        };
        Some([self.positions.get(element(0)?).copied()?, self.positions.get(element(1)?).copied()?, self.positions.get(element(2)?).copied()?])
    }

    /// Checks the arrays agree with each other (normals/UVs per vertex, indices in range).
    pub fn validate(&self) -> Result<(), PickError> {
        let n = self.positions.len();
        let bad = |what: String| Err(PickError::InvalidGeometry(what));
        if self.normals.as_ref().is_some_and(|v| v.len() != n) {
            return bad("normal count differs from position count".into());
        }
        if self.uvs.as_ref().is_some_and(|v| v.len() != n) {
            return bad("UV count differs from position count".into());
        }
        if let Some(&i) = self.indices.as_ref().and_then(|ix| ix.iter().find(|&&i| i as usize >= n)) {
            return bad(format!("index {i} is past the {n} vertices"));
        }
        if self.skin.iter().any(|s| s.joints.len() != n || s.weights.len() != n) {
            return bad("skin joint or weight count differs from position count".into());
        }
        if self.morph_targets.iter().any(|t| t.len() != n) {
            return bad("a morph target's delta count differs from position count".into());
        }
        Ok(())
    }

    /// The box around the vertices `triangles` reads (its own range of shared buffers), or
    /// around every vertex when an indexed draw's indices were not registered.
    /// A vertex that is not finite gives no bounds (the draw is then never culled): glam's
    /// `min` and `max` would let a NaN wipe out the vertices folded before it.
    pub(crate) fn bounds_of(&self, triangles: &Triangles) -> Option<Aabb> {
        let mut finite = true;
        let grow = |b: Option<Aabb>, p: Vec3| {
            finite &= p.is_finite();
            Some(b.map_or(Aabb { min: p, max: p }, |b| Aabb { min: b.min.min(p), max: b.max.max(p) }))
        };
        let bounds = self.fold_drawn(triangles, None, grow)?;
        bounds.filter(|b| finite && b.is_finite())
    }

    /// Folds `f` over the vertices `triangles` reads (as [`MeshGeometry::bounds_of`] takes
    /// them, in index order); `None` when one of them is not in the arrays.
    pub(crate) fn fold_drawn<B>(&self, triangles: &Triangles, init: B, mut f: impl FnMut(B, Vec3) -> B) -> Option<B> {
        match *triangles {
            Triangles::NonIndexed { first_vertex, vertex_count } => {
                let range = self.positions.get(first_vertex as usize..(first_vertex as usize).saturating_add(vertex_count as usize))?;
                Some(range.iter().fold(init, |b, &p| f(b, p)))
            }
            Triangles::Indexed { first_index, index_count, vertex_offset, .. } => {
                let Some(indices) = &self.indices else { return Some(self.positions.iter().fold(init, |b, &p| f(b, p))) };
                let own = indices.get(first_index as usize..(first_index as usize).saturating_add(index_count as usize))?;
                own.iter().try_fold(init, |b, &i| {
                    let v = usize::try_from(i64::from(i) + i64::from(vertex_offset)).ok()?;
                    Some(f(b, *self.positions.get(v)?))
                })
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::draw::{BufferRange, IndexWidth};
    use ash::vk;

    /// A triangle (vertices 0, 1, 2) behind an unrelated degenerate one (vertex 3), with
    /// normals and UVs: shared by the detail tests.
    pub(crate) fn triangle() -> MeshGeometry {
        MeshGeometry {
            positions: vec![Vec3::ZERO, Vec3::new(2.0, 0.0, 0.0), Vec3::new(0.0, 4.0, 0.0), Vec3::new(9.0, 9.0, 9.0)],
            normals: Some(vec![Vec3::Z, Vec3::X, Vec3::Y, Vec3::Z]),
            uvs: Some(vec![Vec2::ZERO, Vec2::X, Vec2::Y, Vec2::ONE]),
            indices: Some(vec![3, 3, 3, 0, 1, 2]),
            ..Default::default()
        }
    }

    #[test]
    fn geometry_validation() {
        triangle().validate().unwrap();
        let mut g = triangle();
        g.indices = Some(vec![0, 1, 4]);
        assert!(matches!(g.validate(), Err(PickError::InvalidGeometry(_))));
        let mut g = triangle();
        g.uvs = Some(vec![Vec2::ZERO]);
        assert!(g.validate().is_err());
    }

    #[test]
    fn bounds_cover_only_the_draws_own_range() {
        let g = triangle();
        let range = BufferRange { buffer: vk::Buffer::null(), offset: 0, size: 24 };
        let indexed = |first_index, vertex_offset| Triangles::Indexed { range, width: IndexWidth::U32, first_index, index_count: 3, vertex_offset };
        let b = g.bounds_of(&indexed(3, 0)).unwrap();
        assert_eq!((b.min, b.max), (Vec3::ZERO, Vec3::new(2.0, 4.0, 0.0)), "vertex 3 belongs to another draw");
        let b = g.bounds_of(&indexed(0, 0)).unwrap();
        assert_eq!((b.min, b.max), (Vec3::splat(9.0), Vec3::splat(9.0)));
        assert_eq!(g.bounds_of(&indexed(0, 1)), None, "indices past the vertices give no bounds");
        let mut nan = g.clone();
        nan.positions[1] = Vec3::NAN;
        assert_eq!(nan.bounds_of(&Triangles::NonIndexed { first_vertex: 0, vertex_count: 3 }), None, "a NaN vertex gives no bounds");
        let b = g.bounds_of(&Triangles::NonIndexed { first_vertex: 1, vertex_count: 3 }).unwrap();
        assert_eq!((b.min, b.max), (Vec3::ZERO, Vec3::splat(9.0)));
    }
}
