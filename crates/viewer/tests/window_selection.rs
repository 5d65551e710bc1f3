//! Multi-object selection in the viewer window, under Xvfb with validation on (xdotool drives
//! it; stdout reports each selection change, and with `PICKING_VK_VIEWER_TRACE` each change of
//! the hovered object):
//! - Shift + drag over the built-in scene selects what the band covers that can be seen;
//!   Alt + Shift over the same band selects through, at least as many; every selected object
//!   is highlighted, and an object outside the band is not;
//! - Ctrl + click adds an object and a second Ctrl + click removes it; Ctrl + band adds; a
//!   plain click replaces the selection with one object;
//! - the hover radius (4 px by default) reaches a thin rod from pixels beside it that a point
//!   pick (a headless run over a row of pixels) finds empty, and not from 7 px away;
//! - then Esc: exit code 0, zero validation messages, no panic.

mod common;

use common::{Viewer, Xvfb};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

const TRACE: (&str, &str) = ("PICKING_VK_VIEWER_TRACE", "1");
const STEP: Duration = Duration::from_secs(30);
/// The side panel's width at scale 1 (the window's 3D view starts there).
const PANEL: u32 = 330;

/// One viewer at a time: two software-rendered windows at once only slow each other down.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("picking-vk-window-selection-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// `box selected: N objects (MODE) names=[...]`: N, the mode and the names.
fn band(line: &str) -> (usize, String, Vec<String>) {
    let rest = line.strip_prefix("box selected: ").unwrap_or_else(|| panic!("not a band line: {line:?}"));
    let (count, rest) = rest.split_once(" objects (").unwrap_or_else(|| panic!("no count in {line:?}"));
    let (mode, rest) = rest.split_once(") names=").unwrap_or_else(|| panic!("no names in {line:?}"));
    let names: Vec<String> = serde_json::from_str(rest).unwrap_or_else(|e| panic!("names of {line:?}: {e}"));
    let count: usize = count.parse().unwrap();
    assert_eq!(count, names.len(), "one name per object: {line}");
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "names are sorted: {line}");
    (count, mode.to_string(), names)
}

/// `selection: N objects ...`: N.
fn selection_count(line: &str) -> usize {
    let rest = line.strip_prefix("selection: ").unwrap_or_else(|| panic!("not a selection line: {line:?}"));
    rest.split_once(" objects").and_then(|(n, _)| n.parse().ok()).unwrap_or_else(|| panic!("no count in {line:?}"))
}

fn screenshot(display: &str, name: &str) -> image::RgbaImage {
    let path = tmp(&format!("{name}.png"));
    common::tool("import", &["-window", "root", path.to_str().unwrap()], display);
    image::open(&path).unwrap().to_rgba8()
}

/// Pixels that differ in the square of half-side `r` around (`cx`, `cy`).
fn changed(a: &image::RgbaImage, b: &image::RgbaImage, cx: u32, cy: u32, r: u32) -> usize {
    let mut n = 0;
    for y in cy - r..=cy + r {
        for x in cx - r..=cx + r {
            n += usize::from(a.get_pixel(x, y) != b.get_pixel(x, y));
        }
    }
    n
}

