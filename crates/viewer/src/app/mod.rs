//! The desktop viewer, and the reference for integrating picking-vk into a frame loop.
//!
//! - [`picking`]: the whole picker integration, the part an engine copies: create the picker,
//!   and every frame take the slot's result after its fence, then record a pick at the cursor.
//! - `frame_loop`: acquire, record (pick, ID view, lit pass, panel), submit, present.
//! - `input`: mouse and keyboard to camera moves and pick intents (clicks, rubber bands).
//! - `view_rect`: where the 3D view sits in the window; window positions to its pixels.
//! - `band`: the rubber band's rectangle and its outline over the view.
//! - `selection`: the selected objects, and what clicks and bands do to them.
//! - `panel`: the egui side panel.
//! - `id_buffer`: the ID buffer debug view (`D`).
//! - `setup`: the window, the Vulkan context and surface, and the GPU objects.
//! - `recovery`: device loss: everything made from the device is made again.
//! - `visibility`: nothing is drawn while the window cannot be seen.

mod band;
mod frame_loop;
mod id_buffer;
mod id_texture;
mod input;
mod panel;
pub mod picking;
mod recovery;
mod selection;
mod settings;
mod setup;
mod view_rect;
mod visibility;

pub use recovery::INJECT_DEVICE_LOSS_ENV;
pub use visibility::AppEvent;

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
use recovery::Recovery;
use std::sync::Arc;
use visibility::Visibility;
use winit::application::ApplicationHandler;
use winit::event::{DeviceEvent, DeviceId, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, DeviceEvents, EventLoop, EventLoopProxy};
use winit::window::{Window, WindowId};

const FRAMES_IN_FLIGHT: usize = 2;

/// Set (to anything) to have the viewer print what input did: zoom steps, the camera after
/// each drag and reset, drags ended without a release, the ID view toggle, and the hovered
/// object when it changes (for tests).
pub const TRACE_ENV: &str = "PICKING_VK_VIEWER_TRACE";

fn tracing() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os(TRACE_ENV).is_some())
}

/// `println!` when [`TRACE_ENV`] is set.
macro_rules! trace {
    ($($arg:tt)*) => {
        if $crate::app::tracing() {
            println!($($arg)*);
        }
    };
}
use trace;

pub struct AppOptions {
    pub validation: bool,
    pub detail: bool,
    /// How the picker begins its passes.
    pub rendering: picking_vk::config::PassRendering,
    pub exit_after_frames: Option<u64>,
    /// Where animation playback starts (paused there); `None`: playing from 0.
    pub time: Option<f32>,
}

/// Runs the window until it closes; returns the process exit code.
pub fn run(scene: Scene, options: AppOptions) -> Result<u8, ViewerError> {
    let recovery = Recovery::from_env()?;
    let event_loop = EventLoop::<AppEvent>::with_user_event()
        .build()
        .map_err(|e| ViewerError::Window(format!("no display to open a window on ({e}); use --headless or --demo")))?;
    let proxy = event_loop.create_proxy();
    let mut app = App { scene: Some(scene), options, proxy, recovery: Some(recovery), running: None, error: None, exit_code: 0 };
    event_loop.run_app(&mut app).map_err(|e| ViewerError::Window(e.to_string()))?;
    if let Some(e) = app.error {
        return Err(e);
    }
    Ok(app.exit_code)
}

struct App {
    scene: Option<Scene>,
    options: AppOptions,
    proxy: EventLoopProxy<AppEvent>,
    recovery: Option<Recovery>,
    running: Option<Running>,
    error: Option<ViewerError>,
    exit_code: u8,
}

/// The scene on show and the camera looking at it.
struct SceneView {
    scene: Scene,
    objects: ObjectTable,
    camera: OrbitCamera,
    /// The camera the window opened with (`R` / `Home` go back to it).
    home: OrbitCamera,
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
    /// The lit pass's set of each slot's GPU results (dropped before the pass).
    pick_sets: picking_vk_host::PickSets,
    lit: LitPass,
}

/// Everything made from one Vulkan device, made again whole when the device is lost.
struct Gpu {
    gfx: Option<Gfx>,
    surface: WindowSurface,
    /// The swapchain no longer matches the window (resized, out of date or suboptimal).
    needs_rebuild: bool,
    ctx: VulkanContext,
}

/// The open window and everything drawn in it.
struct Running {
    gpu: Option<Gpu>,
    panel: Panel,
    input: Input,
    view: SceneView,
    frame_index: u64,
    visibility: Visibility,
    /// Why rendering is paused, while it is.
    paused: Option<&'static str>,
    recovery: Recovery,
    /// When free heap pages last went back to the system.
    last_trim: std::time::Instant,
    window: Arc<Window>,
}

