//! What a recording binds: the pass binds only what differs from what is bound (engines
//! often draw many objects from one buffer), and the buffers and sets a draw needs.

use super::PassRecording;
use crate::draw::{Instances, PickDraw, Triangles};
use crate::pass::hook_glsl::HOOKED_STORAGE_SET;
use crate::pass::instance_sets::{InstanceSets, SetBuffers};
use ash::vk;

/// The buffer bound at binding 1 for `draw`'s per-instance attributes: none when its
/// transforms come from a storage buffer.
pub(crate) fn instance_attributes(draw: &PickDraw) -> Option<(vk::Buffer, u64)> {
    draw.instances_in_vertex_buffer().map(|i| (i.range.buffer, i.range.offset))
}

/// The storage buffers `draw`'s set binds at set 1 (each from offset 0: no alignment
/// needed): its instance transforms, or its deformation's buffers.
pub(crate) fn storage_set_buffers(draw: &PickDraw) -> Option<SetBuffers> {
    if let Some(d) = &draw.deformation {
        return Some(d.storage());
    }
    draw.instances_in_storage().map(instance_set)
}

/// The storage buffer the GPU planner's cull pass reads `draw`'s instance transforms from
/// (as [`storage_set_buffers`] for a draw that draws them from storage).
pub(crate) fn cull_set_buffers(draw: &PickDraw) -> Option<SetBuffers> {
    draw.deformation.is_none().then(|| draw.instances_readable_as_storage().map(instance_set)).flatten()
}

fn instance_set(inst: Instances) -> SetBuffers {
    InstanceSets::single(inst.range.buffer, inst.range.offset.saturating_add(inst.range.size))
}

/// What the pass has bound so far: engines often draw many objects from one buffer, so only
/// what changes is bound (across the queries of a set too: their views change, not their
/// bindings).
#[derive(Default)]
pub(crate) struct BoundState {
    pub(super) pipeline: Option<vk::Pipeline>,
    pub(super) positions: Option<(vk::Buffer, u64)>,
    /// Binding 1: instance matrices or batch rows.
    pub(super) per_instance: Option<(vk::Buffer, u64)>,
    pub(super) indices: Option<(vk::Buffer, u64, vk::IndexType)>,
    /// Binding 2: a hook's attribute stream.
    pub(super) attribute: Option<(vk::Buffer, u64)>,
    /// The layout the pass's own set 0 (the rectangle table) was last bound with.
    pub(super) set0_layout: Option<vk::PipelineLayout>,
    /// Set 1, and the layout it was bound with: the host's hook set or the instance storage
    /// set, whichever the last draw that used it needed (one slot: binding either replaces
    /// the other). Binding set 0 with another layout disturbs it: the rectangle pass forgets it then.
    pub(super) set1: Option<(vk::PipelineLayout, vk::DescriptorSet)>,
    /// Set 2: a hooked draw's storage set (its deformation's, or its instance transforms;
    /// binding set 1 disturbs it, so binding set 1 forgets it).
    pub(super) set2: Option<(vk::PipelineLayout, vk::DescriptorSet)>,
    /// Bindings 3..: a deformed draw's skin streams (read as vertex attributes).
    pub(super) skin_streams: Vec<(vk::Buffer, u64)>,
}

