//! Recording hooked draws: their push block ([`HookPush`]: the view-projection and model
//! apart, since the hook works in world space), the attribute stream at binding 2 and the
//! host's descriptor set at `HOOK_SET`.

use super::{BoundState, PassRecording};
use crate::draw::hooks::{DrawHooks, HOOK_SET};
use crate::draw::PickDraw;
use crate::pass::hooked::HookPush;
use ash::vk;

impl PassRecording<'_> {
    /// The push block of a hooked draw; `rect`: the rectangle pass's tile words (zero in the
    /// hit pass).
    pub(super) fn hook_push(&self, draw: &PickDraw, draw_index: u32, rect: [u32; 8]) -> HookPush {
        HookPush {
            view_projection: self.camera.view_projection.as_mat4(),
            object_id: draw.id.to_words(),
            draw_index,
            first_instance: draw.instances.map_or(0, |i| i.first),
            rect,
            model: draw.model,
            pixel_shift: self.pixel_shift.get(),
        }
    }

    /// Binds the hooks' attribute stream and descriptor set where they differ from what is bound.
    ///
    /// # Safety
    /// As [`PassRecording::record`]; `layout` is the layout of the bound (hooked) pipeline,
    /// and the hooks' buffer and set are live.
    pub(super) unsafe fn bind_hooks(&self, hooks: &DrawHooks, layout: vk::PipelineLayout, bound: &mut BoundState) {
        // SAFETY: the caller's contract.
        unsafe { self.bind_hook_inputs(hooks.attribute.map(|a| (a.range.buffer, a.range.offset)), hooks.descriptor_set, layout, bound) }
    }

    /// As [`PassRecording::bind_hooks`], from the parts: the attribute stream's buffer and
    /// offset, and the set (null: none).
    ///
    /// # Safety
    /// As [`PassRecording::bind_hooks`].
    pub(super) unsafe fn bind_hook_inputs(
        &self,
        attribute: Option<(vk::Buffer, u64)>,
        set: vk::DescriptorSet,
        layout: vk::PipelineLayout,
        bound: &mut BoundState,
    ) {
        let (d, cmd) = (self.device, self.cmd);
        // SAFETY: the caller's contract.
        unsafe {
            if let Some(a) = attribute.filter(|a| bound.attribute != Some(*a)) {
                d.cmd_bind_vertex_buffers(cmd, 2, &[a.0], &[a.1]);
                bound.attribute = Some(a);
            }
            if set != vk::DescriptorSet::null() && bound.set1 != Some((layout, set)) {
                d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::GRAPHICS, layout, HOOK_SET, &[set], &[]);
                bound.set1 = Some((layout, set));
            }
        }
    }
}
