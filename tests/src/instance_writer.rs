//! A host's compute pass that writes its instances' transforms each frame (GPU particles,
//! GPU-driven animation): the CPU never sees them, so only the GPU planner can cull them.
//! Compiled at run time with shaderc, as a host compiles its own shaders.

use ash::vk;
use picking_vk_context::{HostBuffer, VulkanContext};

/// Column-major mat4 per instance, 64 bytes apart: a grid of `columns` columns, each instance
/// swaying and spinning with `time`, at depths that differ per instance.
const SHADER: &str = r#"#version 450
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) writeonly buffer Out { mat4 transforms[]; };
layout(push_constant) uniform P { uint count; uint columns; float time; float spacing; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.count) {
        return;
    }
    float fi = float(i);
    float rows = float((pc.count + pc.columns - 1u) / pc.columns);
    vec2 cell = vec2(float(i % pc.columns) - 0.5 * float(pc.columns), float(i / pc.columns) - 0.5 * rows) * pc.spacing;
    vec3 sway = vec3(sin(pc.time + fi * 0.37), cos(pc.time * 1.3 + fi * 0.11), 0.0) * 0.4 * pc.spacing;
    vec3 at = vec3(cell, -9.0 - 2.0 * sin(fi * 1.7)) + sway;
    float a = pc.time * 0.7 + fi;
    float s = 0.3 * pc.spacing + 0.2 * pc.spacing * sin(fi * 2.3);
    transforms[i] = mat4(vec4(cos(a) * s, sin(a) * s, 0.0, 0.0), vec4(-sin(a) * s, cos(a) * s, 0.0, 0.0), vec4(0.0, 0.0, s, 0.0), vec4(at, 1.0));
}
"#;

/// The writer and the buffer it writes (storage usage, 64 bytes per instance).
pub struct InstanceWriter {
    device: ash::Device,
    pipeline: vk::Pipeline,
    layout: vk::PipelineLayout,
    set_layout: vk::DescriptorSetLayout,
    pool: vk::DescriptorPool,
    set: vk::DescriptorSet,
    pub transforms: HostBuffer,
    pub count: u32,
    columns: u32,
    spacing: f32,
}

impl InstanceWriter {
    /// A writer of `count` instances in `columns` columns, `spacing` apart.
    pub fn new(ctx: &VulkanContext, count: u32, columns: u32, spacing: f32) -> InstanceWriter {
        let device = ctx.device.clone();
        let transforms = ctx.host_buffer(64 * u64::from(count.max(1)), vk::BufferUsageFlags::STORAGE_BUFFER).expect("instance buffer");
        let compiler = shaderc::Compiler::new().expect("shaderc");
        let artifact = compiler.compile_into_spirv(SHADER, shaderc::ShaderKind::Compute, "instances.comp", "main", None).expect("the writer compiles");
        let code = artifact.as_binary().to_vec();
        let binding = [vk::DescriptorSetLayoutBinding::default()
            .binding(0)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(1)
            .stage_flags(vk::ShaderStageFlags::COMPUTE)];
        // SAFETY: valid create infos on the context's live device; everything is destroyed in
        // `Drop`, after the tests' waits.
        unsafe {
            let set_layout = device.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&binding), None).unwrap();
            let sizes = [vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: 1 }];
            let pool = device.create_descriptor_pool(&vk::DescriptorPoolCreateInfo::default().max_sets(1).pool_sizes(&sizes), None).unwrap();
            let set = device.allocate_descriptor_sets(&vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool).set_layouts(&[set_layout])).unwrap()[0];
            let info = [vk::DescriptorBufferInfo { buffer: transforms.buffer, offset: 0, range: vk::WHOLE_SIZE }];
            let write = vk::WriteDescriptorSet::default().dst_set(set).dst_binding(0).descriptor_type(vk::DescriptorType::STORAGE_BUFFER).buffer_info(&info);
            device.update_descriptor_sets(&[write], &[]);
            let push = [vk::PushConstantRange::default().stage_flags(vk::ShaderStageFlags::COMPUTE).size(16)];
            let layout =
                device.create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default().set_layouts(&[set_layout]).push_constant_ranges(&push), None).unwrap();
            let module = device.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&code), None).unwrap();
            let stage = vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::COMPUTE).module(module).name(c"main");
            let info = vk::ComputePipelineCreateInfo::default().stage(stage).layout(layout);
            let pipeline = device.create_compute_pipelines(vk::PipelineCache::null(), &[info], None).map_err(|(_, e)| e).unwrap()[0];
            device.destroy_shader_module(module, None);
            InstanceWriter { device, pipeline, layout, set_layout, pool, set, transforms, count, columns, spacing }
        }
    }

    /// Records the pass for `time`. The pick that reads the transforms names the write with
    /// `PickRequest::with_host_writes(COMPUTE_SHADER, SHADER_WRITE)`.
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass; no earlier read of the buffer is still
    /// running unordered (the picker's `record_after` barrier orders a frame's reads).
    pub unsafe fn record(&self, cmd: vk::CommandBuffer, time: f32) {
        let d = &self.device;
        let mut push = [0u8; 16];
        push[..4].copy_from_slice(&self.count.to_ne_bytes());
        push[4..8].copy_from_slice(&self.columns.to_ne_bytes());
        push[8..12].copy_from_slice(&time.to_ne_bytes());
        push[12..].copy_from_slice(&self.spacing.to_ne_bytes());
        // SAFETY: the caller's contract; the pipeline and set are this writer's.
        unsafe {
            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, self.pipeline);
            d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::COMPUTE, self.layout, 0, &[self.set], &[]);
            d.cmd_push_constants(cmd, self.layout, vk::ShaderStageFlags::COMPUTE, 0, &push);
            d.cmd_dispatch(cmd, self.count.div_ceil(64), 1, 1);
        }
    }
}

impl Drop for InstanceWriter {
    fn drop(&mut self) {
        // SAFETY: tests drop the writer after their last wait; the objects are this writer's.
        unsafe {
            self.device.destroy_pipeline(self.pipeline, None);
            self.device.destroy_pipeline_layout(self.layout, None);
            self.device.destroy_descriptor_pool(self.pool, None);
            self.device.destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}
