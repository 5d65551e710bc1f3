//! The dedicated pick render pass and its attachments: R32G32_UINT object ID, R32G32_UINT
//! (draw, instance), optionally R32G32B32A32_UINT detail, and D32_SFLOAT depth. One sample.

use crate::error::PickError;
use crate::memory::{GpuImage, Memory};
use crate::request::DepthConvention;
use ash::vk;

pub(crate) const ID_FORMAT: vk::Format = vk::Format::R32G32_UINT;
pub(crate) const DRAW_INSTANCE_FORMAT: vk::Format = vk::Format::R32G32_UINT;
pub(crate) const DETAIL_FORMAT: vk::Format = vk::Format::R32G32B32A32_UINT;
pub(crate) const DEPTH_FORMAT: vk::Format = vk::Format::D32_SFLOAT;

/// Which attachments a pass has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PassLayout {
    pub detail: bool,
    pub depth: DepthConvention,
}

impl PassLayout {
    pub fn color_formats(&self) -> &'static [vk::Format] {
        if self.detail {
            &[ID_FORMAT, DRAW_INSTANCE_FORMAT, DETAIL_FORMAT]
        } else {
            &[ID_FORMAT, DRAW_INSTANCE_FORMAT]
        }
    }

    pub fn clear_values(&self) -> [vk::ClearValue; 4] {
        let zero = vk::ClearValue { color: vk::ClearColorValue { uint32: [0; 4] } };
        let depth = match self.depth {
            DepthConvention::Standard => 1.0,
            DepthConvention::Reverse => 0.0,
        };
        let depth = vk::ClearValue { depth_stencil: vk::ClearDepthStencilValue { depth, stencil: 0 } };
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

/// Reports formats the device cannot use as the pass needs them.
pub(crate) fn check_formats(instance: &ash::Instance, physical_device: vk::PhysicalDevice, layout: PassLayout) -> Vec<String> {
    let mut missing = vec![];
    let color = vk::FormatFeatureFlags::COLOR_ATTACHMENT | vk::FormatFeatureFlags::TRANSFER_SRC;
    let depth = vk::FormatFeatureFlags::DEPTH_STENCIL_ATTACHMENT | vk::FormatFeatureFlags::TRANSFER_SRC;
    let wanted = layout.color_formats().iter().map(|&f| (f, color)).chain([(DEPTH_FORMAT, depth)]);
    for (format, features) in wanted {
        // SAFETY: the host guarantees `physical_device` belongs to `instance`.
        let props = unsafe { instance.get_physical_device_format_properties(physical_device, format) };
        if !props.optimal_tiling_features.contains(features) {
            missing.push(format!("{format:?} with optimal tiling features {features:?}"));
        }
    }
    missing
}

/// Creates the render pass. Attachments end in TRANSFER_SRC_OPTIMAL, ready for the readback copy.
pub(crate) fn create_render_pass(device: &ash::Device, layout: PassLayout) -> Result<vk::RenderPass, PickError> {
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
    Ok(unsafe { device.create_render_pass(&info, None) }?)
}

/// The attachments and framebuffer of one pass at one extent.
pub(crate) struct PassTargets {
    pub extent: vk::Extent2D,
    /// Colour attachments in `PassLayout::color_formats` order, then depth.
    pub images: Vec<GpuImage>,
    pub framebuffer: vk::Framebuffer,
}

impl PassTargets {
    pub fn new(memory: &Memory, render_pass: vk::RenderPass, layout: PassLayout, extent: vk::Extent2D) -> Result<Self, PickError> {
        let mut targets = PassTargets { extent, images: vec![], framebuffer: vk::Framebuffer::null() };
        if let Err(e) = targets.create(memory, render_pass, layout) {
            targets.destroy(memory);
            return Err(e);
        }
        Ok(targets)
    }

    fn create(&mut self, memory: &Memory, render_pass: vk::RenderPass, layout: PassLayout) -> Result<(), PickError> {
        let color_usage = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC;
        for &format in layout.color_formats() {
            self.images.push(memory.create_image("picking-vk colour attachment", format, self.extent, color_usage, vk::ImageAspectFlags::COLOR)?);
        }
        let depth_usage = vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC;
        self.images.push(memory.create_image("picking-vk depth", DEPTH_FORMAT, self.extent, depth_usage, vk::ImageAspectFlags::DEPTH)?);
        let views: Vec<vk::ImageView> = self.images.iter().map(|i| i.view).collect();
        let info =
            vk::FramebufferCreateInfo::default().render_pass(render_pass).attachments(&views).width(self.extent.width).height(self.extent.height).layers(1);
        // SAFETY: views and render pass are live and compatible.
        self.framebuffer = unsafe { memory.device.create_framebuffer(&info, None) }?;
        Ok(())
    }

    pub fn bytes(&self) -> u64 {
        self.images.iter().map(GpuImage::bytes).sum()
    }

    /// Releases everything. The GPU must be done with the targets.
    pub fn destroy(&mut self, memory: &Memory) {
        // SAFETY: the caller guarantees the GPU no longer uses the framebuffer; null is ignored.
        unsafe { memory.device.destroy_framebuffer(self.framebuffer, None) };
        self.framebuffer = vk::Framebuffer::null();
        for image in &mut self.images {
            memory.destroy_image(image);
        }
        self.images.clear();
    }
}
