//! [`Picker`]: records a frame's query set (the pick pass over a cell per point or radius
//! query, the rectangle pass tile by tile) into the host's command buffers and resolves the
//! results once the host says that frame's GPU work is done.

mod create;
mod frame_layout;
mod gpu_jobs;
mod gpu_pairs;
mod gpu_table;
mod memory;
mod query_plans;
mod query_set;
mod results;
mod results_writer;
mod same_frame;
pub use memory::PickMemory;
pub use same_frame::HostSignal;

use create::Timestamps;
use frame_layout::FrameLayout;
use gpu_pairs::FramePairs;
use gpu_table::{CachedTable, PairBudget, SetSize};
use query_plans::TableUse;

use crate::draw::raster::Culling;
use crate::draw::{DrawList, PickDraw};
use crate::error::{Input, PickError};
use crate::gpu_plan::table::DrawTable;
use crate::gpu_plan::{walkable, GpuPlanKit};
use crate::gpu_results::GpuResultsKit;
use crate::handoff::{DrawSnapshot, EntrySpan, PassStats};
use crate::host::config::{DetailStatus, Planner};
use crate::pass::pipeline_key::PipelineKey;
use crate::pass::rect::RectKit;
use crate::pass::targets::PassTargets;
use crate::pass::PassKit;
use crate::plan::Plan;
use crate::readback::StagingRing;
use crate::record::batch::DrawBatchBuffer;
use crate::record::rect::EntryRange;
use crate::request::camera::{CameraSnapshot, DepthConvention};
use crate::request::query::{view_pixels, PickQuery, QueryTicket};
use crate::request::viewport::ViewportLimits;
use crate::request::PickRequest;
use crate::resolve::result::GpuPlanStats;
use ash::vk;
use std::sync::Arc;

/// Returned by [`Picker::record`]: which slot and frame the results will belong to.
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
        // Lossless: usize is at most 64 bits on every target Vulkan runs on.
        QueryTicket { frame: self.frame, index: index as u64 }
    }
}

struct Pending {
    frame: u64,
    camera: CameraSnapshot,
}

/// One slot per frame in flight: what was recorded there and is not yet resolved.
#[derive(Default)]
struct Slot {
    pending: Option<Pending>,
    stats: PassStats,
    /// The layout of the set recorded here (the picker's scratch layout, swapped in).
    layout: FrameLayout,
    /// Reused every frame, so recording allocates nothing once warm.
    draws: Vec<DrawSnapshot>,
    batch: Option<DrawBatchBuffer>,
    spans: Vec<EntrySpan>,
    /// The frame last recorded here: it may still run on the GPU until the slot is reused.
    last_frame: Option<u64>,
    /// What the frame's GPU plan took (survivors and fallbacks are read back with the results).
    gpu_plan: Option<GpuPlanStats>,
    /// The shared list's table the frame planned with: its rows' snapshots, and its buffers
    /// kept alive while the frame may run.
    table: Option<Arc<DrawTable>>,
}

