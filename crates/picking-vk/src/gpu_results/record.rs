//! Recording a frame's GPU results once its upload is written (see `picker::gpu_upload`): the
//! lookup cleared, the compute pass over the texels copied into the slot's mirror, and the
//! barrier to the host's readers.

use super::kit::{GpuResultsKit, PUSH_BYTES};
use super::layout::{HEADER_WORDS, JOB_WORDS, ROW_WORDS};
use super::ResultReaders;
use crate::record::push::words_to_bytes;
use ash::vk;

/// Entries per workgroup of the compute pass, after one workgroup per query.
const ENTRIES_PER_GROUP: u32 = 128;

/// What one frame's upload holds, and where the staged table's counts start.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FrameCounts {
    pub slot: usize,
    pub frame: u64,
    pub queries: u32,
    /// Draw rows written.
    pub rows: u32,
    /// Rectangle entries (keys written).
    pub entries: u32,
    /// Where the table's counts lie in the slot (and its mirror), in bytes.
    pub table_counts: u64,
}

/// Records the frame's GPU results into `cmd`. `after_copies` records what must follow the
/// frame's copies into the slot's mirror (their copy into the staging slot): it runs after the
/// first barrier.
///
/// # Safety
/// `cmd` is recording outside a render pass, after this frame's copies into the slot's mirror
/// and before its stamp; the slot's upload holds `counts`' jobs, rows and keys.
pub(crate) unsafe fn record_results(
    kit: &GpuResultsKit,
    device: &ash::Device,
    cmd: vk::CommandBuffer,
    counts: FrameCounts,
    readers: ResultReaders,
    after_copies: impl FnOnce(),
) {
    let layout = kit.layout;
    let Some(slot) = kit.slots.get(counts.slot) else { return };
    let rows_at = JOB_WORDS as u32 * counts.queries;
    // The lookup this frame uses: twice its entries, rounded up to a power of two, so the
    // clear and the probes scale with the entries used, not the capacity.
    let lookup_slots = if counts.entries == 0 { 1 } else { (2 * counts.entries).next_power_of_two().min(layout.lookup_slots) };
    // Three uvec4: frame (low, high), queries, entries; table counts word, draw rows word,
    // draw rows, entry keys word; hit capacity, entry capacity, lookup mask.
    let push = [
        counts.frame as u32,
        (counts.frame >> 32) as u32,
        counts.queries,
        counts.entries,
        (counts.table_counts / 4) as u32,
        rows_at,
        counts.rows,
        rows_at + ROW_WORDS as u32 * counts.rows,
        layout.hit_capacity,
        layout.entry_capacity,
        lookup_slots - 1,
        0,
    ];
    let mut push_bytes = [0u8; PUSH_BYTES as usize];
    words_to_bytes(push, &mut push_bytes);
    // The frame's copies into the mirror (transfers), the previous frame's results (its
    // compute writes and the host's reads of them) before this frame's copy out of the
    // mirror, clear and compute pass.
    let before = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE | vk::AccessFlags::SHADER_WRITE)
        .dst_access_mask(vk::AccessFlags::TRANSFER_READ | vk::AccessFlags::TRANSFER_WRITE | vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE);
    let transfer_compute = vk::PipelineStageFlags::TRANSFER | vk::PipelineStageFlags::COMPUTE_SHADER;
    let cleared = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE);
    let after = vk::MemoryBarrier::default().src_access_mask(vk::AccessFlags::SHADER_WRITE).dst_access_mask(readers.access);
    let claims_bytes = 4 * (HEADER_WORDS + layout.claims_word());
    let groups = counts.queries + counts.entries.div_ceil(ENTRIES_PER_GROUP);
    // SAFETY: (whole block) the caller's contract; the pipeline, layout, set and buffers are
    // the kit's, live for the picker's life, which outlives the host's command buffers.
    unsafe {
        device.cmd_pipeline_barrier(cmd, transfer_compute | readers.stages, transfer_compute, vk::DependencyFlags::empty(), &[before], &[], &[]);
        after_copies();
        if counts.entries > 0 {
            device.cmd_fill_buffer(cmd, slot.results.buffer, claims_bytes, 8 * u64::from(lookup_slots), 0);
            device.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::DependencyFlags::empty(),
                &[cleared],
                &[],
                &[],
            );
        }
        device.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, kit.pipeline.handle);
        device.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::COMPUTE, kit.pipeline_layout.handle, 0, &[slot.set], &[]);
        device.cmd_push_constants(cmd, kit.pipeline_layout.handle, vk::ShaderStageFlags::COMPUTE, 0, &push_bytes);
        device.cmd_dispatch(cmd, groups, 1, 1);
        // Later transfers (the next frame's copies into the mirror) come after the pass's reads.
        let dst = readers.stages | vk::PipelineStageFlags::TRANSFER;
        device.cmd_pipeline_barrier(cmd, vk::PipelineStageFlags::COMPUTE_SHADER, dst, vk::DependencyFlags::empty(), &[after], &[], &[]);
    }
}
