//! Creating a [`Picker`]: checking the device and the host's features against what the
//! configuration asks for, then sizing the targets, the rectangle kit, the staging ring and
//! the batch rows once, from the configuration alone.

use super::frame_layout::FrameLayout;
use super::{Picker, Slot};
use crate::error::{Input, PickError, Requirement};
use crate::gpu::{Memory, Owned};
use crate::gpu_plan::layout::{bit_words, PlanLayout, RowsLayout, MESA_FALLBACK_COUNT, VENDOR_ID_MESA};
use crate::gpu_plan::{finish_group, GpuPlanKit, TableLimits};
use crate::gpu_results::layout::{results_group, ResultsLayout, MAX_GPU_RADIUS, RESULTS_SHARED_BYTES};
use crate::gpu_results::{GpuResultsKit, SharedInputs};
use crate::host::config::{DetailMode, DetailStatus, PassRendering, PickerConfig, Planner, MAX_FRAMES_IN_FLIGHT};
use crate::host::features::{PickFeatures, PickSupport};
use crate::host::HostDevice;
use crate::pass::rect::RectKit;
use crate::pass::rendering::Rendering;
use crate::pass::targets::PassTargets;
use crate::pass::{PassKit, PassLayout};
use crate::plan::Plan;
use crate::readback::{RegionBlock, StagingRing, HEADER_BYTES, TIMESTAMPS_PER_SLOT};
use crate::record::batch::DrawBatchBuffer;
use crate::request::viewport::ViewportLimits;
use ash::vk;

/// Timestamp queries around each slot's pass and copy.
pub(super) struct Timestamps {
    pub(super) pool: Owned<vk::QueryPool>,
    pub(super) period_ns: f64,
    pub(super) mask: u64,
}

/// # Safety
/// `pool` is a query pool of `device` that the GPU no longer uses.
unsafe fn destroy_query_pool(device: &ash::Device, pool: vk::QueryPool) {
    // SAFETY: the caller's contract.
    unsafe { device.destroy_query_pool(pool, None) };
}

