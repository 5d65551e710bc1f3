//! GPU planning of a shared list's plain draws on the picker's side: which frames use the
//! list's table (`gpu_plan::table`), and the table's cull dispatches among a frame's pairs.

use super::frame_layout::FrameLayout;
use super::gpu_pairs::{FramePairs, FrameTable, MAX_RANGE_INSTANCES};
use super::Picker;
use crate::draw::PickDraw;
use crate::error::PickError;
use crate::gpu_plan::layout::{bit_words, groups, job, PlanLayout, CHUNKED, HOOKED};
use crate::gpu_plan::record::{CullInput, TablePairs};
use crate::gpu_plan::table::{DrawTable, TableGroup, TableIndex};
use crate::gpu_plan::{plannable, CullDispatch, TableLimits, NO_WINDOW};
use crate::handoff::TABLE_SNAPSHOT_BASE;
use crate::host::config::Planner;
use crate::plan::{PlanEntry, Planned};
use crate::request::query::{PickQuery, PixelRect};
use std::sync::{Arc, Weak};

/// What a frame's plans have claimed of the GPU plan's bounds so far (pairs, survivor bit
/// words and table rows, query by query): a query whose table groups would pass them is
/// planned on the CPU instead (the CPU path), rather than left to draw its groups whole. The
/// pairs and words are an estimate of what `FramePairs::collect` takes: it counts a plan
/// before occlusion and chunk cuts shrink it, and a rectangle's plan once per tile (a tile
/// takes a pair per group of the rectangle's it meets; its instance ranges may split
/// otherwise). `collect` enforces those bounds; a miss there only costs a group drawn
/// whole. The rows are exact: every group a frame's plans hold was claimed, and the
/// groups claimed fit the slot's rows (`FramePairs::place_groups`).
pub(super) struct PairBudget {
    left: (u64, u64),
    planner: Planner,
    /// Per table group, whether a query claimed its rows; and the rows left.
    claimed: Vec<bool>,
    rows_left: u64,
}

impl PairBudget {
    /// A frame's budget; `claimed` is the last frame's flags, reused (`into_claimed`) so that
    /// recording allocates nothing once warm.
    pub fn new(layout: PlanLayout, planner: Planner, frame_rows: u32, mut claimed: Vec<bool>) -> Self {
        claimed.clear();
        PairBudget { left: (u64::from(layout.pairs), u64::from(layout.bit_words)), planner, claimed, rows_left: u64::from(frame_rows) }
    }

    /// The claimed flags' buffer, for the next frame's budget.
    pub fn into_claimed(self) -> Vec<bool> {
        self.claimed
    }

    /// Claims the table rows `planned` (one query's plan) takes, and its pairs `copies` times
    /// (a rectangle's: once per tile); false, claiming nothing, when it has table groups and
    /// they would pass what is left. (The pairs are an estimate: a query it lets through that
    /// `collect` cannot fit still draws its groups whole.)
    pub fn claim(&mut self, planned: Planned<'_>, draws: &[PickDraw], table: &TableIndex, copies: u64) -> bool {
        let mut need = (0u64, 0u64);
        self.claimed.resize(table.groups.len(), false);
        // The groups not yet claimed (a query's plan names a group once).
        let group_of = |e: &PlanEntry| e.table.then(|| table.group_of(e.draw)).flatten();
        let new_groups = || planned.entries.iter().filter_map(group_of).filter(|&g| !self.claimed[g]);
        let rows: u64 = new_groups().map(|g| u64::from(table.groups[g].rows)).sum();
        for e in planned.entries {
            if !(e.table || (e.run_count == 0 && draws.get(e.draw as usize).is_some_and(|d| plannable(d, self.planner)))) {
                continue;
            }
            for &(start, count) in &planned.ranges[e.first_range as usize..(e.first_range + e.range_count) as usize] {
                if count > 0 && count <= MAX_RANGE_INSTANCES {
                    need = (need.0 + 1, need.1 + u64::from(bit_words(groups(start, count).1)));
                }
            }
        }
        let need = (need.0 * copies, need.1 * copies);
        if planned.entries.iter().any(|e| e.table) && (need.0 > self.left.0 || need.1 > self.left.1 || rows > self.rows_left) {
            return false;
        }
        self.left = (self.left.0.saturating_sub(need.0), self.left.1.saturating_sub(need.1));
        self.rows_left -= rows;
        for e in planned.entries {
            if let Some(g) = group_of(e) {
                self.claimed[g] = true;
            }
        }
        true
    }
}

