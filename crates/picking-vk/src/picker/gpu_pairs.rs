//! A frame's GPU plan on the CPU side: which (query region, instance range) pairs the cull
//! pass takes, in what order, with what share of the commands; and their jobs, written into
//! the slot's plan buffer while recording.

use super::frame_layout::{FrameLayout, QueryLayout};
use super::Picker;
use crate::draw::PickDraw;
use crate::gpu_plan::layout::{bit_words, groups, PlanLayout, TableOcclusion};
use crate::gpu_plan::record::{CullInput, TablePairs};
use crate::gpu_plan::table::TableIndex;
use crate::gpu_plan::{plannable, walkable, CullDispatch, PairCommands, CULL_GROUP, MAX_DISPATCH_GROUPS, NO_PAIR};
use crate::host::config::Planner;
use crate::plan::PlanEntry;
use crate::record::cull_set_buffers;
use crate::record::push::storage_words;
use crate::request::camera::CameraSnapshot;
use crate::request::query::PixelRect;
use crate::request::PickRequest;
use crate::resolve::result::GpuPlanStats;
use ash::vk;
use glam::UVec2;

/// The most instances of one range the cull pass takes: its workgroups stay within the
/// 65,535 every device offers along a dispatch's x.
pub(super) const MAX_RANGE_INSTANCES: u32 = (MAX_DISPATCH_GROUPS - 1) * CULL_GROUP;

#[derive(Clone, Copy)]
pub(super) struct Candidate {
    /// The draw, or a table group's first draw.
    pub(super) draw: u32,
    /// The table group (`gpu_plan::table`) whose rows it culls, rather than instances.
    pub(super) group: Option<u32>,
    /// The range's index in the frame's plan lists.
    pub(super) range: u32,
    /// The instances it culls (of the draw's, from its first): the range, or in a rectangle
    /// tile the part of it that one of the rectangle's entry ranges covers.
    pub(super) start: u32,
    pub(super) count: u32,
    pub(super) region: PixelRect,
    /// A table group of a point query: its occlusion.
    pub(super) occlusion: Option<TableOcclusion>,
    /// For instances of a point or radius query that one walked command may draw
    /// (`walkable`): the ranges of their plan entry (first, count), which are walked all or
    /// none (`choose_walked`), as the entry's draw is recorded with one pipeline.
    pub(super) walk: Option<(u32, u32)>,
}

/// A frame's table as its cull pass reads it: the index, the slot's rows and set, the words
/// of the run-start bits, of the occluders' directory and of the frame's view-projection.
#[derive(Clone, Copy)]
pub(super) struct FrameTable<'a> {
    pub index: &'a TableIndex,
    pub rows: vk::Buffer,
    pub set: vk::DescriptorSet,
    pub starts_word: u32,
    pub occluders_word: u32,
    pub vp_word: u32,
    /// The rows the slot holds (`PickerConfig::gpu_plan_rows`).
    pub frame_rows: u32,
}

/// The frame's pairs, reused every frame.
#[derive(Default)]
pub(crate) struct FramePairs {
    pub(super) candidates: Vec<Candidate>,
    /// Survivor bit words the candidates take.
    bit_words: u32,
    /// The candidates in pair order.
    pub(super) order: Vec<u32>,
    /// Per range of the frame's plan lists, its first pair ([`NO_PAIR`]: recorded as the CPU
    /// planned it). A range of a rectangle tile has a pair per entry range it meets, in the
    /// order the tile records them.
    pub pair_of_range: Vec<u32>,
    /// Per pair, its commands.
    pub commands: Vec<PairCommands>,
    pub dispatches: Vec<CullDispatch>,
    /// The dispatches as the cull pass records them (the instances' from `dispatches`, a
    /// table's pushed with its pairs).
    pub inputs: Vec<CullInput>,
    /// The pairs over a shared list's table (after the instances' pairs), if any.
    pub table: Option<TablePairs>,
    /// Per table group, its first row in the slot's rows (`place_groups`).
    pub windows: Vec<u32>,
}