impl Picker {
    /// Creates the picker's render passes, targets (sized by `config`), pipelines and staging
    /// ring.
    ///
    /// # Safety
    /// - `host.device` was created from `host.physical_device` of `host.instance`, with at
    ///   least one queue of `host.queue_family_index`, and all three outlive the picker; the
    ///   instance was created with `host.instance_api_version`.
    /// - `host.features` were enabled at device creation, through
    ///   [`crate::DeviceFeatures`] (or the same extensions and features by hand).
    /// - A shared allocator was created for this same device.
    /// - `host.pipeline_cache` is null or a pipeline cache of this device that outlives the
    ///   picker and that no other thread uses while the picker is called.
    /// - `host.debug_utils` is true only where the instance enabled `VK_EXT_debug_utils`; then,
    ///   while the picker lives, no other device of the process is destroyed on another thread
    ///   while this picker is created or called (object naming walks the Vulkan loader's
    ///   device list, which `vkDestroyDevice` frees under it: Vulkan-Loader#2018).
    /// - The picker is dropped only once the GPU has finished every command buffer it recorded into.
    pub unsafe fn new(host: HostDevice<'_>, config: PickerConfig) -> Result<Self, PickError> {
        if !(1..=MAX_FRAMES_IN_FLIGHT).contains(&config.frames_in_flight) {
            let reason = format!("must be 1 to {MAX_FRAMES_IN_FLIGHT}, not {}", config.frames_in_flight);
            return Err(PickError::InvalidInput { input: Input::Config("frames_in_flight"), reason });
        }
        // SAFETY: the caller guarantees the physical device belongs to the instance.
        let support = unsafe { PickSupport::query(host.instance, host.instance_api_version, host.physical_device) };
        // SAFETY: as above.
        let (detail_status, timestamp_bits) = unsafe { check_host(&host, &config, &support) }?;
        // SAFETY: the device belongs to the instance (the caller's contract).
        let rendering = unsafe { Rendering::load(host.instance, host.device, config.rendering == PassRendering::Dynamic, support.dynamic_rendering_core()) }?;
        // SAFETY: as above.
        let properties = unsafe { host.instance.get_physical_device_properties(host.physical_device) };
        let (limits, properties_vendor) = (properties.limits, properties.vendor_id);
        let layout = PassLayout { detail: detail_status == DetailStatus::Active, sampled: config.gpu_results };
        let batching = host.features.contains(PickFeatures::BATCHING) && config.batch_rows > 0;
        // SAFETY: the caller's contract is `Memory::new`'s.
        let mut memory = unsafe { Memory::new(host.instance, host.device, host.physical_device, host.allocator.as_ref(), host.debug_utils) }?;
        memory.pipeline_cache = host.pipeline_cache;
        let draw_limits = host.draw_limits(&limits);
        let mut kit = PassKit::new(&memory, &limits, layout, &rendering, batching, draw_limits)?;
        kit.pipelines.set_limit(config.max_pipelines);
        let max_queries = config.max_queries.max(1);
        let cell = query_cell(&config, &limits)?;
        // Points side by side in row 0 (one copy takes them all), then a cell per radius query.
        let atlas = vk::Extent2D { width: (cell + 1) * max_queries, height: cell };
        let targets = PassTargets::new(&memory, &kit.pass, layout, atlas)?;
        let select_through = host.features.contains(PickFeatures::SELECT_THROUGH);
        let pipeline_limits = crate::pass::pipeline_key::PipelineLimits::of(&limits, draw_limits.wide_lines);
        let rect = rect_kit(&memory, &config, &limits, &rendering, select_through, kit.instance_sets.layout.handle, pipeline_limits)?;
        let cell_bytes = RegionBlock::bytes(u64::from(cell) * u64::from(cell), layout.detail);
        let slot_bytes = HEADER_BYTES + u64::from(max_queries) * cell_bytes + 12 * u64::from(config.rect_entries);
        let staging = StagingRing::new(&memory, config.frames_in_flight, slot_bytes, limits.non_coherent_atom_size)?;
        let gpu_results = gpu_results_kit(&memory, &config, &limits, max_queries, (&targets, &staging), rect.as_ref(), layout.detail)?;
        let gpu_plan = gpu_plan_kit(&memory, &config, (host.features, properties_vendor, &limits), &mut kit)?;
        // `Planner::Gpu`: the CPU leaves the instances the GPU plan takes to it.
        let gpu_instances = gpu_plan.is_some() && config.planner == Planner::Gpu;
        let mut slots: Vec<Slot> = (0..config.frames_in_flight).map(|_| Slot::default()).collect();
        if batching {
            for slot in &mut slots {
                slot.batch = Some(DrawBatchBuffer::new(&memory, config.batch_rows)?);
            }
            kit.batch_rows = config.batch_rows;
        }
        // SAFETY: the device is live (the caller's contract).
        let timestamps = unsafe { timestamps(&host, &memory, &config, &limits, timestamp_bits) }?;
        Ok(Picker {
            slots,
            gpu_results,
            gpu_plan,
            gpu_pairs: Default::default(),
            table: None,
            frame_table: None,
            table_claimed: vec![],
            planner: config.planner,
            staging,
            targets,
            rect,
            timestamps,
            kit,
            detail_status,
            culling: config.culling,
            plan: Plan::leaving_instances_to_gpu(gpu_instances),
            next_frame: 0,
            device_lost: false,
            validated_shared: None,
            viewport_limits: ViewportLimits::of(&limits, support.negative_viewport_height()),
            cell,
            max_queries,
            max_radius: config.max_radius,
            select_through,
            layout: FrameLayout::default(),
            entry_map: vec![],
            read_buffer: vec![],
            core_timeline_wait: support.core_timeline_wait(),
            contributor_ids: Vec::new(),
            disabled_stages: host.disabled_stages(),
        })
    }
}

