//! The ID view's texture in the panel: an RGBA image the viewer owns, shown by the egui
//! renderer as a user texture, and updated by a copy recorded into the frame's own command
//! buffer from a staging buffer per frame slot.
//!
//! egui-managed textures would not do here: each update of one makes the egui renderer
//! allocate a one-time command buffer and idle the queue, and the validation layer keeps
//! memory for every such command buffer (3.5 KB each, never returned): the ID view, updated
//! every other frame, grew the viewer by megabytes a minute. Here an update allocates
//! nothing; the image and staging buffers are made again only when the view's size changes.

use super::FRAMES_IN_FLIGHT;
use crate::ViewerError;
use ash::vk;
use egui_ash_renderer::vulkan::{create_vulkan_descriptor_pool, create_vulkan_descriptor_set_layout};
use picking_vk_context::{DeviceImage, HostBuffer, VulkanContext};

/// The same format as egui's own textures: bytes are sRGB-encoded `Color32`s.
const FORMAT: vk::Format = vk::Format::R8G8B8A8_SRGB;

/// The image, its staging buffers, and whether it holds a picture yet.
struct Target {
    image: DeviceImage,
    staging: Vec<HostBuffer>,
    /// A copy has been recorded: the image's layout is SHADER_READ_ONLY_OPTIMAL between frames.
    initialized: bool,
}

pub(super) struct IdTexture {
    device: ash::Device,
    layout: vk::DescriptorSetLayout,
    pool: vk::DescriptorPool,
    sampler: vk::Sampler,
    set: vk::DescriptorSet,
    target: Option<Target>,
    /// The egui texture, registered at the first upload.
    id: Option<egui::TextureId>,
    /// The next picture (RGBA rows) and its size, waiting for a frame to copy it.
    rgba: Vec<u8>,
    pending: Option<vk::Extent2D>,
}

