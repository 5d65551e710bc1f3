//! Mouse and keyboard: drag to orbit, right- or middle-drag to pan, wheel to zoom, a click
//! (press and release without a drag) over the 3D view asks for a selection, `D` toggles the
//! ID buffer view, `R` or `Home` resets the view, `Esc` quits. Also where the 3D view sits in
//! the window.
//!
//! Drags follow the pointer's absolute position, inside the window or out of it, so a drag
//! that leaves the window and comes back along the same path brings the camera back. A drag
//! ends when its button is released, and also when the window loses focus or is hidden, or
//! when the release happened where the window did not see it (X11's raw button events tell):
//! a drag never outlives its button.

use super::trace;
use crate::camera::OrbitCamera;
use ash::vk;
use glam::{DVec2, UVec2};
use picking_vk::{cursor_to_pixel, ViewPlacement, Viewport};
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::keyboard::{Key, NamedKey};

/// Width of the side panel, logical pixels. The panel is on the left, so the 3D view starts
/// at an offset: cursor mapping must account for it.
pub(super) const PANEL_WIDTH: f64 = 330.0;

/// Wheel steps per pixel of a pixel-precise (touchpad) scroll.
const STEPS_PER_PIXEL: f32 = 1.0 / 50.0;

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
    /// Back to the view the window opened with.
    ResetView,
}

/// One held button's drag.
#[derive(Clone, Copy, Debug, Default)]
struct Drag {
    /// Where the button went down (left button: a click until it moves 4 pixels).
    start: Option<DVec2>,
    /// The left button has moved far enough to be a drag, not a click.
    dragging: bool,
    /// X11 saw the button released (a raw event) and the window's own release has not come:
    /// it happened out of the window's sight, and the drag ends at the next move.
    released_unseen: bool,
}

#[derive(Default)]
pub(super) struct Input {
    /// Physical pixels, while the cursor is over the window: hover and picks.
    hover: Option<DVec2>,
    /// The pointer's last known position, also outside the window: drags use deltas of it.
    last: Option<DVec2>,
    /// Left button held: orbit (or a click).
    left: Drag,
    /// Right or middle button held: pan.
    pan: Drag,
    /// A click to resolve with the next pick.
    click_requested: bool,
    /// Show the ID buffer view in the panel.
    pub show_ids: bool,
    /// winit 0.30 on X11 reports a wheel button (4 to 7) as a wheel step on its press and
    /// again on its release (fixed in later winit). X11's raw events come just before each;
    /// a raw release marks the next wheel event as that echo, to be dropped.
    wheel_release_echo: bool,
}

impl Input {
    /// The framebuffer pixel under the cursor, when it is over `view`.
    pub fn pixel(&self, view: Option<ViewRect>, scale_factor: f64) -> Option<UVec2> {
        view?.pixel_under(self.hover?, scale_factor)
    }

    /// Whether a click is waiting; it is cleared, so one click selects once.
    pub fn take_click(&mut self) -> bool {
        std::mem::take(&mut self.click_requested)
    }

    /// Whether a drag is under way.
    #[cfg(test)]
    pub fn dragging(&self) -> bool {
        self.left.start.is_some() || self.pan.start.is_some()
    }

    /// Ends every drag without a click: the window lost focus or was hidden, so releases may
    /// never reach it.
    pub fn release_drags(&mut self, camera: &OrbitCamera) {
        if self.left.start.is_some() || self.pan.start.is_some() {
            trace!("drag: released without its button; {}", describe(camera));
        }
        self.left = Drag::default();
        self.pan = Drag::default();
    }

    /// A raw button event from X11 (`DeviceEvent::Button`, X button numbers), seen before the
    /// window's own event for the same press or release, and also when the window does not
    /// get one.
    pub fn raw_button(&mut self, button: u32, state: ElementState) {
        let released = state == ElementState::Released;
        match button {
            1 => self.left.released_unseen = released,
            2 | 3 => self.pan.released_unseen = released,
            // Only wheel events over the window come as window events: only count those.
            4..=7 => self.wheel_release_echo = released && self.hover.is_some(),
            _ => {}
        }
    }

