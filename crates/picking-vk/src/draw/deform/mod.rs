//! Deformed draws: skinning and morph targets applied in the pick pass's vertex shader, from
//! the host's own buffers, so a posed character is picked where the host draws it.
//!
//! Per vertex `v` (its `gl_VertexIndex`, counted as the position buffer counts), the pick
//! shader computes, in the draw's model space:
//!
//! ```text
//! p  = position[v] + sum over targets t of  weight[t] * delta[t][v]       (morph targets)
//! p' = sum over influences k of  w_k * joint_matrix[j_k] * p              (skin; else p' = p)
//! clip = view_projection * model * p'
//! ```
//!
//! which is glTF's rule (morph first, then skin). Joint indices past `joint_count` read the
//! last joint (no out-of-bounds read whatever the buffer holds); weights are used as stored
//! (glTF asks for weights summing to 1).
//!
//! Joints and weights reach the shader as vertex attributes, or, where the host's buffers
//! allow it ([`Skin::streams_in_storage`]), as storage buffer words decoded in the shader: on
//! GPUs whose vertex attribute fetch is narrow (the H200 measured it) the second is much the
//! faster, while reading the joint matrices costs next to nothing either way.
//!
//! The CPU never deforms the whole mesh. For detail it deforms the three vertices of the hit
//! triangle from [`DeformPose`] and the per-vertex data registered in
//! [`crate::draw::MeshGeometry`] (`skin`, `morph_targets`): see [`crate::results::SurfaceDetail`].

mod key;
mod validate;

use super::BufferRange;
use ash::vk;
use glam::{Mat4, Vec3};
pub(crate) use key::DeformKey;
use std::sync::Arc;

/// Bytes of push constants a deformed draw's pipelines use (`shaders/pick_deform.glsl`):
/// more than the 128 every device offers, so devices with less refuse deformed draws.
pub(crate) const DEFORM_PUSH_BYTES: u32 = 176;

/// How joint indices are stored: four per vertex.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JointFormat {
    /// Four `u8` (glTF `JOINTS_n` as UNSIGNED_BYTE).
    U8x4,
    /// Four `u16` (glTF `JOINTS_n` as UNSIGNED_SHORT).
    U16x4,
}

impl JointFormat {
    /// The shader's code for the format read from storage words (`JOINT_FORMAT_n`).
    pub(crate) fn code(self) -> u32 {
        match self {
            JointFormat::U8x4 => 0,
            JointFormat::U16x4 => 1,
        }
    }

    pub(crate) fn vk(self) -> vk::Format {
        match self {
            JointFormat::U8x4 => vk::Format::R8G8B8A8_UINT,
            JointFormat::U16x4 => vk::Format::R16G16B16A16_UINT,
        }
    }

    /// Bytes of one vertex's four indices.
    pub fn bytes(self) -> u32 {
        match self {
            JointFormat::U8x4 => 4,
            JointFormat::U16x4 => 8,
        }
    }

    fn component_bytes(self) -> u32 {
        self.bytes() / 4
    }
}

/// How skin weights are stored: four per vertex.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WeightFormat {
    /// Four `f32`.
    Float32x4,
    /// Four normalized `u8` (0..1).
    Unorm8x4,
    /// Four normalized `u16` (0..1).
    Unorm16x4,
}

impl WeightFormat {
    /// The shader's code for the format read from storage words (`WEIGHT_FORMAT_n`).
    pub(crate) fn code(self) -> u32 {
        match self {
            WeightFormat::Float32x4 => 0,
            WeightFormat::Unorm8x4 => 1,
            WeightFormat::Unorm16x4 => 2,
        }
    }

    pub(crate) fn vk(self) -> vk::Format {
        match self {
            WeightFormat::Float32x4 => vk::Format::R32G32B32A32_SFLOAT,
            WeightFormat::Unorm8x4 => vk::Format::R8G8B8A8_UNORM,
            WeightFormat::Unorm16x4 => vk::Format::R16G16B16A16_UNORM,
        }
    }

    /// Bytes of one vertex's four weights.
    pub fn bytes(self) -> u32 {
        match self {
            WeightFormat::Float32x4 => 16,
            WeightFormat::Unorm8x4 => 4,
            WeightFormat::Unorm16x4 => 8,
        }
    }

