//! Mouse and keyboard: drag to orbit, right- or middle-drag to pan, wheel to zoom, a click
//! (press and release without a drag) over the 3D view asks for a selection, `D` toggles the
//! ID buffer view, `Esc` quits. Also where the 3D view sits in the window.

use crate::camera::OrbitCamera;
use ash::vk;
use glam::{DVec2, UVec2};
use picking_vk::{cursor_to_pixel, ViewPlacement, Viewport};
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::keyboard::{Key, NamedKey};

/// Width of the side panel, logical pixels. The panel is on the left, so the 3D view starts
/// at an offset: cursor mapping must account for it.
pub(super) const PANEL_WIDTH: f64 = 330.0;

/// The 3D view in the framebuffer, physical pixels.
#[derive(Clone, Copy, Debug)]
pub(super) struct ViewRect {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

impl ViewRect {
    /// The 3D view in a framebuffer of `extent`: all but the panel on the left.
    pub fn in_framebuffer(extent: vk::Extent2D, scale_factor: f64) -> Option<Self> {
        let panel = ((PANEL_WIDTH * scale_factor).round() as u32).min(extent.width);
        let width = extent.width - panel;
        (width > 0 && extent.height > 0).then_some(ViewRect { x: panel, y: 0, width, height: extent.height })
    }

    pub fn aspect(&self) -> f32 {
        self.width as f32 / self.height as f32
    }

    /// The view's viewport, for the lit pass and the pick request alike.
    pub fn viewport(&self) -> vk::Viewport {
        picking_vk_host::vk_util::viewport(self.x, self.y, self.width, self.height)
    }

    /// The same viewport as the picker takes it.
    pub fn pick_viewport(&self) -> Viewport {
        let v = self.viewport();
        Viewport { x: v.x, y: v.y, width: v.width, height: v.height, min_depth: v.min_depth, max_depth: v.max_depth }
    }

    /// The framebuffer pixel under `cursor` (physical pixels), when it is over the view.
    pub fn pixel_under(&self, cursor: DVec2, scale_factor: f64) -> Option<UVec2> {
        let placement = ViewPlacement {
            origin: DVec2::new(f64::from(self.x), f64::from(self.y)),
            size: DVec2::new(f64::from(self.width), f64::from(self.height)),
            render_extent: UVec2::new(self.width, self.height),
        };
        let in_view = cursor_to_pixel(cursor / scale_factor, scale_factor, placement).ok()?.inside()?;
        Some(in_view + UVec2::new(self.x, self.y))
    }
}

/// What the user asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Handled {
    Continue,
    Quit,
}

#[derive(Default)]
pub(super) struct Input {
    /// Physical pixels, while the cursor is over the window.
    cursor: Option<DVec2>,
    /// Left button held: where it went down, and whether it has become a drag.
    left_down: Option<(DVec2, bool)>,
    /// Right or middle button held: panning from here.
    pan_down: Option<DVec2>,
    /// A click to resolve with the next pick.
    click_requested: bool,
    /// Show the ID buffer view in the panel.
    pub show_ids: bool,
}

impl Input {
    /// The framebuffer pixel under the cursor, when it is over `view`.
    pub fn pixel(&self, view: Option<ViewRect>, scale_factor: f64) -> Option<UVec2> {
        view?.pixel_under(self.cursor?, scale_factor)
    }

    /// Whether a click is waiting; it is cleared, so one click selects once.
    pub fn take_click(&mut self) -> bool {
        std::mem::take(&mut self.click_requested)
    }

    /// Applies one window event; `consumed_by_ui`: the panel used it.
    pub fn handle(&mut self, event: &WindowEvent, consumed_by_ui: bool, view: Option<ViewRect>, scale_factor: f64, camera: &mut OrbitCamera) -> Handled {
        let over_view = self.pixel(view, scale_factor).is_some();
        match event {
            WindowEvent::KeyboardInput { event, .. } if event.state == ElementState::Pressed && !consumed_by_ui => match &event.logical_key {
                Key::Named(NamedKey::Escape) => return Handled::Quit,
                Key::Character(c) if c.eq_ignore_ascii_case("d") => self.show_ids = !self.show_ids,
                _ => {}
            },
            WindowEvent::CursorMoved { position, .. } => self.cursor_moved(DVec2::new(position.x, position.y), view, camera),
            WindowEvent::CursorLeft { .. } => self.cursor = None,
            WindowEvent::MouseInput { state, button, .. } => self.mouse_button(*state, *button, over_view && !consumed_by_ui),
            WindowEvent::MouseWheel { delta, .. } if !consumed_by_ui && over_view => {
                let steps = match delta {
                    MouseScrollDelta::LineDelta(_, y) => *y,
                    MouseScrollDelta::PixelDelta(p) => p.y as f32 / 50.0,
                };
                camera.zoom(steps);
            }
            _ => {}
        }
        Handled::Continue
    }

    fn cursor_moved(&mut self, p: DVec2, view: Option<ViewRect>, camera: &mut OrbitCamera) {
        if let Some(old) = self.cursor {
            let d = p - old;
            if let Some((start, dragging)) = self.left_down {
                if dragging || (p - start).length() > 4.0 {
                    self.left_down = Some((start, true));
                    camera.rotate(d.x as f32, d.y as f32);
                }
            }
            if self.pan_down.is_some() {
                let h = view.map_or(1.0, |r| r.height as f32);
                camera.pan(d.x as f32, d.y as f32, h);
            }
        }
        self.cursor = Some(p);
    }

    fn mouse_button(&mut self, state: ElementState, button: MouseButton, over_view: bool) {
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
}
