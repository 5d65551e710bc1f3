//! The desktop viewer, and the reference for integrating picking-vk into a frame loop:
//! every frame records a pick at the cursor into that frame's slot, and the result is taken
//! when the slot comes round again, after the fence the loop waits on anyway. No stall.

use crate::camera::OrbitCamera;
use crate::id_view;
use crate::objects::ObjectTable;
use crate::pick_report::PickReport;
use crate::scene::Scene;
use crate::scene_upload::UploadedScene;
use crate::swapchain::{choose_format, Swapchain};
use crate::ViewerError;
use ash::vk;
use glam::{DVec2, UVec2};
use picking_vk::{cursor_to_pixel, DetailMode, DetailStatus, IdImage, PickRequest, Picker, PickerConfig, ViewPlacement, Viewport};
use picking_vk_context::{CommandBuffers, ContextOptions, VulkanContext};
use picking_vk_host::{FrameStyle, LitPass};
use raw_window_handle::{HasDisplayHandle, HasWindowHandle};
use std::ffi::CString;
use std::sync::Arc;
use std::time::Instant;
use winit::application::ApplicationHandler;
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, EventLoop};
use winit::keyboard::{Key, NamedKey};
use winit::window::{Window, WindowId};

const FRAMES_IN_FLIGHT: usize = 2;
/// Width of the side panel, logical pixels. The panel is on the left, so the 3D view starts
/// at an offset: cursor mapping must account for it.
const PANEL_WIDTH: f64 = 330.0;

pub struct AppOptions {
    pub validation: bool,
    pub detail: bool,
    pub exit_after_frames: Option<u64>,
}

/// Runs the window until it closes; returns the process exit code.
pub fn run(scene: Scene, options: AppOptions) -> Result<u8, ViewerError> {
    let event_loop = EventLoop::new().map_err(|e| ViewerError::Window(format!("no display to open a window on ({e}); use --headless or --demo")))?;
    let mut app = App { scene: Some(scene), options, running: None, error: None, exit_code: 0 };
    event_loop.run_app(&mut app).map_err(|e| ViewerError::Window(e.to_string()))?;
    if let Some(e) = app.error {
        return Err(e);
    }
    Ok(app.exit_code)
}

struct App {
    scene: Option<Scene>,
    options: AppOptions,
    running: Option<Running>,
    error: Option<ViewerError>,
    exit_code: u8,
}

/// One frame in flight.
struct Frame {
    device: ash::Device,
    cmd: vk::CommandBuffer,
    fence: vk::Fence,
    image_available: vk::Semaphore,
    style: FrameStyle,
    /// A pick recorded in this frame's slot, not yet resolved.
    pick: Option<PendingPick>,
    /// The ID view was recorded in this frame.
    id_view_recorded: bool,
    /// egui textures to free once this frame's work is done.
    egui_free: Vec<egui::TextureId>,
}

#[derive(Clone, Copy)]
struct PendingPick {
    click: bool,
    frame: u64,
    at: Instant,
}

impl Drop for Frame {
    fn drop(&mut self) {
        // SAFETY: the device is idle when frames are dropped (see Running::drop).
        unsafe {
            self.device.destroy_fence(self.fence, None);
            self.device.destroy_semaphore(self.image_available, None);
        }
    }
}

/// GPU objects, dropped in declaration order before the surface and the context.
struct Gfx {
    egui_renderer: egui_ash_renderer::Renderer<egui_ash_renderer::allocator::GpuAllocator>,
    picker: Picker,
    id_image: Option<IdImage>,
    frames: Vec<Frame>,
    /// The frames' command buffers, in a pool of their own (also egui's texture uploads').
    commands: CommandBuffers,
    swapchain: Option<Swapchain>,
    gpu: UploadedScene,
    lit: LitPass,
}

