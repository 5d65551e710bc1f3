//! The persistent, mapped staging buffer: one slot per frame in flight. A slot receives, in
//! order, the texels of each point or radius query's region, the rectangle table's used
//! entries, and last the frame's stamp (and timestamps), so texels whose stamp is not the
//! frame the picker recorded (an aborted frame, a read before completion) are refused. Only
//! the bytes a frame used are read back.

use crate::error::PickError;
use crate::gpu::{word_at, GpuBuffer, Memory};
use crate::handoff::Texels;
use crate::pass::targets::PassTargets;
use ash::vk;
use gpu_allocator::MemoryLocation;

const STAMP_OFFSET: u64 = 0;
/// Three 64-bit timestamps (pass start, copy end, the GPU planner's end), copied by the GPU
/// when timestamps are on.
const TIMESTAMPS_OFFSET: u64 = 8;
/// Timestamp queries a slot takes: [`SlotQueries`]' order.
pub(crate) const TIMESTAMPS_PER_SLOT: u32 = 3;
/// Where the frame's texels start: the largest `minStorageBufferOffsetAlignment` Vulkan
/// allows, so the GPU results' pass can bind a slot's texels without its header (whose stamp
/// and timestamps the transfers write beside it).
pub(crate) const HEADER_BYTES: u64 = 256;

/// The timestamp queries of one slot: written around the pass (its start, the end of its
/// copy, and between them the end of the GPU planner's dispatches, or the start again without
/// them), copied into the slot by the GPU, so reading them never calls
/// `vkGetQueryPoolResults` (which waits on some drivers).
#[derive(Clone, Copy)]
pub(crate) struct SlotQueries {
    pub pool: vk::QueryPool,
    /// The first of the slot's [`TIMESTAMPS_PER_SLOT`] queries.
    pub first: u32,
}

impl SlotQueries {
    /// Slot `slot`'s queries of `pool`.
    pub fn of_slot(pool: vk::QueryPool, slot: usize) -> Self {
        SlotQueries { pool, first: TIMESTAMPS_PER_SLOT * slot as u32 }
    }

    /// Resets the slot's queries and writes the pass start; the GPU planner's end too where
    /// nothing is `planned` (the start again: every query the copy reads is written).
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass, on the pool's device.
    pub unsafe fn record_start(&self, device: &ash::Device, cmd: vk::CommandBuffer, planned: bool) {
        // SAFETY: the caller's contract; the queries are the slot's.
        unsafe {
            device.cmd_reset_query_pool(cmd, self.pool, self.first, TIMESTAMPS_PER_SLOT);
            device.cmd_write_timestamp(cmd, vk::PipelineStageFlags::TOP_OF_PIPE, self.pool, self.first);
            if !planned {
                device.cmd_write_timestamp(cmd, vk::PipelineStageFlags::TOP_OF_PIPE, self.pool, self.first + 2);
            }
        }
    }

    /// Writes the GPU planner's end, once its dispatches are done.
    ///
    /// # Safety
    /// As [`SlotQueries::record_start`], after it with `planned`.
    pub unsafe fn record_planned(&self, device: &ash::Device, cmd: vk::CommandBuffer) {
        // SAFETY: the caller's contract.
        unsafe { device.cmd_write_timestamp(cmd, vk::PipelineStageFlags::COMPUTE_SHADER, self.pool, self.first + 2) };
    }
}

/// What a slot's header holds once its frame completed.
pub(crate) struct SlotHeader {
    pub stamp: u64,
    /// (start, end, the GPU planner's end) ticks, when timestamps are on.
    pub timestamps: Option<[u64; 3]>,
}

/// The stamp written for a frame: never 0, which is what a slot holds before its first copy.
pub(crate) fn stamp_of(frame: u64) -> u64 {
    frame.wrapping_add(1).max(1)
}

pub(crate) fn round_up(value: u64, to: u64) -> u64 {
    value.div_ceil(to) * to
}

/// Where one region's texels lie in a slot: per attachment a block of `pixels` texels, detail
/// first (16-byte texels need 16-byte aligned offsets), then ID, (draw, instance) and depth.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RegionBlock {
    pub offset: u64,
    pub pixels: u64,
    pub detail: bool,
}

impl RegionBlock {
    /// Bytes a region of `pixels` takes, rounded up so the next block starts aligned.
    pub fn bytes(pixels: u64, detail: bool) -> u64 {
        round_up(pixels * if detail { 36 } else { 20 }, 16)
    }

