//! The viewer window under hostile input, under Xvfb with validation on (xdotool drives it;
//! the viewer's trace output, `PICKING_VK_VIEWER_TRACE`, reports what the camera did):
//! - one wheel click is one zoom step;
//! - 400 clicks out and 600 in stay within the zoom range, the frame loop goes on, a click
//!   still picks, and `R` / `Home` bring the starting view back;
//! - a drag that leaves the window and comes back along the same path returns the camera;
//! - a drag cut by unmapping the window ends there: moves after mapping it again do not orbit;
//! - a pan while the window is 1x1 does not throw the camera off;
//! - an unmapped window renders nothing and spends (almost) no CPU, and resumes when mapped;
//! - then Esc: exit code 0, zero validation messages, no panic.

mod common;

use common::{cpu_ticks, field, Viewer, Xvfb};
use std::time::{Duration, Instant};

const TRACE: (&str, &str) = ("PICKING_VK_VIEWER_TRACE", "1");
const STEP: Duration = Duration::from_secs(30);

/// `yaw`, `pitch`, `distance` and the target of a `camera:` trace line.
fn camera(line: &str) -> [f64; 6] {
    let target = line.split("target=(").nth(1).unwrap_or_else(|| panic!("no target in {line:?}"));
    let t: Vec<f64> = target.trim_end_matches(')').split(',').map(|v| v.trim().parse().unwrap()).collect();
    let get = |k| field::<f64>(line, k).unwrap_or_else(|| panic!("no {k} in {line:?}"));
    [get("yaw"), get("pitch"), get("distance"), t[0], t[1], t[2]]
}

fn same_camera(a: &str, b: &str) -> bool {
    camera(a).iter().zip(camera(b)).all(|(x, y)| (x - y).abs() <= 1e-3 * (1.0 + y.abs()))
}

/// The `camera:` part of a trace line.
fn camera_part(line: &str) -> String {
    line[line.find("camera:").unwrap_or_else(|| panic!("no camera in {line:?}"))..].to_string()
}

/// Distance and zoom range of a `zoom:` trace line.
fn zoom(line: &str) -> (f64, f64, f64) {
    let range = line.split("range=[").nth(1).unwrap_or_else(|| panic!("no range in {line:?}")).trim_end_matches(']');
    let (lo, hi) = range.split_once(',').unwrap();
    (field(line, "distance").unwrap(), lo.trim().parse().unwrap(), hi.trim().parse().unwrap())
}

fn reset(v: &mut Viewer) -> String {
    v.xdo(&["key", "r"]);
    camera_part(&v.wait_for("view reset:", STEP))
}

