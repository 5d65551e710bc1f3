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
//! The CPU never deforms the whole mesh. For detail it deforms the three vertices of the hit
//! triangle from [`DeformPose`] and the per-vertex data registered in
//! [`crate::MeshGeometry`] (`skin`, `morph_targets`): see [`crate::SurfaceDetail`].

use super::BufferRange;
use ash::vk;
use glam::{Mat4, Vec3};
use std::sync::Arc;

/// Bytes of push constants a deformed draw's pipelines use (`shaders/pick_deform.glsl`):
/// more than the 128 every device offers, so devices with less refuse deformed draws.
pub(crate) const DEFORM_PUSH_BYTES: u32 = 144;

/// How joint indices are stored: four per vertex.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JointFormat {
    /// Four `u8` (glTF `JOINTS_n` as UNSIGNED_BYTE).
    U8x4,
    /// Four `u16` (glTF `JOINTS_n` as UNSIGNED_SHORT).
    U16x4,
}

impl JointFormat {
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

/// A per-vertex stream in the host's buffer (`VERTEX_BUFFER` usage), indexed like the
/// positions: the range starts at vertex 0's element, so an interleaved layout gives its
/// attribute offset there.
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
    /// This frame's pose on the CPU, for exact detail (see [`crate::SurfaceDetail`]).
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

/// One influence set's vertex layout: joint format and stride, weight format and stride, and
/// where joints and weights interleave in one buffer at one stride, the weights' offset from
/// the joints (then one vertex binding serves both).
pub(crate) type SetLayout = (JointFormat, u32, WeightFormat, u32, Option<u32>);

/// What distinguishes deformed pipelines: how many influence sets, and their vertex layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct DeformKey {
    pub sets: [Option<SetLayout>; 2],
}

impl DeformKey {
    pub fn of(d: &Deformation) -> Self {
        let set = |i: &Influences| {
            let (j, w) = (&i.joints, &i.weights);
            // 2047: the least maxVertexInputAttributeOffset a device may have.
            let shared = (j.range.buffer == w.range.buffer && j.stride == w.stride && w.range.offset >= j.range.offset)
                .then(|| w.range.offset - j.range.offset)
                .filter(|&delta| delta <= 2047)
                .map(|delta| delta as u32);
            (i.joint_format, j.stride, i.weight_format, w.stride, shared)
        };
        let skin = d.skin.as_ref();
        DeformKey { sets: [skin.map(|s| set(&s.influences)), skin.and_then(|s| s.more_influences.as_ref().map(set))] }
    }

    /// Influence sets the shader reads (0, 1 or 2).
    pub fn set_count(&self) -> usize {
        self.sets.iter().flatten().count()
    }
}

impl Deformation {
    /// The streams bound at vertex bindings 3.. (joints, weights of each set).
    pub(crate) fn streams(&self) -> Vec<VertexStream> {
        let Some(skin) = &self.skin else { return vec![] };
        let mut out = vec![skin.influences.joints, skin.influences.weights];
        if let Some(more) = &skin.more_influences {
            out.extend([more.joints, more.weights]);
        }
        out
    }

    /// The storage buffers the shader reads (joint matrices, deltas, weights), each from
    /// offset 0 to the end of what it reads; a missing one repeats another (a descriptor must
    /// be valid whether or not it is read).
    pub(crate) fn storage(&self) -> [(vk::Buffer, u64); 3] {
        let end = |r: &BufferRange| (r.buffer, r.offset.saturating_add(r.size));
        let joints = self.skin.as_ref().map(|s| end(&s.matrices));
        let deltas = self.morph.as_ref().map(|m| end(&m.deltas));
        let weights = self.morph.as_ref().map(|m| end(&m.weights));
        let any = joints.or(deltas).unwrap_or((vk::Buffer::null(), 0));
        [joints.unwrap_or(any), deltas.unwrap_or(any), weights.unwrap_or(any)]
    }

    /// The words `shaders/pick_deform.glsl` reads after the rectangle words: joint base word,
    /// delta base word, weight base word, target count, joint count, vertices per target.
    pub(crate) fn push_words(&self, vertex_count: u32) -> [u32; 8] {
        let word = |r: &BufferRange| (r.offset / 4) as u32;
        let (joints, joint_count) = self.skin.as_ref().map_or((0, 1), |s| (word(&s.matrices), s.joint_count));
        let (deltas, weights, targets) = self.morph.as_ref().map_or((0, 0, 0), |m| (word(&m.deltas), word(&m.weights), m.target_count));
        [joints, deltas, weights, targets, joint_count, vertex_count, 0, 0]
    }

