//! Skins and morphs posed at a time, against CPU deformation: mirrored parents, poses past
//! f32 refused, shared samplers, a skinned scene far from the origin.

use super::*;

/// The grid the deformed scenes morph (positions through `place`), a bump and a lift as
/// its targets; returns its mesh.
fn add_morphed_grid(b: &mut GltfBuilder, place: impl Fn(Vec3) -> Vec3) -> usize {
    let mut grid = shapes::plane(1.0, [0.3, 0.8, 0.4, 1.0]);
    grid.positions.iter_mut().for_each(|p| *p = place(*p));
    let bump: Vec<Vec3> = grid.positions.iter().map(|p| Vec3::new(0.0, 0.6 * (1.0 - p.x.abs()) * (1.0 - p.z.abs()), 0.0)).collect();
    grid.morph_targets = vec![bump, vec![Vec3::new(0.0, 0.0, 0.3); grid.positions.len()]];
    b.add_mesh("Grid", &[(&grid, IndexStorage::U16)])
}

/// The deformed scenes' "Bend" animation over two seconds: tube joints 1.. turning about Z
/// (keys 0, 0.5, -0.4 rad, scaled per joint), the grid's weights from rest to
/// (1, 0.5) to (-0.5, 1).
fn add_bend_animation(b: &mut GltfBuilder, joints: &[usize], grid_node: usize) {
    b.set_weights(grid_node, &[0.0, 0.0]);
    let times = [0.0, 1.0, 2.0];
    let rotations: Vec<Vec<f32>> =
        (1..5).map(|k| [0.0f32, 0.5, -0.4].iter().flat_map(|a| glam::Quat::from_rotation_z(a * (1.0 + 0.1 * k as f32)).to_array()).collect()).collect();
    let mut channels: Vec<viewer::gltf_write::ChannelSpec<'_>> = rotations
        .iter()
        .enumerate()
        .map(|(i, v)| viewer::gltf_write::ChannelSpec { node: joints[i + 1], path: "rotation", interpolation: "LINEAR", times: &times, values: v })
        .collect();
    let weights = [0.0, 0.0, 1.0, 0.5, -0.5, 1.0];
    channels.push(viewer::gltf_write::ChannelSpec { node: grid_node, path: "weights", interpolation: "LINEAR", times: &times, values: &weights });
    b.add_animation("Bend", &channels);
}

/// A skinned tube bent by an animation of its joints, and a grid morphed by an animation of
/// its weights, with a camera on both.
fn deformed_scene() -> GltfBuilder {
    let mut b = GltfBuilder::new();
    let tube = b.add_mesh("Tube", &[(&viewer::default_scene::skinned_tube(2.0, 0.25, 5, [0.6, 0.4, 0.9, 1.0]), IndexStorage::U32)]);
    let (joints, inverse_bind) = viewer::default_scene::tube_joints(&mut b, "Tube", Vec3::new(-0.8, -1.0, 0.0), 2.0, &[0.1; 5]);
    let tube_node = b.add_node("Tube", Some(tube), Mat4::from_translation(Vec3::new(50.0, 0.0, 0.0)), &[]);
    b.add_skin(tube_node, &joints, &inverse_bind);
    let grid_mesh = add_morphed_grid(&mut b, |p| p);
    let grid_node = b.add_node("Grid", Some(grid_mesh), Mat4::from_translation(Vec3::new(1.0, -0.3, 0.0)) * Mat4::from_rotation_x(1.2), &[]);
    add_bend_animation(&mut b, &joints, grid_node);
    for r in [joints[0], tube_node, grid_node] {
        b.add_root(r);
    }
    let eye = Vec3::new(0.3, 0.5, 4.5);
    let camera = glam::camera::rh::view::look_at_mat4(eye, Vec3::new(0.2, 0.0, 0.0), Vec3::Y).inverse();
    let cam = b.add_camera_node("Camera", 0.8, 0.1, Some(50.0), camera);
    b.add_root(cam);
    b
}

