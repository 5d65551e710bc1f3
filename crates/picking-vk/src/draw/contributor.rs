//! Pick contributors: the host's own draws in the pick pass, for what the picker cannot draw
//! from buffers (sprites, billboards, Gaussian splats, procedural geometry). A contributor
//! reserves an ID range, builds its pipelines for the pass the picker names
//! ([`ContributorContext::target`]), and records its draws when the picker asks; its fragment
//! shader writes the pick outputs through [`CONTRIBUTOR_GLSL`]. Its fragments depth-test
//! against every mesh and every other contributor, so the nearest surface wins whoever drew it.
//! A hit whose ID lies in a contributor's range names it ([`crate::PickHit::contributor`]).
//! Contributors take part in point and radius queries and in the debug ID image; rectangle
//! queries do not draw them.

use crate::draw::PickDraw;
use crate::error::{Input, PickError};
use crate::ignore::Admission;
use ash::vk;
use glam::Mat4;
use std::ops::Range;

/// GLSL declaring the pick pass's fragment outputs and `pick_write(id, draw_index, instance)`
/// (plus `pick_id_add(base, offset)`), for a contributor's fragment shader: define
/// `PICK_DETAIL` before it when [`ContributorContext::detail`] is true.
pub const CONTRIBUTOR_GLSL: &str = include_str!("../../glsl/pick_contributor.glsl");

/// What a contributor's pipelines are built for. The attachments' formats are given either
/// way: render passes with the same formats are compatible, so a pipeline built for one pick
/// pass serves every other with the same formats (the debug ID image makes a pass of its own
/// per size; key caches by formats, not by handle).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContributorTarget<'a> {
    /// Subpass 0 of this render pass, whose attachments have these formats.
    RenderPass {
        /// The render pass.
        render_pass: vk::RenderPass,
        /// The colour attachments' formats, in location order.
        colors: &'a [vk::Format],
        /// The depth attachment's format.
        depth: vk::Format,
    },
    /// Dynamic rendering with these colour formats (ID, draw and instance, then detail when
    /// present) and this depth format (`VkPipelineRenderingCreateInfo`).
    Formats {
        /// The colour attachments' formats, in location order.
        colors: &'a [vk::Format],
        /// The depth attachment's format.
        depth: vk::Format,
    },
}

/// What the picker hands a contributor when it records.
pub struct ContributorContext<'a> {
    /// The host's device.
    pub device: &'a ash::Device,
    /// The host's command buffer, inside the pick pass, viewport and scissor set.
    pub command_buffer: vk::CommandBuffer,
    /// What the bound pipeline must be compatible with.
    pub target: ContributorTarget<'a>,
    /// Whether the pass has the detail attachment (define `PICK_DETAIL`).
    pub detail: bool,
    /// The request's view matrix (world to view): camera-facing sprites take their axes
    /// from it.
    pub view: Mat4,
    /// The request's view-projection (world to clip), composed in f64.
    pub view_projection: Mat4,
    /// The depth test meshes use (LESS, or GREATER under reverse-Z, unless draws say otherwise).
    pub depth_compare: vk::CompareOp,
    /// What the fragments write as their draw index (`pick_write`'s second argument).
    pub draw_index: u32,
    /// The request's ignore rules and filter: the contributor draws only the IDs and
    /// instances they admit, so that what the host leaves out (a gizmo handle being dragged)
    /// neither hits nor hides what lies behind it.
    pub admission: Admission<'a>,
}

/// The host's own draws in the pick pass (see the module docs).
///
/// # Safety
/// The picker records its own commands after a contributor's in the same pass, so an
/// implementation guarantees what those rely on: [`PickContributor::record`] binds its own
/// pipeline (built for the context's `target`, with viewport and scissor dynamic: a pipeline
/// with a static viewport would replace the pass's), descriptor sets, vertex buffers and push
/// constants, leaves viewport and scissor as they are, does not end the pass, and keeps every
/// resource it records alive until the frame completes. It records only what is valid inside
/// a render pass begun with inline contents (no barriers, no `vkCmdExecuteCommands`, every
/// query it begins ended), and the GPU writes to the resources it reads are ordered before
/// the pick by the host (the barrier of
/// [`PickRequest::with_host_writes`](crate::PickRequest::with_host_writes) covers them where
/// its stages and accesses do). (The picker asks [`PickContributor::ids`] once a recording
/// and uses that range for the whole frame, so a range that changes between calls is no
/// breach.)
pub unsafe trait PickContributor: Sync {
    /// The object IDs its fragments write: not empty, never 0, and no [`PickDraw`] or other
    /// contributor of the same request uses them. Asked once per recording (per
    /// [`crate::Picker::record`] or [`crate::debug::IdImage::record`]).
    fn ids(&self) -> Range<u64>;

    /// Records its draws. Called once per region the pass draws (a point, a radius cell, or
    /// the whole view for the ID image), after the picker's own draws. It draws only the
    /// objects and instances [`ContributorContext::admission`] admits: the picker cannot tell
    /// a contributor's objects apart, so a rule it skips is silently not applied.
    ///
    /// # Safety
    /// (For the caller, the picker.) `ctx.command_buffer` is recording inside the pick pass
    /// for `ctx.target`, on the device the contributor was made for.
    unsafe fn record(&self, ctx: &ContributorContext<'_>);
}

/// A hit on a contributor's geometry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContributorHit {
    /// The contributor's index in [`crate::PickRequest::contributors`].
    pub contributor: usize,
    /// The hit's ID less the start of the contributor's range.
    pub local: u64,
}

/// Asks each contributor for its range, once a recording, and checks that the ranges are
/// valid, disjoint, and used by no draw: O(draws x contributors), nothing (and no allocation)
/// for a request without contributors. The recording draws and resolves with these ranges.
pub(crate) fn check_ranges(contributors: &[&dyn PickContributor], draws: &[PickDraw]) -> Result<Vec<Range<u64>>, PickError> {
    let ranges: Vec<Range<u64>> = contributors.iter().map(|c| c.ids()).collect();
    for (i, r) in ranges.iter().enumerate() {
        if r.start == 0 || r.is_empty() {
            return Err(PickError::InvalidInput { input: Input::Contributor(i), reason: format!("its ID range {r:?} must be non-empty and exclude 0") });
        }
        if let Some(j) = ranges[..i].iter().position(|o| o.start < r.end && r.start < o.end) {
            return Err(PickError::InvalidInput {
                input: Input::Contributor(i),
                reason: format!("shares IDs with contributor {j} ({r:?} and {:?})", ranges[j]),
            });
        }
    }
    if ranges.is_empty() {
        return Ok(ranges);
    }
    if let Some((index, d)) = draws.iter().enumerate().find(|(_, d)| ranges.iter().any(|r| r.contains(&d.id.get()))) {
        return Err(PickError::InvalidDraw { index, reason: format!("ID {} lies in a contributor's range", d.id) });
    }
    Ok(ranges)
}
