//! Recording the cull pass (the culling dispatches, a barrier, the finishing dispatch), and the
//! barriers it joins: its writes reach the pick passes' indirect reads through the staging
//! slot's first barrier, and the slot's last barrier orders the frame's uses of the plan
//! buffer before the next frame's cull pass and the host's read of its counters.

use super::layout::counter;
use super::{CullDispatch, GpuPlanKit};
use crate::readback::JoinedBarrier;
use crate::resolve::result::GpuPlanStats;
use ash::vk;

/// One dispatch as recorded: its pairs, the instance storage set of its draw and the draw's
/// storage words (`record::push::storage_words`).
#[derive(Clone, Copy)]
pub(crate) struct CullInput {
    pub dispatch: CullDispatch,
    pub set: vk::DescriptorSet,
    pub storage: [u32; 4],
    /// The draw's first instance.
    pub first_instance: u32,
}

impl GpuPlanKit {
    /// Records the cull dispatches of slot `slot`'s frame (whose jobs are written), a barrier,
    /// and the dispatch that finishes its `pairs` pairs.
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass, before the staging slot's first barrier
    /// joined with [`GpuPlanKit::first_barrier`]; each set binds its draw's live instance
    /// buffer and stays valid until the command buffer completes.
    pub unsafe fn record_cull(&self, device: &ash::Device, cmd: vk::CommandBuffer, slot: usize, pairs: u32, inputs: impl IntoIterator<Item = CullInput>) {
        let Some((buffer, plan_set)) = self.slots.get(slot) else { return };
        let (cull, finish) = (self.cull.1.handle, self.finish.1.handle);
        let bind = vk::PipelineBindPoint::COMPUTE;
        // The survivor bits before the finishing pass reads them.
        let written = buffer.barrier(vk::AccessFlags::SHADER_WRITE, vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE, 0, vk::WHOLE_SIZE);
        let compute = vk::PipelineStageFlags::COMPUTE_SHADER;
        // SAFETY: (whole block) the caller's contract; pipelines, layouts and sets are this
        // device's and outlive the command buffer.
        unsafe {
            device.cmd_bind_pipeline(cmd, bind, self.cull.0.handle);
            device.cmd_bind_descriptor_sets(cmd, bind, cull, 0, &[*plan_set], &[]);
            for input in inputs {
                let d = input.dispatch;
                device.cmd_bind_descriptor_sets(cmd, bind, cull, 1, &[input.set], &[]);
                let words = [input.storage, [d.first_pair, d.pairs, d.first_group, input.first_instance]];
                device.cmd_push_constants(cmd, cull, vk::ShaderStageFlags::COMPUTE, 0, bytemuck::cast_slice(&words));
                device.cmd_dispatch(cmd, d.groups, 1, 1);
            }
            device.cmd_pipeline_barrier(cmd, compute, compute, vk::DependencyFlags::empty(), &[], &[written], &[]);
            device.cmd_bind_pipeline(cmd, bind, self.finish.0.handle);
            device.cmd_bind_descriptor_sets(cmd, bind, finish, 0, &[*plan_set], &[]);
            device.cmd_push_constants(cmd, finish, vk::ShaderStageFlags::COMPUTE, 0, bytemuck::cast_slice(&[pairs, 0, 0, 0]));
            device.cmd_dispatch(cmd, pairs, 1, 1);
        }
    }

    /// The plan's writes before the pick passes' indirect reads, joined to the staging
    /// slot's first barrier.
    pub fn first_barrier(&self, slot: usize) -> Option<JoinedBarrier> {
        let (buffer, _) = self.slots.get(slot)?;
        Some(JoinedBarrier {
            src_stages: vk::PipelineStageFlags::COMPUTE_SHADER,
            dst_stages: vk::PipelineStageFlags::DRAW_INDIRECT,
            buffer: buffer.barrier(vk::AccessFlags::SHADER_WRITE, vk::AccessFlags::INDIRECT_COMMAND_READ, 0, vk::WHOLE_SIZE),
        })
    }

    /// The frame's cull writes and indirect reads before a later frame's cull pass on the same
    /// buffer (a barrier's scopes reach the commands submitted later on the queue) and before
    /// the host reads the counts back, joined to the staging slot's last barrier.
    pub fn last_barrier(&self, slot: usize) -> Option<JoinedBarrier> {
        let (buffer, _) = self.slots.get(slot)?;
        let (read, write) = (vk::AccessFlags::SHADER_READ | vk::AccessFlags::HOST_READ, vk::AccessFlags::SHADER_WRITE);
        Some(JoinedBarrier {
            src_stages: vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::DRAW_INDIRECT,
            dst_stages: vk::PipelineStageFlags::COMPUTE_SHADER | vk::PipelineStageFlags::HOST,
            buffer: buffer.barrier(write, read | write, 0, vk::WHOLE_SIZE),
        })
    }

    /// `planned` (what slot `slot`'s frame took) with the survivors, commands and fallbacks
    /// its cull pass counted.
    ///
    /// # Safety
    /// The slot's frame completed, and nothing is recording into the slot.
    pub unsafe fn read_back(&mut self, slot: usize, mut planned: GpuPlanStats) -> GpuPlanStats {
        let layout = self.layout;
        let pairs = planned.ranges.min(u64::from(layout.pairs)) as u32;
        if let Some(words) = self.words_mut(slot) {
            for p in 0..pairs {
                let counters = layout.counters_word(p);
                planned.survivors += u64::from(words[(counters + counter::SURVIVORS) as usize]);
                planned.commands += u64::from(words[(counters + counter::DRAWN) as usize]);
                planned.fallbacks += u64::from(words[layout.fallback_word(p) as usize + 1] != 0);
            }
        }
        planned
    }
}
