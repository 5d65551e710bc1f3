//! The attachments and framebuffer of one pass at one extent.

use crate::error::PickError;
use crate::gpu::{GpuImage, Memory, Owned};
use crate::pass::render_pass::{PassLayout, DEPTH_FORMAT};
use ash::vk;

/// # Safety
/// `framebuffer` is a framebuffer of `device` that the GPU no longer uses.
unsafe fn destroy_framebuffer(device: &ash::Device, framebuffer: vk::Framebuffer) {
    // SAFETY: the caller's contract.
    unsafe { device.destroy_framebuffer(framebuffer, None) };
}

/// The attachments and framebuffer of one pass at one extent; freed on drop.
pub(crate) struct PassTargets {
    pub extent: vk::Extent2D,
    /// Dropped before the images it views.
    pub framebuffer: Owned<vk::Framebuffer>,
    /// Colour attachments in `PassLayout::color_formats` order, then depth.
    pub images: Vec<GpuImage>,
}

impl PassTargets {
    pub fn new(memory: &Memory, render_pass: vk::RenderPass, layout: PassLayout, extent: vk::Extent2D) -> Result<Self, PickError> {
        let color_usage = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC;
        let mut images = vec![];
        for &format in layout.color_formats() {
            images.push(GpuImage::new(memory, "colour attachment", format, extent, color_usage, vk::ImageAspectFlags::COLOR)?);
        }
        let depth_usage = vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC;
        images.push(GpuImage::new(memory, "depth attachment", DEPTH_FORMAT, extent, depth_usage, vk::ImageAspectFlags::DEPTH)?);
        let views: Vec<vk::ImageView> = images.iter().map(|i| i.view).collect();
        let info = vk::FramebufferCreateInfo::default().render_pass(render_pass).attachments(&views).width(extent.width).height(extent.height).layers(1);
        // SAFETY: views and render pass are live and compatible.
        let framebuffer = unsafe { memory.device.create_framebuffer(&info, None) }?;
        memory.name(framebuffer, "framebuffer");
        // SAFETY: just created on this device, owned by nothing else.
        let framebuffer = unsafe { Owned::new(&memory.device, framebuffer, destroy_framebuffer) };
        Ok(PassTargets { extent, framebuffer, images })
    }

    pub fn bytes(&self) -> u64 {
        self.images.iter().map(GpuImage::bytes).sum()
    }

    /// The depth attachment (always last).
    pub fn depth_image(&self) -> vk::Image {
        self.images.last().map_or(vk::Image::null(), |i| i.image)
    }
}
