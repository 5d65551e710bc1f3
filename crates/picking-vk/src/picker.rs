//! [`Picker`]: records the 1x1 pick pass into the host's command buffers and resolves each
//! frame's result once the host says that frame's GPU work is done.

use crate::draw::PickDraw;
use crate::error::{PickError, Requirement};
use crate::gpu::{Memory, Owned};
use crate::handoff::{DrawSnapshot, PassStats};
use crate::host::config::{DetailMode, DetailStatus, PickerConfig};
use crate::host::features::{PickFeatures, PickSupport};
use crate::host::HostDevice;
use crate::pass::targets::PassTargets;
use crate::pass::{PassKit, PassLayout};
use crate::plan::{PixelRay, Plan};
use crate::readback::{stamp_of, SlotQueries, StagingRing};
use crate::record::batch::DrawBatchBuffer;
use crate::record::{Framing, PassRecording};
use crate::request::camera::CameraSnapshot;
use crate::request::PickRequest;
use crate::resolve;
use crate::resolve::result::{PickResult, PickStats};
use ash::vk;
use glam::UVec2;
use std::sync::Arc;

/// Timestamp queries around each slot's pass and copy.
struct Timestamps {
    pool: Owned<vk::QueryPool>,
    period_ns: f64,
    mask: u64,
}

/// # Safety
/// `pool` is a query pool of `device` that the GPU no longer uses.
unsafe fn destroy_query_pool(device: &ash::Device, pool: vk::QueryPool) {
    // SAFETY: the caller's contract.
    unsafe { device.destroy_query_pool(pool, None) };
}

/// Returned by [`Picker::record`]: which slot and frame the result will belong to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PickTicket {
    /// The frame slot recorded into.
    pub slot: usize,
    /// The frame number its result will carry.
    pub frame: u64,
    /// What the pass recorded, skipped and culled.
    pub stats: PassStats,
}

/// Pick memory, in bytes as the driver sized it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PickMemory {
    /// The 1x1 attachments.
    pub attachments: u64,
    /// The staging ring, a slot per frame in flight.
    pub staging: u64,
    /// The batch buffers' rows and indirect commands: sized once by
    /// [`PickerConfig::batch_rows`], never by the window.
    pub draw_batches: u64,
}

impl PickMemory {
    /// Everything picking holds.
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
    // Fields drop in order: the per-slot buffers, staging and targets before the pass kit
    // (pipelines, render pass) and the allocator it shares.
    slots: Vec<Slot>,
    staging: StagingRing,
    targets: PassTargets,
    timestamps: Option<Timestamps>,
    kit: PassKit,
    detail_status: DetailStatus,
    culling: bool,
    plan: Plan,
    next_frame: u64,
    /// Set by the first `VK_ERROR_DEVICE_LOST` seen or reported: every later call fails.
    device_lost: bool,
    /// The shared draw list last validated whole.
    validated_shared: Option<std::sync::Weak<[PickDraw]>>,
    negative_viewport_height: bool,
    viewport_bounds: [f32; 2],
    max_viewport: [u32; 2],
}

