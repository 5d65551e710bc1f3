//! The GPU plan's jobs: what the CPU writes into a slot's plan buffer for each of the frame's
//! pairs while recording (`gpu_plan::layout` names the words), with the counters, summary
//! words and commands the cull pass expects to find cleared.

use super::gpu_pairs::{Candidate, FramePairs};
use crate::draw::{PickDraw, Triangles};
use crate::gpu_plan::layout::{bit_words, counter, groups, job, summary_words, PlanLayout, COMMAND_WORDS, COUNTER_WORDS, JOB_WORDS, TOTAL_WORDS};
use crate::gpu_plan::table::TableIndex;
use crate::gpu_plan::CULL_GROUP;
use crate::request::camera::CameraSnapshot;
use crate::request::viewport::Viewport;

/// Where one pair's words go: the pair, and the first of its survivor bit words.
#[derive(Clone, Copy)]
struct PairPlace {
    pair: u32,
    bits: u32,
}

impl FramePairs {
    /// Writes every pair's job, zeroes its counters, summary words and survivor counts (and
    /// the frame's totals) and writes its fallback command (drawing nothing until the runs
    /// overflow the pair's share; a walked pair's one command, drawing none until the cull
    /// pass counts its survivors) into `words`, a slot's mapped plan buffer whose previous
    /// frame completed.
    pub fn write_jobs(
        &self,
        words: &mut [u32],
        layout: PlanLayout,
        (draws, table): (&[PickDraw], Option<&TableIndex>),
        camera: &CameraSnapshot,
        viewport: &Viewport,
    ) {
        if self.table.is_some() {
            layout.write_view_projection(words, camera);
            words[layout.compacted_word() as usize] = 0;
        }
        words[layout.totals_word() as usize..][..TOTAL_WORDS as usize].fill(0);
        let mut bits = 0;
        for (pair, &k) in self.order.iter().enumerate() {
            let pair = pair as u32;
            let c = self.candidates[k as usize];
            // `collect` took only pairs of listed draws with a culling box.
            let Some(draw) = draws.get(c.draw as usize) else { continue };
            let first_instance = draw.instances.map_or(0, |i| i.first) + c.start;
            let (template, mut fallback) = templates(draw.triangles, first_instance);
            if draw.culling_bounds().is_none() {
                // Never taken (see above); were it, the pair would test nothing and draw all.
                fallback[1] = c.count;
            }
            let place = PairPlace { pair, bits };
            let j = self.job_words(place, (&c, draw, template), (layout, table), (camera, viewport));
            let groups = groups(c.start, c.count).1;
            bits += bit_words(groups);
            let at = (pair * JOB_WORDS) as usize;
            words[at..at + JOB_WORDS as usize].copy_from_slice(&j);
            let counters = layout.counters_word(pair) as usize;
            words[counters..counters + COUNTER_WORDS as usize].copy_from_slice(&[0, 0, 0, layout.fallback_count, 0, 0]);
            let f = layout.fallback_word(pair) as usize;
            words[f..f + COMMAND_WORDS as usize].copy_from_slice(&fallback);
            let summary = j[job::SUMMARY_WORD] as usize;
            words[summary..summary + 2 * summary_words(groups) as usize].fill(0);
            let commands = self.commands[pair as usize];
            if commands.walk {
                // One command: the draw's, from instance 0 (the vertex shader finds the k-th
                // survivor), whose instance count the cull pass adds up; drawn with a count of 1.
                let at = layout.command_word(commands.first) as usize;
                let mut command = fallback;
                command[1] = 0;
                command[if template[3] == 1 { 4 } else { 3 }] = 0;
                words[at..at + COMMAND_WORDS as usize].copy_from_slice(&command);
                words[counters + counter::DRAWN as usize] = 1;
            }
        }
    }

