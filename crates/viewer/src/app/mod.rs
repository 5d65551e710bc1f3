//! The desktop viewer, and the reference for integrating picking-vk into a frame loop.
//!
//! - [`picking`]: the whole picker integration, the part an engine copies: create the picker,
//!   and every frame take the slot's result after its fence, then record a pick at the cursor.
//! - `frame_loop`: acquire, record (pick, ID view, lit pass, panel), submit, present.
//! - `input`: mouse and keyboard to camera moves and pick intents; the 3D view's rectangle.
//! - `panel`: the egui side panel.
//! - `id_buffer`: the ID buffer debug view (`D`).
//! - `setup`: the window, the Vulkan context and surface, and the GPU objects.

mod frame_loop;
mod id_buffer;
mod input;
mod panel;
pub mod picking;
mod setup;

use crate::camera::OrbitCamera;
use crate::objects::ObjectTable;
use crate::scene::Scene;
use crate::scene_upload::UploadedScene;
use crate::swapchain::Swapchain;
use crate::ViewerError;
use ash::vk;
use frame_loop::Frames;
use id_buffer::IdBufferView;
use input::Input;
use panel::Panel;
use picking::Picking;
use picking_vk_context::VulkanContext;
use picking_vk_host::LitPass;
use std::sync::Arc;
use winit::application::ApplicationHandler;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, EventLoop};
use winit::window::{Window, WindowId};

const FRAMES_IN_FLIGHT: usize = 2;

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

/// The scene on show and the camera looking at it.
struct SceneView {
    scene: Scene,
    objects: ObjectTable,
    camera: OrbitCamera,
}

/// The window's Vulkan surface and the format its swapchains use.
struct WindowSurface {
    loader: ash::khr::surface::Instance,
    handle: vk::SurfaceKHR,
    format: vk::SurfaceFormatKHR,
}

/// GPU objects, dropped in declaration order (device idle) before the surface and the context.
struct Gfx {
    egui_renderer: egui_ash_renderer::Renderer<egui_ash_renderer::allocator::GpuAllocator>,
    picking: Picking,
    id_buffer: IdBufferView,
    frames: Frames,
    swapchain: Option<Swapchain>,
    scene: UploadedScene,
    lit: LitPass,
}

/// The open window and everything drawn in it.
struct Running {
    gfx: Option<Gfx>,
    surface: WindowSurface,
    panel: Panel,
    input: Input,
    view: SceneView,
    frame_index: u64,
    /// The swapchain no longer matches the window (resized, out of date or suboptimal).
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
        let consumed_by_ui = r.panel.on_window_event(&r.window, &event);
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::Resized(_) | WindowEvent::ScaleFactorChanged { .. } => r.needs_rebuild = true,
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
            event => {
                let view = r.view_rect();
                if r.input.handle(&event, consumed_by_ui, view, r.window.scale_factor(), &mut r.view.camera) == input::Handled::Quit {
                    event_loop.exit();
                }
            }
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

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.ctx.wait_idle();
        self.gfx = None;
        // SAFETY: the swapchain (the surface's only user) is gone.
        unsafe { self.surface.loader.destroy_surface(self.surface.handle, None) };
    }
}