    fn component_bytes(self) -> u32 {
        self.bytes() / 4
    }
}

/// A per-vertex stream in the host's buffer (`VERTEX_BUFFER` usage, and `STORAGE_BUFFER` too
/// with [`Skin::streams_in_storage`]), indexed like the positions: the range starts at vertex
/// 0's element, so an interleaved layout gives its attribute offset there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VertexStream {
    /// Starts at vertex 0's element.
    pub range: BufferRange,
    /// Bytes from one vertex to the next.
    pub stride: u32,
}

/// Four influences per vertex: joint indices and their weights (glTF `JOINTS_n`/`WEIGHTS_n`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Influences {
    /// The joint indices.
    pub joints: VertexStream,
    /// How they are stored.
    pub joint_format: JointFormat,
    /// The weights.
    pub weights: VertexStream,
    /// How they are stored.
    pub weight_format: WeightFormat,
}

/// Linear blend skinning from the host's joint matrices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Skin {
    /// The first four influences (`JOINTS_0`/`WEIGHTS_0`).
    pub influences: Influences,
    /// Four more (`JOINTS_1`/`WEIGHTS_1`), for eight per vertex.
    pub more_influences: Option<Influences>,
    /// The joint matrices, column-major `mat4`s of `f32` packed at 64 bytes, each mapping the
    /// mesh's rest space into the draw's model space (glTF: the inverse of the mesh node's
    /// world times the joint's world times its inverse bind matrix; with `model` the
    /// identity, the joint's world times its inverse bind matrix). In a buffer with
    /// `STORAGE_BUFFER` usage, typically the one the host's own skinning pass reads; the
    /// offset needs only 4-byte alignment.
    pub matrices: BufferRange,
    /// Matrices in the buffer from `matrices.offset` (at least 1).
    pub joint_count: u32,
    /// The influence streams' buffers also have `STORAGE_BUFFER` usage, so the pick shader
    /// may read joints and weights as storage words instead of vertex attributes: it does
    /// where every stream's offset and stride are multiples of 4 (else it reads attributes).
    /// Much faster where vertex attribute fetch is narrow: on the H200 a skinned pick costs
    /// about what the rigid one does this way, about 1.5x with attributes (see the
    /// benchmark). Each stream's buffer, from offset 0 to the stream's end, must then fit
    /// `maxStorageBufferRange`.
    pub streams_in_storage: bool,
}

/// What a draw's skin reads that the CPU must deform detail's vertices by: its influence
/// sets (0 for an unskinned draw, 1 or 2) and its joint count (indices past it read the last).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SkinReads {
    pub sets: usize,
    pub joints: u32,
}

impl SkinReads {
    pub fn of(skin: Option<&Skin>) -> Self {
        skin.map_or(SkinReads { sets: 0, joints: 0 }, |s| SkinReads { sets: 1 + usize::from(s.more_influences.is_some()), joints: s.joint_count })
    }
}

impl Skin {
    /// The influence streams: joints and weights of each set.
    fn streams(&self) -> impl Iterator<Item = &VertexStream> {
        std::iter::once(&self.influences).chain(&self.more_influences).flat_map(|i| [&i.joints, &i.weights])
    }

    /// Whether the pick shader reads the influence streams as storage words (see
    /// [`Skin::streams_in_storage`]).
    pub(crate) fn reads_streams_from_storage(&self) -> bool {
        self.streams_in_storage && self.streams().all(|s| s.range.offset.is_multiple_of(4) && s.stride.is_multiple_of(4))
    }
}

/// Morph targets: position deltas blended by per-draw weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MorphTargets {
    /// The deltas, three `f32` per vertex packed at 12 bytes, target after target: target `t`
    /// of vertex `v` is element `t * positions.vertex_count + v`. In the position's stored
    /// units. `STORAGE_BUFFER` usage; the offset needs only 4-byte alignment.
    pub deltas: BufferRange,
    /// Targets in `deltas`.
    pub target_count: u32,
    /// One `f32` weight per target (`STORAGE_BUFFER` usage, 4-byte aligned offset).
    pub weights: BufferRange,
}