#[test]
fn window_survives_wheel_storms_drags_out_and_back_unmaps_and_tiny_pans() {
    let x = Xvfb::start("1600x1000x24");
    let mut v = Viewer::start(&x.display, &[], &[TRACE]);
    let w = v.window.clone();
    v.focus();
    v.xdo_line("mousemove 800 420");
    let home = reset(&mut v);
    let d0 = camera(&home)[2];

    // One wheel click, one step (winit 0.30 reports it on press and release).
    v.xdo(&["click", "4"]);
    let (d1, _, _) = zoom(&v.wait_for("zoom:", STEP));
    assert!((d1 / d0 - 0.9).abs() < 1e-4, "one click zoomed from {d0} to {d1}");
    assert!(v.try_wait_for("zoom:", Duration::from_secs(1)).is_none(), "a second zoom step from one click: {:?}", v.log.last());

    // Far out and far in: clamped, and the frame loop and picking go on.
    v.xdo_line("click --repeat 400 --delay 2 5");
    let mut last = String::new();
    for _ in 0..400 {
        last = v.wait_for("zoom:", STEP);
    }
    let (d, _, hi) = zoom(&last);
    assert!((d - hi).abs() <= 1e-6 * hi, "400 clicks out end at the far limit: {last}");
    v.xdo(&["click", "1"]);
    v.wait_for("selected:", STEP);
    v.xdo_line("click --repeat 600 --delay 2 4");
    for _ in 0..600 {
        last = v.wait_for("zoom:", STEP);
    }
    let (d, lo, _) = zoom(&last);
    assert!((d - lo).abs() <= 1e-6 * lo, "600 clicks in end at the near limit: {last}");
    v.xdo(&["click", "1"]);
    v.wait_for("selected:", STEP);
    assert!(same_camera(&reset(&mut v), &home), "R brings the starting view back");
    v.xdo(&["key", "Home"]);
    assert!(same_camera(&camera_part(&v.wait_for("view reset:", STEP)), &home), "so does Home");

    // A drag out of the window (x >= 1280) and back along the same path.
    v.xdo_line("mousemove 800 420 mousedown 1 mousemove 900 430 mousemove 1270 440 mousemove 1450 450 mousemove 1590 300");
    let left = camera_part(&v.wait_for("drag: left the window", STEP));
    std::thread::sleep(Duration::from_millis(300));
    v.xdo_line("mousemove 1450 450 mousemove 1270 440 mousemove 900 430 mousemove 800 420 mouseup 1");
    let entered = camera_part(&v.wait_for("drag: entered the window", STEP));
    let back = v.wait_for("camera:", STEP);
    assert!(!same_camera(&left, &home) && !same_camera(&entered, &left), "the drag orbits, outside too: {left} / {entered}");
    assert!(same_camera(&back, &home), "out and back: {back} vs {home}");
    eprintln!("drag out and back:\n  start   {home}\n  left    {left}\n  entered {entered}\n  end     {}", camera_part(&back));

    // A drag cut by unmapping: it ends there; moves after mapping again do not orbit.
    v.xdo_line("mousemove 800 420 mousedown 1 mousemove 860 440");
    std::thread::sleep(Duration::from_millis(300));
    v.xdo(&["windowunmap", "--sync", &w]);
    let cut = camera_part(&v.wait_for("drag: released", STEP));
    v.xdo_line("mouseup 1");
    v.xdo(&["windowmap", "--sync", &w]);
    v.focus();
    v.xdo_line("mousemove 900 500 mousemove 1000 560 mousemove 700 300");
    std::thread::sleep(Duration::from_millis(500));
    // A drag there and back prints the camera: unchanged since the cut.
    v.xdo_line("mousemove 800 420 mousedown 1 mousemove 860 420 mousemove 800 420 mouseup 1");
    let after = v.wait_for("camera:", STEP);
    assert!(same_camera(&after, &cut), "no orbit after the window came back: {after} vs {cut}");

    // A pan that goes on while the window is 1x1.
    let before = camera(&reset(&mut v));
    v.xdo_line("mousemove 800 420 mousedown 3 mousemove 810 425");
    v.xdo(&["windowsize", "--sync", &w, "1", "1"]);
    std::thread::sleep(Duration::from_millis(800));
    v.xdo_line("mousemove 1200 700 mousemove 100 50 mousemove 1500 900");
    v.xdo(&["windowsize", "--sync", &w, "1280", "760"]);
    std::thread::sleep(Duration::from_millis(500));
    v.xdo_line("mouseup 3");
    let panned = camera(&v.wait_for("camera:", STEP));
    let moved = ((panned[3] - before[3]).powi(2) + (panned[4] - before[4]).powi(2) + (panned[5] - before[5]).powi(2)).sqrt();
    assert!(moved < before[2], "a pan in a 1x1 window moved the target by {moved} (camera distance {})", before[2]);

    // Unmapped: no frames, (almost) no CPU; mapped again: frames again.
    v.xdo(&["windowunmap", "--sync", &w]);
    let paused = v.wait_for("paused: unmapped", STEP);
    std::thread::sleep(Duration::from_millis(300));
    let (t0, c0) = (Instant::now(), cpu_ticks(v.pid()));
    std::thread::sleep(Duration::from_secs(2));
    let busy = (cpu_ticks(v.pid()) - c0) as f64 / 100.0 / t0.elapsed().as_secs_f64();
    v.xdo(&["windowmap", "--sync", &w]);
    let resumed = v.wait_for("resumed:", STEP);
    let (f0, f1): (u64, u64) = (field(&paused, "frame").unwrap(), field(&resumed, "frame").unwrap());
    assert!(f1 <= f0 + 1, "frames while unmapped: {paused} / {resumed}");
    assert!(busy < 0.15, "CPU while unmapped: {:.0}% of a core", busy * 100.0);
    v.focus();
    v.xdo_line("mousemove 700 300 click 1");
    v.wait_for("selected:", STEP);

    v.drain();
    let errors: Vec<_> = v.log.iter().filter(|l| l.starts_with("pick error")).cloned().collect();
    assert!(errors.is_empty(), "{errors:?}");
    let exit = v.quit_cleanly();
    eprintln!("window input: CPU while unmapped {:.1}% of a core; {exit}", busy * 100.0);
}
