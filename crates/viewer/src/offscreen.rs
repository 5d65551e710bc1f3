//! A render target without a window: colour + depth images and a readback for screenshots.

use crate::lit_pass::{LitPass, DEPTH_FORMAT};
use ash::vk;
use picking_vk_context::{ContextError, DeviceImage, HostBuffer, VulkanContext};

/// sRGB storage, as a swapchain would use, so screenshots match the window.
pub const COLOR_FORMAT: vk::Format = vk::Format::R8G8B8A8_SRGB;

pub struct Offscreen {
    device: ash::Device,
    pub color: DeviceImage,
    _depth: DeviceImage,
    pub framebuffer: vk::Framebuffer,
    readback: HostBuffer,
    pub extent: vk::Extent2D,
}

impl Offscreen {
    pub fn new(ctx: &VulkanContext, pass: &LitPass, extent: vk::Extent2D) -> Result<Self, ContextError> {
        let color =
            ctx.create_image(COLOR_FORMAT, extent, vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC, vk::ImageAspectFlags::COLOR)?;
        let depth = ctx.create_image(DEPTH_FORMAT, extent, vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT, vk::ImageAspectFlags::DEPTH)?;
        let views = [color.view, depth.view];
        let info = vk::FramebufferCreateInfo::default().render_pass(pass.render_pass).attachments(&views).width(extent.width).height(extent.height).layers(1);
        // SAFETY: views and render pass are live and compatible.
        let framebuffer = unsafe { ctx.device.create_framebuffer(&info, None) }?;
        let readback = ctx.host_buffer(u64::from(extent.width) * u64::from(extent.height) * 4, vk::BufferUsageFlags::TRANSFER_DST)?;
        Ok(Offscreen { device: ctx.device.clone(), color, _depth: depth, framebuffer, readback, extent })
    }

    /// Copies the rendered colour (in TRANSFER_SRC_OPTIMAL after the pass) for [`Offscreen::read`].
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass, after the lit pass rendered this target.
    pub unsafe fn record_copy(&self, cmd: vk::CommandBuffer) {
        let region = vk::BufferImageCopy {
            image_subresource: vk::ImageSubresourceLayers { aspect_mask: vk::ImageAspectFlags::COLOR, mip_level: 0, base_array_layer: 0, layer_count: 1 },
            image_extent: vk::Extent3D { width: self.extent.width, height: self.extent.height, depth: 1 },
            ..Default::default()
        };
        let to_host = vk::BufferMemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(vk::AccessFlags::HOST_READ)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .buffer(self.readback.buffer)
            .size(vk::WHOLE_SIZE);
        // SAFETY: per the contract; the region fits image and buffer.
        unsafe {
            self.device.cmd_copy_image_to_buffer(cmd, self.color.image, vk::ImageLayout::TRANSFER_SRC_OPTIMAL, self.readback.buffer, &[region]);
            self.device.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[],
                &[to_host],
                &[],
            );
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
