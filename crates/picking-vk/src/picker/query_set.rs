//! Recording a frame's query set: checking the queries, planning each (a point or radius
//! query in its cell, a rectangle over its whole area for its table entries, then tile by
//! tile), building every pipeline before anything is recorded, and recording the passes, the
//! copies into the slot and the stamp.

use super::{Pending, PickTicket, Picker, QueryRecord};
use crate::draw::PickDraw;
use crate::error::{Input, Limit, PickError, Requirement};
use crate::handoff::PassStats;
use crate::host::config::MAX_RECT_TILES;
use crate::plan::{PixelRay, Plan, PlanEntry, Planned, PointTarget};
use crate::readback::{RegionBlock, SlotQueries, HEADER_BYTES};
use crate::record::rect::{assign_entries, entries_needed, Tile};
use crate::record::{prepare_entries, BoundState, Framing, PassRecording};
use crate::request::camera::CameraSnapshot;
use crate::request::query::{view_pixels, CheckedQuery, PickQuery, PixelRect, RectMode};
use crate::request::PickRequest;
use crate::resolve::query::TableCopy;
use ash::vk;
use glam::UVec2;
use std::ops::Range;

/// Where a planned query (or rectangle tile) lies: its entries in the frame's plan list.
#[derive(Clone, Debug)]
pub(super) enum PlannedPart {
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
pub(super) struct FramePlans {
    parts: Vec<PlannedPart>,
    entries: Vec<PlanEntry>,
    ranges: Vec<(u32, u32)>,
    runs: Vec<(u32, u32)>,
    stats: PassStats,
}

impl FramePlans {
    fn clear(&mut self) {
        self.parts.clear();
        self.entries.clear();
        self.ranges.clear();
        self.runs.clear();
        self.stats = PassStats::default();
    }

    /// Appends `plan`'s entries (their ranges and triangle runs re-based) and statistics; returns
    /// their span.
    fn take(&mut self, plan: &Plan) -> Range<usize> {
        let start = self.entries.len();
        let (base, run_base) = (self.ranges.len() as u32, self.runs.len() as u32);
        self.ranges.extend_from_slice(&plan.ranges);
        self.runs.extend_from_slice(&plan.runs);
        self.entries.extend(plan.entries.iter().map(|e| PlanEntry { first_range: e.first_range + base, first_run: e.first_run + run_base, ..*e }));
        self.stats.add(&plan.stats);
        start..self.entries.len()
    }
}

impl Picker {
    /// Checks the viewport as a pass shifts it so that framebuffer pixel `first` lands on
    /// texel `at` of its target, against the device's viewport limits.
    fn check_shift(&self, request: &PickRequest<'_>, first: UVec2, at: UVec2) -> Result<(), PickError> {
        let dx = f64::from(at.x) - f64::from(first.x);
        let dy = f64::from(at.y) - f64::from(first.y);
        self.viewport_limits.check(&request.viewport, dx, dy)
    }