#[test]
fn skinned_and_morphed_scenes_posed_at_a_time_pick_like_cpu_deformation() {
    let glb = tmp("deformed.glb");
    std::fs::write(&glb, deformed_scene().to_glb()).unwrap();
    let (w, h) = (320, 240);
    let mut total = (0, 0, 0);
    for time in [0.5f32, 1.0, 1.7] {
        let mut scene = viewer::load_scene(Some(&glb)).unwrap();
        viewer::animation::pose(&mut scene, Some(time));
        // The joints' worlds, composed here from the keys written above (slerp between them),
        // against the viewer's own animation of them.
        let key = |k: usize| {
            let angles = [0.0f32, 0.5, -0.4];
            let (i, f) = if time < 1.0 { (0, time) } else { (1, time - 1.0) };
            let q = |a: f32| glam::Quat::from_rotation_z(a * (1.0 + 0.1 * k as f32)).as_dquat();
            q(angles[i]).slerp(q(angles[i + 1]), f64::from(f))
        };
        let length = 2.0 / 5.0;
        let mut world = glam::DMat4::from_rotation_translation(glam::Quat::from_rotation_z(0.1).as_dquat(), glam::DVec3::new(-0.8, -1.0, 0.0));
        let skin = &scene.skins[0];
        for k in 0..5 {
            if k > 0 {
                world *= glam::DMat4::from_rotation_translation(key(k), glam::DVec3::new(0.0, length, 0.0));
            }
            let want = world * glam::DMat4::from_translation(-glam::DVec3::new(0.0, length * k as f64, 0.0));
            assert!(skin.palette[k].as_dmat4().abs_diff_eq(want, 1e-5), "time {time}, joint {k}: {:?} vs {want:?}", skin.palette[k]);
        }
        let grid = scene.nodes.iter().find(|n| n.name.as_deref() == Some("Grid")).unwrap();
        let s = if time < 1.0 { time } else { time - 1.0 };
        let (a, b) = if time < 1.0 { ([0.0, 0.0], [1.0, 0.5]) } else { ([1.0, 0.5], [-0.5, 1.0]) };
        for t in 0..2 {
            assert!((grid.weights[t] - (a[t] + (b[t] - a[t]) * s)).abs() < 1e-6, "time {time}: weights {:?}", grid.weights);
        }
        let mut pixels = random_pixels(40 + time.to_bits() as u64, 350, w, h);
        pixels.retain(|p| p.x > 20);
        let (agree, hits) = check_scene_against_oracle(Some(&glb), &scene, &pixels, w, h, &["--time", &time.to_string()]);
        // The same pixels against the rest pose: the pose must matter.
        let rest = viewer::load_scene(Some(&glb)).unwrap();
        let rest_oracle = SceneOracle::new(&rest, w, h);
        let posed_oracle = SceneOracle::new(&scene, w, h);
        let moved = pixels.iter().filter(|p| {
            let (a, b) = (rest_oracle.pick(**p), posed_oracle.pick(**p));
            !a.ambiguous && !b.ambiguous && a.hit.map(|h| h.id) != b.hit.map(|h| h.id)
        });
        total = (total.0 + agree, total.1 + hits, total.2 + moved.count());
    }
    eprintln!(
        "deformed glTF: {} unambiguous picks agree with CPU skinning + morphing + ray oracle, {} hits, {} differ from the rest pose",
        total.0, total.1, total.2
    );
    assert!(total.0 > 700 && total.1 > 150 && total.2 > 30, "{total:?}");
}

/// A single-sided skinned tube whose node, or whose node's parent, mirrors (scale -1 in x):
/// glTF ignores a skinned node's transform, so its faces wind as the joints place them and
/// every pick equals the unmirrored file's. Before, culling flipped with the node and picks
/// saw the tube's inside (the far wall, a radius further off).
#[test]
fn a_mirrored_transform_above_a_skinned_mesh_does_not_flip_its_faces() {
    let build = |node_scale: Vec3, parent_scale: Vec3| {
        let mut b = GltfBuilder::new();
        let mut tube = viewer::default_scene::skinned_tube(2.0, 0.4, 5, [0.6, 0.4, 0.9, 1.0]);
        tube.single_sided = true;
        let mesh = b.add_mesh("Tube", &[(&tube, IndexStorage::U32)]);
        let (joints, inverse_bind) = viewer::default_scene::tube_joints(&mut b, "Tube", Vec3::new(0.0, -1.0, 0.0), 2.0, &[0.0; 5]);
        let tube_node = b.add_node("Tube", Some(mesh), Mat4::from_scale(node_scale), &[]);
        b.add_skin(tube_node, &joints, &inverse_bind);
        let holder = b.add_node("Holder", None, Mat4::from_scale(parent_scale), &[tube_node]);
        b.add_root(joints[0]);
        b.add_root(holder);
        let camera = glam::camera::rh::view::look_at_mat4(Vec3::new(0.3, 0.2, 4.0), Vec3::ZERO, Vec3::Y).inverse();
        let cam = b.add_camera_node("Camera", 0.8, 0.1, Some(50.0), camera);
        b.add_root(cam);
        b.to_glb()
    };
    let pixels: Vec<UVec2> = (0..12).flat_map(|i| (0..6).map(move |j| UVec2::new(40 + 8 * i, 20 + 16 * j))).collect();
    let picks = |name: &str, glb: Vec<u8>| {
        let path = tmp(name);
        std::fs::write(&path, glb).unwrap();
        headless_picks(Some(&path), &pixels, 192, 144, &[])
    };
    let plain = picks("tube-plain.glb", build(Vec3::ONE, Vec3::ONE));
    let hits = plain.iter().filter(|r| r["hit"] == true).count();
    assert!(hits > 20, "the tube fills part of the view: {hits} hits");
    for (name, node, parent) in
        [("tube-node-mirrored.glb", Vec3::new(-1.0, 1.0, 1.0), Vec3::ONE), ("tube-parent-mirrored.glb", Vec3::ONE, Vec3::new(-1.0, 1.0, 1.0))]
    {
        let mirrored = picks(name, build(node, parent));
        for ((a, b), p) in plain.iter().zip(&mirrored).zip(&pixels) {
            assert_eq!(a["node_name"], b["node_name"], "{name} pixel {p}");
            if let (Some(x), Some(y)) = (a["distance"].as_f64(), b["distance"].as_f64()) {
                assert!((x - y).abs() < 1e-4, "{name} pixel {p}: distance {y}, unmirrored {x}");
            }
        }
    }
}

