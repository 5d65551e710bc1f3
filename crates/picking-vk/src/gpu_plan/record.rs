//! Recording the cull pass (the culling dispatches, a barrier, the finishing dispatch; only the
//! first where every pair is walked), and the barriers it joins: its writes reach the pick
//! passes' indirect reads (and walked pairs' vertex shaders) through the staging slot's first
//! barrier, and the slot's last barrier orders the frame's uses of the plan buffer before the
//! next frame's cull pass and the host's read of its totals.

use super::layout::{total, TOTAL_WORDS};
use super::{CullDispatch, GpuPlanKit, PUSH_BYTES, TABLE_PUSH_BYTES};
use crate::readback::{JoinedBarrier, SlotQueries};
use crate::resolve::result::GpuPlanStats;
use ash::vk;

/// One dispatch as recorded: its pairs, and the set at set 1 with the push words that go
/// with it: for instances, the instance storage set of its draw, the draw's storage words
/// (`record::push::storage_words`) and first instance; for a table group, the table's set of
/// the slot, (first row, rows, snapshot index of row 0, window), the word of the frame's
/// view-projection, and whether its draws are hooked.
#[derive(Clone, Copy)]
pub(crate) struct CullInput {
    pub dispatch: CullDispatch,
    pub set: vk::DescriptorSet,
    pub words: [u32; 4],
    pub last_word: u32,
    pub hooked: bool,
}

/// The table pairs of a frame: the first of them (they follow the instance pairs), how many,
/// the table's rows and set of the slot, and the words of its run-start bits and of its
/// occluders' directory.
#[derive(Clone, Copy)]
pub(crate) struct TablePairs {
    pub first: u32,
    pub count: u32,
    pub rows: vk::Buffer,
    pub set: vk::DescriptorSet,
    pub words: (u32, u32),
}

