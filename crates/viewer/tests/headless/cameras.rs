//! glTF cameras: written files seen through camera nodes (scaled, tiny znear, aspect ratio,
//! orthographic) against the oracle, and a view the camera cannot fill refused.

use super::*;

#[test]
fn written_gltf_and_glb_files_pick_like_the_oracle() {
    let b = written_scene();
    let glb = tmp("written.glb");
    std::fs::write(&glb, b.to_glb()).unwrap();
    let (json, bin) = b.to_gltf("written.bin");
    let gltf = tmp("written.gltf");
    std::fs::write(&gltf, json).unwrap();
    std::fs::write(tmp("written.bin"), bin).unwrap();
    let (w, h) = (240, 160);
    for path in [&glb, &gltf] {
        let scene = viewer::gltf_load::load_path(path).unwrap();
        assert!(scene.camera.is_some(), "the file's camera is used");
        assert_eq!(scene.nodes.iter().filter(|n| n.name.as_deref().is_some_and(|s| s.starts_with("Field "))).count(), 12);
        let (agree, hits) = check_scene_against_oracle(Some(path), &scene, &random_pixels(2, 250, w, h), w, h, &[]);
        eprintln!("{}: {agree} picks agree with the oracle, {hits} hits", path.display());
        assert!(agree > 120 && hits > 60, "{agree} / {hits}");
    }
}

/// glTF derives the view from the camera node's transform with its scale ignored: a scaled
/// camera node (here non-uniformly, in its own transform) picks as the unscaled one does.
#[test]
fn a_camera_nodes_scale_does_not_change_the_view() {
    let (w, h) = (200, 140);
    let pixels = random_pixels(8, 200, w, h);
    let eye = glam::camera::rh::view::look_at_mat4(Vec3::new(0.5, 3.0, 5.0), Vec3::new(0.0, 0.0, -0.5), Vec3::Y).inverse();
    let records = |camera: Mat4, name: &str| {
        let path = tmp(name);
        std::fs::write(&path, written_scene_seen_from(camera).to_glb()).unwrap();
        headless_picks(Some(&path), &pixels, w, h, &[])
    };
    let plain = records(eye, "camera-plain.glb");
    let scaled = records(eye * Mat4::from_scale(Vec3::new(2.0, 0.5, 3.0)), "camera-scaled.glb");
    let (mut same, mut hits) = (0, 0);
    for (a, b) in plain.iter().zip(&scaled) {
        if a["node"] == b["node"] {
            same += 1;
            if let (Some(da), Some(db)) = (a["distance"].as_f64(), b["distance"].as_f64()) {
                hits += 1;
                assert!((da - db).abs() <= 1e-4 * da, "{a} vs {b}");
            }
        }
    }
    assert!(same >= pixels.len() - 2 && hits > 60, "{same} of {} picks agree, {hits} hits", pixels.len());
}

/// A camera with a tiny znear (and no zfar, or a huge one) still draws and picks
/// the nearer of two boxes 1 unit apart at every pixel: the viewer's reversed depth keeps its
/// precision where a standard projection put both at the same depth values just below 1 (the
/// file listing the far box first, the far box won, and at znear 1e-7 nothing was drawn).
#[test]
fn a_tiny_znear_picks_the_nearest_surface_like_the_oracle() {
    for (znear, zfar) in [(1e-7f32, None), (1e-6, None), (1e-4, None), (1e-6, Some(1e9))] {
        let mut b = GltfBuilder::new();
        let cube = b.add_mesh("Cube", &[(&shapes::cuboid(Vec3::splat(0.5), [0.7, 0.7, 0.7, 1.0]), IndexStorage::U16)]);
        let far = b.add_node("Far", Some(cube), Mat4::from_translation(Vec3::new(0.0, 0.0, -2.0)) * Mat4::from_scale(Vec3::new(3.0, 3.0, 1.0)), &[]);
        b.add_root(far);
        let near = b.add_node("Near", Some(cube), Mat4::from_translation(Vec3::new(0.2, 0.0, -1.0)), &[]);
        b.add_root(near);
        let cam = b.add_camera_node("Cam", 0.9, znear, zfar, Mat4::from_translation(Vec3::new(0.0, 0.0, 1.5)));
        b.add_root(cam);
        let path = tmp(&format!("tiny-znear-{znear}-{zfar:?}.glb"));
        std::fs::write(&path, b.to_glb()).unwrap();
        let scene = viewer::gltf_load::load_path(&path).unwrap();
        let (w, h) = (120, 90);
        let mut pixels = random_pixels(31, 150, w, h);
        pixels.push(UVec2::new(w / 2 + 4, h / 2));
        let (agree, hits) = check_scene_against_oracle(Some(&path), &scene, &pixels, w, h, &[]);
        // Every unambiguous pixel agrees (checked inside); edges and silhouettes are skipped.
        assert!(agree > 100 && hits > 60, "znear {znear}: {agree} of {} agree, {hits} hits", pixels.len());
        let centre = headless_picks(Some(&path), &[UVec2::new(w / 2 + 4, h / 2)], w, h, &[]);
        assert_eq!(centre[0]["node_name"], "Near", "znear {znear}: {}", centre[0]);
    }
}

