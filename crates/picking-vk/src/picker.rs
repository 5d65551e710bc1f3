//! [`Picker`]: records the 1x1 pick pass into the host's command buffers and resolves each
//! frame's result once the host says that frame's GPU work is done.

use crate::batch::DrawBatchBuffer;
use crate::cull::{PixelRay, Plan};
use crate::draw::PickDraw;
use crate::error::PickError;
use crate::features::DetailSupport;
use crate::kit::PassKit;
use crate::pass::{PassLayout, PassTargets};
use crate::readback::StagingRing;
use crate::record::{Framing, PassStats};
use crate::request::{DepthConvention, PickRequest};
use crate::resolve::{self, DrawSnapshot, PickResult, PickStats};
use crate::view_math::CameraSnapshot;
use ash::vk;
use glam::UVec2;
use gpu_allocator::vulkan::Allocator;
use std::sync::{Arc, Mutex};

/// Whether the picker should add the detail attachment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DetailMode {
    /// Basic picking only.
    #[default]
    Off,
    /// Add the detail attachment when the host enabled what it needs (see [`DetailSupport`]).
    IfEnabled,
}

/// Whether detail picking runs, and if not, why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DetailStatus {
    Active,
    NotRequested,
    Unavailable { missing: Vec<String> },
}

/// How the picker is set up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PickerConfig {
    /// Frames the host records ahead of the GPU: one readback slot each.
    pub frames_in_flight: usize,
    pub depth: DepthConvention,
    pub detail: DetailMode,
    /// Skip draws and instances whose bounds the pick ray misses (on by default; results are
    /// identical either way, only the cost differs).
    pub culling: bool,
    /// Measure the pick pass with timestamp queries (`PickResult::stats.gpu_time_ns`).
    pub timestamps: bool,
    /// Rows of per-draw data each slot holds for batched recording: runs of non-instanced
    /// draws that share their buffers become one indirect draw, when the host enabled the
    /// features for it (see [`HostDevice`]). Draws past this many in a pick are recorded one
    /// by one; 0 turns batching off. Results are identical either way, only the CPU cost
    /// differs. Each row takes 100 bytes per slot.
    pub batch_rows: u32,
}

impl Default for PickerConfig {
    fn default() -> Self {
        PickerConfig { frames_in_flight: 2, depth: DepthConvention::Standard, detail: DetailMode::Off, culling: true, timestamps: false, batch_rows: 32 }
    }
}

/// Timestamp queries around each slot's pass and copy.
struct Timestamps {
    pool: vk::QueryPool,
    period_ns: f64,
    mask: u64,
}

/// The host's Vulkan objects the picker works with.
#[derive(Clone)]
pub struct HostDevice<'a> {
    pub instance: &'a ash::Instance,
    pub device: &'a ash::Device,
    pub physical_device: vk::PhysicalDevice,
    /// Family of the queue the host submits pick command buffers to; it must support graphics.
    pub queue_family_index: u32,
    /// The host's allocator to share; `None` makes the picker create its own.
    pub allocator: Option<Arc<Mutex<Allocator>>>,
    /// The host enabled [`crate::detail_device_extensions`], `fragmentShaderBarycentric` and
    /// `geometryShader` at device creation.
    pub detail_features_enabled: bool,
    /// The host enabled `multiDrawIndirect` and `drawIndirectFirstInstance` at device creation
    /// (see [`crate::batching_supported`]): the picker may then batch draws.
    pub batching_features_enabled: bool,
}

/// Returned by [`Picker::record`]: which slot and frame the result will belong to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PickTicket {
    pub slot: usize,
    pub frame: u64,
    pub stats: PassStats,
}

/// Pick memory, in bytes as the driver sized it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PickMemory {
    pub attachments: u64,
    pub staging: u64,
    /// The batch buffers' rows and indirect commands: sized once by
    /// [`PickerConfig::batch_rows`], never by the window.
    pub draw_batches: u64,
}

impl PickMemory {
    pub fn total(&self) -> u64 {
        self.attachments + self.staging + self.draw_batches
    }
}

struct Pending {
    frame: u64,
    pixel: UVec2,
    camera: CameraSnapshot,
}

/// One slot per frame in flight: what was recorded there and is not yet resolved.
#[derive(Default)]
struct Slot {
    pending: Option<Pending>,
    stats: PassStats,
    /// Reused every frame, so recording allocates nothing once warm.
    draws: Vec<DrawSnapshot>,
    batch: Option<DrawBatchBuffer>,
}

/// Pixel-exact GPU picking in the host's own command buffers. See the crate docs.
pub struct Picker {
    kit: PassKit,
    detail_status: DetailStatus,
    culling: bool,
    plan: Plan,
    timestamps: Option<Timestamps>,
    targets: Option<PassTargets>,
    staging: Option<StagingRing>,
    slots: Vec<Slot>,
    next_frame: u64,
    viewport_bounds: [f32; 2],
    max_viewport: [u32; 2],
}

