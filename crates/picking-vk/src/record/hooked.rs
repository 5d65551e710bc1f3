//! Recording hooked draws: their push block ([`HookPush`]: the view-projection and model
//! apart, since the hook works in world space; a deformed draw's words after it), the
//! attribute stream at binding 2, the host's descriptor set at `HOOK_SET`, and a deformed
//! draw's buffers or the instance transforms of one that reads them from storage.

use super::push::storage_words;
use super::{BoundState, PassRecording};
use crate::draw::hooks::{DrawHooks, HOOK_SET};
use crate::draw::PickDraw;
use crate::pass::hook_glsl::HOOKED_STORAGE_SET;
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

    /// Binds the hooks' attribute stream and descriptor set where they differ from what is
    /// bound, then a deformed draw's buffers or a storage instance set (after the hook set,
    /// which disturbs them).
    ///
    /// # Safety
    /// As [`PassRecording::record`]; `layout` is the layout of the bound (hooked) pipeline,
    /// the hooks' buffer and set are live, and a deformed draw's set was prepared.
    pub(super) unsafe fn bind_hooks(&self, draw: &PickDraw, hooks: &DrawHooks, layout: vk::PipelineLayout, bound: &mut BoundState) {
        // SAFETY: the caller's contract.
        unsafe {
            self.bind_hook_inputs(hooks.attribute.map(|a| (a.range.buffer, a.range.offset)), hooks.descriptor_set, layout, bound);
            match draw.deformation {
                Some(_) => self.bind_deformation(draw, layout, bound),
                None => self.bind_storage_set(draw, layout, HOOKED_STORAGE_SET, bound),
            }
        }
    }

    /// Pushes a hooked draw's block (`rect`: as [`PassRecording::hook_push`]), with a deformed
    /// draw's words, or a storage instance draw's, after it.
    ///
    /// # Safety
    /// As [`PassRecording::bind_hooks`], whose layout this is.
    pub(super) unsafe fn push_hooked(&self, draw: &PickDraw, draw_index: u32, rect: [u32; 8], layout: vk::PipelineLayout) {
        let push = self.hook_push(draw, draw_index, rect);
        let stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT;
        // SAFETY: the caller's contract; the block's size is the layout's push range.
        unsafe {
            match &draw.deformation {
                Some(d) => self.device.cmd_push_constants(self.cmd, layout, stages, 0, &push.to_bytes_with_storage(&d.push_words(draw.positions.vertex_count))),
                None if draw.instances_in_storage().is_some() => {
                    self.device.cmd_push_constants(self.cmd, layout, stages, 0, &push.to_bytes_with_storage(&storage_words(draw)))
                }
                None => self.device.cmd_push_constants(self.cmd, layout, stages, 0, &push.to_bytes()),
            }
        }
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
                (bound.set1, bound.set2) = (Some((layout, set)), None);
            }
        }
    }
}