    /// Applies one window event; `consumed_by_ui`: the panel used it.
    pub fn handle(&mut self, event: &WindowEvent, consumed_by_ui: bool, view: Option<ViewRect>, scale_factor: f64, camera: &mut OrbitCamera) -> Handled {
        let over_view = self.pixel(view, scale_factor).is_some();
        match event {
            // Synthetic presses (keys already down when focus arrives) and auto-repeat do not
            // toggle anything.
            WindowEvent::KeyboardInput { event, is_synthetic: false, .. } if event.state == ElementState::Pressed && !event.repeat && !consumed_by_ui => {
                match &event.logical_key {
                    Key::Named(NamedKey::Escape) => return Handled::Quit,
                    Key::Named(NamedKey::Home) => return Handled::ResetView,
                    Key::Character(c) if c.eq_ignore_ascii_case("r") => return Handled::ResetView,
                    Key::Character(c) if c.eq_ignore_ascii_case("d") => {
                        self.show_ids = !self.show_ids;
                        trace!("id view: {}", if self.show_ids { "on" } else { "off" });
                    }
                    _ => {}
                }
            }
            WindowEvent::CursorMoved { position, .. } => self.cursor_moved(DVec2::new(position.x, position.y), view, camera),
            // The pointer's last position is kept: a drag goes on outside the window.
            WindowEvent::CursorLeft { .. } => {
                self.hover = None;
                if self.left.dragging || self.pan.start.is_some() {
                    trace!("drag: left the window; {}", describe(camera));
                }
            }
            WindowEvent::CursorEntered { .. } if self.left.dragging || self.pan.start.is_some() => {
                trace!("drag: entered the window; {}", describe(camera));
            }
            WindowEvent::Focused(false) => self.release_drags(camera),
            WindowEvent::MouseInput { state, button, .. } => {
                let dragged = self.left.dragging || self.pan.start.is_some();
                self.mouse_button(*state, *button, over_view && !consumed_by_ui);
                if dragged && *state == ElementState::Released {
                    trace!("{}", describe(camera));
                }
            }
            WindowEvent::MouseWheel { delta, .. } => {
                let echo = std::mem::take(&mut self.wheel_release_echo);
                if echo && matches!(delta, MouseScrollDelta::LineDelta(..)) {
                    return Handled::Continue;
                }
                if !consumed_by_ui && over_view {
                    camera.zoom(match delta {
                        MouseScrollDelta::LineDelta(_, y) => *y,
                        MouseScrollDelta::PixelDelta(p) => p.y as f32 * STEPS_PER_PIXEL,
                    });
                    trace!("zoom: distance={:.6} range=[{:.6}, {:.6}]", camera.distance, camera.min_distance, camera.max_distance);
                }
            }
            _ => {}
        }
        Handled::Continue
    }

    fn cursor_moved(&mut self, p: DVec2, view: Option<ViewRect>, camera: &mut OrbitCamera) {
        // Releases the window never saw end their drags before this move counts.
        for drag in [&mut self.left, &mut self.pan] {
            if std::mem::take(&mut drag.released_unseen) && drag.start.is_some() {
                trace!("drag: released out of sight; {}", describe(camera));
                *drag = Drag::default();
            }
        }
        if let Some(old) = self.last {
            let d = p - old;
            if let Some(start) = self.left.start {
                if self.left.dragging || (p - start).length() > 4.0 {
                    self.left.dragging = true;
                    camera.rotate(d.x as f32, d.y as f32);
                }
            }
            // No view (the panel fills the window): nothing to pan against.
            if let (Some(_), Some(view)) = (self.pan.start, view) {
                camera.pan(d.x as f32, d.y as f32, view.height as f32);
            }
        }
        self.last = Some(p);
        self.hover = Some(p);
    }

    fn mouse_button(&mut self, state: ElementState, button: MouseButton, over_view: bool) {
        match (button, state) {
            (MouseButton::Left, ElementState::Pressed) => {
                self.left = Drag::default();
                if over_view {
                    self.left.start = self.hover;
                }
            }
            (MouseButton::Left, ElementState::Released) => {
                let drag = std::mem::take(&mut self.left);
                self.click_requested |= drag.start.is_some() && !drag.dragging && over_view;
            }
            (MouseButton::Right | MouseButton::Middle, ElementState::Pressed) => {
                self.pan = Drag::default();
                if over_view {
                    self.pan.start = self.hover;
                }
            }
            (MouseButton::Right | MouseButton::Middle, ElementState::Released) => self.pan = Drag::default(),
            _ => {}
        }
    }
}

/// The camera in one line (trace output).
pub(super) fn describe(c: &OrbitCamera) -> String {
    format!("camera: yaw={:.5} pitch={:.5} distance={:.6} target=({:.6}, {:.6}, {:.6})", c.yaw, c.pitch, c.distance, c.target.x, c.target.y, c.target.z)
}

#[cfg(test)]
mod tests {
    use super::*;
    use winit::dpi::PhysicalPosition;
    use winit::event::DeviceId;

    fn view() -> Option<ViewRect> {
        ViewRect::in_framebuffer(vk::Extent2D { width: 1280, height: 760 }, 1.0)
    }

