//! A shared list's draw table: what GPU planning of its plain draws reads, uploaded once per
//! list (`DrawList::Shared`: the list cannot change while its `Arc` lives), never per frame.
//!
//! A table draw is a plain draw the CPU planner would cull by its box (no instances,
//! deformation or host indirect commands; an affine model; hooks allowed). Its row holds the
//! model's first three rows, the ID and its *run*: consecutive rows of one group that draw
//! the same triangles with the same local box and occluder mesh share a run, which holds
//! those once (typically a run per mesh), and whose command draws the run's rows as
//! instances of the batched pipeline. Consecutive table draws that share their bindings and
//! priority form a group: the unit the cull pass culls against a query region, and the pick
//! pass draws with one count draw. Each frame the cull pass composes the
//! model-view-projection of every row of the groups the frame's queries meet into the
//! group's window of the slot's rows (in f64, exactly as the CPU would; a hooked group's
//! rows carry the model), so the rows never pass through the CPU.

use super::chunk_boxes::chunk_boxes;
use super::occluders::occluders;
use super::table_words::{row_words, runs, RowMeshes, TABLE_ROW_WORDS};
use super::DrawsPasses;
use crate::draw::Culling;
use crate::draw::{Aabb, PickDraw, Triangles};
use crate::error::{PickError, Requirement};
use crate::gpu::{GpuBuffer, Memory, Owned};
use crate::handoff::DrawSnapshot;
use crate::id::ObjectId;
use crate::ignore::{Ignore, PickFilter};
use crate::pass::compute::destroy_pool;
use crate::pass::pipeline_key::PipelineKey;
use crate::request::camera::DepthConvention;
use ash::vk;
use gpu_allocator::MemoryLocation;
use std::sync::Arc;

/// The fewest draws a group takes (see [`TableIndex::of`]).
pub(crate) const MIN_GROUP_ROWS: usize = 16;
/// The most rows of one group: its cull dispatch stays within 65,535 workgroups.
const MAX_GROUP_ROWS: u32 = (super::MAX_DISPATCH_GROUPS - 1) * super::CULL_GROUP;

/// Whether `draw` belongs in a table: a plain draw (hooked or not) that draws something,
/// pickable, with a box that bounds it under an affine model (a world-adjusting hook's too:
/// `culling_bounds`).
pub(crate) fn table_draw(draw: &PickDraw) -> bool {
    draw.pickable
        && draw.instances.is_none()
        && draw.indirect.is_none()
        && draw.deformation.is_none()
        && draw.triangles.element_count() > 0
        && draw.culling_bounds().is_some()
        && draw.model.row(3) == glam::Vec4::W
        && draw.model.is_finite()
}

/// Consecutive table draws (in the list's order) that share their bindings and pipeline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct TableGroup {
    /// The group's first draw (its bindings and pipeline are every row's).
    pub draw: u32,
    pub first_row: u32,
    pub rows: u32,
    /// The cull padding in pixels: two, plus the reach of lines or points.
    pub pad: f32,
    /// Its runs of rows that draw the same (`run_commands`): the first, and how many. Drawn
    /// whole, the group takes one command a run, not a command a row.
    pub first_run: u32,
    pub runs: u32,
    /// A world box around every row's box (each transformed in f64 and rounded outwards),
    /// if finite: a query whose ray misses it plans none of the group's rows.
    pub world: Option<Aabb>,
    /// Whether a row has an occluder mesh (`occluders`): without one, and without a bound
    /// from the CPU's own sure hit, the GPU's occlusion can drop nothing, and is skipped.
    pub occluders: bool,
    /// Whether a row has chunk boxes (`chunk_boxes`): its pairs' survivors are drawn by the
    /// chunks that meet their regions.
    pub chunked: bool,
    /// Hooked draws (one program, attribute stream and set: the group's first draw's). Their
    /// rows carry the model, as the hooked batched shaders read it (they work in world
    /// space), and no near key: the group's rows are never dropped by the GPU's occlusion.
    pub hooked: bool,
}

/// What planning reads of a table: which draws the GPU plans, and the groups.
#[derive(Default)]
pub(crate) struct TableIndex {
    /// Per draw of the list: whether a row holds it.
    pub in_table: Vec<bool>,
    pub groups: Vec<TableGroup>,
}

