//! A host's compute pass that reads the picker's GPU results through the public GLSL include,
//! later in the same command buffer: it copies every query's `pick_hit`, and for each probe
//! key (an object and instance, e.g. one per pixel of an ID image: the host's tint pass) the
//! bits of `pick_is_hit`, `pick_in_rect` and `pick_is_hovered`. Compiled at run time with
//! shaderc, as a host would compile the include with its own shaders.

use ash::vk;
use picking_vk::gpu_results::GPU_RESULTS_GLSL;
use picking_vk_context::HostBuffer;
use picking_vk_context::VulkanContext;

/// Queries whose hits are copied, and whose bits each probe gets.
pub const READ_QUERIES: u32 = 8;
/// Bit of a probe's word: `pick_is_hit(q, ..)` is bit `q`, `pick_in_rect(q, ..)` bit `8 + q`.
pub const HOVERED_BIT: u32 = 1 << 16;
/// `PICK_NO_INSTANCE`.
pub const NO_INSTANCE: u32 = u32::MAX;

const SHADER: &str = r#"#version 450
#extension GL_GOOGLE_include_directive : require
#define PICK_RESULTS_SET 0
#define PICK_RESULTS_BINDING 0
#include "pick_results.glsl"
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 1) readonly buffer Probes { uint probes[]; };
layout(std430, set = 0, binding = 2) writeonly buffer Out { uint out_words[]; };
layout(push_constant) uniform P { uint probe_count; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < 8u) {
        PickHit h = pick_hit(i);
        uint w = 8u * i;
        out_words[w] = h.id.x; out_words[w + 1u] = h.id.y; out_words[w + 2u] = h.instance; out_words[w + 3u] = h.draw_index;
        out_words[w + 4u] = h.pixel.x; out_words[w + 5u] = h.pixel.y; out_words[w + 6u] = floatBitsToUint(h.depth); out_words[w + 7u] = h.flags;
    }
    if (i == 0u) {
        out_words[64] = pick_frame.x; out_words[65] = pick_frame.y; out_words[66] = pick_query_count; out_words[67] = pick_entry_count;
    }
    if (i < pc.probe_count) {
        uvec2 id = uvec2(probes[3u * i], probes[3u * i + 1u]);
        uint instance = probes[3u * i + 2u];
        uint bits = pick_is_hovered(id, instance) ? (1u << 16u) : 0u;
        for (uint q = 0u; q < 8u; q++) {
            bits |= pick_is_hit(q, id, instance) ? (1u << q) : 0u;
            bits |= pick_in_rect(q, id, instance) ? (1u << (8u + q)) : 0u;
        }
        out_words[72u + i] = bits;
    }
}
"#;

/// One query's hit as the include reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuHit {
    pub id: [u32; 2],
    pub instance: u32,
    pub draw_index: u32,
    pub pixel: [u32; 2],
    pub depth: f32,
    pub flags: u32,
}

/// What one pass read.
pub struct ReadBack {
    pub hits: Vec<GpuHit>,
    pub frame: u64,
    pub query_count: u32,
    pub entry_count: u32,
    /// Per probe: the bits above.
    pub bits: Vec<u32>,
}

pub struct ResultsReader {
    device: ash::Device,
    pipeline: vk::Pipeline,
    layout: vk::PipelineLayout,
    set_layout: vk::DescriptorSetLayout,
    pool: vk::DescriptorPool,
    set: vk::DescriptorSet,
    probes: HostBuffer,
    out: HostBuffer,
    capacity: u32,
}

fn compile() -> Vec<u32> {
    let compiler = shaderc::Compiler::new().expect("shaderc");
    let mut options = shaderc::CompileOptions::new().expect("shaderc options");
    options.set_target_env(shaderc::TargetEnv::Vulkan, shaderc::EnvVersion::Vulkan1_0 as u32);
    options.set_include_callback(|name, _, _, _| {
        assert_eq!(name, "pick_results.glsl", "the only include");
        Ok(shaderc::ResolvedInclude { resolved_name: name.into(), content: GPU_RESULTS_GLSL.into() })
    });
    let artifact = compiler.compile_into_spirv(SHADER, shaderc::ShaderKind::Compute, "reader.comp", "main", Some(&options)).expect("the include compiles");
    artifact.as_binary().to_vec()
}

