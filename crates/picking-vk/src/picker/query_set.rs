//! Recording a frame's query set over its [`FrameLayout`]: laying the set out, planning each
//! query (a point or radius query in its cell, a rectangle over its whole area for its table
//! entries, then tile by tile), building every pipeline before anything is recorded, and
//! recording the passes, the copies into the slot and the stamp in one walk of the layout.

use super::frame_layout::{FrameLayout, QueryLayout};
use super::query_plans::TableUse;
use super::results_writer::{group_entries, write_results, ResultsFrame};
use super::{Pending, PickTicket, Picker, Slot};
use crate::draw::PickDraw;
use crate::error::{Limit, PickError, Requirement};
use crate::gpu_plan::walkable;
use crate::gpu_plan::TableDraws;
use crate::gpu_results::{GpuResultsKit, UploadExtent};
use crate::handoff::PassStats;
use crate::pass::rect::RectKit;
use crate::pass::targets::PassTargets;
use crate::plan::{PixelRay, Plan, PointTarget};
use crate::readback::{SlotQueries, StagingRing};
use crate::record::rect::{assign_entries, entries_needed, EntryRange, Tile};
use crate::record::{prepare_entries, prepare_walked, BoundState, Framing, PassRecording};
use crate::request::camera::CameraSnapshot;
use crate::request::query::{PickQuery, RectMode};
use crate::request::viewport::Viewport;
use crate::request::PickRequest;
use crate::resolve::query::TableCopy;
use ash::vk;
use glam::UVec2;

impl Picker {
    /// Builds every pipeline the layout's plans need and sizes the rectangle table; after
    /// this nothing can fail, so an error leaves the command buffer untouched.
    fn prepare_layout(&mut self, draws: &[PickDraw], camera: &CameraSnapshot, contributors: usize) -> Result<(), PickError> {
        let layout = &mut self.layout;
        let (mut rows, mut table_entries) = (0, 0u64);
        for query in &layout.queries {
            match query {
                QueryLayout::Point { plan: None, .. } => {}
                QueryLayout::Point { plan: Some(plan), .. } | QueryLayout::Radius { plan, .. } => {
                    let kit = &mut self.kit;
                    let entries = &layout.plans.entries[plan.clone()];
                    prepare_entries(&mut kit.pipelines, &mut kit.instance_sets, draws, entries, kit.batch_rows, camera, &mut rows)?;
                    if self.gpu_plan.is_some() {
                        let planner = self.planner;
                        prepare_walked(&mut kit.pipelines, draws, entries, camera, |d| walkable(d, planner))?;
                    }
                }
                QueryLayout::Rect { mode, plan, tiles, .. } => {
                    // The table counts instances the CPU knows; the GPU picks an indirect draw's.
                    let planned = &layout.plans.entries[plan.clone()];
                    if let Some(e) = planned.iter().find(|e| draws.get(e.draw as usize).is_some_and(|d| d.indirect.is_some())) {
                        let reason = "rectangle queries cannot count the instances of an indirect draw".into();
                        return Err(PickError::InvalidDraw { index: e.draw as usize, reason });
                    }
                    table_entries += entries_needed(planned, &layout.plans.ranges);
                    let Some(rect) = self.rect.as_mut() else { continue };
                    let pipelines = match mode {
                        RectMode::Visible => &mut rect.visible,
                        RectMode::All => rect.all.as_mut().ok_or(PickError::Unsupported { missing: vec![Requirement::Feature("fragmentStoresAndAtomics")] })?,
                    };
                    for tile in &layout.tiles[tiles.clone()] {
                        let entries = &layout.plans.entries[tile.plan.clone()];
                        prepare_entries(pipelines, &mut self.kit.instance_sets, draws, entries, 0, camera, &mut 0)?;
                    }
                }
            }
        }
        let capacity = self.rect.as_ref().map_or(0, |r| r.capacity);
        if table_entries > u64::from(capacity) {
            return Err(PickError::Capacity { limit: Limit::RectEntries, configured: capacity.into(), asked: table_entries });
        }
        layout.table_used = table_entries;
        if let Some(kit) = self.gpu_results.as_ref() {
            let most = hit_draws_at_most(layout, contributors);
            if most > u64::from(kit.layout.draw_capacity) {
                return Err(PickError::Capacity { limit: Limit::GpuResultDraws, configured: kit.layout.draw_capacity.into(), asked: most });
            }
        }
        Ok(())
    }

