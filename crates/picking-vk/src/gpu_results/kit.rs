//! What the GPU results take, made once at creation from the configuration: per slot the
//! results buffer the host's shaders read, the upload buffer recording writes (query jobs,
//! draw rows, rectangle entry keys) and a device-local mirror of the staging slot (the frame's
//! copies land there, the compute pass reads them without crossing the bus, and one copy
//! moves them into the staging slot), and the compute pipeline that fills the results.

use super::layout::ResultsLayout;
use crate::error::{PickError, Requirement};
use crate::gpu::{GpuBuffer, Memory, Owned};
use crate::pass::compute::{compute_pipeline, destroy_pool, destroy_set_layout};
use crate::pass::pipeline::spirv;
use ash::vk;
use gpu_allocator::MemoryLocation;

/// Bytes of the compute pass's push constants: three uvec4.
pub(super) const PUSH_BYTES: u32 = 48;

/// One slot's buffers and the descriptor set that binds them.
pub(crate) struct ResultSlot {
    pub results: GpuBuffer,
    pub upload: GpuBuffer,
    /// Laid out as the staging slot.
    pub mirror: GpuBuffer,
    pub set: vk::DescriptorSet,
}

pub(crate) struct GpuResultsKit {
    // Fields drop in order: the pipeline before its layout, the sets with their pool.
    pub pipeline: Owned<vk::Pipeline>,
    pub pipeline_layout: Owned<vk::PipelineLayout>,
    _module: Owned<vk::ShaderModule>,
    pub slots: Vec<ResultSlot>,
    _pool: Owned<vk::DescriptorPool>,
    _set_layout: Owned<vk::DescriptorSetLayout>,
    pub layout: ResultsLayout,
}

impl GpuResultsKit {
    /// Buffers for `slots` slots sized by `layout`, mirrors of `slot_bytes` (a staging slot's).
    pub fn new(memory: &Memory, layout: ResultsLayout, slots: usize, slot_bytes: u64) -> Result<Self, PickError> {
        let (set_layout, pool, sets) = sets(memory, slots)?;
        let mut made = Vec::with_capacity(slots);
        for set in sets {
            // TRANSFER_SRC: a host may copy the results out (for a debug view, or a test).
            let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::TRANSFER_SRC;
            let results = GpuBuffer::new(memory, "gpu results", layout.results_bytes(), usage, MemoryLocation::GpuOnly)?;
            let upload = GpuBuffer::new(memory, "gpu results upload", layout.upload_bytes(), vk::BufferUsageFlags::STORAGE_BUFFER, MemoryLocation::CpuToGpu)?;
            // Host writes reach the device at submission only on coherent memory.
            if !upload.is_coherent() {
                return Err(PickError::Unsupported { missing: vec![Requirement::Memory("host-coherent memory for the GPU results' upload buffer")] });
            }
            let mirror = GpuBuffer::new(memory, "gpu results texels", slot_bytes, usage, MemoryLocation::GpuOnly)?;
            let infos = [
                [vk::DescriptorBufferInfo { buffer: mirror.buffer, offset: 0, range: vk::WHOLE_SIZE }],
                [vk::DescriptorBufferInfo { buffer: results.buffer, offset: 0, range: vk::WHOLE_SIZE }],
                [vk::DescriptorBufferInfo { buffer: upload.buffer, offset: 0, range: vk::WHOLE_SIZE }],
            ];
            let writes: Vec<_> = (0..3)
                .map(|b| {
                    vk::WriteDescriptorSet::default()
                        .dst_set(set)
                        .dst_binding(b)
                        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                        .buffer_info(&infos[b as usize])
                })
                .collect();
            // SAFETY: the set and buffers are live; nothing uses the set yet.
            unsafe { memory.device.update_descriptor_sets(&writes, &[]) };
            made.push(ResultSlot { results, upload, mirror, set });
        }
        let (pipeline, pipeline_layout, module) =
            compute_pipeline(memory, set_layout.handle, PUSH_BYTES, spirv::PICK_RESULTS_COMP, "pick_results.comp", "gpu results")?;
        Ok(GpuResultsKit { pipeline, pipeline_layout, _module: module, slots: made, _pool: pool, _set_layout: set_layout, layout })
    }

    /// Slot `slot`'s mapped upload buffer, for the frame being recorded there.
    pub fn upload_mut(&mut self, slot: usize) -> Option<&mut [u8]> {
        self.slots.get_mut(slot)?.upload.mapped_mut()
    }

    /// Slot `slot`'s mirror of its staging slot.
    pub fn mirror(&self, slot: usize) -> Option<vk::Buffer> {
        self.slots.get(slot).map(|s| s.mirror.buffer)
    }

    /// Bytes held: every slot's results, upload and mirror buffers.
    pub fn bytes(&self) -> u64 {
        self.slots.iter().map(|s| s.results.bytes() + s.upload.bytes() + s.mirror.bytes()).sum()
    }
}

type Sets = (Owned<vk::DescriptorSetLayout>, Owned<vk::DescriptorPool>, Vec<vk::DescriptorSet>);

/// The set layout (binding 0 the slot's mirror, 1 the results, 2 the upload; all storage
/// buffers for the compute stage), its pool and a set per slot.
fn sets(memory: &Memory, slots: usize) -> Result<Sets, PickError> {
    let device = &memory.device;
    let bindings: Vec<_> = (0..3)
        .map(|b| {
            vk::DescriptorSetLayoutBinding::default()
                .binding(b)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
        })
        .collect();
    // SAFETY: valid create infos on a live device; each object is owned right away.
    let set_layout = unsafe {
        let handle = device.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings), None)?;
        Owned::new(device, handle, destroy_set_layout)
    };
    let count = slots as u32;
    let sizes = [vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: 3 * count }];
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