    /// Checks the queries and plans each (a rectangle per tile) into `frame_plans`.
    fn plan_queries(
        &mut self,
        request: &PickRequest<'_>,
        camera: &CameraSnapshot,
        queries: &[PickQuery],
        draws: &[PickDraw],
        mut plan_frame: impl FnMut(&mut Plan, Option<&PixelRay>, Option<PointTarget<'_>>) -> Result<(), PickError>,
    ) -> Result<(), PickError> {
        if queries.is_empty() || queries.len() > self.max_queries as usize {
            return Err(match queries.len() {
                0 => PickError::InvalidInput { input: Input::Query(None), reason: "a query set holds at least one query".into() },
                asked => PickError::Capacity { limit: Limit::Queries, configured: self.max_queries.into(), asked: asked as u64 },
            });
        }
        let view = view_pixels(&request.viewport);
        self.checked.clear();
        for (index, query) in queries.iter().enumerate() {
            self.checked.push(query.check(index, &view, self.max_radius, self.select_through)?);
        }
        if let Some(kit) = self.rect.as_ref() {
            let (w, h) = (u64::from(kit.tile.width), u64::from(kit.tile.height));
            let tiles: u64 = self
                .checked
                .iter()
                .map(|q| match q {
                    CheckedQuery::Rect { rect, .. } => u64::from(rect.size().x).div_ceil(w) * u64::from(rect.size().y).div_ceil(h),
                    CheckedQuery::Hit { .. } => 0,
                })
                .sum();
            if tiles > MAX_RECT_TILES {
                return Err(PickError::Capacity { limit: Limit::RectTiles, configured: MAX_RECT_TILES, asked: tiles });
            }
        }
        self.frame_plans.clear();
        self.point_texels.clear();
        self.point_pixels.clear();
        let mut cells = 0u32;
        let checked = std::mem::take(&mut self.checked);
        let planned = (|| {
            for query in &checked {
                match *query {
                    CheckedQuery::Hit { region, .. } => {
                        let at = if let CheckedQuery::Hit { pixel, radius: None, .. } = *query {
                            let next = self.point_pixels.len() as u32;
                            let texel = *self.point_pixels.entry(pixel.to_array()).or_insert(next);
                            self.point_texels.push(texel);
                            if texel != next {
                                // A pixel already planned: its texel answers this query too.
                                continue;
                            }
                            UVec2::new(texel, 0)
                        } else {
                            cells += 1;
                            UVec2::new(self.max_queries + (cells - 1) * self.cell, 0)
                        };
                        self.check_shift(request, region.min, at)?;
                        let ray = if self.culling { PixelRay::covering(camera, &region) } else { None };
                        // A single pixel ends with its nearest surface: what lies surely behind
                        // it cannot change the result. Contributors draw what planning cannot see.
                        let point = region.area() == 1 && matches!(query, CheckedQuery::Hit { radius: None, .. });
                        let occluded = point && request.contributors.is_empty();
                        plan_frame(&mut self.plan, ray.as_ref(), occluded.then_some(PointTarget { camera, pixel: region.min }))?;
                        if let (Some(ray), true) = (ray.as_ref(), occluded) {
                            self.plan.occlude(draws, camera, region.min, ray);
                        }
                        if let Some(ray) = ray.as_ref() {
                            self.plan.cut_to_chunks(draws, ray);
                        }
                        let entries = self.frame_plans.take(&self.plan);
                        self.frame_plans.parts.push(PlannedPart::Hit { first: region.min, size: region.size(), at, entries });
                    }
                    CheckedQuery::Rect { rect, mode } => {
                        let Some(kit) = self.rect.as_ref() else {
                            return Err(PickError::Capacity { limit: Limit::RectEntries, configured: 0, asked: 1 });
                        };
                        let tile = UVec2::new(kit.tile.width, kit.tile.height);
                        let ray = if self.culling { PixelRay::covering(camera, &rect) } else { None };
                        plan_frame(&mut self.plan, ray.as_ref(), None)?;
                        let entries = self.frame_plans.take(&self.plan);
                        self.frame_plans.parts.push(PlannedPart::Rect { entries });
                        for y in (rect.min.y..rect.max.y).step_by(tile.y as usize) {
                            for x in (rect.min.x..rect.max.x).step_by(tile.x as usize) {
                                let first = UVec2::new(x, y);
                                let region = PixelRect { min: first, max: first.saturating_add(tile).min(rect.max) };
                                self.check_shift(request, first, UVec2::ZERO)?;
                                let ray = if self.culling { PixelRay::covering(camera, &region) } else { None };
                                plan_frame(&mut self.plan, ray.as_ref(), None)?;
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
                    prepare_entries(&mut kit.pipelines, &mut kit.instance_sets, draws, &fp.entries[entries.clone()], kit.batch_rows, camera, &mut rows)?;
                }
                PlannedPart::Rect { entries } => {
                    // The table counts instances the CPU knows; the GPU picks an indirect draw's.
                    let planned = &fp.entries[entries.clone()];
                    if let Some(e) = planned.iter().find(|e| draws.get(e.draw as usize).is_some_and(|d| d.indirect.is_some())) {
                        let reason = "rectangle queries cannot count the instances of an indirect draw".into();
                        return Err(PickError::InvalidDraw { index: e.draw as usize, reason });
                    }
                    table_entries += entries_needed(planned, &fp.ranges)
                }
                PlannedPart::Tile { mode, entries, .. } => {
                    let Some(rect) = self.rect.as_mut() else { continue };
                    let pipelines = match mode {
                        RectMode::Visible => &mut rect.visible,
                        RectMode::All => rect.all.as_mut().ok_or(PickError::Unsupported { missing: vec![Requirement::Feature("fragmentStoresAndAtomics")] })?,
                    };
                    prepare_entries(pipelines, &mut self.kit.instance_sets, draws, &fp.entries[entries.clone()], 0, camera, &mut 0)?;
                }
            }
        }
        let capacity = self.rect.as_ref().map_or(0, |r| r.capacity);
        if table_entries > u64::from(capacity) {
            return Err(PickError::Capacity { limit: Limit::RectEntries, configured: capacity.into(), asked: table_entries });
        }
        Ok(())
    }

    /// # Safety
    /// As [`Picker::record`].
    pub(super) unsafe fn record_planned(
        &mut self,
        cmd: vk::CommandBuffer,
        slot: usize,
        request: &PickRequest<'_>,
        queries: &[PickQuery],
        draws: &[PickDraw],
        plan_frame: impl FnMut(&mut Plan, Option<&PixelRay>, Option<PointTarget<'_>>) -> Result<(), PickError>,
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
        crate::draw::contributor::check_ranges(request.contributors, draws)?;
        self.plan_queries(request, &camera, queries, draws, plan_frame)?;
        // Pipelines last used before the oldest frame that may still run can be destroyed: the
        // newest frame of every other slot may run; this slot's previous one has completed.
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
        let prepared = self.prepare_parts(draws, &camera);
        let prepared = self.note_loss(prepared);
        prepared?;

        let detail = self.kit.layout.detail;
        let table_needed = self.frame_plans_entries_needed();
        // Each query places its own region (`region_view`); this framing is only the default.
        let one_pixel = Framing::Region { first: UVec2::ZERO, size: UVec2::ONE, at: UVec2::ZERO };
        let recording = PassRecording::prepared(&self.kit, cmd, &self.targets, &camera, one_pixel).with_contributors(request);
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
            if let Some(w) = &request.host_writes {
                w.record_before(device, cmd);
            }
            if let Some(q) = queries_ts {
                device.cmd_reset_query_pool(cmd, q.pool, q.first, 2);
                device.cmd_write_timestamp(cmd, vk::PipelineStageFlags::TOP_OF_PIPE, q.pool, q.first);
            }
            self.staging.begin(device, cmd, slot);
            let mut recorded = 0u64;
            let hits = fp.parts.iter().filter(|p| matches!(p, PlannedPart::Hit { .. }));
            if hits.clone().next().is_some() {
                recording.begin();
                let (mut rows, mut bound) = (0, BoundState::default());
                for part in hits.clone() {
                    let PlannedPart::Hit { first, size, at, entries } = part else { continue };
                    recording.set_view(&recording.region_view(*first, *size, *at, request.viewport));
                    recorded += u64::from(recording.record_draws(
                        draws,
                        Planned { entries: &fp.entries[entries.clone()], ranges: &fp.ranges, runs: &fp.runs },
                        &mut s.draws,
                        s.batch.as_mut(),
                        &mut rows,
                        &mut bound,
                    ));
                }
                recording.end();
            }
            // The points' texels in one copy per attachment, then each radius query's region.
            let mut offset = HEADER_BYTES;
            let point_count = self.point_pixels.len() as u32;
            let points_block = RegionBlock { offset, pixels: u64::from(point_count), detail };
            if point_count > 0 {
                let extent = vk::Extent2D { width: point_count, height: 1 };
                self.staging.record_region(device, cmd, &self.targets, slot, vk::Offset2D::default(), extent, &points_block);
                offset += RegionBlock::bytes(points_block.pixels, detail);
            }
            let mut point_texels = self.point_texels.iter();
            let mut hit_parts = hits;
            let mut rect_parts = fp.parts.iter().filter(|p| !matches!(p, PlannedPart::Hit { .. }));
            let mut next_entry = 0u32;
            let mut table_cleared = false;
            for query in &self.checked {
                match *query {
                    CheckedQuery::Hit { pixel, radius: None, region } => {
                        let Some(&texel) = point_texels.next() else { continue };
                        s.queries.push(QueryRecord::Hit { pixel, radius: None, region, block: points_block, texel: u64::from(texel) });
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
                            kit.record_clear(device, cmd, table_needed);
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
                            recorded += u64::from(recording.record_tile(kit, pipelines, &tile, draws));
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
            if let Some(w) = &request.host_writes {
                w.record_after(device, cmd);
            }
            let stats = PassStats { draws_recorded: recorded, ..fp.stats };
            s.stats = stats;
            s.pending = Some(Pending { frame, camera, used_bytes: offset, table });
            s.last_frame = Some(frame);
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
}

/// Tiles a rectangle is split into.
fn rect_tile_count(rect: &PixelRect, tile: vk::Extent2D) -> usize {
    let s = rect.size();
    (s.x.div_ceil(tile.width.max(1)) as usize) * (s.y.div_ceil(tile.height.max(1)) as usize)
}