struct Running {
    gfx: Option<Gfx>,
    surface_loader: ash::khr::surface::Instance,
    surface: vk::SurfaceKHR,
    format: vk::SurfaceFormatKHR,
    egui_ctx: egui::Context,
    egui_state: egui_winit::State,
    scene: Scene,
    objects: ObjectTable,
    camera: OrbitCamera,
    detail: DetailStatus,
    frame_index: u64,
    cursor: Option<DVec2>,
    left_down: Option<(DVec2, bool)>,
    pan_down: Option<DVec2>,
    click_requested: bool,
    hovered: Option<PickReport>,
    selected: Option<PickReport>,
    latency: Option<(u64, f64)>,
    show_ids: bool,
    id_view_busy: bool,
    id_texture: Option<egui::TextureHandle>,
    pending_id_image: Option<egui::ColorImage>,
    needs_rebuild: bool,
    window: Arc<Window>,
    ctx: VulkanContext,
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.running.is_some() {
            return;
        }
        let Some(scene) = self.scene.take() else { return };
        match Running::new(event_loop, scene, &self.options) {
            Ok(r) => self.running = Some(r),
            Err(e) => {
                self.error = Some(e);
                event_loop.exit();
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        let Some(r) = self.running.as_mut() else { return };
        let egui_response = r.egui_state.on_window_event(&r.window, &event);
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::KeyboardInput { event, .. } if event.state == ElementState::Pressed && !egui_response.consumed => match event.logical_key {
                Key::Named(NamedKey::Escape) => event_loop.exit(),
                Key::Character(c) if c.eq_ignore_ascii_case("d") => r.show_ids = !r.show_ids,
                _ => {}
            },
            WindowEvent::Resized(_) | WindowEvent::ScaleFactorChanged { .. } => r.needs_rebuild = true,
            WindowEvent::CursorMoved { position, .. } => r.cursor_moved(DVec2::new(position.x, position.y)),
            WindowEvent::CursorLeft { .. } => r.cursor = None,
            WindowEvent::MouseInput { state, button, .. } => r.mouse_button(state, button, egui_response.consumed),
            WindowEvent::MouseWheel { delta, .. } if !egui_response.consumed && r.cursor_in_view().is_some() => {
                let steps = match delta {
                    MouseScrollDelta::LineDelta(_, y) => y,
                    MouseScrollDelta::PixelDelta(p) => p.y as f32 / 50.0,
                };
                r.camera.zoom(steps);
            }
            WindowEvent::RedrawRequested => match r.draw_frame() {
                Ok(()) => {
                    if self.options.exit_after_frames.is_some_and(|n| r.frame_index >= n) {
                        event_loop.exit();
                    }
                }
                Err(e) => {
                    self.error = Some(e);
                    event_loop.exit();
                }
            },
            _ => {}
        }
    }

    fn about_to_wait(&mut self, _event_loop: &ActiveEventLoop) {
        if let Some(r) = &self.running {
            r.window.request_redraw();
        }
    }

    fn exiting(&mut self, _event_loop: &ActiveEventLoop) {
        if let Some(r) = self.running.take() {
            let frames = r.frame_index;
            let messages = r.ctx.validation_enabled().then(|| r.ctx.take_validation_messages());
            drop(r);
            let count = messages.map_or(0, |m| m.len());
            println!("exit: frames={frames} validation_messages={count}");
            if self.options.validation && count > 0 {
                self.exit_code = 3;
            }
        }
    }
}

impl Running {
    fn new(event_loop: &ActiveEventLoop, scene: Scene, options: &AppOptions) -> Result<Self, ViewerError> {
        let attrs = Window::default_attributes().with_title("picking-vk viewer").with_inner_size(winit::dpi::LogicalSize::new(1280.0, 760.0));
        let window = Arc::new(event_loop.create_window(attrs).map_err(|e| ViewerError::Window(e.to_string()))?);
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
        // SAFETY: the handles come from a live window that outlives the surface (dropped in Running::drop).
        let surface = unsafe { ash_window::create_surface(ctx.entry(), &ctx.instance, display, window_handle, None) }?;
        let surface_loader = ash::khr::surface::Instance::new(ctx.entry(), &ctx.instance);
        // SAFETY: the surface and device belong to this instance.
        let supported = unsafe { surface_loader.get_physical_device_surface_support(ctx.physical_device, ctx.queue_family_index, surface) }?;
        // SAFETY: as above.
        let formats = unsafe { surface_loader.get_physical_device_surface_formats(ctx.physical_device, surface) }?;
        if !supported {
            // SAFETY: nothing uses the surface yet.
            unsafe { surface_loader.destroy_surface(surface, None) };
            return Err(ViewerError::Window(format!("{} cannot present to this window", ctx.device_name)));
        }
        let format = choose_format(&formats);
        let objects = ObjectTable::new(&scene);
        let camera = match &scene.camera {
            Some(desc) => OrbitCamera::from_desc(desc, &scene),
            None => OrbitCamera::framing(&scene),
        };
        let egui_ctx = egui::Context::default();
        let egui_state = egui_winit::State::new(egui_ctx.clone(), egui::ViewportId::ROOT, &window, Some(window.scale_factor() as f32), None, None);
        let mut running = Running {
            gfx: None,
            surface_loader,
            surface,
            format,
            egui_ctx,
            egui_state,
            scene,
            objects,
            camera,
            detail: DetailStatus::NotRequested,
            frame_index: 0,
            cursor: None,
            left_down: None,
            pan_down: None,
            click_requested: false,
            hovered: None,
            selected: None,
            latency: None,
            show_ids: false,
            id_view_busy: false,
            id_texture: None,
            pending_id_image: None,
            needs_rebuild: false,
            window,
            ctx,
        };
        running.gfx = Some(running.create_gfx(options)?);
        Ok(running)
    }