impl Picker {
    /// Creates the picker's render pass, 1x1 attachments, pipelines and staging ring.
    ///
    /// # Safety
    /// - `host.device` was created from `host.physical_device` of `host.instance`, with at
    ///   least one queue of `host.queue_family_index`, and all three outlive the picker.
    /// - If `host.detail_features_enabled`, the device was really created with the detail
    ///   extension and features enabled; if `host.batching_features_enabled`, with
    ///   `multiDrawIndirect` and `drawIndirectFirstInstance` enabled.
    /// - A shared allocator was created for this same device.
    /// - The picker is dropped only once the GPU has finished every command buffer it recorded into.
    pub unsafe fn new(host: HostDevice<'_>, config: PickerConfig) -> Result<Self, PickError> {
        if config.frames_in_flight == 0 {
            return Err(PickError::InvalidRequest("frames_in_flight must be at least 1".into()));
        }
        // SAFETY: the caller guarantees the physical device belongs to the instance.
        let families = unsafe { host.instance.get_physical_device_queue_family_properties(host.physical_device) };
        let family = families.get(host.queue_family_index as usize);
        let graphics = family.is_some_and(|f| f.queue_flags.contains(vk::QueueFlags::GRAPHICS));
        let mut missing = vec![];
        if !graphics {
            missing.push(format!("queue family {} with graphics support", host.queue_family_index));
        }
        let timestamp_bits = family.map_or(0, |f| f.timestamp_valid_bits);
        if config.timestamps && timestamp_bits == 0 {
            missing.push(format!("timestamp queries on queue family {}", host.queue_family_index));
        }
        let detail_status = match config.detail {
            DetailMode::Off => DetailStatus::NotRequested,
            DetailMode::IfEnabled => {
                // SAFETY: as above.
                let support = unsafe { DetailSupport::query(host.instance, host.physical_device) };
                let mut gaps = support.missing();
                if gaps.is_empty() && !host.detail_features_enabled {
                    gaps.push("the host did not enable the detail extension and features".into());
                }
                if gaps.is_empty() {
                    DetailStatus::Active
                } else {
                    DetailStatus::Unavailable { missing: gaps }
                }
            }
        };
        let layout = PassLayout { detail: detail_status == DetailStatus::Active, depth: config.depth };
        if !missing.is_empty() {
            return Err(PickError::Unsupported { missing });
        }
        // SAFETY: as above.
        let props = unsafe { host.instance.get_physical_device_properties(host.physical_device) };
        // SAFETY: the caller's contract is `PassKit::new`'s.
        let kit = unsafe { PassKit::new(&host, layout) }?;
        let mut picker = Picker {
            kit,
            detail_status,
            culling: config.culling,
            plan: Plan::default(),
            timestamps: None,
            targets: None,
            staging: None,
            slots: (0..config.frames_in_flight).map(|_| Slot::default()).collect(),
            next_frame: 0,
            viewport_bounds: props.limits.viewport_bounds_range,
            max_viewport: props.limits.max_viewport_dimensions,
        };
        // Filled step by step: on error, `Drop` releases what was made.
        let one = vk::Extent2D { width: 1, height: 1 };
        picker.targets = Some(PassTargets::new(&picker.kit.memory, picker.kit.render_pass, layout, one)?);
        picker.staging = Some(StagingRing::new(&picker.kit.memory, config.frames_in_flight, props.limits.non_coherent_atom_size)?);
        if host.batching_features_enabled && config.batch_rows > 0 {
            for slot in &mut picker.slots {
                slot.batch = Some(DrawBatchBuffer::new(&picker.kit.memory, config.batch_rows)?);
            }
            picker.kit.batch_rows = config.batch_rows;
        }
        if config.timestamps {
            let info = vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(2 * config.frames_in_flight as u32);
            // SAFETY: valid create info on the host's live device.
            let pool = unsafe { host.device.create_query_pool(&info, None) }?;
            let mask = if timestamp_bits >= 64 { u64::MAX } else { (1u64 << timestamp_bits) - 1 };
            picker.timestamps = Some(Timestamps { pool, period_ns: f64::from(props.limits.timestamp_period), mask });
        }
        Ok(picker)
    }

    /// Whether detail picking runs, and if not, why.
    pub fn detail_status(&self) -> &DetailStatus {
        &self.detail_status
    }

    pub fn frames_in_flight(&self) -> usize {
        self.slots.len()
    }

    /// Whether runs of draws are recorded as indirect draws (see [`PickerConfig::batch_rows`]).
    pub fn batching_active(&self) -> bool {
        self.slots.iter().all(|s| s.batch.is_some())
    }

