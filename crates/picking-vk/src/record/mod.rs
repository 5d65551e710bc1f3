//! Recording the pick pass: validation first (so an error records nothing), then one render
//! pass over the planned draws. Shared by the picker's query cells and the full-size debug ID
//! image; `rect` records the rectangle tiles.

pub(crate) mod batch;
mod batch_run;
mod bind;
mod draw_calls;
pub(crate) mod hooked;
pub(crate) mod push;
pub(crate) mod rect;
mod view;

use crate::draw::{ContributorContext, ContributorTarget, PickContributor, PickDraw, Triangles};
use crate::error::PickError;
use crate::gpu_plan::GpuPlanned;
use crate::handoff::{DrawSnapshot, PassStats};
use crate::ignore::Admission;
use crate::pass::instance_sets::InstanceSets;
use crate::pass::pipeline::Pipelines;
use crate::pass::pipeline_key::{PickPush, PipelineKey};
use crate::pass::pipeline_key::{RECT_PUSH_SIZE, STORAGE_PUSH_SIZE};
use crate::pass::rendering::{Pass, PipelineTarget};
use crate::pass::targets::PassTargets;
use crate::pass::{PassKit, PassLayout};
use crate::plan::{run_of, Plan, PlanEntry, Planned};
use crate::request::camera::CameraSnapshot;
use crate::request::PickRequest;
use ash::vk;
use batch::{DrawBatchBuffer, DrawRow};
use batch_run::{write_row, Run, RunHook};
pub(crate) use bind::{cull_set_buffers, storage_set_buffers, BoundState};
use bind::{instance_attributes, Bindings};
use glam::{Mat4, Vec2};
use push::{deform_push, storage_words, words_to_bytes};
use std::cell::Cell;
use std::ops::Range;
pub(crate) use view::Framing;

/// The pipeline a draw needs. While batch rows are free (`rows_used < batch_rows`),
/// non-instanced draws take their data from a row.
fn pipeline_key(draw: &PickDraw, rows_used: u32, batch_rows: u32, camera: &CameraSnapshot) -> PipelineKey {
    PipelineKey::of(draw, draw.instances.is_none() && rows_used < batch_rows, camera.depth, camera.culling)
}

/// Builds the walked pipelines (`gpu_plan::walkable`) the GPU plan may draw `entries` of a
/// point or radius query with, where `walks` says a draw's pairs may be walked.
pub(crate) fn prepare_walked(
    pipelines: &mut Pipelines,
    draws: &[PickDraw],
    entries: &[PlanEntry],
    camera: &CameraSnapshot,
    walks: impl Fn(&PickDraw) -> bool,
) -> Result<(), PickError> {
    for entry in entries.iter().filter(|e| !e.table && e.run_count == 0) {
        if let Some(draw) = draws.get(entry.draw as usize).filter(|d| walks(d)) {
            pipelines.get(pipeline_key(draw, 0, 0, camera).walked(true), None)?;
        }
    }
    Ok(())
}

/// Builds any pipeline the planned draws need, before anything is recorded. The draws were
/// validated when the frame was planned (every draw, culled or not).
pub(crate) fn prepare_entries(
    pipelines: &mut Pipelines,
    sets: &mut InstanceSets,
    draws: &[PickDraw],
    entries: &[PlanEntry],
    batch_rows: u32,
    camera: &CameraSnapshot,
    rows_used: &mut u32,
) -> Result<(), PickError> {
    // What an earlier call that failed half-way wanted is not this one's business.
    sets.forget_wanted();
    for entry in entries {
        let index = entry.draw as usize;
        let draw = draws.get(index).ok_or(PickError::InvalidDraw { index, reason: "planned draw is missing".into() })?;
        if entry.table {
            // A table group draws with the batched pipeline, its rows the GPU plan's.
            pipelines.get(PipelineKey::of(draw, true, camera.depth, camera.culling), draw.hooks.as_ref())?;
            continue;
        }
        // The set the draw binds, or the one the GPU planner's cull pass would read (vertex
        // attributes the host says are readable as storage).
        if let Some(buffers) = storage_set_buffers(draw).or_else(|| cull_set_buffers(draw)) {
            sets.want(buffers);
        }
        // Each run of a chunk-culled draw is recorded as a draw (and takes a row).
        for _ in 0..entry.run_count.max(1) {
            let key = pipeline_key(draw, *rows_used, batch_rows, camera);
            pipelines.get(key, draw.hooks.as_ref())?;
            *rows_used += u32::from(key.batched);
        }
    }
    sets.prepare_wanted()
}