    fn create_gfx(&mut self, options: &AppOptions) -> Result<Gfx, ViewerError> {
        let ctx = &self.ctx;
        let lit = LitPass::new(ctx, self.format.format, vk::ImageLayout::PRESENT_SRC_KHR)?;
        let gpu = UploadedScene::new(ctx, &self.scene, &self.objects)?;
        let size = self.window.inner_size();
        let swapchain = Swapchain::new(
            ctx,
            &self.surface_loader,
            self.surface,
            self.format,
            &lit,
            vk::Extent2D { width: size.width, height: size.height },
            vk::SwapchainKHR::null(),
        )?;
        let detail = if options.detail { DetailMode::IfEnabled } else { DetailMode::Off };
        // SAFETY: the context's handles belong together and outlive the picker (Gfx drops first).
        let picker = unsafe { Picker::new(ctx.host_device(), PickerConfig { frames_in_flight: FRAMES_IN_FLIGHT, detail, ..Default::default() }) }?;
        self.detail = picker.detail_status().clone();
        let commands = ctx.command_buffers(FRAMES_IN_FLIGHT as u32)?;
        let mut frames = vec![];
        for &cmd in commands.buffers() {
            // SAFETY: plain object creation; fences start signalled so the first wait returns.
            let fence = unsafe { ctx.device.create_fence(&vk::FenceCreateInfo::default().flags(vk::FenceCreateFlags::SIGNALED), None) }?;
            // SAFETY: plain object creation.
            let image_available = unsafe { ctx.device.create_semaphore(&vk::SemaphoreCreateInfo::default(), None) }?;
            frames.push(Frame {
                device: ctx.device.clone(),
                cmd,
                fence,
                image_available,
                style: FrameStyle::new(ctx, &gpu.gpu)?,
                pick: None,
                id_view_recorded: false,
                egui_free: vec![],
            });
        }
        let srgb = matches!(self.format.format, vk::Format::B8G8R8A8_SRGB | vk::Format::R8G8B8A8_SRGB);
        let egui_renderer = egui_ash_renderer::Renderer::with_gpu_allocator(
            ctx.allocator(),
            ctx.device.clone(),
            egui_ash_renderer::RenderMode::RenderPass(lit.render_pass),
            egui_ash_renderer::Options { in_flight_frames: FRAMES_IN_FLIGHT, srgb_framebuffer: srgb, ..Default::default() },
        )
        .map_err(|e| ViewerError::Window(format!("egui renderer: {e}")))?;
        Ok(Gfx { egui_renderer, picker, id_image: None, frames, commands, swapchain, gpu, lit })
    }

    /// The 3D view of the current swapchain, physical pixels.
    fn view_rect(&self) -> Option<(u32, u32, u32, u32)> {
        self.view_rect_for(self.gfx.as_ref()?.swapchain.as_ref()?.extent)
    }

    /// The framebuffer pixel under the cursor, when it is over the 3D view.
    fn cursor_in_view(&self) -> Option<UVec2> {
        let (x, y, w, h) = self.view_rect()?;
        let placement =
            ViewPlacement { origin: DVec2::new(f64::from(x), f64::from(y)), size: DVec2::new(f64::from(w), f64::from(h)), render_extent: UVec2::new(w, h) };
        let scale = self.window.scale_factor();
        let in_view = cursor_to_pixel(self.cursor? / scale, scale, placement).ok()?.inside()?;
        Some(in_view + UVec2::new(x, y))
    }

