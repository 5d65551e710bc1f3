//! Recording a frame's GPU results (its upload is written by `picker::gpu_upload`): the
//! compute pass over the queries right after the hit pass (it also writes their texels into
//! the staging slot, in place of the readback copies); for rectangles, two copies beside the
//! table's own copy (the spans and lookup the CPU built, the table's pixel counts); and the
//! two buffer barriers that ride on the staging ring's own first and last barrier.

use super::kit::{GpuResultsKit, PUSH_BYTES};
use super::layout::{RectUpload, HEADER_WORDS, JOB_WORDS, MASK_WORD, SPAN_WORDS};
use super::ResultReaders;
use crate::readback::JoinedBarrier;
use crate::record::push::words_to_bytes;
use ash::vk;

/// What one frame's upload holds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FrameCounts {
    pub slot: usize,
    pub frame: u64,
    pub queries: u32,
    /// Draw rows written.
    pub rows: u32,
    /// Rectangle entries this frame.
    pub entries: u32,
}

impl GpuResultsKit {
    /// Joined into the frame's first barrier: the slot's results buffer is written only
    /// after the host's readers and the passes of an earlier frame there are done with it.
    pub fn first_barrier(&self, slot: usize, readers: ResultReaders) -> Option<JoinedBarrier> {
        let results = &self.slots.get(slot)?.results;
        let writes = vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE;
        Some(JoinedBarrier {
            src_stages: readers.stages | vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
            dst_stages: vk::PipelineStageFlags::TRANSFER | vk::PipelineStageFlags::COMPUTE_SHADER,
            buffer: results.barrier(writes, writes, 0, vk::WHOLE_SIZE),
        })
    }

    /// Joined into the frame's last barrier: the pass's and the copies' writes made visible to
    /// the host's readers.
    pub fn last_barrier(&self, slot: usize, readers: ResultReaders) -> Option<JoinedBarrier> {
        let results = &self.slots.get(slot)?.results;
        Some(JoinedBarrier {
            src_stages: vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
            dst_stages: readers.stages,
            buffer: results.barrier(vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE, readers.access, 0, vk::WHOLE_SIZE),
        })
    }

    /// Records the queries' pass: the header and every query's hit (a rectangle's is empty).
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass, after the staging ring's first barrier and
    /// the hit pass (whose dependency covers compute reads of its attachments) or with no hit
    /// query in the frame; the slot's upload holds `counts`' jobs and rows by submission.
    pub unsafe fn record_queries(&self, device: &ash::Device, cmd: vk::CommandBuffer, counts: FrameCounts) {
        let Some(slot) = self.slots.get(counts.slot) else { return };
        let layout = self.layout;
        // Three uvec4: frame (low, high), queries, entries; detail, draw rows word, draw
        // rows, unused; hit capacity, entry capacity, where the counts start, unused.
        let push = [
            counts.frame as u32,
            (counts.frame >> 32) as u32,
            counts.queries,
            counts.entries,
            u32::from(self.detail),
            JOB_WORDS as u32 * counts.queries,
            counts.rows,
            0,
            layout.hit_capacity,
            layout.entry_capacity,
            layout.counts_word() as u32,
            0,
        ];
        let mut push_bytes = [0u8; PUSH_BYTES as usize];
        words_to_bytes(push, &mut push_bytes);
        // SAFETY: the caller's contract; the pipeline, layout, set and buffers are the kit's,
        // live for the picker's life, which outlives the host's command buffers. One
        // workgroup at least: it writes the header.
        unsafe {
            device.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, self.pipeline.handle);
            device.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::COMPUTE, self.pipeline_layout.handle, 0, &[slot.set], &[]);
            device.cmd_push_constants(cmd, self.pipeline_layout.handle, vk::ShaderStageFlags::COMPUTE, 0, &push_bytes);
            device.cmd_dispatch(cmd, counts.queries.max(1), 1, 1);
        }
    }

    /// Records the rectangles' part: the lookup mask, spans and claims from the upload, and
    /// the first `entries` pixel counts of the rectangle table.
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass, after the queries pass and a barrier that
    /// made it and the rectangle table's writes visible to transfers; `rect` is what the
    /// slot's upload holds by submission; `table` holds at least `entries` counts.
    pub unsafe fn record_rect_copies(&self, device: &ash::Device, cmd: vk::CommandBuffer, slot: usize, rect: RectUpload, table: vk::Buffer, entries: u32) {
        let Some(s) = self.slots.get(slot) else { return };
        let layout = self.layout;
        let spans_at = rect.at + 1;
        let claims_at = spans_at + SPAN_WORDS * u64::from(rect.spans);
        let region = |src: u64, dst: u64, words: u64| vk::BufferCopy { src_offset: 4 * src, dst_offset: 4 * dst, size: 4 * words };
        let regions = [
            region(rect.at, MASK_WORD, 1),
            region(spans_at, HEADER_WORDS + layout.spans_word(), SPAN_WORDS * u64::from(rect.spans)),
            region(claims_at, HEADER_WORDS + layout.claims_word(), u64::from(rect.slots)),
        ];
        let regions: &[vk::BufferCopy] = if rect.spans > 0 { &regions } else { &regions[..1] };
        // SAFETY: the caller's contract; the ranges lie inside both buffers (sized by the
        // configuration the frame was checked against).
        unsafe {
            device.cmd_copy_buffer(cmd, s.upload.buffer, s.results.buffer, regions);
            if entries > 0 {
                let counts = region(0, HEADER_WORDS + layout.counts_word(), u64::from(entries));
                device.cmd_copy_buffer(cmd, table, s.results.buffer, &[counts]);
            }
        }
    }
}