/// What makes consecutive draws one group: the pipeline, the buffers bound, a hooked draw's
/// attribute stream and set, and the priority (GPU results name a row's draw and priority by
/// its group).
type GroupKey = ([PipelineKey; 2], vk::Buffer, u64, Option<(vk::Buffer, u64, vk::IndexType)>, Option<HookBindings>, i16);
type HookBindings = (Option<(vk::Buffer, u64)>, vk::DescriptorSet);

/// A draw's [`GroupKey`].
fn group_key(draw: &PickDraw) -> GroupKey {
    // A draw's pipeline depends on the request's depth convention and culling where its
    // raster state names none: draws group only if their keys agree under two requests that
    // differ in both (a draw naming what the other leaves to the request then differs).
    let back = Culling::new(vk::CullModeFlags::BACK, vk::FrontFace::CLOCKWISE);
    let key = [PipelineKey::of(draw, true, DepthConvention::Standard, Culling::NONE), PipelineKey::of(draw, true, DepthConvention::Reverse, back)];
    let indices = match draw.triangles {
        Triangles::Indexed { range, width, .. } => Some((range.buffer, range.offset, width.vk())),
        Triangles::NonIndexed { .. } => None,
    };
    let hooks = draw.hooks.as_ref().map(|h| (h.attribute.map(|a| (a.range.buffer, a.range.offset)), h.descriptor_set));
    (key, draw.positions.range.buffer, draw.positions.range.offset, indices, hooks, draw.priority)
}

impl TableIndex {
    /// Rows in the table.
    pub fn rows(&self) -> u32 {
        self.groups.last().map_or(0, |g| g.first_row + g.rows)
    }

    /// The index of the group whose first draw is `draw` (a plan's table entry names its
    /// group so).
    pub fn group_of(&self, draw: u32) -> Option<usize> {
        self.groups.binary_search_by_key(&draw, |g| g.draw).ok()
    }

    /// Rows for the table draws of `draws`, grouped; groups hold at most `max_rows` rows.
    /// Groups of fewer than [`MIN_GROUP_ROWS`] draws stay with the CPU planner: each group
    /// costs a dispatch a frame and a count draw a query, which only many draws repay.
    pub fn of(draws: &[PickDraw], max_rows: u32) -> (Self, Vec<u32>) {
        let max_rows = max_rows.clamp(1, MAX_GROUP_ROWS);
        let mut index = TableIndex { in_table: vec![false; draws.len()], groups: vec![] };
        let mut rows = vec![];
        let mut i = 0;
        while i < draws.len() {
            if !table_draw(&draws[i]) {
                i += 1;
                continue;
            }
            // The run of table draws from `i` that share its bindings, up to `max_rows`.
            let key = group_key(&draws[i]);
            let end = (i + 1..draws.len().min(i + max_rows as usize))
                .find(|&j| !table_draw(&draws[j]) || group_key(&draws[j]) != key)
                .unwrap_or(draws.len().min(i + max_rows as usize));
            if end - i >= MIN_GROUP_ROWS {
                let pad = draws[i..end].iter().map(|d| 2.0 + crate::draw::reach_px(d)).fold(2.0, f32::max);
                let (first_row, rows_count) = (rows.len() as u32, (end - i) as u32);
                let world = world_box(&draws[i..end]);
                let hooked = draws[i].hooks.is_some();
                index.groups.push(TableGroup {
                    draw: i as u32,
                    first_row,
                    rows: rows_count,
                    pad,
                    first_run: 0,
                    runs: 0,
                    world,
                    occluders: false,
                    chunked: false,
                    hooked,
                });
                rows.extend(i as u32..end as u32);
                index.in_table[i..end].fill(true);
            }
            i = end;
        }
        (index, rows)
    }
}

/// The world box around `draws`' culling boxes under their models, if finite.
fn world_box(draws: &[PickDraw]) -> Option<Aabb> {
    let boxes = draws.iter().map(|d| Some(d.culling_bounds()?.transformed(&d.model)));
    let world = boxes.reduce(|a, b| Some(a?.union(&b?))).flatten()?;
    (world.min.is_finite() && world.max.is_finite()).then_some(world)
}