    fn cursor_moved(&mut self, p: DVec2) {
        if let Some(old) = self.cursor {
            let d = p - old;
            if let Some((start, dragging)) = self.left_down {
                if dragging || (p - start).length() > 4.0 {
                    self.left_down = Some((start, true));
                    self.camera.rotate(d.x as f32, d.y as f32);
                }
            }
            if self.pan_down.is_some() {
                let h = self.view_rect().map_or(1.0, |r| r.3 as f32);
                self.camera.pan(d.x as f32, d.y as f32, h);
            }
        }
        self.cursor = Some(p);
    }

    fn mouse_button(&mut self, state: ElementState, button: MouseButton, consumed_by_ui: bool) {
        let over_view = self.cursor_in_view().is_some() && !consumed_by_ui;
        match (button, state) {
            (MouseButton::Left, ElementState::Pressed) if over_view => self.left_down = self.cursor.map(|c| (c, false)),
            (MouseButton::Left, ElementState::Released) => {
                if let Some((_, dragging)) = self.left_down.take() {
                    self.click_requested |= !dragging && over_view;
                }
            }
            (MouseButton::Right | MouseButton::Middle, ElementState::Pressed) if over_view => self.pan_down = self.cursor,
            (MouseButton::Right | MouseButton::Middle, ElementState::Released) => self.pan_down = None,
            _ => {}
        }
    }

    fn rebuild_swapchain(&mut self) -> Result<(), ViewerError> {
        self.ctx.wait_idle()?;
        let size = self.window.inner_size();
        let Some(gfx) = self.gfx.as_mut() else { return Ok(()) };
        let old = gfx.swapchain.take();
        let old_handle = old.as_ref().map_or(vk::SwapchainKHR::null(), |s| s.handle);
        gfx.swapchain = Swapchain::new(
            &self.ctx,
            &self.surface_loader,
            self.surface,
            self.format,
            &gfx.lit,
            vk::Extent2D { width: size.width, height: size.height },
            old_handle,
        )?;
        drop(old);
        self.needs_rebuild = false;
        Ok(())
    }

