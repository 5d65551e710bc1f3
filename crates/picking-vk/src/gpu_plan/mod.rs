//! GPU planning: a compute pass that culls, per query region, the instances of draws whose
//! transforms it may read from the host's buffer as storage (those the CPU planner cannot
//! cull, or all of them under `Planner::Gpu`) into a bit per instance, and, after a barrier,
//! writes each pair's indirect commands, one per run of consecutive survivors, in instance
//! order. The pick passes draw them with `vkCmdDraw*IndirectCount`, then each pair's fallback
//! command, which draws the whole range only when the runs overflowed the pair's share of
//! the commands (drawing none of them): never a truncated result. A point's or radius
//! query's pair over storage instances is *walked* instead ([`walkable`]): the cull pass
//! counts its survivors into its one command, the vertex shader finds each in the bits, and
//! no finishing dispatch runs for it. Which draws and ranges the pass takes is decided on the
//! CPU while recording (`picker::gpu_pairs`); this module owns the buffers, the pipelines and
//! the recording.

pub(crate) mod chunk_boxes;
pub(crate) mod layout;
pub(crate) mod occluders;
pub(crate) mod record;
pub(crate) mod table;
pub(crate) mod table_words;

use crate::draw::PickDraw;
use crate::error::{PickError, Requirement};
use crate::gpu::{GpuBuffer, Memory, Owned};
use crate::host::config::Planner;
use crate::pass::compute::{compute_pipeline, destroy_pool, destroy_set_layout, ComputePipeline};
use crate::pass::pipeline_key::ROW_BYTES;
use crate::pass::spirv;
use ash::vk;
use gpu_allocator::MemoryLocation;
use layout::{PlanLayout, RowsLayout};

/// Threads of a cull workgroup (the shader's `local_size_x`).
pub(crate) const CULL_GROUP: u32 = 64;
/// Threads of a finishing workgroup wanted: the pass's reads depend on each other, and one
/// workgroup per pair leaves only its own threads to hide their latency. At 256 its shared
/// memory is 14 KiB, within the 16 KiB every device has.
const FINISH_GROUP_WANTED: u32 = 256;

/// The finishing passes' workgroup size: the largest power of two up to
/// [`FINISH_GROUP_WANTED`] that the device's `maxComputeWorkGroupInvocations` and
/// `maxComputeWorkGroupSize[0]` allow (every device allows 128).
pub(crate) fn finish_group(max_invocations: u32, max_width: u32) -> u32 {
    let allowed = max_invocations.min(max_width).clamp(1, FINISH_GROUP_WANTED);
    1 << (31 - allowed.leading_zeros())
}

/// A range that no pair takes: recorded as the CPU planned it.
pub(crate) const NO_PAIR: u32 = u32::MAX;
/// Bytes of the cull pass's push constants: the storage words, then the pairs.
const PUSH_BYTES: u32 = 32;
/// Bytes of the table's cull pass's: the pairs, the group's rows, its kind.
const TABLE_PUSH_BYTES: u32 = 48;
/// Bytes of the finishing passes' push constants: the pairs, then the table's words
/// ([`DrawsPasses::finish_words`]).
const FINISH_PUSH_BYTES: u32 = 48;

/// Whether the GPU plan may cull `draw`'s instances under `planner`: instances in a buffer
/// the host lets it read as storage (`InstanceBinding::StorageBuffer` or
/// `VertexAndStorageBuffer`), a box that bounds what is drawn (as the CPU planner requires:
/// no hooks, hooks that only discard, or a world adjustment the box covers), no host
/// indirect commands, and, under `Planner::Auto`, no CPU copy of the transforms (the CPU
/// culls those itself). Triangles, lines and points alike (lines and points are padded by
/// their reach).
pub(crate) fn plannable(draw: &PickDraw, planner: Planner) -> bool {
    draw.instances_readable_as_storage().is_some()
        && draw.culling_bounds().is_some()
        && draw.indirect.is_none()
        && (planner == Planner::Gpu || draw.instance_transforms.is_none())
}

