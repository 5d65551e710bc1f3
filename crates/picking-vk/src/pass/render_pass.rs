//! The dedicated pick render pass: R32G32_UINT object ID, R32G32_UINT (draw, instance),
//! optionally R32G32B32A32_UINT detail, and D32_SFLOAT depth. One sample.

use crate::error::{PickError, Requirement};
use crate::gpu::{Memory, Owned};
use ash::vk;

pub(crate) const ID_FORMAT: vk::Format = vk::Format::R32G32_UINT;
pub(crate) const DRAW_INSTANCE_FORMAT: vk::Format = vk::Format::R32G32_UINT;
pub(crate) const DETAIL_FORMAT: vk::Format = vk::Format::R32G32B32A32_UINT;
pub(crate) const DEPTH_FORMAT: vk::Format = vk::Format::D32_SFLOAT;

/// Which attachments a pass has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PassLayout {
    pub detail: bool,
}

impl PassLayout {
    pub fn color_formats(&self) -> &'static [vk::Format] {
        if self.detail {
            &[ID_FORMAT, DRAW_INSTANCE_FORMAT, DETAIL_FORMAT]
        } else {
            &[ID_FORMAT, DRAW_INSTANCE_FORMAT]
        }
    }

    /// Clear values: colours to 0 (nothing), depth to `clear_depth` (the far end).
    pub fn clear_values(&self, clear_depth: f32) -> [vk::ClearValue; 4] {
        let zero = vk::ClearValue { color: vk::ClearColorValue { uint32: [0; 4] } };
        let depth = vk::ClearValue { depth_stencil: vk::ClearDepthStencilValue { depth: clear_depth, stencil: 0 } };
        if self.detail {
            [zero, zero, zero, depth]
        } else {
            [zero, zero, depth, zero]
        }
    }

    pub fn attachment_count(&self) -> usize {
        self.color_formats().len() + 1
    }
}

/// Formats the device cannot use as the pass needs them, for a pass with or without detail.
///
/// # Safety
/// `physical_device` was enumerated from `instance`, which is live.
pub(crate) unsafe fn formats_missing(instance: &ash::Instance, physical_device: vk::PhysicalDevice, detail: bool) -> Vec<Requirement> {
    let color = vk::FormatFeatureFlags::COLOR_ATTACHMENT | vk::FormatFeatureFlags::TRANSFER_SRC;
    let depth = vk::FormatFeatureFlags::DEPTH_STENCIL_ATTACHMENT | vk::FormatFeatureFlags::TRANSFER_SRC;
    let wanted = PassLayout { detail }.color_formats().iter().map(|&f| (f, color)).chain([(DEPTH_FORMAT, depth)]);
    let mut missing: Vec<Requirement> = vec![];
    for (format, features) in wanted {
        // SAFETY: the caller guarantees `physical_device` belongs to `instance`.
        let props = unsafe { instance.get_physical_device_format_properties(physical_device, format) };
        let requirement = Requirement::Format { format, features };
        if !props.optimal_tiling_features.contains(features) && !missing.contains(&requirement) {
            missing.push(requirement);
        }
    }
    missing
}

/// # Safety
/// `pass` is a render pass of `device` that the GPU no longer uses.
unsafe fn destroy_render_pass(device: &ash::Device, pass: vk::RenderPass) {
    // SAFETY: the caller's contract.
    unsafe { device.destroy_render_pass(pass, None) };
}

/// Creates the render pass. Attachments end in TRANSFER_SRC_OPTIMAL, ready for the readback copy.
pub(crate) fn create_render_pass(memory: &Memory, layout: PassLayout) -> Result<Owned<vk::RenderPass>, PickError> {
    let mut attachments: Vec<vk::AttachmentDescription> = layout
        .color_formats()
        .iter()
        .map(|&format| {
            vk::AttachmentDescription::default()
                .format(format)
                .samples(vk::SampleCountFlags::TYPE_1)
                .load_op(vk::AttachmentLoadOp::CLEAR)
                .store_op(vk::AttachmentStoreOp::STORE)
                .initial_layout(vk::ImageLayout::UNDEFINED)
                .final_layout(vk::ImageLayout::TRANSFER_SRC_OPTIMAL)
        })
        .collect();
    attachments.push(
        vk::AttachmentDescription::default()
            .format(DEPTH_FORMAT)
            .samples(vk::SampleCountFlags::TYPE_1)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::STORE)
            .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
            .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
            .initial_layout(vk::ImageLayout::UNDEFINED)
            .final_layout(vk::ImageLayout::TRANSFER_SRC_OPTIMAL),
    );
    let color_refs: Vec<vk::AttachmentReference> = (0..layout.color_formats().len() as u32)
        .map(|attachment| vk::AttachmentReference { attachment, layout: vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL })
        .collect();
    let depth_ref = vk::AttachmentReference { attachment: layout.color_formats().len() as u32, layout: vk::ImageLayout::DEPTH_STENCIL_ATTACHMENT_OPTIMAL };
    let subpass = vk::SubpassDescription::default()
        .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
        .color_attachments(&color_refs)
        .depth_stencil_attachment(&depth_ref);
    let attachment_stages =
        vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT | vk::PipelineStageFlags::EARLY_FRAGMENT_TESTS | vk::PipelineStageFlags::LATE_FRAGMENT_TESTS;
    let attachment_writes = vk::AccessFlags::COLOR_ATTACHMENT_WRITE | vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_WRITE;
    let dependencies = [
        // The previous frame's readback copy must finish reading before this pass clears the
        // same attachments (write-after-read: an execution dependency suffices).
        vk::SubpassDependency::default()
            .src_subpass(vk::SUBPASS_EXTERNAL)
            .dst_subpass(0)
            .src_stage_mask(vk::PipelineStageFlags::TRANSFER)
            .dst_stage_mask(attachment_stages)
            .dst_access_mask(attachment_writes | vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_READ),
        // This pass's writes must land before the readback copy reads them.
        vk::SubpassDependency::default()
            .src_subpass(0)
            .dst_subpass(vk::SUBPASS_EXTERNAL)
            .src_stage_mask(attachment_stages)
            .src_access_mask(attachment_writes)
            .dst_stage_mask(vk::PipelineStageFlags::TRANSFER)
            .dst_access_mask(vk::AccessFlags::TRANSFER_READ),
    ];
    let info = vk::RenderPassCreateInfo::default().attachments(&attachments).subpasses(std::slice::from_ref(&subpass)).dependencies(&dependencies);
    // SAFETY: all pointers in `info` refer to locals alive for the call.
    let pass = unsafe { memory.device.create_render_pass(&info, None) }?;
    memory.name(pass, "render pass");
    // SAFETY: the pass was just created on this device and is owned by nothing else.
    Ok(unsafe { Owned::new(&memory.device, pass, destroy_render_pass) })
}
