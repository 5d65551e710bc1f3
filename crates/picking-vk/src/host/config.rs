//! How a picker is set up, chosen once at creation.

use crate::error::Requirement;
use crate::host::features::{detail_requirements, PickFeatures, PickSupport};

/// Whether the picker should add the detail attachment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum DetailMode {
    /// Basic picking only.
    #[default]
    Off,
    /// Add the detail attachment when the host enabled [`crate::PickFeatures::DETAIL`];
    /// [`crate::Picker::detail_status`] says why not otherwise.
    IfEnabled,
    /// Add the detail attachment, or fail creation with [`crate::PickError::Unsupported`].
    Required,
}

/// Whether detail picking runs, and if not, why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DetailStatus {
    /// Results carry [`crate::results::HitDetail`].
    Active,
    /// The configuration asked for basic picking.
    NotRequested,
    /// Asked for, but the device or the host's device creation lacks these.
    Unavailable {
        /// Every unmet requirement.
        missing: Vec<Requirement>,
    },
}

impl DetailStatus {
    /// Whether detail picking runs, from the configuration and what the host enabled.
    pub(crate) fn resolve(mode: DetailMode, support: &PickSupport, enabled: PickFeatures) -> DetailStatus {
        if mode == DetailMode::Off {
            return DetailStatus::NotRequested;
        }
        let offered = support.missing(PickFeatures::DETAIL);
        if !offered.is_empty() {
            return DetailStatus::Unavailable { missing: offered };
        }
        if !enabled.contains(PickFeatures::DETAIL) {
            // Offered but not enabled: name what the host's device creation must add.
            return DetailStatus::Unavailable { missing: detail_requirements() };
        }
        DetailStatus::Active
    }
}

/// The most frames in flight a picker takes (each has its own readback slot).
pub const MAX_FRAMES_IN_FLIGHT: usize = 1024;

/// The most rectangle tiles one query set may plan: a set's rectangles are drawn
/// [`PickerConfig::rect_tile`] at a time, each tile planned on the CPU.
pub const MAX_RECT_TILES: u64 = 65_536;