    /// Memory held for picking; independent of the window size.
    pub fn memory(&self) -> PickMemory {
        PickMemory {
            attachments: self.targets.as_ref().map_or(0, PassTargets::bytes),
            staging: self.staging.as_ref().map_or(0, StagingRing::bytes),
            draw_batches: self.slots.iter().filter_map(|s| s.batch.as_ref()).map(DrawBatchBuffer::bytes).sum(),
        }
    }

    /// Checks a request against the device's viewport limits.
    fn check_request(&self, request: &PickRequest<'_>) -> Result<CameraSnapshot, PickError> {
        let camera = CameraSnapshot::new(request.view, request.projection, request.viewport, self.kit.layout.depth)?;
        if !request.viewport.contains_pixel(request.pixel) {
            return Err(PickError::OutsideView { x: request.pixel.x.into(), y: request.pixel.y.into() });
        }
        let vp = request.viewport;
        let x = vp.x - request.pixel.x as f32;
        let y = vp.y - request.pixel.y as f32;
        let [lo, hi] = self.viewport_bounds;
        if vp.width > self.max_viewport[0] as f32 || vp.height > self.max_viewport[1] as f32 || x < lo || y < lo || x + vp.width > hi || y + vp.height > hi {
            return Err(PickError::Unsupported {
                missing: vec![format!(
                    "a viewport of {}x{} shifted to ({x}, {y}) exceeds the device's viewport limits (max {:?}, bounds {:?})",
                    vp.width, vp.height, self.max_viewport, self.viewport_bounds
                )],
            });
        }
        Ok(camera)
    }

    /// Records this frame's pick into `cmd`: the 1x1 pass and the copy of its texels into
    /// `slot`. Records nothing and returns an error if the request or a draw is invalid. A
    /// result still pending in `slot` is dropped. With culling, every bounded draw is tested
    /// (O(draws)); see [`Picker::record_shared`] for a hierarchy over draws that persist.
    ///
    /// # Safety
    /// - `cmd` belongs to the picker's device, is recording, and is outside any render pass;
    ///   it will be submitted to a queue of the family given at creation.
    /// - Every buffer the draws name is live, has the usages the draw types document, and
    ///   stays alive until `cmd` completes.
    /// - The GPU work last recorded into `slot` has completed (the host waited on that
    ///   frame's fence before reusing its command buffer).
    pub unsafe fn record(&mut self, cmd: vk::CommandBuffer, slot: usize, request: &PickRequest<'_>, draws: &[PickDraw]) -> Result<PickTicket, PickError> {
        // SAFETY: the caller's contract is `record_planned`'s.
        unsafe { self.record_planned(cmd, slot, request, draws, |plan, ray| plan.build(request, draws, ray)) }
    }

    /// As [`Picker::record`], for a draw list the host keeps from frame to frame: the picker
    /// keeps a bounding-volume hierarchy of the draws' world bounds for as long as this `Arc`
    /// lives, so culling costs O(log draws + hits) instead of O(draws). When draws move or
    /// change, hand in a new `Arc` (the hierarchy is rebuilt once, on its first use).
    ///
    /// # Safety
    /// As [`Picker::record`].
    pub unsafe fn record_shared(
        &mut self,
        cmd: vk::CommandBuffer,
        slot: usize,
        request: &PickRequest<'_>,
        draws: &Arc<[PickDraw]>,
    ) -> Result<PickTicket, PickError> {
        // SAFETY: the caller's contract is `record_planned`'s.
        unsafe { self.record_planned(cmd, slot, request, draws, |plan, ray| plan.build_shared(request, draws, ray)) }
    }

