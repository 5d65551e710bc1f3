//! The record-to-resolve hand-off: what recording a pass leaves behind for resolving its
//! texels once the frame completes (a snapshot per recorded draw, the pass's statistics), and
//! the raw texels read back.

use crate::draw::deform::SkinReads;
use crate::draw::{DeformPose, MeshGeometry, PickDraw, Topology, Triangles};
use crate::id::ObjectId;
use glam::Mat4;
use std::sync::Arc;

/// The snapshot index of a GPU plan table's row 0 (`gpu_plan::table`): the rows the cull pass
/// writes carry `base + row`, far above any frame's recorded snapshots.
pub(crate) const TABLE_SNAPSHOT_BASE: u32 = 1 << 30;

/// A frame's draw snapshots, by the index its pass wrote: those it recorded, then (from
/// [`TABLE_SNAPSHOT_BASE`]) the rows of the shared list's table it planned with.
#[derive(Clone, Copy, Default)]
pub(crate) struct Snapshots<'a> {
    pub recorded: &'a [DrawSnapshot],
    pub table: &'a [DrawSnapshot],
}

impl<'a> Snapshots<'a> {
    /// Only recorded snapshots.
    #[cfg(test)]
    pub fn recorded(recorded: &'a [DrawSnapshot]) -> Self {
        Snapshots { recorded, table: &[] }
    }

    /// The snapshot a pass wrote `index` for.
    pub fn get(&self, index: usize) -> Option<&'a DrawSnapshot> {
        match index.checked_sub(TABLE_SNAPSHOT_BASE as usize) {
            Some(row) => self.table.get(row),
            None => self.recorded.get(index),
        }
    }
}

/// What the picker remembers of a recorded draw until its frame resolves. Geometry is held by
/// `Arc`, so a result refers to the geometry as registered when it was recorded.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DrawSnapshot {
    pub id: ObjectId,
    /// The draw's position in the host's list, whatever was culled.
    pub draw_index: u32,
    /// The host's own value for the draw ([`PickDraw::tag`]).
    pub tag: u64,
    /// [`PickDraw::priority`] (0 for a contributor's draws).
    pub priority: i16,
    pub instanced: bool,
    pub model: Mat4,
    pub triangles: Triangles,
    pub topology: Topology,
    pub restart: bool,
    pub geometry: Option<Arc<MeshGeometry>>,
    pub instance_transforms: Option<Arc<[Mat4]>>,
    /// A world-adjust hook moved the draw's vertices.
    pub world_adjusted: bool,
    /// The host's indirect commands drew it (which elements is unknown to the CPU).
    pub indirect: bool,
    /// A deformed draw: its CPU pose (if given) and what its skin reads.
    pub deform: Option<(Option<Arc<DeformPose>>, SkinReads)>,
    /// A contributor's draws: its index in the request, and its ID range.
    pub contributor: Option<(usize, std::ops::Range<u64>)>,
    /// The draw's first triangle this recording drew (chunk culling draws runs of a draw's
    /// triangles, and the GPU's primitive index counts from each run's start).
    pub primitive_base: u32,
}

impl DrawSnapshot {
    pub fn of(draw: &PickDraw, draw_index: u32) -> Self {
        DrawSnapshot {
            id: draw.id,
            draw_index,
            tag: draw.tag,
            priority: draw.priority,
            // Indirect commands have instances whatever the draw says.
            instanced: draw.instances.is_some() || draw.indirect.is_some(),
            model: draw.model,
            triangles: draw.triangles,
            topology: draw.raster.topology,
            restart: draw.raster.primitive_restart,
            geometry: draw.geometry.clone(),
            instance_transforms: draw.instance_transforms.clone(),
            world_adjusted: draw.hooks.as_ref().is_some_and(|h| h.program.adjusts_world()),
            indirect: draw.indirect.is_some(),
            deform: draw.deformation.as_ref().map(|d| (d.pose.clone(), SkinReads::of(d.skin.as_ref()))),
            contributor: None,
            primitive_base: 0,
        }
    }

    /// The snapshot of a recording that draws the draw's triangles from `first` on.
    pub fn starting_at(self, first: u32) -> Self {
        DrawSnapshot { primitive_base: first, ..self }
    }

    /// What contributor `index` (of IDs `ids`) drew: instances are its own.
    pub fn contributor(index: usize, ids: std::ops::Range<u64>, id: ObjectId) -> Self {
        DrawSnapshot {
            id,
            draw_index: u32::MAX,
            tag: 0,
            priority: 0,
            instanced: true,
            model: Mat4::IDENTITY,
            triangles: Triangles::NonIndexed { first_vertex: 0, vertex_count: 0 },
            topology: Topology::TriangleList,
            restart: false,
            geometry: None,
            instance_transforms: None,
            world_adjusted: false,
            indirect: false,
            deform: None,
            contributor: Some((index, ids)),
            primitive_base: 0,
        }
    }