/// One cull dispatch: the pairs of one draw (consecutive), and the cull workgroups their
/// ranges meet (64 instances each, counted from the draw's first instance). A workgroup
/// transforms and projects its instances once and tests them against each pair's region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CullDispatch {
    /// The draw, or for a table group its first draw.
    pub draw: u32,
    /// Whether the candidates are a shared list's table rows (a group), not instances.
    pub table: bool,
    pub first_pair: u32,
    pub pairs: u32,
    pub first_group: u32,
    pub groups: u32,
}

/// The most cull workgroups of one dispatch: every device offers 65,535 along x.
pub(crate) const MAX_DISPATCH_GROUPS: u32 = 65_535;

/// Where a pair's commands lie among the frame's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PairCommands {
    pub first: u32,
    pub capacity: u32,
    /// The pair's survivors are drawn by its first command alone, whose instance count the
    /// cull pass adds up and whose instances the vertex shader finds in the pair's bits
    /// ([`walkable`]); no finishing pass runs for it.
    pub walk: bool,
}

/// Whether the pick pass may draw a pair of `draw`'s instances, planned by the GPU under
/// `planner` ([`plannable`]), as one command whose vertex shader finds the k-th surviving
/// instance in the pair's survivor bits (`shaders/pick_walk.glsl`), sparing the finishing pass
/// and its barrier: instances the pick reads from storage (the walk picks which), no hooks
/// and no deformation (their shaders read instances their own way).
pub(crate) fn walkable(draw: &PickDraw, planner: Planner) -> bool {
    plannable(draw, planner) && draw.instances_in_storage().is_some() && draw.hooks.is_none() && draw.deformation.is_none()
}

/// What the pick passes' recording needs of a frame's GPU plan.
#[derive(Clone, Copy)]
pub(crate) struct GpuPlanned<'a> {
    /// The slot's plan buffer, and its set (bound at set 2 by walked pairs' pipelines).
    pub buffer: vk::Buffer,
    pub set: vk::DescriptorSet,
    pub layout: PlanLayout,
    /// Per range of the frame's plan lists, its first pair ([`NO_PAIR`]: as the CPU planned
    /// it).
    pub pair_of_range: &'a [u32],
    pub commands: &'a [PairCommands],
    /// The shared list's table the frame plans with, if any.
    pub table: Option<TableDraws<'a>>,
}

/// What drawing a table's groups binds and reads.
#[derive(Clone, Copy)]
pub(crate) struct TableDraws<'a> {
    /// The slot's rows (per-instance attributes of the batched pipeline).
    pub rows: vk::Buffer,
    /// The static buffer: each group's runs, whose commands draw it whole.
    pub statics: vk::Buffer,
    /// Byte offset of the first run in `statics`.
    pub runs_offset: u64,
    pub index: &'a table::TableIndex,
    /// Per group, its first row in the slot's rows this frame ([`NO_WINDOW`]: not drawn).
    pub windows: &'a [u32],
}

/// A table group no query of the frame draws: the cull pass composes none of its rows.
pub(crate) const NO_WINDOW: u32 = u32::MAX;

/// A table group drawn this frame: its rows, its first run's byte offset in the static
/// buffer, and the byte offset of its rows in the slot's rows (where its commands, which
/// count instances from the group's first row, bind them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct DrawnGroup {
    pub group: table::TableGroup,
    pub runs: u64,
    pub rows_offset: u64,
}

impl TableDraws<'_> {
    /// The group whose first draw is `draw`, where the frame composed its rows.
    pub fn group(&self, draw: u32) -> Option<DrawnGroup> {
        let g = self.index.group_of(draw)?;
        let window = self.windows.get(g).copied().filter(|&w| w != NO_WINDOW)?;
        let group = self.index.groups[g];
        let runs = self.runs_offset + 4 * u64::from(group.first_run) * u64::from(table_words::RUN_WORDS);
        Some(DrawnGroup { group, runs, rows_offset: u64::from(window) * u64::from(ROW_BYTES) })
    }
}