impl IdTexture {
    pub fn new(ctx: &VulkanContext) -> Result<Self, ViewerError> {
        let device = ctx.device.clone();
        let mut t = IdTexture {
            device: device.clone(),
            layout: vk::DescriptorSetLayout::null(),
            pool: vk::DescriptorPool::null(),
            sampler: vk::Sampler::null(),
            set: vk::DescriptorSet::null(),
            target: None,
            id: None,
            rgba: vec![],
            pending: None,
        };
        // From here Drop destroys whatever was made.
        t.layout = create_vulkan_descriptor_set_layout(&device).map_err(super::egui_error)?;
        t.pool = create_vulkan_descriptor_pool(&device, 1).map_err(super::egui_error)?;
        let sampler = vk::SamplerCreateInfo::default()
            .mag_filter(vk::Filter::NEAREST)
            .min_filter(vk::Filter::NEAREST)
            .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
            .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_EDGE)
            .max_lod(1.0);
        // SAFETY: valid create info on a live device.
        t.sampler = unsafe { device.create_sampler(&sampler, None) }.map_err(picking_vk_context::ContextError::from)?;
        let layouts = [t.layout];
        let info = vk::DescriptorSetAllocateInfo::default().descriptor_pool(t.pool).set_layouts(&layouts);
        // SAFETY: the pool has room for this one set of this layout.
        t.set = unsafe { device.allocate_descriptor_sets(&info) }.map_err(picking_vk_context::ContextError::from)?[0];
        Ok(t)
    }

    /// The texture to show and its size in pixels, once a picture has been uploaded.
    pub fn shown(&self) -> Option<(egui::TextureId, [usize; 2])> {
        let target = self.target.as_ref().filter(|t| t.initialized)?;
        Some((self.id?, [target.image.extent.width as usize, target.image.extent.height as usize]))
    }

    /// Takes the next picture: `rgba` fills `width * height * 4` bytes of a buffer that is
    /// reused from picture to picture.
    pub fn stage(&mut self, width: u32, height: u32, fill: impl FnOnce(&mut Vec<u8>)) {
        self.rgba.clear();
        fill(&mut self.rgba);
        if self.rgba.len() == width as usize * height as usize * 4 {
            self.pending = Some(vk::Extent2D { width, height });
        }
    }

    /// Records the copy of the waiting picture into `cmd` (recording, outside a render pass),
    /// before the panel that shows it. A new size makes the image again, after the device
    /// idles (no frame in flight samples the old one).
    ///
    /// # Safety
    /// `slot`'s previous frame has completed (its fence was waited); `cmd` is that slot's
    /// command buffer, recording, and it is submitted before the slot is used again.
    pub unsafe fn record_upload(
        &mut self,
        ctx: &VulkanContext,
        renderer: &mut egui_ash_renderer::Renderer<egui_ash_renderer::allocator::GpuAllocator>,
        cmd: vk::CommandBuffer,
        slot: usize,
    ) -> Result<(), ViewerError> {
        let Some(extent) = self.pending.take() else { return Ok(()) };
        if self.target.as_ref().is_none_or(|t| t.image.extent != extent) {
            self.remake(ctx, extent)?;
        }
        if self.id.is_none() {
            self.id = Some(renderer.add_user_texture(self.set));
        }
        let Some(target) = self.target.as_mut() else { return Ok(()) };
        // SAFETY: the slot's frame completed: its staging buffer is not in use.
        unsafe { target.staging[slot].write(0, &self.rgba) }?;
        let range =
            vk::ImageSubresourceRange { aspect_mask: vk::ImageAspectFlags::COLOR, base_mip_level: 0, level_count: 1, base_array_layer: 0, layer_count: 1 };
        // Earlier frames' panels sampled the image: their reads finish before the copy writes.
        let (old_layout, src_stage) = if target.initialized {
            (vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL, vk::PipelineStageFlags::FRAGMENT_SHADER)
        } else {
            (vk::ImageLayout::UNDEFINED, vk::PipelineStageFlags::TOP_OF_PIPE)
        };
        let to_copy = vk::ImageMemoryBarrier::default()
            .old_layout(old_layout)
            .new_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
            .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .image(target.image.image)
            .subresource_range(range);
        let to_sample = to_copy
            .old_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
            .new_layout(vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL)
            .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(vk::AccessFlags::SHADER_READ);
        let region = vk::BufferImageCopy::default()
            .image_subresource(vk::ImageSubresourceLayers { aspect_mask: vk::ImageAspectFlags::COLOR, mip_level: 0, base_array_layer: 0, layer_count: 1 })
            .image_extent(vk::Extent3D { width: extent.width, height: extent.height, depth: 1 });
        let d = &self.device;
        // SAFETY: `cmd` is recording outside a render pass; image and buffer are live and
        // outlive the frame (a remake idles the device first).
        unsafe {
            d.cmd_pipeline_barrier(cmd, src_stage, vk::PipelineStageFlags::TRANSFER, vk::DependencyFlags::empty(), &[], &[], &[to_copy]);
            d.cmd_copy_buffer_to_image(cmd, target.staging[slot].buffer, target.image.image, vk::ImageLayout::TRANSFER_DST_OPTIMAL, &[region]);
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::FRAGMENT_SHADER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[to_sample],
            );
        }
        target.initialized = true;
        Ok(())
    }

    /// Frees the image and staging buffers, and any picture waiting; the next picture makes
    /// them again.
    ///
    /// No frame in flight may sample the image (the caller's `note_frame` waits for that).
    pub fn release(&mut self) {
        self.target = None;
        self.pending = None;
        self.rgba = Vec::new();
    }

    /// A new image and staging buffers of `extent`, and the descriptor set pointed at it.
    fn remake(&mut self, ctx: &VulkanContext, extent: vk::Extent2D) -> Result<(), ViewerError> {
        // No frame in flight may sample the old image or use the set while it changes.
        ctx.wait_idle()?;
        self.target = None;
        let image = ctx.create_image(FORMAT, extent, vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST, vk::ImageAspectFlags::COLOR)?;
        let bytes = u64::from(extent.width) * u64::from(extent.height) * 4;
        let staging = (0..FRAMES_IN_FLIGHT).map(|_| ctx.host_buffer(bytes, vk::BufferUsageFlags::TRANSFER_SRC)).collect::<Result<Vec<_>, _>>()?;
        let info = [vk::DescriptorImageInfo { sampler: self.sampler, image_view: image.view, image_layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL }];
        let write =
            vk::WriteDescriptorSet::default().dst_set(self.set).dst_binding(0).descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER).image_info(&info);
        // SAFETY: the device is idle, so no pending command buffer uses the set; the current
        // one has not bound it yet (the panel is drawn after this).
        unsafe { self.device.update_descriptor_sets(&[write], &[]) };
        self.target = Some(Target { image, staging, initialized: false });
        Ok(())
    }
}

impl Drop for IdTexture {
    fn drop(&mut self) {
        self.target = None;
        // SAFETY: dropped with `Gfx`, once the device is idle; null handles are ignored. The
        // pool frees the set; the egui renderer only forgets user textures.
        unsafe {
            self.device.destroy_sampler(self.sampler, None);
            self.device.destroy_descriptor_pool(self.pool, None);
            self.device.destroy_descriptor_set_layout(self.layout, None);
        }
    }
}
