//! GPU planning of a shared list's plain draws on the picker's side: which frames use the
//! list's table (`gpu_plan::table`), and the table's cull dispatches among a frame's pairs.

use super::gpu_pairs::{FramePairs, FrameTable, MAX_RANGE_INSTANCES};
use super::Picker;
use crate::draw::PickDraw;
use crate::error::PickError;
use crate::gpu_plan::layout::{bit_words, groups, PlanLayout};
use crate::gpu_plan::record::{CullInput, TablePairs};
use crate::gpu_plan::table::DrawTable;
use crate::gpu_plan::{plannable, CullDispatch};
use crate::handoff::TABLE_SNAPSHOT_BASE;
use crate::host::config::Planner;
use crate::plan::Planned;
use crate::request::PickRequest;
use std::sync::{Arc, Weak};

/// What a frame's plans have claimed of the GPU plan's bounds so far (pairs and survivor bit
/// words, query by query): a query whose table groups would pass them is planned on the CPU
/// instead (the CPU path), rather than left to draw its groups whole. An estimate of what
/// `FramePairs::collect` takes: it counts a plan before occlusion and chunk cuts shrink it,
/// and a rectangle's plan and tile ranges not as `collect` splits them. `collect` enforces
/// the bounds; a miss here only costs a group drawn whole.
pub(super) struct PairBudget {
    left: (u64, u64),
    planner: Planner,
}

impl PairBudget {
    pub fn new(layout: PlanLayout, planner: Planner) -> Self {
        PairBudget { left: (u64::from(layout.pairs), u64::from(layout.bit_words)), planner }
    }

    /// Claims the pairs `planned` (one query's or tile's plan) takes; false, claiming
    /// nothing, when it has table groups and they would pass what is left. (An estimate: a
    /// query it lets through that `collect` cannot fit still draws its groups whole.)
    pub fn claim(&mut self, planned: Planned<'_>, draws: &[PickDraw]) -> bool {
        let mut need = (0u64, 0u64);
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
        if planned.entries.iter().any(|e| e.table) && (need.0 > self.left.0 || need.1 > self.left.1) {
            return false;
        }
        self.left = (self.left.0.saturating_sub(need.0), self.left.1.saturating_sub(need.1));
        true
    }
}

/// The table of the shared list last recorded, or that it has none.
pub(super) struct CachedTable {
    list: Weak<[PickDraw]>,
    table: Option<Arc<DrawTable>>,
}

impl Picker {
    /// The table `request` over `draws` plans with, if any: under `Planner::Gpu`, where the
    /// host enabled `shaderFloat64` and batching, for requests without ignore rules or a
    /// filter (a table holds every pickable draw), and without same-frame GPU results (their
    /// rows name the draws a frame recorded). Built once per list; none for a list with more
    /// plain draws than `PickerConfig::gpu_plan_draws`.
    pub(super) fn table_for(&mut self, request: &PickRequest<'_>, draws: &Arc<[PickDraw]>) -> Result<Option<Arc<DrawTable>>, PickError> {
        let usable =
            self.planner == Planner::Gpu && self.kit.batch_rows > 0 && self.gpu_results.is_none() && request.ignore.is_empty() && request.filter.is_none();
        let Some((set_layout, most)) = self.gpu_plan.as_ref().and_then(|k| k.table_kind()).filter(|_| usable) else { return Ok(None) };
        let cached = self.table.as_ref().filter(|c| c.list.upgrade().is_some_and(|d| Arc::ptr_eq(&d, draws)));
        if let Some(c) = cached {
            return Ok(c.table.clone());
        }
        // Drop the last list's table first: its memory goes before the new one's is taken
        // (frames in flight keep theirs alive).
        self.table = None;
        let group_rows = self.kit.max_draw_indirect_count;
        let table = DrawTable::new(&self.kit.memory, draws, self.slots.len(), set_layout, (group_rows, most))?.map(Arc::new);
        self.table = Some(CachedTable { list: Arc::downgrade(draws), table: table.clone() });
        Ok(table)
    }

    /// Bytes the cached table holds.
    pub(super) fn table_bytes(&self) -> u64 {
        self.table.as_ref().and_then(|c| c.table.as_ref()).map_or(0, |t| t.bytes())
    }
}

impl FramePairs {
    /// A dispatch per group of `table` (after `share` numbered the pairs, the table's last),
    /// as the cull pass records it: each writes its group's rows, which the pick passes read
    /// whether or not a pair culls the group, and culls its pairs.
    pub(super) fn push_table_dispatches(&mut self, table: FrameTable<'_>) {
        let first_table_pair = self.order.iter().position(|&k| self.candidates[k as usize].group.is_some()).unwrap_or(self.order.len());
        let mut pair = first_table_pair;
        for (g, group) in table.index.groups.iter().enumerate() {
            let first_pair = pair;
            while self.order.get(pair).is_some_and(|&k| self.candidates[k as usize].group == Some(g as u32)) {
                pair += 1;
            }
            let (first_group, count) = groups(group.first_row, group.rows);
            let dispatch =
                CullDispatch { draw: group.draw, table: true, first_pair: first_pair as u32, pairs: (pair - first_pair) as u32, first_group, groups: count };
            let words = [group.first_row, group.rows, TABLE_SNAPSHOT_BASE, 0];
            self.inputs.push(CullInput { dispatch, set: table.set, words, last_word: table.vp_word });
        }
        let count = (self.order.len() - first_table_pair) as u32;
        let words = (table.starts_word, table.occluders_word);
        self.table = Some(TablePairs { first: first_table_pair as u32, count, rows: table.rows, set: table.set, words });
    }
}
