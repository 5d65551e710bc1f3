//! The host's own indirect draws: a GPU-driven engine's `vkCmdDraw[Indexed]Indirect[Count]`
//! recorded into the pick pass as the host records it, commands and count read from its
//! buffers. What the CPU cannot know (which commands run, their counts) limits culling,
//! rectangles and detail; see [`IndirectDraws`].

use super::BufferRange;
use ash::vk;

/// Bytes of `VkDrawIndexedIndirectCommand` and of `VkDrawIndirectCommand`.
pub(crate) const INDEXED_COMMAND_BYTES: u32 = 20;
pub(crate) const COMMAND_BYTES: u32 = 16;

/// Indirect draws of one [`crate::PickDraw`]: its `triangles` then only name the index buffer
/// (`Indexed`: the range and width bound; counts, first index and vertex offset come from the
/// commands) or say the commands are non-indexed (`NonIndexed`, counts unused). Every command
/// draws with the draw's ID and model matrix; an instance-rate [`crate::draw::Instances`] buffer is
/// read at each command's `firstInstance` + instance, as the host's own pass reads it, and the
/// reported instance is that index minus [`crate::draw::Instances::first`] (engines that put an
/// object index in `firstInstance` get it back).
///
/// What follows from the GPU choosing the work: culling skips the whole draw when its
/// `bounds` (or every CPU instance transform's box) miss the pick, else records every
/// command; instance ignore rules do not cut instances out of it; rectangle queries refuse
/// it; detail reports the face within its command (no vertices or surface).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndirectDraws {
    /// The commands (`VkDrawIndexedIndirectCommand` for indexed draws, else
    /// `VkDrawIndirectCommand`), in a buffer with `INDIRECT_BUFFER` usage.
    pub commands: BufferRange,
    /// Bytes from one command to the next (a multiple of 4, at least the command's size).
    pub stride: u32,
    /// Commands drawn; with `count`, the most the count may say. More than 1 needs
    /// `multiDrawIndirect`, and a non-zero `firstInstance` `drawIndirectFirstInstance` (both
    /// come with [`crate::PickFeatures::BATCHING`]).
    pub max_draw_count: u32,
    /// A `u32` draw count the GPU reads at this range's offset (a multiple of 4), with
    /// `INDIRECT_BUFFER` usage; needs [`crate::PickFeatures::INDIRECT_COUNT`].
    pub count: Option<BufferRange>,
}

/// What the device lets draws do, as the picker checks them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DrawLimits {
    /// `maxVertexInputBindingStride`.
    pub max_stride: u32,
    /// `multiDrawIndirect` and `drawIndirectFirstInstance` are enabled.
    pub multi_draw_indirect: bool,
    /// `drawIndirectCount` is enabled.
    pub indirect_count: bool,
    /// `maxStorageBufferRange`.
    pub max_storage_range: u32,
    /// `maxDrawIndirectCount`.
    pub max_draw_indirect_count: u32,
    /// `maxPushConstantsSize` leaves room for deformed draws' push constants.
    pub deformation: bool,
    /// `wideLines` and `largePoints` are enabled ([`crate::PickFeatures::WIDE_LINES`]).
    pub wide_lines: bool,
}

impl DrawLimits {
    /// Everything allowed, with `max_stride` (tests).
    #[cfg(test)]
    pub fn stride(max_stride: u32) -> Self {
        DrawLimits {
            max_stride,
            multi_draw_indirect: true,
            indirect_count: true,
            max_storage_range: u32::MAX,
            max_draw_indirect_count: u32::MAX,
            deformation: true,
            wide_lines: true,
        }
    }
}

impl IndirectDraws {
    /// Checks the command and count ranges and the features they need; `indexed` says which
    /// command the buffer holds.
    pub(crate) fn validate(&self, indexed: bool, limits: &DrawLimits) -> Result<(), String> {
        let size = if indexed { INDEXED_COMMAND_BYTES } else { COMMAND_BYTES };
        if self.stride < size || !self.stride.is_multiple_of(4) {
            return Err(format!("indirect stride {} must be a multiple of 4 and at least {size} bytes", self.stride));
        }
        if !self.commands.offset.is_multiple_of(4) {
            return Err(format!("indirect commands offset {} is not a multiple of 4", self.commands.offset));
        }
        if self.commands.buffer == vk::Buffer::null() {
            return Err("the indirect commands buffer is null".into());
        }
        self.commands.check_size("indirect commands")?;
        if self.max_draw_count > 1 && !limits.multi_draw_indirect {
            return Err(format!("{} indirect commands need multiDrawIndirect (PickFeatures::BATCHING)", self.max_draw_count));
        }
        if self.max_draw_count > limits.max_draw_indirect_count {
            return Err(format!("{} indirect commands exceed maxDrawIndirectCount ({})", self.max_draw_count, limits.max_draw_indirect_count));
        }
        let needed = u64::from(self.max_draw_count.saturating_sub(1)) * u64::from(self.stride) + u64::from(size);
        if self.max_draw_count > 0 && needed > self.commands.size {
            return Err(format!("{} indirect commands need {needed} bytes, the range holds {}", self.max_draw_count, self.commands.size));
        }
        if let Some(count) = self.count {
            if !limits.indirect_count {
                return Err("a GPU draw count needs drawIndirectCount (PickFeatures::INDIRECT_COUNT)".into());
            }
            if count.buffer == vk::Buffer::null() {
                return Err("the draw count buffer is null".into());
            }
            count.check_size("draw count")?;
            if !count.offset.is_multiple_of(4) || count.size < 4 {
                return Err(format!("the draw count at offset {} ({} bytes) must be a 4-byte-aligned u32", count.offset, count.size));
            }
        }
        Ok(())
    }
}
