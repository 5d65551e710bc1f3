//! The persistent, mapped staging buffer: one slot per frame in flight, each receiving the
//! picked pixel's texels and the frame's stamp, read on the CPU only once that frame's GPU
//! work is done. The stamp is written by the GPU after the texels, so texels whose stamp is
//! not the frame the picker recorded (an aborted frame, a read before completion) are refused.

use crate::error::PickError;
use crate::gpu::{word_at, GpuBuffer, Memory};
use crate::handoff::Texels;
use crate::pass::targets::PassTargets;
use ash::vk;
use gpu_allocator::MemoryLocation;

const ID_OFFSET: u64 = 0;
const DRAW_INSTANCE_OFFSET: u64 = 8;
const DEPTH_OFFSET: u64 = 16;
const DETAIL_OFFSET: u64 = 32;
const STAMP_OFFSET: u64 = 48;
/// Two 64-bit timestamps (pass start, copy end), copied by the GPU when timestamps are on.
const TIMESTAMPS_OFFSET: u64 = 56;
const SLOT_BYTES: u64 = 72;

/// The timestamp queries of one slot: written around the pass, copied into the slot by the
/// GPU, so reading them never calls `vkGetQueryPoolResults` (which waits on some drivers).
#[derive(Clone, Copy)]
pub(crate) struct SlotQueries {
    pub pool: vk::QueryPool,
    /// The first of the slot's two queries.
    pub first: u32,
}

/// What a slot holds once its frame completed.
pub(crate) struct SlotContents {
    pub texels: Texels,
    pub stamp: u64,
    /// (start, end) ticks, when timestamps are on.
    pub timestamps: Option<[u64; 2]>,
}

/// The stamp written for a frame: never 0, which is what a slot holds before its first copy.
pub(crate) fn stamp_of(frame: u64) -> u64 {
    frame.wrapping_add(1).max(1)
}

pub(crate) struct StagingRing {
    buffer: GpuBuffer,
    slot_stride: u64,
    slots: usize,
}

fn round_up(value: u64, to: u64) -> u64 {
    value.div_ceil(to) * to
}

impl StagingRing {
    pub fn new(memory: &Memory, slots: usize, non_coherent_atom_size: u64) -> Result<Self, PickError> {
        // Slots start on non-coherent-atom boundaries, so no two share an invalidated range.
        let slot_stride = round_up(SLOT_BYTES, non_coherent_atom_size.max(64));
        let mut buffer = GpuBuffer::new(memory, "staging ring", slot_stride * slots as u64, vk::BufferUsageFlags::TRANSFER_DST, MemoryLocation::GpuToCpu)?;
        // No stamp before the first copy: zero the slots (flushed where memory is not coherent).
        if let Some(bytes) = buffer.mapped_mut() {
            bytes.fill(0);
        }
        buffer.flush()?;
        Ok(StagingRing { buffer, slot_stride, slots })
    }

    fn slot_offset(&self, slot: usize) -> u64 {
        self.slot_stride * slot as u64
    }