/// Checks the host's device and stated features against what `config` asks for; returns the
/// detail status and the queue family's timestamp bits. Every unmet requirement is named.
///
/// # Safety
/// The host's physical device was enumerated from its live instance.
unsafe fn check_host(host: &HostDevice<'_>, config: &PickerConfig, support: &PickSupport) -> Result<(DetailStatus, u32), PickError> {
    // The host's claim is checked against the device: a feature it cannot have enabled is an error.
    let mut missing = support.missing(host.features);
    // And against what the host says it enabled: a core feature it forgot is an error too.
    if let Some(enabled) = &host.enabled_core {
        for r in crate::host::features::missing_core(host.features, enabled) {
            if !missing.contains(&r) {
                missing.push(r);
            }
        }
    }
    // SAFETY: the caller's contract.
    let families = unsafe { host.instance.get_physical_device_queue_family_properties(host.physical_device) };
    let family = families.get(host.queue_family_index as usize);
    if !family.is_some_and(|f| f.queue_flags.contains(vk::QueueFlags::GRAPHICS)) {
        missing.push(Requirement::QueueFamily { index: host.queue_family_index, capability: "graphics" });
    }
    // The picker records dispatches too (rectangles' reduction, GPU results, the GPU plan);
    // Vulkan allows a family with graphics and without compute.
    if !family.is_some_and(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE)) {
        missing.push(Requirement::QueueFamily { index: host.queue_family_index, capability: "compute" });
    }
    let timestamp_bits = family.map_or(0, |f| f.timestamp_valid_bits);
    if config.timestamps && timestamp_bits == 0 {
        missing.push(Requirement::QueueFamily { index: host.queue_family_index, capability: "timestamp queries" });
    }
    let detail_status = DetailStatus::resolve(config.detail, support, host.features);
    if let (DetailMode::Required, DetailStatus::Unavailable { missing: gaps }) = (config.detail, &detail_status) {
        missing.extend(gaps.iter().cloned());
    }
    if config.rendering == PassRendering::Dynamic && !host.features.contains(PickFeatures::DYNAMIC_RENDERING) {
        missing.extend(support.missing(PickFeatures::DYNAMIC_RENDERING));
        if missing.is_empty() {
            // Offered, but the host did not say it enabled it.
            missing.push(Requirement::Feature("dynamicRendering (enabled, and PickFeatures::DYNAMIC_RENDERING in HostDevice::features)"));
        }
    }
    if config.gpu_results {
        let detail = detail_status == DetailStatus::Active;
        // SAFETY: the caller's contract.
        missing.extend(unsafe { crate::pass::sampled_formats_missing(host.instance, host.physical_device, detail) });
    }
    if !missing.is_empty() {
        return Err(PickError::Unsupported { missing });
    }
    Ok((detail_status, timestamp_bits))
}

/// The side of a radius query's cell, `2 * max_radius + 1`, if `max_queries` cells and the
/// points row fit the device's framebuffers.
fn query_cell(config: &PickerConfig, limits: &vk::PhysicalDeviceLimits) -> Result<u32, PickError> {
    let max_queries = config.max_queries.max(1);
    let fits = |c: &u32| (u64::from(*c) + 1) * u64::from(max_queries) <= u64::from(limits.max_framebuffer_width) && *c <= limits.max_framebuffer_height;
    config.max_radius.checked_mul(2).and_then(|c| c.checked_add(1)).filter(fits).ok_or_else(|| {
        let side = u64::from(config.max_radius) * 2 + 1;
        let needed = format!("{max_queries} query cells of {side}x{side} pixels (PickerConfig::max_queries and max_radius)");
        PickError::Unsupported { missing: vec![Requirement::Limit { name: "maxFramebufferWidth/Height", needed }] }
    })
}

/// The GPU results' buffers and pass, when `config` asks for them: they read `targets` and
/// `rect`'s table.
fn gpu_results_kit(
    memory: &Memory,
    config: &PickerConfig,
    limits: &vk::PhysicalDeviceLimits,
    max_queries: u32,
    (targets, staging): (&PassTargets, &StagingRing),
    rect: Option<&RectKit>,
    detail: bool,
) -> Result<Option<GpuResultsKit>, PickError> {
    if !config.gpu_results {
        return Ok(None);
    }
    if config.max_radius > MAX_GPU_RADIUS {
        let reason = format!("at most {MAX_GPU_RADIUS} with gpu_results (one workgroup resolves a disc), not {}", config.max_radius);
        return Err(PickError::InvalidInput { input: Input::Config("max_radius"), reason });
    }
    if limits.max_compute_shared_memory_size < RESULTS_SHARED_BYTES {
        let needed = format!("{RESULTS_SHARED_BYTES} bytes for the GPU results pass (PickerConfig::gpu_results)");
        return Err(PickError::Unsupported { missing: vec![Requirement::Limit { name: "maxComputeSharedMemorySize", needed }] });
    }
    let entries = if rect.is_some() { config.rect_entries } else { 0 };
    let layout = ResultsLayout::new(max_queries, entries, config.gpu_result_draws);
    storage_range(limits, layout.bytes(), "the GPU results buffer (PickerConfig::max_queries, rect_entries, gpu_result_draws)")?;
    storage_range(limits, staging.slot_stride(), "a staging slot the GPU results pass writes (PickerConfig::max_queries, max_radius, rect_entries)")?;
    let inputs = SharedInputs { targets, staging, detail };
    let group = results_group(config.max_radius, limits.max_compute_work_group_invocations, limits.max_compute_work_group_size[0]);
    Ok(Some(GpuResultsKit::new(memory, layout, config.frames_in_flight, inputs, group)?))
}