/// How the picker is set up. Build it from `Default` with the `with_*` setters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PickerConfig {
    /// Frames the host records ahead of the GPU: one readback slot each (default 2, at most
    /// [`crate::config::MAX_FRAMES_IN_FLIGHT`]).
    pub frames_in_flight: usize,
    /// Whether to add the detail attachment (default off).
    pub detail: DetailMode,
    /// Skip draws and instances whose bounds the pick ray misses (on by default; results are
    /// identical either way, only the cost differs).
    pub culling: bool,
    /// Measure the pick pass with timestamp queries (`PickResult::stats.gpu_time_ns`).
    pub timestamps: bool,
    /// Rows of per-draw data each slot holds for batched recording, when the host enabled
    /// [`crate::PickFeatures::BATCHING`]: runs of non-instanced draws that share their buffers
    /// become one indirect draw. Draws past this many in a pick are recorded one by one; 0
    /// turns batching off. Results are identical either way. Each row takes 100 bytes per slot;
    /// the default (512) holds about 32 draws for each of 16 point or radius queries.
    pub batch_rows: u32,
    /// Queries a frame's query set may hold ([`crate::Picker::record`]; default 16; 0 is
    /// taken as 1).
    pub max_queries: u32,
    /// Largest pick radius in pixels (default 8). Every point or radius query has a cell of
    /// `(2 * max_radius + 1)²` pixels in the pass's targets and the staging slot.
    pub max_radius: u32,
    /// The rectangle tile: rectangle queries are rendered in tiles of at most this many
    /// columns and rows (default 256 x 256), one target of this size shared by every slot.
    /// Larger rectangles take one pass per tile; a query set's rectangles may need at most
    /// [`MAX_RECT_TILES`] tiles.
    pub rect_tile: [u32; 2],
    /// Objects and instances the rectangle queries of one frame may record (default 4096):
    /// the size of the GPU table their per-object counts are reduced into, 12 bytes each.
    /// 0 (or a 0 in `rect_tile`) turns rectangles off: a rectangle query is then
    /// [`PickError::Capacity`](crate::PickError::Capacity) naming `RectEntries`. A table past
    /// the device's `maxStorageBufferRange` is refused by [`crate::Picker::new`].
    pub rect_entries: u32,
    /// Pipelines kept per pass flavour (default 64): one per vertex layout, instancing and
    /// depth convention in use. Past it, the least recently used one that no frame still
    /// running needs is destroyed (and built again if it is needed again).
    pub max_pipelines: usize,
    /// How the pick passes are begun (default: render passes).
    pub rendering: PassRendering,
    /// Also write each frame's results into a buffer per slot that the host's shaders
    /// read later in the same command buffer (default off; see [`crate::gpu_results`]). Needs
    /// `max_radius` of at most 12: a radius query's disc is resolved by one workgroup.
    pub gpu_results: bool,
    /// Draws the point and radius queries of one frame may record when `gpu_results` is on
    /// (default 1024): the rows that give a hit its draw index and priority, 8 bytes each per
    /// slot (a GPU plan table's group a query meets takes two). A set that could record more
    /// is refused with [`crate::PickError::Capacity`].
    pub gpu_result_draws: u32,
    /// Which planner culls the draws of a query set (default [`Planner::Auto`]).
    pub planner: Planner,
    /// Pairs of a query region (a point, a radius disc, a rectangle tile) and an instance
    /// range of a GPU-planned draw that one frame may cull on the GPU (default 64, at most
    /// 65,535): 260 bytes each per slot. Pairs past it are drawn as the CPU planned them
    /// (unculled instances, same results).
    pub gpu_plan_pairs: u32,
    /// Indirect commands one frame's GPU-planned pairs may draw, shared equally among the
    /// frame's pairs (default 4,096; 20 bytes each per slot). A command draws a run of
    /// consecutive surviving instances. A pair whose runs overflow its share draws its whole
    /// range instead: the same results, less culled. A pair over a shared list's table first
    /// tries to draw its survivors from compacted copies of their rows (see `gpu_plan_rows`),
    /// a command per table run they meet. 1 to 2^26.
    pub gpu_plan_commands: u32,
    /// Instances one frame's GPU-planned pairs may test, summed over the pairs (default
    /// 262,144, at most 2^31): a survivor bit each, a summary bit per 64 and a survivor count
    /// (4 bytes) per 2,048, per slot (33 KiB by default), a pair counting the 64-instance
    /// groups its range meets (from the draw's first instance) and its summary bits and
    /// counts in whole words. Pairs past it are drawn as
    /// the CPU planned them.
    pub gpu_plan_instances: u32,
    /// Plain draws a shared list's GPU plan table may hold (default 131,072; 0: no tables).
    /// A table keeps 60 bytes a draw and a bit, and 52 bytes a run of consecutive draws that
    /// draw one mesh with one box (about 60 bytes a draw where draws share meshes, at most
    /// 112), and per mesh its occluder triangles (36 bytes each) or chunk boxes (24 bytes a
    /// 64 triangles), uploaded once. A list with more plain draws (or whose table would pass
    /// the device's `maxStorageBufferRange`, as the table is bound whole) is planned on the CPU
    /// (`Planner::Gpu`, or `Planner::Auto`'s larger sets, with
    /// `PickFeatures::GPU_DRAW_PLANNING` only).
    pub gpu_plan_draws: u32,
    /// Table rows one frame may draw (default 16,384, at most 2^22; 0: no tables): each
    /// frame composes the model-view-projection of every row of the groups its queries meet
    /// into 80-byte rows of a buffer per slot of this size, with a 4-byte near key a row, an
    /// 80-byte span row per command of `gpu_plan_commands` (at most 65,536), and as many
    /// 80-byte compacted rows as rows (2.88 MiB a slot by default), sized once, never by the
    /// scene (under `Planner::Auto`, once its first set takes a table). No group holds more
    /// rows; a query whose groups would pass what the frame's earlier queries left is planned
    /// on the CPU. The compacted rows hold copies of the
    /// surviving rows of pairs whose runs pass their commands, taken by need; a pair that
    /// finds too few left draws its group's rows whole (the same results). At most 2^22; a
    /// slot's rows buffer past the device's `maxStorageBufferRange` is refused by
    /// [`crate::Picker::new`] where the device can plan tables.
    pub gpu_plan_rows: u32,
}

/// Which planner decides what a query set draws. Results are the same with every planner
/// (and with culling off): only the cost differs. Needs [`PickerConfig::culling`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Planner {
    /// The CPU culls what it knows (draw bounds, CPU instance transforms, chunks, occlusion);
    /// instanced draws whose transforms only the GPU knows are drawn whole.
    Cpu,
    /// The CPU plans, and a compute pass culls the instances of draws whose transforms it
    /// may read as a storage buffer (`InstanceBinding::StorageBuffer` or
    /// `VertexAndStorageBuffer`) and that the CPU cannot cull (no CPU copy of their
    /// transforms), where the device allows it (`multiDrawIndirect`,
    /// `drawIndirectFirstInstance`, `drawIndirectCount` enabled); otherwise as `Cpu`. With
    /// [`crate::PickFeatures::GPU_DRAW_PLANNING`] it also plans a shared list's plain draws
    /// by the list's table, as `Gpu` does, where the table costs less CPU and GPU time
    /// together: over a list of at least 100 table rows, for a set of at least 8 point and
    /// radius queries whose count times the rows reaches 2^15 (8 at 4,096 rows), or whose
    /// rectangles' pixels in the view times the rows reach 2^25 with at least 8,192 pixels a
    /// rectangle (32,768 with [`PickerConfig::gpu_results`]; a 128x64 rectangle at 4,096
    /// rows; README, "Which planner"). Its table passes are built for the first such set (or
    /// by [`crate::Picker::warm_up`]).
    #[default]
    Auto,
    /// As `Auto`, and such instances with a CPU copy of their transforms are culled on the
    /// GPU too; creation fails with [`crate::PickError::Unsupported`] without the
    /// features `Auto` needs. With [`crate::PickFeatures::GPU_DRAW_PLANNING`] also a shared
    /// list's plain draws, for every point, radius query and rectangle, by a table built
    /// once per list (README, "GPU planning").
    Gpu,
}

