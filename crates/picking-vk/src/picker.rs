//! [`Picker`]: records a frame's query set (the pick pass over a cell per point or radius
//! query, the rectangle pass tile by tile) into the host's command buffers and resolves the
//! results once the host says that frame's GPU work is done.

use crate::draw::PickDraw;
use crate::error::{PickError, Requirement};
use crate::gpu::{Memory, Owned};
use crate::handoff::{DrawSnapshot, EntrySpan, PassStats};
use crate::host::config::{DetailMode, DetailStatus, PickerConfig};
use crate::host::features::{PickFeatures, PickSupport};
use crate::host::HostDevice;
use crate::pass::rect::RectKit;
use crate::pass::targets::PassTargets;
use crate::pass::{PassKit, PassLayout};
use crate::plan::PlanEntry;
use crate::plan::{PixelRay, Plan};
use crate::readback::{stamp_of, RegionBlock, SlotQueries, StagingRing, HEADER_BYTES};
use crate::record::batch::DrawBatchBuffer;
use crate::record::rect::{assign_entries, entries_needed, EntryRange, Tile};
use crate::record::{prepare_entries, Framing, PassRecording};
use crate::request::camera::CameraSnapshot;
use crate::request::query::{view_pixels, CheckedQuery, PickQuery, PixelRect, QueryTicket, RectMode};
use crate::request::PickRequest;
use crate::resolve;
use crate::resolve::query::{resolve_radius, resolve_rect, FrameResults, QueryResult, TableCopy};
use crate::resolve::result::{PickResult, PickStats};
use ash::vk;
use glam::UVec2;
use std::ops::Range;
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

/// Returned by [`Picker::record`] and [`Picker::record_queries`]: which slot and frame the
/// results will belong to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PickTicket {
    /// The frame slot recorded into.
    pub slot: usize,
    /// The frame number its results will carry.
    pub frame: u64,
    /// What the passes recorded, skipped and culled.
    pub stats: PassStats,
}

impl PickTicket {
    /// The ticket of query `index` of the set recorded (its position in the query list).
    pub fn query(&self, index: usize) -> QueryTicket {
        QueryTicket { frame: self.frame, index: index as u32 }
    }
}

/// Pick memory, in bytes as the driver sized it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PickMemory {
    /// The attachments of the point and radius queries: a cell per query.
    pub attachments: u64,
    /// The rectangle tile's attachments and the rectangle table.
    pub rectangles: u64,
    /// The staging ring, a slot per frame in flight.
    pub staging: u64,
    /// The batch buffers' rows and indirect commands: sized once by
    /// [`PickerConfig::batch_rows`], never by the window.
    pub draw_batches: u64,
}

impl PickMemory {
    /// Everything picking holds.
    pub fn total(&self) -> u64 {
        self.attachments + self.rectangles + self.staging + self.draw_batches
    }
}

struct Pending {
    frame: u64,
    camera: CameraSnapshot,
    /// Bytes of the slot the frame wrote (header included).
    used_bytes: u64,
    table: TableCopy,
}

/// One query as recorded, for resolving.
#[derive(Clone, Debug)]
enum QueryRecord {
    /// A point's texels are `texel` of `block`; a radius query's are all of its own block.
    Hit { pixel: UVec2, radius: Option<u32>, region: PixelRect, block: RegionBlock, texel: u64 },
    /// Its table entries are described by `spans` of the slot's list.
    Rect { rect: PixelRect, mode: RectMode, spans: Range<usize> },
}

/// One slot per frame in flight: what was recorded there and is not yet resolved.
#[derive(Default)]
struct Slot {
    pending: Option<Pending>,
    stats: PassStats,
    /// Reused every frame, so recording allocates nothing once warm.
    draws: Vec<DrawSnapshot>,
    batch: Option<DrawBatchBuffer>,
    queries: Vec<QueryRecord>,
    spans: Vec<EntrySpan>,
}

