//! A winit + wgpu app that draws a scene of meshes and instances with its own WGSL pipeline,
//! with hover highlight, click selection and a shift-drag rubber band through picking-vk
//! (all of it in `picking.rs`).
//!
//! `cargo run -p picking-vk-wgpu --example wgpu_app` opens the window (Esc closes it; the
//! arrow keys orbit). `-- --headless OUT.png` renders one frame offscreen instead, with a
//! scripted hover and band, and prints what was picked.

mod picking;
#[path = "../common/scene.rs"]
mod scene;

use glam::{DVec2, UVec2};
use picking::{MouseInput, Picking};
use scene::{example_scene, orbit_camera, SceneRenderer};
use std::sync::Arc;
use winit::application::ApplicationHandler;
use winit::event::{ElementState, KeyEvent, MouseButton, WindowEvent};
use winit::event_loop::{ActiveEventLoop, EventLoop};
use winit::keyboard::{Key, NamedKey};
use winit::window::{Window, WindowId};

type Error = Box<dyn std::error::Error>;

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag, out] if flag == "--headless" => headless(out),
        [] => Ok(EventLoop::new()?.run_app(&mut App::default())?),
        _ => Err("usage: wgpu_app [--headless OUT.png]".into()),
    }
}

fn instance() -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = wgpu::Backends::VULKAN;
    wgpu::Instance::new(desc)
}

/// Everything that exists while the window does.
struct Running {
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    gpu: picking_vk_wgpu::PickingDevice,
    renderer: SceneRenderer,
    depth: wgpu::TextureView,
    picking: Picking,
    mouse: MouseInput,
    shift: bool,
    pressed_at: Option<DVec2>,
    angle: f32,
}

#[derive(Default)]
struct App {
    running: Option<Running>,
    error: Option<Error>,
}

