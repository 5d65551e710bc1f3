//! The rectangle pass: a tile-sized target of (table entry, depth bits) with depth, the
//! pipelines that draw into it (`Visible`: depth-tested; `All`: table atomics, no depth
//! test), the compute pipeline that reduces a `Visible` tile into the table, and the table:
//! per entry (a recorded draw's instance) a pixel or fragment count, the nearest depth key
//! and the first pixel. Only the table's used entries are copied back.

use crate::error::PickError;
use crate::gpu::{GpuBuffer, GpuImage, Memory, Owned};
use crate::pass::compute::{compute_pipeline, destroy_pool, destroy_set_layout, ComputePipeline};
use crate::pass::pipeline::Pipelines;
use crate::pass::pipeline_key::{Flavour, PipelineLimits};
use crate::pass::render_pass::DEPTH_FORMAT;
use crate::pass::rendering::{AttachmentShape, Dependency, Pass, PassAttachments, PassShape, Rendering, ATTACHMENT_STAGES};
use crate::pass::spirv;
use ash::vk;
use gpu_allocator::MemoryLocation;

/// (entry + 1, depth bits) per pixel.
pub(crate) const ENTRY_FORMAT: vk::Format = vk::Format::R32G32_UINT;

/// Everything the rectangle queries use; shared by every slot (one queue).
pub(crate) struct RectKit {
    // Fields drop in order: pipelines and framebuffer before what they were made for.
    pub visible: Pipelines,
    /// Entries, then depth.
    pub attachments: PassAttachments,
    pub all: Option<Pipelines>,
    pub reduce: Owned<vk::Pipeline>,
    pub reduce_layout: Owned<vk::PipelineLayout>,
    _reduce_module: Owned<vk::ShaderModule>,
    pub set: vk::DescriptorSet,
    _pool: Owned<vk::DescriptorPool>,
    _set_layout: Owned<vk::DescriptorSetLayout>,
    pub pass: Pass,
    pub table: GpuBuffer,
    pub tile: vk::Extent2D,
    /// Entries the table holds.
    pub capacity: u32,
}

impl RectKit {
    /// `select_through`: the host enabled fragmentStoresAndAtomics, so `All` pipelines exist.
    /// `max_push_constants`: the device's limit (hooked pipelines need more).
    pub fn new(
        memory: &Memory,
        tile: vk::Extent2D,
        capacity: u32,
        rendering: &Rendering,
        select_through: bool,
        instance_set_layout: vk::DescriptorSetLayout,
        pipeline_limits: PipelineLimits,
    ) -> Result<Self, PickError> {
        let entries_image = GpuImage::new(
            memory,
            "rectangle entries",
            ENTRY_FORMAT,
            tile,
            vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::STORAGE,
            vk::ImageAspectFlags::COLOR,
        )?;
        let depth = GpuImage::new(memory, "rectangle depth", DEPTH_FORMAT, tile, vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT, vk::ImageAspectFlags::DEPTH)?;
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::TRANSFER_DST | vk::BufferUsageFlags::TRANSFER_SRC;
        let table = GpuBuffer::new(memory, "rectangle table", 12 * u64::from(capacity.max(1)), usage, MemoryLocation::GpuOnly)?;
        let entries_view = entries_image.view;
        let pass = Pass::new(memory, shape(), rendering)?;
        let attachments = pass.attachments(memory, vec![entries_image, depth], tile)?;
        let (set_layout, pool, set) = table_set(memory, &table, entries_view)?;
        let pipelines = |flavour| Pipelines::new(memory, pass.pipeline_target(), flavour, Some(set_layout.handle), instance_set_layout, pipeline_limits);
        let visible = pipelines(Flavour::RectVisible)?;
        let all = if select_through { Some(pipelines(Flavour::RectAll)?) } else { None };
        let (reduce, reduce_layout, reduce_module) = reduce_pipeline(memory, set_layout.handle)?;
        Ok(RectKit {
            visible,
            attachments,
            all,
            reduce,
            reduce_layout,
            _reduce_module: reduce_module,
            set,
            _pool: pool,
            _set_layout: set_layout,
            pass,
            table,
            tile,
            capacity,
        })
    }

    /// Bytes held: the tile's attachments and the table.
    pub fn bytes(&self) -> u64 {
        self.attachments.bytes() + self.table.bytes()
    }

    /// Clears the table's first `used` entries (counts to 0, depth and pixel keys to the
    /// maximum), ordered after the previous frame's use and before this frame's shaders.
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass; `used` is within the table's capacity.
    pub unsafe fn record_clear(&self, device: &ash::Device, cmd: vk::CommandBuffer, used: u64) {
        let shaders = vk::PipelineStageFlags::FRAGMENT_SHADER | vk::PipelineStageFlags::COMPUTE_SHADER;
        let before = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE);
        let after = vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE);
        let n = 4 * u64::from(self.capacity);
        let bytes = 4 * used;
        // SAFETY: the caller's contract; the ranges lie inside the table.
        unsafe {
            device.cmd_pipeline_barrier(
                cmd,
                shaders | vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &[before],
                &[],
                &[],
            );
            if bytes > 0 {
                device.cmd_fill_buffer(cmd, self.table.buffer, 0, bytes, 0);
                device.cmd_fill_buffer(cmd, self.table.buffer, n, bytes, u32::MAX);
                device.cmd_fill_buffer(cmd, self.table.buffer, 2 * n, bytes, u32::MAX);
            }
            device.cmd_pipeline_barrier(cmd, vk::PipelineStageFlags::TRANSFER, shaders, vk::DependencyFlags::empty(), &[after], &[], &[]);
        }
    }
}