    fn draw_frame(&mut self) -> Result<(), ViewerError> {
        let size = self.window.inner_size();
        if size.width == 0 || size.height == 0 {
            return Ok(()); // minimized: nothing to draw, nothing lost
        }
        if self.needs_rebuild || self.gfx.as_ref().is_some_and(|g| g.swapchain.is_none()) {
            self.rebuild_swapchain()?;
        }
        let slot = (self.frame_index % FRAMES_IN_FLIGHT as u64) as usize;
        let device = self.ctx.device.clone();
        self.finish_slot(slot)?;

        let Some(gfx) = self.gfx.as_mut() else { return Ok(()) };
        let Some(sc) = gfx.swapchain.as_ref() else { return Ok(()) };
        // SAFETY: swapchain and semaphore are live; the semaphore is unsignalled (its last
        // wait completed with this slot's fence).
        let acquired = unsafe { sc.loader.acquire_next_image(sc.handle, u64::MAX, gfx.frames[slot].image_available, vk::Fence::null()) };
        let image = match acquired {
            Ok((i, suboptimal)) => {
                self.needs_rebuild |= suboptimal;
                i as usize
            }
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => {
                self.needs_rebuild = true;
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        };
        let extent = sc.extent;

        // UI first: it decides what the panel shows this frame.
        let raw_input = self.egui_state.take_egui_input(&self.window);
        if let Some(img) = self.pending_id_image.take() {
            match &mut self.id_texture {
                Some(t) => t.set(img, egui::TextureOptions::NEAREST),
                None => self.id_texture = Some(self.egui_ctx.load_texture("id-view", img, egui::TextureOptions::NEAREST)),
            }
        }
        let panel = PanelData {
            scene: &self.scene,
            device: &self.ctx.device_name,
            detail: &self.detail,
            hovered: self.hovered.as_ref(),
            selected: self.selected.as_ref(),
            latency: self.latency,
            id_texture: self.id_texture.as_ref(),
        };
        let mut show_ids = self.show_ids;
        let full = self.egui_ctx.run_ui(raw_input, |ui| panel_ui(ui, &panel, &mut show_ids));
        self.show_ids = show_ids;
        self.egui_state.handle_platform_output(&self.window, full.platform_output);
        let pixels_per_point = full.pixels_per_point;
        let primitives = self.egui_ctx.tessellate(full.shapes, pixels_per_point);
        let Some(gfx) = self.gfx.as_mut() else { return Ok(()) };
        for (id, deltas) in &full.textures_delta.set {
            for delta in deltas {
                gfx.egui_renderer
                    .set_texture(self.ctx.queue, gfx.commands.pool(), *id, delta)
                    .map_err(|e| ViewerError::Window(format!("egui texture: {e}")))?;
            }
        }
        gfx.frames[slot].egui_free = full.textures_delta.free.iter().copied().collect();
        // Applied above (set) or queued until this frame completes (free).
        let mut deltas = full.textures_delta;
        deltas.clear();

        let view = self.view_rect_for(extent);
        let camera = view.map(|(_, _, w, h)| self.camera.matrices(w as f32 / h as f32));
        let pick_pixel = self.cursor_in_view();
        let Some(gfx) = self.gfx.as_mut() else { return Ok(()) };
        let shown = self.selected.as_ref().and_then(|r| r.hit.as_ref()).or(self.hovered.as_ref().and_then(|r| r.hit.as_ref()));
        let markers = shown.map(|h| h.markers(0.008));
        let slot_of = |r: Option<&PickReport>| r.and_then(|r| r.hit.as_ref()).and_then(|h| h.scene_node).and_then(|n| gfx.gpu.node_slot[n]);
        // SAFETY: `finish_slot` waited on the slot's fence: the frame that last drew with this
        // style has completed.
        unsafe { gfx.frames[slot].style.update(slot_of(self.hovered.as_ref()), slot_of(self.selected.as_ref()), markers.as_ref()) }?;

        let frame = &gfx.frames[slot];
        let cmd = frame.cmd;
        // SAFETY: the slot's fence was waited in `finish_slot`, so its command buffer is idle.
        unsafe {
            device.reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty())?;
            device.begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT))?;
        }
        let mut pick = None;
        if let (Some((vx, vy, vw, vh)), Some(cam), Some(pixel)) = (view, camera.as_ref(), pick_pixel) {
            let viewport = Viewport { x: vx as f32, y: vy as f32, width: vw as f32, height: vh as f32, min_depth: 0.0, max_depth: 1.0 };
            let request = PickRequest::new(pixel, viewport, cam.view, cam.projection);
            // SAFETY: `cmd` is recording outside a render pass; the scene buffers live as long
            // as `gfx`, which outlives every frame's work (the device idles before it drops).
            unsafe { gfx.picker.record_shared(cmd, slot, &request, &gfx.gpu.gpu.pick_draws) }?;
            pick = Some(PendingPick { click: std::mem::take(&mut self.click_requested), frame: self.frame_index, at: Instant::now() });
        } else {
            self.click_requested = false;
        }
        gfx.frames[slot].pick = pick;
        if let (true, false, Some((_, _, vw, vh)), Some(cam)) = (self.show_ids, self.id_view_busy, view, camera.as_ref()) {
            if gfx.id_image.as_ref().is_none_or(|i| i.extent() != (vw, vh)) {
                gfx.id_image = None;
                // SAFETY: the context outlives the image (Gfx drops first).
                gfx.id_image = Some(unsafe { IdImage::new(self.ctx.host_device(), picking_vk::DepthConvention::Standard, vw, vh) }?);
            }
            // The ID view shows the 3D view alone, so its viewport starts at the image origin.
            let viewport = Viewport { x: 0.0, y: 0.0, width: vw as f32, height: vh as f32, min_depth: 0.0, max_depth: 1.0 };
            let request = PickRequest::new(UVec2::ZERO, viewport, cam.view, cam.projection);
            if let Some(ids) = gfx.id_image.as_mut() {
                // SAFETY: as for the pick; only one ID-view copy is in flight at a time.
                unsafe { ids.record(cmd, &request, &gfx.gpu.gpu.pick_draws, false, picking_vk::IdCopy::Whole) }?;
                gfx.frames[slot].id_view_recorded = true;
                self.id_view_busy = true;
            }
        }
        let Some(sc) = gfx.swapchain.as_ref() else { return Ok(()) };
        // SAFETY: `cmd` is recording; framebuffer and buffers are live.
        unsafe {
            gfx.lit.begin(cmd, sc.framebuffers[image], extent);
            if let (Some((vx, vy, vw, vh)), Some(cam)) = (view, camera.as_ref()) {
                let viewport = vk::Viewport { x: vx as f32, y: vy as f32, width: vw as f32, height: vh as f32, min_depth: 0.0, max_depth: 1.0 };
                gfx.lit.draw_scene(cmd, &gfx.gpu.gpu, &gfx.frames[slot].style, cam, viewport, markers.as_ref());
            }
        }
        gfx.egui_renderer.cmd_draw(cmd, extent, pixels_per_point, &primitives).map_err(|e| ViewerError::Window(format!("egui draw: {e}")))?;
        // SAFETY: as above.
        unsafe {
            gfx.lit.end(cmd);
            device.end_command_buffer(cmd)?;
        }
        let frame = &gfx.frames[slot];
        let waits = [frame.image_available];
        let stages = [vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT];
        let signals = [sc.render_finished[image]];
        let cmds = [cmd];
        let submit = vk::SubmitInfo::default().wait_semaphores(&waits).wait_dst_stage_mask(&stages).command_buffers(&cmds).signal_semaphores(&signals);
        // SAFETY: the fence was waited; everything submitted is live.
        unsafe {
            device.reset_fences(&[frame.fence])?;
            device.queue_submit(self.ctx.queue, &[submit], frame.fence)?;
        }
        let swapchains = [sc.handle];
        let indices = [image as u32];
        let present = vk::PresentInfoKHR::default().wait_semaphores(&signals).swapchains(&swapchains).image_indices(&indices);
        // SAFETY: the image was acquired and rendered this frame.
        match unsafe { sc.loader.queue_present(self.ctx.queue, &present) } {
            Ok(suboptimal) => self.needs_rebuild |= suboptimal,
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => self.needs_rebuild = true,
            Err(e) => return Err(e.into()),
        }
        if self.frame_index == 0 {
            println!("ready: {}x{} on {}", extent.width, extent.height, self.ctx.device_name);
        }
        self.frame_index += 1;
        Ok(())
    }

    /// The 3D view in a framebuffer of `extent`: all but the panel on the left, physical pixels.
    fn view_rect_for(&self, extent: vk::Extent2D) -> Option<(u32, u32, u32, u32)> {
        let panel = ((PANEL_WIDTH * self.window.scale_factor()).round() as u32).min(extent.width);
        let w = extent.width - panel;
        (w > 0 && extent.height > 0).then_some((panel, 0, w, extent.height))
    }

    /// Waits for the slot's previous frame (as every frame loop does before reusing its
    /// command buffer), then takes that frame's pick result and ID view: no extra stall.
    fn finish_slot(&mut self, slot: usize) -> Result<(), ViewerError> {
        let cursor_in_view = self.cursor_in_view().is_some();
        let Some(gfx) = self.gfx.as_mut() else { return Ok(()) };
        let frame = &mut gfx.frames[slot];
        // SAFETY: the fence is live.
        unsafe { self.ctx.device.wait_for_fences(&[frame.fence], true, u64::MAX) }?;
        if let Some(pending) = frame.pick.take() {
            // SAFETY: the fence of the frame that recorded into this slot has signalled.
            if let Some(result) = unsafe { gfx.picker.take_result(slot) }? {
                let report = PickReport::new(&result, &self.scene, &self.objects);
                self.latency = Some((self.frame_index - pending.frame, pending.at.elapsed().as_secs_f64() * 1e3));
                if pending.click {
                    match &report.hit {
                        Some(h) => println!("selected: node={:?} name={:?} instance={:?} pixel=({}, {})", h.node, h.node_name, h.instance, report.x, report.y),
                        None => println!("selected: nothing at ({}, {})", report.x, report.y),
                    }
                    self.selected = report.hit.is_some().then(|| report.clone());
                }
                self.hovered = Some(report);
            }
        } else if !cursor_in_view {
            self.hovered = None;
        }
        if std::mem::take(&mut frame.id_view_recorded) {
            if let Some(ids) = &gfx.id_image {
                // SAFETY: the frame that recorded the copy has completed.
                let texels = unsafe { ids.read() }?;
                let (w, h) = ids.extent();
                let rgba: Vec<u8> = texels.iter().flat_map(id_view::false_colour).collect();
                self.pending_id_image = Some(egui::ColorImage::from_rgba_unmultiplied([w as usize, h as usize], &rgba));
            }
            self.id_view_busy = false;
        }
        for id in std::mem::take(&mut frame.egui_free) {
            gfx.egui_renderer.free_texture(id).map_err(|e| ViewerError::Window(format!("egui: {e}")))?;
        }
        Ok(())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.ctx.wait_idle();
        self.gfx = None;
        // SAFETY: the swapchain (the surface's only user) is gone.
        unsafe { self.surface_loader.destroy_surface(self.surface, None) };
    }
}

