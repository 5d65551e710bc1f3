//! Recording a frame's GPU results (its upload is written by `picker::gpu_upload`): the
//! compute pass over the queries right after the hit pass (it also writes their texels into
//! the staging slot, in place of the readback copies), the pass over the rectangle entries
//! right after the rectangles (beside the table's copy, its lookup cleared with the table),
//! and the two buffer barriers that ride on the staging ring's own first and last barrier.

use super::kit::{GpuResultsKit, PUSH_BYTES};
use super::layout::{HEADER_WORDS, JOB_WORDS, ROW_WORDS};
use super::ResultReaders;
use crate::pass::rect::ZeroFill;
use crate::readback::JoinedBarrier;
use crate::record::push::words_to_bytes;
use ash::vk;

/// Entries per workgroup of the entries pass.
const ENTRIES_PER_GROUP: u32 = 128;

/// What one frame's upload holds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FrameCounts {
    pub slot: usize,
    pub frame: u64,
    pub queries: u32,
    /// Draw rows written.
    pub rows: u32,
    /// Rectangle entries (keys written).
    pub entries: u32,
}

/// Which part of the frame a dispatch resolves.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// The header and one workgroup per query (points and radius queries read the
    /// attachments; a rectangle's hit is empty).
    Queries = 0,
    /// The rectangle entries into the lookup, once the table is complete.
    Entries = 1,
}

impl GpuResultsKit {
    /// The lookup slots a frame of `entries` uses: twice its entries, rounded up to a power
    /// of two, so the clear and the probes scale with the entries used, not the capacity.
    fn lookup_slots(&self, entries: u32) -> u32 {
        if entries == 0 {
            1
        } else {
            (2 * entries).next_power_of_two().min(self.layout.lookup_slots)
        }
    }

    /// Joined into the frame's first barrier: the slot's results buffer is written only
    /// after the host's readers and the passes of an earlier frame there are done with it.
    pub fn first_barrier(&self, slot: usize, readers: ResultReaders) -> Option<JoinedBarrier> {
        let results = &self.slots.get(slot)?.results;
        let writes = vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE;
        Some(JoinedBarrier {
            src_stages: readers.stages | vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::TRANSFER,
            dst_stages: vk::PipelineStageFlags::TRANSFER | vk::PipelineStageFlags::COMPUTE_SHADER,
            buffer: results.barrier(writes, writes | vk::AccessFlags::SHADER_READ, 0, vk::WHOLE_SIZE),
        })
    }

    /// Joined into the frame's last barrier: the passes' writes made visible to the host's
    /// readers.
    pub fn last_barrier(&self, slot: usize, readers: ResultReaders) -> Option<JoinedBarrier> {
        let results = &self.slots.get(slot)?.results;
        Some(JoinedBarrier {
            src_stages: vk::PipelineStageFlags::COMPUTE_SHADER,
            dst_stages: readers.stages,
            buffer: results.barrier(vk::AccessFlags::SHADER_WRITE, readers.access, 0, vk::WHOLE_SIZE),
        })
    }

    /// The lookup range the frame's entries use, to be zeroed with the rectangle table
    /// (whose barriers order it after this frame's queries pass and before its entries pass).
    pub fn lookup_clear(&self, counts: FrameCounts) -> Option<ZeroFill> {
        let slot = self.slots.get(counts.slot)?;
        (counts.entries > 0).then(|| ZeroFill {
            buffer: slot.results.buffer,
            offset: 4 * (HEADER_WORDS + self.layout.claims_word()),
            bytes: 8 * u64::from(self.lookup_slots(counts.entries)),
        })
    }

    /// Records the queries' pass: the header and every query's hit.
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass, after the staging ring's first barrier and
    /// the hit pass (whose dependency covers compute reads of its attachments) or with no hit
    /// query in the frame; the slot's upload holds `counts`' jobs and rows.
    pub unsafe fn record_queries(&self, device: &ash::Device, cmd: vk::CommandBuffer, counts: FrameCounts) {
        // One workgroup at least: it writes the header.
        // SAFETY: the caller's contract.
        unsafe { self.dispatch(device, cmd, counts, Phase::Queries, counts.queries.max(1)) };
    }

    /// Records the entries' pass, when the frame has rectangle entries.
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass, after a barrier that made the rectangle
    /// table's writes (and the lookup's clear) visible to compute reads; the slot's upload
    /// holds `counts`' keys.
    pub unsafe fn record_entries(&self, device: &ash::Device, cmd: vk::CommandBuffer, counts: FrameCounts) {
        if counts.entries > 0 {
            // SAFETY: the caller's contract.
            unsafe { self.dispatch(device, cmd, counts, Phase::Entries, counts.entries.div_ceil(ENTRIES_PER_GROUP)) };
        }
    }

    /// # Safety
    /// As the callers'.
    unsafe fn dispatch(&self, device: &ash::Device, cmd: vk::CommandBuffer, counts: FrameCounts, phase: Phase, groups: u32) {
        let Some(slot) = self.slots.get(counts.slot) else { return };
        let layout = self.layout;
        let rows_at = JOB_WORDS as u32 * counts.queries;
        // Three uvec4: frame (low, high), queries, entries; phase (bit 1: detail), draw rows
        // word, draw rows, entry keys word; hit capacity, entry capacity, lookup mask, unused.
        let push = [
            counts.frame as u32,
            (counts.frame >> 32) as u32,
            counts.queries,
            counts.entries,
            phase as u32 | u32::from(self.detail) << 1,
            rows_at,
            counts.rows,
            rows_at + ROW_WORDS as u32 * counts.rows,
            layout.hit_capacity,
            layout.entry_capacity,
            self.lookup_slots(counts.entries) - 1,
            0,
        ];
        let mut push_bytes = [0u8; PUSH_BYTES as usize];
        words_to_bytes(push, &mut push_bytes);
        // SAFETY: the caller's contract; the pipeline, layout, set and buffers are the kit's,
        // live for the picker's life, which outlives the host's command buffers.
        unsafe {
            device.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, self.pipeline.handle);
            let set = if phase == Phase::Queries { slot.queries_set } else { slot.entries_set };
            device.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::COMPUTE, self.pipeline_layout.handle, 0, &[set], &[]);
            device.cmd_push_constants(cmd, self.pipeline_layout.handle, vk::ShaderStageFlags::COMPUTE, 0, &push_bytes);
            device.cmd_dispatch(cmd, groups, 1, 1);
        }
    }
}
