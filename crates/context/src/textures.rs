//! Sampled textures and the descriptor sets that bind them: one combined image sampler at
//! binding 0 per set, visible to the vertex and fragment stages. The viewer's lit pass and
//! its pick hooks read the same sets, so a material is sampled alike in both.

use crate::images::DeviceImage;
use crate::owner::DeviceOwner;
use crate::{ContextError, VulkanContext};
use ash::vk;
use std::sync::Arc;

/// A sampler, destroyed on drop; shared by the textures that sample alike.
pub struct Sampler {
    owner: Arc<DeviceOwner>,
    pub handle: vk::Sampler,
}

impl Drop for Sampler {
    fn drop(&mut self) {
        // SAFETY: users drop samplers (through their textures) only after the GPU is done.
        unsafe { self.owner.device.destroy_sampler(self.handle, None) };
    }
}

/// An RGBA8 image in SHADER_READ_ONLY_OPTIMAL and its sampler, each possibly shared with other
/// textures (an image sampled two ways is held once); each freed with its last user.
#[derive(Clone)]
pub struct Texture {
    pub image: Arc<DeviceImage>,
    pub sampler: Arc<Sampler>,
}

/// A descriptor set layout (binding 0: a combined image sampler) and a pool of sets of it.
pub struct TextureSets {
    owner: Arc<DeviceOwner>,
    pub layout: vk::DescriptorSetLayout,
    pool: vk::DescriptorPool,
    /// One per texture given, in order.
    pub sets: Vec<vk::DescriptorSet>,
}

impl TextureSets {
    /// The layout's one binding, as hook programs that sample it declare it
    /// (`picking_vk::hooks::HookProgram::with_host_set`).
    pub const HOOK_BINDINGS: [picking_vk::hooks::HookBinding; 1] = [picking_vk::hooks::HookBinding {
        binding: 0,
        descriptor_type: vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
        count: 1,
        stages: vk::ShaderStageFlags::from_raw(vk::ShaderStageFlags::VERTEX.as_raw() | vk::ShaderStageFlags::FRAGMENT.as_raw()),
    }];
}

impl Drop for TextureSets {
    fn drop(&mut self) {
        // SAFETY: users drop the sets only after the GPU is done with them; null is ignored.
        unsafe {
            self.owner.device.destroy_descriptor_pool(self.pool, None);
            self.owner.device.destroy_descriptor_set_layout(self.layout, None);
        }
    }
}

impl VulkanContext {
    /// Uploads `rgba` (`width` x `height` texels, 4 bytes each, rows top to bottom) into a
    /// sampled image of `format` (an RGBA8 format) and makes its sampler. Waits for the GPU.
    pub fn upload_texture(
        &self,
        rgba: &[u8],
        width: u32,
        height: u32,
        format: vk::Format,
        sampler: &vk::SamplerCreateInfo<'_>,
    ) -> Result<Texture, ContextError> {
        let image = self.upload_image(rgba, width, height, format)?;
        Ok(Texture { image, sampler: self.sampler(sampler)? })
    }

    /// A sampler of `info`.
    pub fn sampler(&self, info: &vk::SamplerCreateInfo<'_>) -> Result<Arc<Sampler>, ContextError> {
        // SAFETY: a valid sampler create info on a live device; owned by the `Sampler` at once.
        let handle = unsafe { self.device.create_sampler(info, None) }?;
        Ok(Arc::new(Sampler { owner: self.owner.clone(), handle }))
    }