/// What bounds shared lists' tables: the draws one may hold (`PickerConfig::gpu_plan_draws`)
/// and the rows a frame may draw (`PickerConfig::gpu_plan_rows`), either 0: no tables; and
/// the bytes a table's data may take, bound whole as one storage buffer
/// (`maxStorageBufferRange`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TableLimits {
    pub draws: u32,
    pub frame_rows: u32,
    pub storage_range: u32,
}

pub(crate) struct GpuPlanKit {
    // Fields drop in order: the pipelines before the set layout, the sets with their pool.
    /// Culls into survivor bits (`shaders/pick_cull.comp`), a dispatch per draw.
    cull: ComputePipeline,
    /// Writes each pair's commands, a run of survivors each, and its draw count
    /// (`shaders/pick_cull_finish.comp`).
    finish: ComputePipeline,
    slots: Vec<(GpuBuffer, vk::DescriptorSet)>,
    /// The passes over a shared list's table, where the host enabled `shaderFloat64`
    /// (`PickFeatures::GPU_DRAW_PLANNING`).
    pub(crate) draws: Option<DrawsPasses>,
    /// Their bounds and workgroup size while they are not built yet: `Planner::Auto` builds
    /// them for the first set that takes a table ([`GpuPlanKit::build_tables`]).
    unbuilt: Option<(TableLimits, u32)>,
    _pool: Owned<vk::DescriptorPool>,
    _set_layout: Owned<vk::DescriptorSetLayout>,
    pub layout: PlanLayout,
}

/// The cull and finishing passes over a shared list's table (`table`), the layout of a
/// table's set (its static buffer, a slot's rows), and each slot's rows: the composed rows
/// of the groups its frame draws, sized by the configuration, never by a table.
pub(crate) struct DrawsPasses {
    pub(crate) cull: ComputePipeline,
    pub(crate) finish: ComputePipeline,
    pub(crate) set_layout: Owned<vk::DescriptorSetLayout>,
    pub(crate) limits: TableLimits,
    /// Where a slot's rows buffer keeps the rows, the span rows and the near keys.
    pub(crate) rows_layout: RowsLayout,
    /// Per slot: `limits.frame_rows` rows of `ROW_BYTES`, as the batched vertex shader reads
    /// them, then the span rows and the near keys ([`RowsLayout`]).
    pub(crate) rows: Vec<GpuBuffer>,
}

/// A set layout of `count` storage buffers for `stages`, from binding 0.
fn storage_set_layout(device: &ash::Device, count: u32, stages: vk::ShaderStageFlags) -> Result<Owned<vk::DescriptorSetLayout>, PickError> {
    let bindings: Vec<_> = (0..count)
        .map(|b| {
            vk::DescriptorSetLayoutBinding::default().binding(b).descriptor_type(vk::DescriptorType::STORAGE_BUFFER).descriptor_count(1).stage_flags(stages)
        })
        .collect();
    // SAFETY: a valid create info on a live device; owned right away.
    unsafe {
        let handle = device.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings), None)?;
        Ok(Owned::new(device, handle, destroy_set_layout))
    }
}

