//! The desktop viewer in a real window under Xvfb: synthetic pointer moves, a click and keys
//! (xdotool), screenshots (ImageMagick `import`), a resize, and a clean exit with zero
//! validation messages. Fails (never skips) when Xvfb or the tools are missing.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

struct Xvfb(Child);

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn tool(cmd: &str, args: &[&str], display: &str) -> String {
    let out =
        Command::new(cmd).args(args).env("DISPLAY", display).output().unwrap_or_else(|e| panic!("{cmd} is needed for this test (see tools/setup.sh): {e}"));
    assert!(out.status.success(), "{cmd} {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn wait_for_line(rx: &mpsc::Receiver<String>, prefix: &str, timeout: Duration, log: &mut Vec<String>) -> String {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                log.push(line.clone());
                if line.starts_with(prefix) {
                    return line;
                }
            }
            Err(_) => panic!("no {prefix:?} line within {timeout:?}; output so far:\n{}", log.join("\n")),
        }
    }
}

fn screenshot(display: &str, name: &str) -> image::RgbaImage {
    let path = std::env::temp_dir().join(format!("picking-vk-window-{}-{name}.png", std::process::id()));
    tool("import", &["-window", "root", path.to_str().unwrap()], display);
    image::open(&path).unwrap().to_rgba8()
}

fn region_difference(a: &image::RgbaImage, b: &image::RgbaImage, cx: u32, cy: u32, r: u32) -> usize {
    let mut n = 0;
    for y in cy.saturating_sub(r)..(cy + r).min(a.height()) {
        for x in cx.saturating_sub(r)..(cx + r).min(a.width()) {
            if a.get_pixel(x, y) != b.get_pixel(x, y) {
                n += 1;
            }
        }
    }
    n
}

#[test]
fn window_hover_click_select_resize_and_exit_cleanly() {
    let display = format!(":{}", 90 + std::process::id() % 9);
    let xvfb = Command::new("Xvfb")
        .args([display.as_str(), "-screen", "0", "1280x800x24", "-nolisten", "tcp"])
        .stderr(Stdio::null())
        .spawn()
        .expect("Xvfb is needed for this test (see tools/setup.sh)");
    let _xvfb = Xvfb(xvfb);
    std::thread::sleep(Duration::from_millis(1500));

    let mut viewer = Command::new(env!("CARGO_BIN_EXE_viewer"))
        .args(["--validation"])
        .env("DISPLAY", &display)
        .env_remove("WAYLAND_DISPLAY")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start viewer");
    let (tx, rx) = mpsc::channel();
    let stdout = viewer.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let stderr = viewer.stderr.take().unwrap();
    let errors = std::thread::spawn(move || BufReader::new(stderr).lines().map_while(Result::ok).collect::<Vec<_>>());
    let mut log = vec![];
    wait_for_line(&rx, "ready:", Duration::from_secs(90), &mut log);
    let window = tool("xdotool", &["search", "--name", "picking-vk viewer"], &display).lines().next().unwrap_or_default().to_string();
    assert!(!window.is_empty(), "the viewer window exists");

    // Hover the green sheet in front of the sphere (built-in scene, default window size).
    let (x, y) = (800u32, 420u32);
    tool("xdotool", &["mousemove", &x.to_string(), &y.to_string()], &display);
    std::thread::sleep(Duration::from_millis(1500));
    let hovered = screenshot(&display, "hovered");
    tool("xdotool", &["click", "1"], &display);
    let selected_line = wait_for_line(&rx, "selected:", Duration::from_secs(30), &mut log);
    assert!(selected_line.contains("\"Sheet\""), "clicking the sheet selects it: {selected_line}");
    std::thread::sleep(Duration::from_millis(1500));
    let selected = screenshot(&display, "selected");
    let changed = region_difference(&hovered, &selected, x, y, 40);
    assert!(changed > 300, "selection changes what is drawn around the click ({changed} pixels differ)");
    // The panel lists the selection: its area changes too.
    assert!(region_difference(&hovered, &selected, 160, 260, 150) > 100, "the panel shows the selection");

    // Resize: the swapchain is rebuilt and picking keeps working at the new size.
    tool("xdotool", &["windowsize", &window, "900", "600"], &display);
    std::thread::sleep(Duration::from_millis(1500));
    tool("xdotool", &["mousemove", "10", "590"], &display);
    tool("xdotool", &["mousemove", "700", "300"], &display);
    std::thread::sleep(Duration::from_millis(800));
    tool("xdotool", &["click", "1"], &display);
    let after_resize = wait_for_line(&rx, "selected:", Duration::from_secs(30), &mut log);
    assert!(after_resize.contains("pixel=(700, 300)"), "{after_resize}");

    // Without a window manager nothing gives the window focus: take it, then press Escape.
    tool("xdotool", &["windowfocus", "--sync", &window], &display);
    tool("xdotool", &["key", "Escape"], &display);
    let exit_line = wait_for_line(&rx, "exit:", Duration::from_secs(30), &mut log);
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = viewer.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "viewer did not exit");
        std::thread::sleep(Duration::from_millis(100));
    };
    let stderr = errors.join().unwrap();
    assert!(status.success(), "exit status {status:?}\n{}", stderr.join("\n"));
    assert!(exit_line.contains("validation_messages=0"), "{exit_line}\n{}", stderr.join("\n"));
    assert!(!stderr.iter().any(|l| l.contains("validation:") || l.contains("panicked")), "{}", stderr.join("\n"));
    eprintln!("window test: {}", log.join(" | "));
}
