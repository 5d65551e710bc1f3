//! picking-vk in a frame loop: the viewer's whole integration of the picker.
//!
//! Once, create a [`Picker`] with a slot per frame in flight. Every frame, in slot
//! `frame % FRAMES_IN_FLIGHT`, right after waiting on that slot's fence (as the loop does
//! anyway before reusing its command buffer): [`Picking::take_results`] takes the results of
//! the query set recorded there a round ago; then [`Picking::record`] records this frame's
//! query set into the frame's command buffer, which the loop submits. The set holds the hover
//! query at the cursor (a radius query, so thin objects are easy to point at) and, in the
//! frame a rubber band is released, a rectangle query. The hover result is the hovered
//! object, and the selection's input in a frame with a click; the rectangle's result is the
//! band's selection. Nothing waits on the GPU for picking, and nothing is allocated per pick.
//! (`frame_loop.rs` shows where the two calls sit in the frame.)
//!
//! The same-frame path (the default; the panel can switch back to the ring above, to
//! compare): [`Picking::pick_same_frame`] records the set into a command buffer of its own,
//! submits it first with a fence, and waits for that fence alone (bounded) with
//! `Picker::wait_results`, so the panel reads the hover of the frame it draws. The picker also
//! writes GPU results, which the lit pass reads in the same frame to tint the hovered object
//! and the rubber band's live set while it is dragged.

use super::band::BandQuery;
use super::selection::{describe_hit, ClickMode, Selection};
use super::{trace, FRAMES_IN_FLIGHT};
use crate::objects::ObjectTable;
use crate::pick_report::{HitReport, PickReport};
use crate::rect_report::RectReport;
use crate::scene::Scene;
use crate::ViewerError;
use ash::vk;
use glam::UVec2;
use picking_vk::draw::Culling;
use picking_vk::{
    config::DetailStatus, config::PassRendering, DepthConvention, DetailMode, FrameResults, HostSignal, PickDraw, PickError, PickQuery, PickRequest, Picker,
    PickerConfig, QueryResult, Snap,
};
use picking_vk_context::{CommandBuffers, VulkanContext};
use std::sync::Arc;
use std::time::Instant;

/// The largest hover radius the panel offers; the picker is made for it.
pub const MAX_HOVER_RADIUS: u32 = 8;
/// How long the same-frame path waits for its early submission before the frame goes on
/// (the result is then taken a round later, as on the ring path).
const SAME_FRAME_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(250);

/// The same-frame path's early submissions: per slot a command buffer and a fence.
struct EarlySubmits {
    device: ash::Device,
    commands: CommandBuffers,
    fences: Vec<vk::Fence>,
}

impl Drop for EarlySubmits {
    fn drop(&mut self) {
        // SAFETY: the device is idle when the picking state is dropped (see Running::drop).
        unsafe {
            for f in &self.fences {
                self.device.destroy_fence(*f, None);
            }
        }
    }
}

/// Where the set last recorded put its queries, for the lit pass's GPU-results tint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecordedSet {
    /// A hover query was recorded (query 0).
    pub hover: bool,
    /// The band's query (released or being dragged), by index.
    pub band: Option<u32>,
}

pub struct Picking {
    picker: Picker,
    /// Per slot: the query set recorded there and not taken yet.
    pending: [Option<PendingSet>; FRAMES_IN_FLIGHT],
    /// The object under the cursor (within the hover radius): the latest hover result.
    pub hovered: Option<PickReport>,
    /// What clicks and rubber bands selected.
    pub selection: Selection,
    /// Frames and milliseconds from recording the latest result's pick to taking it.
    pub latency: Option<(u64, f64)>,
    /// The latest pick error, until a pick succeeds again. Pick errors are shown, never
    /// fatal: the next frame picks again. Device loss alone is returned (see `recovery`).
    pub error: Option<String>,
    /// Why the last rubber band selected nothing (select-through unsupported, too many
    /// objects), until the next band succeeds.
    pub band_error: Option<String>,
    /// The set recorded this frame (reset when a frame records none).
    pub recorded: RecordedSet,
    early: EarlySubmits,
}