/// The shared list last recorded: how many table rows it has, and its table once a set
/// took one (`None` inside: the list has none).
pub(super) struct CachedTable {
    list: Weak<[PickDraw]>,
    rows: usize,
    table: Option<Option<Arc<DrawTable>>>,
}

/// `Planner::Auto`'s rule: a set's shared-list plain draws are planned with the list's table
/// where it costs less CPU time (recording and taking) and GPU time together than the CPU
/// planner (`bench --planner-choice` on an H100, README "Which planner"): over a list of at
/// least [`AUTO_MIN_ROWS`] table rows,
/// - a set of at least [`AUTO_POINTS`] point and radius queries whose count times the rows
///   reaches [`AUTO_POINT_ROWS`] (the CPU planner's cost grows with the draws under each
///   point; the table's passes cost the GPU some 0.02 to 0.06 ms whatever the set), or
/// - rectangles whose pixels in the view times the rows reach [`AUTO_RECT_PIXEL_ROWS`] (the
///   CPU planner's cost grows with the draws in each rectangle), with at least
///   [`AUTO_RECT_PIXELS`] pixels a rectangle (4 times as many with GPU results): a table
///   rectangle costs the CPU some 4 ns a row of the groups it meets to take, and with GPU
///   results some 25 ns more to record (a span a row).
pub(crate) const AUTO_MIN_ROWS: u64 = 100;
pub(crate) const AUTO_POINTS: u64 = 8;
pub(crate) const AUTO_POINT_ROWS: u64 = 1 << 15;
pub(crate) const AUTO_RECT_PIXEL_ROWS: u64 = 1 << 25;
pub(crate) const AUTO_RECT_PIXELS: u64 = 1 << 13;

/// What `Planner::Auto` weighs of a set: its point and radius queries, its rectangles, and
/// their pixels inside `view`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SetSize {
    pub hits: u64,
    pub rects: u64,
    pub rect_pixels: u64,
}

impl SetSize {
    pub fn of(queries: &[PickQuery], view: &PixelRect) -> Self {
        // Saturating: the set is weighed before its viewport is checked against the device's
        // limits, and two rectangles of a huge view pass u64.
        let rect_pixels =
            queries.iter().map(|q| if let PickQuery::Rect { rect, .. } = q { rect.intersection(view).area() } else { 0 }).fold(0, u64::saturating_add);
        let rects = queries.iter().filter(|q| matches!(q, PickQuery::Rect { .. })).count() as u64;
        SetSize { hits: queries.len() as u64 - rects, rects, rect_pixels }
    }

    /// Whether no list is large enough for `Planner::Auto` to take a table for this set.
    fn never_tabled(self) -> bool {
        self.hits < AUTO_POINTS && self.rect_pixels == 0
    }

    /// Whether `Planner::Auto` takes a table of `rows` rows for this set, with or without GPU
    /// results.
    pub fn takes_table(self, rows: u64, gpu_results: bool) -> bool {
        let points = self.hits >= AUTO_POINTS && self.hits.saturating_mul(rows) >= AUTO_POINT_ROWS;
        let per_rect = if gpu_results { 4 * AUTO_RECT_PIXELS } else { AUTO_RECT_PIXELS };
        let rects = self.rect_pixels.saturating_mul(rows) >= AUTO_RECT_PIXEL_ROWS && self.rect_pixels >= self.rects.saturating_mul(per_rect);
        rows >= AUTO_MIN_ROWS && (points || rects)
    }
}

