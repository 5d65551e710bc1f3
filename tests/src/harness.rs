//! The GPU test harness: a validated context (a missing device fails the test, it never
//! skips), pick helpers, and the zero-validation-messages check.

use ash::vk;
use glam::{Mat4, UVec2, Vec3};
use picking_vk::config::PassRendering;
use picking_vk::debug::{IdCopy, IdImage, Texels};
use picking_vk::{DrawList, FrameResults, PickDraw, PickQuery, PickRequest, PickResult, Picker, PickerConfig, Viewport};
use picking_vk_context::{ContextOptions, VulkanContext, DEFAULT_API_VERSION};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// One [`Gpu`] at a time in a test process. The Vulkan loader (Debian 12's 1.3.239, and
/// upstream through at least 1.4.341: KhronosGroup/Vulkan-Loader#2018) frees a destroyed
/// device's entry in its process-wide device list while `vkSetDebugUtilsObjectNameEXT` on
/// another device walks that list, and picking-vk names its objects. Tests running in parallel
/// threads, one device each, crashed so (SIGSEGV in CI, and in 2 of 3 runs of a loop naming a
/// buffer on one device while another thread created and destroyed devices).
static ONE_DEVICE_AT_A_TIME: Mutex<()> = Mutex::new(());

pub struct Gpu {
    pub ctx: VulkanContext,
    /// How pickers made by [`Gpu::picker`] begin their passes: `PICKING_VK_TEST_RENDERING` is
    /// `render-pass` (the default), `dynamic` (`VK_KHR_dynamic_rendering` on Vulkan 1.2) or
    /// `dynamic-1.3` (core dynamic rendering), so the same tests run on every path.
    pub rendering: PassRendering,
    /// Held until after `ctx` is dropped (fields drop in order): see [`ONE_DEVICE_AT_A_TIME`].
    _one_at_a_time: MutexGuard<'static, ()>,
}

impl Gpu {
    /// A context with validation and synchronization validation on. Panics (fails the test)
    /// when no device or no validation layer is found: GPU tests never pass silently.
    pub fn new() -> Gpu {
        Gpu::with_options(|_| {})
    }

    /// As [`Gpu::new`], with the context's options changed by `change` first.
    pub fn with_options(change: impl FnOnce(&mut ContextOptions)) -> Gpu {
        // A test that failed while holding the lock poisons it; the next one still runs.
        let one_at_a_time = ONE_DEVICE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
        let path = std::env::var("PICKING_VK_TEST_RENDERING").unwrap_or_default();
        let (rendering, api_version) = match path.as_str() {
            "" | "render-pass" => (PassRendering::RenderPass, DEFAULT_API_VERSION),
            "dynamic" => (PassRendering::Dynamic, vk::API_VERSION_1_2),
            "dynamic-1.3" => (PassRendering::Dynamic, vk::API_VERSION_1_3),
            other => panic!("PICKING_VK_TEST_RENDERING={other:?}: expected render-pass, dynamic or dynamic-1.3"),
        };
        let mut options = ContextOptions { want_detail: std::env::var_os("PICKING_VK_NO_DETAIL").is_none(), api_version, ..ContextOptions::default() };
        change(&mut options);
        match VulkanContext::new(&options) {
            Ok(ctx) => {
                eprintln!(
                    "GPU tests on {} (detail {}, passes: {rendering:?} on Vulkan {}.{})",
                    ctx.device_name,
                    if ctx.picking_features.contains(picking_vk::PickFeatures::DETAIL) { "enabled" } else { "unavailable" },
                    vk::api_version_major(api_version),
                    vk::api_version_minor(api_version),
                );
                Gpu { ctx, rendering, _one_at_a_time: one_at_a_time }
            }
            Err(e) => {
                panic!("GPU TEST COULD NOT RUN: no Vulkan device with the validation layer ({e}). Install lavapipe and vulkan-validationlayers (see README).")
            }
        }
    }

    /// A picker of `config`, its passes begun the way [`Gpu::rendering`] says.
    pub fn picker(&self, config: PickerConfig) -> Picker {
        // SAFETY: the context's handles belong together and outlive the picker (tests drop
        // pickers before the Gpu).
        unsafe { Picker::new(self.ctx.host_device(), config.with_rendering(self.rendering)) }.expect("picker")
    }