impl ResultsReader {
    /// A reader for up to `capacity` probes.
    pub fn new(ctx: &VulkanContext, capacity: u32) -> ResultsReader {
        let device = ctx.device.clone();
        let storage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let probes = ctx.host_buffer(12 * u64::from(capacity.max(1)), storage).expect("probe buffer");
        let out = ctx.host_buffer(4 * (72 + u64::from(capacity.max(1))), storage).expect("output buffer");
        let bindings: Vec<_> = (0..3)
            .map(|b| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(b)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let code = compile();
        // SAFETY: valid create infos on the context's live device; everything is destroyed in
        // `Drop`, after the tests' waits.
        unsafe {
            let set_layout = device.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings), None).unwrap();
            let sizes = [vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: 3 }];
            let pool = device.create_descriptor_pool(&vk::DescriptorPoolCreateInfo::default().max_sets(1).pool_sizes(&sizes), None).unwrap();
            let set = device.allocate_descriptor_sets(&vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool).set_layouts(&[set_layout])).unwrap()[0];
            let push = [vk::PushConstantRange::default().stage_flags(vk::ShaderStageFlags::COMPUTE).size(4)];
            let layout =
                device.create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default().set_layouts(&[set_layout]).push_constant_ranges(&push), None).unwrap();
            let module = device.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&code), None).unwrap();
            let stage = vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::COMPUTE).module(module).name(c"main");
            let info = vk::ComputePipelineCreateInfo::default().stage(stage).layout(layout);
            let pipeline = device.create_compute_pipelines(vk::PipelineCache::null(), &[info], None).map_err(|(_, e)| e).unwrap()[0];
            device.destroy_shader_module(module, None);
            ResultsReader { device, pipeline, layout, set_layout, pool, set, probes, out, capacity }
        }
    }

    /// Records the pass over `probes` (object ID words and instance each), reading `results`
    /// (the picker's slot buffer), then the barrier to the host.
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass, after the picker's record into the slot of
    /// `results`; no earlier use of this reader is still running.
    pub unsafe fn record(&mut self, cmd: vk::CommandBuffer, results: vk::DescriptorBufferInfo, probes: &[[u32; 3]]) {
        assert!(probes.len() as u32 <= self.capacity, "probes over the reader's capacity");
        let d = &self.device;
        // SAFETY: the caller's contract: nothing reads the probe buffer or the set meanwhile.
        unsafe {
            self.probes.write(0, probes).unwrap();
            let infos = [
                [results],
                [vk::DescriptorBufferInfo { buffer: self.probes.buffer, offset: 0, range: vk::WHOLE_SIZE }],
                [vk::DescriptorBufferInfo { buffer: self.out.buffer, offset: 0, range: vk::WHOLE_SIZE }],
            ];
            let writes: Vec<_> = (0..3)
                .map(|b| {
                    vk::WriteDescriptorSet::default()
                        .dst_set(self.set)
                        .dst_binding(b)
                        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                        .buffer_info(&infos[b as usize])
                })
                .collect();
            d.update_descriptor_sets(&writes, &[]);
            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, self.pipeline);
            d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::COMPUTE, self.layout, 0, &[self.set], &[]);
            d.cmd_push_constants(cmd, self.layout, vk::ShaderStageFlags::COMPUTE, 0, &(probes.len() as u32).to_ne_bytes());
            d.cmd_dispatch(cmd, (probes.len() as u32).max(READ_QUERIES).div_ceil(64), 1, 1);
            let to_host = vk::MemoryBarrier::default().src_access_mask(vk::AccessFlags::SHADER_WRITE).dst_access_mask(vk::AccessFlags::HOST_READ);
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::PipelineStageFlags::HOST,
                vk::DependencyFlags::empty(),
                &[to_host],
                &[],
                &[],
            );
        }
    }

    /// What the last pass wrote, for `probes` probes.
    ///
    /// # Safety
    /// The command buffer of the last [`ResultsReader::record`] has completed.
    pub unsafe fn read(&self, probes: usize) -> ReadBack {
        // SAFETY: the caller's contract.
        let bytes = unsafe { self.out.read_bytes() }.unwrap();
        let word = |i: usize| u32::from_ne_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap());
        let hits = (0..READ_QUERIES as usize)
            .map(|q| {
                let w = 8 * q;
                GpuHit {
                    id: [word(w), word(w + 1)],
                    instance: word(w + 2),
                    draw_index: word(w + 3),
                    pixel: [word(w + 4), word(w + 5)],
                    depth: f32::from_bits(word(w + 6)),
                    flags: word(w + 7),
                }
            })
            .collect();
        ReadBack {
            hits,
            frame: u64::from(word(64)) | u64::from(word(65)) << 32,
            query_count: word(66),
            entry_count: word(67),
            bits: (0..probes).map(|i| word(72 + i)).collect(),
        }
    }
}

impl Drop for ResultsReader {
    fn drop(&mut self) {
        // SAFETY: tests drop the reader after their last wait; the objects are this reader's.
        unsafe {
            self.device.destroy_pipeline(self.pipeline, None);
            self.device.destroy_pipeline_layout(self.layout, None);
            self.device.destroy_descriptor_pool(self.pool, None);
            self.device.destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}