#[test]
fn box_select_ctrl_click_and_highlights_on_the_built_in_scene() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let x = Xvfb::start("1280x800x24");
    let mut v = Viewer::start(&x.display, &[], &[TRACE]);
    // Modifiers reach the window only with keyboard focus (no window manager gives it).
    v.focus();
    // Playback paused: the swaying tube stays where it is between the two bands.
    v.xdo_line("key space");
    // The pointer over empty sky: nothing hovered, nothing selected.
    v.xdo_line("mousemove 800 100");
    std::thread::sleep(Duration::from_millis(1500));
    let before = screenshot(&x.display, "before");

    // While a band is dragged, the lit pass tints its live set from the picker's GPU results
    // of the same frame: the ground reaches into the band, so it is tinted blue beyond the
    // band's outline too (hover alone would only lighten it); the torus, outside, is not.
    v.xdo_line("mousemove 480 300 keydown shift mousedown 1 mousemove 700 400 mousemove 890 540");
    std::thread::sleep(Duration::from_millis(1500));
    let live = screenshot(&x.display, "live");
    let blue_over_red = |img: &image::RgbaImage, x: u32, y: u32| i32::from(img.get_pixel(x, y)[2]) - i32::from(img.get_pixel(x, y)[0]);
    for (gx, gy) in [(1000, 700), (600, 620)] {
        assert!(
            blue_over_red(&live, gx, gy) > 20 && blue_over_red(&before, gx, gy) < 15,
            "the ground at ({gx}, {gy}) is tinted live: {:?} before {:?}",
            live.get_pixel(gx, gy),
            before.get_pixel(gx, gy)
        );
    }
    assert_eq!(changed(&before, &live, 990, 292, 4), 0, "the torus, outside the band, is not tinted");
    v.xdo_line("mouseup 1 keyup shift");
    v.wait_for("box selected:", STEP);

    // A band over the cube, the sheet, the sphere and the crates, dragged up-left to down-right.
    let drag = "mousemove 480 300 keydown shift mousedown 1 mousemove 700 400 mousemove 890 540 mouseup 1 keyup shift";
    v.xdo_line(drag);
    let (visible, mode, names) = band(&v.wait_for("box selected:", STEP));
    assert_eq!(mode, "visible");
    assert!(visible >= 2, "the band selects several objects: {names:?}");
    for name in ["Cube", "Sheet", "Sphere"] {
        assert!(names.iter().any(|n| n == name), "{name} is under the band: {names:?}");
    }
    assert!(!names.iter().any(|n| n == "Torus"), "the torus is outside the band: {names:?}");
    // Every selected object is highlighted; the torus, outside the band, is drawn as before.
    v.xdo_line("mousemove 800 100");
    std::thread::sleep(Duration::from_millis(1500));
    let after = screenshot(&x.display, "after");
    for (what, cx, cy) in [("cube", 580, 450), ("sheet", 760, 470), ("sphere", 855, 365)] {
        let n = changed(&before, &after, cx, cy, 8);
        assert!(n > 200, "the {what} is highlighted ({n} of 289 pixels changed)");
    }
    assert_eq!(changed(&before, &after, 990, 292, 4), 0, "the torus is not highlighted");

    // The same band selecting through: the objects hidden under it too.
    v.xdo_line(&format!("keydown alt {drag} keyup alt"));
    let (all, mode, all_names) = band(&v.wait_for("box selected:", STEP));
    assert_eq!(mode, "all");
    assert!(all >= visible, "select-through finds at least what can be seen: {all} < {visible}");
    assert!(names.iter().all(|n| all_names.contains(n)), "{names:?} within {all_names:?}");

    // Ctrl + click on the torus adds it; again removes it.
    v.xdo_line("mousemove 990 292 keydown ctrl click 1 keyup ctrl");
    let added = v.wait_for("selection:", STEP);
    assert_eq!(selection_count(&added), all + 1, "{added}");
    assert!(added.contains("added") && added.contains("\"Torus\""), "{added}");
    v.xdo_line("keydown ctrl click 1 keyup ctrl");
    let removed = v.wait_for("selection:", STEP);
    assert_eq!(selection_count(&removed), all, "{removed}");
    assert!(removed.contains("removed") && removed.contains("\"Torus\""), "{removed}");

    // A plain click replaces the selection with the sheet alone ...
    v.xdo_line("mousemove 800 420 click 1");
    let selected = v.wait_for("selected:", STEP);
    assert!(selected.contains("\"Sheet\""), "{selected}");
    // ... so a Ctrl + click on the torus makes two.
    v.xdo_line("mousemove 990 292 keydown ctrl click 1 keyup ctrl");
    let two = v.wait_for("selection:", STEP);
    assert_eq!(selection_count(&two), 2, "{two}");
    // Ctrl + band over the cube adds what it covers to the three.
    v.xdo_line("mousemove 520 380 keydown ctrl keydown shift mousedown 1 mousemove 600 450 mouseup 1 keyup shift keyup ctrl");
    let (covered, _, cube_names) = band(&v.wait_for("box selected:", STEP));
    assert!(cube_names.iter().any(|n| n == "Cube"), "{cube_names:?}");
    let grown = v.wait_for("selection:", STEP);
    assert!(selection_count(&grown) > 2 && selection_count(&grown) <= 2 + covered, "{grown} after a band of {covered}");

    v.drain();
    let errors: Vec<_> = v.log.iter().filter(|l| l.contains("error")).cloned().collect();
    assert!(errors.is_empty(), "{errors:?}");
    let exit = v.quit_cleanly();
    eprintln!("box select: {visible} visible, {all} through; {exit}");
}

/// A glTF scene of one thin vertical rod in front of nothing, seen by a level camera.
fn rod_scene() -> PathBuf {
    use glam::{Mat4, Vec3};
    let mut b = viewer::gltf_write::GltfBuilder::new();
    let rod = picking_vk_host::shapes::cylinder(0.005, 1.2, 8, [0.9, 0.9, 0.9, 1.0]);
    let mesh = b.add_mesh("Rod", &[(&rod, viewer::gltf_write::IndexStorage::U16)]);
    let node = b.add_node("Rod", Some(mesh), Mat4::from_translation(Vec3::new(0.5, 0.0, 0.0)), &[]);
    let camera = b.add_camera_node("Camera", 0.75, 0.1, Some(100.0), Mat4::from_translation(Vec3::new(0.0, 0.6, 4.0)));
    b.add_root(node);
    b.add_root(camera);
    let path = tmp("rod.glb");
    std::fs::write(&path, b.to_glb()).unwrap();
    path
}

