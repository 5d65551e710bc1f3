//! A render target without a window: colour + depth images for the lit pass and a readback
//! buffer for screenshots.

use crate::lit_pass::{LitPass, DEPTH_FORMAT};
use crate::vk_util;
use ash::vk;
use picking_vk_context::{ContextError, DeviceImage, HostBuffer, VulkanContext};

/// sRGB storage, as a swapchain would use, so screenshots match the window.
pub const COLOR_FORMAT: vk::Format = vk::Format::R8G8B8A8_SRGB;

pub struct Offscreen {
    device: ash::Device,
    pub color: DeviceImage,
    _depth: DeviceImage,
    framebuffer: vk::Framebuffer,
    readback: HostBuffer,
    /// The size the images and the readback were made for (`record_copy` copies this much).
    extent: vk::Extent2D,
}

impl Offscreen {
    /// The target's size.
    pub fn extent(&self) -> vk::Extent2D {
        self.extent
    }

    /// The framebuffer (this target's: destroyed when it drops).
    pub fn framebuffer(&self) -> vk::Framebuffer {
        self.framebuffer
    }

    /// A target for `pass` (made with [`COLOR_FORMAT`] and a TRANSFER_SRC_OPTIMAL final layout).
    pub fn new(ctx: &VulkanContext, pass: &LitPass, extent: vk::Extent2D) -> Result<Self, ContextError> {
        let color =
            ctx.create_image(COLOR_FORMAT, extent, vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC, vk::ImageAspectFlags::COLOR)?;
        let depth = ctx.create_image(DEPTH_FORMAT, extent, vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT, vk::ImageAspectFlags::DEPTH)?;
        // SAFETY: the views were just made on the context's device, `extent` large, in the
        // formats `pass` was made for (COLOR_FORMAT, the depth format), and the pass is live.
        let framebuffer = unsafe { vk_util::framebuffer(&ctx.device, pass.render_pass(), &[color.view, depth.view], extent) }?;
        let readback = ctx.host_buffer(u64::from(extent.width) * u64::from(extent.height) * 4, vk::BufferUsageFlags::TRANSFER_DST)?;
        Ok(Offscreen { device: ctx.device.clone(), color, _depth: depth, framebuffer, readback, extent })
    }

    /// Copies the rendered colour (in TRANSFER_SRC_OPTIMAL after the pass) for [`Offscreen::read`].
    ///
    /// # Safety
    /// `cmd` is a command buffer of this target's device, recording outside a render pass,
    /// after the lit pass rendered this target; the target is not dropped until `cmd`
    /// completes.
    pub unsafe fn record_copy(&self, cmd: vk::CommandBuffer) {
        let region = vk::BufferImageCopy {
            image_subresource: vk::ImageSubresourceLayers { aspect_mask: vk::ImageAspectFlags::COLOR, mip_level: 0, base_array_layer: 0, layer_count: 1 },
            image_extent: vk::Extent3D { width: self.extent.width, height: self.extent.height, depth: 1 },
            ..Default::default()
        };
        // SAFETY: per the contract; the region fits image and buffer.
        unsafe {
            self.device.cmd_copy_image_to_buffer(cmd, self.color.image, vk::ImageLayout::TRANSFER_SRC_OPTIMAL, self.readback.buffer, &[region]);
            vk_util::host_read_barrier(&self.device, cmd, self.readback.buffer);
        }
    }

    /// The last copied image.
    ///
    /// # Safety
    /// The work that recorded [`Offscreen::record_copy`] has completed (its fence signalled or
    /// its queue idled), and no later copy into this target is running.
    pub unsafe fn read(&self) -> Result<image::RgbaImage, ContextError> {
        // SAFETY: per the contract, the copy and its host-read barrier completed.
        let bytes = unsafe { self.readback.read_bytes() }?;
        image::RgbaImage::from_raw(self.extent.width, self.extent.height, bytes).ok_or(ContextError::Vulkan(vk::Result::ERROR_FORMAT_NOT_SUPPORTED))
    }
}

impl Drop for Offscreen {
    fn drop(&mut self) {
        // SAFETY: owners drop the target after the GPU is done with it.
        unsafe { self.device.destroy_framebuffer(self.framebuffer, None) };
    }
}
