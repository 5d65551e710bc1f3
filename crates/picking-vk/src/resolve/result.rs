//! What a resolved pick reports.

use crate::draw::ContributorHit;
use crate::handoff::PassStats;
use crate::id::ObjectId;
use crate::request::camera::Ray;
use crate::resolve::detail::HitDetail;
use glam::{DVec3, UVec2};

/// What lies under the picked pixel.
#[derive(Clone, Debug, PartialEq)]
pub struct PickHit {
    /// The object hit.
    pub id: ObjectId,
    /// Instance index within its draw: `gl_InstanceIndex` minus the draw's
    /// [`Instances::first`](crate::draw::Instances::first) (instance `i` reads element
    /// `first + i`). `None` for a draw without instances. A draw with host indirect commands
    /// always reports one: `gl_InstanceIndex` (each command's `firstInstance` plus the
    /// instance) minus `Instances::first`, or 0 for `first` without an instance buffer.
    /// Rectangle merging, [`Snap::Thin`](crate::Snap::Thin) and the GPU results tell objects
    /// apart by (`id`, `instance`): draws that share an ID share its instance numbers.
    pub instance: Option<u32>,
    /// The draw's position in the list the host handed to `record`, whatever was culled.
    pub draw_index: u32,
    /// The draw's [`crate::PickDraw::tag`].
    pub tag: u64,
    /// The depth attachment's value at the pixel after the pass: the winning fragment's
    /// depth as the draws' depth tests, compare ops and depth bias left it, in the viewport's
    /// `min_depth..max_depth`. Under [`DepthConvention::Reverse`](crate::DepthConvention)
    /// larger is nearer. Clamped to [0, 1]; a NaN (a vertex at clip w = 0) reads as the far
    /// depth.
    pub depth: f32,
    /// World-space point: the pixel centre unprojected at `depth` through the inverse
    /// view-projection, in f64. Infinite in every component where that fails (a depth on
    /// an infinite far plane).
    pub world: DVec3,
    /// Distance from the camera's eye (the translation of the inverse view matrix) to
    /// `world`; infinite with it. For an orthographic camera this is not a distance along
    /// the ray.
    pub distance: f64,
    /// Present when the picker runs with the detail attachment (never for contributors).
    pub detail: Option<HitDetail>,
    /// Set when a contributor drew the hit (then `draw_index` is `u32::MAX`, `tag` 0, and
    /// `instance` the contributor's own).
    pub contributor: Option<ContributorHit>,
}

/// Statistics of the frame that produced a result.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PickStats {
    /// What the frame's passes recorded, skipped and culled.
    pub pass: PassStats,
    /// GPU time from the frame's first pick command to its last (every pass and copy of the
    /// set), with `PickerConfig::timestamps`.
    pub gpu_time_ns: Option<f64>,
    /// What the GPU planner did in this frame; `None` when it planned nothing (see
    /// [`crate::config::Planner`]).
    pub gpu_plan: Option<GpuPlanStats>,
    /// Of `gpu_time_ns`, the part until the GPU planner's dispatches were done (its cull and
    /// finishing passes and their barrier), with `PickerConfig::timestamps`, when it planned.
    pub gpu_plan_time_ns: Option<f64>,
}

/// What a frame's GPU plan culled, read back with its results.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuPlanStats {
    /// Pairs the cull pass took: a region (a point's pixel, a radius query's disc square, a
    /// rectangle's tile) and an instance range or a shared list's table group. For table
    /// pairs, `instances_tested` and `survivors` count table rows.
    pub ranges: u64,
    /// Instances it tested, summed over the pairs.
    pub instances_tested: u64,
    /// Instances whose box met their pair's region (drawn), summed over the pairs.
    pub survivors: u64,
    /// Of a shared list's table rows whose box met a point's pixel, those dropped behind a
    /// sure hit (occlusion on the GPU; not counted in `survivors`), summed over the pairs.
    pub occluded: u64,
    /// Indirect commands that drew them: one per run of consecutive survivors of a pair, or
    /// one per walked pair with survivors (see `walked`).
    pub commands: u64,
    /// Of `ranges`, the pairs of a point or radius query over instances the pick reads from
    /// a storage buffer (no hooks, no deformation) drawn by one command whose vertex shader
    /// finds each surviving instance in the pair's survivor bits: no finishing pass runs for
    /// them, and they never fall back.
    pub walked: u64,
    /// Pairs over a shared list's table whose runs of survivors overflowed their share of
    /// [`PickerConfig::gpu_plan_commands`](crate::PickerConfig::gpu_plan_commands) and drew
    /// their survivors from compacted copies of their rows instead, a command per table run
    /// (typically per mesh) they meet (not counted in `fallbacks`).
    pub compacted: u64,
    /// Pairs whose runs of survivors overflowed their share of
    /// [`PickerConfig::gpu_plan_commands`](crate::PickerConfig::gpu_plan_commands) and that
    /// could not compact them (instances; or too few compacted rows left, see
    /// [`PickerConfig::gpu_plan_rows`](crate::PickerConfig::gpu_plan_rows)): each drew its
    /// whole range as well (the same results, less culled).
    pub fallbacks: u64,
}

/// The answer for one frame's pick.
#[derive(Clone, Debug, PartialEq)]
pub struct PickResult {
    /// The statistics of the whole frame this result came from: each query of a set
    /// carries a copy of [`FrameResults::stats`](crate::FrameResults::stats).
    pub stats: PickStats,
    /// The frame number `Picker::record` returned in its ticket.
    pub frame: u64,
    /// The framebuffer pixel that was picked: absolute framebuffer coordinates (the
    /// viewport's offset included), origin top-left, y down, whatever the viewport's height
    /// sign. For a radius query, the chosen pixel (the cursor's on a miss).
    pub pixel: UVec2,
    /// The ray through `pixel`'s centre (world space, from the near plane, direction
    /// normalized); `None` only for degenerate cameras.
    pub ray: Option<Ray>,
    /// `None` for a miss.
    pub hit: Option<PickHit>,
}

impl PickResult {
    /// The object hit, if any.
    pub fn id(&self) -> Option<ObjectId> {
        self.hit.as_ref().map(|h| h.id)
    }
}