impl Picker {
    /// Creates the picker's render pass, 1x1 attachments, pipelines and staging ring.
    ///
    /// # Safety
    /// - `host.device` was created from `host.physical_device` of `host.instance`, with at
    ///   least one queue of `host.queue_family_index`, and all three outlive the picker; the
    ///   instance was created with `host.instance_api_version`.
    /// - `host.features` were enabled at device creation, through
    ///   [`crate::DeviceFeatures`] (or the same extensions and features by hand).
    /// - A shared allocator was created for this same device.
    /// - The picker is dropped only once the GPU has finished every command buffer it recorded into.
    pub unsafe fn new(host: HostDevice<'_>, config: PickerConfig) -> Result<Self, PickError> {
        if config.frames_in_flight == 0 {
            return Err(PickError::InvalidRequest("frames_in_flight must be at least 1".into()));
        }
        // SAFETY: the caller guarantees the physical device belongs to the instance.
        let support = unsafe { PickSupport::query(host.instance, host.instance_api_version, host.physical_device) };
        // The host's claim is checked against the device: a feature it cannot have enabled is an error.
        let mut missing = support.missing(host.features);
        // SAFETY: as above.
        let families = unsafe { host.instance.get_physical_device_queue_family_properties(host.physical_device) };
        let family = families.get(host.queue_family_index as usize);
        if !family.is_some_and(|f| f.queue_flags.contains(vk::QueueFlags::GRAPHICS)) {
            missing.push(Requirement::QueueFamily { index: host.queue_family_index, capability: "graphics" });
        }
        let timestamp_bits = family.map_or(0, |f| f.timestamp_valid_bits);
        if config.timestamps && timestamp_bits == 0 {
            missing.push(Requirement::QueueFamily { index: host.queue_family_index, capability: "timestamp queries" });
        }
        let detail_status = DetailStatus::resolve(config.detail, &support, host.features);
        if let (DetailMode::Required, DetailStatus::Unavailable { missing: gaps }) = (config.detail, &detail_status) {
            missing.extend(gaps.iter().cloned());
        }
        if !missing.is_empty() {
            return Err(PickError::Unsupported { missing });
        }
        // SAFETY: as above.
        let limits = unsafe { host.instance.get_physical_device_properties(host.physical_device) }.limits;
        let layout = PassLayout { detail: detail_status == DetailStatus::Active };
        let batching = host.features.contains(PickFeatures::BATCHING) && config.batch_rows > 0;
        // SAFETY: the caller's contract is `Memory::new`'s.
        let memory = unsafe { Memory::new(host.instance, host.device, host.physical_device, host.allocator.as_ref()) }?;
        let mut kit = PassKit::new(&memory, &limits, layout, batching)?;
        let one = vk::Extent2D { width: 1, height: 1 };
        let targets = PassTargets::new(&memory, kit.render_pass.handle, layout, one)?;
        let staging = StagingRing::new(&memory, config.frames_in_flight, limits.non_coherent_atom_size)?;
        let mut slots: Vec<Slot> = (0..config.frames_in_flight).map(|_| Slot::default()).collect();
        if batching {
            for slot in &mut slots {
                slot.batch = Some(DrawBatchBuffer::new(&memory, config.batch_rows)?);
            }
            kit.batch_rows = config.batch_rows;
        }
        let timestamps = if config.timestamps {
            let info = vk::QueryPoolCreateInfo::default().query_type(vk::QueryType::TIMESTAMP).query_count(2 * config.frames_in_flight as u32);
            // SAFETY: valid create info on the host's live device.
            let pool = unsafe { host.device.create_query_pool(&info, None) }?;
            memory.name(pool, "timestamps");
            // SAFETY: just created on this device, owned by nothing else.
            let pool = unsafe { Owned::new(host.device, pool, destroy_query_pool) };
            let mask = if timestamp_bits >= 64 { u64::MAX } else { (1u64 << timestamp_bits) - 1 };
            Some(Timestamps { pool, period_ns: f64::from(limits.timestamp_period), mask })
        } else {
            None
        };
        Ok(Picker {
            slots,
            staging,
            targets,
            timestamps,
            kit,
            detail_status,
            culling: config.culling,
            plan: Plan::default(),
            next_frame: 0,
            device_lost: false,
            validated_shared: None,
            negative_viewport_height: support.negative_viewport_height(),
            viewport_bounds: limits.viewport_bounds_range,
            max_viewport: limits.max_viewport_dimensions,
        })
    }

    /// Whether detail picking runs, and if not, why.
    pub fn detail_status(&self) -> &DetailStatus {
        &self.detail_status
    }

