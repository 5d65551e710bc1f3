//! The attachments of one hit pass at one extent.

use crate::error::PickError;
use crate::gpu::{GpuImage, Memory};
use crate::pass::render_pass::{PassLayout, DEPTH_FORMAT};
use crate::pass::rendering::{Pass, PassAttachments};
use ash::vk;

/// The attachments (and, for a render pass, framebuffer) of one pass at one extent; freed on drop.
pub(crate) struct PassTargets {
    pub extent: vk::Extent2D,
    /// The attachments' layout after the pass.
    pub after_pass: vk::ImageLayout,
    /// Colour attachments in `PassLayout::color_formats` order, then depth.
    pub attachments: PassAttachments,
}

impl PassTargets {
    pub fn new(memory: &Memory, pass: &Pass, layout: PassLayout, extent: vk::Extent2D) -> Result<Self, PickError> {
        // The GPU results' pass samples every attachment (detail included, when there is one).
        let sampled = if layout.sampled { vk::ImageUsageFlags::SAMPLED } else { vk::ImageUsageFlags::empty() };
        let color_usage = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC | sampled;
        let mut images = vec![];
        for &format in layout.color_formats() {
            images.push(GpuImage::new(memory, "colour attachment", format, extent, color_usage, vk::ImageAspectFlags::COLOR)?);
        }
        let depth_usage = vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC | sampled;
        images.push(GpuImage::new(memory, "depth attachment", DEPTH_FORMAT, extent, depth_usage, vk::ImageAspectFlags::DEPTH)?);
        Ok(PassTargets { extent, after_pass: layout.after_pass(), attachments: pass.attachments(memory, images, extent)? })
    }

    pub fn bytes(&self) -> u64 {
        self.attachments.bytes()
    }

    /// The colour and depth images, in attachment order.
    pub fn images(&self) -> &[GpuImage] {
        &self.attachments.images
    }

    /// The depth attachment (always last).
    pub fn depth_image(&self) -> vk::Image {
        self.images().last().map_or(vk::Image::null(), |i| i.image)
    }
}