    pub(crate) fn detail_at(&self) -> u64 {
        self.offset
    }
    pub(crate) fn id_at(&self) -> u64 {
        self.offset + if self.detail { 16 * self.pixels } else { 0 }
    }
    pub(crate) fn draw_instance_at(&self) -> u64 {
        self.id_at() + 8 * self.pixels
    }
    pub(crate) fn depth_at(&self) -> u64 {
        self.draw_instance_at() + 8 * self.pixels
    }

    /// The texels of pixel `i` (row-major in the region), from a slot's bytes.
    pub fn texels(&self, bytes: &[u8], i: u64) -> Texels {
        let word = |at: u64| word_at(bytes, at as usize);
        Texels {
            id: [word(self.id_at() + 8 * i), word(self.id_at() + 8 * i + 4)],
            draw_instance: [word(self.draw_instance_at() + 8 * i), word(self.draw_instance_at() + 8 * i + 4)],
            depth: f32::from_bits(word(self.depth_at() + 4 * i)),
            detail: self.detail.then(|| [0, 4, 8, 12].map(|o| word(self.detail_at() + 16 * i + o))),
        }
    }
}

/// A fragment's depth as reported: within [0, 1]. Where Vulkan leaves it undefined, the
/// attachment may hold anything: a host's depth bias can push a fragment past the depth
/// range (a float attachment keeps such values only with `VK_EXT_depth_range_unrestricted`;
/// lavapipe kept -1e6, which unprojected to a world point a million units off), and a model
/// matrix that sends vertices to clip w = 0 rasterizes at NaN depth. Such a hit reports the
/// range's end, or `far` for NaN.
pub(crate) fn window_depth(depth: f32, far: f32) -> f32 {
    if depth.is_nan() {
        far
    } else {
        depth.clamp(0.0, 1.0)
    }
}

/// A buffer barrier recorded in the same `vkCmdPipelineBarrier` as a slot's own, so the GPU
/// results cost the frame no barrier of their own. Its presence also says that the results
/// pass writes the slot's texels (in place of the copies).
#[derive(Clone, Copy)]
pub(crate) struct JoinedBarrier {
    pub src_stages: vk::PipelineStageFlags,
    pub dst_stages: vk::PipelineStageFlags,
    pub buffer: vk::BufferMemoryBarrier<'static>,
    /// A second buffer's (the GPU plan's table rows).
    pub also: Option<vk::BufferMemoryBarrier<'static>>,
}

pub(crate) struct StagingRing {
    buffer: GpuBuffer,
    slot_stride: u64,
    slots: usize,
    atom: u64,
}

impl StagingRing {
    /// A ring of `slots` slots of `slot_bytes` each (header included).
    pub fn new(memory: &Memory, slots: usize, slot_bytes: u64, non_coherent_atom_size: u64) -> Result<Self, PickError> {
        // Slots start on non-coherent-atom boundaries, so no two share an invalidated range,
        // and on storage-buffer offset boundaries (at most 256 bytes) for the GPU results.
        let atom = non_coherent_atom_size.max(HEADER_BYTES);
        let slot_stride = round_up(slot_bytes.max(HEADER_BYTES), atom);
        // STORAGE_BUFFER: with GPU results their pass writes the texels in place of the copies.
        let usage = vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::STORAGE_BUFFER;
        let mut buffer = GpuBuffer::new(memory, "staging ring", slot_stride * slots as u64, usage, MemoryLocation::GpuToCpu)?;
        // No stamp before the first copy: zero the slots (flushed where memory is not coherent).
        if let Some(bytes) = buffer.mapped_mut() {
            bytes.fill(0);
        }
        buffer.flush()?;
        Ok(StagingRing { buffer, slot_stride, slots, atom })
    }

    /// Bytes of one slot.
    pub fn slot_stride(&self) -> u64 {
        self.slot_stride
    }

    /// Where a frame's copies into `slot` go: the ring's buffer and where the slot starts.
    pub fn destination(&self, slot: usize) -> (vk::Buffer, u64) {
        (self.buffer.buffer, self.slot_offset(slot))
    }

    /// Where slot `slot` starts in the ring's buffer, in bytes.
    pub fn slot_offset(&self, slot: usize) -> u64 {
        self.slot_stride * slot as u64
    }

    /// The ring's buffer, for the GPU results' pass (which writes a slot's texels).
    pub fn buffer(&self) -> vk::Buffer {
        self.buffer.buffer
    }

