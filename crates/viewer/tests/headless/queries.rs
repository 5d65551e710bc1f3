//! Pick files beyond points: thin-object snapping, radius queries and rectangles mixed in
//! one file, lines and points hit by radius queries.

use super::*;

#[test]
fn thin_snapping_hovers_the_lamp_pole_from_beside_it_where_nearest_finds_the_ground() {
    // The built-in scene's pole, found by point picks around where the camera shows it at
    // 320x240 (a pixel or two wide there).
    let (w, h) = (320, 240);
    let around: Vec<UVec2> = (130..170).flat_map(|y| (170..214).map(move |x| UVec2::new(x, y))).collect();
    let points = headless_picks(None, &around, w, h, &[]);
    let name_at = |x: i64, y: i64| points.iter().find(|r| r["x"] == x && r["y"] == y).and_then(|r| r["node_name"].as_str());
    let pole = points.iter().filter(|r| r["node_name"] == "Pole").map(|r| (r["x"].as_i64().unwrap(), r["y"].as_i64().unwrap()));
    // A pole pixel with the ground 3 pixels to its right, and only pole and ground within 5
    // pixels of there: the cursor goes there.
    let only_pole_and_ground = |(x, y): (i64, i64)| {
        (-5..=5i64)
            .flat_map(|dy| (-5..=5i64).map(move |dx| (dx, dy)))
            .filter(|(dx, dy)| dx * dx + dy * dy <= 25)
            .all(|(dx, dy)| matches!(name_at(x + dx, y + dy), Some("Pole" | "Ground")))
    };
    let (x, y) = pole
        .map(|(x, y)| (x + 3, y))
        .find(|&(x, y)| name_at(x, y) == Some("Ground") && only_pole_and_ground((x, y)))
        .expect("the pole shows against the ground");
    let entries = serde_json::json!([
        {"point": [x, y], "radius": 5},
        {"point": [x, y], "radius": 5, "snap": "thin"},
    ]);
    let (picks, out) = (tmp("pole-snap.json"), tmp("pole-snap-out.json"));
    std::fs::write(&picks, entries.to_string()).unwrap();
    let run = viewer(&["--headless", "--validation", "--size", "320x240", "--pick-file", picks.to_str().unwrap(), "--json", out.to_str().unwrap()]);
    assert_eq!(run.code, 0, "viewer failed:\n{}\n{}", run.stdout, run.stderr);
    let records: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!((records[0]["snap"].as_str(), records[0]["node_name"].as_str()), (Some("nearest"), Some("Ground")), "{}", records[0]);
    assert_eq!((records[1]["snap"].as_str(), records[1]["node_name"].as_str()), (Some("thin"), Some("Pole")), "{}", records[1]);
    let hit = records[1]["hit_pixel"].as_array().unwrap();
    assert!((hit[0].as_i64().unwrap() - x).pow(2) + (hit[1].as_i64().unwrap() - y).pow(2) <= 25, "within the radius: {hit:?}");
    // The record names its cursor; the pole it snapped to lies beside it.
    assert_eq!((records[1]["x"].as_i64(), records[1]["y"].as_i64()), (Some(x), Some(y)), "{}", records[1]);
    assert_ne!((hit[0].as_i64(), hit[1].as_i64()), (Some(x), Some(y)), "{}", records[1]);
}