/// The parts of `(start, count)` that the `owned` ranges cover, in their order: what a
/// rectangle tile draws of a planned range (`record::rect`).
fn owned_parts(start: u32, count: u32, owned: &[(u32, u32)]) -> impl Iterator<Item = (u32, u32)> + Clone + '_ {
    owned.iter().filter_map(move |&(s, c)| {
        let (lo, hi) = (start.max(s), (start + count).min(s + c));
        (lo < hi).then(|| (lo, hi - lo))
    })
}

impl FramePairs {
    /// Takes the instance ranges of the planned draws `planner` lets the GPU plan in the point
    /// and radius queries and in the rectangles' tiles, up to `layout.pairs` pairs and
    /// `layout.bit_words` words of survivor bits (in query order; the rest stay as the CPU
    /// planned them), groups them by draw, and shares the commands among them (each at most
    /// a command per two of its instances, and `max_draw_count`).
    pub fn collect(
        &mut self,
        frame: &FrameLayout,
        draws: &[PickDraw],
        planner: Planner,
        (layout, max_draw_count): (PlanLayout, u32),
        table: Option<FrameTable<'_>>,
    ) {
        self.pair_of_range.resize(frame.plans.ranges.len(), NO_PAIR);
        let plans = &frame.plans;
        let eligible = |entry: &PlanEntry| entry.table || (entry.run_count == 0 && draws.get(entry.draw as usize).is_some_and(|d| plannable(d, planner)));
        // A table entry's group: the one that starts at its draw.
        let group = |entry: &PlanEntry| table.filter(|_| entry.table).and_then(|t| t.index.group_of(entry.draw)).map(|g| g as u32);
        let ranges_of = |entry: &PlanEntry| entry.first_range..entry.first_range + entry.range_count;
        'queries: for query in &frame.queries {
            let (region, span) = match query {
                QueryLayout::Point { pixel, plan: Some(plan), .. } => (PixelRect { min: *pixel, max: *pixel + UVec2::ONE }, plan),
                QueryLayout::Radius { region, plan, .. } => (*region, plan),
                QueryLayout::Rect { plan, tiles, .. } => {
                    for tile in &frame.tiles[tiles.clone()] {
                        let region = PixelRect { min: tile.first, max: tile.first + tile.size };
                        for entry in plans.entries[tile.plan.clone()].iter().filter(|e| eligible(e)) {
                            // The rectangle's entry ranges of the draw: a tile draws nothing else.
                            let Some(owned) = plans.entries[plan.clone()].iter().find(|e| e.draw == entry.draw) else { continue };
                            let owned = &plans.ranges[ranges_of(owned).start as usize..ranges_of(owned).end as usize];
                            for range in ranges_of(entry) {
                                let (start, count) = plans.ranges[range as usize];
                                let candidate = Candidate { draw: entry.draw, group: group(entry), range, start, count, region, occlusion: None, walk: None };
                                if !self.push_parts(candidate, owned_parts(start, count, owned), layout) {
                                    break 'queries;
                                }
                            }
                        }
                    }
                    continue;
                }
                QueryLayout::Point { plan: None, .. } => continue,
            };
            for entry in plans.entries[span.clone()].iter().filter(|e| eligible(e)) {
                // A point's or a disc's pair has few survivors as a rule: the vertex shader finds
                // them in its bits (a rectangle tile's many would each walk further).
                let walks = !entry.table && draws.get(entry.draw as usize).is_some_and(|d| walkable(d, planner));
                let walk = walks.then_some((entry.first_range, entry.range_count));
                for range in ranges_of(entry) {
                    let (start, count) = plans.ranges[range as usize];
                    let candidate = Candidate { draw: entry.draw, group: group(entry), range, start, count, region, occlusion: entry.occlusion, walk };
                    if !self.push_parts(candidate, std::iter::once((start, count)), layout) {
                        break 'queries;
                    }
                }
            }
        }
        self.share(layout, max_draw_count);
        self.choose_walked();
        if let Some(table) = table.filter(|_| plans.entries.iter().any(|e| e.table)) {
            if !self.place_groups(frame, table.index, table.frame_rows) {
                log::error!("picking-vk: the frame's table groups pass gpu_plan_rows; were they claimed?");
            }
            self.push_table_dispatches(table);
        }
    }

    /// Adds a candidate per part of `range` (all of them, or none when they would take more
    /// pairs or survivor bits than `layout` holds: then returns false); parts too large for
    /// one dispatch row stay unculled, with the whole range.
    fn push_parts(&mut self, range: Candidate, parts: impl Iterator<Item = (u32, u32)> + Clone, layout: PlanLayout) -> bool {
        if range.count == 0 || parts.clone().any(|(_, count)| count > MAX_RANGE_INSTANCES) {
            return true;
        }
        let words = parts.clone().map(|(start, count)| u64::from(bit_words(groups(start, count).1))).sum::<u64>();
        if self.candidates.len() + parts.clone().count() > layout.pairs as usize || u64::from(self.bit_words) + words > u64::from(layout.bit_words) {
            return false;
        }
        self.bit_words += words as u32;
        self.candidates.extend(parts.map(|(start, count)| Candidate { start, count, ..range }));
        true
    }

    /// Orders the candidates by draw (a dispatch each, or more where their workgroups would
    /// pass a dispatch's), the table's groups after the instances, numbers them, and gives
    /// each a share of the commands. The table's dispatches are pushed by
    /// `push_table_dispatches`.
    fn share(&mut self, layout: PlanLayout, max_draw_count: u32) {
        self.order.extend(0..self.candidates.len() as u32);
        let candidates = &self.candidates;
        // Stable: the parts of one range stay consecutive, in the order a tile draws them.
        self.order.sort_by_key(|&k| (candidates[k as usize].group.is_some(), candidates[k as usize].draw));
        let share = if candidates.is_empty() { 0 } else { layout.commands / candidates.len() as u32 };
        let mut first = 0;
        for (pair, &k) in self.order.iter().enumerate() {
            let c = candidates[k as usize];
            let first_pair = &mut self.pair_of_range[c.range as usize];
            *first_pair = (*first_pair).min(pair as u32);
            // A run of survivors a command: at most every other instance starts one (each row of
            // a table may: its command may differ from its neighbour's).
            let most = if c.group.is_some() { c.count } else { c.count.div_ceil(2) };
            let capacity = most.min(share).min(max_draw_count);
            self.commands.push(PairCommands { first, capacity, walk: false });
            first += capacity;
            if c.group.is_some() {
                continue;
            }
            // The draw's dispatch covers the workgroups of all its pairs.
            let (group, groups) = groups(c.start, c.count);
            let joined = |d: &CullDispatch| (d.first_group.min(group), (d.first_group + d.groups).max(group + groups));
            match self.dispatches.last_mut() {
                Some(d) if d.draw == c.draw && joined(d).1 - joined(d).0 <= MAX_DISPATCH_GROUPS => {
                    let (lo, hi) = joined(d);
                    (d.first_group, d.groups, d.pairs) = (lo, hi - lo, d.pairs + 1);
                }
                _ => self.dispatches.push(CullDispatch { draw: c.draw, table: false, first_pair: pair as u32, pairs: 1, first_group: group, groups }),
            }
        }
    }

    /// Walks the pairs of each walkable entry whose every range took a pair with a command:
    /// its draw is recorded with the walked pipeline for all its ranges, or with the plain
    /// one for all (a range left to the CPU's plan, or a pair the bound left no command).
    fn choose_walked(&mut self) {
        for (pair, &k) in self.order.iter().enumerate() {
            let Some((first, count)) = self.candidates[k as usize].walk else { continue };
            let commanded = |r: u32| self.pair_of_range.get(r as usize).and_then(|&p| self.commands.get(p as usize)).is_some_and(|c| c.capacity > 0);
            let whole = (first..first + count).all(commanded);
            self.commands[pair].walk = whole;
        }
    }

    /// Plans nothing on the GPU this frame.
    pub fn clear(&mut self) {
        self.candidates.clear();
        self.bit_words = 0;
        self.order.clear();
        self.pair_of_range.clear();
        self.commands.clear();
        self.dispatches.clear();
        self.inputs.clear();
        self.table = None;
        self.windows.clear();
    }

    /// What the frame takes: its pairs and the instances they test.
    pub fn stats(&self) -> GpuPlanStats {
        let tested = self.candidates.iter().map(|c| u64::from(c.count)).sum();
        let walked = self.commands.iter().filter(|c| c.walk).count() as u64;
        GpuPlanStats { ranges: self.commands.len() as u64, instances_tested: tested, walked, ..Default::default() }
    }

    /// Whether the finishing pass has instance pairs to finish: any not walked.
    pub fn finishes_instances(&self) -> bool {
        let instance_pairs = self.table.map_or(self.commands.len(), |t| t.first as usize);
        self.commands[..instance_pairs.min(self.commands.len())].iter().any(|c| !c.walk)
    }

    /// Whether any pair's survivors are found by the pick pass's vertex shader.
    pub fn walks(&self) -> bool {
        self.commands.iter().any(|c| c.walk)
    }
}

