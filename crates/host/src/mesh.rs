//! A triangle-list mesh on the CPU, as shapes build it, glTF loads it and upload sends it.

use glam::{Vec2, Vec3};

/// One triangle-list primitive (a glTF mesh primitive) with its colour.
#[derive(Clone, Debug, Default)]
pub struct Primitive {
    pub positions: Vec<Vec3>,
    pub normals: Vec<Vec3>,
    pub uvs: Option<Vec<Vec2>>,
    /// `None`: every three vertices form a triangle.
    pub indices: Option<Vec<u32>>,
    pub color: [f32; 4],
}

impl Primitive {
    pub fn triangle_count(&self) -> usize {
        self.indices.as_ref().map_or(self.positions.len(), Vec::len) / 3
    }

    /// Vertex indices of triangle `t`.
    pub fn triangle(&self, t: usize) -> [u32; 3] {
        match &self.indices {
            Some(ix) => [ix[3 * t], ix[3 * t + 1], ix[3 * t + 2]],
            None => [3 * t as u32, 3 * t as u32 + 1, 3 * t as u32 + 2],
        }
    }

    /// Smooth vertex normals from the triangles (for files without normals).
    pub fn compute_normals(&mut self) {
        let mut normals = vec![Vec3::ZERO; self.positions.len()];
        for t in 0..self.triangle_count() {
            let [a, b, c] = self.triangle(t).map(|i| i as usize);
            let n = (self.positions[b] - self.positions[a]).cross(self.positions[c] - self.positions[a]);
            for i in [a, b, c] {
                normals[i] += n;
            }
        }
        self.normals = normals.into_iter().map(|n| n.normalize_or(Vec3::Y)).collect();
    }

    pub fn bounds(&self) -> Option<(Vec3, Vec3)> {
        let mut it = self.positions.iter();
        let first = *it.next()?;
        Some(it.fold((first, first), |(lo, hi), p| (lo.min(*p), hi.max(*p))))
    }
}