    /// Checks streams, buffers and the CPU pose against the draw's `vertex_count` positions,
    /// the device's largest binding stride and storage range.
    pub(crate) fn validate(&self, vertex_count: u32, max_stride: u32, max_storage_range: u32) -> Result<(), String> {
        if self.skin.is_none() && self.morph.is_none() {
            return Err("the deformation has neither a skin nor morph targets".into());
        }
        let storage = |r: &BufferRange, needed: u64, what: &str| -> Result<(), String> {
            if r.buffer == vk::Buffer::null() {
                return Err(format!("the {what} buffer is null"));
            }
            if !r.offset.is_multiple_of(4) {
                return Err(format!("the {what} offset {} is not a multiple of 4", r.offset));
            }
            if needed > r.size {
                return Err(format!("the {what} need {needed} bytes, the range holds {}", r.size));
            }
            if r.offset.saturating_add(r.size) > u64::from(max_storage_range) {
                return Err(format!("the {what} buffer's first {} bytes exceed maxStorageBufferRange ({max_storage_range})", r.offset.saturating_add(r.size)));
            }
            Ok(())
        };
        let stream = |s: &VertexStream, size: u32, component: u32, what: &str| -> Result<(), String> {
            if s.range.buffer == vk::Buffer::null() {
                return Err(format!("the {what} buffer is null"));
            }
            if s.stride < size || s.stride > max_stride {
                return Err(format!("{what} stride {} lies outside {size}..={max_stride} bytes", s.stride));
            }
            if !s.range.offset.is_multiple_of(u64::from(component)) || !s.stride.is_multiple_of(component) {
                return Err(format!("{what} offset {} and stride {} must be multiples of {component} bytes", s.range.offset, s.stride));
            }
            let needed = u64::from(vertex_count.saturating_sub(1)) * u64::from(s.stride) + u64::from(size);
            if vertex_count > 0 && needed > s.range.size {
                return Err(format!("{what} of {vertex_count} vertices need {needed} bytes, the range holds {}", s.range.size));
            }
            Ok(())
        };
        if let Some(skin) = &self.skin {
            if skin.joint_count == 0 {
                return Err("a skin needs at least one joint".into());
            }
            storage(&skin.matrices, u64::from(skin.joint_count) * 64, "joint matrices")?;
            for (k, set) in std::iter::once(&skin.influences).chain(&skin.more_influences).enumerate() {
                stream(&set.joints, set.joint_format.bytes(), set.joint_format.component_bytes(), &format!("joints_{k}"))?;
                stream(&set.weights, set.weight_format.bytes(), set.weight_format.component_bytes(), &format!("weights_{k}"))?;
            }
            if let Some(pose) = self.pose.as_ref().filter(|p| p.joint_matrices.len() < skin.joint_count as usize) {
                return Err(format!("the CPU pose has {} joint matrices for {} joints", pose.joint_matrices.len(), skin.joint_count));
            }
        }
        if let Some(morph) = &self.morph {
            storage(&morph.deltas, u64::from(morph.target_count) * u64::from(vertex_count) * 12, "morph deltas")?;
            storage(&morph.weights, u64::from(morph.target_count) * 4, "morph weights")?;
            if let Some(pose) = self.pose.as_ref().filter(|p| p.morph_weights.len() < morph.target_count as usize) {
                return Err(format!("the CPU pose has {} morph weights for {} targets", pose.morph_weights.len(), morph.target_count));
            }
        }
        if let Some(pose) = &self.pose {
            if !pose.joint_matrices.iter().all(Mat4::is_finite) || !pose.morph_weights.iter().all(|w| w.is_finite()) {
                return Err("the CPU pose has a non-finite value".into());
            }
        }
        Ok(())
    }
}

/// One vertex deformed on the CPU in the draw's model space (f64), and the blended skin
/// matrix's linear part for its normal (`None` without a skin). `None` when the registered
/// data does not cover the vertex.
pub(crate) fn deform_vertex(
    position: Vec3,
    v: usize,
    targets: &[Vec<Vec3>],
    skin: &[SkinInfluences],
    pose: &DeformPose,
    skinned: bool,
) -> Option<(glam::DVec3, Option<glam::DMat4>)> {
    let mut p = position.as_dvec3();
    for (t, weight) in pose.morph_weights.iter().enumerate().take(targets.len()) {
        if *weight != 0.0 {
            p += targets[t].get(v)?.as_dvec3() * f64::from(*weight);
        }
    }
    if !skinned {
        return Some((p, None));
    }
    let last = pose.joint_matrices.len().checked_sub(1)?;
    let mut blended = glam::DMat4::ZERO;
    for set in skin {
        let (joints, weights) = (set.joints.get(v)?, set.weights.get(v)?);
        for k in 0..4 {
            let m = pose.joint_matrices[(joints[k] as usize).min(last)].as_dmat4();
            blended += m * f64::from(weights[k]);
        }
    }
    Some((blended.transform_point3(p), Some(blended)))
}
