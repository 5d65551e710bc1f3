//! # picking-vk-wgpu
//!
//! [picking-vk](picking_vk) for wgpu applications on wgpu's Vulkan backend: pixel-exact
//! object picking of the app's own wgpu buffers, recorded beside its frame.
//!
//! | picking-vk-wgpu | wgpu | picking-vk | ash  | gpu-allocator |
//! |-----------------|------|------------|------|---------------|
//! | 0.2             | 30   | 0.2        | 0.38 | 0.28          |
//!
//! ## Use
//! 1. Open the device with [`request_device`] instead of `Adapter::request_device`: it adds
//!    what picking needs to wgpu's Vulkan device ([`offered`] says what the adapter has), and
//!    refuses other backends by name.
//! 2. Create a [`WgpuPicker`] on it.
//! 3. Describe the scene's draws as [`WgpuDraw`]s, built from the same `wgpu::Buffer`s and
//!    ranges the app's render pass draws (vertex, index and instance buffers).
//! 4. Each frame, [`WgpuPicker::record`] a query set and [`PickCommands::submit`] it with the
//!    frame's command buffers; take results a frame later with
//!    [`WgpuPicker::poll_results`] (never waits) or in the same frame with
//!    [`WgpuPicker::wait_results`] (a bounded wait on that submission).
//!
//! The camera is the app's: `PickRequest::new(`[`viewport`]`(width, height), view, projection)`
//! with wgpu's clip space (y up, depth 0..1), which [`viewport`] maps to Vulkan's.
//!
//! The steps in code (README.md shows this block):
//! ```no_run
//! use picking_vk_wgpu::{picking_vk::*, request_device, offered, viewport, VertexPositions, WgpuDraw, WgpuPicker};
//! # fn demo(adapter: wgpu::Adapter, desc: wgpu::DeviceDescriptor<'_>, vertex_buffer: wgpu::Buffer,
//! #         index_buffer: wgpu::Buffer, index_count: u32, model: glam::Mat4, width: u32, height: u32,
//! #         view: glam::Mat4, projection: glam::Mat4, cursor: glam::UVec2,
//! #         compute_pass: wgpu::CommandBuffer, scene_pass: wgpu::CommandBuffer)
//! #         -> Result<(), picking_vk_wgpu::WgpuPickError> {
//! // 1. Instead of adapter.request_device(&desc): the same device, with picking's extensions.
//! let gpu = request_device(&adapter, &desc, offered(&adapter)?)?; // gpu.device, gpu.queue
//! let mut picker = WgpuPicker::new(&gpu, PickerConfig::default().with_frames_in_flight(2))?;
//! // 2. The draws, from the buffers the app's render pass draws.
//! let positions = VertexPositions { array_stride: 24, ..VertexPositions::tight(&vertex_buffer) };
//! let draws = vec![WgpuDraw::indexed(ObjectId::new(7)?, positions, &index_buffer, 0, wgpu::IndexFormat::Uint32, 0..index_count, 0)?.with_model(model)];
//! // 3. Each frame: record, submit with the frame's command buffers, take results.
//! let request = PickRequest::new(viewport(width, height), view, projection);
//! // SAFETY: no thread destroys (`destroy()`) the draws' buffers while this call runs.
//! let pick = unsafe { picker.record(&request, &[PickQuery::Point(cursor)], &draws) }?;
//! pick.submit([compute_pass], [scene_pass])?; // one queue.submit: compute, the pick, the scene
//! for results in picker.poll_results()? { /* a frame later, never waits */ }
//! # Ok(()) }
//! ```
//!
//! ## What the bridge does for the app
//! - wgpu 28 and later forbid raw Vulkan commands on an encoder that records wgpu commands, so
//!   each pick is two command buffers of its own: wgpu's transitions of every buffer and
//!   texture the pick reads (to `VERTEX`, `INDEX`, `UNIFORM`, `STORAGE_READ_ONLY` or
//!   `RESOURCE`), then the raw pick. [`PickCommands::submit`] is the only way
//!   to submit them, together and in that order: wgpu then orders the app's earlier writes
//!   before the pick and its later writes after it.
//! - Each slot keeps clones of the buffers its pick reads until wgpu reports the submission
//!   done (`Queue::on_submitted_work_done`); only then are its results read.
//! - The picker is dropped after every submission completed, before the device.
//!
//! ## Safety
//! Every function is safe but two:
//! - [`WgpuPicker::hook_program`], whose GLSL is compiled as it is (an array index out of
//!   bounds in it is undefined behaviour, which wgpu's checks of WGSL would have caught);
//! - [`WgpuPicker::record`], during which no resource the draws name may be destroyed with
//!   `destroy()` on another thread: wgpu's API cannot hold its lock across the check that a
//!   resource lives and the raw recording that names its handle.
//!
//! The unsafe calls inside (wgpu's `as_hal` accessors, the device creation callback,
//! `Picker::new`, `Picker::record`, `Picker::take_results`) state at each call which of their
//! contracts the bridge meets and how: handles used only while wgpu's guards live (a hook
//! set's descriptors are written each under its resource's guard) or, in `record`, under its
//! caller's contract; buffers only from live `wgpu::Buffer`s with the right usage and byte
//! ranges inside them, one queue, results taken only after completion. Every resource a pick
//! or a hook set names is first validated by wgpu (its device, usage and liveness, in an
//! error scope) before its raw handle is recorded or written. Index values are read under
//! `robustBufferAccess`, which [`request_device`] requires (wgpu enables it wherever offered).
//!
//! ## GPU results in WGSL
//! With `PickerConfig::with_gpu_results(true)`, [`WgpuPicker::gpu_results`] is each slot's
//! results buffer as a `wgpu::Buffer` the app binds, and [`gpu_results_wgsl`] the WGSL that
//! reads it: the app's passes submitted after the pick (`after` of [`PickCommands::submit`])
//! tint what the frame's own queries found, with no CPU wait and no readback.
//!
//! ## Hooks
//! [`WgpuPicker::hook_program`] (`unsafe`: the GLSL indexes its arrays in bounds) makes a
//! run-time GLSL hook program (crate feature `hooks`)
//! whose set the bridge lays out from [`HookBindingKind`]s; [`WgpuDraw::with_hooks`] gives a
//! draw its set, written from the app's wgpu buffers and texture views
//! ([`HookResource`]), and its per-vertex attribute from a wgpu vertex buffer.
//!
//! Not offered through wgpu: wide lines and points, and dynamic rendering (see
//! [`BRIDGE_FEATURES`]); deformation and contributors, which need the app's raw pipelines.