    /// Records a one-point query set per pixel, pixel `i` into slot `i`, in one command
    /// buffer, submits, waits, and resolves every slot: each pick is planned and drawn on
    /// its own. The picker needs at least `pixels.len()` frames in flight. `draws` is a
    /// borrowed or a shared list ([`DrawList`]).
    pub fn pick_batch<'d>(&self, picker: &mut Picker, request: &PickRequest<'_>, pixels: &[UVec2], draws: impl Into<DrawList<'d>>) -> Vec<PickResult> {
        let draws = draws.into();
        self.ctx
            .run_once(|cmd| {
                for (slot, &pixel) in pixels.iter().enumerate() {
                    // SAFETY: `cmd` is recording outside a render pass; the draws' buffers
                    // live until after the wait in `run_once`.
                    unsafe { picker.record(cmd, slot, request, &[PickQuery::Point(pixel)], draws) }.expect("record");
                }
            })
            .expect("submit");
        (0..pixels.len())
            // SAFETY: `run_once` waited for the command buffer to complete.
            .map(|slot| unsafe { picker.take_results(slot) }.expect("resolve").expect("a result is pending").pick(0).expect("a point's pick").clone())
            .collect()
    }

    /// One pick of `pixel` (see [`Gpu::pick_batch`]).
    pub fn pick<'d>(&self, picker: &mut Picker, request: &PickRequest<'_>, pixel: UVec2, draws: impl Into<DrawList<'d>>) -> PickResult {
        self.pick_batch(picker, request, &[pixel], draws).remove(0)
    }

    /// Fails if the validation layer reported anything; call after everything is dropped.
    pub fn assert_no_validation_messages(&self) {
        assert!(self.ctx.validation_enabled(), "validation layer must be on for GPU tests");
        let messages = self.ctx.take_validation_messages();
        assert!(messages.is_empty(), "{} validation message(s):\n{}", messages.len(), messages.join("\n"));
    }

    /// The full-resolution ID image of `draws` (`width` x `height`, row-major).
    pub fn id_image(&self, request: &PickRequest<'_>, draws: &[PickDraw], width: u32, height: u32) -> Vec<Texels> {
        // SAFETY: the context's handles outlive the image.
        let mut image = unsafe { IdImage::new(self.ctx.host_device(), width, height) }.unwrap();
        // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
        self.run(|cmd| unsafe { image.record(cmd, request, draws, None, IdCopy::Whole) }.map(|_| ()).unwrap());
        // SAFETY: `run` waited.
        unsafe { image.read() }.unwrap()
    }

    /// Records one query set into slot 0, submits, waits, and takes the results (`draws` a
    /// borrowed list, or a shared one: `&Arc<[PickDraw]>`).
    pub fn run_queries<'d>(&self, picker: &mut Picker, request: &PickRequest<'_>, queries: &[PickQuery], draws: impl Into<DrawList<'d>>) -> FrameResults {
        let draws = draws.into();
        // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
        self.run(|cmd| unsafe { picker.record(cmd, 0, request, queries, draws) }.map(|_| ()).expect("record"));
        // SAFETY: `run` waited for the frame.
        unsafe { picker.take_results(0) }.expect("resolve").expect("pending")
    }

    /// As [`Gpu::run_queries`], with how many primitives the input assembler received from
    /// the frame ([`Gpu::count_primitives`]).
    pub fn run_queries_counted<'d>(
        &self,
        picker: &mut Picker,
        request: &PickRequest<'_>,
        queries: &[PickQuery],
        draws: impl Into<DrawList<'d>>,
    ) -> (u64, FrameResults) {
        let draws = draws.into();
        // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
        let primitives = self.count_primitives(|cmd| unsafe { picker.record(cmd, 0, request, queries, draws) }.map(|_| ()).expect("record"));
        // SAFETY: `count_primitives` waited for the frame.
        (primitives, unsafe { picker.take_results(0) }.expect("resolve").expect("pending"))
    }

    /// Runs `f` with a command buffer, submitted and waited for.
    pub fn run(&self, f: impl FnOnce(vk::CommandBuffer)) {
        self.ctx.run_once(f).expect("submit");
    }

    /// As [`Gpu::run`], returning how many primitives the input assembler received from
    /// what `f` recorded (a pipeline statistics query around it). Panics on a device
    /// without `pipelineStatisticsQuery`.
    pub fn count_primitives(&self, f: impl FnOnce(vk::CommandBuffer)) -> u64 {
        assert!(self.ctx.pipeline_statistics, "the device offers no pipelineStatisticsQuery");
        let d = &self.ctx.device;
        let info = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::PIPELINE_STATISTICS)
            .query_count(1)
            .pipeline_statistics(vk::QueryPipelineStatisticFlags::INPUT_ASSEMBLY_PRIMITIVES);
        // SAFETY: a plain query pool of the context's device, destroyed below.
        let pool = unsafe { d.create_query_pool(&info, None) }.expect("query pool");
        self.run(|cmd| {
            // SAFETY: `cmd` is recording outside a render pass; the query is begun and ended
            // outside one, around what `f` records.
            unsafe {
                d.cmd_reset_query_pool(cmd, pool, 0, 1);
                d.cmd_begin_query(cmd, pool, 0, vk::QueryControlFlags::empty());
            }
            f(cmd);
            // SAFETY: as above.
            unsafe { d.cmd_end_query(cmd, pool, 0) };
        });
        let mut count = [0u64; 1];
        // SAFETY: `run` waited for the command buffer; one 64-bit result of query 0.
        unsafe { d.get_query_pool_results(pool, 0, &mut count, vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT) }.expect("query results");
        // SAFETY: the pool's only use has completed.
        unsafe { d.destroy_query_pool(pool, None) };
        count[0]
    }
}

