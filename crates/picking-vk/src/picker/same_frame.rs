//! Results on the CPU in the frame that asked for them: the host submits the pick in an early
//! submission of its own and, later in the same frame, the picker waits on what that
//! submission signals (its fence, or a timeline semaphore value), for at most a timeout, and
//! takes the results. Never a device-wide or queue wait: only the host's own signal.

use super::Picker;
use crate::error::{PickError, Requirement};
use crate::resolve::query::FrameResults;
use ash::vk;
use std::time::Duration;

/// What the host's submission of a pick signals once the pick's GPU work has completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostSignal {
    /// A fence the submission signals.
    Fence(vk::Fence),
    /// A timeline semaphore the submission signals with `value` (a device of Vulkan 1.2 or
    /// later, with `timelineSemaphore` enabled).
    Timeline {
        /// The semaphore.
        semaphore: vk::Semaphore,
        /// The value that says the pick's work completed.
        value: u64,
    },
}

impl Picker {
    /// The same-frame path: waits at most `timeout` for `signal`, then takes `slot`'s results
    /// as [`Picker::take_results`] does. With nothing pending in `slot` it returns `Ok(None)`
    /// at once. A frame loop: record the pick into a command buffer of its own, submit it
    /// first with a fence (or a timeline value), record and submit the rest of the frame,
    /// then call this where the frame needs the answer (the panel, a tool's hover); the
    /// ring path ([`Picker::take_results`] a frame or more later) works beside it, slot by
    /// slot.
    ///
    /// The wait polls the signal for up to 0.3 ms before it sleeps in the driver's wait, so an
    /// answer due within a fraction of a millisecond is not delayed by the thread's wake-up.
    ///
    /// Errors: [`PickError::TimedOut`] when the signal did not come within `timeout`
    /// (recoverable: the frame stays pending; wait again, or, if its submission was dropped,
    /// [`Picker::cancel`] the slot); [`PickError::DeviceLost`] (sticky; nothing is read);
    /// [`PickError::Unsupported`] for a timeline semaphore on a device below Vulkan 1.2;
    /// [`PickError::InvalidSlot`]; then whatever [`Picker::take_results`] returns.
    ///
    /// # Safety
    /// `signal` is a fence or timeline semaphore of the picker's device, and once it is
    /// signaled (the fence, or the semaphore at `value` or later) the GPU work of the command
    /// buffer that last recorded into `slot` has completed: its submission signals it, or
    /// work ordered after that submission does.
    pub unsafe fn wait_results(&mut self, slot: usize, signal: HostSignal, timeout: Duration) -> Result<Option<FrameResults>, PickError> {
        let frames_in_flight = self.slots.len();
        let pending = self.slots.get(slot).ok_or(PickError::InvalidSlot { slot, frames_in_flight })?.pending.as_ref().map(|p| p.frame);
        let Some(frame) = pending.filter(|_| !self.device_lost) else {
            // Nothing to wait for, or a lost device: taking says which (and reads nothing).
            // SAFETY: nothing is read from the slot either way.
            return unsafe { self.take_results(slot) };
        };
        if let HostSignal::Timeline { .. } = signal {
            if !self.core_timeline_wait {
                return Err(PickError::Unsupported { missing: vec![Requirement::ApiVersion(1, 2)] });
            }
        }
        // SAFETY: the signal is this device's (the caller's contract).
        let waited = unsafe { wait_for(&self.kit.memory.device, signal, timeout) };
        match waited {
            Ok(()) => {}
            Err(vk::Result::TIMEOUT) => return Err(PickError::TimedOut { slot, frame, timeout }),
            Err(vk::Result::ERROR_DEVICE_LOST) => return self.note_loss(Err(PickError::DeviceLost)),
            Err(e) => return Err(PickError::Vulkan(e)),
        }
        // SAFETY: the signal came, so the slot's GPU work completed (the caller's contract).
        unsafe { self.take_results(slot) }
    }
}

/// How long [`wait_for`] polls the signal before it sleeps in the driver's wait: a pick is
/// done within a fraction of a millisecond when the queue is free, and a thread put to sleep
/// may wake hundreds of microseconds after its signal.
const POLL: Duration = Duration::from_micros(300);

/// Waits at most `timeout` for `signal`: polls it for up to [`POLL`], then blocks in
/// `vkWaitForFences` / `vkWaitSemaphores` for the rest.
///
/// # Safety
/// `signal` is a fence or timeline semaphore of `device`; for a timeline, the device provides
/// Vulkan 1.2's core semaphore calls.
unsafe fn wait_for(device: &ash::Device, signal: HostSignal, timeout: Duration) -> Result<(), vk::Result> {
    let start = std::time::Instant::now();
    let poll_until = timeout.min(POLL);
    loop {
        // SAFETY: the caller's contract.
        let done = unsafe {
            match signal {
                HostSignal::Fence(fence) => device.get_fence_status(fence)?,
                HostSignal::Timeline { semaphore, value } => device.get_semaphore_counter_value(semaphore)? >= value,
            }
        };
        if done {
            return Ok(());
        }
        if start.elapsed() >= poll_until {
            break;
        }
        std::hint::spin_loop();
    }
    let nanos = u64::try_from(timeout.saturating_sub(start.elapsed()).as_nanos()).unwrap_or(u64::MAX);
    // SAFETY: the caller's contract.
    unsafe {
        match signal {
            HostSignal::Fence(fence) => device.wait_for_fences(&[fence], true, nanos),
            HostSignal::Timeline { semaphore, value } => {
                let (semaphores, values) = ([semaphore], [value]);
                device.wait_semaphores(&vk::SemaphoreWaitInfo::default().semaphores(&semaphores).values(&values), nanos)
            }
        }
    }
}
