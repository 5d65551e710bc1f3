//! Batch runs: consecutive batched draws that share their bindings, recorded as one indirect
//! draw over their rows.

use super::batch::{DrawBatchBuffer, DrawCommand, DrawRow, COMMAND_BYTES};
use super::bind::{Bindings, BoundState};
use super::PassRecording;
use crate::draw::{PickDraw, Triangles};
use crate::pass::hooked::HookPush;
use ash::vk;

impl PassRecording<'_> {
    /// Records `run` (if any) as one indirect draw over its rows.
    ///
    /// # Safety
    /// As [`PassRecording::record`]; the run's rows and commands are written.
    pub(super) unsafe fn record_run(&self, run: Option<Run>, batch: &DrawBatchBuffer, bound: &mut BoundState) {
        let Some(run) = run else { return };
        let offset = batch.commands_offset() + u64::from(run.first) * u64::from(COMMAND_BYTES);
        // SAFETY: the caller's contract; the run's rows and commands lie within the batch buffer.
        unsafe {
            self.bind(&run.bindings, Some((batch.buffer(), 0)), bound);
            if let Some(h) = run.hook {
                self.begin_hooked_rows(h.attribute, h.set, h.layout, bound);
            }
            match run.bindings.indices {
                Some(_) => self.device.cmd_draw_indexed_indirect(self.cmd, batch.buffer(), offset, run.count, COMMAND_BYTES),
                None => self.device.cmd_draw_indirect(self.cmd, batch.buffer(), offset, run.count, COMMAND_BYTES),
            }
        }
    }

    /// Binds a hooked batched draw's attribute stream and set, and pushes its block: the rows
    /// carry each draw's model, ID and index; the block the view-projection.
    ///
    /// # Safety
    /// As [`PassRecording::bind_hook_inputs`], with the hooked batched pipeline of `layout`
    /// bound.
    pub(super) unsafe fn begin_hooked_rows(
        &self,
        attribute: Option<(vk::Buffer, u64)>,
        set: vk::DescriptorSet,
        layout: vk::PipelineLayout,
        bound: &mut BoundState,
    ) {
        let push = HookPush {
            view_projection: self.camera.view_projection.as_mat4(),
            object_id: [0; 2],
            draw_index: 0,
            first_instance: 0,
            rect: [0; 8],
            model: glam::Mat4::IDENTITY,
            pixel_shift: self.pixel_shift.get(),
        };
        // SAFETY: the caller's contract; the block is the layout's push range.
        unsafe {
            self.bind_hook_inputs(attribute, set, layout, bound);
            self.device.cmd_push_constants(self.cmd, layout, vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT, 0, &push.to_bytes());
        }
    }
}

/// What a hooked run binds beyond [`Bindings`]: the hooks' attribute stream and set, and
/// the program's layout.
#[derive(Clone, Copy, PartialEq)]
pub(super) struct RunHook {
    attribute: Option<(vk::Buffer, u64)>,
    set: vk::DescriptorSet,
    layout: vk::PipelineLayout,
}

impl RunHook {
    /// What a hooked draw binds beyond its batch run's vertex buffers; `None` for a plain draw.
    pub(super) fn of(draw: &PickDraw, layout: vk::PipelineLayout) -> Option<Self> {
        draw.hooks.as_ref().map(|h| RunHook { attribute: h.attribute.map(|a| (a.range.buffer, a.range.offset)), set: h.descriptor_set, layout })
    }
}

/// Writes a batched draw's row and indirect command (`triangles`: this run's, or the draw's).
pub(super) fn write_row(batch: &mut DrawBatchBuffer, row: u32, triangles: Triangles, values: &DrawRow) {
    let (count, first, vertex_offset) = match triangles {
        Triangles::NonIndexed { first_vertex, vertex_count } => (vertex_count, first_vertex, None),
        Triangles::Indexed { first_index, index_count, vertex_offset, .. } => (index_count, first_index, Some(vertex_offset)),
    };
    batch.write(row, values, &DrawCommand { count, first, vertex_offset, row });
}

/// Consecutive batched draws with the same bindings: rows `first..first + count`.
pub(super) struct Run {
    pub bindings: Bindings,
    pub hook: Option<RunHook>,
    pub first: u32,
    pub count: u32,
}