impl GpuPlanKit {
    /// A plan buffer of `layout`'s size per slot (host-visible, device-local where the device
    /// has such memory: recording writes the jobs straight into it), the cull pipeline (whose
    /// set 1 is the picker's instance storage set) and the finishing one, of `finish_group`
    /// threads ([`finish_group`]); the passes over shared lists' tables too, and each slot's
    /// rows, unless `tables` bounds them to nothing (`tables.1`: built now, or left to
    /// [`GpuPlanKit::build_tables`]).
    pub fn new(
        memory: &Memory,
        layout: PlanLayout,
        slots: usize,
        instance_set_layout: vk::DescriptorSetLayout,
        tables: (TableLimits, bool),
        finish_group: u32,
    ) -> Result<Self, PickError> {
        let device = &memory.device;
        // The pick pass's vertex shader reads walked pairs' bits (`walkable`).
        let set_layout = storage_set_layout(device, 1, vk::ShaderStageFlags::COMPUTE | vk::ShaderStageFlags::VERTEX)?;
        let count = slots as u32;
        let sizes = [vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: count }];
        // SAFETY: as above.
        let pool = unsafe {
            let handle = device.create_descriptor_pool(&vk::DescriptorPoolCreateInfo::default().max_sets(count).pool_sizes(&sizes), None)?;
            Owned::new(device, handle, destroy_pool)
        };
        let layouts = vec![set_layout.handle; slots];
        // SAFETY: the pool has room for one set per slot.
        let sets = unsafe { device.allocate_descriptor_sets(&vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool.handle).set_layouts(&layouts)) }?;
        let mut made = Vec::with_capacity(slots);
        for set in sets {
            let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::INDIRECT_BUFFER;
            let buffer = GpuBuffer::new(memory, "gpu plan", layout.bytes(), usage, MemoryLocation::CpuToGpu)?;
            // Host writes reach the device at submission only on coherent memory.
            if !buffer.is_coherent() {
                return Err(PickError::Unsupported { missing: vec![Requirement::Memory("host-coherent memory for the GPU plan buffer")] });
            }
            let info = [vk::DescriptorBufferInfo { buffer: buffer.buffer, offset: 0, range: vk::WHOLE_SIZE }];
            let write = vk::WriteDescriptorSet::default().dst_set(set).dst_binding(0).descriptor_type(vk::DescriptorType::STORAGE_BUFFER).buffer_info(&info);
            // SAFETY: the set and buffer are live; nothing uses the set yet.
            unsafe { device.update_descriptor_sets(&[write], &[]) };
            made.push((buffer, set));
        }
        let sets = [set_layout.handle, instance_set_layout];
        let cull = compute_pipeline(memory, &sets, PUSH_BYTES, (spirv::PICK_CULL_COMP, &[]), "pick_cull.comp", "gpu plan cull")?;
        let finish_comp = (spirv::PICK_CULL_FINISH_COMP, &[finish_group][..]);
        let finish = compute_pipeline(memory, &sets[..1], FINISH_PUSH_BYTES, finish_comp, "pick_cull_finish.comp", "gpu plan finish")?;
        let (limits, now) = tables;
        let unbuilt = (limits.draws > 0 && limits.frame_rows > 0).then_some((limits, finish_group));
        let mut kit = GpuPlanKit { cull, finish, slots: made, draws: None, unbuilt, _pool: pool, _set_layout: set_layout, layout };
        if now {
            kit.build_tables(memory)?;
        }
        Ok(kit)
    }

    /// Builds the passes over shared lists' tables and each slot's rows, where they are
    /// allowed and not built yet.
    pub fn build_tables(&mut self, memory: &Memory) -> Result<(), PickError> {
        if let Some((limits, finish_group)) = self.unbuilt {
            let passes = DrawsPasses::new(memory, self._set_layout.handle, (limits, self.slots.len()), &self.layout, finish_group)?;
            self.draws = Some(passes);
            self.unbuilt = None;
        }
        Ok(())
    }

    /// What bounds shared lists' tables, where they may be planned (built or not).
    pub fn table_limits(&self) -> Option<TableLimits> {
        self.draws.as_ref().map(|d| d.limits).or(self.unbuilt.map(|u| u.0))
    }

    /// Slot `slot`'s mapped plan buffer as words, for the frame being recorded there (the
    /// slot's previous frame completed).
    pub fn words_mut(&mut self, slot: usize) -> Option<&mut [u32]> {
        let bytes = self.slots.get_mut(slot)?.0.mapped_mut()?;
        bytemuck::try_cast_slice_mut(bytes).ok()
    }

    /// What the pick passes need to draw slot `slot`'s plan.
    pub fn planned<'a>(&self, slot: usize, pair_of_range: &'a [u32], commands: &'a [PairCommands], table: Option<TableDraws<'a>>) -> Option<GpuPlanned<'a>> {
        let (buffer, set) = self.slots.get(slot).map(|(b, set)| (b.buffer, *set))?;
        Some(GpuPlanned { buffer, set, layout: self.layout, pair_of_range, commands, table })
    }

    /// The layout of the slots' plan sets, which walked pairs' pick pipelines bind at set 2.
    pub fn set_layout(&self) -> vk::DescriptorSetLayout {
        self._set_layout.handle
    }

    /// The passes over shared lists' tables, where tables are planned and they are built.
    pub fn tables(&self) -> Option<&DrawsPasses> {
        self.draws.as_ref()
    }

    /// Bytes held: every slot's plan buffer and table rows.
    pub fn bytes(&self) -> u64 {
        let rows = self.draws.as_ref().map_or(0, |d| d.rows.iter().map(GpuBuffer::bytes).sum());
        self.slots.iter().map(|s| s.0.bytes()).sum::<u64>() + rows
    }
}