struct PanelData<'a> {
    scene: &'a Scene,
    device: &'a str,
    detail: &'a DetailStatus,
    hovered: Option<&'a PickReport>,
    selected: Option<&'a PickReport>,
    latency: Option<(u64, f64)>,
    id_texture: Option<&'a egui::TextureHandle>,
}

fn panel_ui(ui: &mut egui::Ui, p: &PanelData<'_>, show_ids: &mut bool) {
    egui::Panel::left("picking").exact_size(PANEL_WIDTH as f32).resizable(false).show(ui, |ui| {
        ui.heading("picking-vk");
        ui.label(format!("Device: {}", p.device));
        match p.detail {
            DetailStatus::Active => ui.label("Detail picking: active (face, barycentrics, normal, UV)"),
            DetailStatus::NotRequested => ui.label("Detail picking: off"),
            DetailStatus::Unavailable { missing } => ui.label(format!("Detail picking: unavailable ({})", missing.join("; "))),
        };
        if let Some((frames, ms)) = p.latency {
            ui.label(format!("Pick latency: {frames} frames ({ms:.1} ms), no CPU stall"));
        }
        ui.separator();
        ui.label(egui::RichText::new("Hovered").strong());
        match p.hovered.and_then(|r| r.hit.as_ref()) {
            Some(h) => ui.label(format!("{} (id {})", h.node_name.as_deref().unwrap_or("unnamed"), h.id)),
            None => ui.label("nothing"),
        };
        ui.separator();
        ui.label(egui::RichText::new("Selected (click)").strong());
        match p.selected {
            Some(r) => report_grid(ui, r, p.scene),
            None => {
                ui.label("nothing: click an object");
            }
        }
        ui.separator();
        ui.checkbox(show_ids, "ID buffer view (D)");
        if *show_ids {
            if let Some(t) = p.id_texture {
                let size = t.size_vec2();
                let w = ui.available_width();
                ui.image((t.id(), egui::vec2(w, w * size.y / size.x.max(1.0))));
            }
        }
        ui.separator();
        ui.small("Drag: orbit · right-drag: pan · wheel: zoom · click: select · D: ID view · Esc: quit");
    });
}