/// Headless point picks along row `y` of a `w` x `h` view of `scene`: the columns that hit.
fn hits_along_row(scene: &std::path::Path, w: u32, h: u32, y: u32) -> Vec<(u32, String)> {
    let picks = tmp("row.json");
    let out = tmp("row-out.json");
    let row: Vec<[u32; 2]> = (0..w).map(|x| [x, y]).collect();
    std::fs::write(&picks, serde_json::to_string(&row).unwrap()).unwrap();
    let size = format!("{w}x{h}");
    let run = Command::new(env!("CARGO_BIN_EXE_viewer"))
        .args(["--headless", "--validation", "--size", &size, "--pick-file", picks.to_str().unwrap(), "--json", out.to_str().unwrap()])
        .arg(scene)
        .output()
        .unwrap();
    assert!(run.status.success(), "headless run failed: {}", String::from_utf8_lossy(&run.stderr));
    let records: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(records.len(), w as usize, "a record per pixel");
    let hit = |r: &Value| r["hit"].as_bool() == Some(true);
    records.iter().filter(|r| hit(r)).map(|r| (r["x"].as_u64().unwrap() as u32, r["node_name"].as_str().unwrap_or_default().to_string())).collect()
}

/// `(x, y)` of the `hit=(x, y)` of a `hovered:` trace line.
fn hit_pixel(line: &str) -> (u32, u32) {
    let inner = line.split("hit=(").nth(1).and_then(|r| r.split(')').next()).unwrap_or_else(|| panic!("no hit in {line:?}"));
    let (x, y) = inner.split_once(", ").unwrap();
    (x.parse().unwrap(), y.parse().unwrap())
}

#[test]
fn the_hover_radius_reaches_a_thin_rod_from_beside_it() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let scene = rod_scene();
    let x = Xvfb::start("1280x800x24");
    let mut v = Viewer::start(&x.display, &[scene.to_str().unwrap()], &[TRACE]);
    let ready = v.log.iter().find(|l| l.starts_with("ready:")).cloned().unwrap();
    let size = ready.split_whitespace().nth(1).unwrap();
    let (w, h) = size.split_once('x').map(|(w, h)| (w.parse::<u32>().unwrap(), h.parse::<u32>().unwrap())).unwrap();
    // The same view headless: the window's 3D view is all but the panel.
    let (vw, y) = (w - PANEL, h / 2);
    let hits = hits_along_row(&scene, vw, h, y);
    assert!(!hits.is_empty() && hits.len() <= 4, "the rod is 1 to 4 pixels wide on row {y}: {hits:?}");
    assert!(hits.iter().all(|(_, n)| n == "Rod"));
    let (first, last) = (hits[0].0, hits[hits.len() - 1].0);
    assert_eq!(last - first + 1, hits.len() as u32, "one run of pixels: {hits:?}");
    // 2 pixels right of the rod: a miss for a point pick, the rod within 4 pixels. 7 pixels:
    // out of reach.
    let (near, far) = (last + 2, last + 7);
    assert!(!hits.iter().any(|&(x, _)| x == near || x == far));

    v.xdo_line(&format!("mousemove {} {y}", PANEL + far));
    std::thread::sleep(Duration::from_millis(800));
    v.xdo_line(&format!("mousemove {} {y}", PANEL + near));
    let hovered = v.wait_for("hovered: node=", STEP);
    assert!(hovered.contains("name=Some(\"Rod\")"), "{hovered}");
    let (hx, hy) = hit_pixel(&hovered);
    // Not the cursor's own pixel (a hit there would be nearest): the radius reached the rod.
    let d2 = (hx as i64 - i64::from(PANEL + near)).pow(2) + (hy as i64 - i64::from(y)).pow(2);
    assert!((1..=16).contains(&d2), "hit {hx},{hy} from the cursor at {},{y}: {hovered}", PANEL + near);
    v.xdo_line(&format!("mousemove {} {y}", PANEL + far));
    let gone = v.wait_for("hovered:", STEP);
    assert_eq!(gone, "hovered: nothing", "7 pixels away the rod is out of reach");
    // A click beside the rod selects what is hovered: the rod.
    v.xdo_line(&format!("mousemove {} {y} click 1", PANEL + near));
    let selected = v.wait_for("selected:", STEP);
    assert!(selected.contains("\"Rod\""), "{selected}");

    v.drain();
    let errors: Vec<_> = v.log.iter().filter(|l| l.contains("error")).cloned().collect();
    assert!(errors.is_empty(), "{errors:?}");
    let exit = v.quit_cleanly();
    eprintln!("hover radius: rod at columns {first}..={last}, hovered from {near}; {exit}");
}
