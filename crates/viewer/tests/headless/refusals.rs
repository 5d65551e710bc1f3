//! Bad input refused with a message: malformed glTF, bad arguments and pick files; a GLB
//! chunk of unknown type skipped.

use super::*;

#[test]
fn malformed_gltf_is_rejected_with_a_clear_message() {
    let mut cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("garbage.glb", b"definitely not a gltf file".to_vec(), "glTF"),
        ("empty.gltf", b"{}".to_vec(), "glTF"),
        ("nobuffer.gltf", br#"{"asset":{"version":"2.0"},"buffers":[{"byteLength":64,"uri":"missing.bin"}]}"#.to_vec(), "missing.bin"),
        ("nomesh.gltf", br#"{"asset":{"version":"2.0"},"scenes":[{"nodes":[0]}],"nodes":[{"name":"n"}]}"#.to_vec(), "no triangle meshes"),
    ];
    // A valid file whose index points past its vertices.
    let mut b = GltfBuilder::new();
    let mut tri = shapes::cuboid(Vec3::ONE, [1.0; 4]);
    tri.indices.as_mut().unwrap()[4] = 999;
    let m = b.add_mesh("Bad", &[(&tri, IndexStorage::U32)]);
    let n = b.add_node("Bad", Some(m), Mat4::IDENTITY, &[]);
    b.add_root(n);
    cases.push(("badindex.glb", b.to_glb(), "index 999"));
    // A truncated .glb.
    let good = written_scene().to_glb();
    cases.push(("truncated.glb", good[..good.len() / 2].to_vec(), "truncated"));
    for (name, bytes, expect) in cases {
        let path = tmp(name);
        std::fs::write(&path, bytes).unwrap();
        let run = viewer(&[path.to_str().unwrap(), "--headless", "--demo", "--out", tmp("never").to_str().unwrap()]);
        assert_ne!(run.code, 0, "{name} must be refused");
        assert!(run.stderr.contains("viewer: error:") && run.stderr.contains(expect), "{name}: {}", run.stderr);
        assert!(!run.stderr.contains("panicked"), "{name}: {}", run.stderr);
    }
}

#[test]
fn bad_arguments_and_pick_files_are_refused() {
    let not_json = tmp("notjson.json");
    std::fs::write(&not_json, "[[1, 2], [3]").unwrap();
    let bad_pair = tmp("badpair.json");
    std::fs::write(&bad_pair, "[[1, 2], [3]]").unwrap();
    for (args, expect) in [
        (vec!["--headless"], "--pick-file"),
        (vec!["--headless", "--pick-file", "/nonexistent/picks.json"], "cannot read"),
        (vec!["--headless", "--pick-file", not_json.to_str().unwrap()], "not JSON"),
        (vec!["--headless", "--size", "0x10", "--demo"], "at least 1x1"),
        (vec!["/nonexistent/scene.glb", "--demo"], "could not read"),
        (vec!["--demo", "--time", "1e308"], "--time 1e308: must be a finite number"),
        // A leading hyphen is a negative time, not a flag.
        (vec!["--demo", "--time", "-inf"], "--time -inf: must be a finite number"),
    ] {
        let run = viewer(&args);
        assert_ne!(run.code, 0, "{args:?}");
        assert!(run.stderr.contains(expect), "{args:?}: {}", run.stderr);
    }
    // An off-view pixel or a malformed entry is reported in its record, not fatal.
    let picks = tmp("offview.json");
    std::fs::write(&picks, "[[-1, 5], [5000, 5], [10, 10], [3]]").unwrap();
    let out = tmp("offview-out.json");
    let run = viewer(&["--headless", "--size", "64x48", "--pick-file", picks.to_str().unwrap(), "--json", out.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let records: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(records.len(), 4);
    assert!(records[0]["error"].as_str().unwrap().contains("outside"));
    assert!(records[1]["error"].as_str().unwrap().contains("outside"));
    // Refused pixels are echoed as given, never clamped into the view.
    assert_eq!((records[0]["x"].as_i64(), records[0]["y"].as_i64()), (Some(-1), Some(5)));
    assert_eq!((records[1]["x"].as_i64(), records[1]["y"].as_i64()), (Some(5000), Some(5)));
    assert!(records[2].get("error").is_none());
    assert!(records[3]["error"].as_str().unwrap().contains("expected [x, y]"), "{}", records[3]);
    let _ = bad_pair;
}

/// glTF tells readers to skip GLB chunks of unknown types: a file with one after its binary
/// chunk loads as the file without it (the glTF crate alone refuses it).
#[test]
fn a_glb_chunk_of_unknown_type_is_skipped() {
    let mut glb = written_scene().to_glb();
    glb.extend(8u32.to_le_bytes());
    glb.extend(0x5453_4554u32.to_le_bytes());
    glb.extend([7u8; 8]);
    let length = glb.len() as u32;
    glb[8..12].copy_from_slice(&length.to_le_bytes());
    let path = tmp("unknown-chunk.glb");
    std::fs::write(&path, &glb).unwrap();
    let with = viewer::load_scene(Some(&path)).expect("an unknown chunk is skipped");
    let plain = tmp("no-unknown-chunk.glb");
    std::fs::write(&plain, written_scene().to_glb()).unwrap();
    let without = viewer::load_scene(Some(&plain)).unwrap();
    assert_eq!(with.nodes.len(), without.nodes.len());
    assert_eq!(with.meshes.iter().map(|m| m.primitives.len()).sum::<usize>(), without.meshes.iter().map(|m| m.primitives.len()).sum::<usize>());
}