    /// # Safety
    /// As [`Picker::record`].
    unsafe fn record_planned(
        &mut self,
        cmd: vk::CommandBuffer,
        slot: usize,
        request: &PickRequest<'_>,
        draws: &[PickDraw],
        plan_frame: impl FnOnce(&mut Plan, Option<&PixelRay>),
    ) -> Result<PickTicket, PickError> {
        let frames_in_flight = self.slots.len();
        if slot >= frames_in_flight {
            return Err(PickError::InvalidSlot { slot, frames_in_flight });
        }
        let camera = self.check_request(request)?;
        let (Some(targets), Some(staging)) = (self.targets.as_ref(), self.staging.as_ref()) else {
            return Err(PickError::Vulkan(vk::Result::ERROR_INITIALIZATION_FAILED));
        };
        let ray = if self.culling { PixelRay::new(&camera, request.pixel) } else { None };
        plan_frame(&mut self.plan, ray.as_ref());
        let recording = self.kit.recording(cmd, targets, &camera, Framing::PixelOnly, draws, &self.plan)?;
        let s = &mut self.slots[slot];
        s.pending = None;
        s.draws.clear();
        let device = recording.device;
        if let Some(ts) = &self.timestamps {
            // SAFETY: `cmd` is recording outside a render pass; the queries belong to this slot.
            unsafe {
                device.cmd_reset_query_pool(cmd, ts.pool, 2 * slot as u32, 2);
                device.cmd_write_timestamp(cmd, vk::PipelineStageFlags::TOP_OF_PIPE, ts.pool, 2 * slot as u32);
            }
        }
        // SAFETY: the caller's contract covers `cmd` and the draws' buffers; the plan was prepared.
        let stats = unsafe { recording.record(request, draws, &self.plan, &mut s.draws, s.batch.as_mut()) };
        // SAFETY: as above; the pass just recorded rendered `targets`.
        unsafe { staging.record_copy(device, cmd, targets, recording.layout.detail, slot, vk::Offset2D::default()) };
        if let Some(ts) = &self.timestamps {
            // SAFETY: as above.
            unsafe { device.cmd_write_timestamp(cmd, vk::PipelineStageFlags::BOTTOM_OF_PIPE, ts.pool, 2 * slot as u32 + 1) };
        }
        s.stats = stats;
        let frame = self.next_frame;
        self.next_frame += 1;
        s.pending = Some(Pending { frame, pixel: request.pixel, camera });
        Ok(PickTicket { slot, frame, stats })
    }

    /// Resolves the pick recorded into `slot`, or `None` if none is pending there. Never waits.
    ///
    /// # Safety
    /// The GPU work of the command buffer that [`Picker::record`] last recorded into `slot`
    /// has completed.
    pub unsafe fn take_result(&mut self, slot: usize) -> Result<Option<PickResult>, PickError> {
        let frames_in_flight = self.slots.len();
        let s = self.slots.get_mut(slot).ok_or(PickError::InvalidSlot { slot, frames_in_flight })?;
        let Some(pending) = s.pending.take() else { return Ok(None) };
        let staging = self.staging.as_ref().ok_or(PickError::Vulkan(vk::Result::ERROR_INITIALIZATION_FAILED))?;
        // SAFETY: the caller guarantees the copy into this slot has completed.
        let texels = unsafe { staging.read(&self.kit.memory.device, slot, self.kit.layout.detail) }?;
        let mut result = resolve::resolve(pending.frame, pending.pixel, &pending.camera, &s.draws, &texels);
        result.stats = PickStats { pass: s.stats, gpu_time_ns: None };
        if let Some(ts) = &self.timestamps {
            let mut t = [0u64; 2];
            // SAFETY: the slot's work completed, so both queries are available; no wait is asked.
            let got = unsafe { self.kit.memory.device.get_query_pool_results(ts.pool, 2 * slot as u32, &mut t, vk::QueryResultFlags::TYPE_64) };
            if got.is_ok() {
                result.stats.gpu_time_ns = Some((t[1].wrapping_sub(t[0]) & ts.mask) as f64 * ts.period_ns);
            }
        }
        Ok(Some(result))
    }

    /// Resolves `slot` if `fence` (the one the host's submission of that frame signals) has
    /// signalled; returns `Ok(None)` without waiting if it has not.
    ///
    /// # Safety
    /// `fence` is a live fence of this device that the submission containing the command
    /// buffer last recorded into `slot` signals, and it was not reset since.
    pub unsafe fn poll_result(&mut self, slot: usize, fence: vk::Fence) -> Result<Option<PickResult>, PickError> {
        // SAFETY: the caller guarantees the fence is valid.
        let signalled = unsafe { self.kit.memory.device.get_fence_status(fence) }?;
        if !signalled {
            return Ok(None);
        }
        // SAFETY: the fence signalled, so that frame's work has completed.
        unsafe { self.take_result(slot) }
    }

    /// Whether a result is waiting in `slot`.
    pub fn is_pending(&self, slot: usize) -> bool {
        self.slots.get(slot).is_some_and(|s| s.pending.is_some())
    }
}

impl Drop for Picker {
    fn drop(&mut self) {
        // Reverse creation order; the `new` contract says the GPU is done with all of it.
        if let Some(mut staging) = self.staging.take() {
            self.kit.memory.destroy_buffer(&mut staging.buffer);
        }
        for slot in &mut self.slots {
            if let Some(mut batch) = slot.batch.take() {
                batch.destroy(&self.kit.memory);
            }
        }
        if let Some(mut targets) = self.targets.take() {
            targets.destroy(&self.kit.memory);
        }
        if let Some(ts) = self.timestamps.take() {
            // SAFETY: the GPU is done with the queries (see `new`).
            unsafe { self.kit.memory.device.destroy_query_pool(ts.pool, None) };
        }
        // `kit` drops next: pipelines, then the render pass.
    }
}