/// A shared list's table: its index, the rows' snapshots, the static buffer (rows, run-start
/// bits, runs, occluders) and per frame-in-flight slot the set that binds it with the slot's
/// rows (`DrawsPasses::rows`, which the cull pass writes).
pub(crate) struct DrawTable {
    pub index: TableIndex,
    pub snapshots: Arc<[DrawSnapshot]>,
    statics: GpuBuffer,
    /// The word of the occluder meshes' directory in the static buffer (`occluders`).
    occluders_word: u32,
    /// Per slot: its rows and the set binding the statics and them (`GpuPlanKit`'s table set
    /// layout).
    frames: Vec<(vk::Buffer, vk::DescriptorSet)>,
    /// (ID, row) of every row, sorted: the rows an ignore rule names.
    by_id: Vec<(u64, u32)>,
    _pool: Owned<vk::DescriptorPool>,
}

impl DrawTable {
    /// Builds the table of `draws` (`None` when none of them is a table draw, or more than
    /// `passes` allow), groups of at most `group_rows` (and of at most the rows a frame may
    /// draw): uploads the rows, the run-start bits, the runs and the occluders, and binds
    /// them with each slot's rows.
    pub fn new(memory: &Memory, draws: &Arc<[PickDraw]>, passes: &DrawsPasses, group_rows: u32) -> Result<Option<Self>, PickError> {
        let (mut index, rows) = TableIndex::of(draws, group_rows.min(passes.limits.frame_rows));
        if rows.is_empty() || rows.len() > passes.limits.draws as usize {
            return Ok(None);
        }
        let occluders = occluders(draws, &rows);
        // The chunk boxes follow the occluder meshes; rows name them from the directory.
        let mut chunks = chunk_boxes(draws, &rows);
        let after_occluders = occluders.words.len() as u32;
        chunks.of_row.iter_mut().filter(|at| **at != 0).for_each(|at| *at += after_occluders);
        let meshes = RowMeshes { occluders: &occluders.of_row, chunks: &chunks.of_row };
        let (run_of, runs) = place_runs(&mut index.groups, draws, &rows, meshes);
        let mut words = row_words(draws, &rows, &run_of);
        words.extend(runs);
        let occluders_word = words.len() as u32;
        words.extend(occluders.words);
        words.extend(chunks.words);
        // Bound whole as one storage buffer: a table past the device's range is not built
        // (the lists' sets are planned on the CPU, with the same results).
        if 4 * words.len() as u64 > u64::from(passes.limits.storage_range) {
            return Ok(None);
        }
        let statics = upload_statics(memory, &words)?;
        let snapshots: Arc<[DrawSnapshot]> = rows.iter().map(|&d| DrawSnapshot::of(&draws[d as usize], d)).collect();
        let device = &memory.device;
        let count = passes.rows.len() as u32;
        let sizes = [vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: 2 * count }];
        // SAFETY: a valid create info on a live device; owned right away.
        let pool = unsafe {
            let handle = device.create_descriptor_pool(&vk::DescriptorPoolCreateInfo::default().max_sets(count).pool_sizes(&sizes), None)?;
            Owned::new(device, handle, destroy_pool)
        };
        let layouts = vec![passes.set_layout.handle; passes.rows.len()];
        // SAFETY: the pool has room for one set per slot.
        let sets = unsafe { device.allocate_descriptor_sets(&vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool.handle).set_layouts(&layouts)) }?;
        let mut frames = Vec::with_capacity(sets.len());
        for (set, rows) in sets.into_iter().zip(&passes.rows) {
            let infos = [statics.buffer, rows.buffer].map(|buffer| [vk::DescriptorBufferInfo { buffer, offset: 0, range: vk::WHOLE_SIZE }]);
            let writes = [0, 1].map(|b| {
                vk::WriteDescriptorSet::default()
                    .dst_set(set)
                    .dst_binding(b)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(&infos[b as usize])
            });
            // SAFETY: the set and buffers are live; nothing uses the set yet.
            unsafe { device.update_descriptor_sets(&writes, &[]) };
            frames.push((rows.buffer, set));
        }
        let mut by_id: Vec<(u64, u32)> = rows.iter().enumerate().map(|(r, &d)| (draws[d as usize].id.get(), r as u32)).collect();
        by_id.sort_unstable();
        Ok(Some(DrawTable { index, snapshots, statics, occluders_word, frames, by_id, _pool: pool }))
    }

    /// Slot `slot`'s rows buffer and set.
    pub fn frame(&self, slot: usize) -> Option<(vk::Buffer, vk::DescriptorSet)> {
        self.frames.get(slot).copied()
    }

    /// The static buffer (its commands are drawn directly where a group is not culled).
    pub fn statics(&self) -> vk::Buffer {
        self.statics.buffer
    }

    /// The word of the first run-start bit word in the static buffer.
    pub fn starts_word(&self) -> u32 {
        self.index.rows() * TABLE_ROW_WORDS
    }

    /// The byte offset of the first run (`runs`) in the static buffer.
    pub fn runs_offset(&self) -> u64 {
        4 * u64::from(self.starts_word() + self.index.rows().div_ceil(32))
    }

    /// The word of the occluder meshes' directory in the static buffer.
    pub fn occluders_word(&self) -> u32 {
        self.occluders_word
    }

    /// Writes the frame's ignored-row bits into `words` (a slot's plan buffer) from word `at`:
    /// a bit per row whose ID an `Ignore::Object` rule names or `filter` refuses (asked once
    /// per ID); the cull pass draws them nowhere. `Ignore::Instances` rules leave rows in: a
    /// draw without instances is left out by its ID only, on every path.
    pub fn write_ignored(&self, words: &mut [u32], at: usize, ignore: &[Ignore], filter: Option<&PickFilter<'_>>) {
        let Some(out) = words.get_mut(at..at + self.index.rows().div_ceil(32) as usize) else { return };
        let objects = ignore.iter().filter_map(|rule| match *rule {
            Ignore::Object(id) => Some(id.get()),
            Ignore::Instances { .. } => None,
        });
        if objects.clone().next().is_none() && filter.is_none() {
            return out.fill(0);
        }
        // Set here, then copied: setting a bit in `words` (mapped) would read its word back.
        let mut bits = vec![0u32; out.len()];
        if let Some(filter) = filter {
            for same in self.by_id.chunk_by(|a, b| a.0 == b.0) {
                if ObjectId::new(same[0].0).is_ok_and(|id| !filter(id)) {
                    for &(_, row) in same {
                        bits[row as usize / 32] |= 1 << (row % 32);
                    }
                }
            }
        }
        for id in objects {
            let first = self.by_id.partition_point(|&(i, _)| i < id);
            for &(_, row) in self.by_id[first..].iter().take_while(|&&(i, _)| i == id) {
                bits[row as usize / 32] |= 1 << (row % 32);
            }
        }
        out.copy_from_slice(&bits);
    }

    /// Bytes held: the static buffer (the slots' rows are the planner's, sized by the
    /// configuration).
    pub fn bytes(&self) -> u64 {
        self.statics.bytes()
    }
}

