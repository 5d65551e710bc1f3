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
use crate::gpu_plan::{plannable, CullDispatch, NO_WINDOW};
use crate::handoff::TABLE_SNAPSHOT_BASE;
use crate::host::config::Planner;
use crate::plan::{PlanEntry, Planned};
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

/// The table of the shared list last recorded, or that it has none.
pub(super) struct CachedTable {
    list: Weak<[PickDraw]>,
    table: Option<Arc<DrawTable>>,
}

impl Picker {
    /// The table a request over `draws` plans with, if any: under `Planner::Gpu`, where the
    /// host enabled `shaderFloat64` and batching. A request's ignore rules and filter name
    /// the rows they leave out (`DrawTable::write_ignored`: the filter is asked once per ID
    /// of the table each frame); GPU results find a row's draw by its group (`group_entries`).
    /// Built once per list; none for a list with more plain draws than
    /// `PickerConfig::gpu_plan_draws`.
    pub(super) fn table_for(&mut self, draws: &Arc<[PickDraw]>) -> Result<Option<Arc<DrawTable>>, PickError> {
        let usable = self.planner == Planner::Gpu && self.kit.batch_rows > 0;
        let Some(passes) = self.gpu_plan.as_ref().and_then(|k| k.tables()).filter(|_| usable) else { return Ok(None) };
        let cached = self.table.as_ref().filter(|c| c.list.upgrade().is_some_and(|d| Arc::ptr_eq(&d, draws)));
        if let Some(c) = cached {
            return Ok(c.table.clone());
        }
        // Drop the last list's table first: its memory goes before the new one's is taken
        // (frames in flight keep theirs alive).
        self.table = None;
        let table = DrawTable::new(&self.kit.memory, draws, passes, self.kit.max_draw_indirect_count)?.map(Arc::new);
        self.table = Some(CachedTable { list: Arc::downgrade(draws), table: table.clone() });
        Ok(table)
    }

    /// Bytes the cached table holds.
    pub(super) fn table_bytes(&self) -> u64 {
        self.table.as_ref().and_then(|c| c.table.as_ref()).map_or(0, |t| t.bytes())
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