/// Where a planned query (or rectangle tile) lies: its entries in the frame's plan list.
#[derive(Clone, Debug)]
enum PlannedPart {
    Hit {
        first: UVec2,
        size: UVec2,
        at: UVec2,
        entries: Range<usize>,
    },
    /// A rectangle's plan over its whole area: its table entries. Its tiles follow it.
    Rect {
        entries: Range<usize>,
    },
    Tile {
        mode: RectMode,
        first: UVec2,
        size: UVec2,
        entries: Range<usize>,
    },
}

/// The frame's plans, one part per query or tile; reused every frame.
#[derive(Default)]
struct FramePlans {
    parts: Vec<PlannedPart>,
    entries: Vec<PlanEntry>,
    ranges: Vec<(u32, u32)>,
    stats: PassStats,
}

impl FramePlans {
    fn clear(&mut self) {
        self.parts.clear();
        self.entries.clear();
        self.ranges.clear();
        self.stats = PassStats::default();
    }

    /// Appends `plan`'s entries (their ranges re-based) and statistics; returns their span.
    fn take(&mut self, plan: &Plan) -> Range<usize> {
        let start = self.entries.len();
        let base = self.ranges.len() as u32;
        self.ranges.extend_from_slice(&plan.ranges);
        self.entries.extend(plan.entries.iter().map(|e| PlanEntry { first_range: e.first_range + base, ..*e }));
        self.stats.draws_skipped += plan.stats.draws_skipped;
        self.stats.draws_culled += plan.stats.draws_culled;
        self.stats.instances_culled += plan.stats.instances_culled;
        start..self.entries.len()
    }
}