impl App {
    fn start(&mut self, event_loop: &ActiveEventLoop) -> Result<Running, Error> {
        let attributes = Window::default_attributes().with_title("picking-vk wgpu example").with_inner_size(winit::dpi::PhysicalSize::new(960, 600));
        let window = Arc::new(event_loop.create_window(attributes)?);
        let instance = instance();
        let surface = instance.create_surface(Arc::clone(&window))?;
        let options = wgpu::RequestAdapterOptions { compatible_surface: Some(&surface), ..Default::default() };
        let adapter = pollster::block_on(instance.request_adapter(&options))?;
        let gpu = picking::open_device(&adapter)?;
        let size = window.inner_size();
        let config = surface.get_default_config(&adapter, size.width.max(1), size.height.max(1)).ok_or("the surface does not fit the adapter")?;
        surface.configure(&gpu.device, &config);
        let renderer = SceneRenderer::new(&gpu.device, &example_scene(), config.format);
        let depth = depth_view(&gpu.device, config.width, config.height);
        let picking = Picking::new(&gpu, &renderer)?;
        Ok(Running { window, surface, config, gpu, renderer, depth, picking, mouse: MouseInput::default(), shift: false, pressed_at: None, angle: 0.6 })
    }
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.running.is_none() {
            match self.start(event_loop) {
                Ok(running) => self.running = Some(running),
                Err(e) => {
                    self.error = Some(e);
                    event_loop.exit();
                }
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _: WindowId, event: WindowEvent) {
        let Some(r) = &mut self.running else { return };
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::KeyboardInput { event: KeyEvent { logical_key, state: ElementState::Pressed, .. }, .. } => match logical_key {
                Key::Named(NamedKey::Escape) => event_loop.exit(),
                Key::Named(NamedKey::ArrowLeft) => r.angle -= 0.1,
                Key::Named(NamedKey::ArrowRight) => r.angle += 0.1,
                _ => {}
            },
            WindowEvent::ModifiersChanged(m) => r.shift = m.state().shift_key(),
            WindowEvent::CursorMoved { position, .. } => r.mouse.cursor = Some(DVec2::new(position.x, position.y)),
            WindowEvent::CursorLeft { .. } => r.mouse.cursor = None,
            WindowEvent::MouseInput { state, button: MouseButton::Left, .. } => match state {
                ElementState::Pressed => {
                    r.pressed_at = r.mouse.cursor;
                    r.mouse.band_from = if r.shift { r.mouse.cursor } else { None };
                }
                ElementState::Released => {
                    r.mouse.band_released = r.mouse.band_from.is_some();
                    r.mouse.clicked = !r.mouse.band_released && r.pressed_at.is_some();
                }
            },
            WindowEvent::Resized(size) if size.width > 0 && size.height > 0 => {
                (r.config.width, r.config.height) = (size.width, size.height);
                r.surface.configure(&r.gpu.device, &r.config);
                r.depth = depth_view(&r.gpu.device, size.width, size.height);
            }
            WindowEvent::RedrawRequested => {
                if let Err(e) = r.redraw() {
                    self.error = Some(e);
                    event_loop.exit();
                }
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, _: &ActiveEventLoop) {
        if let Some(r) = &self.running {
            r.window.request_redraw();
        }
    }
}

impl Running {
    fn redraw(&mut self) -> Result<(), Error> {
        let size = UVec2::new(self.config.width, self.config.height);
        let (view, proj) = orbit_camera(self.angle, size.x as f32 / size.y as f32);
        // Picking first: its result tints this very frame.
        self.picking.frame(&self.mouse, view, proj, size)?;
        if self.mouse.band_released || self.mouse.clicked {
            self.mouse.band_from = None;
        }
        (self.mouse.clicked, self.mouse.band_released) = (false, false);
        let frame = match self.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(frame) | wgpu::CurrentSurfaceTexture::Suboptimal(frame) => frame,
            _ => {
                self.surface.configure(&self.gpu.device, &self.config);
                return Ok(());
            }
        };
        self.renderer.update(&self.gpu.queue, proj * view, &self.picking.highlight);
        let mut encoder = self.gpu.device.create_command_encoder(&Default::default());
        let color = frame.texture.create_view(&Default::default());
        self.renderer.render(&mut encoder, &color, &self.depth);
        self.gpu.queue.submit([encoder.finish()]);
        self.window.pre_present_notify();
        self.gpu.queue.present(frame);
        let h = &self.picking.highlight;
        let title =
            format!("picking-vk wgpu example: hover {:?}, {} selected, picker memory {} KiB", h.hovered, h.selected.len(), self.picking.memory_bytes() / 1024);
        self.window.set_title(&title);
        Ok(())
    }
}

fn depth_view(device: &wgpu::Device, width: u32, height: u32) -> wgpu::TextureView {
    let desc = wgpu::TextureDescriptor {
        label: Some("depth"),
        size: wgpu::Extent3d { width, height, depth_or_array_layers: 1 },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: scene::DEPTH_FORMAT,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    };
    device.create_texture(&desc).create_view(&Default::default())
}

/// Offscreen: a click on a cube of the instanced field, then a frame with a band dragged over
/// the rod and the box; writes that frame's image and prints the picks.
fn headless(out: &str) -> Result<(), Error> {
    let size = UVec2::new(800, 500);
    let adapter = pollster::block_on(instance().request_adapter(&Default::default()))?;
    let gpu = picking::open_device(&adapter)?;
    let renderer = SceneRenderer::new(&gpu.device, &example_scene(), scene::COLOR_FORMAT);
    let mut picking = Picking::new(&gpu, &renderer)?;
    let (view, proj) = orbit_camera(0.6, size.x as f32 / size.y as f32);
    let click = MouseInput { cursor: Some(DVec2::new(390.0, 330.0)), clicked: true, ..Default::default() };
    picking.frame(&click, view, proj, size)?;
    let band = MouseInput { cursor: Some(DVec2::new(415.0, 210.0)), band_from: Some(DVec2::new(300.0, 100.0)), ..Default::default() };
    picking.frame(&band, view, proj, size)?;
    println!("hovered {:?}, selected {:?}, band {:?}", picking.highlight.hovered, picking.highlight.selected, picking.highlight.band);
    renderer.update(&gpu.queue, proj * view, &picking.highlight);
    let target = scene::offscreen(&gpu.device, size);
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    renderer.render(&mut encoder, &target.color, &target.depth);
    let pixels = scene::read_back(&gpu.device, &gpu.queue, encoder, &target.color_texture)?;
    image::RgbaImage::from_raw(size.x, size.y, pixels).ok_or("image size")?.save(out)?;
    println!("wrote {out}");
    Ok(())
}