mod buffers;
mod commands;
mod device;
mod draw;
mod error;
mod gpu_results;
mod hooks;
mod picker;

pub use commands::PickCommands;
pub use device::{offered, request_device, PickingDevice, BRIDGE_FEATURES};
pub use draw::{InstanceTransforms, VertexPositions, WgpuDraw};
pub use error::WgpuPickError;
pub use gpu_results::{gpu_results_wgsl, GPU_RESULTS_WGSL};
pub use hooks::{HookAttributeSource, HookBindingKind, HookResource, WgpuHookProgram};
pub use picker::WgpuPicker;
/// picking-vk itself: queries, requests, results.
pub use picking_vk;

/// The Vulkan viewport that sees a `width` x `height` wgpu target as wgpu draws it: wgpu's
/// clip space has y up, so the viewport is flipped (its height negative, its `y` the bottom
/// edge), as wgpu's Vulkan backend does.
pub fn viewport(width: u32, height: u32) -> picking_vk::Viewport {
    let mut vp = picking_vk::Viewport::full(width, height);
    vp.y = height as f32;
    vp.height = -(height as f32);
    vp
}

#[cfg(test)]
mod tests {
    /// The bridge's types cross threads as wgpu's do: the picker and its commands move to a
    /// render thread, draws and commands are shared like wgpu buffers.
    #[test]
    fn types_are_send_and_sync_where_wgpu_is() {
        fn send<T: Send>() {}
        fn send_sync<T: Send + Sync>() {}
        send::<crate::WgpuPicker>();
        send_sync::<crate::PickCommands>();
        send_sync::<crate::WgpuDraw>();
        send_sync::<crate::PickingDevice>();
        send_sync::<crate::WgpuPickError>();
    }
}
