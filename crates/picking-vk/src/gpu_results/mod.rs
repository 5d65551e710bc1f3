//! GPU results: a frame's answers in a buffer per slot, for the host's own shaders to read
//! later in the same command buffer: 0 frames of latency, no CPU wait, no readback. What the
//! CPU knows while recording it writes into the slot's upload buffer; a compute pass right
//! after the hit pass carries that over (a copy of it does, for a set of rectangles alone)
//! and adds the point and radius hits, and a copy the rectangle table's pixel counts. Turned on by
//! [`PickerConfig::gpu_results`](crate::PickerConfig::gpu_results); the host binds
//! [`Picker::gpu_results`](crate::Picker::gpu_results) and compiles [`GPU_RESULTS_GLSL`] with
//! its shaders. The CPU results of the same frame (taken later as always) say the same.
//!
//! A host that tints the hovered object in its lit pass (README.md shows this block, and the
//! GLSL side that goes with it):
//! ```no_run
//! # use ash::vk;
//! # use picking_vk::*;
//! # fn demo(picker: &mut Picker, sets: &[vk::DescriptorSet], slot: usize, cmd: vk::CommandBuffer,
//! #         request: PickRequest<'_>, cursor: glam::UVec2, draws: Vec<PickDraw>) -> Result<(), PickError> {
//! let config = PickerConfig::default().with_gpu_results(true);
//! // Once per slot: bind the slot's results buffer as set 2, binding 0 of the lit pipeline.
//! let info = [picker.gpu_results(slot)?];
//! let write = vk::WriteDescriptorSet::default().dst_set(sets[slot]).dst_binding(0)
//!     .descriptor_type(vk::DescriptorType::STORAGE_BUFFER).buffer_info(&info);
//! // Each frame, in the frame's command buffer: the pick, then the lit pass that reads it.
//! // SAFETY: as for every pick: `cmd` records outside a render pass, the draws' buffers outlive it.
//! unsafe { picker.record(cmd, slot, &request, &[PickQuery::Point(cursor)], &draws) }?;
//! # let _ = (config, write);
//! # Ok(()) }
//! ```

mod kit;
pub(crate) mod layout;
mod record;
mod upload;

pub(crate) use kit::{GpuResultsKit, Scratch, SharedInputs};
pub(crate) use upload::{Upload, UploadExtent};

pub use crate::request::result_readers::ResultReaders;

/// The GLSL include that reads a slot's GPU results: `pick_hit(query)`,
/// `pick_is_hit(query, id, instance)`, `pick_is_hovered(id, instance)` and
/// `pick_in_rect(query, id, instance)`, over a std430 buffer whose layout it documents. Define
/// `PICK_RESULTS_SET` and `PICK_RESULTS_BINDING` before including it (both default to 0). A
/// non-instanced object's instance is `PICK_NO_INSTANCE` (`0xFFFFFFFF`).
pub const GPU_RESULTS_GLSL: &str = include_str!("../../glsl/pick_results.glsl");