/// What one frame asks of the picker.
#[derive(Clone, Copy, Debug, Default)]
pub struct FrameQueries {
    /// The framebuffer pixel under the cursor, when it is over the view.
    pub hover: Option<UVec2>,
    /// The hover query's radius, pixels; 0: a point query.
    pub hover_radius: u32,
    /// A click came in since the last pick: the hover result selects.
    pub click: Option<ClickMode>,
    /// A rubber band released since the last pick.
    pub band: Option<BandQuery>,
    /// The band being dragged, asked every frame for its live set (GPU results only: its CPU
    /// result selects nothing).
    pub live_band: Option<BandQuery>,
}

/// A query set in flight: where its results are, and what they are for.
#[derive(Clone, Copy)]
struct PendingSet {
    /// The hover query's index in the set.
    hover: Option<usize>,
    click: Option<ClickMode>,
    /// The band's index in the set, and whether it adds to the selection.
    band: Option<(usize, bool)>,
    frame: u64,
    at: Instant,
}

impl Picking {
    /// `detail`: use the detail attachment (face, barycentrics, normal, UV) where the device has it.
    /// The picker's pipelines for `draws` are built here, for the view's depth convention
    /// `depth`, so the first hover does not pay for them.
    pub fn new(ctx: &VulkanContext, detail: bool, rendering: PassRendering, draws: &[PickDraw], depth: DepthConvention) -> Result<Self, ViewerError> {
        let detail = if detail { DetailMode::IfEnabled } else { DetailMode::Off };
        let config = PickerConfig::default()
            .with_frames_in_flight(FRAMES_IN_FLIGHT)
            .with_detail(detail)
            .with_max_radius(MAX_HOVER_RADIUS)
            .with_rendering(rendering)
            .with_gpu_results(true);
        // SAFETY: the context's handles belong together and outlive the picker (`Gfx` drops first).
        let mut picker = unsafe { Picker::new(ctx.host_device(), config) }?;
        picker.warm_up(draws, depth, Culling::NONE)?;
        let fences = (0..FRAMES_IN_FLIGHT).map(|_| picking_vk_host::vk_util::fence(&ctx.device, false)).collect::<Result<Vec<_>, _>>()?;
        let early = EarlySubmits { device: ctx.device.clone(), commands: ctx.command_buffers(FRAMES_IN_FLIGHT as u32)?, fences };
        Ok(Picking {
            picker,
            pending: [None; FRAMES_IN_FLIGHT],
            hovered: None,
            selection: Selection::default(),
            latency: None,
            error: None,
            band_error: None,
            recorded: RecordedSet::default(),
            early,
        })
    }

    /// Each slot's GPU results buffer, for the lit pass's sets.
    pub fn result_buffers(&self) -> Result<Vec<vk::DescriptorBufferInfo>, ViewerError> {
        Ok((0..FRAMES_IN_FLIGHT).map(|slot| self.picker.gpu_results(slot)).collect::<Result<_, _>>()?)
    }

    pub fn detail_status(&self) -> &DetailStatus {
        self.picker.detail_status()
    }

    /// Takes the results of the query set recorded in `slot`, if one was: the hover result
    /// becomes the hovered object (and selects, if that frame had a click); a band's result
    /// selects. With no hover pending and the cursor off the view, nothing is hovered.
    ///
    /// # Safety
    /// The fence of the frame that last recorded into `slot` has signalled.
    pub unsafe fn take_results(&mut self, slot: usize, frame: u64, scene: &Scene, objects: &ObjectTable, cursor_in_view: bool) -> Result<(), ViewerError> {
        let Some(pending) = self.pending[slot].take() else {
            if !cursor_in_view {
                self.set_hovered(None);
            }
            return Ok(());
        };
        // SAFETY: per the contract, the frame that recorded this slot has completed.
        let taken = unsafe { self.picker.take_results(slot) };
        // A failed take leaves the slot free (the picker took the pending set out first).
        let Some(Some(set)) = self.check(taken)? else { return Ok(()) };
        self.apply(&set, pending, frame, scene, objects, cursor_in_view);
        Ok(())
    }

