//! # picking-vk
//!
//! Pixel-exact object picking for Vulkan engines built on [`ash`]. A dedicated render pass
//! draws the host's own geometry into a small target whose pixels stand for the queried
//! pixels of the view (a pixel per point, a cell per pick radius, a tile at a time for
//! rectangles), writing a 64-bit object ID (R32G32_UINT, 0 = nothing), the draw and instance,
//! depth and, on devices with `VK_KHR_fragment_shader_barycentric`, the primitive index and
//! barycentrics. Those texels (for rectangles, per-object counts reduced on the GPU) are
//! copied into a persistent, mapped staging slot of the frame, and read once the host says
//! the frame's GPU work is done: no stall, no per-pick allocation, and memory set by
//! [`PickerConfig`], never by the window. [`Picker::record`] picks one pixel;
//! [`Picker::record_queries`] records a frame's query set ([`PickQuery`]: points, pick radius,
//! rectangles).
//!
//! The picker records into the host's command buffers and never submits or waits.
//!
//! | picking-vk | ash  | gpu-allocator | glam |
//! |------------|------|---------------|------|
//! | 0.1        | 0.38 | 0.28          | 0.34 |
//!
//! ## Integration
//! Four steps; `examples/hover.rs` is a complete program (its own instance and device, two
//! frames in flight, hover picking under validation).
//! ```no_run
//! use picking_vk::*;
//! # fn demo(instance: &ash::Instance, api_version: u32, physical_device: ash::vk::PhysicalDevice,
//! #         create_device: impl FnOnce(ash::vk::DeviceCreateInfo) -> ash::Device,
//! #         cmd: ash::vk::CommandBuffer, draws: &[PickDraw], view: glam::Mat4, proj: glam::Mat4,
//! #         viewport: ash::vk::Viewport, cursor: glam::DVec2, scale: f64, frame: usize)
//! #         -> Result<(), PickError> {
//! // 1. At device creation: ask what the device offers, add what picking needs
//! // (`api_version`: the one the instance was created with).
//! // SAFETY: the physical device was enumerated from this live instance.
//! let support = unsafe { PickSupport::query(instance, api_version, physical_device) };
//! let mut picking = support.device_features(support.offered())?;
//! let extensions: Vec<_> = picking.extension_names().iter().map(|e| e.as_ptr()).collect();
//! let device = create_device(picking.add_to_device_create(
//!     ash::vk::DeviceCreateInfo::default().enabled_extension_names(&extensions)));
//!
//! // 2. The picker, on the host's device.
//! let host = HostDevice::new(instance, api_version, &device, physical_device, 0).with_features(picking.features());
//! let config = PickerConfig::default().with_frames_in_flight(2).with_detail(DetailMode::IfEnabled);
//! // SAFETY: the handles belong together, the features were enabled, and the picker is
//! // dropped before the device, once the GPU is idle.
//! let mut picker = unsafe { Picker::new(host, config) }?;
//!
//! // 3. Each frame, in slot `frame % 2`, after waiting on that slot's fence:
//! let slot = frame % 2;
//! // SAFETY: the slot's previous frame completed (its fence signalled).
//! match unsafe { picker.take_result(slot) } {
//!     Ok(result) => {
//!         if let Some(hit) = result.and_then(|r| r.hit) {
//!             println!("object {} (draw {}) at {:?}", hit.id, hit.draw_index, hit.world);
//!         }
//!     }
//!     // An aborted frame's pick (StaleResult) and the like: this pick is lost, picking goes on.
//!     Err(e) if e.is_recoverable() => eprintln!("pick: {e}"),
//!     Err(e) => return Err(e),
//! }
//!
//! // 4. Record this frame's pick into the host's command buffer (outside a render pass).
//! let placement = ViewPlacement::whole_window(glam::UVec2::new(800, 600));
//! if let Some(pixel) = cursor_to_pixel(cursor, scale, placement)?.inside() {
//!     let request = PickRequest::new(pixel, viewport, view, proj);
//!     // SAFETY: `cmd` is recording outside a render pass; the draws' buffers outlive it.
//!     unsafe { picker.record(cmd, slot, &request, draws) }?;
//! }
//! # Ok(()) }
//! ```
//!
//! ## Soundness
//! No safe function of the crate can cause undefined behaviour, whatever its arguments. Every
//! Vulkan handle the picker uses on the GPU reaches it through an `unsafe` entry point whose
//! contract covers it; safe functions only read those handles back (building pipelines in
//! [`Picker::warm_up`], freeing objects on drop) or touch none at all (requests, draws,
//! configuration, validation, [`Picker::cancel`], statistics). Bad values are refused with a
//! [`PickError`] and leave the picker as it was: IDs, counts, strides and offsets against the
//! device's limits, [`BufferRange`]s against the sizes the host states (`vk::WHOLE_SIZE` and
//! ranges past 2^64 refused), non-finite or singular matrices, instance transforms that do not
//! match the instances drawn, hook programs whose SPIR-V declares what their host set lacks
//! ([`HookProgram::with_host_set`]), barrier masks no barrier carries ([`HostWrites`]), frame
//! slots, pending frames and device loss. Arithmetic on host-given sizes is checked or
//! saturating (statistics are `u64`), and a failed read keeps its frame pending.
//!
//! What the picker cannot see is each `unsafe fn`'s contract, stated in full in its
//! `# Safety` section:
//!
//! | entry point | what the caller guarantees |
//! |---|---|
//! | [`PickSupport::query`] | the physical device was enumerated from the live instance, created with the stated API version |
//! | [`Picker::new`], [`debug::IdImage::new`] | the device, physical device and instance belong together and outlive it; the features stated were enabled; a shared allocator is this device's; it is dropped only after the GPU finished every command buffer it recorded into |
//! | [`Picker::record`], [`Picker::record_queries`], `record_shared`, `record_queries_shared`, [`debug::IdImage::record`] | the command buffer is this device's, recording, outside a render pass, submitted to one queue of the picker's family; every buffer the draws name is live, has the documented usages, holds what its ranges say and lives until the work completes; the host's GPU writes to them are ordered before the pick and its later writes after it ([`PickRequest::with_host_writes`], or its own barriers); indices, vertex offsets and indirect commands stay within what the draw describes; hook descriptor sets match their layout and stay unchanged while pending; contributors keep their contract; the slot's previous work completed |
//! | [`Picker::take_results`], [`Picker::take_result`], [`debug::IdImage::read`], `read_pixel` | the GPU work last recorded there completed (or will never be submitted) |
//! | [`Picker::poll_result`] | the fence is live and is the one the slot's submission signals, not reset since |
//! | [`HookProgram::with_host_set`] | the layout is live while a picker holds the program, on the pickers' device, and was created from exactly the bindings given |
//! | [`PickContributor::record`] (the host implements it; the picker calls it inside its pass) | the contributor binds its own pipeline for the target it is handed, leaves viewport, scissor and the pass as they are, and keeps what it records alive until the frame completes |
//! | [`debug::IdImage::attachment_bytes_for`] | the device is live |
//!
//! Inside the crate every `unsafe` block names, in a `// SAFETY:` comment, the contract or
//! invariant it relies on; objects the picker creates are owned by types that free them on
//! drop, after the GPU is done with them by [`Picker::new`]'s contract. Storage descriptor
//! sets are written in the frame that binds them and never reused in a later one, because
//! Vulkan hands a destroyed buffer's handle value out again.
//!
//! ## Architecture
//! The data flows through one folder per stage:
//!
//! ```text
//! cursor ─► request ─► plan ─► record ─► staging ─► resolve ─► result
//! (request/cursor) (request/) (plan/) (record/, pass/) (readback) (resolve/, handoff)
//! ```
//!
//! | stage | where | a change there |
//! |---|---|---|
//! | host contract | `host/`: [`HostDevice`], [`PickSupport`] (`features/`) and [`DeviceFeatures`] (`features/device.rs`), [`PickerConfig`] | a new optional feature, a new setting |
//! | request | `request/`: [`PickRequest`], [`Viewport`], the camera (depth convention, rays), [`cursor_to_pixel`], the host's writes ([`HostWrites`], `host_writes.rs`); `ignore.rs`: [`Ignore`], [`PickFilter`] and [`Admission`] (below `request` and `draw`, which both read them) | a new kind of query, camera conventions |
//! | draw inputs | `draw/`: [`PickDraw`], [`MeshGeometry`], [`Aabb`], hooks ([`HookProgram`], `hooks.rs`), [`IndirectDraws`], skins and morph targets ([`Deformation`], `deform/`), contributors ([`PickContributor`], `contributor.rs`) | a new geometry layout, a new hook input, a new deformation |
//! | plan | `plan/`: admission (filter, ignore rules), culling (hierarchies, exact boxes) | which draws and instances are recorded |
//! | pass | `pass/`: pass shapes, render pass or dynamic rendering (`rendering.rs`), targets, pipeline keys and push layouts (`pipeline_key.rs`), vertex input (`vertex_input.rs`), the pipeline cache (`pipeline.rs`), hooked shaders (`hook_glsl.rs`, `hook_compile.rs`, `hooked.rs`), storage buffer sets | attachments, pipeline state, synchronization, shader variants |
//! | record | `record/`: the pass over the plan, batched indirect draws (`batch.rs`), what is bound (`bind.rs`), push words (`push.rs`), hooked draws (`hooked.rs`), rectangle tiles (`rect.rs`) | how draws are recorded |
//! | staging | `readback.rs`: the per-slot, persistently mapped staging ring | what is copied back |
//! | hand-off | `handoff.rs`: draw snapshots, pass statistics, raw texels | what record leaves for resolve |
//! | resolve | `resolve/`: texels to [`PickResult`], detail (face, barycentrics, normals, UV) | what a result reports |
//!
//! [`Picker`] (`picker/`: the API and slots in `mod.rs`, recording a frame's query set in `query_set.rs`, taking its results in `results.rs`) ties the stages together per frame slot; `gpu.rs` owns every GPU
//! object the picker creates (each frees itself on drop). [`debug`] holds the full-size ID
//! image used for debug views, parity tests and benchmarks.