/// An animation that flings the tube's root joint to 3e38 (a finite f32) by t = 1: at rest
/// the scene loads and picks, and `--time 0.7`, where the skinned tube's vertices would leave
/// f32's range and vanish from picture and picks, is refused by name.
#[test]
fn a_time_whose_pose_carries_a_skin_past_f32_is_refused() {
    let mut b = deformed_scene();
    let (json, _) = b.to_gltf("unused.bin");
    let doc: Value = serde_json::from_str(&json).unwrap();
    let root_joint = doc["skins"][0]["joints"][0].as_u64().unwrap() as usize;
    let times = [0.0, 1.0];
    let values = [-0.8, -1.0, 0.0, 3.0e38, -1.0, 0.0];
    let fling = viewer::gltf_write::ChannelSpec { node: root_joint, path: "translation", interpolation: "LINEAR", times: &times, values: &values };
    b.add_animation("Fling", &[fling]);
    let glb = tmp("fling.glb");
    std::fs::write(&glb, b.to_glb()).unwrap();
    let picks = tmp("fling-picks.json");
    std::fs::write(&picks, "[[160, 120]]").unwrap();
    let out = tmp("fling-out.json");
    let run = |time: &str| {
        viewer(&[
            glb.to_str().unwrap(),
            "--headless",
            "--size",
            "320x240",
            "--time",
            time,
            "--pick-file",
            picks.to_str().unwrap(),
            "--json",
            out.to_str().unwrap(),
        ])
    };
    let rest = run("0");
    assert_eq!(rest.code, 0, "at rest the scene picks: {}", rest.stderr);
    let flung = run("0.7");
    assert!(flung.code == 1 && flung.stderr.contains("--time 0.7") && flung.stderr.contains("past f32's range"), "{}", flung.stderr);
}

/// One sampler driving the rotation of every tube joint (glTF lets channels share a
/// sampler): its keys are read once and held once, however many channels use it.
#[test]
fn channels_sharing_a_sampler_share_its_keys() {
    let (json, bin) = deformed_scene().to_gltf("shared-sampler.bin");
    let mut doc: Value = serde_json::from_str(&json).unwrap();
    let channels = doc["animations"][0]["channels"].as_array_mut().unwrap();
    let rotations: Vec<usize> = (0..channels.len()).filter(|&c| channels[c]["target"]["path"] == "rotation").collect();
    for &c in &rotations {
        channels[c]["sampler"] = serde_json::json!(0);
    }
    std::fs::write(tmp("shared-sampler.bin"), bin).unwrap();
    let path = tmp("shared-sampler.gltf");
    std::fs::write(&path, doc.to_string()).unwrap();
    let scene = viewer::load_scene(Some(&path)).unwrap();
    let rotating: Vec<&viewer::scene::Channel> = scene.animations[0].channels.iter().filter(|c| c.property == viewer::scene::Property::Rotation).collect();
    assert_eq!(rotating.len(), rotations.len());
    assert!(rotating.len() >= 4);
    for c in &rotating[1..] {
        assert!(std::sync::Arc::ptr_eq(&c.times, &rotating[0].times) && std::sync::Arc::ptr_eq(&c.values, &rotating[0].values));
    }
}