    /// Checks, lays out, plans and prepares the set, then records it into `slot`.
    ///
    /// # Safety
    /// As [`Picker::record`].
    pub(super) unsafe fn record_planned(
        &mut self,
        cmd: vk::CommandBuffer,
        slot: usize,
        request: &PickRequest<'_>,
        queries: &[PickQuery],
        draws: &[PickDraw],
        mut plan_frame: impl FnMut(&mut Plan, Option<&PixelRay>, Option<PointTarget<'_>>, TableUse) -> Result<(), PickError>,
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
        if let Some(w) = &request.host_writes {
            w.check()?;
        }
        request.result_readers.check()?;
        request.check_enabled_stages(self.disabled_stages)?;
        self.contributor_ids = crate::draw::contributor::check_ranges(request.contributors, draws)?;
        self.plan_layout(request, &camera, queries, draws, &mut plan_frame)?;
        self.begin_frame(slot);
        let prepared = self.prepare_layout(draws, &camera, request.contributors.len());
        self.note_loss(prepared)?;
        // SAFETY: the caller's contract covers `cmd`, the slot and the draws' buffers; every
        // pipeline was prepared and the table's capacity checked above.
        let recorded = unsafe { self.record_layout(cmd, slot, request, &camera, draws) };
        let frame = self.next_frame;
        let stats = PassStats { draws_recorded: recorded, ..self.layout.plans.stats };
        let s = &mut self.slots[slot];
        s.stats = stats;
        s.pending = Some(Pending { frame, camera });
        s.last_frame = Some(frame);
        // The slot keeps this frame's layout; its last one becomes the next frame's scratch.
        std::mem::swap(&mut s.layout, &mut self.layout);
        self.next_frame += 1;
        Ok(PickTicket { slot, frame, stats })
    }

    /// Pipelines last used before the oldest frame that may still run can be destroyed: the
    /// newest frame of every other slot may run; `slot`'s previous one has completed.
    fn begin_frame(&mut self, slot: usize) {
        let frame = self.next_frame;
        let oldest_in_flight = self.slots.iter().enumerate().filter(|(i, _)| *i != slot).filter_map(|(_, s)| s.last_frame).min().unwrap_or(frame);
        self.kit.pipelines.begin_frame(frame, oldest_in_flight);
        self.kit.instance_sets.begin_frame(frame, oldest_in_flight);
        if let Some(rect) = self.rect.as_mut() {
            rect.visible.begin_frame(frame, oldest_in_flight);
            if let Some(all) = rect.all.as_mut() {
                all.begin_frame(frame, oldest_in_flight);
            }
        }
    }

    /// Records the prepared layout into `cmd`: the host's writes' barrier, the pick pass over
    /// the point and radius queries, their copies, the rectangles tile by tile, the table's
    /// copy and the stamp. Returns the draws recorded.
    ///
    /// # Safety
    /// As [`Picker::record`]; `prepare_layout` succeeded for this layout; `contributor_ids`
    /// holds the ranges `check_ranges` took from `request`'s contributors.
    unsafe fn record_layout(&mut self, cmd: vk::CommandBuffer, slot: usize, request: &PickRequest<'_>, camera: &CameraSnapshot, draws: &[PickDraw]) -> u64 {
        let contributor_ids = std::mem::take(&mut self.contributor_ids);
        let gpu_plan = self.prepare_gpu_plan(slot, request, camera, draws).then_some(self.gpu_plan.as_ref()).flatten();
        let pairs = &self.gpu_pairs;
        // The table's rows this frame's cull pass writes, where it plans with one.
        let table = self.frame_table.as_ref().filter(|_| pairs.table.is_some());
        let table_draws = table.and_then(|t| {
            Some(TableDraws { rows: t.frame(slot)?.0, statics: t.statics(), runs_offset: t.runs_offset(), index: &t.index, windows: &pairs.windows })
        });
        let table_rows = table_draws.as_ref().map(|t| t.rows);
        // Each query places its own region (`region_view`); this framing is only the default.
        let one_pixel = Framing::Region { first: UVec2::ZERO, size: UVec2::ONE, at: UVec2::ZERO };
        let recording = PassRecording::prepared(&self.kit, cmd, &self.targets, camera, one_pixel)
            .with_contributors(request, contributor_ids)
            .with_gpu_plan(gpu_plan.and_then(|kit| kit.planned(slot, &pairs.pair_of_range, &pairs.commands, table_draws)));
        let device = recording.device;
        let s = &mut self.slots[slot];
        s.draws.clear();
        s.spans.clear();
        s.gpu_plan = gpu_plan.map(|_| pairs.stats());
        s.table = table.cloned();
        let queries_ts = self.timestamps.as_ref().map(|ts| SlotQueries::of_slot(ts.pool.handle, slot));
        let staging = &self.staging;
        let readers = request.result_readers;
        let mut results = self.gpu_results.as_mut();
        let dst = staging.destination(slot);
        // SAFETY: (whole block) the caller's contract covers `cmd`, the slot and the draws.
        unsafe {
            if let Some(w) = &request.host_writes {
                w.record_before(device, cmd);
            }
            if let Some(q) = queries_ts {
                q.record_start(device, cmd, gpu_plan.is_some());
            }
            // The GPU plan's dispatches write the pick passes' indirect commands; the slot's
            // first barrier makes them visible.
            if let Some(kit) = gpu_plan {
                let counts = (pairs.commands.len() as u32, pairs.finishes_instances());
                kit.record_cull(device, cmd, slot, counts, (&pairs.inputs, pairs.table), queries_ts);
            }
            // The GPU results add no barrier beyond their pass's (the host's writes to their
            // upload reach the GPU at submission), the plan none beyond the one between its
            // dispatches: theirs ride on the slot's first and last; the results pass writes the
            // texels in place of the copies, and the rectangle counts' copy runs beside the
            // table's.
            let walks = pairs.walks();
            let plan_first = gpu_plan.and_then(|k| k.first_barrier(slot, table_rows, walks));
            staging.begin(device, cmd, slot, results.as_deref().and_then(|k| k.first_barrier(slot, readers)), plan_first);
            let mut recorded = record_hits(&recording, &self.layout, s, draws, request.viewport);
            let rows = results.as_deref().map_or(0, |kit| s.draws.len().min(kit.layout.draw_capacity as usize));
            // The table groups the point and radius queries met follow the rows.
            let groups = s.table.as_ref().map_or(0, |_| group_entries(&self.layout).count() as u32);
            match results.as_deref_mut() {
                Some(kit) => record_results_pass(kit, device, cmd, slot, &self.layout, (rows as u32, groups)),
                None => record_hit_copies(staging, device, cmd, &self.targets, dst, &self.layout),
            }
            if let Some(kit) = self.rect.as_ref() {
                recorded += record_rects(&recording, kit, &mut self.layout, s, &mut self.entry_map, draws);
                if record_table_copy(staging, device, cmd, kit, dst, &self.layout) {
                    if let Some(results) = results.as_deref() {
                        // After the table's barrier; the table clear's first barrier ordered
                        // the results pass before it.
                        results.record_counts_copy(device, cmd, slot, kit.table.buffer, self.layout.table_used as u32);
                    }
                }
            }
            if let Some(kit) = results.as_deref_mut() {
                let (draws, spans, table) = (&s.draws, &s.spans, s.table.as_deref());
                let frame = ResultsFrame { frame: self.next_frame, layout: &self.layout, draws, rows, spans, camera, table };
                kit.write_upload(slot, |up, scratch, layout| write_results(up, &frame, scratch, layout));
            }
            let last = results.as_deref().and_then(|k| k.last_barrier(slot, readers));
            staging.finish(device, cmd, slot, self.next_frame, queries_ts, (last, gpu_plan.and_then(|k| k.last_barrier(slot, table_rows, walks))));
            if let Some(w) = &request.host_writes {
                w.record_after(device, cmd);
            }
            recorded
        }
    }
}

/// Plans `layout`'s frame's GPU results upload and records what carries it over: with point
/// or radius queries (which recorded `rows` draws and met `groups` table groups) the results
/// pass, else a copy (its words are written before the command buffer is submitted).
///
/// # Safety
/// As [`GpuResultsKit::record_queries`].
unsafe fn record_results_pass(
    kit: &mut GpuResultsKit,
    device: &ash::Device,
    cmd: vk::CommandBuffer,
    slot: usize,
    layout: &FrameLayout,
    (rows, groups): (u32, u32),
) {
    let (queries, entries) = (layout.queries.len() as u32, layout.has_rects().then_some(layout.table_used as u32));
    let extent = UploadExtent { queries, rows: rows + 2 * groups, entries };
    kit.plan_upload(extent);
    // SAFETY: the caller's contract; the upload is written before the command buffer ends.
    unsafe {
        if layout.has_hits() {
            kit.record_queries(device, cmd, slot, (queries, extent.copy_groups(&kit.layout)), (rows, groups));
        } else {
            kit.record_upload_copy(device, cmd, slot);
        }
    }
}

/// The most draws the point and radius queries of `layout` can record: a draw per planned
/// entry (a run per chunk of a chunk-culled one), and the contributors in every region.
fn hit_draws_at_most(layout: &FrameLayout, contributors: usize) -> u64 {
    let mut most = 0u64;
    for query in &layout.queries {
        let plan = match query {
            QueryLayout::Point { plan: Some(plan), .. } | QueryLayout::Radius { plan, .. } => plan,
            QueryLayout::Point { plan: None, .. } | QueryLayout::Rect { .. } => continue,
        };
        // A table group takes two rows: its rows, first draw and flags.
        most += layout.plans.entries[plan.clone()].iter().map(|e| u64::from(e.run_count.max(1) + u32::from(e.table))).sum::<u64>() + contributors as u64;
    }
    most
}

/// Records the pick pass over every point and radius query of `layout`, each region at its
/// texel or cell; returns the draws recorded.
///
/// # Safety
/// As [`Picker::record_layout`].
unsafe fn record_hits(recording: &PassRecording<'_>, layout: &FrameLayout, s: &mut Slot, draws: &[PickDraw], viewport: Viewport) -> u64 {
    if !layout.has_hits() {
        return 0;
    }
    let (mut recorded, mut rows, mut bound) = (0, 0, BoundState::default());
    // SAFETY: the caller's contract.
    unsafe { recording.begin() };
    for query in &layout.queries {
        let (first, size, at, plan) = match query {
            QueryLayout::Point { pixel, texel, plan: Some(plan) } => (*pixel, UVec2::ONE, UVec2::new(*texel, 0), plan),
            QueryLayout::Radius { region, cell, plan, .. } => (region.min, region.size(), *cell, plan),
            QueryLayout::Point { plan: None, .. } | QueryLayout::Rect { .. } => continue,
        };
        // SAFETY: inside the pass begun above; every pipeline was prepared.
        unsafe {
            recording.set_view(&recording.region_view(first, size, at, viewport));
            let planned = layout.plans.planned(plan.clone());
            recorded += u64::from(recording.record_draws(draws, planned, &mut s.draws, s.batch.as_mut(), &mut rows, &mut bound));
        }
    }
    // SAFETY: the pass begun above.
    unsafe { recording.end() };
    recorded
}

/// Copies the points' texels (one copy per attachment) and each radius query's region into
/// their staging blocks.
///
/// # Safety
/// As [`Picker::record_layout`], after the pick pass.
unsafe fn record_hit_copies(
    staging: &StagingRing,
    device: &ash::Device,
    cmd: vk::CommandBuffer,
    targets: &PassTargets,
    dst: (vk::Buffer, u64),
    layout: &FrameLayout,
) {
    // SAFETY: (whole block) the caller's contract.
    unsafe {
        if layout.points > 0 {
            let extent = vk::Extent2D { width: layout.points, height: 1 };
            staging.record_region(device, cmd, targets, dst, vk::Offset2D::default(), extent, &layout.points_block);
        }
        for query in &layout.queries {
            if let QueryLayout::Radius { region, cell, block, .. } = query {
                let extent = vk::Extent2D { width: region.size().x, height: region.size().y };
                staging.record_region(device, cmd, targets, dst, vk::Offset2D { x: cell.x as i32, y: cell.y as i32 }, extent, block);
            }
        }
    }
}

/// Records every rectangle of `layout`: the table cleared once, each rectangle's entries
/// assigned (its spans noted in the layout), then its tiles. Returns the draws recorded.
///
/// # Safety
/// As [`Picker::record_layout`].
unsafe fn record_rects(
    recording: &PassRecording<'_>,
    kit: &RectKit,
    layout: &mut FrameLayout,
    s: &mut Slot,
    map: &mut Vec<EntryRange>,
    draws: &[PickDraw],
) -> u64 {
    let FrameLayout { queries, tiles, plans, table_used, .. } = layout;
    let (mut recorded, mut next_entry, mut cleared) = (0, 0u32, false);
    for query in queries.iter_mut() {
        let QueryLayout::Rect { rect, mode, plan, tiles: own_tiles, spans } = query else { continue };
        if !cleared {
            cleared = true;
            // SAFETY: the caller's contract; outside any pass.
            unsafe { kit.record_clear(recording.device, recording.cmd, *table_used) };
        }
        let pipelines = match mode {
            RectMode::Visible => &kit.visible,
            // Prepared (and so present) whenever a set holds an `All` rectangle.
            RectMode::All => match kit.all.as_ref() {
                Some(p) => p,
                None => continue,
            },
        };
        let spans_start = s.spans.len();
        map.clear();
        assign_entries(draws, &plans.entries[plan.clone()], &plans.ranges, map, &mut s.draws, &mut s.spans, &mut next_entry);
        for t in &tiles[own_tiles.clone()] {
            let tile = Tile {
                mode: *mode,
                first: t.first,
                size: t.size,
                origin: t.first - rect.min,
                rect_width: rect.size().x,
                entries: &plans.entries[t.plan.clone()],
                ranges: &plans.ranges,
                map,
            };
            // SAFETY: the caller's contract; the table was cleared above.
            recorded += u64::from(unsafe { recording.record_tile(kit, pipelines, &tile, draws) });
        }
        *spans = spans_start..s.spans.len();
    }
    debug_assert_eq!(u64::from(next_entry), *table_used, "the entries assigned are the entries prepared");
    recorded
}

/// Copies the rectangle table's used entries (counts, depth keys, first pixels) into the
/// slot after the region blocks, when the set holds a rectangle; returns whether it did.
///
/// # Safety
/// As [`Picker::record_layout`], after the rectangles.
unsafe fn record_table_copy(
    staging: &StagingRing,
    device: &ash::Device,
    cmd: vk::CommandBuffer,
    kit: &RectKit,
    dst: (vk::Buffer, u64),
    layout: &FrameLayout,
) -> bool {
    if !layout.has_rects() {
        return false;
    }
    let TableCopy { offset, used } = layout.table();
    let to_transfer = vk::MemoryBarrier::default().src_access_mask(vk::AccessFlags::SHADER_WRITE).dst_access_mask(vk::AccessFlags::TRANSFER_READ);
    let shaders = vk::PipelineStageFlags::FRAGMENT_SHADER | vk::PipelineStageFlags::COMPUTE_SHADER;
    let n = u64::from(kit.capacity);
    let ranges = [(0, offset, 4 * used), (4 * n, offset + 4 * used, 4 * used), (8 * n, offset + 8 * used, 4 * used)];
    // SAFETY: the caller's contract; the table's writes are made visible to the copy.
    unsafe {
        device.cmd_pipeline_barrier(cmd, shaders, vk::PipelineStageFlags::TRANSFER, vk::DependencyFlags::empty(), &[to_transfer], &[], &[]);
        staging.record_buffer_copy(device, cmd, kit.table.buffer, dst, &ranges);
    }
    true
}
