//! Two window states under Xvfb with validation on:
//! - a pick error (injected: the picker is handed a non-finite view matrix once) is reported
//!   and kept for the panel, and the viewer carries on: the next pick and a click work;
//! - a window covered by another one (fully obscured) renders nothing and spends (almost) no
//!   CPU, and resumes when uncovered.
//!
//! Then Esc: exit code 0, zero validation messages, no panic.

mod common;

use common::{cpu_ticks, Viewer, Xvfb};
use std::time::Duration;
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{ConnectionExt, CreateWindowAux, WindowClass};
use x11rb::wrapper::ConnectionExt as _;

const STEP: Duration = Duration::from_secs(30);

#[test]
fn pick_errors_are_shown_and_occluded_windows_pause() {
    let x = Xvfb::start("1600x1000x24");
    let mut v = Viewer::start(&x.display, &[], &[("PICKING_VK_VIEWER_PICK_ERROR_AT", "1")]);
    v.focus();
    // The first pick after frame 1 is refused; the frame goes on and so do later picks.
    v.xdo_line("mousemove 790 410 mousemove 800 420");
    let error = v.wait_for("pick error:", STEP);
    assert!(error.contains("non-finite"), "{error}");
    v.xdo(&["click", "1"]);
    let selected = v.wait_for("selected:", STEP);
    assert!(selected.contains("Sheet"), "a click after the error still picks: {selected}");

    // Cover the viewer with a window of our own: it stops drawing, and starts again uncovered.
    let (conn, screen) = x11rb::connect(Some(&x.display)).expect("connect to Xvfb");
    let root = conn.setup().roots[screen].root;
    let cover = conn.generate_id().expect("an X id");
    let aux = CreateWindowAux::new().override_redirect(1).background_pixel(0);
    conn.create_window(0, cover, root, 0, 0, 1600, 1000, 0, WindowClass::INPUT_OUTPUT, 0, &aux).expect("create the cover");
    conn.map_window(cover).expect("map the cover");
    conn.sync().expect("sync");
    let paused = v.wait_for("paused:", STEP);
    assert!(paused.contains("occluded"), "{paused}");
    std::thread::sleep(Duration::from_millis(500));
    let before = cpu_ticks(v.pid());
    std::thread::sleep(Duration::from_secs(3));
    let idle = cpu_ticks(v.pid()) - before;
    // Clock ticks are 1/100 s: drawing flat out would take most of the 300 in 3 s.
    assert!(idle <= 30, "an occluded viewer spent {idle} ticks in 3 s");
    conn.destroy_window(cover).expect("destroy the cover");
    conn.sync().expect("sync");
    v.wait_for("resumed:", STEP);
    v.xdo_line("mousemove 780 400 mousemove 800 420");
    v.xdo(&["click", "1"]);
    v.wait_for("selected:", STEP);
    v.quit_cleanly();
}
