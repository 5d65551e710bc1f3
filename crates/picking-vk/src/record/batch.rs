//! Batched recording: a run of draws that share their pipeline and buffers is recorded as one
//! indirect draw. Each draw's data (matrix, ID, snapshot index) is a row of a per-slot buffer,
//! read as per-instance attributes: its indirect command's `firstInstance` names the row.
//! The CPU cost of a pick then barely grows with the number of draws under the cursor.

use crate::error::{PickError, Requirement};
use crate::gpu::{GpuBuffer, Memory};
use crate::pass::pipeline_key::ROW_BYTES;
use crate::record::push::words_to_bytes;
use ash::vk;
use glam::Mat4;
use gpu_allocator::MemoryLocation;
/// Bytes of one indirect command: `VkDrawIndexedIndirectCommand` (a non-indexed
/// `VkDrawIndirectCommand` uses the first 16).
pub(crate) const COMMAND_BYTES: u32 = 20;

/// One draw's row.
pub(crate) struct DrawRow {
    pub model_view_projection: Mat4,
    pub object_id: [u32; 2],
    pub draw_index: u32,
}

/// One draw's indirect command: vertex or index count and first, the vertex offset of an
/// indexed draw (`None` for a non-indexed one), and its row.
pub(crate) struct DrawCommand {
    pub count: u32,
    pub first: u32,
    pub vertex_offset: Option<i32>,
    pub row: u32,
}

/// The rows and commands of one frame-in-flight slot, allocated once with a fixed number of
/// rows: picking never allocates per frame, and its memory stays a few kilobytes. Draws past
/// the capacity are recorded one by one. The host's fence for the slot's previous frame (part
/// of `record`'s contract) makes rewriting them safe.
pub(crate) struct DrawBatchBuffer {
    buffer: GpuBuffer,
    capacity: u32,
}

impl DrawBatchBuffer {
    pub fn new(memory: &Memory, capacity: u32) -> Result<Self, PickError> {
        let size = u64::from(capacity.max(1)) * u64::from(ROW_BYTES + COMMAND_BYTES);
        let usage = vk::BufferUsageFlags::VERTEX_BUFFER | vk::BufferUsageFlags::INDIRECT_BUFFER;
        let buffer = GpuBuffer::new(memory, "draw batch", size, usage, MemoryLocation::CpuToGpu)?;
        // Host writes to coherent memory before the submission are visible to the device
        // without a flush (gpu-allocator's CpuToGpu memory is always coherent).
        if !buffer.is_coherent() {
            return Err(PickError::Unsupported { missing: vec![Requirement::Memory("host-coherent memory for the draw batch buffer")] });
        }
        Ok(DrawBatchBuffer { buffer, capacity })
    }

    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    pub fn buffer(&self) -> vk::Buffer {
        self.buffer.buffer
    }

    /// Where the commands start; rows start at 0.
    pub fn commands_offset(&self) -> u64 {
        u64::from(self.capacity) * u64::from(ROW_BYTES)
    }

    /// Writes draw `i`'s row and command; indices past the capacity are ignored (the caller
    /// records those draws directly).
    pub fn write(&mut self, i: u32, row: &DrawRow, command: &DrawCommand) {
        if i >= self.capacity {
            return;
        }
        let commands_offset = self.commands_offset() as usize;
        let Some(bytes) = self.buffer.mapped_mut() else { return };
        let mvp = row.model_view_projection.to_cols_array().map(f32::to_bits);
        let tail = [row.object_id[0], row.object_id[1], row.draw_index, 0];
        let row_words = mvp.into_iter().chain(tail);
        let row_at = i as usize * ROW_BYTES as usize;
        words_to_bytes(row_words, &mut bytes[row_at..row_at + ROW_BYTES as usize]);
        let command_at = commands_offset + i as usize * COMMAND_BYTES as usize;
        // Indexed layout: indexCount, instanceCount, firstIndex, vertexOffset, firstInstance.
        // Non-indexed: vertexCount, instanceCount, firstVertex, firstInstance (and 4 unused bytes).
        let words = match command.vertex_offset {
            Some(offset) => [command.count, 1, command.first, offset as u32, command.row],
            None => [command.count, 1, command.first, command.row, 0],
        };
        words_to_bytes(words, &mut bytes[command_at..command_at + COMMAND_BYTES as usize]);
    }

    pub fn bytes(&self) -> u64 {
        self.buffer.bytes()
    }
}