/// Pixel-exact GPU picking in the host's own command buffers. See the crate docs.
pub struct Picker {
    // Fields drop in order: the per-slot buffers, staging and targets before the pass kit
    // (pipelines, render pass) and the allocator it shares.
    slots: Vec<Slot>,
    gpu_results: Option<GpuResultsKit>,
    /// The GPU planner's buffers and cull pass (none with `Planner::Cpu`, culling off, or
    /// where the device lacks what it needs under `Planner::Auto`).
    gpu_plan: Option<GpuPlanKit>,
    /// The frame being recorded's GPU-planned pairs.
    gpu_pairs: FramePairs,
    /// The last shared list's GPU plan table, and the one the frame being recorded plans with.
    table: Option<CachedTable>,
    frame_table: Option<Arc<DrawTable>>,
    /// `PairBudget`'s per-group flags, kept between frames.
    table_claimed: Vec<bool>,
    planner: Planner,
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
    viewport_limits: ViewportLimits,
    /// Side of a point or radius query's cell in the targets: `2 * max_radius + 1`.
    cell: u32,
    max_queries: u32,
    max_radius: u32,
    select_through: bool,
    /// The set being recorded: laid out, planned, then swapped into its slot.
    layout: FrameLayout,
    /// The rectangle being recorded: its instances' table entries.
    entry_map: Vec<EntryRange>,
    /// The bytes of the slot being resolved; reused.
    read_buffer: Vec<u8>,
    /// Whether the device's Vulkan 1.2 provides `vkWaitSemaphores` (timeline waits).
    core_timeline_wait: bool,
    /// Shader stages the host's device lacks, where it said which core features it enabled
    /// (`HostDevice::with_enabled_core`): refused in host writes and result readers.
    disabled_stages: vk::PipelineStageFlags,
    /// The recording's contributors' ID ranges, asked once (`contributor::check_ranges`),
    /// until the recording takes them.
    contributor_ids: Vec<std::ops::Range<u64>>,
}

impl Picker {
    /// Whether detail picking runs, and if not, why.
    pub fn detail_status(&self) -> &DetailStatus {
        &self.detail_status
    }

    /// How many frame slots the picker has.
    pub fn frames_in_flight(&self) -> usize {
        self.slots.len()
    }

    /// Whether runs of draws are recorded as indirect draws (see [`PickerConfig::batch_rows`](crate::PickerConfig::batch_rows)).
    pub fn batching_active(&self) -> bool {
        self.slots.iter().all(|s| s.batch.is_some())
    }

    /// Slot `slot`'s GPU results buffer (device-local; the picker's, living as long as it
    /// does) as the host binds it: a storage buffer read by [`GPU_RESULTS_GLSL`](crate::gpu_results::GPU_RESULTS_GLSL),
    /// `range` its configured size. Only the commands of a frame recorded into `slot` write it,
    /// after reads in [`PickRequest::result_readers`]' stages submitted before them on the
    /// queue, then the barrier to those readers; the host's passes after it read that frame's
    /// results.
    pub fn gpu_results(&self, slot: usize) -> Result<vk::DescriptorBufferInfo, PickError> {
        let kit = self.gpu_results.as_ref().ok_or_else(|| PickError::InvalidInput {
            input: Input::Config("gpu_results"),
            reason: "the picker was created without PickerConfig::gpu_results".into(),
        })?;
        let frames_in_flight = self.slots.len();
        let s = kit.slots.get(slot).ok_or(PickError::InvalidSlot { slot, frames_in_flight })?;
        Ok(vk::DescriptorBufferInfo { buffer: s.results.buffer, offset: 0, range: kit.layout.bytes() })
    }

