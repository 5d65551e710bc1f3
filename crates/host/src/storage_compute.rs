//! A small compute pass's Vulkan objects, written once: a pipeline whose set 0 holds storage
//! buffers only, its push constants, and the one descriptor set. The instance motion pass and
//! the tests' GPU results reader are such passes.

use crate::vk_util::shader_module;
use ash::vk;

pub struct StorageCompute {
    device: ash::Device,
    pipeline: vk::Pipeline,
    layout: vk::PipelineLayout,
    set_layout: vk::DescriptorSetLayout,
    pool: vk::DescriptorPool,
    set: vk::DescriptorSet,
}

impl StorageCompute {
    /// The pipeline of `spirv` (entry point `main`) with `bindings` storage buffers at set 0
    /// and `push_bytes` of push constants, and its set (written by [`StorageCompute::write`]).
    ///
    /// # Safety
    /// `device` is live; `spirv` is valid SPIR-V of a compute shader that reads at most
    /// `bindings` storage buffers at set 0 and `push_bytes` of push constants.
    pub unsafe fn new(device: &ash::Device, spirv: &[u8], bindings: u32, push_bytes: u32) -> Result<Self, vk::Result> {
        let binding = |b| {
            vk::DescriptorSetLayoutBinding::default()
                .binding(b)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
        };
        let bindings: Vec<_> = (0..bindings).map(binding).collect();
        let mut this = StorageCompute {
            device: device.clone(),
            pipeline: vk::Pipeline::null(),
            layout: vk::PipelineLayout::null(),
            set_layout: vk::DescriptorSetLayout::null(),
            pool: vk::DescriptorPool::null(),
            set: vk::DescriptorSet::null(),
        };
        // SAFETY: valid create infos on a live device (and SPIR-V, by the caller's contract);
        // each object is stored as soon as it is made, so `Drop` frees what an error leaves.
        unsafe {
            this.set_layout = device.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings), None)?;
            let sizes = [vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: bindings.len() as u32 }];
            this.pool = device.create_descriptor_pool(&vk::DescriptorPoolCreateInfo::default().max_sets(1).pool_sizes(&sizes), None)?;
            let layouts = [this.set_layout];
            this.set = device.allocate_descriptor_sets(&vk::DescriptorSetAllocateInfo::default().descriptor_pool(this.pool).set_layouts(&layouts))?[0];
            let push = [vk::PushConstantRange::default().stage_flags(vk::ShaderStageFlags::COMPUTE).size(push_bytes)];
            this.layout = device.create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default().set_layouts(&layouts).push_constant_ranges(&push), None)?;
            let module = shader_module(device, spirv)?;
            let stage = vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::COMPUTE).module(module).name(c"main");
            let info = vk::ComputePipelineCreateInfo::default().stage(stage).layout(this.layout);
            let made = device.create_compute_pipelines(vk::PipelineCache::null(), &[info], None).map_err(|(_, e)| e);
            device.destroy_shader_module(module, None);
            this.pipeline = made?[0];
        }
        Ok(this)
    }

    /// Points binding `b` of the set at `buffers[b]`.
    ///
    /// # Safety
    /// The buffers are live and have `STORAGE_BUFFER` usage, one per binding; no command
    /// buffer that uses the set is recording or running, and no other thread writes the set
    /// at the same time.
    pub unsafe fn write(&self, buffers: &[vk::DescriptorBufferInfo]) {
        let infos: Vec<_> = buffers.iter().map(|b| [*b]).collect();
        let writes: Vec<_> = infos
            .iter()
            .enumerate()
            .map(|(b, info)| {
                vk::WriteDescriptorSet::default().dst_set(self.set).dst_binding(b as u32).descriptor_type(vk::DescriptorType::STORAGE_BUFFER).buffer_info(info)
            })
            .collect();
        // SAFETY: the caller's contract; the set is this pass's.
        unsafe { self.device.update_descriptor_sets(&writes, &[]) };
    }

    /// Records the pipeline and set bound, `push` pushed and `groups` workgroups dispatched.
    ///
    /// # Safety
    /// `cmd` is a command buffer of this device, recording outside a render pass; the set was
    /// written with buffers that live until `cmd` completes, and so does `self`; `push` is at
    /// most the pipeline's push constant bytes.
    pub unsafe fn dispatch(&self, cmd: vk::CommandBuffer, push: &[u8], groups: u32) {
        let d = &self.device;
        // SAFETY: the caller's contract; the pipeline, layout and set are this pass's.
        unsafe {
            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, self.pipeline);
            d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::COMPUTE, self.layout, 0, &[self.set], &[]);
            d.cmd_push_constants(cmd, self.layout, vk::ShaderStageFlags::COMPUTE, 0, push);
            d.cmd_dispatch(cmd, groups, 1, 1);
        }
    }
}

impl Drop for StorageCompute {
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
