//! The viewer's CPU scene: triangle primitives with normals and UVs, a flattened node list
//! with world transforms and glTF node indices, and an optional camera.

use glam::{Mat4, Vec2, Vec3};

/// One triangle-list primitive (a glTF mesh primitive).
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

/// A glTF mesh: the primitives it draws.
#[derive(Clone, Debug, Default)]
pub struct MeshAsset {
    pub name: Option<String>,
    pub primitives: Vec<Primitive>,
}

/// A node of the scene, flattened: its world transform is final.
#[derive(Clone, Debug)]
pub struct Node {
    /// Index in the glTF file's node array.
    pub gltf_index: usize,
    pub name: Option<String>,
    pub world: Mat4,
    pub mesh: Option<usize>,
}

/// A perspective camera placed in the world.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraDesc {
    pub world: Mat4,
    pub yfov: f32,
    pub znear: f32,
    /// `None`: infinite far plane.
    pub zfar: Option<f32>,
}

#[derive(Clone, Debug, Default)]
pub struct Scene {
    pub meshes: Vec<MeshAsset>,
    pub nodes: Vec<Node>,
    pub camera: Option<CameraDesc>,
}

impl Scene {
    /// World-space bounds of every mesh node.
    pub fn bounds(&self) -> (Vec3, Vec3) {
        let mut lo = Vec3::splat(f32::INFINITY);
        let mut hi = Vec3::splat(f32::NEG_INFINITY);
        for node in &self.nodes {
            let Some(mesh) = node.mesh else { continue };
            for prim in &self.meshes[mesh].primitives {
                for p in &prim.positions {
                    let w = node.world.transform_point3(*p);
                    lo = lo.min(w);
                    hi = hi.max(w);
                }
            }
        }
        if lo.x > hi.x {
            (Vec3::splat(-1.0), Vec3::splat(1.0))
        } else {
            (lo, hi)
        }
    }

    pub fn node_name(&self, node: usize) -> Option<&str> {
        self.nodes.get(node).and_then(|n| n.name.as_deref())
    }
}
