//! picking-vk in a frame loop: the viewer's whole integration of the picker.
//!
//! Once, create a [`Picker`] with a slot per frame in flight. Every frame, in slot
//! `frame % FRAMES_IN_FLIGHT`, right after waiting on that slot's fence (as the loop does
//! anyway before reusing its command buffer): [`Picking::take_result`] takes the result of the
//! pick recorded there a round ago; then [`Picking::record`] records this frame's pick at the
//! cursor, `PickRequest::new(pixel, viewport, view, projection)`, into the frame's command
//! buffer, which the loop submits. The latest result is the hovered object; the result of a
//! frame with a click is the selection. Nothing waits on the GPU for picking, and nothing is
//! allocated per pick. (`frame_loop.rs` shows where the two calls sit in the frame.)

use super::FRAMES_IN_FLIGHT;
use crate::objects::ObjectTable;
use crate::pick_report::{HitReport, PickReport};
use crate::scene::Scene;
use crate::ViewerError;
use ash::vk;
use picking_vk::{DetailMode, DetailStatus, PickDraw, PickError, PickRequest, Picker, PickerConfig};
use picking_vk_context::VulkanContext;
use std::sync::Arc;
use std::time::Instant;

pub struct Picking {
    picker: Picker,
    /// Per slot: the pick recorded there and not taken yet.
    pending: [Option<PendingPick>; FRAMES_IN_FLIGHT],
    /// The object under the cursor: the latest result.
    pub hovered: Option<PickReport>,
    /// The object last clicked.
    pub selected: Option<PickReport>,
    /// Frames and milliseconds from recording the latest result's pick to taking it.
    pub latency: Option<(u64, f64)>,
    /// The latest pick error, until a pick succeeds again. Pick errors are shown, never
    /// fatal: the next frame picks again. Device loss alone is returned (see `recovery`).
    pub error: Option<String>,
}

#[derive(Clone, Copy)]
struct PendingPick {
    click: bool,
    frame: u64,
    at: Instant,
}

impl Picking {
    /// `detail`: use the detail attachment (face, barycentrics, normal, UV) where the device has it.
    pub fn new(ctx: &VulkanContext, detail: bool) -> Result<Self, ViewerError> {
        let detail = if detail { DetailMode::IfEnabled } else { DetailMode::Off };
        let config = PickerConfig::default().with_frames_in_flight(FRAMES_IN_FLIGHT).with_detail(detail);
        // SAFETY: the context's handles belong together and outlive the picker (`Gfx` drops first).
        let picker = unsafe { Picker::new(ctx.host_device(), config) }?;
        Ok(Picking { picker, pending: [None; FRAMES_IN_FLIGHT], hovered: None, selected: None, latency: None, error: None })
    }

    pub fn detail_status(&self) -> &DetailStatus {
        self.picker.detail_status()
    }

    /// Takes the result of the pick recorded in `slot`, if one was: it becomes the hovered
    /// object, and the selection if that frame had a click. With no pick pending and the
    /// cursor off the view, nothing is hovered.
    ///
    /// # Safety
    /// The fence of the frame that last recorded into `slot` has signalled.
    pub unsafe fn take_result(&mut self, slot: usize, frame: u64, scene: &Scene, objects: &ObjectTable, cursor_in_view: bool) -> Result<(), ViewerError> {
        let Some(pending) = self.pending[slot].take() else {
            if !cursor_in_view {
                self.hovered = None;
            }
            return Ok(());
        };
        // SAFETY: per the contract, the frame that recorded this slot has completed.
        let taken = unsafe { self.picker.take_result(slot) };
        // A failed take leaves the slot free (the picker took the pending pick out first).
        let Some(Some(result)) = self.check(taken)? else { return Ok(()) };
        self.error = None;
        let report = PickReport::new(&result, scene, objects);
        self.latency = Some((frame - pending.frame, pending.at.elapsed().as_secs_f64() * 1e3));
        if pending.click {
            match &report.hit {
                Some(h) => println!(
                    "selected: node={:?} name={:?} instance={:?} pixel=({}, {})",
                    h.node,
                    h.node_name.as_deref().map(crate::gltf_load::printable),
                    h.instance,
                    report.x,
                    report.y
                ),
                None => println!("selected: nothing at ({}, {})", report.x, report.y),
            }
            self.selected = report.hit.is_some().then(|| report.clone());
        }
        self.hovered = Some(report);
        Ok(())
    }

    /// Records `request` (this frame's pick, at the cursor) into `cmd` for frame `frame` in
    /// `slot`; `click`: its result becomes the selection.
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
        click: bool,
    ) -> Result<(), ViewerError> {
        // SAFETY: per the contract.
        let recorded = unsafe { self.picker.record_shared(cmd, slot, request, draws) };
        // A refused request records nothing: the frame goes on without a pick.
        if self.check(recorded)?.is_some() {
            self.pending[slot] = Some(PendingPick { click, frame, at: Instant::now() });
        }
        Ok(())
    }

    /// Device loss is the caller's to handle; any other error is kept for the panel (and
    /// printed when it changes), and the frame goes on.
    fn check<T>(&mut self, outcome: Result<T, PickError>) -> Result<Option<T>, ViewerError> {
        keep_for_panel(&mut self.error, outcome, Some("pick error"))
    }

    /// The hit the markers show: the selection, else the hovered object.
    pub fn shown_hit(&self) -> Option<&HitReport> {
        self.selected.as_ref().and_then(|r| r.hit.as_ref()).or(self.hovered.as_ref().and_then(|r| r.hit.as_ref()))
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