/// `deformed_scene`'s skinned tube and morphed grid, every coordinate the file stores a
/// multiple of 1/16 (so exact in f32 a million units out too), the whole scene moved by
/// `offset`: vertices, joints, inverse binds, the grid's node and the camera.
fn snapped_deformed_scene(offset: Vec3) -> GltfBuilder {
    let mut b = GltfBuilder::new();
    let snap = |v: Vec3| (v * 16.0).round() / 16.0;
    let mut tube = viewer::default_scene::skinned_tube(2.5, 0.25, 5, [0.6, 0.4, 0.9, 1.0]);
    tube.positions.iter_mut().for_each(|p| *p = snap(*p) + offset);
    let tube_mesh = b.add_mesh("Tube", &[(&tube, IndexStorage::U32)]);
    let (joints, inverse_bind) = viewer::default_scene::tube_joints(&mut b, "Tube", Vec3::new(-0.75, -1.0, 0.0) + offset, 2.5, &[0.1; 5]);
    // The inverse binds take the moved vertices back to each joint.
    let inverse_bind: Vec<Mat4> = inverse_bind.iter().map(|m| *m * Mat4::from_translation(-offset)).collect();
    let tube_node = b.add_node("Tube", Some(tube_mesh), Mat4::IDENTITY, &[]);
    b.add_skin(tube_node, &joints, &inverse_bind);
    let grid_mesh = add_morphed_grid(&mut b, snap);
    let grid_node = b.add_node("Grid", Some(grid_mesh), Mat4::from_translation(Vec3::new(1.0, -0.25, 0.0) + offset) * Mat4::from_rotation_x(1.2), &[]);
    add_bend_animation(&mut b, &joints, grid_node);
    for r in [joints[0], tube_node, grid_node] {
        b.add_root(r);
    }
    let view = glam::camera::rh::view::look_at_mat4(Vec3::new(0.25, 0.5, 5.0), Vec3::new(0.25, 0.0, 0.0), Vec3::Y);
    let cam = b.add_camera_node("Camera", 0.8, 0.1, Some(50.0), Mat4::from_translation(offset) * view.inverse());
    b.add_root(cam);
    b
}

#[test]
fn a_skinned_scene_a_million_units_out_picks_like_the_same_scene_at_the_origin() {
    // Integer offsets: every snapped coordinate stays exact in f32 out there.
    let offset = Vec3::new(1.0e6, -2.5e5, 6.0e5);
    let (near, far) = (tmp("snapped-near.glb"), tmp("snapped-far.glb"));
    std::fs::write(&near, snapped_deformed_scene(Vec3::ZERO).to_glb()).unwrap();
    std::fs::write(&far, snapped_deformed_scene(offset).to_glb()).unwrap();
    // Large enough that the tube's facets are several pixels across (the oracle calls a pixel
    // within one of its triangle's edges ambiguous).
    let (w, h) = (640, 480);
    let args = ["--time", "1.3"];
    let mut scene = viewer::load_scene(Some(&near)).unwrap();
    viewer::animation::pose(&mut scene, Some(1.3));
    let far_scene = viewer::load_scene(Some(&far)).unwrap();
    assert_ne!(far_scene.origin, glam::DVec3::ZERO, "the far scene is rebased");
    // Most pixels over the tube's part of the view (its left third), some anywhere.
    let mut pixels: Vec<UVec2> = random_pixels(1_000_000, 400, 220, 270).into_iter().map(|p| p + UVec2::new(30, 100)).collect();
    pixels.extend(random_pixels(2_000_000, 150, w, h));
    // The scene at the origin against the ray oracle; then the far one against the same
    // oracle, moved: the file's own f32 values are the truth, so the picks must agree.
    let (near_agree, near_hits) = check_scene_against_oracle(Some(&near), &scene, &pixels, w, h, &args);
    let oracle = SceneOracle::new(&scene, w, h);
    let (mut agree, mut hits, mut on_tube) = (0, 0, 0);
    for (r, p) in headless_picks(Some(&far), &pixels, w, h, &args).iter().zip(&pixels) {
        let want = oracle.pick(*p);
        if want.ambiguous {
            continue;
        }
        assert_eq!(r["node"].as_u64(), want.hit.map(|h| h.id - 1), "pixel {p}: far viewer says {r}, oracle {:?}", want.hit);
        if let Some(hw) = want.hit {
            assert_hit_at(r, hw.distance, hw.point + offset.as_dvec3(), &format!("pixel {p}"));
            hits += 1;
            on_tube += usize::from(r["node_name"].as_str() == Some("Tube"));
        }
        agree += 1;
    }
    eprintln!(
        "far-off skinned scene: {agree} unambiguous picks agree with the scene at the origin ({near_agree} there), {hits} hits, {on_tube} on the skinned tube"
    );
    assert!(agree > 400 && hits > 70 && on_tube > 40 && near_hits == hits, "{agree} / {hits} / {on_tube} / {near_hits}");
}