/// The CPU copy of one frame's pose (what the GPU buffers hold for this draw this frame), for
/// detail on deformed hits. Share it between the draws of one skin with an `Arc`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeformPose {
    /// The skin's joint matrices, as in [`Skin::matrices`].
    pub joint_matrices: Vec<Mat4>,
    /// The morph weights, as in [`MorphTargets::weights`].
    pub morph_weights: Vec<f32>,
}

/// How a draw's vertices are deformed before projection. With `bounds_cover_deformation`
/// false, deformed draws are never culled (the rest-pose bounds say nothing about the pose).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Deformation {
    /// Skinning, if any.
    pub skin: Option<Skin>,
    /// Morph targets, if any.
    pub morph: Option<MorphTargets>,
    /// This frame's pose on the CPU, for exact detail (see [`crate::results::SurfaceDetail`]).
    pub pose: Option<Arc<DeformPose>>,
    /// `true` when the draw's `bounds` contain every deformed position of this frame, so
    /// culling may use them.
    pub bounds_cover_deformation: bool,
}

/// Per-vertex skin data of registered geometry: one entry per set of four influences.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkinInfluences {
    /// Joint indices, one `[u16; 4]` per vertex.
    pub joints: Vec<[u16; 4]>,
    /// Their weights (dequantized), one `[f32; 4]` per vertex.
    pub weights: Vec<[f32; 4]>,
}

impl Deformation {
    /// The streams bound at vertex bindings 3.. (joints, weights of each set) when they are
    /// read as vertex attributes; none when they are read from storage.
    pub(crate) fn vertex_streams(&self) -> Vec<VertexStream> {
        match &self.skin {
            Some(skin) if !skin.reads_streams_from_storage() => skin.streams().copied().collect(),
            _ => vec![],
        }
    }

    /// The storage buffers the shader reads (bindings 0 to 6: joint matrices, deltas,
    /// weights, then the joints and weights of each influence set when read from storage),
    /// each from offset 0 to the end of what it reads; a missing one repeats another (a
    /// descriptor must be valid whether or not it is read).
    pub(crate) fn storage(&self) -> [(vk::Buffer, u64); 7] {
        let end = |r: &BufferRange| (r.buffer, r.offset.saturating_add(r.size));
        let joints = self.skin.as_ref().map(|s| end(&s.matrices));
        let deltas = self.morph.as_ref().map(|m| end(&m.deltas));
        let weights = self.morph.as_ref().map(|m| end(&m.weights));
        let any = joints.or(deltas).unwrap_or((vk::Buffer::null(), 0));
        let mut out = [any; 7];
        out[..3].copy_from_slice(&[joints.unwrap_or(any), deltas.unwrap_or(any), weights.unwrap_or(any)]);
        if let Some(skin) = self.skin.as_ref().filter(|s| s.reads_streams_from_storage()) {
            for (slot, stream) in out[3..].iter_mut().zip(skin.streams()) {
                *slot = end(&stream.range);
            }
        }
        out
    }

    /// The words `shaders/pick_deform.glsl` reads after the rectangle words: joint base word,
    /// delta base word, weight base word, target count; joint count, vertices per target, 0,
    /// 0; then, for streams read from storage, the first word and the stride in words of the
    /// joints and weights of each set.
    pub(crate) fn push_words(&self, vertex_count: u32) -> [u32; 16] {
        let word = |offset: u64| (offset / 4) as u32;
        let (joints, joint_count) = self.skin.as_ref().map_or((0, 1), |s| (word(s.matrices.offset), s.joint_count));
        let (deltas, weights, targets) = self.morph.as_ref().map_or((0, 0, 0), |m| (word(m.deltas.offset), word(m.weights.offset), m.target_count));
        let mut out = [joints, deltas, weights, targets, joint_count, vertex_count, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        if let Some(skin) = self.skin.as_ref().filter(|s| s.reads_streams_from_storage()) {
            for (k, stream) in skin.streams().enumerate() {
                out[8 + k] = word(stream.range.offset);
                out[12 + k] = stream.stride / 4;
            }
        }
        out
    }
}

impl DeformPose {
    /// Vertex `v` (rest position `position`) deformed on the CPU as the pick shader deforms
    /// it, in f64: morphed by `targets` under this pose's weights, then, when `skinned`,
    /// skinned by `skin` under its joint matrices (indices past them read the last, joints of
    /// weight 0 are not read: as the GPU does within `Skin::joint_count`, which picking's
    /// detail clamps to). Returns the position (in the draw's model
    /// space; a skinned vertex is placed by its joints) and the blended skin matrix for its
    /// normal (`None` without a skin); `None` when the data does not cover the vertex: a
    /// non-zero weight past `targets`, or a skinned draw without influences (the GPU moves
    /// the vertex by data the CPU was not given).
    pub fn deform_vertex(
        &self,
        position: Vec3,
        v: usize,
        targets: &[Vec<Vec3>],
        skin: &[SkinInfluences],
        skinned: bool,
    ) -> Option<(glam::DVec3, Option<glam::DMat4>)> {
        self.deform_within(position, v, targets, skin, skinned.then_some(self.joint_matrices.len()))
    }