#[derive(Clone)]
pub(crate) struct PassRecording<'a> {
    pub device: &'a ash::Device,
    pub cmd: vk::CommandBuffer,
    pub pass: &'a Pass,
    pub layout: PassLayout,
    pub targets: &'a PassTargets,
    pub pipelines: &'a Pipelines,
    pub instance_sets: &'a InstanceSets,
    pub camera: &'a CameraSnapshot,
    pub framing: Framing,
    /// Largest draw count of one indirect draw.
    pub max_draw_indirect_count: u32,
    /// The request's contributors, recorded after the planned draws of each region.
    pub contributors: &'a [&'a dyn PickContributor],
    /// Their ID ranges, asked once (`contributor::check_ranges`).
    contributor_ids: Vec<Range<u64>>,
    /// The request's ignore rules and filter, for the contributors.
    admission: Admission<'a>,
    /// Target pixel minus host pixel under the viewport last set (hooks see host pixels).
    pixel_shift: Cell<Vec2>,
    /// The frame's GPU plan: instance ranges it culled are drawn from its commands.
    gpu_plan: Option<GpuPlanned<'a>>,
}

impl<'a> PassRecording<'a> {
    /// Builds any pipeline the planned (and, by planning, validated) draws need (with up to
    /// the kit's batch rows batched), and returns the recorder: after this nothing can fail,
    /// so an error leaves the command buffer untouched.
    pub fn prepare(
        kit: &'a mut PassKit,
        cmd: vk::CommandBuffer,
        targets: &'a PassTargets,
        camera: &'a CameraSnapshot,
        framing: Framing,
        draws: &[PickDraw],
        plan: &Plan,
    ) -> Result<Self, PickError> {
        prepare_entries(&mut kit.pipelines, &mut kit.instance_sets, draws, &plan.entries, kit.batch_rows, camera, &mut 0)?;
        Ok(Self::prepared(kit, cmd, targets, camera, framing))
    }

    /// The recorder, for callers that prepared the pipelines themselves.
    pub fn prepared(kit: &'a PassKit, cmd: vk::CommandBuffer, targets: &'a PassTargets, camera: &'a CameraSnapshot, framing: Framing) -> Self {
        PassRecording {
            device: &kit.memory.device,
            cmd,
            pass: &kit.pass,
            layout: kit.layout,
            targets,
            pipelines: &kit.pipelines,
            instance_sets: &kit.instance_sets,
            camera,
            framing,
            max_draw_indirect_count: kit.max_draw_indirect_count,
            contributors: &[],
            contributor_ids: Vec::new(),
            admission: Admission::new(&[], None),
            pixel_shift: Cell::new(Vec2::ZERO),
            gpu_plan: None,
        }
    }

    /// Draws the instance ranges `plan` culled from its commands.
    pub fn with_gpu_plan(mut self, plan: Option<GpuPlanned<'a>>) -> Self {
        self.gpu_plan = plan;
        self
    }

    /// Sets the contributors recorded with every region: `request`'s, with its ignore rules
    /// and filter, and the ID ranges `check_ranges` took from them (one per contributor).
    pub fn with_contributors(mut self, request: &PickRequest<'a>, ids: Vec<Range<u64>>) -> Self {
        debug_assert_eq!(ids.len(), request.contributors.len());
        self.contributors = request.contributors;
        self.contributor_ids = ids;
        self.admission = Admission::new(request.ignore, request.filter);
        self
    }

    /// Records the contributors into the open pass, each with a snapshot of its own; returns
    /// how many recorded.
    ///
    /// # Safety
    /// Inside the render pass begun by [`PassRecording::begin`], viewport and scissor set.
    unsafe fn record_contributors(&self, snapshots: &mut Vec<DrawSnapshot>) -> u32 {
        if self.contributors.is_empty() {
            return 0;
        }
        let (colors, depth) = self.pass.formats();
        let target = match self.pass.pipeline_target() {
            PipelineTarget::RenderPass(render_pass) => ContributorTarget::RenderPass { render_pass, colors: &colors, depth },
            PipelineTarget::Formats { .. } => ContributorTarget::Formats { colors: &colors, depth },
        };
        let depth_compare = self.camera.depth.nearer_wins();
        for (index, (contributor, ids)) in self.contributors.iter().zip(&self.contributor_ids).enumerate() {
            let ids = ids.clone();
            let Ok(id) = crate::id::ObjectId::new(ids.start) else { continue };
            let draw_index = snapshots.len() as u32;
            snapshots.push(DrawSnapshot::contributor(index, ids, id));
            let ctx = ContributorContext {
                device: self.device,
                command_buffer: self.cmd,
                target,
                detail: self.layout.detail,
                view: self.camera.view.as_mat4(),
                view_projection: self.camera.view_projection.as_mat4(),
                depth_compare,
                draw_index,
                admission: self.admission,
            };
            // SAFETY: the caller's contract; the contributor's own is its trait's.
            unsafe { contributor.record(&ctx) };
        }
        self.contributors.len() as u32
    }