    /// Uploads `rgba` as [`VulkanContext::upload_texture`] does, without a sampler.
    pub fn upload_image(&self, rgba: &[u8], width: u32, height: u32, format: vk::Format) -> Result<Arc<DeviceImage>, ContextError> {
        let bytes = u64::from(width) * u64::from(height) * 4;
        if width == 0 || height == 0 || rgba.len() as u64 != bytes {
            return Err(ContextError::Invalid(format!("a {width}x{height} RGBA8 texture needs {bytes} bytes, got {}", rgba.len())));
        }
        let extent = vk::Extent2D { width, height };
        let usage = vk::ImageUsageFlags::SAMPLED | vk::ImageUsageFlags::TRANSFER_DST;
        let image = self.create_image(format, extent, usage, vk::ImageAspectFlags::COLOR)?;
        let staging = self.upload(rgba, vk::BufferUsageFlags::TRANSFER_SRC)?;
        let range =
            vk::ImageSubresourceRange { aspect_mask: vk::ImageAspectFlags::COLOR, base_mip_level: 0, level_count: 1, base_array_layer: 0, layer_count: 1 };
        let barrier = |old, new, src, dst| {
            vk::ImageMemoryBarrier::default()
                .old_layout(old)
                .new_layout(new)
                .src_access_mask(src)
                .dst_access_mask(dst)
                .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .image(image.image)
                .subresource_range(range)
        };
        self.run_once(|cmd| {
            let region = vk::BufferImageCopy::default()
                .image_subresource(vk::ImageSubresourceLayers { aspect_mask: vk::ImageAspectFlags::COLOR, mip_level: 0, base_array_layer: 0, layer_count: 1 })
                .image_extent(vk::Extent3D { width, height, depth: 1 });
            let to_dst = barrier(vk::ImageLayout::UNDEFINED, vk::ImageLayout::TRANSFER_DST_OPTIMAL, vk::AccessFlags::empty(), vk::AccessFlags::TRANSFER_WRITE);
            let to_read = barrier(
                vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
                vk::AccessFlags::TRANSFER_WRITE,
                vk::AccessFlags::SHADER_READ,
            );
            let d = &self.device;
            // SAFETY: `cmd` is recording; image and staging buffer are live until the wait.
            unsafe {
                d.cmd_pipeline_barrier(
                    cmd,
                    vk::PipelineStageFlags::TOP_OF_PIPE,
                    vk::PipelineStageFlags::TRANSFER,
                    vk::DependencyFlags::empty(),
                    &[],
                    &[],
                    &[to_dst],
                );
                d.cmd_copy_buffer_to_image(cmd, staging.buffer, image.image, vk::ImageLayout::TRANSFER_DST_OPTIMAL, &[region]);
                let shaders = vk::PipelineStageFlags::VERTEX_SHADER | vk::PipelineStageFlags::FRAGMENT_SHADER;
                d.cmd_pipeline_barrier(cmd, vk::PipelineStageFlags::TRANSFER, shaders, vk::DependencyFlags::empty(), &[], &[], &[to_read]);
            }
        })?;
        Ok(Arc::new(image))
    }

    /// A set per texture, each binding it as a combined image sampler at binding 0.
    pub fn texture_sets(&self, textures: &[&Texture]) -> Result<TextureSets, ContextError> {
        let d = &self.device;
        let b = TextureSets::HOOK_BINDINGS[0];
        let bindings =
            [vk::DescriptorSetLayoutBinding::default().binding(b.binding).descriptor_type(b.descriptor_type).descriptor_count(b.count).stage_flags(b.stages)];
        // SAFETY: valid create infos on a live device; each object is owned by `out` at once.
        let layout = unsafe { d.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings), None) }?;
        let mut out = TextureSets { owner: self.owner.clone(), layout, pool: vk::DescriptorPool::null(), sets: vec![] };
        let count = textures.len().max(1) as u32;
        let sizes = [vk::DescriptorPoolSize { ty: vk::DescriptorType::COMBINED_IMAGE_SAMPLER, descriptor_count: count }];
        // SAFETY: as above.
        out.pool = unsafe { d.create_descriptor_pool(&vk::DescriptorPoolCreateInfo::default().max_sets(count).pool_sizes(&sizes), None) }?;
        let layouts = vec![layout; textures.len()];
        if !layouts.is_empty() {
            // SAFETY: the pool has room for these sets.
            out.sets = unsafe { d.allocate_descriptor_sets(&vk::DescriptorSetAllocateInfo::default().descriptor_pool(out.pool).set_layouts(&layouts)) }?;
        }
        for (&set, texture) in out.sets.iter().zip(textures) {
            let info = [vk::DescriptorImageInfo {
                sampler: texture.sampler.handle,
                image_view: texture.image.view,
                image_layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
            }];
            let write =
                vk::WriteDescriptorSet::default().dst_set(set).dst_binding(0).descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER).image_info(&info);
            // SAFETY: the set, sampler and view are live; the set is not in use yet.
            unsafe { d.update_descriptor_sets(&[write], &[]) };
        }
        Ok(out)
    }
}