impl Default for Gpu {
    fn default() -> Self {
        Gpu::new()
    }
}

/// A camera at `eye` looking at `target`, Vulkan projection (y down), standard depth.
pub fn look(eye: Vec3, target: Vec3, width: u32, height: u32) -> (Mat4, Mat4, Viewport) {
    let view = glam::camera::rh::view::look_at_mat4(eye, target, Vec3::Y);
    let proj = glam::camera::rh::proj::vulkan::perspective(0.9, width as f32 / height as f32, 0.1, 100.0);
    (view, proj, Viewport::full(width, height))
}

impl Gpu {
    /// Pixels of the view some draw covers, from a full-resolution ID render, in random order.
    pub fn covered_pixels(&self, request: &PickRequest<'_>, draws: &[PickDraw], seed: u64) -> Vec<UVec2> {
        let (w, h) = (request.viewport.width as u32, request.viewport.height as u32);
        // SAFETY: the context's handles outlive the image.
        let mut image = unsafe { picking_vk::debug::IdImage::new(self.ctx.host_device(), w, h) }.expect("id image");
        // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
        self.run(|cmd| unsafe { image.record(cmd, request, draws, None, picking_vk::debug::IdCopy::Whole) }.map(|_| ()).expect("record"));
        // SAFETY: `run` waited.
        let texels = unsafe { image.read() }.expect("read");
        let mut pixels: Vec<UVec2> = (0..w * h).filter(|&i| texels[i as usize].id != [0, 0]).map(|i| UVec2::new(i % w, i / w)).collect();
        fastrand::Rng::with_seed(seed).shuffle(&mut pixels);
        pixels
    }
}

/// The camera the random-scene tests look through: slightly off-axis, towards -Z, with a
/// finite standard-depth or an infinite reverse-Z projection.
pub fn random_scene_camera(depth: picking_vk::DepthConvention, width: u32, height: u32) -> (Mat4, Mat4) {
    let view = glam::camera::rh::view::look_at_mat4(Vec3::new(0.3, 0.2, 1.0), Vec3::new(0.0, 0.0, -6.0), Vec3::Y);
    let aspect = width as f32 / height as f32;
    let proj = match depth {
        picking_vk::DepthConvention::Standard => glam::camera::rh::proj::vulkan::perspective(1.0, aspect, 0.5, 40.0),
        picking_vk::DepthConvention::Reverse => glam::camera::rh::proj::vulkan::perspective_infinite_reverse(1.0, aspect, 0.5),
    };
    (view, proj)
}

/// Deterministic random pixels inside a `width` x `height` view.
pub fn random_pixels(seed: u64, count: usize, width: u32, height: u32) -> Vec<UVec2> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..count).map(|_| UVec2::new(rng.u32(..width), rng.u32(..height))).collect()
}

/// The seeds a random-scene test runs: `default`, or the range `PICKING_VK_TEST_SEEDS` names
/// (`a..b`), for longer fuzzing by hand (`PICKING_VK_TEST_SEEDS=100..400 cargo test ...`).
/// An unreadable value panics: a campaign that silently ran the defaults would prove nothing.
pub fn seeds(default: std::ops::Range<u64>) -> std::ops::Range<u64> {
    let Ok(text) = std::env::var("PICKING_VK_TEST_SEEDS") else { return default };
    let parsed = text.split_once("..").and_then(|(a, b)| Some(a.trim().parse().ok()?..b.trim().parse().ok()?));
    parsed.unwrap_or_else(|| panic!("PICKING_VK_TEST_SEEDS={text:?}: expected a range such as 100..400"))
}

/// A random-scene test's precondition on its scene (enough of it in view, say): with the
/// default seeds it must hold, and fails the test where it does not; under
/// `PICKING_VK_TEST_SEEDS` a seed whose scene misses it is skipped (printed), since a random
/// scene need not have it. Returns whether it holds.
pub fn assume(holds: bool, what: std::fmt::Arguments<'_>) -> bool {
    if !holds {
        assert!(std::env::var_os("PICKING_VK_TEST_SEEDS").is_some(), "{what}");
        eprintln!("skipped: {what}");
    }
    holds
}