    /// How many frame slots the picker has.
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
            attachments: self.targets.bytes(),
            staging: self.staging.bytes(),
            draw_batches: self.slots.iter().filter_map(|s| s.batch.as_ref()).map(DrawBatchBuffer::bytes).sum(),
        }
    }

    /// Checks a request against the device's viewport limits.
    fn check_request(&self, request: &PickRequest<'_>) -> Result<CameraSnapshot, PickError> {
        let camera = request.camera()?;
        if !request.viewport.contains_pixel(request.pixel) {
            return Err(PickError::OutsideView { x: request.pixel.x.into(), y: request.pixel.y.into() });
        }
        let vp = request.viewport;
        if vp.height < 0.0 && !self.negative_viewport_height {
            return Err(PickError::Unsupported { missing: vec![Requirement::ApiVersion(1, 1)] });
        }
        // The viewport as the 1x1 pass shifts it: the pixel lands on texel (0, 0).
        let x = f64::from(vp.x) - f64::from(request.pixel.x);
        let (top, bottom) = vp.rows();
        let (top, bottom) = (top - f64::from(request.pixel.y), bottom - f64::from(request.pixel.y));
        let [lo, hi] = self.viewport_bounds.map(f64::from);
        let [max_w, max_h] = self.max_viewport.map(f64::from);
        let too_large = f64::from(vp.width) > max_w || (bottom - top) > max_h;
        if too_large || x < lo || top < lo || x + f64::from(vp.width) > hi || bottom > hi {
            return Err(PickError::Unsupported {
                missing: vec![Requirement::Limit {
                    name: "viewportBoundsRange / maxViewportDimensions",
                    needed: format!(
                        "a viewport of {}x{} shifted to ({x}, {top}); the device allows {:?} within {:?}",
                        vp.width, vp.height, self.max_viewport, self.viewport_bounds
                    ),
                }],
            });
        }
        Ok(camera)
    }

    /// Records this frame's pick into `cmd`: the 1x1 pass, the copy of its texels into
    /// `slot` and the frame's stamp. Records nothing and returns an error if the request or a
    /// draw is invalid, or if `slot` still holds a pick that was neither taken
    /// ([`Picker::take_result`]) nor cancelled ([`Picker::cancel`]): one pick per slot and
    /// frame. With culling, every bounded draw is tested (O(draws)); see
    /// [`Picker::record_shared`] for a hierarchy over draws that persist.
    ///
    /// # Safety
    /// - `cmd` belongs to the picker's device, is recording, and is outside any render pass;
    ///   it will be submitted to a queue of the family given at creation.
    /// - Every command buffer the picker records into is submitted to the same queue: all
    ///   slots share the picker's 1x1 attachments, and only submission order on one queue
    ///   (with the render pass's dependencies) orders one frame's pass after the last one's copy.
    /// - Every buffer the draws name is live, has the usages the draw types document, and
    ///   stays alive until `cmd` completes.
    /// - The GPU work last recorded into `slot` has completed (the host waited on that
    ///   frame's fence before reusing its command buffer).
    pub unsafe fn record(&mut self, cmd: vk::CommandBuffer, slot: usize, request: &PickRequest<'_>, draws: &[PickDraw]) -> Result<PickTicket, PickError> {
        let max_stride = self.kit.max_stride;
        // Planning validates every draw, culled or not, in its one pass over the list.
        // SAFETY: the caller's contract is `record_planned`'s.
        unsafe { self.record_planned(cmd, slot, request, draws, |plan, ray| plan.build(request, draws, ray, Some(max_stride))) }
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
        // Every draw once per list (the list cannot change while its `Arc` lives).
        if !self.validated_shared.as_ref().is_some_and(|v| v.upgrade().is_some_and(|d| Arc::ptr_eq(&d, draws))) {
            self.validate_all(draws)?;
            self.validated_shared = Some(Arc::downgrade(draws));
        }
        // SAFETY: the caller's contract is `record_planned`'s.
        unsafe {
            self.record_planned(cmd, slot, request, draws, |plan, ray| {
                plan.build_shared(request, draws, ray);
                Ok(())
            })
        }
    }

    fn validate_all(&self, draws: &[PickDraw]) -> Result<(), PickError> {
        draws.iter().enumerate().try_for_each(|(i, d)| d.validate(i, self.kit.max_stride))
    }

    /// # Safety
    /// As [`Picker::record`].
    unsafe fn record_planned(
        &mut self,
        cmd: vk::CommandBuffer,
        slot: usize,
        request: &PickRequest<'_>,
        draws: &[PickDraw],
        plan_frame: impl FnOnce(&mut Plan, Option<&PixelRay>) -> Result<(), PickError>,
    ) -> Result<PickTicket, PickError> {
        if self.device_lost {
            return Err(PickError::DeviceLost);
        }
        let frames_in_flight = self.slots.len();
        let pending = self.slots.get(slot).ok_or(PickError::InvalidSlot { slot, frames_in_flight })?.pending.as_ref();
        if let Some(p) = pending {
            return Err(PickError::SlotPending { slot, frame: p.frame });
        }
        let camera = self.check_request(request)?;
        let ray = if self.culling { PixelRay::new(&camera, request.pixel) } else { None };
        plan_frame(&mut self.plan, ray.as_ref())?;
        let prepared = PassRecording::prepare(&mut self.kit, cmd, &self.targets, &camera, Framing::PixelOnly, draws, &self.plan);
        if matches!(prepared, Err(PickError::DeviceLost)) {
            self.device_lost = true;
        }
        let recording = prepared?;
        let s = &mut self.slots[slot];
        s.draws.clear();
        let device = recording.device;
        let queries = self.timestamps.as_ref().map(|ts| SlotQueries { pool: ts.pool.handle, first: 2 * slot as u32 });
        if let Some(q) = queries {
            // SAFETY: `cmd` is recording outside a render pass; the queries belong to this slot.
            unsafe {
                device.cmd_reset_query_pool(cmd, q.pool, q.first, 2);
                device.cmd_write_timestamp(cmd, vk::PipelineStageFlags::TOP_OF_PIPE, q.pool, q.first);
            }
        }
        // SAFETY: the caller's contract covers `cmd` and the draws' buffers; the plan was prepared.
        let stats = unsafe { recording.record(request, draws, &self.plan, &mut s.draws, s.batch.as_mut()) };
        let frame = self.next_frame;
        // SAFETY: as above; the pass just recorded rendered `targets`.
        unsafe { self.staging.record_copy(device, cmd, &self.targets, recording.layout.detail, slot, vk::Offset2D::default(), frame, queries) };
        s.stats = stats;
        self.next_frame += 1;
        s.pending = Some(Pending { frame, pixel: request.pixel, camera });
        Ok(PickTicket { slot, frame, stats })
    }

    /// Resolves the pick recorded into `slot`, or `None` if none is pending there. Never waits.
    /// It fits the usual frame loop in any order: wait on the slot's fence, reset it, take the
    /// result, record the next pick (it never looks at the fence). The texels must carry the
    /// stamp of the frame recorded into the slot; otherwise (a command buffer that was dropped
    /// instead of submitted) the result is [`PickError::StaleResult`] and the slot is free.
    ///
    /// # Safety
    /// The GPU work of the command buffer that [`Picker::record`] last recorded into `slot`
    /// has completed, or that command buffer will never be submitted.
    pub unsafe fn take_result(&mut self, slot: usize) -> Result<Option<PickResult>, PickError> {
        let frames_in_flight = self.slots.len();
        let s = self.slots.get_mut(slot).ok_or(PickError::InvalidSlot { slot, frames_in_flight })?;
        let pending = s.pending.take();
        if self.device_lost {
            // Nothing a lost device wrote is read.
            return Err(PickError::DeviceLost);
        }
        let Some(pending) = pending else { return Ok(None) };
        // SAFETY: the caller guarantees the copy into this slot has completed.
        let read = unsafe { self.staging.read(slot, self.kit.layout.detail, self.timestamps.is_some()) };
        let contents = self.note_loss(read)?;
        if contents.stamp != stamp_of(pending.frame) {
            // Another frame's texels (or none): the frame recorded here never completed.
            return Err(PickError::StaleResult { slot, expected: pending.frame, found: contents.stamp.checked_sub(1) });
        }
        let s = &self.slots[slot];
        let mut result = resolve::resolve(pending.frame, pending.pixel, &pending.camera, &s.draws, &contents.texels);
        result.stats = PickStats { pass: s.stats, gpu_time_ns: None };
        if let (Some(ts), Some([start, end])) = (&self.timestamps, contents.timestamps) {
            result.stats.gpu_time_ns = Some((end.wrapping_sub(start) & ts.mask) as f64 * ts.period_ns);
        }
        Ok(Some(result))
    }

    /// Resolves `slot` if `fence` (the one the host's submission of that frame signals) has
    /// signalled; returns `Ok(None)` without waiting if it has not. Call it before resetting
    /// the fence; after a wait-and-reset, use [`Picker::take_result`].
    ///
    /// # Safety
    /// `fence` is a live fence of this device that the submission containing the command
    /// buffer last recorded into `slot` signals, and it was not reset since.
    pub unsafe fn poll_result(&mut self, slot: usize, fence: vk::Fence) -> Result<Option<PickResult>, PickError> {
        if self.device_lost {
            return Err(PickError::DeviceLost);
        }
        // SAFETY: the caller guarantees the fence is valid.
        let status = unsafe { self.kit.memory.device.get_fence_status(fence) };
        let signalled = self.note_loss(status.map_err(PickError::from))?;
        if !signalled {
            return Ok(None);
        }
        // SAFETY: the fence signalled, so that frame's work has completed.
        unsafe { self.take_result(slot) }
    }

    /// Tells the picker the device was lost (the host saw `VK_ERROR_DEVICE_LOST` from its own
    /// submit or wait). From then on every call returns [`PickError::DeviceLost`] and nothing
    /// the device wrote is read; the picker can only be dropped.
    pub fn mark_device_lost(&mut self) {
        self.device_lost = true;
    }

    /// Whether the picker has seen (or been told of) a device loss.
    pub fn is_device_lost(&self) -> bool {
        self.device_lost
    }

    /// Remembers a device loss seen in `result`: the loss is sticky.
    fn note_loss<T>(&mut self, result: Result<T, PickError>) -> Result<T, PickError> {
        if matches!(result, Err(PickError::DeviceLost)) {
            self.device_lost = true;
        }
        result
    }

    /// Forgets the pick recorded into `slot` (an aborted frame whose command buffer was never
    /// submitted): the slot can be recorded into again. Returns whether one was pending.
    pub fn cancel(&mut self, slot: usize) -> Result<bool, PickError> {
        let frames_in_flight = self.slots.len();
        let s = self.slots.get_mut(slot).ok_or(PickError::InvalidSlot { slot, frames_in_flight })?;
        Ok(s.pending.take().is_some())
    }

    /// Whether a result is waiting in `slot`.
    pub fn is_pending(&self, slot: usize) -> bool {
        self.slots.get(slot).is_some_and(|s| s.pending.is_some())
    }
}
