//! `viewer --headless --replay`: the committed 200-frame script (the camera orbits, the cursor
//! moves every frame, a rubber band every fifth frame) on the built-in scene, lavapipe with
//! validation on. In every frame the object the lit pass highlighted (read back from the GPU
//! results it used) is the same frame's CPU result, and for point hovers the object under the
//! cursor in that frame's full-resolution ID image.

use serde_json::Value;
use std::process::Command;

fn tmp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("picking-vk-viewer-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn a_scripted_orbit_highlights_in_every_frame_what_that_frame_shows() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/replay-orbit.json");
    let (json, png) = (tmp("replay.json"), tmp("replay.png"));
    let out = Command::new(env!("CARGO_BIN_EXE_viewer"))
        .args(["--headless", "--validation", "--size", "480x270", "--replay", script, "--json", json.to_str().unwrap(), "--screenshot", png.to_str().unwrap()])
        .output()
        .expect("run viewer");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let records: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(records.len(), 200);
    let mut distinct = std::collections::BTreeSet::new();
    let (mut points, mut hits, mut bands) = (0, 0, 0);
    for (i, r) in records.iter().enumerate() {
        assert_eq!((r["frame"].as_u64(), r["results_frame"].as_u64()), (Some(i as u64), Some(i as u64)), "the results are the frame's own: {r}");
        assert_eq!(r["highlighted"], r["cpu_hover"], "frame {i}: the GPU highlight is the same frame's CPU result");
        if r["radius"] == 0 {
            assert_eq!(r["highlighted"], r["under_cursor"], "frame {i}: the point hover is what the frame's ID image has under the cursor");
            points += 1;
        }
        if !r["highlighted"].is_null() {
            hits += 1;
            distinct.insert(r["highlighted"]["id"].to_string() + &r["highlighted"]["instance"].to_string());
        }
        bands += usize::from(r["band"].as_array().is_some_and(|b| !b.is_empty()));
    }
    assert!(points == 100 && hits > 100, "{points} point frames, {hits} frames with a highlight");
    assert!(distinct.len() >= 8, "the cursor and camera move over many objects: {distinct:?}");
    assert!(bands >= 30, "{bands} of 40 bands found objects");
    let shot = image::open(&png).unwrap();
    assert_eq!((shot.width(), shot.height()), (480, 270));
}

#[test]
fn bad_replay_scripts_are_refused_by_name() {
    let run = |args: &[&str]| Command::new(env!("CARGO_BIN_EXE_viewer")).args(args).output().expect("run viewer");
    let cases = [
        ("malformed", "{\"frames\": [", "replay script"),
        ("empty", "{\"frames\": []}", "1 to 100000 frames"),
        ("unknown field", "{\"frames\": [{\"cursor\": [1, 1], \"zoom\": 2}]}", "unknown field"),
        ("cursor off the view", "{\"frames\": [{\"cursor\": [480, 10]}]}", "must lie in the 480x270 view"),
        ("radius past 12", "{\"frames\": [{\"cursor\": [10, 10], \"radius\": 13}]}", "at most 12"),
        ("band off the view", "{\"frames\": [{\"cursor\": [10, 10], \"band\": [500, 10, 600, 20]}]}", "wholly outside the 480x270 view"),
        ("infinite orbit", "{\"frames\": [{\"cursor\": [10, 10], \"orbit\": [1e39, 0]}]}", "is not finite"),
    ];
    for (what, text, says) in cases {
        let path = tmp(&format!("{}.json", what.replace(' ', "-")));
        std::fs::write(&path, text).unwrap();
        let out = run(&["--headless", "--size", "480x270", "--replay", path.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(says), "{what}: {stderr}");
    }
    // A script that never ends (a device of zeros) is cut at its limit and refused, not read
    // until memory runs out.
    let out = run(&["--headless", "--size", "480x270", "--replay", "/dev/zero"]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("is larger than"), "{}", String::from_utf8_lossy(&out.stderr));
    let out = run(&["--replay", concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/replay-orbit.json")]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("--replay needs --headless"));
}
