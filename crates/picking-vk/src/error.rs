//! The crate's one error type.

use ash::vk;

/// Everything that can go wrong in `picking-vk`. The library never panics on bad input or a
/// Vulkan failure; it returns one of these and leaves its state as it was.
#[derive(Debug, thiserror::Error)]
pub enum PickError {
    /// A Vulkan call failed (other than device loss).
    #[error("Vulkan call failed: {0}")]
    Vulkan(vk::Result),
    /// The device was lost; the picker and every pending result are unusable.
    #[error("the Vulkan device was lost")]
    DeviceLost,
    /// gpu-allocator could not provide memory.
    #[error("GPU memory allocation failed: {0}")]
    Alloc(#[from] gpu_allocator::AllocationError),
    /// The device or its enabled features cannot run what was asked; lists every unmet requirement.
    #[error("unsupported: {}", missing.join("; "))]
    Unsupported { missing: Vec<String> },
    /// Object ID 0 is reserved for "nothing under the cursor".
    #[error("object ID 0 is reserved for 'nothing picked'")]
    ZeroId,
    /// A draw description is inconsistent (counts out of range, bad stride, non-finite matrix...).
    #[error("draw #{index}: {reason}")]
    InvalidDraw { index: usize, reason: String },
    /// The request itself is unusable (non-finite or singular matrices, empty viewport...).
    #[error("invalid pick request: {0}")]
    InvalidRequest(String),
    /// The requested pixel does not lie inside the view.
    #[error("pixel ({x}, {y}) lies outside the view")]
    OutsideView { x: i64, y: i64 },
    /// A frame slot index past the number of frames in flight the picker was made for.
    #[error("frame slot {slot} does not exist: the picker has {frames_in_flight} slots")]
    InvalidSlot { slot: usize, frames_in_flight: usize },
    /// The shared allocator's mutex was poisoned by a panic elsewhere in the host.
    #[error("the shared gpu-allocator mutex is poisoned")]
    AllocatorPoisoned,
}

impl From<vk::Result> for PickError {
    fn from(result: vk::Result) -> Self {
        if result == vk::Result::ERROR_DEVICE_LOST {
            PickError::DeviceLost
        } else {
            PickError::Vulkan(result)
        }
    }
}