impl Picker {
    /// Chooses the frame's GPU-planned pairs from the prepared layout and writes their jobs
    /// into slot `slot`'s plan buffer (its previous frame completed); returns whether the
    /// frame plans anything on the GPU (if not, its ranges are recorded as the CPU planned
    /// them). The cull pass's dispatches are left in `gpu_pairs.inputs`.
    pub(super) fn prepare_gpu_plan(&mut self, slot: usize, request: &PickRequest<'_>, camera: &CameraSnapshot, draws: &[PickDraw]) -> bool {
        let planner = self.planner;
        let pairs = &mut self.gpu_pairs;
        pairs.clear();
        let Some(kit) = self.gpu_plan.as_mut() else { return false };
        let table = self.frame_table.as_deref();
        let vp_word = kit.layout.view_projection_word();
        // The table's set of the slot (every table has one per slot).
        let frame_table = match table.map(|t| (t, t.frame(slot))) {
            Some((t, Some((rows, set)))) => {
                let frame_rows = kit.tables().map_or(0, |d| d.limits.frame_rows);
                Some(FrameTable { index: &t.index, rows, set, starts_word: t.starts_word(), occluders_word: t.occluders_word(), vp_word, frame_rows })
            }
            Some((_, None)) => return false,
            None => None,
        };
        let limits = (kit.layout, self.kit.draw_limits.max_draw_indirect_count);
        pairs.collect(&self.layout, draws, planner, limits, frame_table);
        // Every instance dispatch needs its draw's instance set (prepared with the pass's
        // pipelines).
        let sets = &self.kit.instance_sets;
        for d in &pairs.dispatches {
            let input = draws.get(d.draw as usize).and_then(|draw| {
                let set = sets.get(&cull_set_buffers(draw)?)?;
                Some(CullInput { dispatch: *d, set, words: storage_words(draw), last_word: draw.instances.map_or(0, |i| i.first), hooked: false })
            });
            match input {
                Some(input) => pairs.inputs.push(input),
                None => {
                    pairs.clear();
                    return false;
                }
            }
        }
        let layout = kit.layout;
        match kit.words_mut(slot) {
            Some(words) if !pairs.inputs.is_empty() => {
                pairs.write_jobs(words, layout, (draws, table.map(|t| &t.index)), camera, &request.viewport);
                if let (Some(t), Some(_)) = (table, pairs.table) {
                    t.write_ignored(words, layout.ignored_word() as usize, request.ignore, request.filter);
                }
                true
            }
            _ => {
                pairs.clear();
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(draw: u32, range: u32, start: u32, count: u32) -> Candidate {
        Candidate { draw, group: None, range, start, count, region: PixelRect { min: UVec2::ZERO, max: UVec2::ONE }, occlusion: None, walk: None }
    }

    #[test]
    fn a_tile_takes_the_parts_of_a_range_its_rectangle_owns_in_order() {
        let parts: Vec<_> = owned_parts(10, 20, &[(0, 12), (15, 3), (25, 100), (40, 5)]).collect();
        assert_eq!(parts, vec![(10, 2), (15, 3), (25, 5)]);
        assert_eq!(owned_parts(10, 5, &[(0, 10), (15, 5)]).count(), 0, "ranges that only touch share nothing");
    }

    #[test]
    fn pairs_group_by_draw_keep_a_ranges_parts_together_and_share_the_commands() {
        let mut pairs = FramePairs { pair_of_range: vec![NO_PAIR; 4], ..FramePairs::default() };
        let layout = PlanLayout { pairs: 16, commands: 40, fallback_count: 1, bit_words: 1 << 10, ignored_words: 0 };
        // Range 0 of draw 5, range 1 of draw 2 in two parts, range 2 of draw 5.
        assert!(pairs.push_parts(candidate(5, 0, 0, 100), std::iter::once((0, 100)), layout));
        assert!(pairs.push_parts(candidate(2, 1, 0, 50), [(0, 10), (20, 30)].into_iter(), layout));
        assert!(pairs.push_parts(candidate(5, 2, 200, 3), std::iter::once((200, 3)), layout));
        // A range whose parts would pass the bound is left whole to the CPU's plan.
        assert!(!pairs.push_parts(candidate(7, 3, 0, 9), (0..14).map(|k| (k, 1)), layout));
        pairs.share(layout, 1000);
        // Draw 2's two parts first (consecutive, in order), then draw 5's ranges.
        assert_eq!(pairs.pair_of_range, vec![2, 0, 3, NO_PAIR]);
        // A dispatch per draw, over the cull workgroups its pairs meet (64 instances each).
        let dispatches: Vec<_> = pairs.dispatches.iter().map(|d| (d.draw, d.first_pair, d.pairs, d.first_group, d.groups)).collect();
        assert_eq!(dispatches, vec![(2, 0, 2, 0, 1), (5, 2, 2, 0, 4)]);
        // 40 commands over 4 pairs: 10 each, at most a run per other instance; slots never
        // overlap.
        let capacities: Vec<_> = pairs.commands.iter().map(|c| c.capacity).collect();
        assert_eq!(capacities, vec![5, 10, 10, 2]);
        assert!(pairs.commands.windows(2).all(|w| w[0].first + w[0].capacity == w[1].first));
        assert_eq!(pairs.stats().instances_tested, 10 + 30 + 100 + 3);
        // Survivor bits: two words per cull workgroup each part meets, and a summary word.
        assert_eq!(pairs.bit_words, 4 + 4 + 6 + 4);
    }

    #[test]
    fn a_draws_pairs_too_far_apart_for_one_dispatch_take_two() {
        let mut pairs = FramePairs { pair_of_range: vec![NO_PAIR; 2], ..FramePairs::default() };
        let layout = PlanLayout { pairs: 16, commands: 40, fallback_count: 1, bit_words: 1 << 10, ignored_words: 0 };
        let far = MAX_DISPATCH_GROUPS * CULL_GROUP;
        assert!(pairs.push_parts(candidate(3, 0, 10, 20), std::iter::once((10, 20)), layout));
        assert!(pairs.push_parts(candidate(3, 1, far, 5), std::iter::once((far, 5)), layout));
        pairs.share(layout, 1000);
        let dispatches: Vec<_> = pairs.dispatches.iter().map(|d| (d.first_pair, d.pairs, d.first_group, d.groups)).collect();
        assert_eq!(dispatches, vec![(0, 1, 0, 1), (1, 1, MAX_DISPATCH_GROUPS, 1)]);
    }

    #[test]
    fn a_range_whose_bits_would_pass_the_bound_is_left_to_the_cpu() {
        let mut pairs = FramePairs { pair_of_range: vec![NO_PAIR; 3], ..FramePairs::default() };
        let layout = PlanLayout { pairs: 16, commands: 40, fallback_count: 1, bit_words: 10, ignored_words: 0 };
        assert!(pairs.push_parts(candidate(1, 0, 0, 128), std::iter::once((0, 128)), layout));
        assert!(!pairs.push_parts(candidate(1, 1, 0, 129), std::iter::once((0, 129)), layout), "8 words more than the 4 left");
        assert!(pairs.push_parts(candidate(1, 2, 0, 64), std::iter::once((0, 64)), layout));
        assert_eq!((pairs.candidates.len(), pairs.bit_words), (2, 10));
    }
}