impl GpuPlanKit {
    /// Records the cull dispatches of slot `slot`'s frame (whose jobs are written), and where
    /// any pair is to be finished, a barrier and the dispatches that finish its `pairs.0`
    /// pairs (of which `table`'s are a shared list's; the instance pairs' where `pairs.1`
    /// says any is not walked); then the slot's planner-end timestamp, if timed (`queries`).
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass, before the staging slot's first barrier
    /// joined with [`GpuPlanKit::first_barrier`]; each set binds live buffers (a draw's
    /// instance buffer, or a table's) that stay valid until the command buffer completes.
    pub unsafe fn record_cull(
        &self,
        device: &ash::Device,
        cmd: vk::CommandBuffer,
        slot: usize,
        (pairs, finish_instances): (u32, bool),
        (inputs, table): (&[CullInput], Option<TablePairs>),
        queries: Option<SlotQueries>,
    ) {
        let Some((buffer, plan_set)) = self.slots.get(slot) else {
            // The timestamp is written whatever is recorded: the copy reads it.
            if let Some(q) = queries {
                // SAFETY: the caller's contract.
                unsafe { q.record_planned(device, cmd) };
            }
            return;
        };
        let bind = vk::PipelineBindPoint::COMPUTE;
        // The survivor bits (and a table's rows: its occlusion reads their matrices and keys,
        // its chunk spans copy them into span rows) before the finishing pass reads them.
        let (read, write) = (vk::AccessFlags::SHADER_READ, vk::AccessFlags::SHADER_WRITE);
        let written = buffer.barrier(write, read | write, 0, vk::WHOLE_SIZE);
        let rows = table.filter(|t| t.count > 0).map(|t| whole(t.rows, write, read | write));
        let written: Vec<_> = [Some(written), rows].into_iter().flatten().collect();
        let compute = vk::PipelineStageFlags::COMPUTE_SHADER;
        let draws = self.draws.as_ref();
        // SAFETY: (whole block) the caller's contract; pipelines, layouts and sets are this
        // device's and outlive the command buffer.
        unsafe {
            // The instances' dispatches, then the table's (each with its own pipeline).
            for (cull, is_table) in [(Some(&self.cull), false), (draws.map(|d| &d.cull), true)] {
                let Some(cull) = cull.filter(|_| inputs.iter().any(|i| i.dispatch.table == is_table)) else { continue };
                device.cmd_bind_pipeline(cmd, bind, cull.0.handle);
                device.cmd_bind_descriptor_sets(cmd, bind, cull.1.handle, 0, &[*plan_set], &[]);
                for input in inputs.iter().filter(|i| i.dispatch.table == is_table) {
                    let d = input.dispatch;
                    device.cmd_bind_descriptor_sets(cmd, bind, cull.1.handle, 1, &[input.set], &[]);
                    let pairs = [d.first_pair, d.pairs, d.first_group, input.last_word];
                    let keys = draws.map_or(0, |d| d.rows_layout.keys_word());
                    let words = if is_table { [pairs, input.words, [u32::from(input.hooked), keys, 0, 0]] } else { [input.words, pairs, [0; 4]] };
                    let bytes: &[u8] = bytemuck::cast_slice(&words);
                    let size = if is_table { TABLE_PUSH_BYTES } else { PUSH_BYTES };
                    device.cmd_push_constants(cmd, cull.1.handle, vk::ShaderStageFlags::COMPUTE, 0, &bytes[..size as usize]);
                    device.cmd_dispatch(cmd, d.groups, 1, 1);
                }
            }
            let instance_pairs = if finish_instances { table.map_or(pairs, |t| t.first) } else { 0 };
            if instance_pairs > 0 || table.is_some_and(|t| t.count > 0) {
                device.cmd_pipeline_barrier(cmd, compute, compute, vk::DependencyFlags::empty(), &[], &written, &[]);
            }
            if instance_pairs > 0 {
                device.cmd_bind_pipeline(cmd, bind, self.finish.0.handle);
                device.cmd_bind_descriptor_sets(cmd, bind, self.finish.1.handle, 0, &[*plan_set], &[]);
                let push = [instance_pairs, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, self.layout.totals_word()];
                device.cmd_push_constants(cmd, self.finish.1.handle, vk::ShaderStageFlags::COMPUTE, 0, bytemuck::cast_slice(&push));
                device.cmd_dispatch(cmd, instance_pairs, 1, 1);
            }
            if let (Some(t), Some(d)) = (table.filter(|t| t.count > 0), draws) {
                let layout = d.finish.1.handle;
                device.cmd_bind_pipeline(cmd, bind, d.finish.0.handle);
                device.cmd_bind_descriptor_sets(cmd, bind, layout, 0, &[*plan_set, t.set], &[]);
                let w = d.finish_words(&self.layout);
                let push = [t.count, t.first, t.words.0, t.words.1, w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]];
                device.cmd_push_constants(cmd, layout, vk::ShaderStageFlags::COMPUTE, 0, bytemuck::cast_slice(&push));
                device.cmd_dispatch(cmd, t.count, 1, 1);
            }
            if let Some(q) = queries {
                q.record_planned(device, cmd);
            }
        }
    }

    /// The plan's writes before the pick passes' indirect reads (and a table's `rows` before
    /// their vertex input, and with `walks` the walked pairs' vertex shaders' reads), joined
    /// to the staging slot's first barrier.
    pub fn first_barrier(&self, slot: usize, rows: Option<vk::Buffer>, walks: bool) -> Option<JoinedBarrier> {
        let (buffer, _) = self.slots.get(slot)?;
        let rows = rows.map(|r| whole(r, vk::AccessFlags::SHADER_WRITE, vk::AccessFlags::VERTEX_ATTRIBUTE_READ));
        let vertex_input = if rows.is_some() { vk::PipelineStageFlags::VERTEX_INPUT } else { vk::PipelineStageFlags::empty() };
        let (walk_stage, walk_read) = walk_reads(walks);
        Some(JoinedBarrier {
            src_stages: vk::PipelineStageFlags::COMPUTE_SHADER,
            dst_stages: vk::PipelineStageFlags::DRAW_INDIRECT | vertex_input | walk_stage,
            buffer: buffer.barrier(vk::AccessFlags::SHADER_WRITE, vk::AccessFlags::INDIRECT_COMMAND_READ | walk_read, 0, vk::WHOLE_SIZE),
            also: rows,
        })
    }

    /// The frame's cull writes and indirect reads before a later frame's cull pass on the same
    /// buffer (a barrier's scopes reach the commands submitted later on the queue) and before
    /// the host reads the totals back, joined to the staging slot's last barrier.
    /// A table's `rows` are read as vertex attributes, and with `walks` the plan buffer by
    /// walked pairs' vertex shaders, before a later frame's cull pass writes them again.
    pub fn last_barrier(&self, slot: usize, rows: Option<vk::Buffer>, walks: bool) -> Option<JoinedBarrier> {
        let (buffer, _) = self.slots.get(slot)?;
        let (read, write) = (vk::AccessFlags::SHADER_READ | vk::AccessFlags::HOST_READ, vk::AccessFlags::SHADER_WRITE);
        let rows = rows.map(|r| whole(r, vk::AccessFlags::empty(), vk::AccessFlags::SHADER_WRITE));
        let vertex_input = if rows.is_some() { vk::PipelineStageFlags::VERTEX_INPUT } else { vk::PipelineStageFlags::empty() };
        Some(JoinedBarrier {
            src_stages: vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::DRAW_INDIRECT | vertex_input | walk_reads(walks).0,
            dst_stages: vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::HOST,
            buffer: buffer.barrier(write, read | write, 0, vk::WHOLE_SIZE),
            also: rows,
        })
    }

    /// `planned` (what slot `slot`'s frame took) with the survivors, commands, compacted
    /// pairs and fallbacks its finishing passes added up.
    ///
    /// # Safety
    /// The slot's frame completed, and nothing is recording into the slot.
    pub unsafe fn read_back(&mut self, slot: usize, mut planned: GpuPlanStats) -> GpuPlanStats {
        let at = self.layout.totals_word() as usize;
        // The totals only: where the plan buffer is device-local, every word the host reads
        // from it is a round trip over the bus.
        if let Some(words) = self.words_mut(slot).and_then(|w| w.get(at..at + TOTAL_WORDS as usize)) {
            let mut totals = [0u32; TOTAL_WORDS as usize];
            totals.copy_from_slice(words);
            planned.survivors = u64::from(totals[total::SURVIVORS as usize]);
            planned.commands = u64::from(totals[total::DRAWN as usize]);
            planned.occluded = u64::from(totals[total::OCCLUDED as usize]);
            planned.compacted = u64::from(totals[total::COMPACTED as usize]);
            planned.fallbacks = u64::from(totals[total::FALLBACKS as usize]);
        }
        planned
    }
}

/// The stage and access of walked pairs' vertex shaders' reads of the plan buffer, where the
/// frame `walks` any.
fn walk_reads(walks: bool) -> (vk::PipelineStageFlags, vk::AccessFlags) {
    match walks {
        true => (vk::PipelineStageFlags::VERTEX_SHADER, vk::AccessFlags::SHADER_READ),
        false => (vk::PipelineStageFlags::empty(), vk::AccessFlags::empty()),
    }
}

/// A barrier over the whole of `buffer`.
fn whole(buffer: vk::Buffer, src: vk::AccessFlags, dst: vk::AccessFlags) -> vk::BufferMemoryBarrier<'static> {
    vk::BufferMemoryBarrier::default()
        .src_access_mask(src)
        .dst_access_mask(dst)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .buffer(buffer)
        .offset(0)
        .size(vk::WHOLE_SIZE)
}
