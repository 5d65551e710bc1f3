//! What the GPU results take, made once at creation from the configuration: per slot the
//! results buffer (device-local: the frame's commands write it, the host's shaders read it)
//! and its upload buffer (host-visible: what the CPU knows, written while recording, see
//! `upload`), and the compute pipeline that adds the point and radius hits. The pass reads
//! the frame's texels straight from the hit pass's attachments and writes them into the
//! staging slot, in place of copies.

use super::layout::ResultsLayout;
use crate::error::{PickError, Requirement};
use crate::gpu::{GpuBuffer, Memory, Owned};
use crate::pass::compute::{compute_pipeline, destroy_pool, destroy_set_layout};
use crate::pass::spirv;
use crate::pass::targets::PassTargets;
use crate::readback::{StagingRing, HEADER_BYTES};
use ash::vk;
use gpu_allocator::MemoryLocation;

/// Bytes of the compute pass's push constants: two uvec4.
pub(super) const PUSH_BYTES: u32 = 32;

/// Storage buffer bindings (0 the results, 1 the slot's texels in the staging ring, 2 the
/// upload), then the sampled attachments (3 ID, 4 (draw, instance), 5 depth, 6 detail).
const BUFFERS: u32 = 3;
const IMAGES: u32 = 4;

/// One slot's results buffer, its upload buffer and the descriptor set that binds it.
pub(crate) struct ResultSlot {
    pub results: GpuBuffer,
    /// The results buffer's layout too; only the CPU's words are written, and the results
    /// pass reads them.
    pub(super) upload: GpuBuffer,
    pub set: vk::DescriptorSet,
}

/// What the sets bind besides a slot's own buffers.
pub(crate) struct SharedInputs<'a> {
    /// The hit pass's attachments (sampled: `PassLayout::sampled`).
    pub targets: &'a PassTargets,
    /// The staging ring, whose slots' texels the queries pass writes.
    pub staging: &'a StagingRing,
    /// The pass has a detail attachment.
    pub detail: bool,
}

/// Words built on the CPU before they are written into a results buffer: the spans (as
/// recorded, then ordered by bucket), each span's bucket, the buckets' starts.
#[derive(Default)]
pub(crate) struct Scratch {
    pub spans: Vec<u32>,
    pub buckets: Vec<u32>,
    pub starts: Vec<u32>,
}

pub(crate) struct GpuResultsKit {
    // Fields drop in order: the pipeline before its layout, the sets with their pool.
    pub pipeline: Owned<vk::Pipeline>,
    pub pipeline_layout: Owned<vk::PipelineLayout>,
    _module: Owned<vk::ShaderModule>,
    pub slots: Vec<ResultSlot>,
    _pool: Owned<vk::DescriptorPool>,
    _set_layout: Owned<vk::DescriptorSetLayout>,
    _sampler: Owned<vk::Sampler>,
    pub layout: ResultsLayout,
    /// The texels include detail (the pass has a detail attachment).
    pub detail: bool,
    /// Scratch for the spans and the lookup, built on the CPU and written into the buffer at
    /// once (reading back write-combined memory would be slow, and one copy writes fastest).
    pub(super) scratch: Scratch,
    /// The regions the frame being recorded may write.
    pub(super) regions: Vec<vk::BufferCopy>,
}

impl GpuResultsKit {
    /// Buffers for `slots` slots sized by `layout`, their sets binding `inputs` too; the pass
    /// runs workgroups of `group` threads (`layout::results_group`).
    pub fn new(memory: &Memory, layout: ResultsLayout, slots: usize, inputs: SharedInputs<'_>, group: u32) -> Result<Self, PickError> {
        let sampler = sampler(memory)?;
        let (set_layout, pool, sets) = sets(memory, slots, sampler.handle)?;
        let mut made = Vec::with_capacity(slots);
        for (slot, set) in sets.into_iter().enumerate() {
            // TRANSFER_SRC: a host may copy the results out (for a debug view, or a test).
            let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::TRANSFER_SRC;
            let results = GpuBuffer::new(memory, "gpu results", layout.bytes(), usage, MemoryLocation::GpuOnly)?;
            // Read by the results pass, or copied (a set without one).
            let upload_usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_SRC;
            let upload = GpuBuffer::new(memory, "gpu results upload", layout.bytes(), upload_usage, MemoryLocation::CpuToGpu)?;
            // Host writes reach the device at submission only on coherent memory.
            if !upload.is_coherent() {
                return Err(PickError::Unsupported { missing: vec![Requirement::Memory("host-coherent memory for the GPU results' upload buffer")] });
            }
            let whole = |buffer| vk::DescriptorBufferInfo { buffer, offset: 0, range: vk::WHOLE_SIZE };
            // The slot's texels, not its header: the stamp and timestamps are written beside
            // the pass.
            let staging = inputs.staging;
            let texels = vk::DescriptorBufferInfo {
                buffer: staging.buffer(),
                offset: staging.slot_offset(slot) + HEADER_BYTES,
                range: staging.slot_stride() - HEADER_BYTES,
            };
            write_set(memory, set, [whole(results.buffer), texels, whole(upload.buffer)], &inputs);
            made.push(ResultSlot { results, upload, set });
        }
        let (pipeline, pipeline_layout, module) =
            compute_pipeline(memory, &[set_layout.handle], PUSH_BYTES, (spirv::PICK_RESULTS_COMP, &[group]), "pick_results.comp", "gpu results")?;
        let detail = inputs.detail;
        Ok(GpuResultsKit {
            pipeline,
            pipeline_layout,
            _module: module,
            slots: made,
            _pool: pool,
            _set_layout: set_layout,
            _sampler: sampler,
            layout,
            detail,
            scratch: Scratch::default(),
            regions: Vec::new(),
        })
    }

