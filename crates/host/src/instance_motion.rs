//! GPU-driven instances: a compute pass the host records each frame that writes its
//! instances' transforms (the base transforms moved along a sway that depends on the time),
//! as GPU particles or GPU animation would. The CPU never sees the result: draws read the
//! transforms buffer as a storage buffer (`InstanceBinding::StorageBuffer`) or as vertex
//! attributes, and a pick that reads them names the pass's writes with
//! `PickRequest::with_host_writes(COMPUTE_SHADER, SHADER_WRITE)`.

use crate::vk_util::shader_module;
use ash::vk;
use glam::Mat4;
use picking_vk_context::{ContextError, HostBuffer, VulkanContext};

const SPIRV: &[u8] = include_bytes!("../spirv/instance_motion.comp.spv");

pub struct InstanceMotion {
    device: ash::Device,
    pipeline: vk::Pipeline,
    layout: vk::PipelineLayout,
    set_layout: vk::DescriptorSetLayout,
    pool: vk::DescriptorPool,
    _base: HostBuffer,
    /// Column-major `mat4`s, 64 bytes apart (storage and vertex buffer usage).
    pub transforms: HostBuffer,
    set: vk::DescriptorSet,
    count: u32,
    /// How far instances sway from their base, in their parent's units.
    pub amplitude: f32,
}

impl InstanceMotion {
    /// The pass over `base` (uploaded once), swaying `amplitude` from it.
    pub fn new(ctx: &VulkanContext, base: &[Mat4], amplitude: f32) -> Result<Self, ContextError> {
        let device = ctx.device.clone();
        let storage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let base_buffer = ctx.upload(base, storage)?;
        let transforms = ctx.upload(base, storage | vk::BufferUsageFlags::VERTEX_BUFFER)?;
        let bindings: [vk::DescriptorSetLayoutBinding; 2] = std::array::from_fn(|b| {
            vk::DescriptorSetLayoutBinding::default()
                .binding(b as u32)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
        });
        let mut this = InstanceMotion {
            device: device.clone(),
            pipeline: vk::Pipeline::null(),
            layout: vk::PipelineLayout::null(),
            set_layout: vk::DescriptorSetLayout::null(),
            pool: vk::DescriptorPool::null(),
            _base: base_buffer,
            transforms,
            set: vk::DescriptorSet::null(),
            count: base.len() as u32,
            amplitude,
        };
        // SAFETY: valid create infos on the context's live device; each object is stored as
        // soon as it is made, so `Drop` frees what an error leaves.
        unsafe {
            this.set_layout = device.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings), None)?;
            let sizes = [vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: 2 }];
            this.pool = device.create_descriptor_pool(&vk::DescriptorPoolCreateInfo::default().max_sets(1).pool_sizes(&sizes), None)?;
            let layouts = [this.set_layout];
            this.set = device.allocate_descriptor_sets(&vk::DescriptorSetAllocateInfo::default().descriptor_pool(this.pool).set_layouts(&layouts))?[0];
            let infos = [this._base.buffer, this.transforms.buffer].map(|buffer| [vk::DescriptorBufferInfo { buffer, offset: 0, range: vk::WHOLE_SIZE }]);
            let writes: [vk::WriteDescriptorSet; 2] = std::array::from_fn(|b| {
                vk::WriteDescriptorSet::default()
                    .dst_set(this.set)
                    .dst_binding(b as u32)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(&infos[b])
            });
            device.update_descriptor_sets(&writes, &[]);
            let push = [vk::PushConstantRange::default().stage_flags(vk::ShaderStageFlags::COMPUTE).size(12)];
            this.layout = device.create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default().set_layouts(&layouts).push_constant_ranges(&push), None)?;
            let module = shader_module(&device, SPIRV)?;
            let stage = vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::COMPUTE).module(module).name(c"main");
            let info = vk::ComputePipelineCreateInfo::default().stage(stage).layout(this.layout);
            let made = device.create_compute_pipelines(vk::PipelineCache::null(), &[info], None).map_err(|(_, e)| e);
            device.destroy_shader_module(module, None);
            this.pipeline = made?[0];
        }
        Ok(this)
    }

    /// How many instances the pass writes.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Records the pass for `time`.
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass, and every earlier read of the transforms is
    /// ordered before it (the picker's barrier after a pick that named the writes does so).
    pub unsafe fn record(&self, cmd: vk::CommandBuffer, time: f32) {
        let d = &self.device;
        let mut push = [0u8; 12];
        push[..4].copy_from_slice(&self.count.to_ne_bytes());
        push[4..8].copy_from_slice(&time.to_ne_bytes());
        push[8..].copy_from_slice(&self.amplitude.to_ne_bytes());
        // SAFETY: the caller's contract; the pipeline and set are this pass's.
        unsafe {
            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, self.pipeline);
            d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::COMPUTE, self.layout, 0, &[self.set], &[]);
            d.cmd_push_constants(cmd, self.layout, vk::ShaderStageFlags::COMPUTE, 0, &push);
            d.cmd_dispatch(cmd, self.count.div_ceil(64), 1, 1);
        }
    }
}

impl Drop for InstanceMotion {
    fn drop(&mut self) {
        // SAFETY: the owner drops the pass after the GPU finished with it; null handles are
        // ignored; the set goes with its pool.
        unsafe {
            self.device.destroy_pipeline(self.pipeline, None);
            self.device.destroy_pipeline_layout(self.layout, None);
            self.device.destroy_descriptor_pool(self.pool, None);
            self.device.destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}
