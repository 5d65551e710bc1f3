//! Headless outputs lose and overwrite nothing by surprise: colliding paths are refused, a
//! late failure leaves no earlier output behind, and memory does not grow with the number of
//! picks or the size of the view.

use std::path::PathBuf;
use std::process::Command;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("picking-vk-outputs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn viewer(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_viewer")).args(args).output().expect("run viewer");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

fn picks(d: &std::path::Path, name: &str, count: usize, (w, h): (u32, u32)) -> PathBuf {
    let mut rng = fastrand::Rng::with_seed(count as u64);
    let list: Vec<[u32; 2]> = (0..count).map(|_| [rng.u32(..w), rng.u32(..h)]).collect();
    let path = d.join(name);
    std::fs::write(&path, serde_json::to_string(&list).unwrap()).unwrap();
    path
}

#[test]
fn colliding_outputs_are_refused_before_anything_runs() {
    let d = dir("collide");
    let p = picks(&d, "picks.json", 3, (64, 48));
    let same = d.join("out.json");
    let (code, _, err) = viewer(&[
        "--headless",
        "--size",
        "64x48",
        "--pick-file",
        p.to_str().unwrap(),
        "--json",
        same.to_str().unwrap(),
        "--screenshot",
        same.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("same file"), "{err}");
    assert!(!same.exists());
    // Writing over an input is refused too, and the input is untouched.
    let before = std::fs::read(&p).unwrap();
    let (code, _, err) = viewer(&["--headless", "--size", "64x48", "--pick-file", p.to_str().unwrap(), "--json", p.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("overwrite the pick file"), "{err}");
    assert_eq!(std::fs::read(&p).unwrap(), before);
    // And over a file the scene itself reads (its buffer), found by its real path.
    let mut b = viewer::gltf_write::GltfBuilder::new();
    let mesh = b.add_mesh("Box", &[(&picking_vk_host::shapes::cuboid(glam::Vec3::splat(0.5), [0.8; 4]), viewer::gltf_write::IndexStorage::U16)]);
    let node = b.add_node("Box", Some(mesh), glam::Mat4::IDENTITY, &[]);
    b.add_root(node);
    let (json, bin) = b.to_gltf("scene.bin");
    std::fs::write(d.join("scene.gltf"), json).unwrap();
    std::fs::write(d.join("scene.bin"), &bin).unwrap();
    let over = d.join("sub").join("..").join("scene.bin");
    let (code, _, err) = viewer(&[
        d.join("scene.gltf").to_str().unwrap(),
        "--headless",
        "--size",
        "64x48",
        "--pick-file",
        p.to_str().unwrap(),
        "--json",
        over.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("overwrite the scene's own file"), "{err}");
    assert_eq!(std::fs::read(d.join("scene.bin")).unwrap(), bin);
    // A replay's outputs are held to the same inputs: the scene and its files, and the script.
    let script = d.join("replay.json");
    std::fs::write(&script, r#"{"frames": [{"cursor": [10, 10]}]}"#).unwrap();
    let scene_json = std::fs::read(d.join("scene.gltf")).unwrap();
    for (flag, target, says) in [
        ("--json", d.join("scene.gltf"), "overwrite the scene"),
        ("--screenshot", over.clone(), "overwrite the scene's own file"),
        ("--json", script.clone(), "overwrite the replay script"),
    ] {
        let (code, _, err) =
            viewer(&[d.join("scene.gltf").to_str().unwrap(), "--headless", "--replay", script.to_str().unwrap(), flag, target.to_str().unwrap()]);
        assert_eq!(code, 1, "{flag} {target:?}: {err}");
        assert!(err.contains(says), "{flag} {target:?}: {err}");
    }
    assert_eq!(std::fs::read(d.join("scene.gltf")).unwrap(), scene_json);
    assert_eq!(std::fs::read(d.join("scene.bin")).unwrap(), bin);
}

#[test]
fn a_late_failure_leaves_no_output_behind() {
    let d = dir("late");
    let p = picks(&d, "picks.json", 5, (64, 48));
    let json = d.join("out.json");
    // The screenshot's folder cannot be created (a file stands in its place): it fails after
    // the JSON was written.
    std::fs::write(d.join("blocker"), b"a file, not a folder").unwrap();
    let shot = d.join("blocker").join("shot.png");
    let (code, _, err) = viewer(&[
        "--headless",
        "--size",
        "64x48",
        "--pick-file",
        p.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "--screenshot",
        shot.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("viewer: error:"), "{err}");
    assert!(!json.exists(), "the JSON written before the failure is not left behind");
    let names: Vec<String> = std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "no temporary file remains: {names:?}");
}

fn peak_kib(stdout: &str) -> u64 {
    stdout.lines().find_map(|l| l.strip_prefix("peak memory: ")).and_then(|v| v.trim_end_matches(" KiB").parse().ok()).expect("peak memory line")
}

#[test]
fn memory_does_not_grow_with_picks_or_view_size() {
    let d = dir("memory");
    let run = |picks_file: &PathBuf, size: &str, json: &PathBuf| {
        let (code, out, err) =
            viewer(&["--headless", "--size", size, "--pick-file", picks_file.to_str().unwrap(), "--json", json.to_str().unwrap(), "--report-memory"]);
        assert_eq!(code, 0, "{err}");
        peak_kib(&out)
    };
    let few = picks(&d, "few.json", 1000, (64, 48));
    let many = picks(&d, "many.json", 100_000, (64, 48));
    let json = d.join("out.json");
    let base = run(&few, "64x48", &json);
    let lots = run(&many, "64x48", &json);
    let records = std::fs::read_to_string(&json).unwrap().matches("\"x\":").count();
    assert_eq!(records, 100_000, "every pick has its record");
    let huge = run(&few, "8192x8192", &json);
    eprintln!("peak memory: {base} KiB for 1,000 picks, {lots} KiB for 100,000, {huge} KiB for 1,000 in an 8192x8192 view");
    assert!(lots < base + 16 * 1024, "100x the picks must not take more than 16 MiB more: {base} -> {lots} KiB");
    assert!(huge < base + 32 * 1024, "an 8192x8192 view must not take memory by its size: {base} -> {huge} KiB");
}
