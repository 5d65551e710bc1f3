//! Recording a rectangle query. Its table entries come from one plan over the whole
//! rectangle (an entry per drawn instance, or per row of a GPU plan table's group,
//! [`assign_entries`]); each tile is culled on its own
//! and draws only the instances the rectangle's plan gave entries to, so every tile adds to
//! the same entries and an object seen in several tiles has one entry. A `Visible` tile is
//! then reduced into the table by the compute pass.

use super::{deform_push, instance_attributes, pipeline_key, storage_words, words_to_bytes, Bindings, BoundState, PassRecording};
use crate::draw::{PickDraw, Triangles};
use crate::handoff::{DrawSnapshot, EntrySpan, TABLE_SNAPSHOT_BASE};
use crate::pass::pipeline::Pipelines;
use crate::pass::pipeline_key::{PickPush, PipelineKey, RECT_PUSH_SIZE, STORAGE_PUSH_SIZE};
use crate::pass::rect::RectKit;
use crate::plan::PlanEntry;
use crate::request::camera::DepthConvention;
use crate::request::query::RectMode;
use ash::vk;
use glam::UVec2;

/// Instances `start..start + count` of draw `draw` have entries `base..base + count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EntryRange {
    pub draw: u32,
    pub start: u32,
    pub count: u32,
    pub base: u32,
}

/// Table entries the planned draws need: one per drawn instance.
pub(crate) fn entries_needed(entries: &[PlanEntry], ranges: &[(u32, u32)]) -> u64 {
    entries.iter().flat_map(|e| &ranges[e.first_range as usize..(e.first_range + e.range_count) as usize]).map(|&(_, count)| u64::from(count)).sum()
}

/// Gives the rectangle's planned instances consecutive entries from `*next_entry`: appends
/// the map (sorted by draw, then instance), a snapshot per draw and the spans resolve reads.
pub(crate) fn assign_entries(
    draws: &[PickDraw],
    entries: &[PlanEntry],
    ranges: &[(u32, u32)],
    map: &mut Vec<EntryRange>,
    snapshots: &mut Vec<DrawSnapshot>,
    spans: &mut Vec<EntrySpan>,
    next_entry: &mut u32,
) {
    for entry in entries {
        let Some(draw) = draws.get(entry.draw as usize) else { continue };
        // A table group's ranges are its rows: entry k names the row's own draw, whose
        // snapshot the table holds (no instances).
        let snapshot = snapshots.len() as u32;
        if !entry.table {
            snapshots.push(DrawSnapshot::of(draw, entry.draw));
        }
        for &(start, count) in &ranges[entry.first_range as usize..(entry.first_range + entry.range_count) as usize] {
            map.push(EntryRange { draw: entry.draw, start, count, base: *next_entry });
            spans.push(match entry.table {
                true => EntrySpan { first_entry: *next_entry, count, snapshot: TABLE_SNAPSHOT_BASE + start, first_instance: 0 },
                false => EntrySpan { first_entry: *next_entry, count, snapshot, first_instance: start },
            });
            *next_entry += count;
        }
    }
}

/// What one tile covers.
pub(crate) struct Tile<'p> {
    pub mode: RectMode,
    /// The tile's first framebuffer pixel and its size.
    pub first: UVec2,
    pub size: UVec2,
    /// The tile's place in its rectangle, and the rectangle's width (for pixel keys).
    pub origin: UVec2,
    pub rect_width: u32,
    /// The tile's own plan.
    pub entries: &'p [PlanEntry],
    pub ranges: &'p [(u32, u32)],
    /// Its rectangle's entries.
    pub map: &'p [EntryRange],
}