/// The rectangle pass. The entries end in GENERAL for the reduce pass; depth is not kept.
fn shape() -> PassShape {
    let attachment_access =
        vk::AccessFlags::COLOR_ATTACHMENT_WRITE | vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_WRITE | vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_READ;
    let shaders = vk::PipelineStageFlags::FRAGMENT_SHADER | vk::PipelineStageFlags::COMPUTE_SHADER;
    PassShape {
        name: "rectangle pass",
        colors: vec![AttachmentShape { format: ENTRY_FORMAT, store: true, final_layout: vk::ImageLayout::GENERAL }],
        depth: AttachmentShape { format: DEPTH_FORMAT, store: false, final_layout: vk::ImageLayout::DEPTH_STENCIL_ATTACHMENT_OPTIMAL },
        // The previous tile's reduce read the entries and wrote the table; the table was
        // cleared by transfers: all of it before this tile's attachments and atomics.
        before: Dependency {
            src_stages: ATTACHMENT_STAGES | shaders | vk::PipelineStageFlags::TRANSFER,
            src_access: attachment_access | vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE,
            dst_stages: ATTACHMENT_STAGES | vk::PipelineStageFlags::FRAGMENT_SHADER,
            dst_access: attachment_access | vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE,
        },
        // This tile's entries and table writes before the reduce and the table's copy.
        after: Dependency {
            src_stages: ATTACHMENT_STAGES | vk::PipelineStageFlags::FRAGMENT_SHADER,
            src_access: attachment_access | vk::AccessFlags::SHADER_WRITE,
            dst_stages: shaders | vk::PipelineStageFlags::TRANSFER,
            dst_access: vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_READ,
        },
    }
}

/// The table's descriptor set (binding 0: the table, for the rectangle passes and the
/// reduction; binding 1: the entries image, for the reduction), its layout and pool.
fn table_set(
    memory: &Memory,
    table: &GpuBuffer,
    entries_view: vk::ImageView,
) -> Result<(Owned<vk::DescriptorSetLayout>, Owned<vk::DescriptorPool>, vk::DescriptorSet), PickError> {
    let device = &memory.device;
    let bindings = [
        vk::DescriptorSetLayoutBinding::default()
            .binding(0)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(1)
            .stage_flags(vk::ShaderStageFlags::FRAGMENT | vk::ShaderStageFlags::COMPUTE),
        vk::DescriptorSetLayoutBinding::default()
            .binding(1)
            .descriptor_type(vk::DescriptorType::STORAGE_IMAGE)
            .descriptor_count(1)
            .stage_flags(vk::ShaderStageFlags::COMPUTE),
    ];
    // SAFETY: valid create infos on a live device; each object is owned right away.
    let set_layout = unsafe {
        let handle = device.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings), None)?;
        Owned::new(device, handle, destroy_set_layout)
    };
    let sizes = [
        vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: 1 },
        vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_IMAGE, descriptor_count: 1 },
    ];
    // SAFETY: as above.
    let pool = unsafe {
        let handle = device.create_descriptor_pool(&vk::DescriptorPoolCreateInfo::default().max_sets(1).pool_sizes(&sizes), None)?;
        Owned::new(device, handle, destroy_pool)
    };
    let layouts = [set_layout.handle];
    // SAFETY: the pool has room for this one set.
    let set = unsafe { device.allocate_descriptor_sets(&vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool.handle).set_layouts(&layouts)) }?
        .first()
        .copied()
        .unwrap_or_default();
    let buffer_info = [vk::DescriptorBufferInfo { buffer: table.buffer, offset: 0, range: vk::WHOLE_SIZE }];
    let image_info = [vk::DescriptorImageInfo { sampler: vk::Sampler::null(), image_view: entries_view, image_layout: vk::ImageLayout::GENERAL }];
    let writes = [
        vk::WriteDescriptorSet::default().dst_set(set).dst_binding(0).descriptor_type(vk::DescriptorType::STORAGE_BUFFER).buffer_info(&buffer_info),
        vk::WriteDescriptorSet::default().dst_set(set).dst_binding(1).descriptor_type(vk::DescriptorType::STORAGE_IMAGE).image_info(&image_info),
    ];
    // SAFETY: the set, buffer and view are live; nothing uses the set yet.
    unsafe { device.update_descriptor_sets(&writes, &[]) };
    Ok((set_layout, pool, set))
}

/// The reduction's compute pipeline, its layout (the table's set, 32 bytes of push words) and
/// module.
fn reduce_pipeline(memory: &Memory, set_layout: vk::DescriptorSetLayout) -> Result<ComputePipeline, PickError> {
    compute_pipeline(memory, &[set_layout], 32, (spirv::RECT_REDUCE_COMP, &[]), "rect_reduce.comp", "rectangle reduce")
}
