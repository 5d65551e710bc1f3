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
//! [`PickerConfig`], never by the window. [`Picker::record`] records a frame's query set
//! ([`PickQuery`]: points, pick radius, rectangles; one pick is a one-query set) and
//! [`Picker::take_results`] resolves it once that frame completed.
//!
//! The picker records into the host's command buffers and never submits. It waits only
//! where the host asks for results in the frame that produced them
//! ([`Picker::wait_results`]: on the host's own fence or timeline value, bounded); hosts that
//! need them on the GPU in that frame read them in their own shaders instead
//! ([`PickerConfig::gpu_results`], [`gpu_results::GPU_RESULTS_GLSL`]).
//!
//! | picking-vk | ash  | gpu-allocator | glam |
//! |------------|------|---------------|------|
//! | 0.2        | 0.38 | 0.28          | 0.34 |
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
//! match unsafe { picker.take_results(slot) } {
//!     Ok(results) => {
//!         if let Some(hit) = results.as_ref().and_then(|r| r.pick(0)).and_then(|p| p.hit.as_ref()) {
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
//!     let request = PickRequest::new(viewport, view, proj);
//!     // SAFETY: `cmd` is recording outside a render pass; the draws' buffers outlive it.
//!     unsafe { picker.record(cmd, slot, &request, &[PickQuery::Point(pixel)], draws) }?;
//! }
//! # Ok(()) }
//! ```
//!
//! ## Where things are
//! The crate root holds the integration path above: set-up ([`PickSupport`],
//! [`DeviceFeatures`], [`PickFeatures`], [`HostDevice`], [`PickerConfig`], [`DetailMode`]),
//! the [`Picker`], a frame's [`PickRequest`] with its [`Viewport`] and [`DepthConvention`],
//! its queries ([`PickQuery`], [`PixelRect`], [`RectMode`], [`Snap`]) and draws ([`PickDraw`],
//! [`DrawList`], [`ObjectId`]), the cursor ([`cursor_to_pixel`]), and what comes back
//! ([`PickTicket`], [`HostSignal`] for same-frame results, [`FrameResults`], [`QueryResult`], [`PickResult`], [`PickHit`],
//! [`PickError`]). The rest is grouped by topic:
//!
//! | module | what it holds |
//! |---|---|
//! | [`draw`] | the inputs of a draw: geometry ([`Positions`](draw::Positions), [`Triangles`](draw::Triangles), [`BufferRange`](draw::BufferRange), [`IndexedMesh`](draw::IndexedMesh)), instances, indirect commands, raster state, bounds, CPU geometry for detail |
//! | [`request`] | what a request says beyond the camera: left-out objects ([`Ignore`](request::Ignore), [`PickFilter`](request::PickFilter)), the host's GPU writes ([`HostWrites`](request::HostWrites)), the pick [`Ray`](request::Ray) |
//! | [`results`] | rectangle sets, surface detail, statistics, [`QueryTicket`](results::QueryTicket) |
//! | [`hooks`] | run-time GLSL: discard and world-adjust hooks (feature `hooks`) |
//! | [`deform`] | skinning and morph targets |
//! | [`contributor`] | the host's own draws inside the pick pass |
//! | [`config`] | pass rendering, detail status, configuration limits |
//! | [`debug`] | the full-size ID image for debug views, parity tests and benchmarks |
//!
//! Each input type has one construction style: a `new` with what it cannot do without,
//! then `with_*` setters; plain data (ranges, rectangles, queries) is built with its fields.
//!
//! ## Soundness
//! No safe function of the crate can cause undefined behaviour, whatever its arguments. Every
//! Vulkan handle the picker uses on the GPU reaches it through an `unsafe` entry point whose
//! contract covers it; safe functions only read those handles back (building pipelines in
//! [`Picker::warm_up`], freeing objects on drop) or touch none at all (requests, draws,
//! configuration, validation, [`Picker::cancel`], statistics). Bad values are refused with a
//! [`PickError`] and leave the picker as it was: IDs, counts, strides and offsets against the
//! device's limits, [`BufferRange`](draw::BufferRange)s against the sizes the host states (`vk::WHOLE_SIZE` and
//! ranges past 2^64 refused), non-finite or singular matrices, instance transforms that do not
//! match the instances drawn, hook programs whose SPIR-V declares what their host set lacks
//! ([`HookProgram::with_host_set`](hooks::HookProgram::with_host_set)), barrier masks no barrier carries ([`HostWrites`](request::HostWrites)), frame
//! slots, pending frames and device loss. Arithmetic on host-given sizes is checked or
//! saturating (statistics are `u64`), and a failed read keeps its frame pending.
//!
//! What the picker cannot see is each `unsafe fn`'s contract, stated in full in its
//! `# Safety` section:
//!
//! | entry point | what the caller guarantees |
//! |---|---|
//! | [`PickSupport::query`] | the physical device was enumerated from the live instance, created with the stated API version |
//! | [`Picker::new`], [`debug::IdImage::new`] | the device, physical device and instance belong together and outlive it; the features stated were enabled; a shared allocator is this device's; a pipeline cache given is this device's, outlives it and is not used elsewhere while it is called; `debug_utils` only where the instance enabled `VK_EXT_debug_utils`, and then no other device is destroyed on another thread while it is created or called (the loader's device list); it is dropped only after the GPU finished every command buffer it recorded into |
//! | [`Picker::record`], [`debug::IdImage::record`] | the command buffer is a primary one of this device, recording, outside a render pass, used by no other thread during the call, submitted to one queue of the picker's family; every buffer the draws name is live and this device's (acquired to the picker's family where it is exclusive to another), has the documented usages, holds what its ranges say and lives until the work completes; the host's GPU writes to them are ordered before the pick and its later writes after it ([`PickRequest::with_host_writes`], or its own barriers); indices, vertex offsets and indirect commands stay within what the draw describes; hook descriptor sets match their layout, name images in the layouts their descriptors state and stay unchanged while pending, and hook code indexes them in bounds; contributors keep their contract; the stages named for host writes and result readers are ones the device enabled; the slot's previous work completed, and so has any work reading its GPU results buffer |
//! | [`Picker::take_results`], [`debug::IdImage::read`], `read_pixel` | the GPU work last recorded there completed (or will never be submitted) |
//! | [`Picker::wait_results`] | the fence or timeline semaphore is the picker's device's, and once signaled the GPU work last recorded into the slot has completed |
//! | [`hooks::HookProgram::with_host_set`] | the layout is live while a picker holds the program, on the pickers' device, and was created from exactly the bindings given, without flags (no push descriptors) and with no binding flags the device lacks |
//! | [`contributor::PickContributor`] (an `unsafe trait`: the host implements it; the picker calls `record` inside its pass) | the contributor binds its own pipeline for the target it is handed (viewport and scissor dynamic), records only what an inline pass allows, leaves viewport, scissor and the pass as they are, has the host's writes to what it reads ordered before the pick, and keeps what it records alive until the frame completes (its ID range is asked once a recording) |
//! | [`debug::IdImage::attachment_bytes_for`] | the device and physical device belong to the live instance |
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
//! | request | `request/`: [`PickRequest`], [`Viewport`], the camera (depth convention, rays), [`cursor_to_pixel`], the host's writes ([`HostWrites`](request::HostWrites), `host_writes.rs`); `ignore.rs`: [`Ignore`](request::Ignore), [`PickFilter`](request::PickFilter) and [`Admission`](contributor::Admission) (below `request` and `draw`, which both read them) | a new kind of query, camera conventions |
//! | draw inputs | `draw/`: [`PickDraw`], [`MeshGeometry`](draw::MeshGeometry), [`Aabb`](draw::Aabb), hooks ([`HookProgram`](hooks::HookProgram), `hooks.rs`), [`IndirectDraws`](draw::IndirectDraws), skins and morph targets ([`Deformation`](deform::Deformation), `deform/`), contributors ([`PickContributor`](contributor::PickContributor), `contributor.rs`) | a new geometry layout, a new hook input, a new deformation |
//! | plan | `plan/`: admission (filter, ignore rules), culling (hierarchies, exact boxes) | which draws and instances are recorded |
//! | pass | `pass/`: pass shapes, render pass or dynamic rendering (`rendering.rs`), targets, pipeline keys and push layouts (`pipeline_key.rs`), vertex input (`vertex_input.rs`), the pipeline cache (`pipeline.rs`), hooked shaders (`hook_glsl.rs`, `hook_compile.rs`, `hooked.rs`), storage buffer sets | attachments, pipeline state, synchronization, shader variants |
//! | record | `record/`: the pass over the plan, batched indirect draws (`batch.rs`, runs in `batch_run.rs`), what is bound (`bind.rs`), push words (`push.rs`), hooked draws (`hooked.rs`), rectangle tiles (`rect.rs`) | how draws are recorded |
//! | staging | `readback.rs`: the per-slot, persistently mapped staging ring | what is copied back |
//! | hand-off | `handoff.rs`: draw snapshots, pass statistics, raw texels | what record leaves for resolve |
//! | resolve | `resolve/`: texels to [`PickResult`], detail (face, barycentrics, normals, UV) | what a result reports |
//!
//! [`Picker`] (`picker/`: the API and slots in `mod.rs`; a frame's query set laid out once in `frame_layout.rs`: per query its checked region, texel, cell or tiles, plan and staging block; planned and recorded by walking that layout in `query_set.rs`; resolved from the layout the slot keeps in `results.rs`) ties the stages together per frame slot; `gpu.rs` owns every GPU
//! object the picker creates (each frees itself on drop). [`debug`] holds the full-size ID
//! image used for debug views, parity tests and benchmarks.