#![warn(missing_docs)]

pub mod debug;
mod draw;
mod error;
mod gpu;
mod handoff;
mod host;
mod id;
mod ignore;
mod pass;
mod picker;
mod plan;
mod readback;
mod record;
mod request;
mod resolve;

pub use draw::{
    Aabb, AttributeFormat, AttributeStream, BufferRange, ContributorContext, ContributorHit, ContributorTarget, DeformPose, Deformation, DepthBias, DrawHooks,
    HookAttribute, HookBinding, HookProgram, HookSource, IndexWidth, IndexedMesh, IndirectDraws, Influences, InstanceBinding, InstanceFormat, Instances,
    Interpolation, JointFormat, MeshGeometry, MorphTargets, PickContributor, PickDraw, PositionFormat, Positions, PrimitiveKind, RasterState, Skin,
    SkinInfluences, Topology, Triangles, VertexStream, WeightFormat, CONTRIBUTOR_GLSL, HOOK_SET,
};
pub use error::{PickError, Requirement};
pub use handoff::PassStats;
pub use host::config::{DetailMode, DetailStatus, PassRendering, PickerConfig, MAX_FRAMES_IN_FLIGHT, MAX_RECT_TILES};
pub use host::features::{DeviceFeatures, PickFeatures, PickSupport};
pub use host::HostDevice;
pub use id::ObjectId;
pub use ignore::{Admission, Ignore, PickFilter};
pub use picker::{PickMemory, PickTicket, Picker};
pub use request::camera::{DepthConvention, Ray};
pub use request::cursor::{cursor_to_pixel, CursorPixel, ViewPlacement};
pub use request::host_writes::HostWrites;
pub use request::query::{PickQuery, PixelRect, QueryTicket, RectMode};
pub use request::viewport::Viewport;
pub use request::PickRequest;
pub use resolve::detail::{HitDetail, SurfaceDetail};
pub use resolve::query::{FrameResults, QueryResult, RectObject, RectResult};
pub use resolve::result::{PickHit, PickResult, PickStats};