/// Pixel-exact GPU picking in the host's own command buffers. See the crate docs.
pub struct Picker {
    // Fields drop in order: the per-slot buffers, staging and targets before the pass kit
    // (pipelines, render pass) and the allocator it shares.
    slots: Vec<Slot>,
    staging: StagingRing,
    targets: PassTargets,
    rect: Option<RectKit>,
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
    /// Side of a point or radius query's cell in the targets: `2 * max_radius + 1`.
    cell: u32,
    max_queries: u32,
    max_radius: u32,
    select_through: bool,
    frame_plans: FramePlans,
    checked: Vec<CheckedQuery>,
    /// The rectangle being recorded: its instances' table entries.
    entry_map: Vec<EntryRange>,
    /// The bytes of the slot being resolved; reused.
    read_buffer: Vec<u8>,
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
        let max_queries = config.max_queries.max(1);
        let cell = config
            .max_radius
            .checked_mul(2)
            .and_then(|c| c.checked_add(1))
            .filter(|&c| u64::from(c + 1) * u64::from(max_queries) <= u64::from(limits.max_framebuffer_width) && c <= limits.max_framebuffer_height);
        let Some(cell) = cell else {
            return Err(PickError::InvalidRequest(format!(
                "{} query cells of {}x{} pixels exceed the device's framebuffer limits",
                max_queries,
                u64::from(config.max_radius) * 2 + 1,
                u64::from(config.max_radius) * 2 + 1
            )));
        };
        // Points side by side in row 0 (one copy takes them all), then a cell per radius query.
        let atlas = vk::Extent2D { width: (cell + 1) * max_queries, height: cell };
        let targets = PassTargets::new(&memory, kit.render_pass.handle, layout, atlas)?;
        let [tile_w, tile_h] = config.rect_tile;
        let rect = if config.rect_entries > 0 && tile_w > 0 && tile_h > 0 {
            if tile_w > limits.max_framebuffer_width || tile_h > limits.max_framebuffer_height {
                return Err(PickError::InvalidRequest(format!("rectangle tile {tile_w}x{tile_h} exceeds the device's framebuffer limits")));
            }
            let tile = vk::Extent2D { width: tile_w, height: tile_h };
            Some(RectKit::new(&memory, tile, config.rect_entries, host.features.contains(PickFeatures::SELECT_THROUGH))?)
        } else {
            None
        };
        let cell_bytes = RegionBlock::bytes(u64::from(cell) * u64::from(cell), layout.detail);
        let slot_bytes = HEADER_BYTES + u64::from(max_queries) * cell_bytes + 12 * u64::from(config.rect_entries);
        let staging = StagingRing::new(&memory, config.frames_in_flight, slot_bytes, limits.non_coherent_atom_size)?;
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
            rect,
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
            cell,
            max_queries,
            max_radius: config.max_radius,
            select_through: host.features.contains(PickFeatures::SELECT_THROUGH),
            frame_plans: FramePlans::default(),
            checked: vec![],
            entry_map: vec![],
            read_buffer: vec![],
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
            rectangles: self.rect.as_ref().map_or(0, RectKit::bytes),
            staging: self.staging.bytes(),
            draw_batches: self.slots.iter().filter_map(|s| s.batch.as_ref()).map(DrawBatchBuffer::bytes).sum(),
        }
    }

    /// Checks the viewport as a pass shifts it so that framebuffer pixel `first` lands on
    /// texel `at` of its target, against the device's viewport limits.
    fn check_shift(&self, request: &PickRequest<'_>, first: UVec2, at: UVec2) -> Result<(), PickError> {
        let vp = request.viewport;
        let dx = f64::from(at.x) - f64::from(first.x);
        let dy = f64::from(at.y) - f64::from(first.y);
        let x = f64::from(vp.x) + dx;
        let (top, bottom) = vp.rows();
        let (top, bottom) = (top + dy, bottom + dy);
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
        Ok(())
    }

    /// Records this frame's pick into `cmd`: the pass at the pixel, the copy of its texels
    /// into `slot` and the frame's stamp. The same as [`Picker::record_queries`] with one
    /// [`PickQuery::Point`] at `request.pixel`; see there for errors. With culling, every
    /// bounded draw is tested (O(draws)); see [`Picker::record_shared`] for a hierarchy over
    /// draws that persist.
    ///
    /// # Safety
    /// As [`Picker::record_queries`].
    pub unsafe fn record(&mut self, cmd: vk::CommandBuffer, slot: usize, request: &PickRequest<'_>, draws: &[PickDraw]) -> Result<PickTicket, PickError> {
        // SAFETY: the caller's contract is `record_queries`'.
        unsafe { self.record_queries(cmd, slot, request, &[PickQuery::Point(request.pixel)], draws) }
    }

    /// Records a frame's query set into `cmd`: points and radius queries in one pass (a cell
    /// each), rectangles in the rectangle pass tile by tile (reduced on the GPU into a table),
    /// the copies of what they produced into `slot`, and the frame's stamp. `request.pixel` is
    /// not used: each query names its pixels. [`Picker::take_results`] returns the results,
    /// keyed by [`PickTicket::query`].
    ///
    /// Records nothing and returns an error if the request, a query or a draw is invalid,
    /// if the set exceeds the configured limits (queries, radius, rectangle table entries),
    /// or if `slot` still holds a set that was neither taken ([`Picker::take_results`]) nor
    /// cancelled ([`Picker::cancel`]): one set per slot and frame.
    ///
    /// # Safety
    /// - `cmd` belongs to the picker's device, is recording, and is outside any render pass;
    ///   it will be submitted to a queue of the family given at creation.
    /// - Every command buffer the picker records into is submitted to the same queue: all
    ///   slots share the picker's targets and rectangle table, and only submission order on
    ///   one queue (with the passes' dependencies) orders one frame's passes after the last
    ///   one's copies.
    /// - Every buffer the draws name is live, has the usages the draw types document, and
    ///   stays alive until `cmd` completes.
    /// - The GPU work last recorded into `slot` has completed (the host waited on that
    ///   frame's fence before reusing its command buffer).
    pub unsafe fn record_queries(
        &mut self,
        cmd: vk::CommandBuffer,
        slot: usize,
        request: &PickRequest<'_>,
        queries: &[PickQuery],
        draws: &[PickDraw],
    ) -> Result<PickTicket, PickError> {
        let max_stride = self.kit.max_stride;
        // Planning validates every draw, culled or not, in its one pass over the list: the
        // first query's plan does it.
        let mut validate = Some(max_stride);
        // SAFETY: the caller's contract is `record_planned`'s.
        unsafe {
            self.record_planned(cmd, slot, request, queries, draws, |plan, ray| {
                let result = plan.build(request, draws, ray, validate);
                validate = None;
                result
            })
        }
    }

    /// As [`Picker::record`], for a draw list the host keeps from frame to frame: the picker
    /// keeps a bounding-volume hierarchy of the draws' world bounds for as long as this `Arc`
    /// lives, so culling costs O(log draws + hits) instead of O(draws). When draws move or
    /// change, hand in a new `Arc` (the hierarchy is rebuilt once, on its first use).
    ///
    /// # Safety
    /// As [`Picker::record_queries`].
    pub unsafe fn record_shared(
        &mut self,
        cmd: vk::CommandBuffer,
        slot: usize,
        request: &PickRequest<'_>,
        draws: &Arc<[PickDraw]>,
    ) -> Result<PickTicket, PickError> {
        // SAFETY: the caller's contract is `record_queries_shared`'.
        unsafe { self.record_queries_shared(cmd, slot, request, &[PickQuery::Point(request.pixel)], draws) }
    }

    /// As [`Picker::record_queries`], over a shared draw list (see [`Picker::record_shared`]).
    ///
    /// # Safety
    /// As [`Picker::record_queries`].
    pub unsafe fn record_queries_shared(
        &mut self,
        cmd: vk::CommandBuffer,
        slot: usize,
        request: &PickRequest<'_>,
        queries: &[PickQuery],
        draws: &Arc<[PickDraw]>,
    ) -> Result<PickTicket, PickError> {
        // Every draw once per list (the list cannot change while its `Arc` lives).
        if !self.validated_shared.as_ref().is_some_and(|v| v.upgrade().is_some_and(|d| Arc::ptr_eq(&d, draws))) {
            self.validate_all(draws)?;
            self.validated_shared = Some(Arc::downgrade(draws));
        }
        // SAFETY: the caller's contract is `record_planned`'s.
        unsafe {
            self.record_planned(cmd, slot, request, queries, draws, |plan, ray| {
                plan.build_shared(request, draws, ray);
                Ok(())
            })
        }
    }

    fn validate_all(&self, draws: &[PickDraw]) -> Result<(), PickError> {
        draws.iter().enumerate().try_for_each(|(i, d)| d.validate(i, self.kit.max_stride))
    }

    /// Checks the queries and plans each (a rectangle per tile) into `frame_plans`.
    fn plan_queries(
        &mut self,
        request: &PickRequest<'_>,
        camera: &CameraSnapshot,
        queries: &[PickQuery],
        mut plan_frame: impl FnMut(&mut Plan, Option<&PixelRay>) -> Result<(), PickError>,
    ) -> Result<(), PickError> {
        if queries.is_empty() || queries.len() > self.max_queries as usize {
            return Err(PickError::InvalidRequest(format!("a query set holds 1 to {} queries, not {}", self.max_queries, queries.len())));
        }
        let view = view_pixels(&request.viewport);
        self.checked.clear();
        for query in queries {
            self.checked.push(query.check(&view, self.max_radius, self.select_through)?);
        }
        self.frame_plans.clear();
        let (mut points, mut cells) = (0u32, 0u32);
        let checked = std::mem::take(&mut self.checked);
        let planned = (|| {
            for query in &checked {
                match *query {
                    CheckedQuery::Hit { region, .. } => {
                        let at = if region.area() == 1 && matches!(query, CheckedQuery::Hit { radius: None, .. }) {
                            points += 1;
                            UVec2::new(points - 1, 0)
                        } else {
                            cells += 1;
                            UVec2::new(self.max_queries + (cells - 1) * self.cell, 0)
                        };
                        self.check_shift(request, region.min, at)?;
                        let ray = if self.culling { PixelRay::covering(camera, &region) } else { None };
                        plan_frame(&mut self.plan, ray.as_ref())?;
                        let entries = self.frame_plans.take(&self.plan);
                        self.frame_plans.parts.push(PlannedPart::Hit { first: region.min, size: region.size(), at, entries });
                    }
                    CheckedQuery::Rect { rect, mode } => {
                        let Some(kit) = self.rect.as_ref() else {
                            return Err(PickError::InvalidRequest("rectangle queries are off (PickerConfig::rect_entries is 0)".into()));
                        };
                        let tile = UVec2::new(kit.tile.width, kit.tile.height);
                        let ray = if self.culling { PixelRay::covering(camera, &rect) } else { None };
                        plan_frame(&mut self.plan, ray.as_ref())?;
                        let entries = self.frame_plans.take(&self.plan);
                        self.frame_plans.parts.push(PlannedPart::Rect { entries });
                        for y in (rect.min.y..rect.max.y).step_by(tile.y as usize) {
                            for x in (rect.min.x..rect.max.x).step_by(tile.x as usize) {
                                let first = UVec2::new(x, y);
                                let region = PixelRect { min: first, max: (first + tile).min(rect.max) };
                                self.check_shift(request, first, UVec2::ZERO)?;
                                let ray = if self.culling { PixelRay::covering(camera, &region) } else { None };
                                plan_frame(&mut self.plan, ray.as_ref())?;
                                let entries = self.frame_plans.take(&self.plan);
                                self.frame_plans.parts.push(PlannedPart::Tile { mode, first, size: region.size(), entries });
                            }
                        }
                    }
                }
            }
            Ok(())
        })();
        self.checked = checked;
        planned
    }

    /// Builds every pipeline the planned parts need and checks the table's capacity; after
    /// this nothing can fail, so an error leaves the command buffer untouched.
    fn prepare_parts(&mut self, draws: &[PickDraw], camera: &CameraSnapshot) -> Result<(), PickError> {
        let fp = &self.frame_plans;
        let mut rows = 0;
        let mut table_entries = 0u64;
        for part in &fp.parts {
            match part {
                PlannedPart::Hit { entries, .. } => {
                    let kit = &mut self.kit;
                    prepare_entries(&mut kit.pipelines, draws, &fp.entries[entries.clone()], kit.batch_rows, camera.depth, kit.max_stride, &mut rows)?;
                }
                PlannedPart::Rect { entries } => table_entries += entries_needed(&fp.entries[entries.clone()], &fp.ranges),
                PlannedPart::Tile { mode, entries, .. } => {
                    let Some(rect) = self.rect.as_mut() else { continue };
                    let pipelines = match mode {
                        RectMode::Visible => &mut rect.visible,
                        RectMode::All => rect.all.as_mut().ok_or(PickError::Unsupported { missing: vec![Requirement::Feature("fragmentStoresAndAtomics")] })?,
                    };
                    prepare_entries(pipelines, draws, &fp.entries[entries.clone()], 0, camera.depth, self.kit.max_stride, &mut 0)?;
                }
            }
        }
        let capacity = self.rect.as_ref().map_or(0, |r| r.capacity);
        if table_entries > u64::from(capacity) {
            return Err(PickError::InvalidRequest(format!(
                "the rectangles draw {table_entries} objects and instances; the table holds {capacity} (PickerConfig::rect_entries)"
            )));
        }
        Ok(())
    }

    /// # Safety
    /// As [`Picker::record_queries`].
    unsafe fn record_planned(
        &mut self,
        cmd: vk::CommandBuffer,
        slot: usize,
        request: &PickRequest<'_>,
        queries: &[PickQuery],
        draws: &[PickDraw],
        plan_frame: impl FnMut(&mut Plan, Option<&PixelRay>) -> Result<(), PickError>,
    ) -> Result<PickTicket, PickError> {
        if self.device_lost {
            return Err(PickError::DeviceLost);
        }
        let frames_in_flight = self.slots.len();
        let pending = self.slots.get(slot).ok_or(PickError::InvalidSlot { slot, frames_in_flight })?.pending.as_ref();
        if let Some(p) = pending {
            return Err(PickError::SlotPending { slot, frame: p.frame });
        }
        let camera = request.camera()?;
        if request.viewport.height < 0.0 && !self.negative_viewport_height {
            return Err(PickError::Unsupported { missing: vec![Requirement::ApiVersion(1, 1)] });
        }
        self.plan_queries(request, &camera, queries, plan_frame)?;
        let prepared = self.prepare_parts(draws, &camera);
        let prepared = self.note_loss(prepared);
        prepared?;

        let frame = self.next_frame;
        let detail = self.kit.layout.detail;
        let table_needed = self.frame_plans_entries_needed();
        // Each query places its own region (`region_view`); this framing is only the default.
        let one_pixel = Framing::Region { first: UVec2::ZERO, size: UVec2::ONE, at: UVec2::ZERO };
        let recording = PassRecording::prepared(&self.kit, cmd, &self.targets, &camera, one_pixel);
        let device = recording.device;
        let s = &mut self.slots[slot];
        s.draws.clear();
        s.queries.clear();
        s.spans.clear();
        let fp = &self.frame_plans;
        let queries_ts = self.timestamps.as_ref().map(|ts| SlotQueries { pool: ts.pool.handle, first: 2 * slot as u32 });
        // SAFETY: (whole block) the caller's contract covers `cmd`, the slot and the draws'
        // buffers; every pipeline was prepared and the table's capacity checked above.
        unsafe {
            if let Some(q) = queries_ts {
                device.cmd_reset_query_pool(cmd, q.pool, q.first, 2);
                device.cmd_write_timestamp(cmd, vk::PipelineStageFlags::TOP_OF_PIPE, q.pool, q.first);
            }
            self.staging.begin(device, cmd, slot);
            let mut recorded = 0;
            let hits = fp.parts.iter().filter(|p| matches!(p, PlannedPart::Hit { .. }));
            if hits.clone().next().is_some() {
                recording.begin();
                let mut rows = 0;
                for part in hits.clone() {
                    let PlannedPart::Hit { first, size, at, entries } = part else { continue };
                    recording.set_view(&recording.region_view(*first, *size, *at, request.viewport));
                    recorded += recording.record_draws(draws, &fp.entries[entries.clone()], &fp.ranges, &mut s.draws, s.batch.as_mut(), &mut rows);
                }
                recording.end();
            }
            // The points' texels in one copy per attachment, then each radius query's region.
            let mut offset = HEADER_BYTES;
            let point_count = self.checked.iter().filter(|q| matches!(q, CheckedQuery::Hit { radius: None, .. })).count() as u32;
            let points_block = RegionBlock { offset, pixels: u64::from(point_count), detail };
            if point_count > 0 {
                let extent = vk::Extent2D { width: point_count, height: 1 };
                self.staging.record_region(device, cmd, &self.targets, slot, vk::Offset2D::default(), extent, &points_block);
                offset += RegionBlock::bytes(points_block.pixels, detail);
            }
            let mut point_index = 0;
            let mut hit_parts = hits;
            let mut rect_parts = fp.parts.iter().filter(|p| !matches!(p, PlannedPart::Hit { .. }));
            let mut next_entry = 0u32;
            let mut table_cleared = false;
            for query in &self.checked {
                match *query {
                    CheckedQuery::Hit { pixel, radius: None, region } => {
                        s.queries.push(QueryRecord::Hit { pixel, radius: None, region, block: points_block, texel: point_index });
                        point_index += 1;
                    }
                    CheckedQuery::Hit { pixel, radius: Some(radius), region } => {
                        let Some(PlannedPart::Hit { at, size, .. }) = hit_parts.find(|p| matches!(p, PlannedPart::Hit { at, .. } if at.x >= self.max_queries))
                        else {
                            continue;
                        };
                        let block = RegionBlock { offset, pixels: u64::from(size.x) * u64::from(size.y), detail };
                        let extent = vk::Extent2D { width: size.x, height: size.y };
                        self.staging.record_region(device, cmd, &self.targets, slot, vk::Offset2D { x: at.x as i32, y: at.y as i32 }, extent, &block);
                        offset += RegionBlock::bytes(block.pixels, detail);
                        s.queries.push(QueryRecord::Hit { pixel, radius: Some(radius), region, block, texel: 0 });
                    }
                    CheckedQuery::Rect { rect, mode } => {
                        let Some(kit) = self.rect.as_ref() else { continue };
                        if !table_cleared {
                            table_cleared = true;
                            clear_table(device, cmd, kit, table_needed);
                        }
                        let Some(PlannedPart::Rect { entries }) = rect_parts.next() else { continue };
                        let spans_start = s.spans.len();
                        let map = &mut self.entry_map;
                        map.clear();
                        assign_entries(draws, &fp.entries[entries.clone()], &fp.ranges, map, &mut s.draws, &mut s.spans, &mut next_entry);
                        for _ in 0..rect_tile_count(&rect, kit.tile) {
                            let Some(PlannedPart::Tile { mode, first, size, entries }) = rect_parts.next() else { continue };
                            let pipelines = match mode {
                                RectMode::Visible => &kit.visible,
                                RectMode::All => match kit.all.as_ref() {
                                    Some(p) => p,
                                    None => continue,
                                },
                            };
                            let tile = Tile {
                                mode: *mode,
                                first: *first,
                                size: *size,
                                origin: *first - rect.min,
                                rect_width: rect.size().x,
                                entries: &fp.entries[entries.clone()],
                                ranges: &fp.ranges,
                                map,
                            };
                            recorded += recording.record_tile(kit, pipelines, &tile, draws);
                        }
                        s.queries.push(QueryRecord::Rect { rect, mode, spans: spans_start..s.spans.len() });
                    }
                }
            }
            let table = TableCopy { offset, used: u64::from(next_entry) };
            if let (true, Some(kit)) = (table_cleared, self.rect.as_ref()) {
                let to_transfer = vk::MemoryBarrier::default().src_access_mask(vk::AccessFlags::SHADER_WRITE).dst_access_mask(vk::AccessFlags::TRANSFER_READ);
                let shaders = vk::PipelineStageFlags::FRAGMENT_SHADER | vk::PipelineStageFlags::COMPUTE_SHADER;
                device.cmd_pipeline_barrier(cmd, shaders, vk::PipelineStageFlags::TRANSFER, vk::DependencyFlags::empty(), &[to_transfer], &[], &[]);
                let (n, used) = (u64::from(kit.capacity), table.used);
                let ranges = [(0, offset, 4 * used), (4 * n, offset + 4 * used, 4 * used), (8 * n, offset + 8 * used, 4 * used)];
                self.staging.record_buffer_copy(device, cmd, kit.table.buffer, slot, &ranges);
                offset += 12 * used;
            }
            self.staging.finish(device, cmd, slot, frame, queries_ts);
            let stats = PassStats { draws_recorded: recorded, ..fp.stats };
            s.stats = stats;
            s.pending = Some(Pending { frame, camera, used_bytes: offset, table });
            self.next_frame += 1;
            Ok(PickTicket { slot, frame, stats })
        }
    }

    /// Table entries the frame's rectangle tiles use.
    fn frame_plans_entries_needed(&self) -> u64 {
        let fp = &self.frame_plans;
        fp.parts
            .iter()
            .map(|p| match p {
                PlannedPart::Rect { entries } => entries_needed(&fp.entries[entries.clone()], &fp.ranges),
                PlannedPart::Hit { .. } | PlannedPart::Tile { .. } => 0,
            })
            .sum()
    }

    /// Resolves the query set recorded into `slot`, or `None` if none is pending there. Never
    /// waits. It fits the usual frame loop in any order: wait on the slot's fence, reset it,
    /// take the results, record the next set (it never looks at the fence). The slot's bytes
    /// must carry the stamp of the frame recorded into it; otherwise (a command buffer that
    /// was dropped instead of submitted) the result is [`PickError::StaleResult`] and the
    /// slot is free. Reading costs O(query areas + rectangle table entries used).
    ///
    /// # Safety
    /// The GPU work of the command buffer that last recorded into `slot` has completed, or
    /// that command buffer will never be submitted.
    pub unsafe fn take_results(&mut self, slot: usize) -> Result<Option<FrameResults>, PickError> {
        let frames_in_flight = self.slots.len();
        let s = self.slots.get_mut(slot).ok_or(PickError::InvalidSlot { slot, frames_in_flight })?;
        let pending = s.pending.take();
        if self.device_lost {
            // Nothing a lost device wrote is read.
            return Err(PickError::DeviceLost);
        }
        let Some(pending) = pending else { return Ok(None) };
        let mut bytes = std::mem::take(&mut self.read_buffer);
        // SAFETY: the caller guarantees the copies into this slot have completed.
        let read = unsafe { self.staging.read(slot, pending.used_bytes, self.timestamps.is_some(), &mut bytes) };
        let header = match self.note_loss(read) {
            Ok(h) => h,
            Err(e) => {
                self.read_buffer = bytes;
                return Err(e);
            }
        };
        if header.stamp != stamp_of(pending.frame) {
            self.read_buffer = bytes;
            // Another frame's texels (or none): the frame recorded here never completed.
            return Err(PickError::StaleResult { slot, expected: pending.frame, found: header.stamp.checked_sub(1) });
        }
        let s = &self.slots[slot];
        let mut stats = PickStats { pass: s.stats, gpu_time_ns: None };
        if let (Some(ts), Some([start, end])) = (&self.timestamps, header.timestamps) {
            stats.gpu_time_ns = Some((end.wrapping_sub(start) & ts.mask) as f64 * ts.period_ns);
        }
        let frame = pending.frame;
        let camera = &pending.camera;
        let results = s
            .queries
            .iter()
            .map(|q| match q {
                QueryRecord::Hit { pixel, radius: None, block, texel, .. } => {
                    let mut result = resolve::resolve(frame, *pixel, camera, &s.draws, &block.texels(&bytes, *texel));
                    result.stats = stats;
                    QueryResult::Point(result)
                }
                QueryRecord::Hit { pixel, radius: Some(radius), region, block, .. } => {
                    let (mut result, hit_pixel) = resolve_radius(frame, *pixel, *radius, region, block, &bytes, camera, &s.draws);
                    result.stats = stats;
                    QueryResult::Radius { result, radius: *radius, hit_pixel }
                }
                QueryRecord::Rect { rect, mode, spans } => {
                    QueryResult::Rect(resolve_rect(*rect, *mode, &s.spans[spans.clone()], pending.table, &bytes, camera.depth, &s.draws))
                }
            })
            .collect();
        self.read_buffer = bytes;
        Ok(Some(FrameResults { frame, stats, results }))
    }

    /// Resolves the pick recorded into `slot` (for a query set: its first point or radius
    /// query), or `None` if none is pending there. As [`Picker::take_results`] otherwise.
    ///
    /// # Safety
    /// As [`Picker::take_results`].
    pub unsafe fn take_result(&mut self, slot: usize) -> Result<Option<PickResult>, PickError> {
        // SAFETY: the caller's contract is `take_results`'.
        let results = unsafe { self.take_results(slot) }?;
        Ok(results.and_then(|r| {
            r.results.into_iter().find_map(|q| match q {
                QueryResult::Point(result) | QueryResult::Radius { result, .. } => Some(result),
                QueryResult::Rect(_) => None,
            })
        }))
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

/// Tiles a rectangle is split into.
fn rect_tile_count(rect: &PixelRect, tile: vk::Extent2D) -> usize {
    let s = rect.size();
    (s.x.div_ceil(tile.width.max(1)) as usize) * (s.y.div_ceil(tile.height.max(1)) as usize)
}

/// Clears the table's first `used` entries (counts to 0, depth and pixel keys to the
/// maximum), ordered after the previous frame's use and before this frame's shaders.
///
/// # Safety
/// `cmd` is recording outside a render pass; `used` is within the table's capacity.
unsafe fn clear_table(device: &ash::Device, cmd: vk::CommandBuffer, kit: &RectKit, used: u64) {
    let shaders = vk::PipelineStageFlags::FRAGMENT_SHADER | vk::PipelineStageFlags::COMPUTE_SHADER;
    let before = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::SHADER_WRITE | vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE);
    let after = vk::MemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE);
    let n = 4 * u64::from(kit.capacity);
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
            device.cmd_fill_buffer(cmd, kit.table.buffer, 0, bytes, 0);
            device.cmd_fill_buffer(cmd, kit.table.buffer, n, bytes, u32::MAX);
            device.cmd_fill_buffer(cmd, kit.table.buffer, 2 * n, bytes, u32::MAX);
        }
        device.cmd_pipeline_barrier(cmd, vk::PipelineStageFlags::TRANSFER, shaders, vk::DependencyFlags::empty(), &[after], &[], &[]);
    }
}
