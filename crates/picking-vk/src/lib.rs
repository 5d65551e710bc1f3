//! # picking-vk
//!
//! Pixel-exact object picking for Vulkan engines built on [`ash`]. A dedicated render pass
//! draws the host's own geometry into a 1x1 target placed at the cursor pixel, writing a
//! 64-bit object ID (R32G32_UINT, 0 = nothing), the draw and instance, depth and, on devices
//! with `VK_KHR_fragment_shader_barycentric`, the primitive index and barycentrics. That texel
//! is copied into a persistent, mapped staging slot of the frame, and read once the host says
//! the frame's GPU work is done: no stall, no per-pick allocation, and memory that does not
//! grow with the window.
//!
//! The picker records into the host's command buffers and never submits or waits.
//!
//! | picking-vk | ash  | gpu-allocator | glam |
//! |------------|------|---------------|------|
//! | 0.1        | 0.38 | 0.28          | 0.34 |
//!
//! ## Integration
//! ```no_run
//! use picking_vk::*;
//! # fn demo(instance: &ash::Instance, device: &ash::Device, pd: ash::vk::PhysicalDevice,
//! #         cmd: ash::vk::CommandBuffer, draws: &[PickDraw], view: glam::Mat4, proj: glam::Mat4)
//! #         -> Result<(), PickError> {
//! let host = HostDevice { instance, device, physical_device: pd, queue_family_index: 0,
//!                         allocator: None, detail_features_enabled: false,
//!                         batching_features_enabled: false };
//! // SAFETY: the handles belong together and outlive the picker.
//! let mut picker = unsafe { Picker::new(host, PickerConfig::default()) }?;
//! let frame_slot = 0; // the host's frame-in-flight index
//! // Each frame, after waiting on this slot's fence as the host does anyway:
//! // SAFETY: the slot's previous frame completed (its fence signalled).
//! if let Some(result) = unsafe { picker.take_result(frame_slot) }? {
//!     println!("under the cursor: {:?}", result.id());
//! }
//! let request = PickRequest::new(glam::UVec2::new(400, 300), Viewport::full(800, 600), view, proj);
//! // SAFETY: `cmd` is recording outside a render pass; the draws' buffers outlive it.
//! unsafe { picker.record(cmd, frame_slot, &request, draws) }?;
//! # Ok(()) }
//! ```

mod batch;
mod bounds;
mod cull;
mod cursor;
mod detail;
mod draw;
mod error;
mod features;
mod id;
mod id_image;
mod kit;
mod memory;
mod pass;
mod picker;
mod pipeline;
mod readback;
mod record;
mod request;
mod resolve;
mod view_math;

pub use bounds::Aabb;
pub use cursor::{cursor_to_pixel, CursorPixel, ViewPlacement};
pub use detail::{interpolate, normal_matrix, ray_barycentrics, HitDetail, MeshGeometry, SurfaceDetail};
pub use draw::{BufferRange, IndexWidth, Instances, PickDraw, Positions, Triangles};
pub use error::PickError;
pub use features::{batching_supported, detail_device_extensions, required_device_extensions, DetailSupport};
pub use id::ObjectId;
pub use id_image::{IdCopy, IdImage};
pub use picker::{DetailMode, DetailStatus, HostDevice, PickMemory, PickTicket, Picker, PickerConfig};
pub use pipeline::spirv;
pub use record::PassStats;
pub use request::{DepthConvention, Ignore, PickRequest, Viewport};
pub use resolve::{PickHit, PickResult, PickStats, Texels};
pub use view_math::{CameraSnapshot, Ray};