    /// Records the render pass over the planned draws. `prepare` must have succeeded for this
    /// plan with `batch`'s capacity (0 without). Appends one snapshot per recorded draw; the
    /// fragment shader writes its index.
    ///
    /// # Safety
    /// `cmd` is in the recording state outside any render pass; every buffer the draws name is
    /// a live buffer of this device with the usage the draw types document; `batch` is not in
    /// use by the GPU.
    pub unsafe fn record(
        &self,
        request: &PickRequest<'_>,
        draws: &[PickDraw],
        plan: &Plan,
        snapshots: &mut Vec<DrawSnapshot>,
        batch: Option<&mut DrawBatchBuffer>,
    ) -> PassStats {
        // SAFETY: the caller's contract is `begin`'s, `set_view`'s, `record_draws`'s and `end`'s.
        unsafe {
            self.begin();
            self.set_view(&self.viewport_and_scissor(request.viewport));
            let mut stats = PassStats { draws_recorded: 0, ..plan.stats };
            stats.draws_recorded = u64::from(self.record_draws(draws, plan.planned(), snapshots, batch, &mut 0, &mut BoundState::default()));
            self.end();
            stats
        }
    }

    /// Begins the pass over the whole target, clearing it.
    ///
    /// # Safety
    /// `cmd` is in the recording state outside any pass.
    pub unsafe fn begin(&self) {
        let clear = self.layout.clear_values(self.camera.clear_depth());
        // SAFETY: the caller's contract; the targets were made for this pass.
        unsafe { self.pass.begin(self.device, self.cmd, &self.targets.attachments, &clear[..self.layout.attachment_count()]) };
    }

    /// Ends the pass.
    ///
    /// # Safety
    /// Inside the pass begun by [`PassRecording::begin`].
    pub unsafe fn end(&self) {
        // SAFETY: the caller's contract.
        unsafe { self.pass.end(self.device, self.cmd, &self.targets.attachments) };
    }

