//! The viewer's CPU scene: meshes of triangle primitives (the host crate's [`Primitive`]), a
//! flattened node list with world transforms and glTF node indices, and an optional camera.

use glam::{DVec3, Mat4, Vec3};
use picking_vk_host::{Primitive, TextureData};

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
    /// World transforms relative to `origin`.
    pub nodes: Vec<Node>,
    /// Placed relative to `origin`.
    pub camera: Option<CameraDesc>,
    /// Base colour textures, which primitives name by index.
    pub textures: Vec<TextureData>,
    /// Where the scene's frame sits in the file's world (f64): zero for scenes near the
    /// origin, the scene's centre for far-off ones (georeferenced data at 1e5 to 1e6), so
    /// that everything rendered and picked stays in small f32 coordinates. Reported points
    /// add it back.
    pub origin: DVec3,
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
