//! The draw calls of a recorded draw: its planned instance ranges drawn directly, the GPU
//! plan's commands for the ranges it culled (and a shared list's table groups), or the
//! host's own indirect commands.

use super::batch::DrawBatchBuffer;
use super::batch_run::Run;
use super::bind::{Bindings, BoundState};
use super::PassRecording;
use crate::draw::{IndirectDraws, PickDraw, Triangles};
use crate::gpu_plan::layout::{counter, COMMAND_WORDS, MESA_FALLBACK_COUNT};
use crate::gpu_plan::table_words::RUN_WORDS;
use crate::gpu_plan::{DrawnGroup, GpuPlanned, NO_PAIR};
use crate::pass::pipeline_key::{PipelineKey, STORAGE_PUSH_SIZE};
use crate::plan::PlanEntry;
use ash::vk;

impl PassRecording<'_> {
    /// Draws `triangles` of `draw` for each of `entry`'s planned instance ranges (in
    /// `ranges`): ignored and culled instances are cut out of the draw, so they neither hit
    /// nor occlude. A range the GPU plan culled is drawn from its commands; with `walk`, the
    /// walked pipeline's layout, each pair's number is pushed for the vertex shader's walk
    /// first.
    ///
    /// # Safety
    /// As [`PassRecording::record_draws`], after the draw's bindings and push constants.
    pub(super) unsafe fn draw_ranges(&self, draw: &PickDraw, triangles: Triangles, ranges: &[(u32, u32)], entry: &PlanEntry, walk: Option<vk::PipelineLayout>) {
        for index in entry.first_range..entry.first_range + entry.range_count {
            let Some(&(start, count)) = ranges.get(index as usize) else { continue };
            let gpu = self.gpu_pair(index, 0);
            if walk.is_some() && gpu.is_none() {
                // `choose_walked` walks an entry's ranges all or none.
                log::error!("picking-vk: a walked draw's range without a pair; left undrawn");
                continue;
            }
            if let (Some(layout), Some((_, pair))) = (walk, gpu) {
                // The storage words' last (`shaders/pick_instanced_storage.glsl`).
                let stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT;
                // SAFETY: the caller's contract; `layout` is the bound walked pipeline's.
                unsafe { self.device.cmd_push_constants(self.cmd, layout, stages, STORAGE_PUSH_SIZE - 4, &pair.to_ne_bytes()) };
            }
            // SAFETY: the caller's contract.
            unsafe { self.draw_instances(draw, triangles, (start, count), gpu) };
        }
    }

    /// Whether `entry`'s pairs are walked (`gpu_plan::walkable`; all of its ranges' or none,
    /// `FramePairs::choose_walked`): its draw takes the walked pipeline, which finds its
    /// instances.
    pub(super) fn walks(&self, entry: &PlanEntry) -> bool {
        let walked = |(plan, pair): (GpuPlanned<'_>, u32)| plan.commands.get(pair as usize).is_some_and(|c| c.walk);
        entry.range_count > 0 && self.gpu_pair(entry.first_range, 0).is_some_and(walked)
    }

    /// The GPU plan's pair for part `part` of planned range `range` (a range of a point or
    /// radius query has one part; a rectangle tile's, one per entry range it meets).
    pub(super) fn gpu_pair(&self, range: u32, part: u32) -> Option<(GpuPlanned<'_>, u32)> {
        let plan = self.gpu_plan?;
        let first = plan.pair_of_range.get(range as usize).copied().filter(|&p| p != NO_PAIR)?;
        Some((plan, first + part))
    }

    /// Draws instances `start..start + count` of `draw` (counted from its first), or with
    /// `gpu` the GPU plan's commands for them.
    ///
    /// # Safety
    /// As [`PassRecording::record_draws`], after the draw's bindings and push constants;
    /// counts were validated against the buffer ranges, and the plan's commands draw inside
    /// them.
    pub(super) unsafe fn draw_instances(&self, draw: &PickDraw, triangles: Triangles, (start, count): (u32, u32), gpu: Option<(GpuPlanned<'_>, u32)>) {
        let (d, cmd) = (self.device, self.cmd);
        let base = draw.instances.map_or(0, |i| i.first);
        // SAFETY: the caller's contract.
        unsafe {
            if let Some((plan, pair)) = gpu {
                self.draw_gpu_planned(&plan, pair, matches!(triangles, Triangles::Indexed { .. }), None);
                return;
            }
            match triangles {
                Triangles::NonIndexed { first_vertex, vertex_count } => d.cmd_draw(cmd, vertex_count, count, first_vertex, base + start),
                Triangles::Indexed { first_index, index_count, vertex_offset, .. } => {
                    d.cmd_draw_indexed(cmd, index_count, count, first_index, vertex_offset, base + start)
                }
            }
        }
    }

    /// Draws pair `pair` of the GPU plan: its commands, a run of surviving instances (or table
    /// rows) each, in order (as many as the finishing pass wrote; none when the runs
    /// overflowed its capacity), then its fallback: a table pair's group's `own` commands
    /// (buffer, offset, count: its run commands) when they overflowed, or for an instance pair
    /// without commands its fallback command (its whole range when it overflowed, else no
    /// instances; one with commands draws that range as its one command).
    ///
    /// # Safety
    /// As [`PassRecording::draw_ranges`]; the plan's cull pass was recorded before the slot's
    /// first barrier.
    unsafe fn draw_gpu_planned(&self, plan: &GpuPlanned<'_>, pair: u32, indexed: bool, own: Option<(vk::Buffer, u64, u32)>) {
        let (d, cmd, buffer) = (self.device, self.cmd, plan.buffer);
        let Some(commands) = plan.commands.get(pair as usize) else { return };
        let stride = 4 * COMMAND_WORDS;
        let first = 4 * u64::from(plan.layout.command_word(commands.first));
        let counters = plan.layout.counters_word(pair);
        let (drawn, all) = (4 * u64::from(counters + counter::DRAWN), 4 * u64::from(counters + counter::ALL));
        let fallback = 4 * u64::from(plan.layout.fallback_word(pair));
        // The fallback is a count draw too (`layout::MESA_FALLBACK_COUNT` says why).
        let draw = |commands: vk::Buffer, offset, count, max, stride| {
            // SAFETY: the caller's contract; the offsets lie inside the buffers.
            unsafe {
                match indexed {
                    true => d.cmd_draw_indexed_indirect_count(cmd, commands, offset, buffer, count, max, stride),
                    false => d.cmd_draw_indirect_count(cmd, commands, offset, buffer, count, max, stride),
                }
            }
        };
        if commands.capacity > 0 {
            draw(buffer, first, drawn, commands.capacity, stride);
        }
        if let Some((own, offset, runs)) = own {
            // The count the overflow writes is the pair's rows, at least its runs.
            draw(own, offset, 4 * u64::from(counters + counter::TABLE_FALLBACK), runs, 4 * RUN_WORDS);
        }
        // The fallback command draws instances only for an instance pair without commands: a
        // table pair's overflow draws the group's runs (above), an instance pair's the range
        // as its one command. It is recorded there, and where lavapipe needs a last count draw
        // reading a large count; elsewhere the driver's recording and the GPU's count read are
        // saved.
        if (own.is_none() && commands.capacity == 0) || plan.layout.fallback_count == MESA_FALLBACK_COUNT {
            draw(buffer, fallback, all, 1, stride);
        }
    }

    /// Records a table group (`draw` its first draw, `draw_index` that draw's index; its
    /// range `range`) with the batched pipeline over the GPU plan's rows, after the open batch
    /// run (closed here): the pair's runs of surviving draws, or where no pair culls it, the
    /// group's run commands (all its rows). Returns the draws it may draw.
    ///
    /// # Safety
    /// As [`PassRecording::record_draws`]; the frame's cull pass writes the table's rows.
    pub(super) unsafe fn record_table_group(
        &self,
        (draw, draw_index): (&PickDraw, u32),
        range: u32,
        (batch, run): (Option<&DrawBatchBuffer>, &mut Option<Run>),
        bound: &mut BoundState,
    ) -> u32 {
        if let Some(batch) = batch {
            // SAFETY: the caller's contract.
            unsafe { self.record_run(run.take(), batch, bound) };
        }
        let Some((table, drawn)) = self.gpu_plan.and_then(|p| p.table).and_then(|t| Some((t, t.group(draw_index)?))) else {
            log::error!("picking-vk: a table group without the table's rows; was the GPU plan prepared?");
            return 0;
        };
        let key = PipelineKey::of(draw, true, self.camera.depth, self.camera.culling);
        let Some((pipeline, layout)) = self.pipelines.cached(key) else {
            log::error!("picking-vk: pipeline missing for {key:?}; was prepare() skipped?");
            return 0;
        };
        let indexed = matches!(draw.triangles, Triangles::Indexed { .. });
        // SAFETY: (whole block) the caller's contract.
        unsafe {
            self.bind(&Bindings::of(draw, pipeline), Some((table.rows, drawn.rows_offset)), bound);
            // A hooked group's draws share the first's hooks (the table's group key).
            if let Some(h) = &draw.hooks {
                self.begin_hooked_rows(h.attribute.map(|a| (a.range.buffer, a.range.offset)), h.descriptor_set, layout, bound);
            }
            self.draw_group(table.statics, drawn, self.gpu_pair(range, 0), indexed);
        }
        drawn.group.rows
    }

    /// Draws table group `drawn` (its runs in `statics`): pair `gpu`'s runs of surviving
    /// rows, or where no pair culls it, the group's run commands (all its rows).
    ///
    /// # Safety
    /// As [`PassRecording::record_draws`], after the group's bindings (its rows at its
    /// window) and push constants; the frame's cull pass writes the table's rows.
    pub(super) unsafe fn draw_group(&self, statics: vk::Buffer, drawn: DrawnGroup, gpu: Option<(GpuPlanned<'_>, u32)>, indexed: bool) {
        let (d, cmd) = (self.device, self.cmd);
        // A group's runs are its own commands.
        let (runs, count, stride) = (drawn.runs, drawn.group.runs, 4 * RUN_WORDS);
        // SAFETY: (whole block) the caller's contract; the offsets lie inside the buffers.
        unsafe {
            match gpu {
                Some((plan, pair)) => self.draw_gpu_planned(&plan, pair, indexed, Some((statics, runs, count))),
                None => match indexed {
                    true => d.cmd_draw_indexed_indirect(cmd, statics, runs, count, stride),
                    false => d.cmd_draw_indirect(cmd, statics, runs, count, stride),
                },
            }
        }
    }

    /// Records the host's indirect commands of one draw.
    ///
    /// # Safety
    /// As [`PassRecording::record`]; the draw's bindings and push constants are recorded, and
    /// the features the commands need are enabled (validated with the draw).
    pub(super) unsafe fn record_indirect(&self, indirect: &IndirectDraws, indexed: bool) {
        let (d, cmd) = (self.device, self.cmd);
        let (buffer, offset, max, stride) = (indirect.commands.buffer, indirect.commands.offset, indirect.max_draw_count, indirect.stride);
        if max == 0 {
            return;
        }
        // SAFETY: the caller's contract.
        unsafe {
            match (indexed, indirect.count) {
                (true, None) => d.cmd_draw_indexed_indirect(cmd, buffer, offset, max, stride),
                (false, None) => d.cmd_draw_indirect(cmd, buffer, offset, max, stride),
                (true, Some(c)) => d.cmd_draw_indexed_indirect_count(cmd, buffer, offset, c.buffer, c.offset, max, stride),
                (false, Some(c)) => d.cmd_draw_indirect_count(cmd, buffer, offset, c.buffer, c.offset, max, stride),
            }
        }
    }
}