    /// Records planned draws into the open render pass (batch rows from `*rows` on); returns
    /// how many were recorded. `bound` is what this pass has bound so far.
    ///
    /// # Safety
    /// Inside the render pass begun by [`PassRecording::begin`]; the draws' buffers are live
    /// with the usage the draw types document; the entries were prepared with the same
    /// starting rows; `batch` is not in use by the GPU.
    pub unsafe fn record_draws(
        &self,
        draws: &[PickDraw],
        planned: Planned<'_>,
        snapshots: &mut Vec<DrawSnapshot>,
        mut batch: Option<&mut DrawBatchBuffer>,
        rows: &mut u32,
        bound: &mut BoundState,
    ) -> u32 {
        // The unsafe blocks below ("as above") rest on the caller's contract: `cmd` is inside
        // this render pass, the draws' buffers are live, and render pass, framebuffer and
        // pipelines belong to this device and outlive the host's command buffer.
        let (mut recorded, mut run) = (0, None::<Run>);
        for entry in planned.entries {
            let Some(draw) = draws.get(entry.draw as usize) else { continue };
            if entry.table {
                // SAFETY: as above; the table's commands draw inside the group's buffers.
                recorded += unsafe { self.record_table_group((draw, entry.draw), entry.first_range, (batch.as_deref(), &mut run), bound) };
                continue;
            }
            // A draw cut by chunk culling records each run of triangles as a draw of its own
            // (the snapshot notes where the run starts: the GPU's primitive index restarts).
            let triangle_runs = &planned.runs[entry.first_run as usize..(entry.first_run + entry.run_count) as usize];
            let model_view_projection = self.camera.model_view_projection(&draw.model);
            for (k, triangle_run) in (0..triangle_runs.len().max(1)).map(|k| (k, triangle_runs.get(k).copied())) {
                let triangles = triangle_run.map_or(draw.triangles, |r| run_of(draw.triangles, r));
                let key = pipeline_key(draw, *rows, batch.as_ref().map_or(0, |b| b.capacity()), self.camera).walked(self.walks(entry));
                let Some((pipeline, layout)) = self.pipelines.cached(key) else {
                    // `prepare` built every key; a miss means it was not called. Skip rather than panic.
                    log::error!("picking-vk: pipeline missing for {key:?}; was prepare() skipped?");
                    continue;
                };
                let draw_index = snapshots.len() as u32;
                snapshots.push(DrawSnapshot::of(draw, entry.draw).starting_at(triangle_run.map_or(0, |r| r.0)));
                // A draw counts once, however many runs it is recorded in.
                recorded += u32::from(k == 0);
                let bindings = Bindings::of(draw, pipeline);
                if let Some(batch) = batch.as_deref_mut().filter(|_| key.batched) {
                    let hook = RunHook::of(draw, layout);
                    // Extend the open run, or close it and open one for this draw's bindings.
                    if run.as_ref().is_some_and(|r| r.bindings != bindings || r.hook != hook || r.count >= self.max_draw_indirect_count) {
                        // SAFETY: as above.
                        unsafe { self.record_run(run.take(), batch, bound) };
                    }
                    let open = run.get_or_insert(Run { bindings, hook, first: *rows, count: 0 });
                    // Hooked shaders work in world space: their rows carry the model matrix.
                    let matrix = if draw.hooks.is_some() { draw.model } else { model_view_projection };
                    write_row(batch, *rows, triangles, &DrawRow { model_view_projection: matrix, object_id: draw.id.to_words(), draw_index });
                    open.count += 1;
                    *rows += 1;
                    continue;
                }
                if let Some(batch) = batch.as_deref() {
                    // SAFETY: as above.
                    unsafe { self.record_run(run.take(), batch, bound) };
                }
                // SAFETY: as above; offsets and counts were validated against the buffer ranges.
                unsafe {
                    self.bind(&bindings, instance_attributes(draw), bound);
                    self.bind_and_push(draw, key, layout, model_view_projection, draw_index, bound);
                    match &draw.indirect {
                        // The host's commands, once: culling kept the draw, the GPU picks its work.
                        Some(indirect) => self.record_indirect(indirect, matches!(draw.triangles, Triangles::Indexed { .. })),
                        None => self.draw_ranges(draw, triangles, planned.ranges, entry, key.walk.then_some(layout)),
                    }
                }
            }
        }
        if let Some(batch) = batch.as_deref() {
            // SAFETY: as above.
            unsafe { self.record_run(run.take(), batch, bound) };
        }
        // SAFETY: as above.
        let contributed = unsafe { self.record_contributors(snapshots) };
        if contributed > 0 {
            // Contributors bind what they draw with: nothing this pass bound is known to stay.
            *bound = BoundState::default();
        }
        recorded + contributed
    }

    /// Binds what a directly recorded draw reads beyond its vertex buffers (hook set,
    /// deformation or storage set) and pushes its constants.
    ///
    /// # Safety
    /// As [`PassRecording::record_draws`], with `layout` the pipeline layout of `key`.
    unsafe fn bind_and_push(
        &self,
        draw: &PickDraw,
        key: PipelineKey,
        layout: vk::PipelineLayout,
        model_view_projection: Mat4,
        draw_index: u32,
        bound: &mut BoundState,
    ) {
        let (d, cmd) = (self.device, self.cmd);
        // SAFETY: (whole block) the caller's contract.
        unsafe {
            if let Some(hooks) = &draw.hooks {
                self.bind_hooks(draw, hooks, layout, bound);
                self.push_hooked(draw, draw_index, [0; 8], layout);
                return;
            }
            let first_instance = draw.instances.map_or(0, |i| i.first);
            let push = PickPush { model_view_projection, object_id: draw.id.to_words(), draw_index, first_instance };
            let stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT;
            if key.deform.is_some() {
                self.bind_deformation(draw, layout, bound);
                d.cmd_push_constants(cmd, layout, stages, 0, &deform_push(draw, &push, [0; 8]));
            } else if key.instance_storage {
                self.bind_storage_set(draw, layout, 1, bound);
                if let Some(plan) = self.gpu_plan.filter(|_| key.walk) {
                    // The plan buffer the walk reads, at set 2 (where hooked draws keep theirs).
                    d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::GRAPHICS, layout, 2, &[plan.set], &[]);
                    bound.set2 = None;
                }
                let mut bytes = [0u8; STORAGE_PUSH_SIZE as usize];
                bytes[..PickPush::SIZE as usize].copy_from_slice(&push.to_bytes());
                words_to_bytes(storage_words(draw), &mut bytes[RECT_PUSH_SIZE as usize..]);
                d.cmd_push_constants(cmd, layout, stages, 0, &bytes);
            } else {
                d.cmd_push_constants(cmd, layout, stages, 0, &push.to_bytes());
            }
        }
    }
}