impl Picker {
    /// The table a set (`size`) over `draws` plans with, if any: under `Planner::Gpu`
    /// always, under `Planner::Auto` where the set and the list are large enough
    /// ([`SetSize::takes_table`]); where the host enabled `shaderFloat64` and batching. A
    /// request's ignore rules and filter name the rows they leave out
    /// (`DrawTable::write_ignored`: the filter is asked once per ID of the table each frame);
    /// GPU results find a row's draw by its group (`group_entries`). Built once per list (the
    /// last one recorded, as the CPU planner keeps the last list's hierarchy); none for a
    /// list with more plain draws than `PickerConfig::gpu_plan_draws`.
    pub(super) fn table_for(&mut self, draws: &Arc<[PickDraw]>, size: SetSize) -> Result<Option<Arc<DrawTable>>, PickError> {
        let usable = self.planner != Planner::Cpu && self.kit.batch_rows > 0;
        let Some(limits) = self.gpu_plan.as_ref().and_then(|k| k.table_limits()).filter(|_| usable) else { return Ok(None) };
        let (auto, gpu_results) = (self.planner == Planner::Auto, self.gpu_results.is_some());
        if auto && size.never_tabled() {
            return Ok(None);
        }
        if !self.table.as_ref().is_some_and(|c| c.list.upgrade().is_some_and(|d| Arc::ptr_eq(&d, draws))) {
            // Drop the last list's table first: its memory goes before the new one's is taken
            // (frames in flight keep theirs alive).
            self.table = None;
            let rows = self.table_rows(draws, limits);
            self.table = Some(CachedTable { list: Arc::downgrade(draws), rows, table: None });
        }
        let Some(cached) = self.table.as_mut() else { return Ok(None) };
        if auto && !size.takes_table(cached.rows as u64, gpu_results) {
            return Ok(None);
        }
        if let Some(table) = &cached.table {
            return Ok(table.clone());
        }
        let kit = self.gpu_plan.as_mut().ok_or(PickError::Internal("a table's limits without a GPU plan"))?;
        kit.build_tables(&self.kit.memory)?;
        let Some(passes) = kit.tables() else { return Ok(None) };
        let table = DrawTable::new(&self.kit.memory, draws, passes, self.kit.max_draw_indirect_count)?.map(Arc::new);
        cached.table = Some(table.clone());
        Ok(table)
    }

    /// Under `Planner::Auto`, builds the table passes where `draws` have the table rows
    /// Auto needs for some set ([`AUTO_MIN_ROWS`]), so that the first set that takes a table
    /// does not.
    pub(super) fn warm_up_tables(&mut self, draws: &[PickDraw]) -> Result<(), PickError> {
        let auto = self.planner == Planner::Auto && self.kit.batch_rows > 0;
        let Some(limits) = self.gpu_plan.as_ref().and_then(|k| k.table_limits()).filter(|_| auto) else { return Ok(()) };
        if self.table_rows(draws, limits) as u64 >= AUTO_MIN_ROWS {
            if let Some(kit) = self.gpu_plan.as_mut() {
                kit.build_tables(&self.kit.memory)?;
            }
        }
        Ok(())
    }

    /// The rows a table of `draws` holds under `limits`, grouped as `DrawTable::new` groups
    /// them (at most a count draw's commands and a frame's rows a group).
    fn table_rows(&self, draws: &[PickDraw], limits: TableLimits) -> usize {
        TableIndex::of(draws, self.kit.max_draw_indirect_count.min(limits.frame_rows)).1.len()
    }

    /// Bytes the cached table holds.
    pub(super) fn table_bytes(&self) -> u64 {
        self.table.as_ref().and_then(|c| c.table.as_ref()?.as_ref()).map_or(0, |t| t.bytes())
    }
}

impl FramePairs {
    /// Places the rows of every table group the frame's plans hold in the slot's rows
    /// (`windows`), from the end down, in the order the plans first name them: a group's
    /// window then never equals its first row by accident of order, so a row read without
    /// its window's offset shows in every test. False where they would pass the slot's
    /// `frame_rows` (never, for groups `PairBudget` claimed).
    pub(super) fn place_groups(&mut self, frame: &FrameLayout, index: &TableIndex, frame_rows: u32) -> bool {
        self.windows.clear();
        self.windows.resize(index.groups.len(), NO_WINDOW);
        let mut top = frame_rows;
        for e in frame.plans.entries.iter().filter(|e| e.table) {
            let Some(g) = index.group_of(e.draw) else { continue };
            if self.windows[g] == NO_WINDOW {
                let Some(window) = top.checked_sub(index.groups[g].rows) else { return false };
                self.windows[g] = window;
                top = window;
            }
        }
        true
    }

    /// A table pair's own job words (`group`: its group and the group's index): the word of
    /// the occluders' directory, the chunk flag, the row its commands count instances from (the group's
    /// first: the pick pass binds the group's rows there) and the group's window.
    pub(super) fn write_table_words(&self, j: &mut [u32], group: Option<(&TableGroup, u32)>) {
        if let (Some((g, index)), Some(t)) = (group, self.table) {
            j[job::OCCLUDERS] = t.words.1;
            if g.chunked {
                j[job::OCCLUSION] |= if g.hooked { CHUNKED | HOOKED } else { CHUNKED };
            }
            j[job::INSTANCE_BASE] = g.first_row;
            j[job::ROW_WINDOW] = self.windows.get(index as usize).copied().unwrap_or(0);
        }
    }