#![warn(missing_docs)]

pub mod debug;
pub mod draw;
pub mod error;
mod gpu;
mod gpu_plan;
pub mod gpu_results;
mod handoff;
mod host;
mod id;
mod ignore;
mod pass;
mod picker;
mod plan;
mod readback;
mod record;
pub mod request;
mod resolve;

// The integration path: device set-up, the picker, a frame's request, queries and draws, and
// what comes back. Everything else lives in the public modules below.
pub use draw::{DrawList, PickDraw};
pub use error::PickError;
pub use host::config::{DetailMode, PickerConfig};
pub use host::features::{DeviceFeatures, PickFeatures, PickSupport};
pub use host::HostDevice;
pub use id::ObjectId;
pub use picker::{HostSignal, PickMemory, PickTicket, Picker};
pub use request::camera::DepthConvention;
pub use request::cursor::{cursor_to_pixel, CursorPixel, ViewPlacement};
pub use request::query::{PickQuery, PixelRect, RectMode, Snap};
pub use request::viewport::Viewport;
pub use request::PickRequest;
pub use resolve::query::{FrameResults, QueryResult};
pub use resolve::result::{PickHit, PickResult};

/// Settings beyond [`PickerConfig`]'s own: how passes begin, detail's outcome, the limits a
/// configuration is checked against.
pub mod config {
    pub use crate::host::config::{DetailStatus, PassRendering, Planner, MAX_FRAMES_IN_FLIGHT, MAX_RECT_TILES};
}

