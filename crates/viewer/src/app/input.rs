//! Mouse and keyboard: drag to orbit, right- or middle-drag to pan, wheel to zoom, a click
//! (press and release without a drag) over the 3D view asks for a selection (Ctrl: toggles
//! the clicked object in it), Shift + drag draws a rubber band that selects what it covers
//! (Alt: through, hidden objects too; Ctrl: added to the selection), `D` toggles the ID
//! buffer view, `R` or `Home` resets the view, `Esc` quits.
//!
//! Drags follow the pointer's absolute position, inside the window or out of it, so a drag
//! that leaves the window and comes back along the same path brings the camera back. A drag
//! ends when its button is released, and also when the window loses focus or is hidden, or
//! when the release happened where the window did not see it (X11's raw button events tell):
//! a drag never outlives its button.

use super::band::Band;
use super::selection::ClickMode;
use super::settings::Settings;
use super::trace;
use super::view_rect::ViewRect;
use crate::camera::OrbitCamera;
use glam::{DVec2, UVec2};
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::keyboard::{Key, ModifiersState, NamedKey};

/// Wheel steps per pixel of a pixel-precise (touchpad) scroll.
const STEPS_PER_PIXEL: f32 = 1.0 / 50.0;

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
    /// Left button pressed with Shift: the drag draws a rubber band instead of orbiting.
    band: bool,
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
    click_requested: Option<ClickMode>,
    /// A rubber band released since the last frame: the next frame selects with it.
    band_released: Option<Band>,
    /// Shift, Ctrl and Alt as they are now (`WindowEvent::ModifiersChanged`).
    modifiers: ModifiersState,
    pub settings: Settings,
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

    /// The click waiting, if any; it is cleared, so one click selects once.
    pub fn take_click(&mut self) -> Option<ClickMode> {
        self.click_requested.take()
    }

    /// The rubber band released since the last call, if any; it selects once.
    pub fn take_band(&mut self) -> Option<Band> {
        self.band_released.take()
    }

    /// The rubber band being dragged, to draw: with the modifiers held now, which are the
    /// ones its release will use.
    pub fn band(&self) -> Option<Band> {
        let (Some(from), Some(to), true) = (self.left.start, self.last, self.left.band && self.left.dragging) else { return None };
        Some(Band { from, to, through: self.modifiers.alt_key(), add: self.modifiers.control_key() })
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
            // A rubber band cut this way selects nothing.
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
                    Key::Named(NamedKey::Space) => {
                        if let Some(p) = self.settings.playback.as_mut() {
                            p.playing = !p.playing;
                        }
                    }
                    Key::Character(c) if c.eq_ignore_ascii_case("d") => {
                        self.settings.show_ids = !self.settings.show_ids;
                        trace!("id view: {}", if self.settings.show_ids { "on" } else { "off" });
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
            // Whatever has focus: the modifiers decide what the next press and release do.
            WindowEvent::ModifiersChanged(m) => self.modifiers = m.state(),
            WindowEvent::MouseInput { state, button, .. } => {
                // A rubber band leaves the camera as it was: no camera line for it.
                let dragged = (self.left.dragging && !self.left.band) || self.pan.start.is_some();
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
                    // A rubber band follows the pointer (see `band`); only a plain drag orbits.
                    if !self.left.band {
                        camera.rotate(d.x as f32, d.y as f32);
                    }
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
                    self.left.band = self.modifiers.shift_key();
                }
            }
            (MouseButton::Left, ElementState::Released) => {
                // A band selects wherever it is released (off the view it stops at the edge);
                // a click only over the view. Shift + click without a drag is a click.
                let band = self.band();
                let drag = std::mem::take(&mut self.left);
                if band.is_some() {
                    self.band_released = band;
                } else if drag.start.is_some() && !drag.dragging && over_view {
                    self.click_requested = Some(if self.modifiers.control_key() { ClickMode::Toggle } else { ClickMode::Replace });
                }
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
    use ash::vk;
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
        assert!(input.take_click().is_none(), "a drag is not a click");
    }

    #[test]
    fn a_click_selects_once() {
        let (mut input, mut cam) = (Input::default(), camera());
        send(&mut input, &mut cam, moved(800.0, 400.0));
        send(&mut input, &mut cam, button(ElementState::Pressed, MouseButton::Left));
        send(&mut input, &mut cam, button(ElementState::Released, MouseButton::Left));
        assert_eq!(input.take_click(), Some(ClickMode::Replace));
        assert_eq!(input.take_click(), None);
        // With Ctrl held at the release: a toggle.
        send(&mut input, &mut cam, modifiers(ModifiersState::CONTROL));
        send(&mut input, &mut cam, button(ElementState::Pressed, MouseButton::Left));
        send(&mut input, &mut cam, button(ElementState::Released, MouseButton::Left));
        assert_eq!(input.take_click(), Some(ClickMode::Toggle));
    }

    fn modifiers(m: ModifiersState) -> WindowEvent {
        WindowEvent::ModifiersChanged(m.into())
    }

    #[test]
    fn shift_drag_draws_a_band_and_leaves_the_camera() {
        let (mut input, mut cam) = (Input::default(), camera());
        let start = cam;
        send(&mut input, &mut cam, modifiers(ModifiersState::SHIFT));
        send(&mut input, &mut cam, moved(500.0, 300.0));
        send(&mut input, &mut cam, button(ElementState::Pressed, MouseButton::Left));
        send(&mut input, &mut cam, moved(502.0, 301.0));
        assert_eq!(input.band(), None, "not a band until it moved 4 pixels");
        send(&mut input, &mut cam, moved(700.0, 450.0));
        let drawn = input.band().expect("a band while dragging");
        assert_eq!((drawn.from, drawn.to, drawn.through, drawn.add), (DVec2::new(500.0, 300.0), DVec2::new(700.0, 450.0), false, false));
        // Alt and Ctrl pressed during the drag count at the release; the band ends off the window.
        send(&mut input, &mut cam, modifiers(ModifiersState::SHIFT | ModifiersState::ALT | ModifiersState::CONTROL));
        send(&mut input, &mut cam, moved(1500.0, 900.0));
        send(&mut input, &mut cam, left());
        send(&mut input, &mut cam, button(ElementState::Released, MouseButton::Left));
        assert_eq!(cam, start, "a band does not orbit");
        let band = input.take_band().expect("released band");
        assert_eq!((band.to, band.through, band.add), (DVec2::new(1500.0, 900.0), true, true));
        assert_eq!((input.take_band(), input.take_click()), (None, None), "it selects once, and is no click");
        // Without Shift at the press, the same drag orbits.
        send(&mut input, &mut cam, modifiers(ModifiersState::empty()));
        send(&mut input, &mut cam, moved(500.0, 300.0));
        send(&mut input, &mut cam, button(ElementState::Pressed, MouseButton::Left));
        send(&mut input, &mut cam, moved(700.0, 450.0));
        send(&mut input, &mut cam, button(ElementState::Released, MouseButton::Left));
        assert!(input.take_band().is_none() && cam != start);
    }

    #[test]
    fn a_band_cut_by_losing_focus_selects_nothing() {
        let (mut input, mut cam) = (Input::default(), camera());
        send(&mut input, &mut cam, modifiers(ModifiersState::SHIFT));
        send(&mut input, &mut cam, moved(500.0, 300.0));
        send(&mut input, &mut cam, button(ElementState::Pressed, MouseButton::Left));
        send(&mut input, &mut cam, moved(700.0, 450.0));
        send(&mut input, &mut cam, WindowEvent::Focused(false));
        assert!(input.band().is_none());
        send(&mut input, &mut cam, button(ElementState::Released, MouseButton::Left));
        assert!(input.take_band().is_none() && input.take_click().is_none());
    }
}