impl PassRecording<'_> {
    /// Binds what differs from what is bound.
    ///
    /// # Safety
    /// As [`PassRecording::record`].
    pub(super) unsafe fn bind(&self, b: &Bindings, per_instance: Option<(vk::Buffer, u64)>, bound: &mut BoundState) {
        let (d, cmd) = (self.device, self.cmd);
        // SAFETY: the caller's contract.
        unsafe {
            if bound.pipeline != Some(b.pipeline) {
                d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, b.pipeline);
                bound.pipeline = Some(b.pipeline);
            }
            if bound.positions != Some(b.positions) {
                d.cmd_bind_vertex_buffers(cmd, 0, &[b.positions.0], &[b.positions.1]);
                bound.positions = Some(b.positions);
            }
            if let Some(inst) = per_instance.filter(|i| bound.per_instance != Some(*i)) {
                d.cmd_bind_vertex_buffers(cmd, 1, &[inst.0], &[inst.1]);
                bound.per_instance = Some(inst);
            }
            if let Some(ib) = b.indices.filter(|i| bound.indices != Some(*i)) {
                d.cmd_bind_index_buffer(cmd, ib.0, ib.1, ib.2);
                bound.indices = Some(ib);
            }
        }
    }

    /// Binds a deformed draw's storage set (at set 1, or at `HOOKED_STORAGE_SET` for a hooked
    /// draw's layout) and skin streams (bindings 3..), where not bound.
    ///
    /// # Safety
    /// As [`PassRecording::record`]; the set was prepared for this frame.
    pub(super) unsafe fn bind_deformation(&self, draw: &PickDraw, layout: vk::PipelineLayout, bound: &mut BoundState) {
        let Some(deformation) = &draw.deformation else { return };
        let streams: Vec<(vk::Buffer, u64)> = deformation.vertex_streams().iter().map(|s| (s.range.buffer, s.range.offset)).collect();
        // SAFETY: the caller's contract.
        unsafe {
            self.bind_storage_set(draw, layout, if draw.hooks.is_some() { HOOKED_STORAGE_SET } else { 1 }, bound);
            if !streams.is_empty() && bound.skin_streams != streams {
                let (buffers, offsets): (Vec<vk::Buffer>, Vec<u64>) = streams.iter().copied().unzip();
                self.device.cmd_bind_vertex_buffers(self.cmd, 3, &buffers, &offsets);
                bound.skin_streams = streams;
            }
        }
    }

    /// Binds the set of `draw`'s storage buffers (instance transforms or deformation) at set
    /// `index` of `layout`, if not bound: 1, or `HOOKED_STORAGE_SET` in hooked layouts.
    /// Binding set 1 disturbs set 2, and binding set 2 with another layout disturbs set 1:
    /// the disturbed one is forgotten.
    ///
    /// # Safety
    /// As [`PassRecording::record`]; the set was prepared for this frame.
    pub(super) unsafe fn bind_storage_set(&self, draw: &PickDraw, layout: vk::PipelineLayout, index: u32, bound: &mut BoundState) {
        let Some(buffers) = storage_set_buffers(draw) else { return };
        let Some(set) = self.instance_sets.get(&buffers) else {
            log::error!("picking-vk: no set for a draw's storage buffers; was prepare() skipped?");
            return;
        };
        let slot = if index == HOOKED_STORAGE_SET { &mut bound.set2 } else { &mut bound.set1 };
        if *slot == Some((layout, set)) {
            return;
        }
        // SAFETY: the caller's contract.
        unsafe { self.device.cmd_bind_descriptor_sets(self.cmd, vk::PipelineBindPoint::GRAPHICS, layout, index, &[set], &[]) };
        *slot = Some((layout, set));
        if index == HOOKED_STORAGE_SET {
            bound.set1 = bound.set1.filter(|(l, _)| *l == layout);
        } else {
            bound.set2 = None;
        }
    }
}

/// What a draw binds: draws with equal bindings can share one indirect draw.
#[derive(Clone, Copy, PartialEq)]
pub(super) struct Bindings {
    pub(super) pipeline: vk::Pipeline,
    pub(super) positions: (vk::Buffer, u64),
    pub(super) indices: Option<(vk::Buffer, u64, vk::IndexType)>,
}

impl Bindings {
    pub(super) fn of(draw: &PickDraw, pipeline: vk::Pipeline) -> Self {
        let indices = match draw.triangles {
            Triangles::Indexed { range, width, .. } => Some((range.buffer, range.offset, width.vk())),
            Triangles::NonIndexed { .. } => None,
        };
        Bindings { pipeline, positions: (draw.positions.range.buffer, draw.positions.range.offset), indices }
    }
}