/// Run-time GLSL hooks a draw's pick pass runs: discarding fragments (alpha cut-outs) and
/// adjusting world positions (wind, displacement), compiled with shaderc (feature `hooks`).
/// A [`HookProgram`](hooks::HookProgram) is the source; [`DrawHooks`](hooks::DrawHooks)
/// attaches it to a [`PickDraw`] with its attribute streams and the host's descriptor set.
pub mod hooks {
    pub use crate::draw::hooks::{AttributeFormat, AttributeStream, DrawHooks, HookAttribute, HookBinding, HookProgram, HookSource, Interpolation, HOOK_SET};
}

/// Skinning and morph targets the pick pass applies on the GPU, so skinned and morphed
/// meshes are picked where the host draws them: [`Deformation`](deform::Deformation) on a
/// [`PickDraw`], [`DeformPose`](deform::DeformPose) for the CPU side of detail results.
pub mod deform {
    pub use crate::draw::deform::{DeformPose, Deformation, Influences, JointFormat, MorphTargets, Skin, SkinInfluences, VertexStream, WeightFormat};
}

/// The host's own draws inside the pick pass ([`PickContributor`](contributor::PickContributor)):
/// geometry the picker cannot describe (billboards, text, procedural shapes), drawn with the
/// host's pipelines into the picker's target and reported as hits like any draw.
pub mod contributor {
    pub use crate::draw::contributor::{ContributorContext, ContributorHit, ContributorTarget, PickContributor, CONTRIBUTOR_GLSL};
    pub use crate::ignore::Admission;
}

/// What a frame's query set returns beyond [`FrameResults`], [`QueryResult`], [`PickResult`]
/// and [`PickHit`]: rectangle sets, surface detail (face, barycentrics, normal, UV), ticket
/// keys and statistics.
pub mod results {
    pub use crate::handoff::PassStats;
    pub use crate::request::query::QueryTicket;
    pub use crate::resolve::detail::{HitDetail, SurfaceDetail};
    pub use crate::resolve::query::{RectObject, RectResult};
    pub use crate::resolve::result::{GpuPlanStats, PickStats};
}
