//! What the loader derives from a file and the scene keeps: where split triangles came from
//! ([`SourceFaces`], made by `gltf_load::refine`) and what bounds each deformed primitive
//! ([`PrimitiveReach`], measured by `gltf_load::reach`).

use glam::Vec3;
use picking_vk_host::Primitive;

/// Where each triangle of a refined primitive came from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SourceFaces {
    /// Per triangle: its source triangle's index in the file's primitive.
    pub face: Vec<u32>,
    /// Per triangle: its corners' barycentric weights in the source triangle.
    pub corners: Vec<[[f32; 3]; 3]>,
    /// Per source triangle: its vertex indices (which the refined primitive keeps).
    pub source_vertices: Vec<[u32; 3]>,
}

impl SourceFaces {
    /// The source triangle, barycentric weights there and its vertices, of a point of
    /// triangle `face` at `bary`.
    pub fn source_of(&self, face: u32, bary: [f32; 3]) -> Option<(u32, [f32; 3], [u32; 3])> {
        let source = *self.face.get(face as usize)?;
        let c = self.corners.get(face as usize)?;
        let w = std::array::from_fn(|k| bary[0] * c[0][k] + bary[1] * c[1][k] + bary[2] * c[2][k]);
        Some((source, w, *self.source_vertices.get(source as usize)?))
    }
}

/// What bounds a deformed primitive's vertices, measured once at load.
#[derive(Clone, Debug, Default)]
pub struct PrimitiveReach {
    /// The largest |coordinate| of its rest positions, and at least 1 (the homogeneous one).
    pub(crate) positions: f64,
    /// Per morph target, its largest |offset|.
    pub(crate) offsets: Vec<f64>,
    /// The largest sum of one vertex's skin weights over all its influence sets.
    pub(crate) weights: f64,
    /// Whether a skinned node skins it (triangles with influences); otherwise its node's world
    /// places it (see `scene_upload::skinned_by`).
    pub(crate) skinned: bool,
}

fn largest(v: &[Vec3]) -> f64 {
    v.iter().flat_map(|v| v.to_array()).fold(0.0f64, |a, x| a.max(f64::from(x.abs())))
}

impl PrimitiveReach {
    pub(crate) fn of(p: &Primitive) -> Self {
        let weight_sum = |i: usize| p.skin.iter().filter_map(|set| set.weights.get(i)).flatten().map(|&w| f64::from(w)).sum::<f64>();
        PrimitiveReach {
            positions: largest(&p.positions).max(1.0),
            offsets: p.morph_targets.iter().map(|t| largest(t)).collect(),
            weights: (0..p.positions.len()).map(weight_sum).fold(0.0, f64::max),
            skinned: !p.skin.is_empty() && p.topology == picking_vk::draw::Topology::TriangleList,
        }
    }

    /// The largest coordinate its vertices can take under morph `weights`.
    pub(crate) fn morphed(&self, weights: &[f32]) -> f64 {
        self.positions + self.offsets.iter().zip(weights).map(|(o, w)| f64::from(w.abs()) * o).sum::<f64>()
    }
}