    /// Records a frame's query set into `cmd`: points and radius queries in one pass (a cell
    /// each), rectangles in the rectangle pass tile by tile (reduced on the GPU into a table),
    /// the copies of what they produced into `slot`, and the frame's stamp. A single pick is a
    /// one-query set: `&[PickQuery::Point(pixel)]`. [`Picker::take_results`] returns the
    /// results in query order, also keyed by [`PickTicket::query`].
    ///
    /// `draws` is this frame's list (`&draws`: every draw checked, culling walks them all) or
    /// a shared one (`&Arc<[PickDraw]>`: checked once per list, culled through a hierarchy);
    /// see [`DrawList`].
    ///
    /// Records nothing and returns an error, checking in this order:
    /// 1. the device was lost ([`PickError::DeviceLost`]);
    /// 2. `slot` is not a frame slot ([`PickError::InvalidSlot`]), or still holds a set that
    ///    was neither taken ([`Picker::take_results`]) nor cancelled ([`Picker::cancel`]):
    ///    one set per slot and frame ([`PickError::SlotPending`]);
    /// 3. the request: the camera and viewport, the host's writes and result readers, contributors' ranges;
    /// 4. the queries: their number, then each in order against the view and the configured
    ///    limits (radius, rectangle mode), then the rectangles' tiles;
    /// 5. as each query is planned, in order: the viewport its pass shifts, against the
    ///    device's limits, and (with the first) the draws: each of a borrowed list, a shared
    ///    list once;
    /// 6. the pipelines the plan needs and the rectangle table's capacity.
    ///
    /// Before them, a new shared list's first record may build its GPU plan table (kept).
    ///
    /// # Safety
    /// - `cmd` is a primary command buffer of the picker's device, is recording, and is
    ///   outside any render pass; it will be submitted to a queue of the family given at
    ///   creation. No other thread records into `cmd` or uses its pool during the call
    ///   (contributors record into it too).
    /// - Every command buffer the picker records into is submitted to the same queue: all
    ///   slots share the picker's targets and rectangle table, and only submission order on
    ///   one queue (with the passes' dependencies) orders one frame's passes after the last
    ///   one's copies.
    /// - Every buffer the draws name is a live buffer of the picker's device, has the usages
    ///   the draw types document, and stays alive until `cmd` completes. A buffer created
    ///   with `VK_SHARING_MODE_EXCLUSIVE` and last written on a queue of another family was
    ///   released and acquired to the picker's family. (Each [`BufferRange`](crate::draw::BufferRange) lying
    ///   inside its buffer is the host's to ensure: Vulkan offers no query of a buffer's size.)
    /// - GPU writes to those buffers (vertex, index, instance, joint and morph buffers,
    ///   indirect commands and counts, hook resources) recorded before `cmd`'s pick are made
    ///   visible to the pass by [`PickRequest::with_host_writes`] or the host's own barrier
    ///   to `DRAW_INDIRECT | VERTEX_INPUT | VERTEX_SHADER | FRAGMENT_SHADER` (and
    ///   `COMPUTE_SHADER` with `SHADER_READ`: the GPU planner reads storage instances), and
    ///   its later writes ordered after the pick (the same, a barrier or a fence). The stages
    ///   `HostWrites` and `ResultReaders` name are ones the device enabled (geometry,
    ///   tessellation).
    /// - What the GPU reads stays in range: every index plus `vertex_offset` names a vertex
    ///   of its positions (and of its attribute and deformation streams), and indirect
    ///   commands draw only the vertices, indices and instances the draw describes
    ///   (`firstInstance + instanceCount` within its instances, a count buffer's value read
    ///   up to `max_draw_count`). The picker checks what it can read on the CPU; buffer
    ///   contents written by the GPU it cannot.
    /// - Each hooked draw's [`DrawHooks::descriptor_set`](crate::hooks::DrawHooks::descriptor_set)
    ///   was allocated from its program's host set layout, has every binding the hooks use
    ///   written with live resources of the picker's device, and is neither freed nor updated
    ///   until `cmd` completes; the images it names are in the layouts their descriptors state
    ///   when the pick runs (the picker transitions none of them); the hook code indexes those
    ///   resources (and its arrays) within their bounds.
    /// - Contributors meet [`PickContributor::record`](crate::contributor::PickContributor::record)'s
    ///   contract.
    /// - The GPU work last recorded into `slot` has completed (the host waited on that
    ///   frame's fence before reusing its command buffer).
    /// - Work that reads `slot`'s [GPU results](Picker::gpu_results) buffer (this frame's or
    ///   an earlier frame's results still being read) reads it in stages of this request's
    ///   [`PickRequest::result_readers`] and, where it is submitted to another queue,
    ///   completes before `cmd` runs (the frame's first barrier orders only this queue's);
    ///   another queue of another family acquires the buffer (created
    ///   `VK_SHARING_MODE_EXCLUSIVE`) before it reads it and releases it back.
    pub unsafe fn record<'d>(
        &mut self,
        cmd: vk::CommandBuffer,
        slot: usize,
        request: &PickRequest<'_>,
        queries: &[PickQuery],
        draws: impl Into<DrawList<'d>>,
    ) -> Result<PickTicket, PickError> {
        match draws.into() {
            DrawList::Borrowed(draws) => {
                // Planning validates every draw, culled or not, in its one pass over the list:
                // the first query's plan does it.
                let mut validate = Some(self.kit.draw_limits);
                // SAFETY: the caller's contract is `record_planned`'s.
                unsafe {
                    self.record_planned(cmd, slot, request, queries, draws, |plan, ray, _point, _table_use| {
                        let result = plan.build(request, draws, ray, validate);
                        validate = None;
                        result
                    })
                }
            }
            DrawList::Shared(draws) => {
                // Every draw once per list (the list cannot change while its `Arc` lives),
                // at the same point of the checks as a borrowed list's.
                let known = self.validated_shared.as_ref().is_some_and(|v| v.upgrade().is_some_and(|d| Arc::ptr_eq(&d, draws)));
                let (limits, mut validate) = (self.kit.draw_limits, !known);
                if self.device_lost {
                    return Err(PickError::DeviceLost);
                }
                // The queries leave the table's draws to the GPU plan. A
                // table reads only what validation checks is sound to read (a draw that fails
                // it fails the frame below).
                let table = self.table_for(draws, SetSize::of(queries, &view_pixels(&request.viewport)))?;
                self.frame_table = table.clone();
                let frame_rows = self.gpu_plan.as_ref().and_then(|k| k.tables()).map_or(0, |d| d.limits.frame_rows);
                let claimed = std::mem::take(&mut self.table_claimed);
                let mut budget = self.gpu_plan.as_ref().filter(|_| table.is_some()).map(|k| PairBudget::new(k.layout, self.planner, frame_rows, claimed));
                // SAFETY: the caller's contract is `record_planned`'s.
                let ticket = unsafe {
                    self.record_planned(cmd, slot, request, queries, draws, |plan, ray, point, table_use| {
                        if std::mem::take(&mut validate) {
                            draws.iter().enumerate().try_for_each(|(i, d)| d.validate(i, &limits))?;
                        }
                        plan.build_shared(request, draws, ray, point, table.as_ref().filter(|_| table_use != TableUse::No).map(|t| &t.index));
                        // Past the GPU plan's bounds, the query's groups are planned on the CPU. A
                        // rectangle claims its groups' rows, and their pairs once per tile; its
                        // tiles keep those groups and claim nothing more.
                        let copies = match table_use {
                            TableUse::Claimed => 1,
                            TableUse::Rect { tiles } => u64::from(tiles),
                            TableUse::No | TableUse::Tile => 0,
                        };
                        if let (Some(b), Some(t), true) = (budget.as_mut(), table.as_ref(), copies > 0) {
                            if !b.claim(plan.planned(), draws, &t.index, copies) {
                                plan.build_shared(request, draws, ray, point, None);
                                b.claim(plan.planned(), draws, &t.index, copies);
                            }
                        }
                        Ok(())
                    })
                };
                self.frame_table = None;
                self.table_claimed = budget.map(PairBudget::into_claimed).unwrap_or_default();
                let ticket = ticket?;
                self.validated_shared = Some(Arc::downgrade(draws));
                Ok(ticket)
            }
        }
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

    /// Builds, ahead of the first pick, every pipeline `draws` need under `depth` and the
    /// requests' default `culling` ([`PickRequest::culling`]; [`Culling::NONE`](crate::draw::Culling::NONE)
    /// unless set) for points and radius queries, batched or not, and rectangles, so that no
    /// pick pays for building one (3 to 9 ms each on lavapipe). Returns how many were built;
    /// under `Planner::Auto` it also builds the GPU planner's table passes, uncounted, where
    /// `draws` have enough table rows for Auto to use one (README, "Which planner").
    /// Draws are validated as [`Picker::record`] validates a borrowed list.
    pub fn warm_up(&mut self, draws: &[PickDraw], depth: DepthConvention, culling: Culling) -> Result<usize, PickError> {
        if self.device_lost {
            return Err(PickError::DeviceLost);
        }
        if !culling.is_known() {
            return Err(PickError::InvalidInput { input: Input::Camera, reason: format!("unknown culling {culling:?}") });
        }
        let before = self.pipeline_count();
        let batching = self.kit.batch_rows > 0;
        for (index, draw) in draws.iter().enumerate() {
            draw.validate(index, &self.kit.draw_limits)?;
            let key = |batched| PipelineKey::of(draw, batched, depth, culling);
            let hooks = draw.hooks.as_ref();
            let built = self.kit.pipelines.get(key(false), hooks).and_then(|_| {
                if batching && draw.instances.is_none() && draw.indirect.is_none() {
                    self.kit.pipelines.get(key(true), hooks)
                } else if self.gpu_plan.is_some() && walkable(draw, self.planner) {
                    self.kit.pipelines.get(key(false).walked(true), hooks)
                } else {
                    Ok(vk::Pipeline::null())
                }
            });
            self.note_loss(built)?;
            if let Some(rect) = self.rect.as_mut() {
                let built =
                    rect.visible.get(key(false), hooks).and_then(|_| rect.all.as_mut().map_or(Ok(vk::Pipeline::null()), |all| all.get(key(false), hooks)));
                self.note_loss(built)?;
            }
        }
        self.warm_up_tables(draws)?;
        Ok(self.pipeline_count() - before)
    }

    /// Hook program stages compiled so far (each once per pass flavour and instancing, on
    /// the first pick or [`Picker::warm_up`] that needs it). Draws without hooks never compile.
    pub fn hook_compilations(&self) -> u32 {
        let rect = self.rect.as_ref().map_or(0, |r| r.visible.hook_compilations() + r.all.as_ref().map_or(0, |a| a.hook_compilations()));
        self.kit.pipelines.hook_compilations() + rect
    }

    /// Pipelines built and kept (at most [`PickerConfig::max_pipelines`](crate::PickerConfig::max_pipelines) per pass flavour,
    /// beyond which the least recently used one no running frame needs is destroyed).
    pub fn pipeline_count(&self) -> usize {
        let rect = self.rect.as_ref().map_or(0, |r| r.visible.len() + r.all.as_ref().map_or(0, |a| a.len()));
        self.kit.pipelines.len() + rect
    }

    /// Whether a query set was recorded into `slot` and is neither taken nor cancelled yet
    /// (true from [`Picker::record`] until [`Picker::take_results`] or [`Picker::cancel`];
    /// it says nothing about whether the GPU has finished).
    pub fn is_pending(&self, slot: usize) -> bool {
        self.slots.get(slot).is_some_and(|s| s.pending.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::query::{FrameResults, QueryResult};
    use crate::resolve::result::{PickResult, PickStats};

    fn miss() -> PickResult {
        PickResult { stats: PickStats::default(), frame: 7, pixel: glam::UVec2::ZERO, ray: None, hit: None }
    }

    #[test]
    fn query_tickets_past_u32_do_not_alias_a_recorded_query() {
        let ticket = PickTicket { slot: 0, frame: 7, stats: PassStats::default() };
        let far = ticket.query((1usize << 32) + 1);
        assert_ne!(far, ticket.query(1));
        assert_eq!(far.index, (1u64 << 32) + 1);
        let results = FrameResults { frame: 7, stats: PickStats::default(), results: vec![QueryResult::Point(miss()), QueryResult::Point(miss())] };
        assert!(results.get(ticket.query(1)).is_some());
        assert!(results.get(far).is_none(), "index 2^32 + 1 named query 1");
    }
}