    /// Records the copy of texel `at` of every attachment into `slot`, then `frame`'s stamp,
    /// then (with `queries`, whose first was written before the pass) the end timestamp and
    /// the copy of both, and the barrier that makes all of it visible to the host.
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass, after the pass that rendered `targets`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn record_copy(
        &self,
        device: &ash::Device,
        cmd: vk::CommandBuffer,
        targets: &PassTargets,
        detail: bool,
        slot: usize,
        at: vk::Offset2D,
        frame: u64,
        queries: Option<SlotQueries>,
    ) {
        let base = self.slot_offset(slot);
        let slot_range = |src, dst| self.buffer.barrier(src, dst, base, self.slot_stride);
        let region = |offset: u64, aspect: vk::ImageAspectFlags| vk::BufferImageCopy {
            buffer_offset: base + offset,
            buffer_row_length: 0,
            buffer_image_height: 0,
            image_subresource: vk::ImageSubresourceLayers { aspect_mask: aspect, mip_level: 0, base_array_layer: 0, layer_count: 1 },
            image_offset: vk::Offset3D { x: at.x, y: at.y, z: 0 },
            image_extent: vk::Extent3D { width: 1, height: 1, depth: 1 },
        };
        let color = vk::ImageAspectFlags::COLOR;
        let depth_image = targets.images.len().saturating_sub(1);
        // A fixed array: nothing is allocated per frame.
        let copies = [
            (0, region(ID_OFFSET, color)),
            (1, region(DRAW_INSTANCE_OFFSET, color)),
            (depth_image, region(DEPTH_OFFSET, vk::ImageAspectFlags::DEPTH)),
            (2, region(DETAIL_OFFSET, color)),
        ];
        let copies = &copies[..if detail { 4 } else { 3 }];
        // SAFETY: the caller guarantees `cmd` is recording outside a render pass; the images are
        // in TRANSFER_SRC_OPTIMAL (the pass's final layout) and the regions lie inside them and
        // inside this slot of the staging buffer.
        unsafe {
            // An earlier frame's copy into this slot (write-after-write).
            let before = slot_range(vk::AccessFlags::TRANSFER_WRITE, vk::AccessFlags::TRANSFER_WRITE);
            device.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &[],
                &[before],
                &[],
            );
            for &(image, region) in copies {
                device.cmd_copy_image_to_buffer(cmd, targets.images[image].image, vk::ImageLayout::TRANSFER_SRC_OPTIMAL, self.buffer.buffer, &[region]);
            }
            // The stamp goes after the texels, into bytes no copy touches. Two fills rather
            // than one vkCmdUpdateBuffer: on NVIDIA the update cost the pick 3.5 µs of GPU time.
            device.cmd_fill_buffer(cmd, self.buffer.buffer, base + STAMP_OFFSET, 4, stamp_of(frame) as u32);
            device.cmd_fill_buffer(cmd, self.buffer.buffer, base + STAMP_OFFSET + 4, 4, (stamp_of(frame) >> 32) as u32);
            if let Some(q) = queries {
                device.cmd_write_timestamp(cmd, vk::PipelineStageFlags::TRANSFER, q.pool, q.first + 1);
                // WAIT: the device waits for both results, so the host never does.
                let flags = vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT;
                device.cmd_copy_query_pool_results(cmd, q.pool, q.first, 2, self.buffer.buffer, base + TIMESTAMPS_OFFSET, 8, flags);
            }
            let to_host = slot_range(vk::AccessFlags::TRANSFER_WRITE, vk::AccessFlags::HOST_READ);
            device.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[],
                &[to_host],
                &[],
            );
        }
    }

    /// Reads a slot's texels, stamp and timestamps. Only this slot's bytes are read (the GPU
    /// may be writing the others).
    ///
    /// # Safety
    /// The GPU work that last copied into `slot` has completed (its fence signalled or the
    /// device idled), and no copy into it is pending.
    pub unsafe fn read(&self, slot: usize, detail: bool, timestamps: bool) -> Result<SlotContents, PickError> {
        if slot >= self.slots {
            return Err(PickError::InvalidSlot { slot, frames_in_flight: self.slots });
        }
        let mut bytes = [0u8; SLOT_BYTES as usize];
        // SAFETY: the caller's contract; the slot lies inside the buffer and starts on a
        // non-coherent-atom boundary (its stride is a multiple of the atom size).
        unsafe { self.buffer.read_range(self.slot_offset(slot), self.slot_stride, &mut bytes) }?;
        let word = |offset: u64| word_at(&bytes, offset as usize);
        let texels = Texels {
            id: [word(ID_OFFSET), word(ID_OFFSET + 4)],
            draw_instance: [word(DRAW_INSTANCE_OFFSET), word(DRAW_INSTANCE_OFFSET + 4)],
            depth: f32::from_bits(word(DEPTH_OFFSET)),
            detail: detail.then(|| [0, 4, 8, 12].map(|o| word(DETAIL_OFFSET + o))),
        };
        let double = |offset: u64| u64::from(word(offset)) | (u64::from(word(offset + 4)) << 32);
        let timestamps = timestamps.then(|| [double(TIMESTAMPS_OFFSET), double(TIMESTAMPS_OFFSET + 8)]);
        Ok(SlotContents { texels, stamp: double(STAMP_OFFSET), timestamps })
    }

    pub fn bytes(&self) -> u64 {
        self.buffer.bytes()
    }
}