    /// The slot's writers: the copies, and with `joined` (GPU results) the results pass too.
    fn writers(joined: Option<JoinedBarrier>) -> (vk::PipelineStageFlags, vk::AccessFlags) {
        match joined {
            Some(_) => {
                (vk::PipelineStageFlags::TRANSFER | vk::PipelineStageFlags::COMPUTE_SHADER, vk::AccessFlags::TRANSFER_WRITE | vk::AccessFlags::SHADER_WRITE)
            }
            None => (vk::PipelineStageFlags::TRANSFER, vk::AccessFlags::TRANSFER_WRITE),
        }
    }

    /// One barrier: the slot's writes before `dst`, and what `joined` (the GPU results) and
    /// `plan` (the GPU plan's buffer) order.
    fn slot_barrier(
        &self,
        cmd: vk::CommandBuffer,
        device: &ash::Device,
        slot: usize,
        (dst_stages, dst): (vk::PipelineStageFlags, vk::AccessFlags),
        (joined, plan): (Option<JoinedBarrier>, Option<JoinedBarrier>),
    ) {
        let (writers, writes) = Self::writers(joined);
        let (mut src_stages, mut dst_stages) = (writers, dst_stages);
        // A fixed array: nothing is allocated per frame.
        let mut barriers = [self.buffer.barrier(writes, dst, self.slot_offset(slot), self.slot_stride); 5];
        let mut count = 1;
        for j in [joined, plan].into_iter().flatten() {
            src_stages |= j.src_stages;
            dst_stages |= j.dst_stages;
            for b in std::iter::once(j.buffer).chain(j.also) {
                barriers[count] = b;
                count += 1;
            }
        }
        // SAFETY: the callers' contract: `cmd` is recording outside a render pass.
        unsafe { device.cmd_pipeline_barrier(cmd, src_stages, dst_stages, vk::DependencyFlags::empty(), &[], &barriers[..count], &[]) };
    }

    /// Orders this frame's writes into `slot` after an earlier frame's (write-after-write),
    /// and what `joined` and `plan` order in the same barrier.
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass.
    pub unsafe fn begin(&self, device: &ash::Device, cmd: vk::CommandBuffer, slot: usize, joined: Option<JoinedBarrier>, plan: Option<JoinedBarrier>) {
        self.slot_barrier(cmd, device, slot, Self::writers(joined), (joined, plan));
    }

    /// Records the copy of the `extent` texels at `at` of every attachment into `block` of
    /// `dst` (a buffer and where its slot starts: [`StagingRing::destination`]).
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass, after the pass that rendered `targets` (whose
    /// attachments end in `targets.after_pass`); the block lies inside the slot.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn record_region(
        &self,
        device: &ash::Device,
        cmd: vk::CommandBuffer,
        targets: &PassTargets,
        (dst, base): (vk::Buffer, u64),
        at: vk::Offset2D,
        extent: vk::Extent2D,
        block: &RegionBlock,
    ) {
        let region = |offset: u64, aspect: vk::ImageAspectFlags| vk::BufferImageCopy {
            buffer_offset: base + offset,
            buffer_row_length: 0,
            buffer_image_height: 0,
            image_subresource: vk::ImageSubresourceLayers { aspect_mask: aspect, mip_level: 0, base_array_layer: 0, layer_count: 1 },
            image_offset: vk::Offset3D { x: at.x, y: at.y, z: 0 },
            image_extent: vk::Extent3D { width: extent.width, height: extent.height, depth: 1 },
        };
        let color = vk::ImageAspectFlags::COLOR;
        let depth_image = targets.images().len().saturating_sub(1);
        // A fixed array: nothing is allocated per frame.
        let copies = [
            (0, region(block.id_at(), color)),
            (1, region(block.draw_instance_at(), color)),
            (depth_image, region(block.depth_at(), vk::ImageAspectFlags::DEPTH)),
            (2, region(block.detail_at(), color)),
        ];
        let copies = &copies[..if block.detail { 4 } else { 3 }];
        for &(image, region) in copies {
            // SAFETY: the caller's contract; the regions lie inside the images and the slot.
            unsafe { device.cmd_copy_image_to_buffer(cmd, targets.images()[image].image, targets.after_pass, dst, &[region]) };
        }
    }