/// A camera's `aspectRatio`, where the file gives one, shapes the headless projection
/// whatever the view's size; without one the view's aspect is used.
#[test]
fn a_camera_aspect_ratio_is_used_where_the_file_gives_one() {
    let (json, bin) = written_scene().to_gltf("aspect.bin");
    std::fs::write(tmp("aspect.bin"), bin).unwrap();
    let mut doc: Value = serde_json::from_str(&json).unwrap();
    let load = |doc: &Value, name: &str| {
        let path = tmp(name);
        std::fs::write(&path, doc.to_string()).unwrap();
        viewer::gltf_load::load_path(&path).unwrap()
    };
    let x_scale = |scene: &Scene, view_aspect: f32| viewer::headless::headless_camera(scene, view_aspect).projection.x_axis.x;
    let plain = load(&doc, "aspect-none.gltf");
    let focal = 1.0 / (0.9f32 * 0.5).tan();
    assert!((x_scale(&plain, 1.5) - focal / 1.5).abs() < 1e-5, "no aspectRatio: the view's");
    doc["cameras"][0]["perspective"]["aspectRatio"] = serde_json::json!(2.0);
    let given = load(&doc, "aspect-two.gltf");
    for view_aspect in [1.0, 1.5, 3.0] {
        assert!((x_scale(&given, view_aspect) - focal / 2.0).abs() < 1e-5, "aspectRatio 2 at a view of {view_aspect}");
    }
}

#[test]
fn a_view_too_tall_for_the_scene_cameras_horizontal_field_is_refused() {
    // A quad filling a camera of yfov 1e-4 with no aspectRatio: the view's shape sets its
    // horizontal field, 1.2e-8 radians at 1x8192 (every pick missed there, unrefused).
    let mut b = GltfBuilder::new();
    let quad = b.add_mesh("Quad", &[(&shapes::plane(1.0, [1.0; 4]), IndexStorage::U16)]);
    let node = b.add_node("Quad", Some(quad), Mat4::from_rotation_x(std::f32::consts::FRAC_PI_2), &[]);
    b.add_root(node);
    let cam = b.add_camera_node("Cam", 1e-4, 0.1, None, Mat4::from_translation(Vec3::new(0.0, 0.0, 3.0)));
    b.add_root(cam);
    let glb = tmp("narrow-camera.glb");
    std::fs::write(&glb, b.to_glb()).unwrap();
    let picks = tmp("narrow-picks.json");
    std::fs::write(&picks, "[[0, 0], [32, 320], [63, 639]]").unwrap();
    let out = tmp("narrow-out.json");
    let args = |size| {
        vec![
            glb.to_str().unwrap().to_owned(),
            "--headless".into(),
            "--validation".into(),
            "--size".into(),
            size,
            "--pick-file".into(),
            picks.to_str().unwrap().to_owned(),
            "--json".into(),
            out.to_str().unwrap().to_owned(),
        ]
    };
    let run = viewer(&args("1x8192".into()).iter().map(String::as_str).collect::<Vec<_>>());
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("horizontal field"), "{}", run.stderr);
    // At a shape its field allows, the quad fills the view.
    let run = viewer(&args("64x640".into()).iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let records: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(records.iter().all(|r| r["node"] == json!(0)), "{records:?}");
}