impl ApplicationHandler<AppEvent> for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.running.is_some() {
            return;
        }
        let (Some(scene), Some(recovery)) = (self.scene.take(), self.recovery.take()) else { return };
        // Raw button events tell drags and wheel clicks apart on X11 (see `input`).
        event_loop.listen_device_events(DeviceEvents::Always);
        match Running::new(event_loop, scene, &self.options, recovery) {
            Ok(r) => {
                visibility::watch_map_state(&r.window, self.proxy.clone());
                self.running = Some(r);
            }
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
            WindowEvent::Resized(_) | WindowEvent::ScaleFactorChanged { .. } => {
                if let Some(gpu) = r.gpu.as_mut() {
                    gpu.needs_rebuild = true;
                }
            }
            WindowEvent::Occluded(occluded) => {
                r.visibility.occluded = occluded;
                if occluded {
                    r.input.release_drags(&r.view.camera);
                }
            }
            WindowEvent::RedrawRequested => {
                let drawn = match r.draw_frame() {
                    Err(e) if recovery::is_device_lost(&e) => r.recover(&e, &self.options),
                    other => other,
                };
                if let Err(e) = drawn {
                    self.error = Some(e);
                    event_loop.exit();
                } else if self.options.exit_after_frames.is_some_and(|n| r.frame_index >= n) {
                    event_loop.exit();
                }
            }
            event => {
                let view = r.view_rect();
                match r.input.handle(&event, consumed_by_ui, view, r.window.scale_factor(), &mut r.view.camera) {
                    input::Handled::Quit => event_loop.exit(),
                    input::Handled::ResetView => {
                        r.view.camera = r.view.home;
                        trace!("view reset: {}", input::describe(&r.view.camera));
                    }
                    input::Handled::Continue => {}
                }
            }
        }
    }

    fn device_event(&mut self, _event_loop: &ActiveEventLoop, _id: DeviceId, event: DeviceEvent) {
        if let (Some(r), DeviceEvent::Button { button, state }) = (self.running.as_mut(), event) {
            if r.x11() {
                r.input.raw_button(button, state);
            }
        }
    }

    fn user_event(&mut self, _event_loop: &ActiveEventLoop, event: AppEvent) {
        let Some(r) = self.running.as_mut() else { return };
        match event {
            AppEvent::Mapped(mapped) => {
                r.visibility.mapped = mapped;
                if !mapped {
                    r.input.release_drags(&r.view.camera);
                }
            }
        }
    }

    fn about_to_wait(&mut self, event_loop: &ActiveEventLoop) {
        let Some(r) = self.running.as_mut() else { return };
        // Draw continuously while the window can be seen; otherwise sleep until an event.
        let hidden = r.visibility.hidden_because(&r.window);
        if hidden != r.paused {
            match hidden {
                Some(why) => println!("paused: {why} frame={}", r.frame_index),
                None => println!("resumed: frame={}", r.frame_index),
            }
            r.paused = hidden;
        }
        event_loop.set_control_flow(ControlFlow::Wait);
        if hidden.is_none() {
            r.window.request_redraw();
        }
        if r.last_trim.elapsed() >= HEAP_TRIM_EVERY {
            trim_heap();
            r.last_trim = std::time::Instant::now();
        }
    }

    fn exiting(&mut self, _event_loop: &ActiveEventLoop) {
        if let Some(mut r) = self.running.take() {
            let frames = r.frame_index;
            let losses = r.recovery.losses;
            // Dropping the device first: teardown's messages count too.
            r.gpu = None;
            let count = r.recovery.validation_messages().len();
            drop(r);
            println!("exit: frames={frames} validation_messages={count} device_losses={losses}");
            if self.options.validation && count > 0 {
                self.exit_code = 3;
            }
        }
    }
}

/// How often free heap pages go back to the system.
const HEAP_TRIM_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// Hands free heap pages back to the system (glibc's `malloc_trim`: 2 to 4 ms on lavapipe).
/// egui's per-frame buffers, the ID view's readbacks and the validation layer's per-command
/// records free memory all over glibc's heaps, where it stays resident: under the soak test's
/// input storm, resident memory then crept up by a few hundred KiB a minute while the heap in
/// use (heaptrack) stayed flat.
fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: glibc's malloc_trim only releases free memory; it may be called at any time.
        unsafe { malloc_trim(0) };
    }
}

impl Running {
    fn x11(&self) -> bool {
        use raw_window_handle::{HasWindowHandle, RawWindowHandle};
        matches!(self.window.window_handle().map(|h| h.as_raw()), Ok(RawWindowHandle::Xlib(_) | RawWindowHandle::Xcb(_)))
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        // A lost device answers at once; destroying its objects is still valid then.
        let _ = self.ctx.wait_idle();
        self.gfx = None;
        // SAFETY: the swapchain (the surface's only user) is gone.
        unsafe { self.surface.loader.destroy_surface(self.surface.handle, None) };
    }
}

/// egui renderer errors, with device loss kept recognisable.
pub(crate) fn egui_error(e: egui_ash_renderer::RendererError) -> ViewerError {
    match e {
        egui_ash_renderer::RendererError::Vulkan(r) => ViewerError::Vulkan(picking_vk_context::ContextError::Vulkan(r)),
        e => ViewerError::Window(format!("egui: {e}")),
    }
}