    /// Records copies from `src` into `dst` (as [`StagingRing::record_region`]): `(source
    /// offset, offset in the slot, bytes)`.
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass, after a barrier that made `src`'s writes
    /// visible to transfers; the ranges lie inside `src` and the slot.
    pub unsafe fn record_buffer_copy(
        &self,
        device: &ash::Device,
        cmd: vk::CommandBuffer,
        src: vk::Buffer,
        (dst, base): (vk::Buffer, u64),
        ranges: &[(u64, u64, u64)],
    ) {
        for &(src_offset, dst_offset, size) in ranges.iter().filter(|r| r.2 > 0) {
            let copy = vk::BufferCopy { src_offset, dst_offset: base + dst_offset, size };
            // SAFETY: the caller's contract.
            unsafe { device.cmd_copy_buffer(cmd, src, dst, &[copy]) };
        }
    }

    /// Records `frame`'s stamp after the frame's copies, then (with `queries`, whose first
    /// was written before the pass) the end timestamp and the copy of both, and the barrier
    /// that makes all of it visible to the host (and what `joined` and `plan` order).
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass, after this frame's copies into `slot`.
    pub unsafe fn finish(
        &self,
        device: &ash::Device,
        cmd: vk::CommandBuffer,
        slot: usize,
        frame: u64,
        queries: Option<SlotQueries>,
        (joined, plan): (Option<JoinedBarrier>, Option<JoinedBarrier>),
    ) {
        let base = self.slot_offset(slot);
        // SAFETY: the caller's contract; the header lies inside the slot.
        unsafe {
            // The stamp goes into bytes no copy touches; it is read only once the whole frame
            // completed, so the order of the transfers does not matter. Two fills rather than one vkCmdUpdateBuffer: on NVIDIA the update cost the pick
            // 3.5 µs of GPU time.
            device.cmd_fill_buffer(cmd, self.buffer.buffer, base + STAMP_OFFSET, 4, stamp_of(frame) as u32);
            device.cmd_fill_buffer(cmd, self.buffer.buffer, base + STAMP_OFFSET + 4, 4, (stamp_of(frame) >> 32) as u32);
            if let Some(q) = queries {
                device.cmd_write_timestamp(cmd, vk::PipelineStageFlags::TRANSFER, q.pool, q.first + 1);
                // WAIT: the device waits for the results, so the host never does.
                let flags = vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT;
                device.cmd_copy_query_pool_results(cmd, q.pool, q.first, TIMESTAMPS_PER_SLOT, self.buffer.buffer, base + TIMESTAMPS_OFFSET, 8, flags);
            }
        }
        self.slot_barrier(cmd, device, slot, (vk::PipelineStageFlags::HOST, vk::AccessFlags::HOST_READ), (joined, plan));
    }

    /// Reads the first `used` bytes of a slot (header included) into `out`, and its header.
    /// Only this slot's bytes are read (the GPU may be writing the others).
    ///
    /// # Safety
    /// The GPU work that last copied into `slot` has completed (its fence signalled or the
    /// device idled), and no copy into it is pending.
    pub unsafe fn read(&self, slot: usize, used: u64, timestamps: bool, out: &mut Vec<u8>) -> Result<SlotHeader, PickError> {
        if slot >= self.slots {
            return Err(PickError::InvalidSlot { slot, frames_in_flight: self.slots });
        }
        let used = used.clamp(HEADER_BYTES, self.slot_stride);
        out.clear();
        out.resize(used as usize, 0);
        // SAFETY: the caller's contract; the slot lies inside the buffer and starts on a
        // non-coherent-atom boundary, and the invalidated range stays inside it.
        unsafe { self.buffer.read_range(self.slot_offset(slot), round_up(used, self.atom).min(self.slot_stride), out) }?;
        let double = |offset: u64| u64::from(word_at(out, offset as usize)) | (u64::from(word_at(out, offset as usize + 4)) << 32);
        let timestamps = timestamps.then(|| [double(TIMESTAMPS_OFFSET), double(TIMESTAMPS_OFFSET + 8), double(TIMESTAMPS_OFFSET + 16)]);
        Ok(SlotHeader { stamp: double(STAMP_OFFSET), timestamps })
    }

    pub fn bytes(&self) -> u64 {
        self.buffer.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_blocks_keep_copy_offsets_aligned() {
        for detail in [false, true] {
            for pixels in [1u64, 3, 17 * 17] {
                let b = RegionBlock { offset: HEADER_BYTES, pixels, detail };
                assert_eq!(b.detail_at() % 16, 0);
                assert_eq!((b.id_at() % 8, b.draw_instance_at() % 8, b.depth_at() % 4), (0, 0, 0));
                assert!(b.depth_at() + 4 * pixels <= b.offset + RegionBlock::bytes(pixels, detail));
                assert_eq!(RegionBlock::bytes(pixels, detail) % 16, 0);
            }
        }
    }
}