#[test]
fn orthographic_cameras_pick_like_a_ray_caster_with_parallel_rays() {
    // An orthographic camera (CAD and architectural files): glTF's xmag and ymag stretched over
    // the view whatever its shape, parallel rays. The oracle's rays come from the test's own
    // projection (standard depth; glTF's x and y), not the viewer's.
    let eye = glam::camera::rh::view::look_at_mat4(Vec3::new(1.5, 4.0, 5.0), Vec3::new(0.0, 0.0, -0.5), Vec3::Y).inverse();
    let (xmag, ymag, znear, zfar) = (3.2, 2.0, 0.5, 30.0);
    let mut b = written_scene_seen_from(eye);
    // The perspective camera is left out of the scene: only the orthographic one is seen.
    b.clear_roots_but(&["Parent", "Ground", "Field"]);
    let ortho = b.add_orthographic_camera_node("Ortho", (xmag, ymag), znear, zfar, eye);
    b.add_root(ortho);
    let path = tmp("orthographic.glb");
    std::fs::write(&path, b.to_glb()).unwrap();
    let scene = viewer::gltf_load::load_path(&path).unwrap();
    assert_eq!(scene.camera.map(|c| c.lens), Some(viewer::scene::Lens::Orthographic { xmag, ymag }));
    // 200x100: a view wider than xmag / ymag, so the picture is stretched as glTF's matrix says.
    let (w, h) = (200, 100);
    let projection = glam::camera::rh::proj::vulkan::orthographic(-xmag, xmag, -ymag, ymag, znear, zfar);
    let cam = picking_vk_host::CameraMatrices { view: eye.inverse(), projection, eye: eye.w_axis.truncate() };
    let pixels = random_pixels(21, 400, w, h);
    let records = headless_picks(Some(&path), &pixels, w, h, &[]);
    let (agree, hits) = check_records_against(&SceneOracle::seen_by(&scene, w, h, true, cam), &scene, &records, &pixels);
    eprintln!("orthographic: {agree} unambiguous picks agree with the oracle, {hits} hits");
    assert!(agree > 280 && hits > 150, "{agree} / {hits}");
    // Its near plane at the eye (znear 0, which leaves the projection's depth direction to the
    // request's word), and a far plane 1e8 away (linear depth, held precise by standard depth):
    // both once picked the farthest surface.
    for (near, far) in [(0.0, zfar), (znear, 1e8)] {
        let mut b = written_scene_seen_from(eye);
        b.clear_roots_but(&["Parent", "Ground", "Field"]);
        let ortho = b.add_orthographic_camera_node("Ortho", (xmag, ymag), near, far, eye);
        b.add_root(ortho);
        let path = tmp(&format!("orthographic-{near}-{far}.glb"));
        std::fs::write(&path, b.to_glb()).unwrap();
        let scene = viewer::gltf_load::load_path(&path).unwrap();
        let projection = glam::camera::rh::proj::vulkan::orthographic(-xmag, xmag, -ymag, ymag, near, far);
        let cam = picking_vk_host::CameraMatrices { view: eye.inverse(), projection, eye: eye.w_axis.truncate() };
        let records = headless_picks(Some(&path), &pixels, w, h, &[]);
        let (agree, hits) = check_records_against(&SceneOracle::seen_by(&scene, w, h, true, cam), &scene, &records, &pixels);
        assert!(agree > 280 && hits > 150, "znear {near}, zfar {far}: {agree} / {hits}");
    }
    // A perspective camera anywhere in the file is the view, before an orthographic one (met
    // first, and mirrored, which would be refused were it the view).
    let mut b = written_scene_seen_from(eye);
    let ortho = b.add_orthographic_camera_node("Ortho", (xmag, -ymag), znear, zfar, eye);
    b.add_root_first(ortho);
    std::fs::write(&path, b.to_glb()).unwrap();
    let scene = viewer::gltf_load::load_path(&path).unwrap();
    assert!(matches!(scene.camera.map(|c| c.lens), Some(viewer::scene::Lens::Perspective { .. })));
    // Magnifications of 0 or below, and a far plane before the near one, are refused by name.
    for (mags, near, far, expected) in [
        ((0.0, 1.0), 0.1, 10.0, "xmag 0"),
        ((2.0, -1.0), 0.1, 10.0, "mirror the view"),
        ((2.0, 1.0), 5.0, 4.0, "zfar 4"),
        ((2.0, 1.0), 0.1, 3e38, "depth buffer cannot use"),
    ] {
        let mut b = written_scene_seen_from(eye);
        b.clear_roots_but(&["Parent", "Ground", "Field"]);
        let ortho = b.add_orthographic_camera_node("Ortho", mags, near, far, eye);
        b.add_root(ortho);
        std::fs::write(&path, b.to_glb()).unwrap();
        let err = viewer::gltf_load::load_path(&path).map(|_| ()).expect_err(expected).to_string();
        assert!(err.contains(expected), "{expected}: {err}");
    }
}
