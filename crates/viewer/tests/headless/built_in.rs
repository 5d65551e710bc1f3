//! The built-in scene: picks against the oracle, the screenshot's highlight, an empty scene,
//! dynamic rendering, the demo's outputs, the asset's freshness, billboard signposts.

use super::*;

#[test]
fn built_in_scene_picks_match_the_oracle() {
    let scene = viewer::load_scene(None).unwrap();
    let (w, h) = (320, 180);
    let (agree, hits) = check_scene_against_oracle(None, &scene, &random_pixels(1, 300, w, h), w, h, &[]);
    eprintln!("built-in scene: {agree} unambiguous picks agree with the oracle, {hits} hits");
    assert!(agree > 150 && hits > 100, "{agree} / {hits}");
}

#[test]
fn screenshot_highlights_the_first_pick() {
    let (w, h) = (320, 180);
    let picks = tmp("shot-picks.json");
    let out = tmp("shot.json");
    let shot_sel = tmp("shot-selected.png");
    let shot_none = tmp("shot-none.png");
    let ids = tmp("shot-ids.png");
    // First pick on the sphere at the centre, then one on the background.
    std::fs::write(&picks, "[[160, 90], [5, 5]]").unwrap();
    let run = viewer(&[
        "--headless",
        "--validation",
        "--size",
        "320x180",
        "--pick-file",
        picks.to_str().unwrap(),
        "--json",
        out.to_str().unwrap(),
        "--screenshot",
        shot_sel.to_str().unwrap(),
        "--id-view",
        ids.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    std::fs::write(&picks, "[[5, 5]]").unwrap();
    let run = viewer(&[
        "--headless",
        "--validation",
        "--size",
        "320x180",
        "--pick-file",
        picks.to_str().unwrap(),
        "--json",
        out.to_str().unwrap(),
        "--screenshot",
        shot_none.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let a = image::open(&shot_sel).unwrap().to_rgba8();
    let b = image::open(&shot_none).unwrap().to_rgba8();
    assert_eq!(a.dimensions(), (w, h));
    let changed = a.pixels().zip(b.pixels()).filter(|(p, q)| p != q).count();
    assert!(changed > 200, "selecting the first pick changes the image ({changed} pixels differ)");
    // The centre pixel is tinted orange when selected.
    let (sel, plain) = (a.get_pixel(160, 90).0, b.get_pixel(160, 90).0);
    assert!(sel != plain, "centre {sel:?} vs {plain:?}");
    let id_img = image::open(&ids).unwrap().to_rgba8();
    assert_eq!(id_img.get_pixel(5, 5).0, [0, 0, 0, 255], "background is black in the ID view");
    assert_ne!(id_img.get_pixel(160, 90).0, [0, 0, 0, 255]);
}

#[test]
fn a_default_scene_that_draws_nothing_is_shown_empty() {
    // The written scene's meshes all sit in scene 0; the default scene (1) holds only the
    // camera: every entry is a miss, not an error.
    let (json, bin) = written_scene().to_gltf("empty-default.bin");
    let mut doc: Value = serde_json::from_str(&json).unwrap();
    let camera = doc["nodes"].as_array().unwrap().iter().position(|n| n.get("camera").is_some()).unwrap();
    doc["scenes"].as_array_mut().unwrap().push(json!({"nodes": [camera]}));
    doc["scene"] = json!(1);
    std::fs::write(tmp("empty-default.bin"), bin).unwrap();
    let path = tmp("empty-default.gltf");
    std::fs::write(&path, doc.to_string()).unwrap();
    let entries = json!([[80, 60], {"point": [80, 60], "radius": 8}, {"rect": [0, 0, 160, 120], "mode": "visible"}]);
    let records = run_entries_with("empty-default-picks", &entries, &[path.to_str().unwrap()]);
    assert_eq!(records[0]["hit"], json!(false));
    assert_eq!(records[1]["hit_pixel"], Value::Null);
    assert_eq!(records[2]["objects"], json!([]));
    // Scene 0 of the same file shows its meshes.
    doc["scene"] = json!(0);
    std::fs::write(&path, doc.to_string()).unwrap();
    let records = run_entries_with("empty-default-picks", &entries, &[path.to_str().unwrap()]);
    assert!(!records[2]["objects"].as_array().unwrap().is_empty());
}

#[test]
fn dynamic_rendering_picks_the_same_as_render_passes() {
    let scene = viewer::load_scene(None).unwrap();
    let (w, h) = (320, 180);
    let (agree, hits) = check_scene_against_oracle(None, &scene, &random_pixels(3, 200, w, h), w, h, &["--dynamic-rendering"]);
    assert!(agree > 100 && hits > 60, "{agree} / {hits}");
    let entries = serde_json::json!([
        [80, 60],
        {"point": [81, 61], "radius": 6},
        {"rect": [10, 10, 150, 110], "mode": "visible"},
        {"rect": [30, 20, 120, 100], "mode": "all"},
    ]);
    let passes = run_entries_with("paths-render-pass", &entries, &[]);
    let dynamic = run_entries_with("paths-dynamic", &entries, &["--dynamic-rendering"]);
    assert_eq!(passes, dynamic, "the same picks on both paths");
    assert!(passes[2]["objects"].as_array().is_some_and(|o| !o.is_empty()), "the rectangle finds objects: {}", passes[2]);
}

#[test]
fn demo_writes_its_outputs() {
    let out = tmp("demo");
    let run = viewer(&["--demo", "--validation", "--size", "320x180", "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for f in ["picks.json", "demo.png", "id_view.png"] {
        assert!(out.join(f).exists(), "{f}");
        assert!(run.stdout.contains(f), "the demo says where {f} went");
    }
    assert!(run.stdout.contains("hits"));
}

#[test]
fn the_built_in_scene_asset_is_up_to_date() {
    let fresh = viewer::default_scene::build().to_glb();
    assert!(
        fresh == viewer::default_scene::DEFAULT_SCENE_GLB,
        "assets/default_scene.glb is stale: run `cargo run -p viewer -- --write-default-scene assets/default_scene.glb`"
    );
}

#[test]
fn built_in_signposts_are_billboards_picked_through_the_contributor() {
    let scene = viewer::load_scene(None).unwrap();
    assert_eq!(scene.billboards.len(), 3, "the built-in scene has three signposts");
    let cam = viewer::headless::headless_camera(&scene, 160.0 / 120.0);
    let entries: Vec<Value> = scene
        .billboards
        .iter()
        .map(|b| {
            let c = (cam.projection * cam.view) * scene.nodes[b.node].world.w_axis;
            serde_json::json!([((c.x / c.w + 1.0) * 80.0) as i64, ((c.y / c.w + 1.0) * 60.0) as i64])
        })
        .collect();
    let records = run_entries("signposts", &Value::Array(entries));
    for (k, r) in records.iter().enumerate() {
        assert_eq!(r["node_name"].as_str(), Some(format!("Signpost {k}").as_str()), "{r}");
        assert_eq!(r["billboard"].as_u64(), Some(k as u64), "{r}");
        assert_eq!(r["id"].as_u64(), Some(viewer::objects::BILLBOARD_ID_BASE + k as u64));
    }
}