    fn camera() -> OrbitCamera {
        OrbitCamera::framing(&crate::load_scene(None).unwrap())
    }

    fn send(input: &mut Input, camera: &mut OrbitCamera, event: WindowEvent) -> Handled {
        input.handle(&event, false, view(), 1.0, camera)
    }

    fn moved(x: f64, y: f64) -> WindowEvent {
        WindowEvent::CursorMoved { device_id: DeviceId::dummy(), position: PhysicalPosition::new(x, y) }
    }

    fn button(state: ElementState, button: MouseButton) -> WindowEvent {
        WindowEvent::MouseInput { device_id: DeviceId::dummy(), state, button }
    }

    fn wheel(y: f32) -> WindowEvent {
        WindowEvent::MouseWheel { device_id: DeviceId::dummy(), delta: MouseScrollDelta::LineDelta(0.0, y), phase: winit::event::TouchPhase::Moved }
    }

    fn left() -> WindowEvent {
        WindowEvent::CursorLeft { device_id: DeviceId::dummy() }
    }

    #[test]
    fn one_x11_wheel_click_is_one_step() {
        let (mut input, mut cam) = (Input::default(), camera());
        let start = cam.distance;
        send(&mut input, &mut cam, moved(800.0, 400.0));
        // What winit 0.30 delivers for `xdotool click 4`: raw press, wheel, raw release, wheel.
        input.raw_button(4, ElementState::Pressed);
        send(&mut input, &mut cam, wheel(1.0));
        input.raw_button(4, ElementState::Released);
        send(&mut input, &mut cam, wheel(1.0));
        assert!((cam.distance - start * 0.9).abs() < 1e-5 * start, "{} vs {}", cam.distance, start * 0.9);
        // A smooth-scroll wheel (valuator events, no raw wheel buttons): every event counts.
        send(&mut input, &mut cam, wheel(1.0));
        send(&mut input, &mut cam, wheel(1.0));
        assert!((cam.distance - start * 0.9f32.powi(3)).abs() < 1e-5 * start);
    }

    #[test]
    fn a_drag_ends_when_focus_goes_or_its_release_went_unseen() {
        let (mut input, mut cam) = (Input::default(), camera());
        send(&mut input, &mut cam, moved(800.0, 400.0));
        send(&mut input, &mut cam, button(ElementState::Pressed, MouseButton::Left));
        send(&mut input, &mut cam, moved(850.0, 420.0));
        assert!(input.dragging());
        send(&mut input, &mut cam, WindowEvent::Focused(false));
        let after = cam;
        send(&mut input, &mut cam, moved(900.0, 500.0));
        assert_eq!(cam, after, "no orbit once focus went");
        // Released where the window did not see it: the next move ends the drag.
        send(&mut input, &mut cam, button(ElementState::Pressed, MouseButton::Right));
        input.raw_button(3, ElementState::Released);
        let after = cam;
        send(&mut input, &mut cam, moved(700.0, 300.0));
        assert_eq!(cam, after, "no pan after an unseen release");
        assert!(!input.dragging());
    }

    #[test]
    fn leaving_and_coming_back_along_the_same_path_returns_the_camera() {
        let (mut input, mut cam) = (Input::default(), camera());
        send(&mut input, &mut cam, moved(800.0, 400.0));
        send(&mut input, &mut cam, button(ElementState::Pressed, MouseButton::Left));
        send(&mut input, &mut cam, moved(810.0, 400.0));
        let start = cam;
        let path = [(1200.0, 420.0), (1279.0, 430.0), (1400.0, 440.0), (1700.0, 300.0)];
        for (i, &(x, y)) in path.iter().enumerate() {
            send(&mut input, &mut cam, moved(x, y));
            if i == 1 {
                send(&mut input, &mut cam, left());
            }
        }
        for &(x, y) in path.iter().rev().skip(1) {
            send(&mut input, &mut cam, moved(x, y));
        }
        send(&mut input, &mut cam, moved(810.0, 400.0));
        assert!(cam.matrices(1.0).view.abs_diff_eq(start.matrices(1.0).view, 1e-4), "back where it started");
        send(&mut input, &mut cam, button(ElementState::Released, MouseButton::Left));
        assert!(!input.take_click(), "a drag is not a click");
    }

    #[test]
    fn a_click_selects_once() {
        let (mut input, mut cam) = (Input::default(), camera());
        send(&mut input, &mut cam, moved(800.0, 400.0));
        send(&mut input, &mut cam, button(ElementState::Pressed, MouseButton::Left));
        send(&mut input, &mut cam, button(ElementState::Released, MouseButton::Left));
        assert!(input.take_click());
        assert!(!input.take_click());
    }
}
