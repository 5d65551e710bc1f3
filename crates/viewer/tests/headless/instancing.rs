//! Instancing: a field of nodes and instances, EXT_mesh_gpu_instancing against the same
//! instances written as nodes, malformed instancing refused by name.

use super::*;

#[test]
fn instanced_field_reports_each_node_and_instance() {
    let b = written_scene();
    let glb = tmp("field.glb");
    std::fs::write(&glb, b.to_glb()).unwrap();
    let scene = viewer::gltf_load::load_path(&glb).unwrap();
    let objects = viewer::objects::ObjectTable::new(&scene);
    assert!(objects.objects.iter().any(|o| matches!(o.kind, viewer::objects::ObjectKind::Instanced { .. })), "12 nodes sharing a mesh are drawn instanced");
    // Aim at each field node's top centre.
    let (w, h) = (240, 160);
    let cam = viewer::headless::headless_camera(&scene, w as f32 / h as f32);
    let field: Vec<&viewer::scene::Node> = scene.nodes.iter().filter(|n| n.name.as_deref().is_some_and(|s| s.starts_with("Field "))).collect();
    let pixels: Vec<UVec2> = field
        .iter()
        .map(|n| {
            let c = cam.projection * cam.view * n.world.transform_point3(Vec3::new(0.0, 0.2, 0.0)).extend(1.0);
            UVec2::new(((c.x / c.w + 1.0) * 0.5 * w as f32) as u32, ((c.y / c.w + 1.0) * 0.5 * h as f32) as u32)
        })
        .collect();
    let picks = tmp("field-picks.json");
    std::fs::write(&picks, serde_json::to_string(&pixels.iter().map(|p| [p.x, p.y]).collect::<Vec<_>>()).unwrap()).unwrap();
    let out = tmp("field-out.json");
    let run = viewer(&[
        glb.to_str().unwrap(),
        "--headless",
        "--validation",
        "--size",
        "240x160",
        "--pick-file",
        picks.to_str().unwrap(),
        "--json",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let records: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let mut instances = vec![];
    for (r, n) in records.iter().zip(&field) {
        assert_eq!(r["node"].as_u64(), Some(n.gltf_index as u64), "{r}");
        assert_eq!(r["node_name"].as_str(), n.name.as_deref());
        instances.push(r["instance"].as_u64().expect("instanced hit has an instance"));
    }
    instances.sort_unstable();
    instances.dedup();
    assert_eq!(instances.len(), 12, "every node is its own instance");
}

/// Two instanced nodes (EXT_mesh_gpu_instancing) with a child, a ground and a camera; in the
/// twin, each instance is written as a child node of its own instead (named as the instanced
/// node, at the same translation, rotation and scale). Returns the file and, per instance of
/// the first node then the second, the twin's node index for it.
fn gpu_instanced_scene(twin: bool) -> (GltfBuilder, Vec<usize>) {
    let mut rng = fastrand::Rng::with_seed(18);
    let mut b = GltfBuilder::new();
    let crate_mesh = b.add_mesh("Crate", &[(&shapes::cuboid(Vec3::new(0.3, 0.25, 0.2), [0.8, 0.5, 0.3, 1.0]), IndexStorage::U16)]);
    let mut ball = shapes::sphere(0.35, 10, 14, [0.3, 0.6, 0.9, 1.0]);
    ball.uvs = None;
    let ball_mesh = b.add_mesh("Ball", &[(&ball, IndexStorage::U32)]);
    let ground = b.add_mesh("Ground", &[(&shapes::plane(8.0, [0.5, 0.5, 0.5, 1.0]), IndexStorage::U16)]);
    let mut twins = vec![];
    let mut instanced = |b: &mut GltfBuilder, name: &str, mesh: usize, local: Mat4, count: usize, rng: &mut fastrand::Rng, children: &[usize]| {
        let (mut t, mut r, mut s) = (vec![], vec![], vec![]);
        for k in 0..count {
            t.push(Vec3::new(rng.f32() * 4.0 - 2.0, rng.f32() * 0.8, rng.f32() * 3.0 - 2.0));
            let axis = Vec3::new(rng.f32() - 0.5, rng.f32() - 0.5, rng.f32() - 0.5).normalize_or(Vec3::Y);
            r.push(glam::Quat::from_axis_angle(axis, rng.f32() * 6.0));
            // Instance 5 mirrored: drawn on its own, its faces still facing out.
            let mirror = if k == 5 { Vec3::new(-1.0, 1.0, 1.0) } else { Vec3::ONE };
            s.push(mirror * Vec3::new(0.6 + rng.f32(), 0.6 + rng.f32(), 0.6 + rng.f32()));
        }
        if !twin {
            let node = b.add_node(name, Some(mesh), local, children);
            b.set_gpu_instances(node, &t, &r, &s);
            return node;
        }
        let first = twins.len();
        for k in 0..count {
            twins.push(b.add_trs_node(name, Some(mesh), (t[k], r[k], s[k]), &[]));
        }
        let kids: Vec<usize> = twins[first..].iter().copied().chain(children.iter().copied()).collect();
        b.add_node(name, None, local, &kids)
    };
    // The child is not instanced: it is drawn once, in the instanced node's frame.
    let child = b.add_node("Child ball", Some(ball_mesh), Mat4::from_translation(Vec3::new(0.0, 1.2, 0.0)), &[]);
    let stack = instanced(&mut b, "Stack", crate_mesh, Mat4::from_rotation_y(0.4) * Mat4::from_scale(Vec3::new(1.2, 1.0, 0.9)), 12, &mut rng, &[child]);
    b.add_root(stack);
    let trio = instanced(&mut b, "Trio", ball_mesh, Mat4::from_translation(Vec3::new(1.5, 0.3, 0.8)), 3, &mut rng, &[]);
    b.add_root(trio);
    let g = b.add_node("Ground", Some(ground), Mat4::from_translation(Vec3::new(0.0, -0.3, 0.0)), &[]);
    b.add_root(g);
    let cam = b.add_camera_node(
        "Cam",
        0.9,
        0.1,
        Some(60.0),
        glam::camera::rh::view::look_at_mat4(Vec3::new(0.5, 3.5, 6.0), Vec3::new(0.0, 0.0, -0.5), Vec3::Y).inverse(),
    );
    b.add_root(cam);
    (b, twins)
}

#[test]
fn gpu_instanced_nodes_pick_like_their_instances_written_as_nodes() {
    // EXT_mesh_gpu_instancing (gltfpack -mi, CAD and foliage exporters): each instance is
    // placed by its TRS in the node's frame, picked as the node with its instance index; the
    // twin file, each instance a node of its own, must pick the same surfaces at every pixel.
    let (file, _) = gpu_instanced_scene(false);
    let (twin_file, twins) = gpu_instanced_scene(true);
    let (path, twin_path) = (tmp("gpu-instanced.glb"), tmp("gpu-instanced-twin.glb"));
    std::fs::write(&path, file.to_glb()).unwrap();
    std::fs::write(&twin_path, twin_file.to_glb()).unwrap();
    let scene = viewer::gltf_load::load_path(&path).unwrap();
    let (stack, trio) = (0..scene.nodes.len()).map(|i| &scene.nodes[i]).fold((None, None), |(s, t), n| match n.name.as_deref() {
        Some("Stack") if n.gpu_instance.is_none() => (Some(n.gltf_index), t),
        Some("Trio") if n.gpu_instance.is_none() => (s, Some(n.gltf_index)),
        _ => (s, t),
    });
    let (stack, trio) = (stack.unwrap() as u64, trio.unwrap() as u64);
    // The twin's node for (instanced node, instance).
    let twin_of = |node: u64, k: u64| twins[if node == stack { k as usize } else { 12 + k as usize }] as u64;
    let (w, h) = (160, 120);
    let pixels: Vec<UVec2> = (0..h / 2).flat_map(|j| (0..w / 2).map(move |i| UVec2::new(2 * i, 2 * j))).collect();
    let got = headless_picks(Some(&path), &pixels, w, h, &[]);
    let want = headless_picks(Some(&twin_path), &pixels, w, h, &[]);
    let mut seen = std::collections::BTreeSet::new();
    let near = |a: &Value, b: &Value| (a.as_f64().unwrap() - b.as_f64().unwrap()).abs() <= 1e-5 * (1.0 + b.as_f64().unwrap().abs());
    for (g, t) in got.iter().zip(&want) {
        assert_eq!(g["hit"], t["hit"], "{g} vs {t}");
        if g["hit"] != json!(true) {
            continue;
        }
        let node = g["node"].as_u64().unwrap();
        if let Some(k) = g["gpu_instance"].as_u64() {
            assert!(node == stack || node == trio, "only the instanced nodes report instances: {g}");
            seen.insert((node, k));
            assert_eq!(t["node"].as_u64(), Some(twin_of(node, k)), "{g} vs {t}");
        } else {
            assert!(node != stack && node != trio, "an instanced node's hit names its instance: {g}");
        }
        assert_eq!(g["node_name"], t["node_name"]);
        assert!(near(&g["depth"], &t["depth"]) && near(&g["distance"], &t["distance"]), "{g} vs {t}");
        let (a, b) = (g["world"].as_array().unwrap(), t["world"].as_array().unwrap());
        assert!(a.iter().zip(b).all(|(x, y)| near(x, y)), "{g} vs {t}");
    }
    assert!(seen.iter().filter(|(n, _)| *n == stack).count() >= 8, "most crates are hit: {seen:?}");
    assert!(seen.contains(&(stack, 5)), "the mirrored instance is hit: {seen:?}");
    assert!(seen.iter().filter(|(n, _)| *n == trio).count() >= 2, "the trio is hit: {seen:?}");
    // A rectangle over the view lists each instance with the twin's pixel counts.
    let rect = json!([{"rect": [0, 0, w, h], "mode": "visible"}]);
    // Keyed by the twin's node for an instance, else by name (the files number nodes apart).
    let objects = |records: Vec<Value>, twin: bool| -> std::collections::BTreeMap<String, u64> {
        let list = records[0]["objects"].as_array().unwrap().clone();
        let key = |o: &Value| {
            let node = o["node"].as_u64().unwrap();
            match o["gpu_instance"].as_u64() {
                Some(k) => format!("instance node {}", twin_of(node, k)),
                None if twin && twins.contains(&(node as usize)) => format!("instance node {node}"),
                None => o["node_name"].to_string(),
            }
        };
        list.iter().map(|o| (key(o), o["pixels"].as_u64().unwrap())).collect()
    };
    // (`run_entries_with` runs at 160x120, the size above.)
    let rect_got = objects(run_entries_with("gpu-instanced-rect", &rect, &[path.to_str().unwrap()]), false);
    let rect_want = objects(run_entries_with("gpu-instanced-twin-rect", &rect, &[twin_path.to_str().unwrap()]), true);
    assert_eq!(rect_got, rect_want);
    assert!(rect_got.len() >= 12, "{rect_got:?}");
}

/// The scene node of the file node named "Stack".
fn stack_node(scene: &Scene) -> usize {
    scene.nodes.iter().position(|n| n.name.as_deref() == Some("Stack")).unwrap()
}

#[test]
fn malformed_gpu_instancing_is_refused_by_name() {
    let (file, _) = gpu_instanced_scene(false);
    let (json, bin) = file.to_gltf("instanced.bin");
    std::fs::write(tmp("instanced.bin"), &bin).unwrap();
    let doc: Value = serde_json::from_str(&json).unwrap();
    let stack = doc["nodes"].as_array().unwrap().iter().position(|n| n["name"] == "Stack").unwrap();
    let attributes = doc["nodes"][stack]["extensions"]["EXT_mesh_gpu_instancing"]["attributes"].clone();
    let (t, r) = (attributes["TRANSLATION"].as_u64().unwrap() as usize, attributes["ROTATION"].as_u64().unwrap() as usize);
    // Each case: a JSON pointer into the file, the value written there, and what the message names.
    let ext = format!("/nodes/{stack}/extensions/EXT_mesh_gpu_instancing/attributes");
    let cases = [
        (format!("/accessors/{t}/count"), json!(11), "hold 11 and 12 instances"),
        (format!("/accessors/{r}/type"), json!("VEC3"), "ROTATION"),
        (format!("{ext}/SCALE"), json!(999), "accessor 999"),
        (ext.clone(), json!({}), "names none"),
        (format!("/nodes/{stack}/skin"), json!(0), "skinned and instanced"),
    ];
    for (pointer, value, expected) in cases {
        let mut d = doc.clone();
        d["skins"] = json!([{"joints": [stack]}]);
        match d.pointer_mut(&pointer) {
            Some(v) => *v = value,
            None => d["nodes"][stack]["skin"] = value,
        }
        let path = tmp("instancing-damaged.gltf");
        std::fs::write(&path, d.to_string()).unwrap();
        let err = viewer::gltf_load::load_path(&path).map(|_| ()).expect_err(&pointer).to_string();
        assert!(err.contains(&format!("node {stack}")) && err.contains(expected), "{pointer}: {err}");
    }
    // Undeclared, it is not read (as glTF asks): the node draws its mesh once, at the node.
    let mut d = doc.clone();
    d.as_object_mut().unwrap().remove("extensionsUsed");
    let path = tmp("instancing-undeclared.gltf");
    std::fs::write(&path, d.to_string()).unwrap();
    let scene = viewer::gltf_load::load_path(&path).unwrap();
    assert!(scene.nodes.iter().all(|n| n.gpu_instance.is_none()) && scene.nodes[stack_node(&scene)].mesh.is_some());
    // Declared as required, it is read, not refused.
    let mut d = doc.clone();
    d["extensionsRequired"] = json!(["EXT_mesh_gpu_instancing"]);
    let path = tmp("instancing-required.gltf");
    std::fs::write(&path, d.to_string()).unwrap();
    let scene = viewer::gltf_load::load_path(&path).unwrap();
    assert_eq!(scene.nodes.iter().filter(|n| n.gpu_instance.is_some()).count(), 15);
}