/// The GPU planner's buffers and cull pass, when `config` asks for a planner other than the
/// CPU's with culling on, and the host enabled what its indirect draws need (`Planner::Gpu`
/// fails without it, `Planner::Auto` plans on the CPU). `kit`'s pipelines learn the plan
/// buffer's set for walked pairs.
fn gpu_plan_kit(
    memory: &Memory,
    config: &PickerConfig,
    (features, vendor_id, limits): (PickFeatures, u32, &vk::PhysicalDeviceLimits),
    kit: &mut PassKit,
) -> Result<Option<GpuPlanKit>, PickError> {
    if config.planner == Planner::Cpu || !config.culling {
        return Ok(None);
    }
    if !(1..=65_535).contains(&config.gpu_plan_pairs) {
        let reason = format!("must be 1 to 65535 (a row of cull workgroups each), not {}", config.gpu_plan_pairs);
        return Err(PickError::InvalidInput { input: Input::Config("gpu_plan_pairs"), reason });
    }
    if !(1..=MAX_GPU_PLAN_COMMANDS).contains(&config.gpu_plan_commands) {
        let reason = format!("must be 1 to {MAX_GPU_PLAN_COMMANDS}, not {}", config.gpu_plan_commands);
        return Err(PickError::InvalidInput { input: Input::Config("gpu_plan_commands"), reason });
    }
    if !(1..=1 << 31).contains(&config.gpu_plan_instances) {
        let reason = format!("must be 1 to 2^31, not {}", config.gpu_plan_instances);
        return Err(PickError::InvalidInput { input: Input::Config("gpu_plan_instances"), reason });
    }
    if config.gpu_plan_rows > MAX_GPU_PLAN_ROWS {
        let reason = format!("must be at most 2^22, not {}", config.gpu_plan_rows);
        return Err(PickError::InvalidInput { input: Input::Config("gpu_plan_rows"), reason });
    }
    let needed = PickFeatures::BATCHING | PickFeatures::INDIRECT_COUNT;
    if !features.contains(needed) {
        if config.planner == Planner::Auto {
            return Ok(None);
        }
        let missing = vec![
            Requirement::Feature("multiDrawIndirect and drawIndirectFirstInstance (PickFeatures::BATCHING) for Planner::Gpu"),
            Requirement::Feature("drawIndirectCount (PickFeatures::INDIRECT_COUNT) for Planner::Gpu"),
        ];
        return Err(PickError::Unsupported { missing });
    }
    let fallback_count = if vendor_id == VENDOR_ID_MESA { MESA_FALLBACK_COUNT } else { 1 };
    let bit_words = bit_words(config.gpu_plan_instances.div_ceil(64));
    // A shared list's plain draws: under `Planner::Auto` the table passes are built for the
    // first set that takes a table (`Picker::table_for`), sparing the hosts whose sets never
    // do the pipelines and the slots' rows.
    let draws = features.contains(PickFeatures::GPU_DRAW_PLANNING);
    let draws = if draws { config.gpu_plan_draws } else { 0 };
    let tables = TableLimits { draws, frame_rows: config.gpu_plan_rows, storage_range: limits.max_storage_buffer_range };
    let ignored_words = if tables.frame_rows > 0 { tables.draws.div_ceil(32) } else { 0 };
    let layout = PlanLayout { pairs: config.gpu_plan_pairs, commands: config.gpu_plan_commands, fallback_count, bit_words, ignored_words };
    storage_range(limits, layout.bytes(), "the GPU plan buffer (PickerConfig::gpu_plan_pairs, gpu_plan_commands, gpu_plan_instances)")?;
    if tables.draws > 0 && tables.frame_rows > 0 {
        let rows = RowsLayout::new(tables.frame_rows, config.gpu_plan_commands).bytes();
        storage_range(limits, rows, "a slot's GPU plan table rows (PickerConfig::gpu_plan_rows, gpu_plan_commands)")?;
    }
    let finish_group = finish_group(limits.max_compute_work_group_invocations, limits.max_compute_work_group_size[0]);
    let tables = (tables, config.planner == Planner::Gpu);
    let plan = GpuPlanKit::new(memory, layout, config.frames_in_flight, kit.instance_sets.layout.handle, tables, finish_group)?;
    // Walked pairs' pipelines bind the plan buffer's set.
    kit.pipelines.enable_walk(plan.set_layout())?;
    Ok(Some(plan))
}

