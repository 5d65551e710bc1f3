//! GPU results: a frame's answers in a buffer per slot, for the host's own shaders to read
//! later in the same command buffer: 0 frames of latency, no CPU wait, no readback. What the
//! CPU knows while recording it writes there itself; a compute pass right after the hit pass
//! adds the point and radius hits, and a copy the rectangle table's pixel counts. Turned on by
//! [`PickerConfig::gpu_results`](crate::PickerConfig::gpu_results); the host binds
//! [`Picker::gpu_results`](crate::Picker::gpu_results) and compiles [`GPU_RESULTS_GLSL`] with
//! its shaders. The CPU results of the same frame (taken later as always) say the same.

mod kit;
pub(crate) mod layout;
mod record;

pub(crate) use kit::{GpuResultsKit, Scratch, SharedInputs};

pub use crate::request::result_readers::ResultReaders;

/// The GLSL include that reads a slot's GPU results: `pick_hit(query)`,
/// `pick_is_hit(query, id, instance)`, `pick_is_hovered(id, instance)` and
/// `pick_in_rect(query, id, instance)`, over a std430 buffer whose layout it documents. Define
/// `PICK_RESULTS_SET` and `PICK_RESULTS_BINDING` before including it (both default to 0). A
/// non-instanced object's instance is `PICK_NO_INSTANCE` (`0xFFFFFFFF`).
pub const GPU_RESULTS_GLSL: &str = include_str!("../../glsl/pick_results.glsl");
