//! A host's compute pass that reads the picker's GPU results through the public GLSL include,
//! later in the same command buffer: it copies every query's `pick_hit`, and for each probe
//! key (an object and instance, e.g. one per pixel of an ID image: the host's tint pass) the
//! bits of `pick_is_hit`, `pick_in_rect` and `pick_is_hovered`. Compiled at run time with
//! shaderc, as a host would compile the include with its own shaders.

use crate::harness::Gpu;
use ash::vk;
use picking_vk::gpu_results::GPU_RESULTS_GLSL;
use picking_vk::{FrameResults, ObjectId, PickQuery, PickRequest, PickResult, Picker, QueryResult};
use picking_vk_context::HostBuffer;
use picking_vk_context::VulkanContext;
use picking_vk_host::StorageCompute;

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

/// Records `queries` into slot 0 of `picker` (made with GPU results) and, in the same command
/// buffer, the reader over `probes`; submits, waits, and returns what the reader saw and the
/// CPU results of the same frame.
#[allow(clippy::too_many_arguments)]
pub fn frame<'d>(
    gpu: &Gpu,
    picker: &mut Picker,
    reader: &mut ResultsReader,
    request: &PickRequest<'_>,
    queries: &[PickQuery],
    draws: impl Into<picking_vk::draw::DrawList<'d>>,
    probes: &[[u32; 3]],
) -> (ReadBack, FrameResults) {
    let results = picker.gpu_results(0).expect("gpu results on");
    gpu.run(|cmd| {
        // SAFETY: recording outside a render pass; the draws' buffers outlive the wait; the
        // reader's last pass completed (every frame is waited for).
        unsafe {
            picker.record(cmd, 0, request, queries, draws).expect("record");
            reader.record(cmd, results, probes);
        }
    });
    // SAFETY: `run` waited for the command buffer.
    let seen = unsafe { reader.read(probes.len()) };
    // SAFETY: as above.
    let cpu = unsafe { picker.take_results(0) }.expect("resolve").expect("pending");
    (seen, cpu)
}

/// The probe key of a pick: ID words and instance (`NO_INSTANCE` when not instanced).
pub fn key_of(id: ObjectId, instance: Option<u32>) -> [u32; 3] {
    let [lo, hi] = id.to_words();
    [lo, hi, instance.unwrap_or(NO_INSTANCE)]
}

fn assert_hit_equals(gpu_hit: &GpuHit, cpu: &PickResult, context: &str) {
    assert_eq!(gpu_hit.pixel, cpu.pixel.to_array(), "{context}: pixel");
    match &cpu.hit {
        None => assert_eq!((gpu_hit.flags & 1, gpu_hit.id), (0, [0, 0]), "{context}: a miss"),
        Some(h) => {
            assert_eq!(gpu_hit.flags & 1, 1, "{context}: a hit");
            assert_eq!([gpu_hit.id[0], gpu_hit.id[1], gpu_hit.instance], key_of(h.id, h.instance), "{context}: object");
            assert_eq!(gpu_hit.draw_index, h.draw_index, "{context}: draw index");
            assert_eq!(gpu_hit.depth, h.depth, "{context}: depth");
        }
    }
}

/// Asserts that the reader saw what the CPU results say: each point and radius query's hit,
/// no hit for a rectangle, each probe's membership in each rectangle, and `pick_is_hovered`.
/// Returns (hits compared, hits found, memberships seen).
pub fn assert_matches_cpu(seen: &ReadBack, cpu: &FrameResults, probes: &[[u32; 3]], context: &str) -> (usize, usize, usize) {
    assert_eq!((seen.frame, seen.query_count), (cpu.frame, cpu.results.len() as u32), "{context}: the header names the frame and its set");
    let (mut hits, mut found, mut members) = (0, 0, 0);
    for (q, result) in cpu.results.iter().enumerate().take(READ_QUERIES as usize) {
        let context = format!("{context}, query {q}");
        match result {
            QueryResult::Point(pick) | QueryResult::Radius { result: pick, .. } => {
                assert_hit_equals(&seen.hits[q], pick, &context);
                hits += 1;
                found += usize::from(pick.hit.is_some());
            }
            QueryResult::Rect(rect) => {
                assert_eq!(seen.hits[q].flags, 0, "{context}: a rectangle has no hit");
                for (k, key) in probes.iter().enumerate() {
                    let member = seen.bits[k] & (1 << (8 + q)) != 0;
                    assert_eq!(member, rect.objects.iter().any(|o| key_of(o.id, o.instance) == *key), "{context}: membership of {key:?}");
                    members += usize::from(member);
                }
            }
        }
    }
    for (k, key) in probes.iter().enumerate() {
        let hovered = cpu.results.iter().filter_map(QueryResult::pick).any(|p| p.hit.as_ref().is_some_and(|h| key_of(h.id, h.instance) == *key));
        assert_eq!(seen.bits[k] & HOVERED_BIT != 0, hovered, "{context}: pick_is_hovered({key:?})");
    }
    (hits, found, members)
}

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
    pass: StorageCompute,
    probes: HostBuffer,
    out: HostBuffer,
    capacity: u32,
}

fn compile() -> Vec<u8> {
    let compiler = shaderc::Compiler::new().expect("shaderc");
    let mut options = shaderc::CompileOptions::new().expect("shaderc options");
    options.set_target_env(shaderc::TargetEnv::Vulkan, shaderc::EnvVersion::Vulkan1_0 as u32);
    options.set_include_callback(|name, _, _, _| {
        assert_eq!(name, "pick_results.glsl", "the only include");
        Ok(shaderc::ResolvedInclude { resolved_name: name.into(), content: GPU_RESULTS_GLSL.into() })
    });
    let artifact = compiler.compile_into_spirv(SHADER, shaderc::ShaderKind::Compute, "reader.comp", "main", Some(&options)).expect("the include compiles");
    artifact.as_binary_u8().to_vec()
}

impl ResultsReader {
    /// A reader for up to `capacity` probes.
    pub fn new(ctx: &VulkanContext, capacity: u32) -> ResultsReader {
        let device = ctx.device.clone();
        let storage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let probes = ctx.host_buffer(12 * u64::from(capacity.max(1)), storage).expect("probe buffer");
        let out = ctx.host_buffer(4 * (72 + u64::from(capacity.max(1))), storage).expect("output buffer");
        // SAFETY: the reader compiled above: three storage buffers, 4 push bytes.
        let pass = unsafe { StorageCompute::new(&device, &compile(), 3, 4) }.expect("reader pipeline");
        ResultsReader { device, pass, probes, out, capacity }
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
            let whole = |buffer| vk::DescriptorBufferInfo { buffer, offset: 0, range: vk::WHOLE_SIZE };
            self.pass.write(&[results, whole(self.probes.buffer), whole(self.out.buffer)]);
            let groups = (probes.len() as u32).max(READ_QUERIES).div_ceil(64);
            self.pass.dispatch(cmd, &(probes.len() as u32).to_ne_bytes(), groups);
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