    /// The same-frame path: records this frame's set (as [`Picking::record`]) into the slot's
    /// early command buffer, submits it with its fence, and waits for that fence (at most
    /// `SAME_FRAME_TIMEOUT`) to take the results now. On a timeout the set stays pending and
    /// is taken a round later by [`Picking::take_results`].
    ///
    /// # Safety
    /// The slot's previous frame has completed (its fence signalled: the early submission
    /// went before it on the queue); the draws' buffers outlive the submission.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn pick_same_frame(
        &mut self,
        ctx: &VulkanContext,
        slot: usize,
        frame: u64,
        request: &PickRequest<'_>,
        draws: &Arc<[PickDraw]>,
        queries: &FrameQueries,
        shown: (&Scene, &ObjectTable, bool),
    ) -> Result<(), ViewerError> {
        let (cmd, fence) = (self.early.commands.buffers()[slot], self.early.fences[slot]);
        let d = &ctx.device;
        // SAFETY: per the contract, the slot's early command buffer is idle.
        unsafe {
            d.reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty())?;
            d.begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT))?;
            self.record(cmd, slot, frame, request, draws, queries)?;
            d.end_command_buffer(cmd)?;
        }
        let Some(pending) = self.pending[slot] else { return Ok(()) };
        // SAFETY: the fence's last submission completed (see the contract); the command
        // buffer was recorded above.
        unsafe {
            d.reset_fences(&[fence])?;
            d.queue_submit(ctx.queue, &[vk::SubmitInfo::default().command_buffers(&[cmd])], fence)?;
        }
        // SAFETY: the fence is the one submitted above with the command buffer that recorded
        // this slot's set.
        match unsafe { self.picker.wait_results(slot, HostSignal::Fence(fence), SAME_FRAME_TIMEOUT) } {
            Err(PickError::TimedOut { .. }) => Ok(()),
            taken => {
                self.pending[slot] = None;
                if let Some(Some(set)) = self.check(taken)? {
                    let (scene, objects, cursor_in_view) = shown;
                    self.apply(&set, pending, frame, scene, objects, cursor_in_view);
                }
                Ok(())
            }
        }
    }

    /// Applies a taken set: the hover result becomes the hovered object (and selects, if its
    /// frame had a click); a released band's result selects.
    fn apply(&mut self, set: &FrameResults, pending: PendingSet, frame: u64, scene: &Scene, objects: &ObjectTable, cursor_in_view: bool) {
        self.error = None;
        self.latency = Some((frame - pending.frame, pending.at.elapsed().as_secs_f64() * 1e3));
        let hover = pending.hover.and_then(|i| set.pick(i)).map(|result| PickReport::new(result, scene, objects));
        if let (Some(mode), Some(report)) = (pending.click, hover.as_ref()) {
            println!("{}", self.selection.click(report, mode));
        }
        if hover.is_some() || !cursor_in_view {
            self.set_hovered(hover);
        }
        if let Some((i, add)) = pending.band {
            if let Some(QueryResult::Rect(rect)) = set.results.get(i) {
                self.band_error = None;
                for line in self.selection.band(&RectReport::new(rect, scene, objects), add) {
                    println!("{line}");
                }
            }
        }
    }

    /// The new hovered object; with tracing on, a line when the hovered object changes.
    fn set_hovered(&mut self, report: Option<PickReport>) {
        let key = |r: Option<&PickReport>| r.and_then(|r| r.hit.as_ref()).map(|h| (h.id, h.instance));
        if key(self.hovered.as_ref()) != key(report.as_ref()) {
            match report.as_ref().and_then(|r| r.hit.as_ref().map(|h| (r, h))) {
                Some((r, h)) => trace!("hovered: {} hit=({}, {})", describe_hit(h), r.x, r.y),
                None => trace!("hovered: nothing"),
            }
        }
        self.hovered = report;
    }

    /// Records this frame's query set (`queries`; `request` gives the camera and viewport)
    /// into `cmd` for frame `frame` in `slot`.
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass; the draws' buffers outlive its execution.
    pub unsafe fn record(
        &mut self,
        cmd: vk::CommandBuffer,
        slot: usize,
        frame: u64,
        request: &PickRequest<'_>,
        draws: &Arc<[PickDraw]>,
        queries: &FrameQueries,
    ) -> Result<(), ViewerError> {
        let hover = queries.hover.map(|pixel| match queries.hover_radius {
            0 => PickQuery::Point(pixel),
            // Thin objects in front of large surfaces are what a hover radius is for.
            radius => PickQuery::Radius { pixel, radius, snap: Snap::Thin },
        });
        // A released band selects; a dragged one is asked for its live set (GPU results).
        self.recorded = RecordedSet::default();
        let band = queries.band.or(queries.live_band).map(|b| PickQuery::Rect { rect: b.rect, mode: b.mode });
        // The hover first, then the band: at most two queries, in an array (no allocation).
        let mut set = [PickQuery::Point(UVec2::ZERO); 2];
        let mut len = 0;
        for query in [hover, band].into_iter().flatten() {
            set[len] = query;
            len += 1;
        }
        if len == 0 {
            return Ok(());
        }
        // SAFETY: per the contract.
        let recorded = unsafe { self.picker.record(cmd, slot, request, &set[..len], draws) };
        let mut band_index = band.map(|_| len - 1);
        let selects = queries.band.is_some();
        let recorded = match (recorded, band) {
            // The set was refused, which records nothing. Most likely the band's fault
            // (select-through unsupported, more objects than the table holds): its error goes
            // to the panel, and the hover goes ahead alone (if that fails too, its error is
            // shown as a pick error).
            (Err(e), Some(_)) if !matches!(e, PickError::DeviceLost) => {
                keep_for_panel(&mut self.band_error, Err::<(), _>(e), Some("box select error"))?;
                band_index = None;
                if hover.is_none() {
                    return Ok(());
                }
                // SAFETY: per the contract; the refused set recorded nothing.
                unsafe { self.picker.record(cmd, slot, request, &set[..1], draws) }
            }
            (recorded, _) => recorded,
        };
        // A refused set records nothing: the frame goes on without a pick.
        if self.check(recorded)?.is_some() {
            self.recorded = RecordedSet { hover: hover.is_some(), band: band_index.map(|i| i as u32) };
            self.pending[slot] = Some(PendingSet {
                hover: hover.map(|_| 0),
                click: queries.click.filter(|_| hover.is_some()),
                band: band_index.filter(|_| selects).zip(queries.band.map(|b| b.add)),
                frame,
                at: Instant::now(),
            });
        }
        Ok(())
    }

    /// Device loss is the caller's to handle; any other error is kept for the panel (and
    /// printed when it changes), and the frame goes on.
    fn check<T>(&mut self, outcome: Result<T, PickError>) -> Result<Option<T>, ViewerError> {
        keep_for_panel(&mut self.error, outcome, Some("pick error"))
    }

    /// The hit the markers show: the last clicked one while it is selected, else the hovered.
    pub fn shown_hit(&self) -> Option<&HitReport> {
        self.selection.clicked.as_ref().and_then(|r| r.hit.as_ref()).or(self.hovered.as_ref().and_then(|r| r.hit.as_ref()))
    }
}

/// `outcome`'s value, or `None` with its error kept in `error` for the panel (printed with
/// `announce` when it changes); device loss is returned, for the caller to recover from.
pub(super) fn keep_for_panel<T>(error: &mut Option<String>, outcome: Result<T, PickError>, announce: Option<&str>) -> Result<Option<T>, ViewerError> {
    match outcome {
        Ok(v) => Ok(Some(v)),
        Err(PickError::DeviceLost) => Err(PickError::DeviceLost.into()),
        Err(e) => {
            let message = e.to_string();
            if let Some(what) = announce.filter(|_| error.as_deref() != Some(message.as_str())) {
                println!("{what}: {message}");
            }
            *error = Some(message);
            Ok(None)
        }
    }
}
