//! Recording one rectangle tile: its planned draws into the rectangle pass, each instance
//! range with its own table entries, then (for `Visible`) the reduce dispatch over the tile.

use super::{pipeline_key, Bindings, BoundState, PassRecording};
use crate::draw::{PickDraw, Triangles};
use crate::handoff::{DrawSnapshot, EntrySpan};
use crate::pass::pipeline::{PickPush, Pipelines};
use crate::pass::rect::RectKit;
use crate::plan::PlanEntry;
use crate::request::camera::DepthConvention;
use crate::request::query::RectMode;
use ash::vk;
use glam::UVec2;

/// Table entries the planned draws need: one per drawn instance.
pub(crate) fn entries_needed(entries: &[PlanEntry], ranges: &[(u32, u32)]) -> u64 {
    entries.iter().flat_map(|e| &ranges[e.first_range as usize..(e.first_range + e.range_count) as usize]).map(|&(_, count)| u64::from(count)).sum()
}

/// What one tile covers and where its entries go.
pub(crate) struct Tile<'p> {
    pub mode: RectMode,
    /// The tile's first framebuffer pixel and its size.
    pub first: UVec2,
    pub size: UVec2,
    pub entries: &'p [PlanEntry],
    pub ranges: &'p [(u32, u32)],
}

impl PassRecording<'_> {
    /// Records `tile` into the rectangle pass of `kit` and, for `Visible`, its reduction.
    /// Returns the draws recorded; appends their snapshots and entry spans, and advances
    /// `next_entry` past the entries used. `pipelines` is the mode's set, with every key of
    /// the tile's draws built.
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass; the draws' buffers are live; the table's
    /// entries up to `next_entry` plus [`entries_needed`] lie within its capacity and were
    /// cleared by transfers recorded earlier.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn record_tile(
        &self,
        kit: &RectKit,
        pipelines: &Pipelines,
        tile: &Tile<'_>,
        draws: &[PickDraw],
        snapshots: &mut Vec<DrawSnapshot>,
        spans: &mut Vec<EntrySpan>,
        next_entry: &mut u32,
    ) -> u32 {
        let (d, cmd) = (self.device, self.cmd);
        let reverse = u32::from(self.camera.depth == DepthConvention::Reverse);
        let clear = [
            vk::ClearValue { color: vk::ClearColorValue { uint32: [0; 4] } },
            vk::ClearValue { depth_stencil: vk::ClearDepthStencilValue { depth: self.camera.clear_depth(), stencil: 0 } },
        ];
        let begin = vk::RenderPassBeginInfo::default()
            .render_pass(kit.render_pass.handle)
            .framebuffer(kit.framebuffer.handle)
            .render_area(vk::Rect2D { offset: vk::Offset2D::default(), extent: kit.tile })
            .clear_values(&clear);
        let view = self.region_view(tile.first, tile.size, UVec2::ZERO, self.camera.viewport);
        let tile_push = [tile.size.x, reverse, kit.capacity, 0];
        let mut recorded = 0;
        // SAFETY: (whole block) the caller's contract; the rectangle pass, framebuffer,
        // descriptor set and pipelines belong to this device and outlive the command buffer.
        unsafe {
            d.cmd_begin_render_pass(cmd, &begin, vk::SubpassContents::INLINE);
            self.set_view(&view);
            d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::GRAPHICS, pipelines.layout, 0, &[kit.set], &[]);
            let mut bound = BoundState::default();
            for entry in tile.entries {
                let Some(draw) = draws.get(entry.draw as usize) else { continue };
                let key = pipeline_key(draw, 0, 0, self.camera.depth);
                let Some(pipeline) = pipelines.cached(key) else {
                    log::error!("picking-vk: rectangle pipeline missing for {key:?}");
                    continue;
                };
                let snapshot = snapshots.len() as u32;
                snapshots.push(DrawSnapshot::of(draw, entry.draw));
                recorded += 1;
                self.bind(&Bindings::of(draw, pipeline), draw.instances.map(|i| (i.range.buffer, i.range.offset)), &mut bound);
                let model_view_projection = (self.camera.view_projection * draw.model.as_dmat4()).as_mat4();
                let base = draw.instances.map_or(0, |i| i.first);
                for &(start, count) in &tile.ranges[entry.first_range as usize..(entry.first_range + entry.range_count) as usize] {
                    // The shaders add the instance to `draw_index`: entry = first + (instance - start).
                    let push =
                        PickPush { model_view_projection, object_id: draw.id.to_words(), draw_index: next_entry.wrapping_sub(start), first_instance: base };
                    let mut bytes = [0u8; crate::pass::pipeline::RECT_PUSH_SIZE as usize];
                    bytes[..PickPush::SIZE as usize].copy_from_slice(&push.to_bytes());
                    for (chunk, word) in bytes[PickPush::SIZE as usize..].chunks_exact_mut(4).zip(tile_push) {
                        chunk.copy_from_slice(&word.to_ne_bytes());
                    }
                    d.cmd_push_constants(cmd, pipelines.layout, vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT, 0, &bytes);
                    match draw.triangles {
                        Triangles::NonIndexed { first_vertex, vertex_count } => d.cmd_draw(cmd, vertex_count, count, first_vertex, base + start),
                        Triangles::Indexed { first_index, index_count, vertex_offset, .. } => {
                            d.cmd_draw_indexed(cmd, index_count, count, first_index, vertex_offset, base + start)
                        }
                    }
                    spans.push(EntrySpan { first_entry: *next_entry, count, snapshot, first_instance: start });
                    *next_entry += count;
                }
            }
            d.cmd_end_render_pass(cmd);
            if tile.mode == RectMode::Visible {
                d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, kit.reduce.handle);
                d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::COMPUTE, kit.reduce_layout.handle, 0, &[kit.set], &[]);
                let mut push = [0u8; 16];
                for (chunk, word) in push.chunks_exact_mut(4).zip([tile.size.x, tile.size.y, reverse, kit.capacity]) {
                    chunk.copy_from_slice(&word.to_ne_bytes());
                }
                d.cmd_push_constants(cmd, kit.reduce_layout.handle, vk::ShaderStageFlags::COMPUTE, 0, &push);
                d.cmd_dispatch(cmd, tile.size.x.div_ceil(8), tile.size.y.div_ceil(8), 1);
            }
        }
        recorded
    }
}
