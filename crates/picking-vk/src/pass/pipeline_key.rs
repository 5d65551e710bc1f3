//! What distinguishes one pick pipeline from another ([`PipelineKey`]), the pass flavours,
//! the device limits pipelines obey, and the push constant layouts the pick shaders share.

use crate::draw::deform::DeformKey;
use crate::draw::hooks::HookKey;
use crate::draw::raster::{Culling, RasterKey};
use crate::draw::{InstanceFormat, PickDraw, PositionFormat};
use crate::request::camera::DepthConvention;
use ash::vk;
use glam::Mat4;

/// Bytes of one batch row, laid out as the per-instance attributes of
/// `shaders/pick_batched.vert`: the model-view-projection matrix, the ID, the draw index.
pub(crate) const ROW_BYTES: u32 = 80;

/// Which pass a pipeline set draws into, and what its fragments write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flavour {
    /// The hit pass: ID, (draw, instance), optionally detail; depth-tested.
    Hit { detail: bool },
    /// The rectangle pass, `Visible`: (table entry, depth bits), depth-tested.
    RectVisible,
    /// The rectangle pass, `All`: no attachment writes, no depth test; table atomics.
    RectAll,
}

/// Bytes of the rectangle passes' push constants: `PickPush`, then the tile (see
/// `shaders/pick_rect_all.frag`).
pub(crate) const RECT_PUSH_SIZE: u32 = PickPush::SIZE + 32;
/// Bytes of push constants with instance transforms in a storage buffer: the above, then
/// (base word, stride in words, rows, walked pair) (see `shaders/pick_instanced_storage.glsl`).
pub(crate) const STORAGE_PUSH_SIZE: u32 = RECT_PUSH_SIZE + 16;
/// Bytes of push constants of deformed draws: the rectangle words, then sixteen words (see
/// `shaders/pick_deform.glsl`). More than the 128 every device offers: devices with less
/// refuse deformed draws.
pub(crate) const DEFORM_PUSH_SIZE: u32 = crate::draw::deform::DEFORM_PUSH_BYTES;
const _: () = assert!(DEFORM_PUSH_SIZE == RECT_PUSH_SIZE + 64, "the deform words follow the rectangle words");

/// What the device lets pick pipelines do.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PipelineLimits {
    /// `maxPushConstantsSize` (hooked and deformed pipelines need more than 128 bytes).
    pub max_push_constants: u32,
    /// `wideLines` and `largePoints` are enabled: the host's line width and point size are
    /// drawn (within `lineWidthRange` and `pointSizeRange`); otherwise both are 1.
    pub wide_lines: bool,
    pub line_widths: [f32; 2],
    pub point_sizes: [f32; 2],
}

impl PipelineLimits {
    pub fn of(limits: &vk::PhysicalDeviceLimits, wide_lines: bool) -> Self {
        PipelineLimits {
            max_push_constants: limits.max_push_constants_size,
            wide_lines,
            line_widths: limits.line_width_range,
            point_sizes: limits.point_size_range,
        }
    }

    /// The line width and point size drawn for the host's.
    pub(super) fn thickness(&self, line_width: f32, point_size: f32) -> (f32, f32) {
        if !self.wide_lines {
            return (1.0, 1.0);
        }
        let clamp = |v: f32, [lo, hi]: [f32; 2]| v.clamp(lo.min(1.0), hi.max(1.0));
        (clamp(line_width, self.line_widths), clamp(point_size, self.point_sizes))
    }
}

/// Push constants, laid out as `PickPush` in `shaders/pick_push.glsl`.
pub(crate) struct PickPush {
    pub model_view_projection: Mat4,
    pub object_id: [u32; 2],
    pub draw_index: u32,
    pub first_instance: u32,
}

impl PickPush {
    pub const SIZE: u32 = 80;

    pub fn to_bytes(&self) -> [u8; Self::SIZE as usize] {
        let mut out = [0u8; Self::SIZE as usize];
        let words = self.model_view_projection.to_cols_array().map(f32::to_bits);
        let tail = [self.object_id[0], self.object_id[1], self.draw_index, self.first_instance];
        for (chunk, word) in out.chunks_exact_mut(4).zip(words.iter().chain(tail.iter())) {
            chunk.copy_from_slice(&word.to_ne_bytes());
        }
        out
    }
}

/// What distinguishes one pick pipeline from another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PipelineKey {
    pub position_stride: u32,
    pub position_format: PositionFormat,
    /// Stride of the per-instance transform buffer, for instanced draws.
    pub instance_stride: Option<u32>,
    /// Per-instance transforms are row-major 3x4 matrices (else column-major 4x4).
    pub instance_rows: bool,
    /// Per-instance transforms come from a storage buffer (else vertex attributes).
    pub instance_storage: bool,
    /// Per-draw data comes from rows of the batch buffer (see `crate::record::batch`), not
    /// push constants.
    pub batched: bool,
    /// Decides the depth compare op when the draw's raster state names none.
    pub depth: DepthConvention,
    /// The host's culling, depth test and bias, and topology.
    pub raster: RasterKey,
    /// The draw's hook program and attribute stride.
    pub hook: Option<HookKey>,
    /// Skin influence layouts of a deformed draw.
    pub deform: Option<DeformKey>,
    /// A walked pair of the GPU plan (`gpu_plan::walkable`): the vertex shader finds each
    /// surviving instance in the pair's bits.
    pub walk: bool,
}

impl PipelineKey {
    /// The pipeline `draw` needs under `depth` and the request's `culling` (for a draw that
    /// states none), its data in a batch row or not (indirect draws never are).
    pub fn of(draw: &PickDraw, batched: bool, depth: DepthConvention, culling: Culling) -> Self {
        PipelineKey {
            position_stride: draw.positions.stride,
            position_format: draw.position_format,
            instance_stride: draw.instances.map(|i| i.stride),
            instance_rows: draw.instance_format == InstanceFormat::Rows3x4,
            instance_storage: draw.instances_in_storage().is_some(),
            batched: batched && draw.indirect.is_none() && draw.deformation.is_none(),
            depth,
            raster: draw.raster.key(culling),
            hook: draw.hooks.as_ref().map(HookKey::of),
            deform: draw.deformation.as_ref().map(DeformKey::of),
            walk: false,
        }
    }

    /// The key of a walked pair of `draw` (`gpu_plan::walkable`), its draw's key otherwise.
    pub fn walked(self, walk: bool) -> Self {
        PipelineKey { walk: walk && self.instance_storage && self.hook.is_none() && self.deform.is_none() && !self.batched, ..self }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_constants_follow_the_glsl_layout() {
        let push = PickPush {
            model_view_projection: Mat4::from_cols_array(&std::array::from_fn(|i| i as f32)),
            object_id: [0xAABB_CCDD, 0x1122_3344],
            draw_index: 7,
            first_instance: 9,
        };
        let bytes = push.to_bytes();
        let word = |i: usize| u32::from_ne_bytes(bytes[i * 4..i * 4 + 4].try_into().unwrap());
        assert_eq!(f32::from_bits(word(5)), 5.0, "column-major mat4");
        assert_eq!([word(16), word(17), word(18), word(19)], [0xAABB_CCDD, 0x1122_3344, 7, 9]);
    }
}