    /// [`DeformPose::deform_vertex`] as a draw skinned by its first `joints` matrices
    /// (`None`: unskinned) deforms it: indices past them read the last, as the GPU's do.
    pub(crate) fn deform_within(
        &self,
        position: Vec3,
        v: usize,
        targets: &[Vec<Vec3>],
        skin: &[SkinInfluences],
        joints: Option<usize>,
    ) -> Option<(glam::DVec3, Option<glam::DMat4>)> {
        let skinned = joints.is_some();
        if self.morph_weights.iter().skip(targets.len()).any(|w| *w != 0.0) || (skinned && skin.is_empty()) {
            return None;
        }
        let mut p = position.as_dvec3();
        for (t, weight) in self.morph_weights.iter().enumerate().take(targets.len()) {
            if *weight != 0.0 {
                p += targets[t].get(v)?.as_dvec3() * f64::from(*weight);
            }
        }
        let Some(joint_count) = joints else {
            return Some((p, None));
        };
        let last = joint_count.min(self.joint_matrices.len()).checked_sub(1)?;
        let mut blended = glam::DMat4::ZERO;
        for set in skin {
            let (joints, weights) = (set.joints.get(v)?, set.weights.get(v)?);
            // Joints of weight 0 are not read, as on the GPU.
            for k in (0..4).filter(|&k| weights[k] != 0.0) {
                let m = self.joint_matrices[(joints[k] as usize).min(last)].as_dmat4();
                blended += m * f64::from(weights[k]);
            }
        }
        Some((blended.transform_point3(p), Some(blended)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skin(offset: u64, stride: u32, in_storage: bool) -> Skin {
        let stream = |extra: u64| VertexStream { range: BufferRange { buffer: vk::Buffer::null(), offset: offset + extra, size: 4096 }, stride };
        let set = Influences { joints: stream(0), joint_format: JointFormat::U16x4, weights: stream(8), weight_format: WeightFormat::Unorm16x4 };
        let matrices = BufferRange { buffer: vk::Buffer::null(), offset: 0, size: 64 };
        Skin { influences: set, more_influences: Some(set), matrices, joint_count: 1, streams_in_storage: in_storage }
    }

    #[test]
    fn deforming_without_the_data_the_gpu_deforms_with_gives_nothing() {
        let pose = DeformPose { joint_matrices: vec![Mat4::IDENTITY], morph_weights: vec![0.0, 0.5] };
        // A weight on a second target the CPU was not given.
        assert_eq!(pose.deform_vertex(Vec3::ONE, 0, &[vec![Vec3::X]], &[], false), None);
        // Skinned, without influences.
        let bare = DeformPose { morph_weights: vec![], ..pose.clone() };
        assert_eq!(bare.deform_vertex(Vec3::ONE, 0, &[], &[], true), None);
        // With what it needs, the vertex moves.
        let one = DeformPose { morph_weights: vec![1.0], ..pose };
        assert_eq!(one.deform_vertex(Vec3::ONE, 0, &[vec![Vec3::X]], &[], false).map(|(p, _)| p), Some(glam::DVec3::new(2.0, 1.0, 1.0)));
    }

    #[test]
    fn joints_past_the_skins_count_read_its_last_as_on_the_gpu() {
        // The pose holds a third matrix past the skin's two joints; joint 7 reads joint 1.
        let lift = |y: f32| Mat4::from_translation(Vec3::new(0.0, y, 0.0));
        let pose = DeformPose { joint_matrices: vec![Mat4::IDENTITY, lift(1.0), lift(5.0)], morph_weights: vec![] };
        let set = SkinInfluences { joints: vec![[7, 0, 0, 0]], weights: vec![[1.0, 0.0, 0.0, 0.0]] };
        let at = |joints| pose.deform_within(Vec3::ZERO, 0, &[], std::slice::from_ref(&set), joints).map(|(p, _)| p.y);
        assert_eq!(at(Some(2)), Some(1.0));
        assert_eq!(at(Some(3)), Some(5.0));
        // A weight of 0 leaves its joint unread: a matrix of infinities adds nothing.
        let pose = DeformPose { joint_matrices: vec![Mat4::IDENTITY, Mat4::from_cols_array(&[f32::INFINITY; 16])], ..pose };
        let set = SkinInfluences { joints: vec![[0, 1, 0, 0]], weights: vec![[1.0, 0.0, 0.0, 0.0]] };
        assert_eq!(pose.deform_vertex(Vec3::ONE, 0, &[], &[set], true).map(|(p, _)| p), Some(glam::DVec3::ONE));
    }

    #[test]
    fn influence_streams_are_read_from_storage_only_where_allowed_and_word_aligned() {
        assert!(skin(16, 32, true).reads_streams_from_storage());
        assert!(!skin(16, 32, false).reads_streams_from_storage(), "the host did not allow it");
        assert!(!skin(18, 32, true).reads_streams_from_storage(), "offset off a word");
        assert!(!skin(16, 18, true).reads_streams_from_storage(), "stride off a word");
        let mut one_off = skin(16, 32, true);
        one_off.more_influences.as_mut().unwrap().weights.range.offset += 2;
        assert!(!one_off.reads_streams_from_storage(), "every stream must be aligned");
        // Read from storage: no vertex streams, the streams bound at 3 to 6, their words pushed.
        let deformation = Deformation { skin: Some(skin(16, 32, true)), ..Default::default() };
        assert!(deformation.vertex_streams().is_empty());
        assert_eq!(deformation.storage()[3..].iter().map(|b| b.1).collect::<Vec<_>>(), [16 + 4096, 24 + 4096, 16 + 4096, 24 + 4096]);
        assert_eq!(deformation.push_words(10)[8..], [4, 6, 4, 6, 8, 8, 8, 8]);
        assert_eq!(DeformKey::of(&deformation).format_codes(), [1, 2, 1, 2]);
        // As attributes: four vertex streams, no stream words.
        let attributes = Deformation { skin: Some(skin(16, 32, false)), ..Default::default() };
        assert_eq!(attributes.vertex_streams().len(), 4);
        assert_eq!(attributes.push_words(10)[8..], [0; 8]);
    }

    #[test]
    fn morphs_bind_non_empty_ranges_of_the_size_their_counts_need() {
        use ash::vk::Handle;
        let range = |size: u64| BufferRange { buffer: vk::Buffer::from_raw(1), offset: 0, size };
        let morph = |target_count: u32, deltas: u64, weights: u64| Deformation {
            morph: Some(MorphTargets { deltas: range(deltas), target_count, weights: range(weights) }),
            ..Default::default()
        };
        morph(2, 2 * 10 * 12, 8).validate(10, 2048, u32::MAX).unwrap();
        assert!(morph(0, 0, 0).validate(10, 2048, u32::MAX).is_err(), "no targets, empty ranges");
        assert!(morph(2, 2 * 10 * 12 - 4, 8).validate(10, 2048, u32::MAX).is_err(), "deltas short");
        // Counts whose product passes u64 are refused, not wrapped to a small size.
        assert!(morph(u32::MAX, u64::MAX, u64::MAX).validate(u32::MAX, 2048, u32::MAX).is_err());
    }
}