/// The runs of `groups`' rows (`table_words::runs`), each group's `first_run`, `runs` and
/// `occluders` and `chunked` set: per row its run, and the runs' words.
fn place_runs(groups: &mut [TableGroup], draws: &[PickDraw], rows: &[u32], meshes: RowMeshes<'_>) -> (Vec<u32>, Vec<u32>) {
    let spans: Vec<(u32, u32)> = groups.iter().map(|g| (g.first_row, g.rows)).collect();
    let (run_of, words, counts) = runs(draws, rows, meshes, &spans);
    let mut first = 0;
    for (g, count) in groups.iter_mut().zip(counts) {
        (g.first_run, g.runs) = (first, count);
        first += count;
        let any = |of_row: &[u32]| of_row.get(g.first_row as usize..(g.first_row + g.rows) as usize).is_some_and(|r| r.iter().any(|&m| m != 0));
        (g.occluders, g.chunked) = (any(meshes.occluders), any(meshes.chunks));
    }
    (run_of, words)
}

fn upload_statics(memory: &Memory, words: &[u32]) -> Result<GpuBuffer, PickError> {
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::INDIRECT_BUFFER;
    let mut buffer = GpuBuffer::new(memory, "gpu plan table", 4 * words.len() as u64, usage, MemoryLocation::CpuToGpu)?;
    // Host writes reach the device at submission only on coherent memory.
    if !buffer.is_coherent() {
        return Err(PickError::Unsupported { missing: vec![Requirement::Memory("host-coherent memory for the GPU plan table")] });
    }
    let Some(bytes) = buffer.mapped_mut() else {
        return Err(PickError::Unsupported { missing: vec![Requirement::Memory("host-visible memory for the GPU plan table")] });
    };
    bytes[..4 * words.len()].copy_from_slice(bytemuck::cast_slice(words));
    Ok(buffer)
}

#[cfg(test)]
mod tests;