    /// Pair `place.pair`'s job words: candidate `c` of `draw` (whose command template is
    /// `template`), its bits from `place.bits` on.
    fn job_words(
        &self,
        place: PairPlace,
        (c, draw, template): (&Candidate, &PickDraw, [u32; 4]),
        (layout, table): (PlanLayout, Option<&TableIndex>),
        (camera, viewport): (&CameraSnapshot, &Viewport),
    ) -> [u32; JOB_WORDS as usize] {
        let (pair, commands) = (place.pair, self.commands[place.pair as usize]);
        let bounds = draw.culling_bounds();
        let mut j = [0u32; JOB_WORDS as usize];
        let floats = |j: &mut [u32], at: usize, values: &[f32]| {
            for (w, v) in j[at..at + values.len()].iter_mut().zip(values) {
                *w = v.to_bits();
            }
        };
        floats(&mut j, job::MVP, &camera.model_view_projection(&draw.model).to_cols_array());
        if let Some(bounds) = bounds {
            floats(&mut j, job::BOX_MIN, &bounds.min.to_array());
            floats(&mut j, job::BOX_MAX, &bounds.max.to_array());
        }
        let (min, max) = (c.region.min.as_vec2(), c.region.max.as_vec2());
        floats(&mut j, job::REGION, &[min.x + 0.5, min.y + 0.5, max.x - 0.5, max.y - 0.5]);
        // Two pixels, as the CPU planner's rays: the rasterizer's snapping and the
        // matrices' rounding never move a covered pixel centre further.
        let table_group = c.group.and_then(|g| table?.groups.get(g as usize));
        floats(&mut j, job::PAD, &[table_group.map_or(2.0 + crate::draw::reach_px(draw), |g| g.pad)]);
        floats(&mut j, job::VIEWPORT, &[viewport.x, viewport.y, viewport.width, viewport.height]);
        // The pair's bits cover whole cull workgroups, from the draw's first instance.
        let (group, groups) = groups(c.start, c.count);
        let first_instance = draw.instances.map_or(0, |i| i.first) + c.start;
        j[job::FIRST_INSTANCE] = first_instance - (c.start - group * CULL_GROUP);
        j[job::INSTANCES] = groups * CULL_GROUP;
        j[job::COUNTERS] = layout.counters_word(pair);
        j[job::COMMANDS_WORD] = layout.command_word(commands.first);
        j[job::CAPACITY] = commands.capacity;
        j[job::FALLBACK_WORD] = layout.fallback_word(pair);
        j[job::TEMPLATE..job::TEMPLATE + 4].copy_from_slice(&template);
        // Two words a workgroup, the summary words, then as many survivor counts.
        j[job::BITS_WORD] = layout.bits_word(place.bits);
        j[job::SUMMARY_WORD] = layout.bits_word(place.bits + 2 * groups);
        j[job::FIRST_GROUP] = group;
        j[job::RANGE_START] = c.start - group * CULL_GROUP;
        j[job::RANGE_COUNT] = if bounds.is_some() { c.count } else { 0 };
        // A table pair's candidates are the table's rows (its commands follow them).
        j[job::DRAW_INSTANCES] = match table_group {
            Some(_) => table.map_or(0, TableIndex::rows),
            None => draw.instance_count(),
        };
        self.write_table_words(&mut j, table_group.zip(c.group));
        if commands.walk {
            j[job::WALK_TOTALS] = layout.totals_word();
        }
        if let Some(occlusion) = c.occlusion.filter(|o| table_group.is_some_and(|g| g.occluders || o.bound < f32::INFINITY)) {
            occlusion.write_job(&mut j, draw.raster.culling_or(camera.culling));
        }
        j
    }
}

/// A draw's command template for the cull pass (count, first index or vertex, vertex offset,
/// indexed) and its fallback command over `first_instance..`, whose instance count (word 1)
/// stays 0 until the pass overflows.
fn templates(triangles: Triangles, first_instance: u32) -> ([u32; 4], [u32; COMMAND_WORDS as usize]) {
    match triangles {
        Triangles::NonIndexed { first_vertex, vertex_count } => ([vertex_count, first_vertex, 0, 0], [vertex_count, 0, first_vertex, first_instance, 0]),
        Triangles::Indexed { first_index, index_count, vertex_offset, .. } => {
            let offset = vertex_offset as u32;
            ([index_count, first_index, offset, 1], [index_count, 0, first_index, offset, first_instance])
        }
    }
}