#[test]
fn mixed_pick_files_run_points_radius_queries_and_rectangles() {
    let rect = [50u32, 40, 110, 85];
    let entries = serde_json::json!([
        [80, 60],
        {"point": [81, 61], "radius": 6},
        {"rect": rect, "mode": "visible"},
        {"rect": rect, "mode": "all"},
        {"point": [500, 5], "radius": 3},
        {"rect": [10, 10, 10, 20]},
        {"rect": [0, 0, 4, 4], "mode": "sideways"},
        {"point": [5, 5], "radius": 99},
        [3, 4]
    ]);
    let records = run_entries("mixed", &entries);
    assert_eq!(records.len(), 9, "one record per entry, in order");
    assert_eq!((records[0]["x"].as_u64(), records[0]["y"].as_u64()), (Some(80), Some(60)));
    assert_eq!(records[1]["radius"], 6);
    assert_eq!((records[1]["x"].as_u64(), records[1]["y"].as_u64()), (Some(81), Some(61)), "a radius record's x, y are its cursor");
    for (i, what) in [(4, "outside"), (5, "empty"), (6, "mode"), (7, "radius")] {
        assert!(records[i]["error"].as_str().is_some_and(|e| e.contains(what)), "entry {i}: {}", records[i]);
    }
    assert!(records[8].get("error").is_none());

    // The rectangle against a point pick of every pixel it covers: the same objects, each
    // with exactly as many pixels, and the same first pixel.
    let mut points = vec![];
    for y in rect[1]..rect[3] {
        for x in rect[0]..rect[2] {
            points.push(serde_json::json!([x, y]));
        }
    }
    let point_records = run_entries("rect-points", &Value::Array(points));
    let mut expected: std::collections::BTreeMap<(u64, Option<u64>), (u64, [u64; 2])> = Default::default();
    for r in &point_records {
        if let Some(id) = r["id"].as_u64() {
            let e = expected.entry((id, r["instance"].as_u64())).or_insert((0, [r["x"].as_u64().unwrap(), r["y"].as_u64().unwrap()]));
            e.0 += 1;
        }
    }
    let visible = &records[2];
    assert_eq!(visible["mode"], "visible");
    let got: std::collections::BTreeMap<(u64, Option<u64>), (u64, [u64; 2])> = visible["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                (o["id"].as_u64().unwrap(), o["instance"].as_u64()),
                (o["pixels"].as_u64().unwrap(), [o["pixel"][0].as_u64().unwrap(), o["pixel"][1].as_u64().unwrap()]),
            )
        })
        .collect();
    assert!(expected.len() >= 3, "the rectangle covers several objects: {expected:?}");
    // Point picks run in other cells of the pick target than the rectangle's tile: the same
    // pixels, shifted by other whole-pixel offsets, where fixed-point vertex snapping may move
    // an edge pixel from one object to its neighbour. (Against the full-size ID image, the
    // library's tests hold rectangles to exact counts.) So: every object with more than two
    // pixels on both sides, and at most 4 pixels that moved in all.
    let moved: u64 = expected
        .keys()
        .chain(got.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .iter()
        .map(|k| {
            let (a, b) = (expected.get(*k).map_or(0, |e| e.0), got.get(*k).map_or(0, |g| g.0));
            a.abs_diff(b)
        })
        .sum();
    assert!(moved <= 4, "Visible rectangle vs per-pixel picks: {moved} pixels differ\n{got:?}\n{expected:?}");
    for (k, e) in &expected {
        if e.0 > 2 {
            assert!(got.get(k).is_some_and(|g| g.0 > 0), "object {k:?} ({} pixels) is in the rectangle's result", e.0);
        }
    }
    assert!(visible["objects"][0]["node_name"].is_string(), "named by the scene: {}", visible["objects"][0]);
    // Select-through finds at least what is visible.
    let all: Vec<(u64, Option<u64>)> = records[3]["objects"].as_array().unwrap().iter().map(|o| (o["id"].as_u64().unwrap(), o["instance"].as_u64())).collect();
    for key in expected.keys() {
        assert!(all.contains(key), "select-through holds visible {key:?}");
    }
    // The radius query's hit pixel lies within its radius, and is what a point pick there hits.
    if let Some(hp) = records[1]["hit_pixel"].as_array() {
        let (hx, hy) = (hp[0].as_i64().unwrap(), hp[1].as_i64().unwrap());
        assert!((hx - 81).pow(2) + (hy - 61).pow(2) <= 36);
        let there = run_entries("radius-check", &serde_json::json!([[hx, hy]]));
        assert_eq!(there[0]["id"], records[1]["id"]);
    } else {
        panic!("the centre of the built-in scene has something within 6 pixels: {}", records[1]);
    }
}