fn report_grid(ui: &mut egui::Ui, r: &PickReport, _scene: &Scene) {
    let Some(h) = &r.hit else { return };
    let v3 = |v: glam::DVec3| format!("({:.3}, {:.3}, {:.3})", v.x, v.y, v.z);
    egui::Grid::new("selected").num_columns(2).striped(true).show(ui, |ui| {
        let mut row = |k: &str, v: String| {
            ui.label(k);
            ui.label(v);
            ui.end_row();
        };
        row("ID", h.id.to_string());
        row("Object", h.node_name.clone().unwrap_or_else(|| "unnamed".into()));
        row("glTF node", h.node.map_or("-".into(), |n| n.to_string()));
        row("Instance", h.instance.map_or("-".into(), |i| i.to_string()));
        row("Pixel", format!("({}, {})", r.x, r.y));
        row("Depth", format!("{:.6}", h.depth));
        row("World", v3(h.world));
        row("Distance", format!("{:.4}", h.distance));
        if let Some(d) = h.detail {
            row("Face", d.face.to_string());
            row("Barycentrics", format!("({:.4}, {:.4}, {:.4})", d.barycentrics[0], d.barycentrics[1], d.barycentrics[2]));
            if let Some(n) = h.normal() {
                row("Normal", v3(n));
            }
            if let Some(uv) = d.surface.and_then(|s| s.uv) {
                row("UV", format!("({:.4}, {:.4})", uv.x, uv.y));
            }
        }
    });
}
