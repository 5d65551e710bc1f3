//! Georeferenced scenes: a random scene moved about 1e6 away (camera included), either by a
//! root node's translation or baked into the vertex positions, picked by the headless viewer
//! and checked against an f64 ray caster that takes the file's float32 values as the truth.

use glam::{DMat4, DVec3, Mat4, UVec2, Vec3};
use picking_vk_host::{shapes, Primitive};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use viewer::gltf_write::{GltfBuilder, IndexStorage};

const W: u32 = 240;
const H: u32 = 160;
const YFOV: f32 = 0.9;
const ZNEAR: f32 = 0.1;

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("picking-vk-large-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A triangle of the oracle's scene in f64 world coordinates, with its glTF node.
struct Tri {
    node: usize,
    p: [DVec3; 3],
}

/// The nearest triangle along a ray (Möller-Trumbore in f64): (node, distance).
fn cast(tris: &[Tri], origin: DVec3, dir: DVec3) -> Option<(usize, f64)> {
    let mut best: Option<(usize, f64)> = None;
    for t in tris {
        let (e1, e2) = (t.p[1] - t.p[0], t.p[2] - t.p[0]);
        let h = dir.cross(e2);
        let a = e1.dot(h);
        if a.abs() < 1e-18 {
            continue;
        }
        let s = origin - t.p[0];
        let u = s.dot(h) / a;
        let q = s.cross(e1);
        let v = dir.dot(q) / a;
        let d = e2.dot(q) / a;
        if (0.0..=1.0).contains(&u) && v >= 0.0 && u + v <= 1.0 && d > 0.0 && best.is_none_or(|(_, bd)| d < bd) {
            best = Some((t.node, d));
        }
    }
    best
}

/// The ray of pixel `(x, y)` (fractional) from a camera at `camera` (f64 world).
fn pixel_ray(camera: &DMat4, x: f64, y: f64) -> (DVec3, DVec3) {
    let t = (f64::from(YFOV) * 0.5).tan();
    let aspect = f64::from(W) / f64::from(H);
    let ndc = (x / f64::from(W) * 2.0 - 1.0, y / f64::from(H) * 2.0 - 1.0);
    let local = DVec3::new(ndc.0 * t * aspect, -ndc.1 * t, -1.0);
    (camera.transform_point3(DVec3::ZERO), camera.transform_vector3(local).normalize())
}

/// How the ground of [`scene`] is made: two triangles of half-size `half`, their vertices
/// moved by `shift`, turned about the x axis by `tilt` radians about the scene's centre.
#[derive(Clone, Copy)]
struct Ground {
    half: f32,
    shift: Vec3,
    tilt: f32,
}

const SMALL_GROUND: Ground = Ground { half: 6.0, shift: Vec3::ZERO, tilt: 0.0 };

/// A random scene of boxes and spheres over a ground plane, moved by `offset` either in a
/// root node (`baked == false`) or in the vertex positions, seen by a camera with far plane
/// `zfar`. Returns the file and the oracle's triangles and camera, composed in f64 from the
/// same float32 values the file holds.
fn scene(seed: u64, offset: DVec3, baked: bool, ground: Ground, zfar: Option<f32>) -> (Vec<u8>, Vec<Tri>, DMat4) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let offset32 = offset.as_vec3();
    let shift = |p: &Primitive| {
        let mut p = p.clone();
        if baked {
            p.positions.iter_mut().for_each(|v| *v += offset32);
        }
        p
    };
    let mut b = GltfBuilder::new();
    let mut tris = vec![];
    let mut nodes = vec![];
    // The root that carries the offset (identity when the offset is baked into positions).
    let root_local = if baked { Mat4::IDENTITY } else { Mat4::from_translation(offset32) };
    let root_world = root_local.as_dmat4();
    for i in 0..9 {
        let prim = if i == 0 {
            let mut plane = shapes::plane(ground.half, [0.5; 4]);
            let turn = Mat4::from_rotation_x(ground.tilt);
            plane.positions.iter_mut().for_each(|p| *p = turn.transform_point3(*p + ground.shift));
            plane
        } else if rng.bool() {
            shapes::cuboid(Vec3::new(rng.f32() * 0.5 + 0.2, rng.f32() * 0.5 + 0.2, rng.f32() * 0.5 + 0.2), [0.8; 4])
        } else {
            shapes::sphere(rng.f32() * 0.4 + 0.3, 10, 14, [0.6; 4])
        };
        let prim = shift(&prim);
        let local = if i == 0 {
            Mat4::IDENTITY
        } else {
            Mat4::from_translation(Vec3::new(rng.f32() * 6.0 - 3.0, rng.f32() * 1.2 + 0.3, rng.f32() * 6.0 - 4.0)) * Mat4::from_rotation_y(rng.f32() * 3.0)
        };
        let mesh = b.add_mesh(&format!("M{i}"), &[(&prim, IndexStorage::U32)]);
        let node = b.add_node(&format!("N{i}"), Some(mesh), local, &[]);
        nodes.push(node);
        let world = root_world * local.as_dmat4();
        for t in 0..prim.triangle_count() {
            let p = prim.triangle(t).map(|k| world.transform_point3(prim.positions[k as usize].as_dvec3()));
            tris.push(Tri { node, p });
        }
    }
    let eye = Vec3::new(0.4, 3.5, 6.0);
    let cam_local = glam::camera::rh::view::look_at_mat4(eye, Vec3::new(0.0, 0.5, -0.5), Vec3::Y).inverse();
    // The camera moves with the scene: under the root, or by its own translation when baked.
    let cam_local = if baked { Mat4::from_translation(offset32) * cam_local } else { cam_local };
    let camera = b.add_camera_node("Cam", YFOV, ZNEAR, zfar, cam_local);
    nodes.push(camera);
    let root = b.add_node("Root", None, root_local, &nodes);
    b.add_root(root);
    let camera_world = root_world * cam_local.as_dmat4();
    (b.to_glb(), tris, camera_world)
}