/// How the picker begins its passes, chosen when it is created. Results are the same either way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PassRendering {
    /// `VkRenderPass` and `VkFramebuffer` objects of the picker's own (Vulkan 1.0).
    #[default]
    RenderPass,
    /// Dynamic rendering (`vkCmdBeginRendering`), for engines without render passes: the
    /// picker then makes no render pass or framebuffer, and states its dependencies as
    /// pipeline barriers. Needs [`crate::PickFeatures::DYNAMIC_RENDERING`]: core on
    /// Vulkan 1.3, `VK_KHR_dynamic_rendering` on 1.2.
    Dynamic,
}

impl Default for PickerConfig {
    fn default() -> Self {
        PickerConfig {
            frames_in_flight: 2,
            detail: DetailMode::Off,
            culling: true,
            timestamps: false,
            batch_rows: 512,
            max_queries: 16,
            max_radius: 8,
            rect_tile: [256, 256],
            rect_entries: 4096,
            max_pipelines: 64,
            rendering: PassRendering::RenderPass,
            gpu_results: false,
            gpu_result_draws: 1024,
            planner: Planner::Auto,
            gpu_plan_pairs: 64,
            gpu_plan_commands: 4096,
            gpu_plan_instances: 1 << 18,
            gpu_plan_draws: 1 << 17,
            gpu_plan_rows: 1 << 14,
        }
    }
}

impl PickerConfig {
    /// Sets [`PickerConfig::frames_in_flight`].
    pub fn with_frames_in_flight(mut self, frames: usize) -> Self {
        self.frames_in_flight = frames;
        self
    }

    /// Sets [`PickerConfig::detail`].
    pub fn with_detail(mut self, detail: DetailMode) -> Self {
        self.detail = detail;
        self
    }

    /// Sets [`PickerConfig::rendering`].
    pub fn with_rendering(mut self, rendering: PassRendering) -> Self {
        self.rendering = rendering;
        self
    }

    /// Sets [`PickerConfig::culling`].
    pub fn with_culling(mut self, culling: bool) -> Self {
        self.culling = culling;
        self
    }

    /// Sets [`PickerConfig::timestamps`].
    pub fn with_timestamps(mut self, timestamps: bool) -> Self {
        self.timestamps = timestamps;
        self
    }

    /// Sets [`PickerConfig::batch_rows`].
    pub fn with_batch_rows(mut self, rows: u32) -> Self {
        self.batch_rows = rows;
        self
    }

    /// Sets [`PickerConfig::max_queries`].
    pub fn with_max_queries(mut self, queries: u32) -> Self {
        self.max_queries = queries;
        self
    }

    /// Sets [`PickerConfig::max_radius`].
    pub fn with_max_radius(mut self, radius: u32) -> Self {
        self.max_radius = radius;
        self
    }

    /// Sets [`PickerConfig::rect_tile`].
    pub fn with_rect_tile(mut self, columns: u32, rows: u32) -> Self {
        self.rect_tile = [columns, rows];
        self
    }

    /// Sets [`PickerConfig::max_pipelines`].
    pub fn with_max_pipelines(mut self, max: usize) -> Self {
        self.max_pipelines = max;
        self
    }

    /// Sets [`PickerConfig::gpu_results`].
    pub fn with_gpu_results(mut self, on: bool) -> Self {
        self.gpu_results = on;
        self
    }

    /// Sets [`PickerConfig::gpu_result_draws`].
    pub fn with_gpu_result_draws(mut self, draws: u32) -> Self {
        self.gpu_result_draws = draws;
        self
    }

    /// Sets [`PickerConfig::planner`].
    pub fn with_planner(mut self, planner: Planner) -> Self {
        self.planner = planner;
        self
    }

    /// Sets [`PickerConfig::gpu_plan_pairs`] and [`PickerConfig::gpu_plan_commands`].
    pub fn with_gpu_plan_capacity(mut self, pairs: u32, commands: u32) -> Self {
        self.gpu_plan_pairs = pairs;
        self.gpu_plan_commands = commands;
        self
    }

    /// Sets [`PickerConfig::gpu_plan_instances`].
    pub fn with_gpu_plan_instances(mut self, instances: u32) -> Self {
        self.gpu_plan_instances = instances;
        self
    }

    /// Sets [`PickerConfig::gpu_plan_draws`].
    pub fn with_gpu_plan_draws(mut self, draws: u32) -> Self {
        self.gpu_plan_draws = draws;
        self
    }

    /// Sets [`PickerConfig::gpu_plan_rows`].
    pub fn with_gpu_plan_rows(mut self, rows: u32) -> Self {
        self.gpu_plan_rows = rows;
        self
    }

    /// Sets [`PickerConfig::rect_entries`].
    pub fn with_rect_entries(mut self, entries: u32) -> Self {
        self.rect_entries = entries;
        self
    }
}
