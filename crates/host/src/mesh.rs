//! A triangle-list mesh on the CPU, as shapes build it, glTF loads it and upload sends it.

use glam::{Vec2, Vec3, Vec4};
use picking_vk::{deform::SkinInfluences, draw::Topology};

/// One triangle-list primitive (a glTF mesh primitive) with its material: a base colour, an
/// optional base colour texture, alpha masking and sidedness.
#[derive(Clone, Debug, Default)]
pub struct Primitive {
    pub positions: Vec<Vec3>,
    pub normals: Vec<Vec3>,
    pub uvs: Option<Vec<Vec2>>,
    /// Vertex colours (glTF `COLOR_0`, linear RGBA), multiplying the base colour and its alpha.
    pub colors: Option<Vec<Vec4>>,
    /// `None`: every three vertices form a triangle.
    pub indices: Option<Vec<u32>>,
    pub color: [f32; 4],
    /// Index of the base colour texture in the scene's textures (sampled with `uvs`).
    pub texture: Option<usize>,
    /// glTF `alphaMode` MASK: fragments whose alpha (colour alpha times texture alpha times
    /// vertex alpha) is below the cutoff are not drawn, and not picked.
    pub alpha_cutoff: Option<f32>,
    /// glTF `doubleSided: false`: back faces are culled, when drawn and when picked.
    pub single_sided: bool,
    /// Skin influences (glTF `JOINTS_n`/`WEIGHTS_n`): one set of four per entry, zero to two.
    pub skin: Vec<SkinInfluences>,
    /// Morph target position deltas, `[target][vertex]`.
    pub morph_targets: Vec<Vec<Vec3>>,
    /// Triangle lists, or glTF's LINES, LINE_STRIP and POINTS (drawn unculled, lines one
    /// pixel wide, points [`POINT_SIZE`] pixels where the device allows).
    pub topology: Topology,
}

/// The size the viewer draws (and picks) points at, in pixels, on devices with
/// `largePoints` (elsewhere 1).
pub const POINT_SIZE: f32 = 4.0;

impl Primitive {
    /// Triangles, for triangle lists (lines and points have none).
    pub fn triangle_count(&self) -> usize {
        if self.topology != Topology::TriangleList {
            return 0;
        }
        self.indices.as_ref().map_or(self.positions.len(), Vec::len) / 3
    }

    /// Vertex indices of triangle `t`.
    pub fn triangle(&self, t: usize) -> [u32; 3] {
        match &self.indices {
            Some(ix) => [ix[3 * t], ix[3 * t + 1], ix[3 * t + 2]],
            None => [3 * t as u32, 3 * t as u32 + 1, 3 * t as u32 + 2],
        }
    }

    /// The texture coordinate at barycentrics `b` of triangle `t`; `None` without UVs.
    pub fn uv_at(&self, t: usize, b: [f64; 3]) -> Option<Vec2> {
        let uvs = self.uvs.as_ref()?;
        let corners = self.triangle(t);
        Some((0..3).fold(Vec2::ZERO, |sum, k| sum + uvs.get(corners[k] as usize).copied().unwrap_or_default() * b[k] as f32))
    }

    /// What the alpha mask compares with [`Primitive::alpha_cutoff`] at barycentrics `b` of
    /// triangle `t`, in the lit pass's order: colour alpha, texel alpha (`texture`, this
    /// primitive's base colour texture), vertex alpha; and how far the texel lookup lies from
    /// a place where its answer jumps, in texels (infinite where none can). `None` when a
    /// texture is given but the primitive has no UVs.
    pub fn mask_alpha(&self, t: usize, b: [f64; 3], texture: Option<&crate::TextureData>) -> Option<(f32, f32)> {
        let corners = self.triangle(t);
        let at = |k: usize| corners[k] as usize;
        let vertex_alpha = self.colors.as_ref().map_or(1.0, |c| (0..3).map(|k| c.get(at(k)).map_or(1.0, |c| c.w) * b[k] as f32).sum());
        let (texel_alpha, to_edge) = match texture {
            Some(texture) => texture.alpha(self.uv_at(t, b)?),
            None => (1.0, f32::INFINITY),
        };
        Some((self.color[3] * texel_alpha * vertex_alpha, to_edge))
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

    /// The same triangles, each with its own three vertices and its face normal: the flat
    /// normals glTF 2.0 requires for a primitive without NORMAL. Triangle order (and so every
    /// face index) is kept; UVs and colours follow their vertices.
    pub fn flat_shaded(&self) -> Primitive {
        let count = self.triangle_count();
        let mut out = Primitive {
            color: self.color,
            texture: self.texture,
            alpha_cutoff: self.alpha_cutoff,
            single_sided: self.single_sided,
            skin: vec![SkinInfluences::default(); self.skin.len()],
            morph_targets: vec![vec![]; self.morph_targets.len()],
            ..Default::default()
        };
        let mut uvs = self.uvs.as_ref().map(|_| Vec::with_capacity(3 * count));
        let mut colors = self.colors.as_ref().map(|_| Vec::with_capacity(3 * count));
        for t in 0..count {
            let [a, b, c] = self.triangle(t).map(|i| i as usize);
            let [pa, pb, pc] = [a, b, c].map(|i| self.positions[i]);
            let normal = (pb - pa).cross(pc - pa).normalize_or(Vec3::Y);
            out.positions.extend([pa, pb, pc]);
            out.normals.extend([normal; 3]);
            if let (Some(out_uvs), Some(src)) = (uvs.as_mut(), self.uvs.as_ref()) {
                out_uvs.extend([a, b, c].map(|i| src[i]));
            }
            if let (Some(out_colors), Some(src)) = (colors.as_mut(), self.colors.as_ref()) {
                out_colors.extend([a, b, c].map(|i| src[i]));
            }
            for (out_set, set) in out.skin.iter_mut().zip(&self.skin) {
                out_set.joints.extend([a, b, c].map(|i| set.joints[i]));
                out_set.weights.extend([a, b, c].map(|i| set.weights[i]));
            }
            for (out_target, target) in out.morph_targets.iter_mut().zip(&self.morph_targets) {
                out_target.extend([a, b, c].map(|i| target[i]));
            }
        }
        out.uvs = uvs;
        out.colors = colors;
        out
    }

    pub fn bounds(&self) -> Option<(Vec3, Vec3)> {
        let mut it = self.positions.iter();
        let first = *it.next()?;
        Some(it.fold((first, first), |(lo, hi), p| (lo.min(*p), hi.max(*p))))
    }
}
