//! Whether the window can be seen, so that nothing is rendered while it cannot: minimized,
//! zero-sized, occluded, or unmapped. winit 0.30 reports occlusion and size, but on X11 not
//! a window being unmapped (`xdotool windowunmap`, or a window manager iconifying it), so
//! a small thread watches the window's map state on a connection of its own and wakes the
//! event loop with [`AppEvent::Mapped`]. It ends when the window is destroyed.

use raw_window_handle::{HasWindowHandle, RawWindowHandle};
use winit::dpi::PhysicalSize;
use winit::event_loop::EventLoopProxy;
use winit::window::Window;
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{ChangeWindowAttributesAux, ConnectionExt, EventMask, MapState};
use x11rb::protocol::Event;

/// Events the viewer sends itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppEvent {
    /// The window was mapped (true) or unmapped (false).
    Mapped(bool),
}

/// What winit and the map watcher said about the window.
#[derive(Clone, Copy, Debug)]
pub(super) struct Visibility {
    pub mapped: bool,
    pub occluded: bool,
}

impl Default for Visibility {
    fn default() -> Self {
        Visibility { mapped: true, occluded: false }
    }
}

impl Visibility {
    /// Why nothing should be drawn now, if anything.
    pub fn hidden_because(&self, window: &Window) -> Option<&'static str> {
        let PhysicalSize { width, height } = window.inner_size();
        if !self.mapped {
            Some("unmapped")
        } else if window.is_minimized() == Some(true) {
            Some("minimized")
        } else if width == 0 || height == 0 {
            Some("zero-sized")
        } else if self.occluded {
            Some("occluded")
        } else {
            None
        }
    }
}

/// Starts the map-state watcher for an X11 window; does nothing for other windows or when
/// the display cannot be reached (then only winit's events count).
pub fn watch_map_state(window: &Window, proxy: EventLoopProxy<AppEvent>) {
    let id = match window.window_handle().map(|h| h.as_raw()) {
        Ok(RawWindowHandle::Xlib(h)) => h.window as u32,
        Ok(RawWindowHandle::Xcb(h)) => h.window.get(),
        _ => return,
    };
    let started = std::thread::Builder::new().name("map-watch".into()).spawn(move || {
        if let Err(e) = watch(id, &proxy) {
            log::warn!("window map state not watched: {e}");
        }
    });
    if let Err(e) = started {
        log::warn!("window map state not watched: {e}");
    }
}

fn watch(window: u32, proxy: &EventLoopProxy<AppEvent>) -> Result<(), Box<dyn std::error::Error>> {
    let (conn, _) = x11rb::connect(None)?;
    conn.change_window_attributes(window, &ChangeWindowAttributesAux::new().event_mask(EventMask::STRUCTURE_NOTIFY))?.check()?;
    // Selected first, then read: a change in between is reported by an event as well.
    let mapped = conn.get_window_attributes(window)?.reply()?.map_state != MapState::UNMAPPED;
    if proxy.send_event(AppEvent::Mapped(mapped)).is_err() {
        return Ok(());
    }
    loop {
        let sent = match conn.wait_for_event()? {
            Event::MapNotify(e) if e.window == window => proxy.send_event(AppEvent::Mapped(true)),
            Event::UnmapNotify(e) if e.window == window => proxy.send_event(AppEvent::Mapped(false)),
            Event::DestroyNotify(e) if e.window == window => return Ok(()),
            _ => Ok(()),
        };
        // The event loop is gone.
        if sent.is_err() {
            return Ok(());
        }
    }
}
