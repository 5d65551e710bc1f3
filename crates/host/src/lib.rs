//! The host side of picking-vk's viewer and benchmark, written once: what an engine already
//! has and the picker leaves to it. A lit main pass with hover/selection highlights and
//! picked-point markers (skinning and morphing in its vertex shader, lines and points), an
//! offscreen colour + depth target with readback, meshes uploaded to buffers that the lit pass
//! and the picker both read (with a pose buffer per frame in flight for moving scenes),
//! billboards drawn by the lit pass and picked as a contributor, GPU-driven instances a compute
//! pass moves each frame ([`InstanceMotion`]), procedural shapes, camera matrices, and the few
//! Vulkan helpers these share ([`vk_util`], [`StorageCompute`]).
//!
//! The device, the allocator, buffers, images and one-shot submissions come from
//! `picking-vk-context`; an engine brings its own instead.

pub mod billboards;
pub mod camera;
pub mod gpu_primitive;
pub mod gpu_scene;
pub mod instance_motion;
pub mod lit_pass;
pub mod material;
pub mod mesh;
pub mod offscreen;
pub mod pick_tint;
pub mod shapes;
pub mod storage_compute;
pub mod vk_util;

pub use billboards::{Billboard, Billboards};
pub use camera::CameraMatrices;
pub use gpu_primitive::GpuPrimitive;
pub use gpu_scene::{GpuScene, RenderDraw};
pub use instance_motion::InstanceMotion;
pub use lit_pass::{FrameStyle, LitPass, Markers, DEPTH_FORMAT};
pub use material::{SamplerDesc, TextureData, Wrap};
pub use mesh::{Primitive, POINT_SIZE};
pub use offscreen::{Offscreen, COLOR_FORMAT};
pub use pick_tint::{PickSets, PickTint};
pub use storage_compute::StorageCompute;
