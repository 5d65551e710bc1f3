//! [`PickCommands`]: a recorded pick, submitted only together with the transitions that make
//! its reads known to wgpu, and the signal that tells the picker when it completed.

use crate::error::{captured, WgpuPickError};
use picking_vk::PickTicket;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

/// Where a slot's pick stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SlotState {
    /// Recorded; its commands are held by the app.
    Recorded,
    /// Submitted; wgpu has not yet reported it done.
    Submitted,
    /// Its submission completed.
    Done,
    /// Its commands were dropped unsubmitted.
    Dropped,
}

/// A slot's pick state, shared by the picker, its [`PickCommands`] and wgpu's completion
/// callback.
#[derive(Debug, Default)]
pub(crate) struct SlotSignal {
    state: AtomicU8,
    submission: Mutex<Option<wgpu::SubmissionIndex>>,
}

const RECORDED: u8 = 0;
const SUBMITTED: u8 = 1;
const DONE: u8 = 2;
const DROPPED: u8 = 3;

impl SlotSignal {
    pub(crate) fn state(&self) -> SlotState {
        match self.state.load(Ordering::Acquire) {
            RECORDED => SlotState::Recorded,
            SUBMITTED => SlotState::Submitted,
            DONE => SlotState::Done,
            _ => SlotState::Dropped,
        }
    }

    /// The submission that carried the pick.
    pub(crate) fn submission(&self) -> Option<wgpu::SubmissionIndex> {
        self.submission.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The pick's submission completed.
    pub(crate) fn complete(&self) {
        self.state.store(DONE, Ordering::Release);
    }
}

/// One recorded pick: wgpu's transitions of the resources it reads, and the raw pick. Submit it
/// with [`PickCommands::submit`], once per frame that picks; dropping it unsubmitted loses
/// this pick only.
///
/// A pick whose picker was dropped first is not submitted: [`PickCommands::submit`] then
/// submits only the app's `before` and `after` (the pick's commands name the picker's
/// pipelines, images and buffers, which are gone).
#[must_use = "submit the pick's commands, or the pick is lost"]
pub struct PickCommands {
    /// Both command buffers, `None` once submitted.
    buffers: Option<(wgpu::CommandBuffer, wgpu::CommandBuffer)>,
    device: wgpu::Device,
    queue: wgpu::Queue,
    ticket: PickTicket,
    signal: Arc<SlotSignal>,
    /// Whether the picker that recorded the pick still lives: held locked while submitting, so
    /// the picker's drop (which clears it, then waits for the device) follows every
    /// submission of its picks.
    picker_alive: Arc<Mutex<bool>>,
}

impl PickCommands {
    pub(crate) fn new(
        (transitions, pick): (wgpu::CommandBuffer, wgpu::CommandBuffer),
        (device, queue): (wgpu::Device, wgpu::Queue),
        ticket: PickTicket,
        signal: Arc<SlotSignal>,
        picker_alive: Arc<Mutex<bool>>,
    ) -> Self {
        PickCommands { buffers: Some((transitions, pick)), device, queue, ticket, signal, picker_alive }
    }

    /// Which slot and frame the results will carry (for [`crate::WgpuPicker::wait_results`]
    /// and to match [`picking_vk::FrameResults::frame`]).
    pub fn ticket(&self) -> PickTicket {
        self.ticket
    }

    /// Submits the pick to the picker's queue in one submission with the app's work: `before`
    /// (what writes the buffers the pick reads, e.g. a compute pass that moves instances, or
    /// the frame's scene pass), then the pick, then `after` (passes that need nothing from
    /// the pick, or that read its GPU results: [`crate::WgpuPicker::gpu_results`]). Returns the
    /// submission's index. Where the picker was dropped already, the pick is left out (and
    /// lost) and `before` and `after` are submitted alone.
    ///
    /// Where wgpu refuses the submission (a buffer the pick or the app's work uses was
    /// destroyed since recording, an invalid command buffer of the app's, ...), none of it
    /// runs: the error is [`WgpuPickError::Submit`], and the pick is lost as if dropped. An
    /// out-of-memory or internal error is [`WgpuPickError::SubmitFailed`]. Either is caught in
    /// error scopes the bridge pushes on the calling thread, so the app's scopes there do not
    /// see it; and where the pick was in the submission, `submit` then waits for the device to
    /// be idle before it returns (wgpu may report an error after its own submit), which also
    /// runs wgpu's callbacks.
    pub fn submit(
        mut self,
        before: impl IntoIterator<Item = wgpu::CommandBuffer>,
        after: impl IntoIterator<Item = wgpu::CommandBuffer>,
    ) -> Result<wgpu::SubmissionIndex, WgpuPickError> {
        let (transitions, pick) = self.buffers.take().expect("PickCommands are submitted once: submit takes them by value");
        let alive = self.picker_alive.lock().unwrap_or_else(|e| e.into_inner());
        if !*alive {
            self.signal.state.store(DROPPED, Ordering::Release);
            let (index, refused) = captured(&self.device, || self.queue.submit(before.into_iter().chain(after)));
            return refused.map_or(Ok(index), Err);
        }
        let (index, refused) = captured(&self.device, || self.queue.submit(before.into_iter().chain([transitions, pick]).chain(after)));
        drop(alive);
        if let Some(e) = refused {
            // Nothing of it ran, but for a device error wgpu may report after its own submit:
            // the slot is freed as for dropped commands once the device is idle (or lost), so
            // nothing the pick names is reused while it might still run.
            let _ = self.device.poll(wgpu::PollType::wait_indefinitely());
            self.signal.state.store(DROPPED, Ordering::Release);
            return Err(e);
        }
        *self.signal.submission.lock().unwrap_or_else(|e| e.into_inner()) = Some(index.clone());
        self.signal.state.store(SUBMITTED, Ordering::Release);
        // Called once everything submitted so far (this submission included) completed.
        let signal = Arc::clone(&self.signal);
        self.queue.on_submitted_work_done(move || signal.complete());
        Ok(index)
    }
}

impl Drop for PickCommands {
    fn drop(&mut self) {
        if self.buffers.is_some() {
            self.signal.state.store(DROPPED, Ordering::Release);
        }
    }
}