    /// Object-to-world of one instance; `None` for an instanced draw without CPU transforms.
    pub fn world(&self, instance: u32) -> Option<Mat4> {
        if !self.instanced {
            return Some(self.model);
        }
        let t = self.instance_transforms.as_ref()?.get(instance as usize)?;
        Some(self.model * *t)
    }
}

/// For rectangles: table entries `first_entry..first_entry + count` hold instances
/// `first_instance..first_instance + count` of the recorded draw `snapshot`; or, where
/// `snapshot` is a GPU plan table's row (from [`TABLE_SNAPSHOT_BASE`]), one row each from
/// that one on (a group's rows are its draws).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EntrySpan {
    pub first_entry: u32,
    pub count: u32,
    pub snapshot: u32,
    pub first_instance: u32,
}

impl EntrySpan {
    /// The snapshot of the span's `k`-th entry, and its instance (if instanced).
    pub fn entry<'a>(&self, draws: Snapshots<'a>, k: u32) -> Option<(&'a DrawSnapshot, Option<u32>)> {
        if self.snapshot >= TABLE_SNAPSHOT_BASE {
            let draw = draws.get(self.snapshot.checked_add(k)? as usize)?;
            return Some((draw, None));
        }
        let draw = draws.get(self.snapshot as usize)?;
        Some((draw, draw.instanced.then_some(self.first_instance + k)))
    }
}

/// What a recorded pass drew. For a query set, the counts are summed over its queries' plans
/// (a rectangle plans once over its whole area and once per tile), so they may exceed the
/// number of draws handed in. Counts are 64-bit and saturate: a set of 65,536 rectangle
/// tiles over millions of culled instances cannot overflow them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PassStats {
    /// Draws recorded into the pass.
    pub draws_recorded: u64,
    /// Draws left out by `pickable`, the filter or a whole-object ignore, and direct draws of
    /// no vertices, indices or instances (they draw nothing). With
    /// a shared list, a draw that the hierarchy already left out and that fails only the
    /// filter or an ignore rule counts as culled (finding out would cost O(draws)); unpickable
    /// draws count as skipped on both paths.
    pub draws_skipped: u64,
    /// Draws whose bounds the pick ray missed (culling on).
    pub draws_culled: u64,
    /// Instances of recorded draws whose bounds the pick ray missed.
    pub instances_culled: u64,
    /// Triangles of recorded draws left out by chunk culling: a large mesh draws only the
    /// runs of its triangles whose bounds the pick ray meets.
    pub triangles_culled: u64,
}

impl PassStats {
    /// Adds another plan's counts (saturating).
    pub(crate) fn add(&mut self, other: &PassStats) {
        self.draws_recorded = self.draws_recorded.saturating_add(other.draws_recorded);
        self.draws_skipped = self.draws_skipped.saturating_add(other.draws_skipped);
        self.draws_culled = self.draws_culled.saturating_add(other.draws_culled);
        self.instances_culled = self.instances_culled.saturating_add(other.instances_culled);
        self.triangles_culled = self.triangles_culled.saturating_add(other.triangles_culled);
    }
}

/// The raw values read back for one pixel.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Texels {
    /// The object ID's (low, high) words; 0 for nothing.
    pub id: [u32; 2],
    /// (index of the draw among those recorded, instance index).
    pub draw_instance: [u32; 2],
    /// Framebuffer depth.
    pub depth: f32,
    /// (primitive index, barycentric bits x3) when the detail attachment exists.
    pub detail: Option<[u32; 4]>,
}

#[cfg(test)]
mod tests {
    use super::PassStats;

    #[test]
    fn pass_statistics_sum_past_u32_and_saturate() {
        // 65,536 tiles, each culling 100,000 instances: 6.5e9, past u32::MAX.
        let tile = PassStats { instances_culled: 100_000, draws_culled: 70_000, ..PassStats::default() };
        let mut sum = PassStats::default();
        for _ in 0..65_536 {
            sum.add(&tile);
        }
        assert_eq!(sum.instances_culled, 6_553_600_000);
        assert_eq!(sum.draws_culled, 4_587_520_000);
        sum.add(&PassStats { triangles_culled: u64::MAX, draws_recorded: u64::MAX, ..PassStats::default() });
        sum.add(&PassStats { triangles_culled: 1, draws_recorded: 1, ..PassStats::default() });
        assert_eq!((sum.triangles_culled, sum.draws_recorded), (u64::MAX, u64::MAX));
    }
}
