//! What the bridge refuses, beside the picker's own [`PickError`]s.

use picking_vk::PickError;

/// An error of the wgpu bridge.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WgpuPickError {
    /// The adapter or device runs on a backend other than Vulkan: picking-vk records Vulkan
    /// commands and needs wgpu's Vulkan objects.
    #[error("picking-vk-wgpu needs wgpu's Vulkan backend; this adapter runs on {backend}")]
    NotVulkan {
        /// The backend's name, as wgpu spells it.
        backend: String,
    },
    /// The picker refused (unsupported device, bad input, lost device, ...).
    #[error(transparent)]
    Pick(#[from] PickError),
    /// wgpu refused to open the device.
    #[error("wgpu could not create the device: {0}")]
    CreateDevice(String),
    /// A buffer a draw names lacks the usage the pick reads it with.
    #[error("the {what} buffer lacks wgpu::BufferUsages::{usage}")]
    BufferUsage {
        /// Which buffer of the draw (vertex, index, instance).
        what: &'static str,
        /// The usage it needs.
        usage: &'static str,
    },
    /// A draw's buffer was destroyed, or a range lies outside it.
    #[error("the {what} buffer: {reason}")]
    BufferRange {
        /// Which buffer of the draw.
        what: &'static str,
        /// What is wrong with it, in words.
        reason: String,
    },
    /// A vertex format the pick pass cannot read positions in.
    #[error("positions in {0:?} cannot be picked: use Float32x3, Float16x4, Snorm16x4, Unorm16x4, Snorm8x4 or Unorm8x4")]
    PositionFormat(wgpu::VertexFormat),
    /// The next slot in turn (slots are used round robin) holds a pick whose commands were
    /// recorded but neither submitted nor dropped: submit (or drop) [`crate::PickCommands`]
    /// before recording more.
    #[error("the next of the {frames_in_flight} slots holds unsubmitted pick commands")]
    SlotsFull {
        /// The picker's frames in flight.
        frames_in_flight: usize,
    },
    /// The pick's commands were never submitted: [`crate::PickCommands::submit`] them first.
    #[error("the pick's commands have not been submitted")]
    NotSubmitted,
    /// wgpu refused the draws' resources (another device's, destroyed, or the like); nothing
    /// was recorded.
    #[error("wgpu refused the pick's resources: {0}")]
    Wgpu(String),
    /// wgpu refused a submission of [`crate::PickCommands::submit`] (a buffer in it was
    /// destroyed after recording, one of the app's command buffers is invalid, or the like):
    /// nothing in it ran, neither the pick (which is lost) nor the app's `before` and `after`.
    #[error("wgpu refused the submission, none of which ran: {0}")]
    Submit(String),
    /// wgpu reported an out-of-memory or internal error at a submission of
    /// [`crate::PickCommands::submit`] (wgpu may report such an error after its own submit, so
    /// some of it may have run); picking cannot go on.
    #[error("wgpu failed the submission: {0}")]
    SubmitFailed(String),
    /// The GPU did not finish a pick within the time given.
    #[error("the pick's submission did not complete within the timeout")]
    Timeout,
    /// wgpu reported the device lost, or another failure while polling it.
    #[error("wgpu could not poll the device: {0}")]
    Poll(String),
    /// A [`crate::PickingDevice`] whose `device` or `queue` was replaced after
    /// [`crate::request_device`] opened them: picking's extensions and features were enabled on
    /// the device it opened, and only there.
    #[error("the PickingDevice's {0} is not the one request_device opened")]
    ForeignDevice(&'static str),
}

impl WgpuPickError {
    /// A wgpu device, buffer or encoder whose Vulkan objects are not there: another backend.
    pub(crate) fn not_vulkan() -> Self {
        WgpuPickError::NotVulkan { backend: "a backend other than Vulkan".into() }
    }

    /// Whether picking can go on after this error (the pick it concerned is lost, nothing else).
    pub fn is_recoverable(&self) -> bool {
        match self {
            WgpuPickError::Pick(e) => e.is_recoverable(),
            WgpuPickError::NotVulkan { .. } | WgpuPickError::CreateDevice(_) | WgpuPickError::Poll(_) | WgpuPickError::SubmitFailed(_) => false,
            _ => true,
        }
    }
}

/// Runs `work` (wgpu calls on `device`) in a validation error scope and returns its value, or
/// what wgpu refused as [`WgpuPickError::Wgpu`]. `what` names the work should wgpu not answer.
pub(crate) fn validated<T>(device: &wgpu::Device, what: &str, work: impl FnOnce() -> T) -> Result<T, WgpuPickError> {
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let value = work();
    match popped(scope) {
        Ok(None) => Ok(value),
        Ok(Some(e)) => Err(WgpuPickError::Wgpu(e)),
        Err(()) => Err(WgpuPickError::Wgpu(format!("wgpu did not report on {what}"))),
    }
}

/// Runs `work` (a submission on `device`) in error scopes of every filter (validation, out of
/// memory, internal) and returns its value with what wgpu reported in them, if anything: a
/// refusal ([`WgpuPickError::Submit`], from the validation scope: nothing ran) or a failure
/// ([`WgpuPickError::SubmitFailed`]). Errors the app's own scopes on this thread would have
/// caught come here instead.
pub(crate) fn captured<T>(device: &wgpu::Device, work: impl FnOnce() -> T) -> (T, Option<WgpuPickError>) {
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let internal = device.push_error_scope(wgpu::ErrorFilter::Internal);
    let value = work();
    // Popped innermost first, as wgpu requires.
    let unanswered = || Some("wgpu did not report on the submission".to_string());
    let failed = [popped(internal), popped(memory)].into_iter().find_map(|e| e.unwrap_or_else(|()| unanswered()));
    let refused = popped(validation).unwrap_or_else(|()| unanswered());
    (value, failed.map(WgpuPickError::SubmitFailed).or(refused.map(WgpuPickError::Submit)))
}

/// The error `scope` caught, as text (`Err` where wgpu did not answer at once: wgpu-core's
/// future is ready when first polled).
fn popped(scope: wgpu::ErrorScopeGuard) -> Result<Option<String>, ()> {
    let mut future = std::pin::pin!(scope.pop());
    match std::future::Future::poll(future.as_mut(), &mut std::task::Context::from_waker(std::task::Waker::noop())) {
        std::task::Poll::Ready(e) => Ok(e.map(|e| e.to_string())),
        std::task::Poll::Pending => Err(()),
    }
}
