//! Recording a frame's GPU results. What the CPU knows (the header, the rectangles' spans and
//! lookup, the jobs and draw rows) `picker::results_writer` uploads (`upload`); the GPU adds
//! the rest: the compute pass over the point and radius queries right after the hit pass (it
//! also carries the upload over, and writes the queries' texels into the staging slot in place
//! of the readback copies), and a copy of the rectangle table's pixel counts beside the
//! table's own copy. The results buffer's two barriers ride on the staging ring's own
//! first and last barrier.

use super::kit::{GpuResultsKit, PUSH_BYTES};
use super::layout::HEADER_WORDS;
use super::ResultReaders;
use crate::readback::JoinedBarrier;
use crate::record::push::words_to_bytes;
use ash::vk;

impl GpuResultsKit {
    /// Joined into the frame's first barrier: the slot's results buffer is written by the GPU
    /// only after the host's readers and the passes of an earlier frame there are done with it.
    pub fn first_barrier(&self, slot: usize, readers: ResultReaders) -> Option<JoinedBarrier> {
        let results = &self.slots.get(slot)?.results;
        let writes = vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE;
        Some(JoinedBarrier {
            src_stages: readers.stages | vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
            dst_stages: vk::PipelineStageFlags::TRANSFER | vk::PipelineStageFlags::COMPUTE_SHADER,
            buffer: results.barrier(writes, writes, 0, vk::WHOLE_SIZE),
            also: None,
        })
    }

    /// Joined into the frame's last barrier: the pass's and the copy's writes made visible to
    /// the host's readers.
    pub fn last_barrier(&self, slot: usize, readers: ResultReaders) -> Option<JoinedBarrier> {
        let results = &self.slots.get(slot)?.results;
        Some(JoinedBarrier {
            src_stages: vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
            dst_stages: readers.stages,
            buffer: results.barrier(vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE, readers.access, 0, vk::WHOLE_SIZE),
            also: None,
        })
    }

    /// Records the pass over the frame's `queries` (of which the point and radius ones get
    /// their hits, the rectangles an empty one), whose draw rows are the first `rows`, then
    /// `groups` table groups (two rows each); it carries the upload over, with `copy_groups`
    /// workgroups for the rectangles' spans and lookup ([`UploadExtent::copy_groups`](crate::gpu_results::UploadExtent::copy_groups)).
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass, after the staging ring's first barrier and
    /// the hit pass (whose dependency ends at transfers); by submission the slot's upload
    /// buffer holds the frame's words ([`GpuResultsKit::write_upload`]).
    pub unsafe fn record_queries(
        &self,
        device: &ash::Device,
        cmd: vk::CommandBuffer,
        slot: usize,
        (queries, copy_groups): (u32, u32),
        (rows, groups): (u32, u32),
    ) {
        let Some(s) = self.slots.get(slot) else { return };
        let layout = self.layout;
        // Two uvec4: queries, detail, jobs word, draw rows word; draw rows, table groups, unused.
        let push = [queries, u32::from(self.detail), layout.jobs_word() as u32, layout.rows_word() as u32, rows, groups, 0, 0];
        let mut push_bytes = [0u8; PUSH_BYTES as usize];
        words_to_bytes(push, &mut push_bytes);
        // The hit pass's dependency ends at transfers (the same in every configuration, so
        // every picker's pass stays compatible): chained from there to this pass's reads.
        let attachments = vk::MemoryBarrier::default().dst_access_mask(vk::AccessFlags::SHADER_READ);
        // SAFETY: the caller's contract; the pipeline, layout, set and buffers are the kit's,
        // live for the picker's life, which outlives the host's command buffers.
        unsafe {
            let (transfer, compute) = (vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::COMPUTE_SHADER);
            device.cmd_pipeline_barrier(cmd, transfer, compute, vk::DependencyFlags::empty(), &[attachments], &[], &[]);
            device.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, self.pipeline.handle);
            device.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::COMPUTE, self.pipeline_layout.handle, 0, &[s.set], &[]);
            device.cmd_push_constants(cmd, self.pipeline_layout.handle, vk::ShaderStageFlags::COMPUTE, 0, &push_bytes);
            device.cmd_dispatch(cmd, queries + copy_groups, 1, 1);
        }
    }

    /// Records the copy of the rectangle table's first `entries` pixel counts.
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass, after barriers that order the results pass's
    /// writes before transfer writes (the rectangle table clear's first one) and make the
    /// table's writes visible to transfers; `table` holds at least `entries` counts from its
    /// start.
    pub unsafe fn record_counts_copy(&self, device: &ash::Device, cmd: vk::CommandBuffer, slot: usize, table: vk::Buffer, entries: u32) {
        let Some(s) = self.slots.get(slot) else { return };
        if entries == 0 {
            return;
        }
        let dst_offset = 4 * (HEADER_WORDS + self.layout.counts_word());
        let copy = vk::BufferCopy { src_offset: 0, dst_offset, size: 4 * u64::from(entries) };
        // SAFETY: the caller's contract; the range lies inside the results buffer (sized by
        // the configuration the frame was checked against).
        unsafe { device.cmd_copy_buffer(cmd, table, s.results.buffer, &[copy]) };
    }
}