    /// Bytes held: every slot's results and upload buffers.
    pub fn bytes(&self) -> u64 {
        self.slots.iter().map(|s| s.results.bytes() + s.upload.bytes()).sum()
    }
}

/// Writes `set`: the storage buffers, then the attachments.
fn write_set(memory: &Memory, set: vk::DescriptorSet, buffers: [vk::DescriptorBufferInfo; BUFFERS as usize], inputs: &SharedInputs<'_>) {
    let buffers = buffers.map(|b| [b]);
    let images = inputs.targets.images();
    // Without detail the ID attachment stands in for it (never read).
    let detail = if inputs.detail { 2 } else { 0 };
    let sampled = [0, 1, images.len().saturating_sub(1), detail].map(|i| {
        let view = images.get(i).map_or(vk::ImageView::null(), |image| image.view);
        [vk::DescriptorImageInfo { sampler: vk::Sampler::null(), image_view: view, image_layout: inputs.targets.after_pass }]
    });
    let buffer_writes = (0..BUFFERS).map(|b| {
        let write = vk::WriteDescriptorSet::default().dst_set(set).dst_binding(b).descriptor_type(vk::DescriptorType::STORAGE_BUFFER);
        write.buffer_info(&buffers[b as usize])
    });
    let image_writes = (0..IMAGES).map(|i| {
        let write = vk::WriteDescriptorSet::default().dst_set(set).dst_binding(BUFFERS + i).descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER);
        write.image_info(&sampled[i as usize])
    });
    let writes: Vec<_> = buffer_writes.chain(image_writes).collect();
    // SAFETY: the set, buffers and views are live; nothing uses the set yet.
    unsafe { memory.device.update_descriptor_sets(&writes, &[]) };
}

/// # Safety
/// As [`destroy_set_layout`].
unsafe fn destroy_sampler(device: &ash::Device, handle: vk::Sampler) {
    // SAFETY: the caller's contract.
    unsafe { device.destroy_sampler(handle, None) };
}

/// The sampler of the attachments' descriptors: the pass only `texelFetch`es, so its filters
/// never apply.
fn sampler(memory: &Memory) -> Result<Owned<vk::Sampler>, PickError> {
    let info = vk::SamplerCreateInfo::default()
        .mag_filter(vk::Filter::NEAREST)
        .min_filter(vk::Filter::NEAREST)
        .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
        .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
        .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_EDGE)
        .address_mode_w(vk::SamplerAddressMode::CLAMP_TO_EDGE);
    // SAFETY: a valid create info on a live device, owned right away.
    unsafe {
        let handle = memory.device.create_sampler(&info, None)?;
        Ok(Owned::new(&memory.device, handle, destroy_sampler))
    }
}

type Sets = (Owned<vk::DescriptorSetLayout>, Owned<vk::DescriptorPool>, Vec<vk::DescriptorSet>);

/// The set layout (storage buffers, then the attachments with `sampler` immutable; all for
/// the compute stage), its pool and a set per slot.
fn sets(memory: &Memory, slots: usize, sampler: vk::Sampler) -> Result<Sets, PickError> {
    let device = &memory.device;
    let samplers = [sampler];
    let bindings: Vec<_> = (0..BUFFERS + IMAGES)
        .map(|b| {
            let binding = vk::DescriptorSetLayoutBinding::default().binding(b).descriptor_count(1).stage_flags(vk::ShaderStageFlags::COMPUTE);
            if b < BUFFERS {
                binding.descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            } else {
                binding.descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER).immutable_samplers(&samplers)
            }
        })
        .collect();
    // SAFETY: valid create infos on a live device; each object is owned right away.
    let set_layout = unsafe {
        let handle = device.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings), None)?;
        Owned::new(device, handle, destroy_set_layout)
    };
    let count = slots as u32;
    let sizes = [
        vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: BUFFERS * count },
        vk::DescriptorPoolSize { ty: vk::DescriptorType::COMBINED_IMAGE_SAMPLER, descriptor_count: IMAGES * count },
    ];
    // SAFETY: as above.
    let pool = unsafe {
        let handle = device.create_descriptor_pool(&vk::DescriptorPoolCreateInfo::default().max_sets(count).pool_sizes(&sizes), None)?;
        Owned::new(device, handle, destroy_pool)
    };
    let layouts = vec![set_layout.handle; slots];
    // SAFETY: the pool has room for one set per slot.
    let sets = unsafe { device.allocate_descriptor_sets(&vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool.handle).set_layouts(&layouts)) }?;
    Ok((set_layout, pool, sets))
}