/// Refuses a buffer the picker binds as one storage buffer that the device cannot bind so:
/// `maxStorageBufferRange` is 2^27 bytes at the least (desktop drivers allow 2^31 or more).
fn storage_range(limits: &vk::PhysicalDeviceLimits, bytes: u64, what: &str) -> Result<(), PickError> {
    if bytes > u64::from(limits.max_storage_buffer_range) {
        let needed = format!("{bytes} bytes for {what}");
        return Err(PickError::Unsupported { missing: vec![Requirement::Limit { name: "maxStorageBufferRange", needed }] });
    }
    Ok(())
}

/// The most table rows a frame may draw: a slot's rows stay within 320 MiB.
const MAX_GPU_PLAN_ROWS: u32 = 1 << 22;

/// The most commands a GPU plan may hold: its buffer's words stay within 32 bits.
const MAX_GPU_PLAN_COMMANDS: u32 = 1 << 26;

/// The rectangle pass's kit, when `config` turns rectangles on (table entries and a tile).
fn rect_kit(
    memory: &Memory,
    config: &PickerConfig,
    limits: &vk::PhysicalDeviceLimits,
    rendering: &Rendering,
    select_through: bool,
    instance_sets: vk::DescriptorSetLayout,
    pipeline_limits: crate::pass::pipeline_key::PipelineLimits,
) -> Result<Option<RectKit>, PickError> {
    let [tile_w, tile_h] = config.rect_tile;
    if config.rect_entries == 0 || tile_w == 0 || tile_h == 0 {
        return Ok(None);
    }
    if tile_w > limits.max_framebuffer_width || tile_h > limits.max_framebuffer_height {
        let needed = format!("rectangle tiles of {tile_w}x{tile_h} pixels (PickerConfig::rect_tile)");
        return Err(PickError::Unsupported { missing: vec![Requirement::Limit { name: "maxFramebufferWidth/Height", needed }] });
    }
    storage_range(limits, 12 * u64::from(config.rect_entries), "the rectangle table (PickerConfig::rect_entries)")?;
    let tile = vk::Extent2D { width: tile_w, height: tile_h };
    let mut kit = RectKit::new(memory, tile, config.rect_entries, rendering, select_through, instance_sets, pipeline_limits)?;
    kit.visible.set_limit(config.max_pipelines);
    if let Some(all) = kit.all.as_mut() {
        all.set_limit(config.max_pipelines);
    }
    Ok(Some(kit))
}

/// The timestamp pool, [`TIMESTAMPS_PER_SLOT`] queries a slot, when `config` asks for
/// timestamps.
///
/// # Safety
/// The host's device is live.
unsafe fn timestamps(
    host: &HostDevice<'_>,
    memory: &Memory,
    config: &PickerConfig,
    limits: &vk::PhysicalDeviceLimits,
    timestamp_bits: u32,
) -> Result<Option<Timestamps>, PickError> {
    if !config.timestamps {
        return Ok(None);
    }
    let info = vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(TIMESTAMPS_PER_SLOT * config.frames_in_flight as u32);
    // SAFETY: valid create info on the host's live device.
    let pool = unsafe { host.device.create_query_pool(&info, None) }?;
    memory.name(pool, "timestamps");
    // SAFETY: just created on this device, owned by nothing else.
    let pool = unsafe { Owned::new(host.device, pool, destroy_query_pool) };
    let mask = if timestamp_bits >= 64 { u64::MAX } else { (1u64 << timestamp_bits) - 1 };
    Ok(Some(Timestamps { pool, period_ns: f64::from(limits.timestamp_period), mask }))
}
