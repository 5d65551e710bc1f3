//! The window's swapchain with its depth buffer and framebuffers; rebuilt on resize,
//! out-of-date or suboptimal presentation, and absent while the window has zero size.

use ash::vk;
use picking_vk_context::{ContextError, DeviceImage, VulkanContext};
use picking_vk_host::{vk_util, LitPass, DEPTH_FORMAT};

pub struct Swapchain {
    device: ash::Device,
    pub loader: ash::khr::swapchain::Device,
    pub handle: vk::SwapchainKHR,
    pub extent: vk::Extent2D,
    pub views: Vec<vk::ImageView>,
    pub framebuffers: Vec<vk::Framebuffer>,
    /// Signalled when rendering into image `i` is done; one per image so none is reused early.
    pub render_finished: Vec<vk::Semaphore>,
    _depth: DeviceImage,
}

/// Picks an sRGB BGRA/RGBA format when offered.
pub fn choose_format(formats: &[vk::SurfaceFormatKHR]) -> vk::SurfaceFormatKHR {
    formats
        .iter()
        .copied()
        .find(|f| matches!(f.format, vk::Format::B8G8R8A8_SRGB | vk::Format::R8G8B8A8_SRGB) && f.color_space == vk::ColorSpaceKHR::SRGB_NONLINEAR)
        .or_else(|| formats.first().copied())
        .unwrap_or(vk::SurfaceFormatKHR { format: vk::Format::B8G8R8A8_SRGB, color_space: vk::ColorSpaceKHR::SRGB_NONLINEAR })
}

impl Swapchain {
    /// Creates a swapchain of `wanted` size (clamped to what the surface allows); `None` when
    /// the surface currently has zero size (minimized).
    pub fn new(
        ctx: &VulkanContext,
        surface_loader: &ash::khr::surface::Instance,
        surface: vk::SurfaceKHR,
        format: vk::SurfaceFormatKHR,
        pass: &LitPass,
        wanted: vk::Extent2D,
        old: vk::SwapchainKHR,
    ) -> Result<Option<Self>, ContextError> {
        // SAFETY: surface and physical device belong to this instance.
        let caps = unsafe { surface_loader.get_physical_device_surface_capabilities(ctx.physical_device, surface) }?;
        let extent = if caps.current_extent.width != u32::MAX {
            caps.current_extent
        } else {
            vk::Extent2D {
                width: wanted.width.clamp(caps.min_image_extent.width, caps.max_image_extent.width),
                height: wanted.height.clamp(caps.min_image_extent.height, caps.max_image_extent.height),
            }
        };
        if extent.width == 0 || extent.height == 0 {
            return Ok(None);
        }
        let mut count = caps.min_image_count + 1;
        if caps.max_image_count > 0 {
            count = count.min(caps.max_image_count);
        }
        let loader = ash::khr::swapchain::Device::new(&ctx.instance, &ctx.device);
        let info = vk::SwapchainCreateInfoKHR::default()
            .surface(surface)
            .min_image_count(count)
            .image_format(format.format)
            .image_color_space(format.color_space)
            .image_extent(extent)
            .image_array_layers(1)
            .image_usage(vk::ImageUsageFlags::COLOR_ATTACHMENT)
            .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
            .pre_transform(caps.current_transform)
            .composite_alpha(vk::CompositeAlphaFlagsKHR::OPAQUE)
            .present_mode(vk::PresentModeKHR::FIFO)
            .clipped(true)
            .old_swapchain(old);
        // The depth image first: if it fails, no swapchain is left behind (it frees itself).
        let depth = ctx.create_image(DEPTH_FORMAT, extent, vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT, vk::ImageAspectFlags::DEPTH)?;
        // SAFETY: valid create info; `old` (if any) is retired by this call.
        let handle = unsafe { loader.create_swapchain(&info, None) }?;
        let mut sc =
            Swapchain { device: ctx.device.clone(), loader, handle, extent, views: vec![], framebuffers: vec![], render_finished: vec![], _depth: depth };
        // SAFETY: the swapchain is live.
        let images = unsafe { sc.loader.get_swapchain_images(handle) }?;
        for image in images {
            // SAFETY: the swapchain's live 2D image, of the format it was made with.
            let view = unsafe { vk_util::image_view_2d(&ctx.device, image, format.format, vk::ImageAspectFlags::COLOR) }?;
            sc.views.push(view);
            // SAFETY: the views are this device's, `extent` large, in the formats `pass` was
            // made for (the swapchain's, the depth format); the pass is live.
            sc.framebuffers.push(unsafe { vk_util::framebuffer(&ctx.device, pass.render_pass(), &[view, sc._depth.view], extent) }?);
            sc.render_finished.push(vk_util::semaphore(&ctx.device)?);
        }
        Ok(Some(sc))
    }
}

impl Drop for Swapchain {
    fn drop(&mut self) {
        // SAFETY: owners idle the device before dropping the swapchain.
        unsafe {
            for &s in &self.render_finished {
                self.device.destroy_semaphore(s, None);
            }
            for &f in &self.framebuffers {
                self.device.destroy_framebuffer(f, None);
            }
            for &v in &self.views {
                self.device.destroy_image_view(v, None);
            }
            self.loader.destroy_swapchain(self.handle, None);
        }
    }
}