    /// A dispatch per table group the frame draws (after `share` numbered the pairs, the
    /// table's last), as the cull pass records it: each composes its group's rows into the
    /// group's window of the slot's rows, which the pick passes read whether or not a pair
    /// culls the group, and culls its pairs.
    pub(super) fn push_table_dispatches(&mut self, table: FrameTable<'_>) {
        let first_table_pair = self.order.iter().position(|&k| self.candidates[k as usize].group.is_some()).unwrap_or(self.order.len());
        let mut pair = first_table_pair;
        for (g, group) in table.index.groups.iter().enumerate() {
            let first_pair = pair;
            while self.order.get(pair).is_some_and(|&k| self.candidates[k as usize].group == Some(g as u32)) {
                pair += 1;
            }
            let window = self.windows.get(g).copied().unwrap_or(NO_WINDOW);
            if window == NO_WINDOW {
                continue;
            }
            let (first_group, count) = groups(group.first_row, group.rows);
            let dispatch =
                CullDispatch { draw: group.draw, table: true, first_pair: first_pair as u32, pairs: (pair - first_pair) as u32, first_group, groups: count };
            let words = [group.first_row, group.rows, TABLE_SNAPSHOT_BASE, window];
            self.inputs.push(CullInput { dispatch, set: table.set, words, last_word: table.vp_word, hooked: group.hooked });
        }
        let count = (self.order.len() - first_table_pair) as u32;
        let words = (table.starts_word, table.occluders_word);
        self.table = Some(TablePairs { first: first_table_pair as u32, count, rows: table.rows, set: table.set, words });
    }
}

#[cfg(test)]
mod tests {
    use super::SetSize;
    use crate::request::query::{PickQuery, PixelRect, RectMode};
    use glam::UVec2;

    fn rect(min: (u32, u32), max: (u32, u32)) -> PickQuery {
        PickQuery::Rect { rect: PixelRect::new(UVec2::new(min.0, min.1), UVec2::new(max.0, max.1)), mode: RectMode::Visible }
    }

    #[test]
    fn auto_takes_the_table_where_the_benchmark_found_it_cheaper() {
        let view = PixelRect::new(UVec2::ZERO, UVec2::new(1920, 1080));
        let points = |n: u32| (0..n).map(|k| PickQuery::Point(UVec2::new(k, k))).collect::<Vec<_>>();
        let takes = |queries: &[PickQuery], rows: u64, results: bool| SetSize::of(queries, &view).takes_table(rows, results);
        // Points (`bench --planner-choice`, H100): 8 and 16 at 10,000 rows take it; 16 at
        // 1,000 rows and a single point at any size do not; GPU results change nothing.
        for results in [false, true] {
            assert!(takes(&points(8), 10_000, results) && takes(&points(16), 10_000, results) && takes(&points(16), 2_048, results));
            assert!(!takes(&points(16), 1_000, results) && !takes(&points(7), 100_000, results) && !takes(&points(1), 1 << 22, results));
        }
        // Radius queries count as points.
        let radius = PickQuery::Radius { pixel: UVec2::ZERO, radius: 4, snap: crate::Snap::Nearest };
        assert!(takes(&[radius; 8], 4_096, false) && !takes(&[radius; 8], 4_095, false));
        // Rectangles by their pixels in the view times the rows: a 256x256 at 1,000 rows takes
        // it, not at 100 rows; the whole view from 100 rows on.
        let (r64, r256, whole) = (rect((0, 0), (64, 64)), rect((0, 0), (256, 256)), rect((0, 0), (1920, 1080)));
        for results in [false, true] {
            assert!(takes(&[r256], 1_000, results) && !takes(&[r256], 100, results));
            assert!(takes(&[whole], 100, results) && !takes(&[whole], 99, results));
        }
        // A 64x64 at 10,000 rows neither way (taking its rows' entries costs more), nor a
        // 128x64 with GPU results (a span a row), which takes it without.
        assert!(!takes(&[r64], 10_000, false) && !takes(&[r64], 1 << 20, false));
        let r128 = rect((0, 0), (128, 64));
        assert!(takes(&[r128], 10_000, false) && !takes(&[r128], 10_000, true));
        // Per rectangle: with GPU results a 256x128 takes it, its two halves do not.
        assert!(takes(&[rect((0, 0), (256, 128))], 4_096, true) && !takes(&[rect((0, 0), (128, 128)), rect((128, 0), (256, 128))], 4_096, true));
        // Only the pixels inside the view count.
        assert!(!takes(&[rect((1900, 1060), (1964, 1124))], 10_000, false));
        assert_eq!(SetSize::of(&[rect((1900, 1060), (1964, 1124)), radius], &view), SetSize { hits: 1, rects: 1, rect_pixels: 400 });
    }
}