/// Picks random pixels through the viewer and compares them with the f64 oracle: returns
/// (unambiguous pixels, agreeing, worst relative distance error).
fn agreement(name: &str, glb: &[u8], tris: &[Tri], camera: &DMat4, seed: u64) -> (usize, usize, f64) {
    let path = tmp(&format!("{name}.glb"));
    std::fs::write(&path, glb).unwrap();
    let mut rng = fastrand::Rng::with_seed(seed);
    let pixels: Vec<UVec2> = (0..300).map(|_| UVec2::new(rng.u32(..W), rng.u32(..H))).collect();
    let picks = tmp(&format!("{name}-picks.json"));
    std::fs::write(&picks, serde_json::to_string(&pixels.iter().map(|p| [p.x, p.y]).collect::<Vec<_>>()).unwrap()).unwrap();
    let out = tmp(&format!("{name}-out.json"));
    let size = format!("{W}x{H}");
    let run = Command::new(env!("CARGO_BIN_EXE_viewer"))
        .args([path.to_str().unwrap(), "--headless", "--validation", "--size", &size, "--pick-file", picks.to_str().unwrap(), "--json", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(run.status.success(), "{name}: {}", String::from_utf8_lossy(&run.stderr));
    let records: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let (mut unambiguous, mut agree, mut worst) = (0, 0, 0.0f64);
    for (r, p) in records.iter().zip(&pixels) {
        let (cx, cy) = (f64::from(p.x) + 0.5, f64::from(p.y) + 0.5);
        // Rays a twentieth of a pixel around the centre: edges and depth ties are ambiguous.
        let around: Vec<Option<usize>> = [(0.0, 0.0), (0.05, 0.0), (-0.05, 0.0), (0.0, 0.05), (0.0, -0.05)]
            .iter()
            .map(|(dx, dy)| cast(tris, pixel_ray(camera, cx + dx, cy + dy).0, pixel_ray(camera, cx + dx, cy + dy).1).map(|h| h.0))
            .collect();
        if around.iter().any(|a| *a != around[0]) {
            continue;
        }
        unambiguous += 1;
        let (origin, dir) = pixel_ray(camera, cx, cy);
        let want = cast(tris, origin, dir);
        let got = r["node"].as_u64().map(|n| n as usize);
        if got == want.map(|w| w.0) {
            agree += 1;
            if let Some((_, d)) = want {
                let distance = r["distance"].as_f64().unwrap();
                worst = worst.max((distance - d).abs() / d);
                let world: Vec<f64> = r["world"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
                let truth = origin + dir * d;
                assert!((DVec3::new(world[0], world[1], world[2]) - truth).length() < 1e-3 * d, "{name} pixel {p}: {world:?} vs {truth}");
            }
        } else {
            eprintln!("{name} pixel {p}: viewer {got:?}, oracle {want:?}");
        }
    }
    (unambiguous, agree, worst)
}

/// The record of pixel (32, 24) of a 64x48 headless run on `glb` (written as `name`.glb).
fn centre_pick(name: &str, glb: &[u8]) -> Value {
    let path = tmp(&format!("{name}.glb"));
    std::fs::write(&path, glb).unwrap();
    let picks = tmp(&format!("{name}-picks.json"));
    std::fs::write(&picks, "[[32, 24]]").unwrap();
    let out = tmp(&format!("{name}-out.json"));
    let run = Command::new(env!("CARGO_BIN_EXE_viewer"))
        .args([path.to_str().unwrap(), "--headless", "--size", "64x48", "--pick-file", picks.to_str().unwrap(), "--json", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(run.status.success(), "{name}: {}", String::from_utf8_lossy(&run.stderr));
    let mut records: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    records.remove(0)
}

#[test]
fn scenes_a_million_units_away_pick_like_an_f64_ray_caster() {
    for (seed, offset) in
        [(6, DVec3::new(1.0e5 + 0.37, -1.0e5, 1.0e5 + 0.11)), (7, DVec3::new(1.0e6 + 0.37, -2.5e5, 8.0e5 + 0.11)), (8, DVec3::new(-3.2e5, 1.0e5, -1.0e6))]
    {
        for baked in [false, true] {
            let name = format!("seed{seed}-{}", if baked { "baked" } else { "root" });
            let (glb, tris, camera) = scene(seed, offset, baked, SMALL_GROUND, Some(60.0));
            let (unambiguous, agree, worst) = agreement(&name, &glb, &tris, &camera, seed);
            eprintln!("{name}: {agree}/{unambiguous} unambiguous pixels agree with the f64 oracle; worst distance error {worst:.2e}");
            assert!(unambiguous > 200, "{name}: {unambiguous}");
            assert!(agree * 1000 >= unambiguous * 999, "{name}: {agree}/{unambiguous}");
            assert!(worst <= 1e-4, "{name}: distance relative error {worst}");
        }
    }
}

/// The same scenes on a ground two million units across (two triangles), to the horizon (no
/// far plane): drawn as the file gives it, f32's error at its far corners moved the whole plane
/// by 0.03 units under a camera 3.5 above it (1% of the distance; boxes on it lost their bases).
/// The loader splits it near the camera (`gltf_load::refine`). Also tilted, with the camera
/// near its corner, 9e5 from its centre: re-centred on its middle, the ground's vertices near
/// the camera kept f32 steps of 0.06 there.
#[test]
fn a_ground_two_million_units_across_picks_like_an_f64_ray_caster() {
    let centred = Ground { half: 1.0e6, shift: Vec3::ZERO, tilt: 0.0 };
    let cornered = Ground { half: 1.0e6, shift: Vec3::new(-9.0e5, 0.0, -9.0e5), tilt: 0.02 };
    for (seed, offset, ground) in [(9, DVec3::ZERO, centred), (10, DVec3::new(1.0e6 + 0.37, -2.5e5, 8.0e5 + 0.11), centred), (11, DVec3::ZERO, cornered)] {
        let name = format!("ground{seed}");
        let (glb, tris, camera) = scene(seed, offset, false, ground, None);
        let (unambiguous, agree, worst) = agreement(&name, &glb, &tris, &camera, seed);
        eprintln!("{name}: {agree}/{unambiguous} unambiguous pixels agree with the f64 oracle; worst distance error {worst:.2e}");
        assert!(unambiguous > 200, "{name}: {unambiguous}");
        assert!(agree * 1000 >= unambiguous * 999, "{name}: {agree}/{unambiguous}");
        assert!(worst <= 1e-4, "{name}: distance relative error {worst}");
    }
}

/// Translations written with more digits than an f32 holds at 5e6 (where f32s are 0.5 apart):
/// small boxes right under cameras 2 units above them, directly and under a far-off group. Read
/// as f32, a box moved by up to 0.25 units and the camera looked past it.
#[test]
fn decimal_translations_keep_digits_an_f32_drops() {
    let mut rng = fastrand::Rng::with_seed(31);
    for case in 0..6 {
        let grouped = case % 2 == 1;
        let big = DVec3::new(5.0e6 + rng.f64(), -2.345e6 + rng.f64(), 7.65e5 + rng.f64());
        let (group, local) = if grouped { (big, DVec3::new(rng.f64() - 0.5, 0.0, 0.0)) } else { (DVec3::ZERO, big) };
        // The camera a few hundredths off the box's centre, inside its 0.2 width.
        let aim = local + DVec3::new(rng.f64() * 0.1 - 0.05, rng.f64() * 0.1 - 0.05, 0.0);
        let mut b = GltfBuilder::new();
        let mesh = b.add_mesh("Box", &[(&shapes::cuboid(Vec3::splat(0.1), [0.8; 4]), IndexStorage::U32)]);
        let trs = |t: DVec3| (t.as_vec3(), glam::Quat::IDENTITY, Vec3::ONE);
        let bx = b.add_trs_node("Box", Some(mesh), trs(local), &[]);
        b.set_translation(bx, local.to_array());
        let camera = b.add_camera_node("Cam", 0.5, 0.01, Some(100.0), Mat4::IDENTITY);
        let cam = b.add_trs_node("CamHolder", None, trs(aim + DVec3::Z * 2.0), &[camera]);
        b.set_translation(cam, (aim + DVec3::Z * 2.0).to_array());
        let root = b.add_trs_node("Group", None, trs(group), &[bx, cam]);
        b.set_translation(root, group.to_array());
        b.add_root(root);
        let r = &centre_pick(&format!("decimal{case}"), &b.to_glb());
        assert_eq!(r["node_name"], "Box", "case {case} (grouped {grouped}): {r}");
        // Pixel (32, 24)'s centre is half a pixel right of and below the view's axis, which
        // meets the box's top (0.1 above its centre) 1.9 units from the camera.
        let world = DVec3::new(r["world"][0].as_f64().unwrap(), r["world"][1].as_f64().unwrap(), r["world"][2].as_f64().unwrap());
        let half_pixel = 1.9 * (0.25f64).tan() / 48.0;
        let want = group + aim + DVec3::new(half_pixel, -half_pixel, 0.1);
        assert!((world - want).length() < 1e-3, "case {case}: world {world} vs {want}");
        assert!((r["distance"].as_f64().unwrap() - 1.9).abs() < 1e-3, "case {case}: {r}");
    }
}

/// One mesh whose primitives lie 2e7 apart: a unit box at the origin and a box of half-size 4
/// at x = 2e7 (where f32s are 2 apart). Re-centred as one, the box at the origin lost its
/// half-unit corners to f32 and every pick on it missed; each primitive keeps its own. Each
/// part is its own object (its own ID, the file's node), and a pick's UV comes from the
/// primitive hit: when the parts shared an ID, a pick on the first part cast its UV ray
/// against the other. Each pick names its primitive's index in the file's mesh.
#[test]
fn primitives_of_one_mesh_far_apart_each_keep_their_precision() {
    let mut ids = vec![];
    for (case, (eye, distance)) in [(DVec3::new(0.1, 0.05, 3.0), 2.5), (DVec3::new(2.0e7 + 0.5, 0.25, 10.0), 6.0)].into_iter().enumerate() {
        let mut b = GltfBuilder::new();
        let near = shapes::cuboid(Vec3::splat(0.5), [0.8; 4]);
        let mut far = shapes::cuboid(Vec3::splat(4.0), [0.4; 4]);
        far.positions.iter_mut().for_each(|p| p.x += 2.0e7);
        let mesh = b.add_mesh("Parts", &[(&near, IndexStorage::U16), (&far, IndexStorage::U16)]);
        let node = b.add_node("Parts node", Some(mesh), Mat4::IDENTITY, &[]);
        b.add_root(node);
        let trs = |t: DVec3| (t.as_vec3(), glam::Quat::IDENTITY, Vec3::ONE);
        let camera = b.add_camera_node("Cam", 0.5, 0.01, Some(100.0), Mat4::IDENTITY);
        let holder = b.add_trs_node("CamHolder", None, trs(eye), &[camera]);
        b.set_translation(holder, eye.to_array());
        b.add_root(holder);
        let r = &centre_pick(&format!("parts{case}"), &b.to_glb());
        assert_eq!(r["node_name"], "Parts node", "case {case}: {r}");
        assert!((r["distance"].as_f64().unwrap() - distance).abs() < 1e-3, "case {case}: {r}");
        let x = r["world"][0].as_f64().unwrap();
        assert!((x - eye.x).abs() < 0.1, "case {case}: the hit lies in front of the camera: {r}");
        assert_eq!(r["node"], node, "case {case}: the file's node: {r}");
        assert_eq!(r["mesh_primitive"], case, "case {case}: the primitive's index in the file's mesh: {r}");
        // The box's +z face, which the camera looks at: `shapes::cuboid` runs u along x and v
        // along y, 0..1 across the face.
        let (half, centre_x) = if case == 0 { (0.5, 0.0) } else { (4.0, 2.0e7) };
        let uv = r["uv"].as_array().unwrap_or_else(|| panic!("case {case}: a UV from the primitive hit: {r}"));
        let (u, v) = (uv[0].as_f64().unwrap(), uv[1].as_f64().unwrap());
        let want = ((x - centre_x) / (2.0 * half) + 0.5, r["world"][1].as_f64().unwrap() / (2.0 * half) + 0.5);
        assert!((u - want.0).abs() < 1e-3 && (v - want.1).abs() < 1e-3, "case {case}: uv {u}, {v} vs {want:?}: {r}");
        ids.push(r["id"].as_u64().unwrap());
    }
    assert_ne!(ids[0], ids[1], "each part is its own object");
}

/// A billboard on a node that also draws a far-off mesh sits at the node's translation: the
/// node's world matrix carries the shift that re-centres the mesh, which had moved the
/// billboard 2e7 units (rotated by the node) away.
#[test]
fn a_billboard_on_a_node_with_a_far_mesh_stays_at_the_node() {
    let mut b = GltfBuilder::new();
    let mut far = shapes::cuboid(Vec3::splat(4.0), [0.4; 4]);
    far.positions.iter_mut().for_each(|p| p.x += 2.0e7);
    let mesh = b.add_mesh("Far", &[(&far, IndexStorage::U16)]);
    let turn = glam::Quat::from_rotation_y(1.0);
    let node = b.add_trs_node("Sign", Some(mesh), (Vec3::new(3.0, 1.0, 0.0), turn, Vec3::ONE), &[]);
    b.set_extras(node, serde_json::json!({"picking_vk_billboard": {"size": 0.5}}));
    b.add_root(node);
    let camera = b.add_camera_node("Cam", 0.5, 0.01, Some(100.0), Mat4::from_translation(Vec3::new(3.0, 1.0, 10.0)));
    b.add_root(camera);
    let scene = viewer::gltf_load::load_bytes(&b.to_glb(), None).expect("a valid scene");
    let want = (DVec3::new(3.0, 1.0, 0.0) - scene.origin).as_vec3();
    let centre = scene.billboards[0].centre;
    assert!((centre - want).length() < 1e-3, "{centre} vs {want}");
    let shifted = scene.nodes[scene.billboards[0].node].world.w_axis.truncate();
    assert!((shifted - want).length() > 1.0, "the node's world matrix carries the mesh's shift: {shifted}");
}

/// A ground 2.6e5 across under a telephoto camera 316 units above it (a field of 6e-4
/// radians, found by fuzzing): every ray meets the ground far inside one triangle, yet unsplit
/// the pick pass lost the view's last column to f32 clipping (36 of 1,728 pixels; a field of
/// 5e-6 lost half the view). A narrow field tightens the split rule by as much as it magnifies.
#[test]
fn a_telephoto_camera_picks_every_pixel_of_a_large_ground() {
    let mut b = GltfBuilder::new();
    let ground = shapes::plane(128_088.44, [0.5; 4]);
    let mesh = b.add_mesh("Ground", &[(&ground, IndexStorage::U16)]);
    let node = b.add_node("Ground", Some(mesh), Mat4::IDENTITY, &[]);
    b.add_root(node);
    let rotation = glam::Quat::from_xyzw(-0.561_034_7, -0.349_167_4, -0.281_567, 0.695_731_45).normalize();
    let cam =
        b.add_camera_node("Cam", 5.901_104e-4, 0.323_438_74, None, Mat4::from_rotation_translation(rotation, Vec3::new(-86.887_9, 316.092_46, 44.215_027)));
    b.add_root(cam);
    let path = tmp("telephoto.glb");
    std::fs::write(&path, b.to_glb()).unwrap();
    let (w, h) = (48u32, 36u32);
    let mut entries: Vec<Value> = (0..h).flat_map(|y| (0..w).map(move |x| serde_json::json!([x, y]))).collect();
    entries.push(serde_json::json!({"rect": [0, 0, w, h], "mode": "visible"}));
    let picks = tmp("telephoto-picks.json");
    std::fs::write(&picks, serde_json::to_string(&entries).unwrap()).unwrap();
    let out = tmp("telephoto-out.json");
    let run = Command::new(env!("CARGO_BIN_EXE_viewer"))
        .args([
            path.to_str().unwrap(),
            "--headless",
            "--validation",
            "--size",
            &format!("{w}x{h}"),
            "--pick-file",
            picks.to_str().unwrap(),
            "--json",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let records: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let missed: Vec<(u64, u64)> =
        records.iter().filter(|r| r["x"].is_u64() && r["node_name"] != "Ground").map(|r| (r["x"].as_u64().unwrap(), r["y"].as_u64().unwrap())).collect();
    assert!(missed.is_empty(), "{} of {} pixels miss the ground: {:?}", missed.len(), w * h, &missed[..missed.len().min(8)]);
    let objects = records.last().unwrap()["objects"].as_array().unwrap();
    assert_eq!((objects.len(), objects[0]["pixels"].as_u64()), (1, Some(u64::from(w * h))), "{objects:?}");
}