impl DrawsPasses {
    fn new(
        memory: &Memory,
        plan_set_layout: vk::DescriptorSetLayout,
        (limits, slots): (TableLimits, usize),
        plan: &PlanLayout,
        finish_group: u32,
    ) -> Result<Self, PickError> {
        let set_layout = storage_set_layout(&memory.device, 2, vk::ShaderStageFlags::COMPUTE)?;
        let sets = [plan_set_layout, set_layout.handle];
        let cull = compute_pipeline(memory, &sets, TABLE_PUSH_BYTES, (spirv::PICK_CULL_DRAWS_COMP, &[]), "pick_cull_draws.comp", "gpu plan cull draws")?;
        let finish_comp = (spirv::PICK_CULL_FINISH_DRAWS_COMP, &[finish_group][..]);
        let finish = compute_pipeline(memory, &sets, FINISH_PUSH_BYTES, finish_comp, "pick_cull_finish_draws.comp", "gpu plan finish draws")?;
        let usage = vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::VERTEX_BUFFER;
        let rows_layout = RowsLayout::new(limits.frame_rows, plan.commands);
        let size = rows_layout.bytes();
        let rows = (0..slots).map(|_| GpuBuffer::new(memory, "gpu plan table rows", size, usage, MemoryLocation::GpuOnly)).collect::<Result<_, _>>()?;
        Ok(DrawsPasses { cull, finish, set_layout, limits, rows_layout, rows })
    }

    /// The table's words the finishing pass reads from its push constants (after the pairs):
    /// the first span row, the plan buffer's first command word (`plan`: its layout), the
    /// first near key's word and the frame's view-projection's word; then the first
    /// compacted row, how many there are, the plan buffer's word that counts those taken, and
    /// the frame's totals' word.
    pub fn finish_words(&self, plan: &PlanLayout) -> [u32; 8] {
        let rows = &self.rows_layout;
        let (compacted, totals) = (plan.compacted_word(), plan.totals_word());
        [rows.frame_rows, plan.command_word(0), rows.keys_word(), plan.view_projection_word(), rows.compacted_row(), rows.frame_rows, compacted, totals]
    }
}

#[cfg(test)]
mod tests {
    use super::finish_group;

    #[test]
    fn the_finishing_group_is_the_largest_power_of_two_the_limits_allow() {
        // Lavapipe and NVIDIA (1,024 invocations and width) get what is wanted.
        assert_eq!(finish_group(1024, 1024), 256);
        // The Vulkan minimums (128 invocations and width), and limits that are not powers of two.
        assert_eq!(finish_group(128, 128), 128);
        assert_eq!(finish_group(1024, 200), 128);
        assert_eq!(finish_group(192, 1024), 128);
        // Limits below Vulkan's minimums still give a size they allow.
        assert_eq!(finish_group(48, 1024), 32);
        assert_eq!(finish_group(0, 0), 1);
    }
}