#[test]
fn gltf_lines_line_loops_and_points_are_drawn_and_hit_by_radius_queries() {
    // A line list, a line loop (a strip back to its start) and points, side by side.
    let mut b = GltfBuilder::new();
    let thin = |positions: Vec<Vec3>, topology, indices| picking_vk_host::Primitive {
        normals: vec![Vec3::Y; positions.len()],
        positions,
        indices,
        topology,
        color: [1.0, 1.0, 0.2, 1.0],
        ..Default::default()
    };
    let lines = thin(
        vec![Vec3::new(-1.6, -0.6, 0.0), Vec3::new(-1.0, 0.6, 0.0), Vec3::new(-1.6, 0.6, 0.0), Vec3::new(-1.0, -0.6, 0.0)],
        picking_vk::draw::Topology::LineList,
        None,
    );
    let square = vec![Vec3::new(-0.3, -0.4, 0.0), Vec3::new(0.3, -0.4, 0.0), Vec3::new(0.3, 0.4, 0.0), Vec3::new(-0.3, 0.4, 0.0)];
    let points: Vec<Vec3> = (0..5).map(|i| Vec3::new(1.0 + 0.15 * i as f32, -0.5 + 0.25 * i as f32, 0.0)).collect();
    let meshes = [
        ("Lines", b.add_mesh("Lines", &[(&lines, IndexStorage::U16)])),
        ("Loop", b.add_mesh("Loop", &[(&thin(square.clone(), picking_vk::draw::Topology::LineStrip, Some(vec![0, 1, 2, 3])), IndexStorage::U16)])),
        ("Points", b.add_mesh("Points", &[(&thin(points.clone(), picking_vk::draw::Topology::PointList, None), IndexStorage::U16)])),
    ];
    for (name, mesh) in meshes {
        let node = b.add_node(name, Some(mesh), Mat4::IDENTITY, &[]);
        b.add_root(node);
    }
    let eye = Vec3::new(0.0, 0.0, 3.0);
    let camera = b.add_camera_node("Camera", 0.9, 0.1, Some(20.0), glam::camera::rh::view::look_at_mat4(eye, Vec3::ZERO, Vec3::Y).inverse());
    b.add_root(camera);
    // The loop is written as a strip; make it a LINE_LOOP without its closing index.
    let (json, bin) = b.to_gltf("thin.bin");
    let mut doc: Value = serde_json::from_str(&json).unwrap();
    doc["meshes"][1]["primitives"][0]["mode"] = serde_json::json!(2);
    let path = tmp("thin.gltf");
    std::fs::write(&path, doc.to_string()).unwrap();
    std::fs::write(tmp("thin.bin"), bin).unwrap();
    let scene = viewer::load_scene(Some(&path)).unwrap();
    let cam = viewer::headless::headless_camera(&scene, 160.0 / 120.0);
    let project = |p: Vec3| {
        let c = (cam.projection * cam.view) * p.extend(1.0);
        [((c.x / c.w + 1.0) * 80.0) as i64, ((c.y / c.w + 1.0) * 60.0) as i64]
    };
    // Radius queries 3 pixels off: the crossing of the lines, the loop's closing edge (the
    // segment the loop adds), a point; and one far from everything.
    let cross = project(Vec3::new(-1.3, 0.0, 0.0));
    let closing = project(Vec3::new(-0.3, 0.0, 0.0));
    let point = project(points[2]);
    let entries = serde_json::json!([
        {"point": [cross[0] + 3, cross[1]], "radius": 6},
        {"point": [closing[0] - 3, closing[1]], "radius": 6},
        {"point": [point[0], point[1] + 3], "radius": 6},
        {"point": [80, 112], "radius": 4},
    ]);
    let records = run_entries_with("thin", &entries, &[path.to_str().unwrap()]);
    let names: Vec<Option<&str>> = records.iter().map(|r| r["node_name"].as_str()).collect();
    assert_eq!(names, [Some("Lines"), Some("Loop"), Some("Points"), None], "{records:?}");
    // The loop's closing segment exists: a hit on it lies on x = -0.3.
    let world = records[1]["world"].as_array().unwrap()[0].as_f64().unwrap();
    assert!((world + 0.3).abs() < 0.03, "{world}");
}
