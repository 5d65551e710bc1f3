//! Opening the window: the scene and camera, then the GPU side ([`Gpu::new`], also what device
//! loss recovery calls): the Vulkan context with the surface's extensions, the surface, and the
//! GPU objects (lit pass, scene buffers, swapchain, picker, frames, egui renderer).

use super::frame_loop::Frames;
use super::id_buffer::IdBufferView;
use super::input::Input;
use super::panel::Panel;
use super::picking::Picking;
use super::recovery::Recovery;
use super::{AppOptions, Gfx, Gpu, Running, SceneView, WindowSurface, FRAMES_IN_FLIGHT};
use crate::camera::OrbitCamera;
use crate::objects::ObjectTable;
use crate::scene::Scene;
use crate::scene_upload::UploadedScene;
use crate::swapchain::{choose_format, Swapchain};
use crate::ViewerError;
use ash::vk;
use picking_vk_context::{ContextOptions, VulkanContext};
use picking_vk_host::LitPass;
use raw_window_handle::{HasDisplayHandle, HasWindowHandle};
use std::ffi::CString;
use std::sync::Arc;
use winit::event_loop::ActiveEventLoop;
use winit::window::Window;

impl Running {
    pub(super) fn new(event_loop: &ActiveEventLoop, scene: Scene, options: &AppOptions, mut recovery: Recovery) -> Result<Self, ViewerError> {
        let attrs = Window::default_attributes().with_title("picking-vk viewer").with_inner_size(winit::dpi::LogicalSize::new(1280.0, 760.0));
        let window = Arc::new(event_loop.create_window(attrs).map_err(|e| ViewerError::Window(e.to_string()))?);
        let objects = ObjectTable::new(&scene);
        let camera = OrbitCamera::initial(&scene);
        let duration = scene.animations.iter().map(crate::scene::Animation::duration).fold(0.0, f32::max);
        let playback = scene.animated().then(|| super::settings::Playback::new(duration, options.time));
        let view = SceneView { scene, objects, camera, home: camera };
        let gpu = Gpu::new(&window, &view, options)?;
        recovery.track(&gpu.ctx);
        let mut input = Input::default();
        input.settings.playback = playback;
        Ok(Running {
            gpu: Some(gpu),
            panel: Panel::new(&window),
            input,
            view,
            frame_index: 0,
            visibility: Default::default(),
            paused: None,
            recovery,
            last_trim: std::time::Instant::now(),
            window,
        })
    }
}

impl Gpu {
    /// A Vulkan context for `window`, its surface, and the GPU objects that show `view`.
    pub(super) fn new(window: &Window, view: &SceneView, options: &AppOptions) -> Result<Self, ViewerError> {
        let display = window.display_handle().map_err(|e| ViewerError::Window(e.to_string()))?.as_raw();
        let window_handle = window.window_handle().map_err(|e| ViewerError::Window(e.to_string()))?.as_raw();
        let instance_extensions = ash_window::enumerate_required_extensions(display)?
            .iter()
            // SAFETY: ash-window returns pointers to static NUL-terminated extension names.
            .map(|&p| unsafe { std::ffi::CStr::from_ptr(p) }.to_owned())
            .collect();
        let ctx = VulkanContext::new(&ContextOptions {
            validation: options.validation,
            want_detail: options.detail,
            instance_extensions,
            device_extensions: vec![CString::from(ash::khr::swapchain::NAME)],
            ..Default::default()
        })?;
        // SAFETY: the handles come from a live window that outlives the surface (the window is
        // dropped after `Running::gpu`, whose Drop destroys the surface).
        let surface = unsafe { ash_window::create_surface(ctx.entry(), &ctx.instance, display, window_handle, None) }?;
        let loader = ash::khr::surface::Instance::new(ctx.entry(), &ctx.instance);
        let checked = (|| {
            // SAFETY: the surface and device belong to this instance.
            let supported = unsafe { loader.get_physical_device_surface_support(ctx.physical_device, ctx.queue_family_index, surface) }?;
            // SAFETY: as above.
            let formats = unsafe { loader.get_physical_device_surface_formats(ctx.physical_device, surface) }?;
            Ok::<_, vk::Result>((supported, formats))
        })();
        let formats = match checked {
            Ok((true, formats)) => formats,
            refused => {
                // SAFETY: nothing uses the surface yet.
                unsafe { loader.destroy_surface(surface, None) };
                return Err(match refused {
                    Err(e) => e.into(),
                    Ok(_) => ViewerError::Window(format!("{} cannot present to this window", ctx.device_name)),
                });
            }
        };
        let surface = WindowSurface { loader, handle: surface, format: choose_format(&formats) };
        // From here Gpu's Drop destroys the surface, whatever fails next.
        let mut gpu = Gpu { gfx: None, surface, needs_rebuild: false, ctx };
        let size = window.inner_size();
        gpu.gfx = Some(Gfx::new(&gpu, vk::Extent2D { width: size.width, height: size.height }, view, options)?);
        Ok(gpu)
    }
}

impl Gfx {
    fn new(gpu: &Gpu, extent: vk::Extent2D, view: &SceneView, options: &AppOptions) -> Result<Self, ViewerError> {
        let ctx = &gpu.ctx;
        let surface = &gpu.surface;
        let format = surface.format.format;
        let depth = crate::camera::depth_convention(&view.camera.matrices(1.0).projection);
        let lit = LitPass::new(ctx, format, vk::ImageLayout::PRESENT_SRC_KHR, depth)?;
        let regions = if view.scene.animated() { FRAMES_IN_FLIGHT as u32 } else { 1 };
        let scene = UploadedScene::new(ctx, &view.scene, &view.objects, regions)?;
        let swapchain = Swapchain::new(ctx, &surface.loader, surface.handle, surface.format, &lit, extent, vk::SwapchainKHR::null())?;
        let picking = Picking::new(ctx, options.detail, options.rendering, &scene.gpu.pick_draws, depth)?;
        let frames = Frames::new(ctx, &scene.gpu, &scene.pick_keys(&view.objects))?;
        let pick_sets = picking_vk_host::PickSets::new(ctx, lit.tint_layout(), &picking.result_buffers()?)?;
        let srgb = matches!(format, vk::Format::B8G8R8A8_SRGB | vk::Format::R8G8B8A8_SRGB);
        let egui_renderer = egui_ash_renderer::Renderer::with_gpu_allocator(
            ctx.allocator(),
            ctx.device.clone(),
            egui_ash_renderer::RenderMode::RenderPass(lit.render_pass()),
            egui_ash_renderer::Options { in_flight_frames: FRAMES_IN_FLIGHT, srgb_framebuffer: srgb, ..Default::default() },
        )
        .map_err(super::egui_error)?;
        Ok(Gfx { egui_renderer, picking, id_buffer: IdBufferView::new(ctx)?, frames, swapchain, scene, pick_sets, lit })
    }
}