impl PassRecording<'_> {
    /// Records `tile` into the rectangle pass of `kit` and, for `Visible`, its reduction;
    /// returns the draws recorded. `pipelines` is the mode's set, with every key built.
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass; the draws' buffers are live; the entries of
    /// `tile.map` lie within the table's capacity and were cleared by transfers recorded
    /// earlier.
    pub unsafe fn record_tile(&self, kit: &RectKit, pipelines: &Pipelines, tile: &Tile<'_>, draws: &[PickDraw]) -> u32 {
        let (d, cmd) = (self.device, self.cmd);
        let reverse = u32::from(self.camera.depth == DepthConvention::Reverse);
        let clear = [
            vk::ClearValue { color: vk::ClearColorValue { uint32: [0; 4] } },
            vk::ClearValue { depth_stencil: vk::ClearDepthStencilValue { depth: self.camera.clear_depth(), stencil: 0 } },
        ];
        let view = self.region_view(tile.first, tile.size, UVec2::ZERO, self.camera.viewport);
        let rect_words = [tile.rect_width, reverse, kit.capacity, 0, tile.origin.x, tile.origin.y, 0, 0];
        let mut push = [0u8; STORAGE_PUSH_SIZE as usize];
        words_to_bytes(rect_words, &mut push[PickPush::SIZE as usize..]);
        let mut recorded = 0;
        // SAFETY: (whole block) the caller's contract; the rectangle pass, its attachments,
        // descriptor set and pipelines belong to this device and outlive the command buffer.
        unsafe {
            kit.pass.begin(d, cmd, &kit.attachments, &clear);
            self.set_view(&view);
            let mut bound = BoundState::default();
            for entry in tile.entries {
                let Some(draw) = draws.get(entry.draw as usize) else { continue };
                // The rectangle's entries for this draw: a tile draws nothing else (what the
                // rectangle's plan culled covers none of its pixels).
                let first = tile.map.partition_point(|r| r.draw < entry.draw);
                let owned = &tile.map[first..first + tile.map[first..].partition_point(|r| r.draw == entry.draw)];
                if owned.is_empty() {
                    continue;
                }
                if entry.table {
                    recorded += self.record_tile_group((kit, pipelines), (draw, entry), owned, tile, (rect_words, &mut push), &mut bound);
                    continue;
                }
                let key = pipeline_key(draw, 0, 0, self.camera);
                let Some((pipeline, layout)) = pipelines.cached(key) else {
                    log::error!("picking-vk: rectangle pipeline missing for {key:?}");
                    continue;
                };
                recorded += 1;
                self.bind_tile_draw(kit, (draw, instance_attributes(draw)), key, (pipeline, layout), &mut bound);
                let model_view_projection = self.camera.model_view_projection(&draw.model);
                let base = draw.instances.map_or(0, |i| i.first);
                for index in entry.first_range..entry.first_range + entry.range_count {
                    let Some(&(start, count)) = tile.ranges.get(index as usize) else { continue };
                    // The parts the GPU plan took, in this order (`picker::gpu_pairs::owned_parts`).
                    let mut part = 0;
                    for r in owned {
                        let (lo, hi) = (start.max(r.start), (start + count).min(r.start + r.count));
                        if lo >= hi {
                            continue;
                        }
                        // The shaders add the instance to `draw_index`: entry = base + (instance - start).
                        let p =
                            PickPush { model_view_projection, object_id: draw.id.to_words(), draw_index: r.base.wrapping_sub(r.start), first_instance: base };
                        self.push_tile_draw(draw, key, layout, &p, rect_words, &mut push);
                        self.draw_instances(draw, draw.triangles, (lo, hi - lo), self.gpu_pair(index, part));
                        part += 1;
                    }
                }
            }
            kit.pass.end(d, cmd, &kit.attachments);
            if tile.mode == RectMode::Visible {
                self.record_reduce(kit, tile, reverse);
            }
        }
        recorded
    }

    /// Binds a tile draw's buffers and sets: the table set (again whenever the layout
    /// changes: hooked layouts differ in their push constants, which disturbs set 0, and
    /// binding it with another layout disturbs set 1 in turn, which is then bound again),
    /// then the hook, deformation or storage set.
    ///
    /// # Safety
    /// As [`PassRecording::record_tile`], inside the rectangle pass; `pipeline` and `layout`
    /// are `key`'s.
    unsafe fn bind_tile_draw(
        &self,
        kit: &RectKit,
        (draw, rows): (&PickDraw, Option<(vk::Buffer, u64)>),
        key: PipelineKey,
        (pipeline, layout): (vk::Pipeline, vk::PipelineLayout),
        bound: &mut BoundState,
    ) {
        // SAFETY: (whole block) the caller's contract.
        unsafe {
            self.bind(&Bindings::of(draw, pipeline), rows, bound);
            if bound.set0_layout != Some(layout) {
                self.device.cmd_bind_descriptor_sets(self.cmd, vk::PipelineBindPoint::GRAPHICS, layout, 0, &[kit.set], &[]);
                (bound.set0_layout, bound.set1, bound.set2) = (Some(layout), None, None);
            }
            if let Some(hooks) = &draw.hooks {
                self.bind_hooks(draw, hooks, layout, bound);
            } else if key.deform.is_some() {
                self.bind_deformation(draw, layout, bound);
            } else if key.instance_storage {
                self.bind_storage_set(draw, layout, 1, bound);
            }
        }
    }

    /// Records a table group's rows in a tile (`entry` the group's, its first draw `draw`;
    /// `owned` its rectangle's entries) with the batched pipeline over the GPU plan's rows:
    /// a row's entry is its snapshot index (`TABLE_SNAPSHOT_BASE` plus the row) plus the
    /// pushed draw index. Returns the draws it may draw.
    ///
    /// # Safety
    /// As [`PassRecording::record_tile`], inside the tile's pass; the frame's cull pass
    /// writes the table's rows.
    unsafe fn record_tile_group(
        &self,
        (kit, pipelines): (&RectKit, &Pipelines),
        (draw, entry): (&PickDraw, &PlanEntry),
        owned: &[EntryRange],
        tile: &Tile<'_>,
        (rect_words, push): ([u32; 8], &mut [u8]),
        bound: &mut BoundState,
    ) -> u32 {
        let Some((table, drawn)) = self.gpu_plan.and_then(|p| p.table).and_then(|t| Some((t, t.group(entry.draw)?))) else {
            log::error!("picking-vk: a table group without the table's rows; was the GPU plan prepared?");
            return 0;
        };
        let key = PipelineKey::of(draw, true, self.camera.depth, self.camera.culling);
        let Some((pipeline, layout)) = pipelines.cached(key) else {
            log::error!("picking-vk: rectangle pipeline missing for {key:?}");
            return 0;
        };
        // SAFETY: (whole block) the caller's contract; the group's runs draw inside its buffers.
        unsafe {
            self.bind_tile_draw(kit, (draw, Some((table.rows, drawn.rows_offset))), key, (pipeline, layout), bound);
            for index in entry.first_range..entry.first_range + entry.range_count {
                let Some(&(start, count)) = tile.ranges.get(index as usize) else { continue };
                // A group's ranges are all its rows: one part each.
                let Some(r) = owned.iter().find(|r| r.start < start + count && start < r.start + r.count) else { continue };
                // Row `row`'s entry: r.base + (row - r.start).
                let draw_index = r.base.wrapping_sub(r.start).wrapping_sub(TABLE_SNAPSHOT_BASE);
                let p = PickPush { model_view_projection: glam::Mat4::IDENTITY, object_id: draw.id.to_words(), draw_index, first_instance: 0 };
                self.push_tile_draw(draw, key, layout, &p, rect_words, push);
                self.draw_group(table.statics, drawn, self.gpu_pair(index, 0), matches!(draw.triangles, Triangles::Indexed { .. }));
            }
        }
        drawn.group.rows
    }

    /// Pushes a tile draw's constants: the pick push `p`, the rectangle's words and, per
    /// layout, the hook's, deformation's or storage instances' words (`push`: scratch).
    ///
    /// # Safety
    /// As [`PassRecording::bind_tile_draw`], after it.
    unsafe fn push_tile_draw(&self, draw: &PickDraw, key: PipelineKey, layout: vk::PipelineLayout, p: &PickPush, rect_words: [u32; 8], push: &mut [u8]) {
        let (d, cmd) = (self.device, self.cmd);
        let stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT;
        // SAFETY: (whole block) the caller's contract.
        unsafe {
            if draw.hooks.is_some() {
                self.push_hooked(draw, p.draw_index, rect_words, layout);
            } else if key.deform.is_some() {
                d.cmd_push_constants(cmd, layout, stages, 0, &deform_push(draw, p, rect_words));
            } else {
                push[..PickPush::SIZE as usize].copy_from_slice(&p.to_bytes());
                let size = if key.instance_storage {
                    words_to_bytes(storage_words(draw), &mut push[RECT_PUSH_SIZE as usize..]);
                    STORAGE_PUSH_SIZE
                } else {
                    RECT_PUSH_SIZE
                };
                d.cmd_push_constants(cmd, layout, stages, 0, &push[..size as usize]);
            }
        }
    }

    /// Reduces a `Visible` tile into the table: per pixel, its nearest draw's entry counts it.
    ///
    /// # Safety
    /// As [`PassRecording::record_tile`], after the tile's pass ended.
    unsafe fn record_reduce(&self, kit: &RectKit, tile: &Tile<'_>, reverse: u32) {
        let (d, cmd) = (self.device, self.cmd);
        let mut reduce = [0u8; 32];
        words_to_bytes([tile.size.x, tile.size.y, reverse, kit.capacity, tile.origin.x, tile.origin.y, tile.rect_width, 0], &mut reduce);
        // SAFETY: the caller's contract; the kit's pipeline and set belong to this device.
        unsafe {
            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, kit.reduce.handle);
            d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::COMPUTE, kit.reduce_layout.handle, 0, &[kit.set], &[]);
            d.cmd_push_constants(cmd, kit.reduce_layout.handle, vk::ShaderStageFlags::COMPUTE, 0, &reduce);
            d.cmd_dispatch(cmd, tile.size.x.div_ceil(8), tile.size.y.div_ceil(8), 1);
        }
    }
}
