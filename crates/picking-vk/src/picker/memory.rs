//! [`PickMemory`]: what the picker holds, by part, as the driver sized it.

use super::Picker;
use crate::gpu_plan::GpuPlanKit;
use crate::gpu_results::GpuResultsKit;
use crate::pass::rect::RectKit;
use crate::record::batch::DrawBatchBuffer;

/// Pick memory, in bytes as the driver sized it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PickMemory {
    /// The attachments of the point and radius queries: a cell per query.
    pub attachments: u64,
    /// The rectangle tile's attachments and the rectangle table.
    pub rectangles: u64,
    /// The staging ring, a slot per frame in flight.
    pub staging: u64,
    /// The batch buffers' rows and indirect commands: sized once by
    /// [`PickerConfig::batch_rows`](crate::PickerConfig::batch_rows), never by the window.
    pub draw_batches: u64,
    /// The GPU results' buffers: per slot the results and their upload buffer, sized by the
    /// configuration (0 when
    /// [`PickerConfig::gpu_results`](crate::PickerConfig::gpu_results) is off).
    pub gpu_results: u64,
    /// The GPU planner's buffers: one per slot, sized by the configuration
    /// ([`PickerConfig::gpu_plan_pairs`](crate::PickerConfig::gpu_plan_pairs),
    /// [`gpu_plan_commands`](crate::PickerConfig::gpu_plan_commands),
    /// [`gpu_plan_instances`](crate::PickerConfig::gpu_plan_instances) and, where shared
    /// lists' tables are planned, [`gpu_plan_rows`](crate::PickerConfig::gpu_plan_rows):
    /// under `Planner::Auto` from its first set that takes a table); 0
    /// without a GPU planner. Nothing per instance: the planner reads the host's own instance
    /// buffers. Per draw only the table of the shared list last recorded (its rows and runs:
    /// about 60 bytes a draw where draws share meshes).
    pub planner: u64,
}

impl PickMemory {
    /// Everything picking holds (saturating: the fields are public, so a host may build one).
    pub fn total(&self) -> u64 {
        [self.rectangles, self.staging, self.draw_batches, self.gpu_results, self.planner].into_iter().fold(self.attachments, u64::saturating_add)
    }
}

impl Picker {
    /// Memory held for picking; independent of the window size.
    pub fn memory(&self) -> PickMemory {
        PickMemory {
            attachments: self.targets.bytes(),
            rectangles: self.rect.as_ref().map_or(0, RectKit::bytes),
            staging: self.staging.bytes(),
            draw_batches: self.slots.iter().filter_map(|s| s.batch.as_ref()).map(DrawBatchBuffer::bytes).sum(),
            gpu_results: self.gpu_results.as_ref().map_or(0, GpuResultsKit::bytes),
            planner: self.gpu_plan.as_ref().map_or(0, GpuPlanKit::bytes) + self.table_bytes(),
        }
    }
}
