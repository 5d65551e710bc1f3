//! The viewer's headless mode on lavapipe with validation on: picks on the built-in scene and
//! on glTF files written here, checked against the CPU ray oracle; bad files and arguments.

use glam::{Mat4, UVec2, Vec3};
use picking_vk_host::shapes;
use picking_vk_tests::oracle::{Oracle, OracleCamera};
use picking_vk_tests::scene as oracle_scene;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use viewer::gltf_write::{GltfBuilder, IndexStorage};
use viewer::scene::Scene;

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("picking-vk-viewer-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn viewer(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_viewer")).args(args).output().expect("run viewer");
    Run { code: out.status.code().unwrap_or(-1), stdout: String::from_utf8_lossy(&out.stdout).into(), stderr: String::from_utf8_lossy(&out.stderr).into() }
}

/// The viewer scene as a CPU ray caster sees it: an oracle object per (node, primitive), ID =
/// glTF node index + 1, single-sided materials culled as Vulkan culls; and per object its
/// primitive, for alpha masks (ray, then UV, then texel, then discard and on to the next hit).
struct SceneOracle<'s> {
    oracle: Oracle,
    prims: Vec<&'s picking_vk_host::Primitive>,
    scene: &'s Scene,
    /// Line and point primitives, projected to pixels (segments; a point as a zero-length
    /// one): a pixel within reach of one is ambiguous for the triangle oracle.
    thin: Vec<(glam::DVec2, glam::DVec2)>,
}

impl SceneOracle<'_> {
    fn new(scene: &Scene, w: u32, h: u32) -> SceneOracle<'_> {
        Self::with_culling(scene, w, h, true)
    }

    /// `culling: false` gives a plain ray caster that sees both sides of everything.
    fn with_culling(scene: &Scene, w: u32, h: u32, culling: bool) -> SceneOracle<'_> {
        Self::seen_by(scene, w, h, culling, viewer::headless::headless_camera(scene, w as f32 / h as f32))
    }

    /// The scene through the camera `cam`, made by the test rather than the viewer.
    fn seen_by(scene: &Scene, w: u32, h: u32, culling: bool, cam: picking_vk_host::CameraMatrices) -> SceneOracle<'_> {
        let mut os = oracle_scene::Scene::default();
        let mut prims = vec![];
        let view_projection = (cam.projection * cam.view).as_dmat4();
        let project = |p: glam::DVec3| {
            let c = view_projection * p.extend(1.0);
            (c.w > 1e-6).then(|| glam::DVec2::new((c.x / c.w + 1.0) * 0.5 * f64::from(w), (c.y / c.w + 1.0) * 0.5 * f64::from(h)))
        };
        let mut thin = vec![];
        for node in &scene.nodes {
            let Some(m) = node.mesh else { continue };
            for p in &scene.meshes[m].primitives {
                if p.topology != picking_vk::draw::Topology::TriangleList {
                    let order: Vec<u32> = p.indices.clone().unwrap_or_else(|| (0..p.positions.len() as u32).collect());
                    let at = |i: u32| project(node.world.as_dmat4().transform_point3(p.positions[i as usize].as_dvec3()));
                    let pairs: Vec<(u32, u32)> = match p.topology {
                        picking_vk::draw::Topology::LineList => order.chunks_exact(2).map(|c| (c[0], c[1])).collect(),
                        picking_vk::draw::Topology::LineStrip => order.windows(2).map(|c| (c[0], c[1])).collect(),
                        _ => order.iter().map(|&i| (i, i)).collect(),
                    };
                    thin.extend(pairs.into_iter().filter_map(|(a, b)| Some((at(a)?, at(b)?))));
                    continue;
                }
                // Deformed meshes are deformed here, vertex by vertex: morph, then skin (a
                // skinned node's own transform plays no part).
                let palette = node.skin.map(|s| &scene.skins[s].palette).filter(|_| !p.skin.is_empty());
                let positions = deform(p, palette.map(Vec::as_slice), &node.weights);
                os.meshes.push(oracle_scene::Mesh { positions, indices: p.indices.clone() });
                let world = if palette.is_some() { Mat4::IDENTITY } else { node.world };
                let mut object = oracle_scene::Object::new(node.gltf_index as u64 + 1, os.meshes.len() - 1, world);
                if p.single_sided && culling {
                    // glTF fronts wind counter-clockwise; a mirroring node turns them.
                    let front_face = if node.world.determinant() < 0.0 { ash::vk::FrontFace::CLOCKWISE } else { ash::vk::FrontFace::COUNTER_CLOCKWISE };
                    object.raster = picking_vk::draw::RasterState::default().with_culling(ash::vk::CullModeFlags::BACK, front_face);
                }
                os.objects.push(object);
                prims.push(p);
            }
        }
        // Billboards: camera-facing squares at their nodes, as the contributor draws them.
        for board in &scene.billboards {
            let node = &scene.nodes[board.node];
            let square = picking_vk_host::Billboard { centre: node.world.w_axis.truncate(), size: board.size, color: board.color };
            os.meshes.push(oracle_scene::Mesh { positions: square.triangles(cam.view).concat(), indices: None });
            os.objects.push(oracle_scene::Object::new(node.gltf_index as u64 + 1, os.meshes.len() - 1, Mat4::IDENTITY));
            prims.push(&NO_MASK);
        }
        SceneOracle { oracle: Oracle::new(&os, OracleCamera::new(cam.view, cam.projection, [0.0, 0.0, f64::from(w), f64::from(h)])), prims, scene, thin }
    }

    /// The nearest hit an alpha mask keeps; ambiguous when a mask's answer is too close to call.
    fn pick(&self, p: UVec2) -> picking_vk_tests::oracle::OracleAnswer {
        let centre = glam::DVec2::new(f64::from(p.x) + 0.5, f64::from(p.y) + 0.5);
        let near_thin = self.thin.iter().any(|&(a, b)| {
            let ab = b - a;
            let t = if ab.length_squared() > 0.0 { ((centre - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0) } else { 0.0 };
            (a + ab * t - centre).length() < f64::from(picking_vk_host::POINT_SIZE) / 2.0 + 2.0
        });
        if near_thin {
            return picking_vk_tests::oracle::OracleAnswer { hit: None, ambiguous: true };
        }
        self.oracle.pick_through(p, |hit| {
            let prim = self.prims[hit.object];
            let Some(cutoff) = prim.alpha_cutoff else { return Some(false) };
            let texture = prim.texture.and_then(|t| self.scene.textures.get(t));
            if texture.is_none() && prim.colors.is_none() {
                return Some(prim.color[3] < cutoff);
            }
            let (alpha, to_edge) = prim.mask_alpha(hit.triangle, hit.barycentrics, texture)?;
            ((alpha - cutoff).abs() > 0.02 && to_edge > 0.01).then_some(alpha < cutoff)
        })
    }
}

/// A primitive's positions morphed by `weights` and skinned by `palette`, in f64.
fn deform(p: &picking_vk_host::Primitive, palette: Option<&[Mat4]>, weights: &[f32]) -> Vec<Vec3> {
    (0..p.positions.len())
        .map(|v| {
            let mut q = p.positions[v].as_dvec3();
            for (t, w) in p.morph_targets.iter().zip(weights) {
                q += t[v].as_dvec3() * f64::from(*w);
            }
            let Some(palette) = palette else { return q.as_vec3() };
            let mut out = glam::DVec3::ZERO;
            for set in &p.skin {
                for k in 0..4 {
                    out += palette[set.joints[v][k] as usize].as_dmat4().transform_point3(q) * f64::from(set.weights[v][k]);
                }
            }
            out.as_vec3()
        })
        .collect()
}

/// What the oracle's alpha test sees for a billboard: no mask.
static NO_MASK: std::sync::LazyLock<picking_vk_host::Primitive> = std::sync::LazyLock::new(picking_vk_host::Primitive::default);

/// Runs headless picks at `pixels` and compares every unambiguous one with the oracle.
/// `extra`: more viewer arguments.
fn check_scene_against_oracle(scene_arg: Option<&Path>, scene: &Scene, pixels: &[UVec2], w: u32, h: u32, extra: &[&str]) -> (usize, usize) {
    let records = headless_picks(scene_arg, pixels, w, h, extra);
    check_records_against(&SceneOracle::new(scene, w, h), scene, &records, pixels)
}

/// Asserts that record `r` hit at `distance` from the eye (within 1e-3 of it) and at world
/// point `point` (within 1e-3 of the distance); `what` names the pick.
fn assert_hit_at(r: &Value, distance: f64, point: glam::DVec3, what: &str) {
    let d = r["distance"].as_f64().unwrap();
    assert!((d - distance).abs() / distance < 1e-3, "{what}: distance {d} vs {distance}");
    let world: Vec<f64> = r["world"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert!((glam::DVec3::new(world[0], world[1], world[2]) - point).length() < 1e-3 * distance, "{what}: world {world:?} vs {point} ({r})");
}

/// Compares headless records (one per pixel of `pixels`) with `oracle` where it is sure:
/// (picks that agree, hits among them).
fn check_records_against(oracle: &SceneOracle, scene: &Scene, records: &[Value], pixels: &[UVec2]) -> (usize, usize) {
    let (mut agree, mut hits) = (0, 0);
    for (r, p) in records.iter().zip(pixels) {
        assert_eq!((r["x"].as_u64(), r["y"].as_u64()), (Some(u64::from(p.x)), Some(u64::from(p.y))));
        let want = oracle.pick(*p);
        if want.ambiguous {
            continue;
        }
        let node = r["node"].as_u64();
        assert_eq!(node, want.hit.map(|h| h.id - 1), "pixel {p}: viewer says {r}, oracle {:?}", want.hit);
        assert_eq!(r["hit"].as_bool(), Some(want.hit.is_some()));
        if let Some(hw) = want.hit {
            hits += 1;
            assert_hit_at(r, hw.distance, hw.point, &format!("pixel {p}"));
            let name = scene.nodes.iter().find(|n| n.gltf_index as u64 == hw.id - 1).and_then(|n| n.name.clone());
            assert_eq!(r["node_name"].as_str().map(str::to_owned), name);
            // The UV is the hit face's (a masked primitive's hole passed through), away from
            // the face's edges, where a neighbour with other UVs ties.
            let prim = oracle.prims[hw.object];
            if let Some(uvs) = prim.uvs.as_ref().filter(|_| hw.barycentrics.iter().all(|&b| b > 1e-3)) {
                let corners = prim.triangle(hw.triangle);
                let want = (0..3).fold(glam::DVec2::ZERO, |sum, k| sum + uvs[corners[k] as usize].as_dvec2() * hw.barycentrics[k]);
                let got = r["uv"].as_array().map(|uv| glam::DVec2::new(uv[0].as_f64().unwrap(), uv[1].as_f64().unwrap()));
                assert!(got.is_some_and(|got| (got - want).length() < 1e-3 * (1.0 + want.length())), "pixel {p}: uv {got:?}, the hit face's {want} ({r})");
            }
        }
        agree += 1;
    }
    (agree, hits)
}

/// The headless viewer's records for `pixels` (one per pixel, in order), validation on.
fn headless_picks(scene_arg: Option<&Path>, pixels: &[UVec2], w: u32, h: u32, extra: &[&str]) -> Vec<Value> {
    // Tests run in parallel: every run its own files.
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let picks = tmp(&format!("picks-{n}.json"));
    let out = tmp(&format!("out-{n}.json"));
    let list: Vec<[u32; 2]> = pixels.iter().map(|p| [p.x, p.y]).collect();
    std::fs::write(&picks, serde_json::to_string(&list).unwrap()).unwrap();
    let size = format!("{w}x{h}");
    let mut args = vec!["--headless", "--validation", "--size", &size, "--pick-file", picks.to_str().unwrap(), "--json", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    if let Some(p) = scene_arg {
        args.insert(0, p.to_str().unwrap());
    }
    let run = viewer(&args);
    assert_eq!(run.code, 0, "viewer failed:\n{}\n{}", run.stdout, run.stderr);
    assert!(!run.stderr.contains("validation:"), "validation messages:\n{}", run.stderr);
    let records: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(records.len(), pixels.len(), "one record per pick, in order");
    records
}

fn random_pixels(seed: u64, n: usize, w: u32, h: u32) -> Vec<UVec2> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..n).map(|_| UVec2::new(rng.u32(..w), rng.u32(..h))).collect()
}

#[test]
fn built_in_scene_picks_match_the_oracle() {
    let scene = viewer::load_scene(None).unwrap();
    let (w, h) = (320, 180);
    let (agree, hits) = check_scene_against_oracle(None, &scene, &random_pixels(1, 300, w, h), w, h, &[]);
    eprintln!("built-in scene: {agree} unambiguous picks agree with the oracle, {hits} hits");
    assert!(agree > 150 && hits > 100, "{agree} / {hits}");
}

/// A scene with a node hierarchy, a camera, a mesh of several primitives (u16 and u32, one
/// non-indexed) and an instanced field of nodes sharing one mesh.
fn written_scene() -> GltfBuilder {
    written_scene_seen_from(glam::camera::rh::view::look_at_mat4(Vec3::new(0.5, 3.0, 5.0), Vec3::new(0.0, 0.0, -0.5), Vec3::Y).inverse())
}

/// [`written_scene`] with its camera node's transform `camera`.
fn written_scene_seen_from(camera: Mat4) -> GltfBuilder {
    let mut b = GltfBuilder::new();
    let mut sphere = shapes::sphere(0.8, 12, 16, [0.2, 0.5, 0.9, 1.0]);
    sphere.uvs = None;
    let multi = b.add_mesh(
        "Multi",
        &[
            (&shapes::cuboid(Vec3::new(0.6, 0.3, 0.4), [0.9, 0.2, 0.2, 1.0]), IndexStorage::U16),
            (&sphere, IndexStorage::U32),
            (&shapes::plane(0.5, [0.3, 0.9, 0.3, 1.0]), IndexStorage::U16),
        ],
    );
    let small = b.add_mesh("Small", &[(&shapes::cuboid(Vec3::splat(0.2), [0.8, 0.8, 0.2, 1.0]), IndexStorage::U16)]);
    let ground = b.add_mesh("Ground", &[(&shapes::plane(6.0, [0.5, 0.5, 0.5, 1.0]), IndexStorage::U16)]);
    let child = b.add_node("Child", Some(multi), Mat4::from_translation(Vec3::new(1.0, 0.5, 0.0)) * Mat4::from_scale(Vec3::new(1.5, 0.7, 1.0)), &[]);
    let parent = b.add_node("Parent", None, Mat4::from_rotation_y(0.6) * Mat4::from_translation(Vec3::new(-0.5, 0.0, 0.5)), &[child]);
    b.add_root(parent);
    let g = b.add_node("Ground", Some(ground), Mat4::IDENTITY, &[]);
    b.add_root(g);
    let mut field = vec![];
    for i in 0..12 {
        field.push(b.add_node(
            &format!("Field {i}"),
            Some(small),
            Mat4::from_translation(Vec3::new(-2.5 + (i % 4) as f32 * 0.6, 0.2, -1.5 - (i / 4) as f32 * 0.6)),
            &[],
        ));
    }
    let group = b.add_node("Field", None, Mat4::from_translation(Vec3::new(0.3, 0.0, 0.0)), &field);
    b.add_root(group);
    let cam = b.add_camera_node("Cam", 0.9, 0.1, Some(40.0), camera);
    b.add_root(cam);
    b
}

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

/// A random scene of alpha-tested quads (random textures, nearest and linear samplers,
/// cutoffs and colour alphas), single-sided boards (some facing away, some mirrored; every
/// other one two layers deep, see [`with_a_layer_behind`]) and an opaque backdrop, with a camera.
fn alpha_scene(seed: u64) -> GltfBuilder {
    alpha_scene_with_uvs(seed, |uv| uv)
}

/// `alpha_scene` with every board's texture coordinates passed through `uvs`.
fn alpha_scene_with_uvs(seed: u64, uvs: impl Fn(glam::Vec2) -> glam::Vec2) -> GltfBuilder {
    alpha_scene_dressed(seed, uvs, |_| None)
}

/// `alpha_scene_with_uvs`, each masked board given the vertex colours `colors` makes for it.
fn alpha_scene_dressed(
    seed: u64,
    uvs: impl Fn(glam::Vec2) -> glam::Vec2,
    mut colors: impl FnMut(&picking_vk_host::Primitive) -> Option<Vec<glam::Vec4>>,
) -> GltfBuilder {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut b = GltfBuilder::new();
    let backdrop = b.add_mesh("Backdrop", &[(&shapes::plane(6.0, [0.5, 0.5, 0.5, 1.0]), IndexStorage::U16)]);
    let node =
        b.add_node("Backdrop", Some(backdrop), Mat4::from_translation(Vec3::new(0.0, 0.0, -4.0)) * Mat4::from_rotation_x(std::f32::consts::FRAC_PI_2), &[]);
    b.add_root(node);
    for i in 0..10 {
        let side = [8u32, 16][rng.usize(..2)];
        let rgba: Vec<u8> = (0..side * side).flat_map(|_| [rng.u8(..), rng.u8(..), rng.u8(..), if rng.bool() { 255 } else { rng.u8(..40) }]).collect();
        let linear = rng.bool();
        let sampler = picking_vk_host::SamplerDesc { linear_mag: linear, linear_min: linear, ..Default::default() };
        let texture = b.add_texture(&picking_vk_host::TextureData { rgba: rgba.into(), width: side, height: side, sampler });
        let masked = i % 3 != 2;
        let board = picking_vk_host::Primitive {
            texture: Some(texture),
            alpha_cutoff: masked.then(|| 0.3 + rng.f32() * 0.4),
            single_sided: !masked || rng.bool(),
            ..shapes::plane(0.5 + rng.f32() * 0.5, [0.6 + rng.f32() * 0.4, 0.7, 0.5, 0.85 + rng.f32() * 0.15])
        };
        let board = picking_vk_host::Primitive { uvs: board.uvs.as_ref().map(|u| u.iter().map(|&uv| uvs(uv)).collect()), ..board };
        let board = picking_vk_host::Primitive { colors: board.alpha_cutoff.and_then(|_| colors(&board)), ..board };
        let board = if i % 2 == 0 { with_a_layer_behind(board) } else { board };
        let mesh = b.add_mesh(&format!("Board {i}"), &[(&board, IndexStorage::U16)]);
        let at = Vec3::new(rng.f32() * 3.0 - 1.5, rng.f32() * 2.0 - 1.0, -rng.f32() * 3.0);
        // Stood up to face the camera, turned a little; every third one faces away.
        let facing = if i % 3 == 1 { -std::f32::consts::FRAC_PI_2 } else { std::f32::consts::FRAC_PI_2 };
        let turn = Mat4::from_rotation_y(rng.f32() * 0.8 - 0.4) * Mat4::from_rotation_x(facing + rng.f32() * 0.4 - 0.2);
        let mirror = if rng.usize(..4) == 0 { Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0)) } else { Mat4::IDENTITY };
        let node = b.add_node(&format!("Board {i}"), Some(mesh), Mat4::from_translation(at) * turn * mirror, &[]);
        b.add_root(node);
    }
    let cam = b.add_camera_node(
        "Cam",
        0.9,
        0.1,
        Some(40.0),
        glam::camera::rh::view::look_at_mat4(Vec3::new(0.2, 0.3, 4.0), Vec3::new(0.0, 0.0, -1.0), Vec3::Y).inverse(),
    );
    b.add_root(cam);
    b
}

/// `board` (a plane facing +y) with a second copy of itself 0.2 below, in the same primitive,
/// its UVs shifted: where the front layer's mask has a hole, the pick and the UV it reports
/// are the back layer's.
fn with_a_layer_behind(board: picking_vk_host::Primitive) -> picking_vk_host::Primitive {
    let n = board.positions.len() as u32;
    let mut out = board.clone();
    out.positions.extend(board.positions.iter().map(|p| *p - Vec3::Y * 0.2));
    out.normals.extend_from_slice(&board.normals);
    if let (Some(uvs), Some(src)) = (out.uvs.as_mut(), board.uvs.as_ref()) {
        uvs.extend(src.iter().map(|uv| *uv + glam::Vec2::new(0.37, 0.21)));
    }
    if let (Some(colors), Some(src)) = (out.colors.as_mut(), board.colors.as_ref()) {
        colors.extend_from_slice(src);
    }
    let indices: Vec<u32> = board.indices.clone().unwrap_or_else(|| (0..n).collect());
    out.indices = Some(indices.iter().copied().chain(indices.iter().map(|i| i + n)).collect());
    out
}

#[test]
fn alpha_masked_and_single_sided_gltf_scenes_pick_like_a_ray_caster_with_texture_lookup() {
    let (w, h) = (320, 240);
    let (mut agree, mut hits, mut changed) = (0, 0, 0);
    for seed in 0..3 {
        let glb = tmp(&format!("alpha-{seed}.glb"));
        std::fs::write(&glb, alpha_scene(seed).to_glb()).unwrap();
        let scene = viewer::gltf_load::load_path(&glb).unwrap();
        assert_eq!(scene.textures.len(), 10, "every board's texture is decoded");
        let pixels = random_pixels(seed + 10, 400, w, h);
        let (a, hit) = check_scene_against_oracle(Some(&glb), &scene, &pixels, w, h, &[]);
        agree += a;
        hits += hit;
        // Pixels where the masks and culling change the answer of a plain ray cast.
        let with_materials = SceneOracle::new(&scene, w, h);
        let plain = SceneOracle::with_culling(&scene, w, h, false);
        for p in &pixels {
            let want = with_materials.pick(*p);
            let raw = plain.oracle.pick(*p);
            changed += usize::from(!want.ambiguous && !raw.ambiguous && want.hit.map(|h| h.id) != raw.hit.map(|h| h.id));
        }
    }
    eprintln!("alpha-masked scenes: {agree} unambiguous picks agree with the ray caster, {hits} hits, {changed} where masks or culling change the answer");
    assert!(agree > 900 && hits > 600 && changed > 60, "{agree} / {hits} / {changed}");
}

#[test]
fn vertex_colours_tint_the_lit_pass_and_their_alpha_masks_picks_like_a_ray_caster() {
    // The alpha scene's masked boards given random vertex colours (three in four fading to
    // alpha 0 along one edge), and a red board of its own.
    let (w, h) = (320, 240);
    let (mut agree, mut hits, mut changed) = (0, 0, 0);
    for seed in 0..2 {
        let mut rng = fastrand::Rng::with_seed(seed + 40);
        let mut b = alpha_scene_dressed(
            seed,
            |uv| uv,
            |board| {
                let fade = rng.usize(..4) != 0;
                let alpha = |at: Vec3| if fade && at.x < 0.0 { 0.0 } else { 1.0 };
                Some(board.positions.iter().map(|&at| glam::Vec4::new(rng.f32(), rng.f32(), rng.f32(), alpha(at))).collect())
            },
        );
        // A white board in red vertex colours (drawn in the plain scene too, uncoloured).
        let add_red = |b: &mut GltfBuilder, color: Option<glam::Vec4>| {
            let plane = shapes::plane(0.6, [1.0; 4]);
            let red = picking_vk_host::Primitive { colors: color.map(|c| vec![c; plane.positions.len()]), ..plane };
            let mesh = b.add_mesh("Red", &[(&red, IndexStorage::U16)]);
            let place = Mat4::from_translation(Vec3::new(-1.6, -1.2, 0.5)) * Mat4::from_rotation_x(std::f32::consts::FRAC_PI_2);
            let node = b.add_node("Red", Some(mesh), place, &[]);
            b.add_root(node);
            node
        };
        // And an untextured masked board whose vertex alpha alone cuts its left half away.
        let add_fade = |b: &mut GltfBuilder, coloured: bool| {
            let plane = picking_vk_host::Primitive { alpha_cutoff: Some(0.5), ..shapes::plane(0.7, [0.9, 0.9, 0.9, 1.0]) };
            let colors = plane.positions.iter().map(|p| glam::Vec4::new(1.0, 1.0, 1.0, if p.x < 0.0 { 0.0 } else { 1.0 })).collect();
            let fade = picking_vk_host::Primitive { colors: coloured.then_some(colors), ..plane };
            let mesh = b.add_mesh("Fade", &[(&fade, IndexStorage::U16)]);
            let node =
                b.add_node("Fade", Some(mesh), Mat4::from_translation(Vec3::new(1.4, -1.0, 0.3)) * Mat4::from_rotation_x(std::f32::consts::FRAC_PI_2), &[]);
            b.add_root(node);
        };
        let red_node = add_red(&mut b, Some(glam::Vec4::new(1.0, 0.0, 0.0, 1.0)));
        add_fade(&mut b, true);
        let mut plain = alpha_scene(seed);
        add_red(&mut plain, None);
        add_fade(&mut plain, false);
        let plain = viewer::gltf_load::load_bytes(&plain.to_glb(), None).unwrap();
        let glb = tmp(&format!("vertex-colours-{seed}.glb"));
        std::fs::write(&glb, b.to_glb()).unwrap();
        let scene = viewer::gltf_load::load_path(&glb).unwrap();
        assert!(scene.meshes.iter().flat_map(|m| &m.primitives).filter(|p| p.colors.is_some()).count() > 5, "COLOR_0 is read");
        let pixels = random_pixels(seed + 50, 1000, w, h);
        let shot = tmp(&format!("vertex-colours-{seed}.png"));
        let (a, hit) = check_scene_against_oracle(Some(&glb), &scene, &pixels, w, h, &["--screenshot", shot.to_str().unwrap()]);
        (agree, hits) = (agree + a, hits + hit);
        // The lit pass multiplies the white material by the red vertex colour (the first pick
        // is highlighted: left out).
        let image = image::open(&shot).unwrap().to_rgba8();
        let records = headless_picks(Some(&glb), &pixels, w, h, &[]);
        let on_red: Vec<[u8; 4]> = records
            .iter()
            .zip(&pixels)
            .skip(1)
            .filter(|(r, _)| r["node"].as_u64() == Some(red_node as u64))
            .map(|(_, p)| image.get_pixel(p.x, p.y).0)
            .collect();
        assert!(on_red.len() >= 3, "{} picks on the red board", on_red.len());
        for [r, g, b, _] in &on_red {
            assert!(*r > 60 && u32::from(*g) * 3 < u32::from(*r) && u32::from(*b) * 3 < u32::from(*r), "the red board is drawn red: {r} {g} {b}");
        }
        let (with_colours, without) = (SceneOracle::new(&scene, w, h), SceneOracle::new(&plain, w, h));
        for p in &pixels {
            let (want, old) = (with_colours.pick(*p), without.pick(*p));
            changed += usize::from(!want.ambiguous && !old.ambiguous && want.hit.map(|h| h.id) != old.hit.map(|h| h.id));
        }
    }
    eprintln!("vertex-coloured masks: {agree} unambiguous picks agree with the ray caster, {hits} hits, {changed} where vertex alpha changes the answer");
    assert!(agree > 1600 && hits > 1200 && changed > 80, "{agree} / {hits} / {changed}");
}

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

/// Runs a headless pick file on the built-in scene at 160x120 and returns its records.
fn run_entries(name: &str, entries: &Value) -> Vec<Value> {
    run_entries_with(name, entries, &[])
}

/// As [`run_entries`], with more viewer arguments.
fn run_entries_with(name: &str, entries: &Value, extra: &[&str]) -> Vec<Value> {
    let picks = tmp(&format!("{name}.json"));
    let out = tmp(&format!("{name}-out.json"));
    std::fs::write(&picks, entries.to_string()).unwrap();
    let mut args = vec!["--headless", "--validation", "--size", "160x120", "--pick-file", picks.to_str().unwrap(), "--json", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let run = viewer(&args);
    assert_eq!(run.code, 0, "viewer failed:\n{}\n{}", run.stdout, run.stderr);
    serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap()
}

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

/// The alpha-masked boards with their texture coordinates stored as TEXCOORD_1 only, moved by
/// the inverse of a `KHR_texture_transform` (offset, rotation, scale) that the materials name
/// with `texCoord` 1: the masks must cut the same holes as the plain file's, and the same
/// moved coordinates as TEXCOORD_0 without the transform do not.
#[test]
fn texture_transforms_and_coordinate_sets_cut_the_masks_the_file_means() {
    let (w, h) = (320, 240);
    let (offset, rotation, scale) = (glam::Vec2::new(0.25, -0.1), 0.3f32, glam::Vec2::new(1.5, 0.75));
    let transform = glam::Affine2::from_translation(offset) * glam::Affine2::from_angle(-rotation) * glam::Affine2::from_scale(scale);
    let inverse = transform.inverse();
    let write = |name: &str, b: GltfBuilder, extension: bool| {
        let (json, bin) = b.to_gltf(&format!("{name}.bin"));
        let mut doc: Value = serde_json::from_str(&json).unwrap();
        if extension {
            for material in doc["materials"].as_array_mut().unwrap() {
                if material["pbrMetallicRoughness"].get("baseColorTexture").is_some() {
                    material["pbrMetallicRoughness"]["baseColorTexture"]["extensions"] = serde_json::json!({"KHR_texture_transform": {
                        "offset": offset.to_array(), "rotation": rotation, "scale": scale.to_array(), "texCoord": 1}});
                }
            }
            doc["extensionsUsed"] = serde_json::json!(["KHR_texture_transform"]);
        }
        for mesh in doc["meshes"].as_array_mut().unwrap() {
            for prim in mesh["primitives"].as_array_mut().unwrap() {
                let attributes = prim["attributes"].as_object_mut().unwrap();
                if extension {
                    if let Some(uv) = attributes.remove("TEXCOORD_0") {
                        attributes.insert("TEXCOORD_1".into(), uv);
                    }
                }
            }
        }
        std::fs::write(tmp(&format!("{name}.bin")), bin).unwrap();
        let path = tmp(&format!("{name}.gltf"));
        std::fs::write(&path, doc.to_string()).unwrap();
        path
    };
    let pixels = random_pixels(77, 600, w, h);
    let ids = |path: &Path| headless_picks(Some(path), &pixels, w, h, &[]).iter().map(|r| r["node"].as_u64()).collect::<Vec<_>>();
    let plain = ids(&write("plain", alpha_scene(1), false));
    let moved = ids(&write("moved", alpha_scene_with_uvs(1, |uv| inverse.transform_point2(uv)), true));
    let unmoved = ids(&write("unmoved", alpha_scene_with_uvs(1, |uv| inverse.transform_point2(uv)), false));
    let same = plain.iter().zip(&moved).filter(|(a, b)| a == b).count();
    let differ = plain.iter().zip(&unmoved).filter(|(a, b)| a != b).count();
    eprintln!("texture transform: {same}/{} picks as the plain file; {differ} differ without the transform", pixels.len());
    assert!(same * 100 >= pixels.len() * 99, "{same}/{}", pixels.len());
    assert!(differ >= 20, "the transform must matter: {differ}");
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

#[test]
fn a_masked_texture_on_a_morphed_mesh_is_picked_through_its_holes() {
    // A board morphed up, masked by a texture clear on its left half (u < 0.5), before a
    // backdrop: the left half is picked through onto the backdrop, the right half hits the
    // board. (picking-vk once refused deformation with hooks, and the board was picked as
    // opaque; before that every pick of the frame was an error.)
    let mut b = GltfBuilder::new();
    let half = [[255u8, 255, 255, 0], [255, 255, 255, 255]].concat().repeat(2);
    let texture = b.add_texture(&picking_vk_host::TextureData { rgba: half.into(), width: 2, height: 2, sampler: Default::default() });
    let mut board = picking_vk_host::Primitive { texture: Some(texture), alpha_cutoff: Some(0.5), ..shapes::plane(1.0, [1.0; 4]) };
    board.morph_targets = vec![vec![Vec3::new(0.0, 0.0, -0.4); board.positions.len()]];
    let mesh = b.add_mesh("Board", &[(&board, IndexStorage::U16)]);
    let node = b.add_node("Board", Some(mesh), Mat4::from_rotation_x(std::f32::consts::FRAC_PI_2), &[]);
    b.set_weights(node, &[1.0]);
    b.add_root(node);
    let backdrop = b.add_mesh("Backdrop", &[(&shapes::plane(8.0, [0.5, 0.5, 0.5, 1.0]), IndexStorage::U16)]);
    let behind =
        b.add_node("Backdrop", Some(backdrop), Mat4::from_translation(Vec3::new(0.0, 0.0, -2.0)) * Mat4::from_rotation_x(std::f32::consts::FRAC_PI_2), &[]);
    b.add_root(behind);
    let cam = b.add_camera_node("Cam", 0.9, 0.1, Some(40.0), Mat4::from_translation(Vec3::new(0.0, 0.0, 3.0)));
    b.add_root(cam);
    let glb = tmp("masked-morph.glb");
    std::fs::write(&glb, b.to_glb()).unwrap();
    // The morph lifts the board 0.4 (local -z, world +y): pixel row 4 is on it only morphed.
    let pixels = [UVec2::new(22, 24), UVec2::new(42, 24), UVec2::new(42, 4), UVec2::new(2, 2)];
    let records = headless_picks(Some(&glb), &pixels, 64, 48, &[]);
    assert!(records.iter().all(|r| r.get("error").is_none()), "{records:?}");
    let names: Vec<&str> = records.iter().map(|r| r["node_name"].as_str().unwrap_or("-")).collect();
    assert_eq!(names, ["Backdrop", "Board", "Board", "Backdrop"], "{records:?}");
    // The hole's pick lies on the backdrop, 2 units behind the board.
    assert!((records[0]["world"][2].as_f64().unwrap() + 2.0).abs() < 1e-3, "{records:?}");
}

/// One mesh of a quantized test file: its vertices stored as `component` (glTF's code),
/// normalized or not, and how the float twin reads them back.
struct QuantizedMesh {
    name: &'static str,
    component: u32,
    normalized: bool,
    /// The stored integer of a coordinate in -1..1, and the value it stands for.
    quantize: fn(f64) -> i64,
    value: fn(i64) -> f32,
    /// The node's matrix (it undoes an offset quantization, as gltfpack writes it).
    node: Mat4,
}

/// A wavy 9x9 grid, three times: positions as normalized i16, as u16 counts of 1/1000 offset
/// by the node's matrix, and as normalized i8 with a morph target of normalized i16 offsets;
/// normals as normalized i8 and UVs as raw u8 (KHR_mesh_quantization's types, as gltfpack
/// writes them). With `quantized` false, the same values as f32: the float twin.
fn quantized_grid_file(quantized: bool, declared: bool) -> Value {
    let meshes = [
        QuantizedMesh {
            name: "I16",
            component: 5122,
            normalized: true,
            quantize: |x| (x * 32767.0).round() as i64,
            value: |q| (q as f32 / 32767.0).max(-1.0),
            node: Mat4::from_translation(Vec3::new(-2.3, 0.0, 0.0)),
        },
        QuantizedMesh {
            name: "U16",
            component: 5123,
            normalized: false,
            quantize: |x| ((x + 1.0) * 1000.0).round() as i64,
            value: |q| q as f32,
            node: Mat4::from_translation(Vec3::splat(-1.0)) * Mat4::from_scale(Vec3::splat(0.001)),
        },
        QuantizedMesh {
            name: "I8",
            component: 5120,
            normalized: true,
            quantize: |x| (x * 127.0).round() as i64,
            value: |q| (q as f32 / 127.0).max(-1.0),
            node: Mat4::from_translation(Vec3::new(2.3, 0.0, 0.0)),
        },
    ];
    let n = 9usize;
    let grid: Vec<[f64; 3]> = (0..n * n)
        .map(|k| {
            let (x, y) = (-1.0 + 2.0 * (k % n) as f64 / (n - 1) as f64, -1.0 + 2.0 * (k / n) as f64 / (n - 1) as f64);
            [x * 0.9, y * 0.9, 0.4 * (2.0 * x).sin() * (1.5 * y).cos()]
        })
        .collect();
    let mut indices: Vec<u16> = vec![];
    for j in 0..n - 1 {
        for i in 0..n - 1 {
            let k = (j * n + i) as u16;
            indices.extend([k, k + 1, k + n as u16 + 1, k, k + n as u16 + 1, k + n as u16]);
        }
    }
    let mut bin: Vec<u8> = vec![];
    let (mut views, mut accessors) = (vec![], vec![]);
    // Each accessor in its own view, 4-byte aligned, elements padded to 4 bytes as glTF asks.
    let mut add = |bytes: Vec<u8>, stride: Option<usize>, accessor: Value, target: u32| {
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        let mut view = json!({"buffer": 0, "byteOffset": bin.len(), "byteLength": bytes.len(), "target": target});
        if let Some(s) = stride {
            view["byteStride"] = json!(s);
        }
        bin.extend(bytes);
        views.push(view);
        let mut accessor = accessor;
        accessor["bufferView"] = json!(views.len() - 1);
        accessors.push(accessor);
        accessors.len() - 1
    };
    let index_bytes: Vec<u8> = indices.iter().flat_map(|i| i.to_le_bytes()).collect();
    let index_accessor = add(index_bytes, None, json!({"componentType": 5123, "count": indices.len(), "type": "SCALAR"}), 34963);
    // Vectors of 8- or 16-bit components (or f32), padded to 4-byte elements.
    let vectors = |values: &[Vec<i64>], component: u32, floats: Option<&[Vec<f32>]>| -> (Vec<u8>, usize) {
        let size = match (floats, component) {
            (Some(_), _) => 4,
            (None, 5120 | 5121) => 1,
            (None, _) => 2,
        };
        let dims = values[0].len();
        let stride = (size * dims).div_ceil(4) * 4;
        let mut out = vec![];
        for (k, v) in values.iter().enumerate() {
            let start = out.len();
            for (c, &q) in v.iter().enumerate() {
                match (floats, size) {
                    (Some(f), _) => out.extend(f[k][c].to_le_bytes()),
                    (None, 1) => out.push(q as u8),
                    (None, _) => out.extend((q as u16).to_le_bytes()),
                }
            }
            out.resize(start + stride, 0);
        }
        (out, stride)
    };
    // An attribute of stored integers `q` (component type `component`), each standing for
    // `value(q)`: as stored in the quantized file, as those f32 values in the twin; `bounds`:
    // with min and max (positions need them).
    let mut attribute = |q: &[Vec<i64>], component: u32, normalized: bool, value: &dyn Fn(i64) -> f32, bounds: bool| {
        let twin: Vec<Vec<f32>> = q.iter().map(|v| v.iter().map(|&c| value(c)).collect()).collect();
        let (bytes, stride) = vectors(q, component, (!quantized).then_some(&twin[..]));
        let dims = q[0].len();
        let mut accessor = json!({"componentType": if quantized { component } else { 5126 }, "count": q.len(), "type": format!("VEC{dims}")});
        if quantized && normalized {
            accessor["normalized"] = json!(true);
        }
        if bounds {
            let column = |c: usize| -> (Value, Value) {
                if quantized {
                    (json!(q.iter().map(|v| v[c]).min()), json!(q.iter().map(|v| v[c]).max()))
                } else {
                    (json!(twin.iter().map(|v| v[c]).fold(f32::MAX, f32::min)), json!(twin.iter().map(|v| v[c]).fold(f32::MIN, f32::max)))
                }
            };
            let (lo, hi): (Vec<Value>, Vec<Value>) = (0..dims).map(column).unzip();
            (accessor["min"], accessor["max"]) = (json!(lo), json!(hi));
        }
        add(bytes, Some(stride), accessor, 34962)
    };
    let mut mesh_json = vec![];
    let mut nodes = vec![];
    for (m, mesh) in meshes.iter().enumerate() {
        let q: Vec<Vec<i64>> = grid.iter().map(|p| p.iter().map(|&c| (mesh.quantize)(c)).collect()).collect();
        let position = attribute(&q, mesh.component, mesh.normalized, &mesh.value, true);
        // Normals as normalized i8 (the grid's, roughly: the loader renormalizes them).
        let nq: Vec<Vec<i64>> = grid.iter().map(|p| vec![(-0.3 * p[0] * 127.0) as i64, (0.2 * p[1] * 127.0) as i64, 120]).collect();
        let normal = attribute(&nq, 5120, true, &|c| (c as f32 / 127.0).max(-1.0), false);
        // UVs as raw u8 grid steps (0..8).
        let uq: Vec<Vec<i64>> = (0..n * n).map(|k| vec![(k % n) as i64, (k / n) as i64]).collect();
        let uv = attribute(&uq, 5121, false, &|c| c as f32, false);
        let mut primitive = json!({"attributes": {"POSITION": position, "NORMAL": normal, "TEXCOORD_0": uv}, "indices": index_accessor});
        let mut mesh_value = json!({"name": mesh.name, "primitives": []});
        if m == 2 {
            // A morph target of normalized i16 offsets, at weight 0.5.
            let dq: Vec<Vec<i64>> = grid.iter().map(|p| vec![0, (0.3 * (3.0 * p[0]).cos() * 32767.0) as i64, (0.25 * p[1] * 32767.0) as i64]).collect();
            let offsets = attribute(&dq, 5122, true, &|c| (c as f32 / 32767.0).max(-1.0), false);
            primitive["targets"] = json!([{"POSITION": offsets}]);
            mesh_value["weights"] = json!([0.5]);
        }
        mesh_value["primitives"] = json!([primitive]);
        mesh_json.push(mesh_value);
        nodes.push(json!({"name": mesh.name, "mesh": m, "matrix": mesh.node.to_cols_array()}));
    }
    nodes.push(json!({"name": "Camera", "camera": 0, "translation": [0.0, 0.0, 5.0]}));
    let mut doc = json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0, 1, 2, 3]}],
        "nodes": nodes,
        "meshes": mesh_json,
        "cameras": [{"type": "perspective", "perspective": {"yfov": 0.9, "znear": 0.1, "zfar": 50.0}}],
        "accessors": accessors,
        "bufferViews": views,
        "buffers": [{"byteLength": bin.len(), "uri": if quantized { "quantized.bin" } else { "twin.bin" }}],
    });
    if quantized && declared {
        doc["extensionsUsed"] = json!(["KHR_mesh_quantization"]);
        doc["extensionsRequired"] = json!(["KHR_mesh_quantization"]);
    }
    let bin_path = tmp(if quantized { "quantized.bin" } else { "twin.bin" });
    std::fs::write(bin_path, &bin).unwrap();
    doc
}

#[test]
fn quantized_meshes_pick_like_their_float_twins() {
    // KHR_mesh_quantization (gltfpack's output): the loader dequantizes as glTF says, so every
    // pick (node, depth, world point, UV) equals the float twin's, whose f32 values the test
    // computes itself; the morphed mesh reads its quantized offsets too.
    let quantized = tmp("quantized.gltf");
    std::fs::write(&quantized, quantized_grid_file(true, true).to_string()).unwrap();
    let twin = tmp("twin.gltf");
    std::fs::write(&twin, quantized_grid_file(false, true).to_string()).unwrap();
    let (w, h) = (96, 48);
    let pixels: Vec<UVec2> = (0..h / 3).flat_map(|j| (0..w / 3).map(move |i| UVec2::new(3 * i + 1, 3 * j + 1))).collect();
    let got = headless_picks(Some(&quantized), &pixels, w, h, &[]);
    let want = headless_picks(Some(&twin), &pixels, w, h, &[]);
    let mut per_mesh = std::collections::BTreeMap::new();
    for (g, t) in got.iter().zip(&want) {
        assert_eq!((&g["hit"], &g["node_name"], &g["depth"]), (&t["hit"], &t["node_name"], &t["depth"]), "{g} vs {t}");
        if g["hit"] == json!(true) {
            for field in ["world", "uv"] {
                let (a, b) = (g[field].as_array().unwrap(), t[field].as_array().unwrap());
                assert!(a.iter().zip(b).all(|(x, y)| (x.as_f64().unwrap() - y.as_f64().unwrap()).abs() < 1e-6), "{field}: {g} vs {t}");
            }
            *per_mesh.entry(g["node_name"].as_str().unwrap().to_owned()).or_insert(0) += 1;
        }
    }
    assert!(["I16", "U16", "I8"].iter().all(|m| per_mesh.get(*m).copied().unwrap_or(0) > 20), "every mesh is picked: {per_mesh:?}");
    // The same file without the extension declared: its integer positions are refused by name.
    let undeclared = tmp("undeclared.gltf");
    std::fs::write(&undeclared, quantized_grid_file(true, false).to_string()).unwrap();
    let err = viewer::gltf_load::load_path(&undeclared).map(|_| ()).expect_err("refused").to_string();
    assert!(err.contains("POSITION") || err.contains("Positions"), "{err}");
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

/// A random glTF scene and what a ray caster needs of it, taken from what was written, not
/// from what the viewer loads: per oracle object its node and `gpu_instance`, placed by
/// world transforms the test composes itself (parent times local, in f64), and the camera's
/// world transform and lens as written.
struct RandomGltf {
    builder: GltfBuilder,
    oracle: oracle_scene::Scene,
    owners: Vec<(usize, Option<u32>)>,
    camera_world: glam::DMat4,
    lens: RandomLens,
}

/// The written camera's lens: perspective (`yfov`, `znear`; the view's aspect), or
/// orthographic (`xmag`, `ymag`, `znear`, `zfar`; stretched over the view).
#[derive(Clone, Copy)]
enum RandomLens {
    Perspective { yfov: f32, znear: f32 },
    Orthographic { xmag: f32, ymag: f32, znear: f32, zfar: f32 },
}

impl RandomLens {
    /// The projection as glTF defines it, into Vulkan's clip space (y down; the perspective
    /// one with reversed depth and no far plane: rays do not depend on depth).
    fn projection(self, aspect: f32) -> Mat4 {
        use glam::Vec4;
        match self {
            RandomLens::Perspective { yfov, znear } => {
                let f = 1.0 / (yfov / 2.0).tan();
                Mat4::from_cols(
                    Vec4::new(f / aspect, 0.0, 0.0, 0.0),
                    Vec4::new(0.0, -f, 0.0, 0.0),
                    Vec4::new(0.0, 0.0, 0.0, -1.0),
                    Vec4::new(0.0, 0.0, znear, 0.0),
                )
            }
            RandomLens::Orthographic { xmag, ymag, znear, zfar } => {
                let depth = zfar - znear;
                Mat4::from_cols(
                    Vec4::new(1.0 / xmag, 0.0, 0.0, 0.0),
                    Vec4::new(0.0, -1.0 / ymag, 0.0, 0.0),
                    Vec4::new(0.0, 0.0, -1.0 / depth, 0.0),
                    Vec4::new(0.0, 0.0, -znear / depth, 1.0),
                )
            }
        }
    }
}

/// A local transform as a matrix or as translation, rotation and scale (one axis mirrored now
/// and then, the scales non-uniform), written either way.
fn random_local(rng: &mut fastrand::Rng, spread: f32, mirror: bool) -> (Mat4, Option<(Vec3, glam::Quat, Vec3)>) {
    let t = Vec3::new(rng.f32() - 0.5, rng.f32() - 0.5, rng.f32() - 0.5) * 2.0 * spread;
    let r = glam::Quat::from_euler(glam::EulerRot::XYZ, rng.f32() * 6.3, rng.f32() * 6.3, rng.f32() * 6.3).normalize();
    let mut s = Vec3::new(0.6 + rng.f32() * 0.8, 0.6 + rng.f32() * 0.8, 0.6 + rng.f32() * 0.8);
    if mirror && rng.u32(..4) == 0 {
        s.y = -s.y;
    }
    let local = Mat4::from_scale_rotation_translation(s, r, t);
    (local, rng.bool().then_some((t, r, s)))
}

/// Writes a node with a local transform from `random_local`: as translation, rotation and
/// scale where it has them, else as its matrix.
fn write_local(b: &mut GltfBuilder, name: &str, mesh: Option<usize>, (local, trs): (Mat4, Option<(Vec3, glam::Quat, Vec3)>), children: &[usize]) -> usize {
    match trs {
        Some(trs) => b.add_trs_node(name, mesh, trs, children),
        None => b.add_node(name, mesh, local, children),
    }
}

/// Adds a node with a random local transform (`random_local`) under the test's own
/// bookkeeping: returns the node and its world transform (`parent` times local, in f64).
fn add_random_node(b: &mut GltfBuilder, rng: &mut fastrand::Rng, name: &str, mesh: Option<usize>, parent: glam::DMat4) -> (usize, glam::DMat4) {
    let local = random_local(rng, 1.2, true);
    (write_local(b, name, mesh, local, &[]), parent * local.0.as_dmat4())
}

/// Seeded random scene: four meshes of one or two primitives (boxes, spheres, tori,
/// cylinders; single- or double-sided; u16 or u32 indices), three groups of nodes two and
/// three levels deep, nine nodes sharing one mesh (drawn as one instanced object, but those
/// that mirror), an `EXT_mesh_gpu_instancing` node, and a camera (every third seed
/// orthographic) under a turned parent.
fn random_gltf(seed: u64) -> RandomGltf {
    let mut rng = fastrand::Rng::with_seed(seed ^ 0x61f7);
    let mut b = GltfBuilder::new();
    let mut oracle = oracle_scene::Scene::default();
    let mut meshes = vec![];
    for m in 0..4 {
        let prims: Vec<picking_vk_host::Primitive> = (0..1 + rng.usize(..2))
            .map(|_| {
                let grey = [0.5 + rng.f32() * 0.5, 0.6, 0.6, 1.0];
                let mut p = match rng.usize(..4) {
                    0 => shapes::cuboid(Vec3::new(0.3 + rng.f32() * 0.5, 0.3 + rng.f32() * 0.5, 0.3 + rng.f32() * 0.5), grey),
                    1 => shapes::sphere(0.5 + rng.f32() * 0.5, 4 + rng.u32(..3), 6 + rng.u32(..3), grey),
                    2 => shapes::torus(0.7, 0.25 + rng.f32() * 0.15, 8, 6, grey),
                    _ => shapes::cylinder(0.35 + rng.f32() * 0.35, 0.8 + rng.f32() * 0.8, 7, grey),
                };
                p.single_sided = rng.bool();
                let shift = Vec3::new(rng.f32() - 0.5, rng.f32() - 0.5, rng.f32() - 0.5) * 0.6;
                p.positions.iter_mut().for_each(|q| *q += shift);
                p
            })
            .collect();
        let storage: Vec<IndexStorage> = prims.iter().map(|_| if rng.bool() { IndexStorage::U16 } else { IndexStorage::U32 }).collect();
        let list: Vec<(&picking_vk_host::Primitive, IndexStorage)> = prims.iter().zip(storage).collect();
        let index = b.add_mesh(&format!("Mesh {m}"), &list);
        let first = oracle.meshes.len();
        oracle.meshes.extend(prims.iter().map(|p| oracle_scene::Mesh { positions: p.positions.clone(), indices: p.indices.clone() }));
        meshes.push((index, first, prims.iter().map(|p| p.single_sided).collect::<Vec<_>>()));
    }
    let mut owners = vec![];
    // An oracle object per primitive of `mesh` at `world`, owned by `node`: glTF fronts wind
    // counter-clockwise, clockwise under a mirroring transform.
    let place =
        |oracle: &mut oracle_scene::Scene, owners: &mut Vec<(usize, Option<u32>)>, node: usize, mesh: usize, world: glam::DMat4, instance: Option<u32>| {
            let (_, first, sides) = &meshes[mesh];
            for (k, &single_sided) in sides.iter().enumerate() {
                let mut object = oracle_scene::Object::new(node as u64 + 1, first + k, world.as_mat4());
                if single_sided {
                    let front = if world.determinant() < 0.0 { ash::vk::FrontFace::CLOCKWISE } else { ash::vk::FrontFace::COUNTER_CLOCKWISE };
                    object.raster = picking_vk::draw::RasterState::default().with_culling(ash::vk::CullModeFlags::BACK, front);
                }
                oracle.objects.push(object);
                owners.push((node, instance));
            }
        };
    // Three groups: a parent, mesh children, and grandchildren under some of them. Nodes are
    // written before their parents (the builder takes children by index), so each group's
    // transforms are drawn top-down first and written bottom-up.
    for g in 0..3 {
        let (group_local, _) = random_local(&mut rng, 1.5, false);
        let group_world = group_local.as_dmat4();
        let mut children = vec![];
        for c in 0..2 + rng.usize(..3) {
            let local = random_local(&mut rng, 1.2, true);
            let world = group_world * local.0.as_dmat4();
            let mesh = rng.usize(..meshes.len());
            let grandchild = rng.bool().then(|| {
                let mesh = rng.usize(..meshes.len());
                let (node, at) = add_random_node(&mut b, &mut rng, &format!("Group {g} child {c} leaf"), Some(meshes[mesh].0), world);
                place(&mut oracle, &mut owners, node, mesh, at, None);
                node
            });
            let below: Vec<usize> = grandchild.into_iter().collect();
            let node = write_local(&mut b, &format!("Group {g} child {c}"), Some(meshes[mesh].0), local, &below);
            place(&mut oracle, &mut owners, node, mesh, world, None);
            children.push(node);
        }
        let group = b.add_node(&format!("Group {g}"), None, group_local, &children);
        b.add_root(group);
    }
    // Nine nodes sharing mesh 0 under one parent (batched as one instanced object).
    let (cluster_local, _) = random_local(&mut rng, 0.5, false);
    let mut members = vec![];
    for k in 0..9 {
        let (node, at) = add_random_node(&mut b, &mut rng, &format!("Shared {k}"), Some(meshes[0].0), cluster_local.as_dmat4());
        place(&mut oracle, &mut owners, node, 0, at, None);
        members.push(node);
    }
    let cluster = b.add_node("Shared", None, cluster_local, &members);
    b.add_root(cluster);
    // A node of mesh 1 drawn once per instance, each in the node's frame.
    let (node_local, _) = random_local(&mut rng, 1.0, true);
    let count = 3 + rng.usize(..4);
    let translations: Vec<Vec3> = (0..count).map(|_| Vec3::new(rng.f32() - 0.5, rng.f32() - 0.5, rng.f32() - 0.5) * 3.0).collect();
    let rotations: Vec<glam::Quat> = (0..count).map(|_| glam::Quat::from_rotation_y(rng.f32() * 6.3) * glam::Quat::from_rotation_x(rng.f32() * 6.3)).collect();
    let scales: Vec<Vec3> = (0..count).map(|k| Vec3::new(if k == 1 { -0.8 } else { 0.8 }, 0.7 + rng.f32() * 0.5, 0.9)).collect();
    let instanced = b.add_node("Instanced", Some(meshes[1].0), node_local, &[]);
    b.set_gpu_instances(instanced, &translations, &rotations, &scales);
    for k in 0..count {
        let instance = Mat4::from_scale_rotation_translation(scales[k], rotations[k], translations[k]);
        place(&mut oracle, &mut owners, instanced, 1, node_local.as_dmat4() * instance.as_dmat4(), Some(k as u32));
    }
    b.add_root(instanced);
    // The camera: 6 to 7 units out, looking at the origin, under a parent turned about Y.
    let (azimuth, elevation, distance) = (rng.f32() * 6.3, rng.f32() * 0.9 - 0.3, 6.0 + rng.f32());
    let eye = Vec3::new(azimuth.cos() * elevation.cos(), elevation.sin(), azimuth.sin() * elevation.cos()) * distance;
    let turn = Mat4::from_rotation_y(rng.f32() * 6.3) * Mat4::from_translation(Vec3::new(0.0, 0.3, 0.0));
    let local = turn.inverse() * glam::camera::rh::view::look_at_mat4(eye, Vec3::ZERO, Vec3::Y).inverse();
    // Every third seed an orthographic camera, its magnifications not the view's shape.
    let lens = if seed % 3 == 2 {
        RandomLens::Orthographic { xmag: 2.5 + rng.f32(), ymag: 2.0 + rng.f32(), znear: 0.1, zfar: 30.0 }
    } else {
        RandomLens::Perspective { yfov: 0.6 + rng.f32() * 0.3, znear: 0.05 }
    };
    let camera = match lens {
        RandomLens::Perspective { yfov, znear } => b.add_camera_node("Camera", yfov, znear, rng.bool().then_some(60.0), local),
        RandomLens::Orthographic { xmag, ymag, znear, zfar } => b.add_orthographic_camera_node("Camera", (xmag, ymag), znear, zfar, local),
    };
    let rig = b.add_node("Rig", None, turn, &[camera]);
    b.add_root_first(rig);
    RandomGltf { builder: b, oracle, owners, camera_world: turn.as_dmat4() * local.as_dmat4(), lens }
}

/// Random glTF scenes (`random_gltf`) picked by the headless viewer against a ray caster built
/// from what the test wrote: the world transforms it composed itself, and a projection made
/// from the camera's written lens (`RandomLens`: a perspective one at the view's aspect, the
/// file giving none, or an orthographic one), Vulkan's y down. Every unambiguous pick names
/// the oracle's node (and `gpu_instance`), at its distance and world position.
#[test]
fn random_gltf_scenes_pick_like_a_ray_caster_built_from_the_written_transforms() {
    let (w, h) = (320, 240);
    let (mut agree, mut hits, mut instanced_hits) = (0, 0, 0);
    for seed in picking_vk_tests::harness::seeds(0..3) {
        let scene = random_gltf(seed);
        let glb = tmp(&format!("random-{seed}.glb"));
        std::fs::write(&glb, scene.builder.to_glb()).unwrap();
        let projection = scene.lens.projection(w as f32 / h as f32);
        let view = scene.camera_world.inverse().as_mat4();
        let oracle = Oracle::new(&scene.oracle, OracleCamera::new(view, projection, [0.0, 0.0, f64::from(w), f64::from(h)]));
        let pixels = random_pixels(seed + 500, 400, w, h);
        let records = headless_picks(Some(&glb), &pixels, w, h, &[]);
        for (r, p) in records.iter().zip(&pixels) {
            let want = oracle.pick(*p);
            if want.ambiguous {
                continue;
            }
            let owner = want.hit.map(|hit| scene.owners[hit.object]);
            assert_eq!(r["node"].as_u64(), owner.map(|(node, _)| node as u64), "seed {seed} pixel {p}: viewer says {r}, oracle {:?}", want.hit);
            assert_eq!(r["hit"].as_bool(), Some(want.hit.is_some()), "seed {seed} pixel {p}");
            if let (Some(hit), Some((_, instance))) = (want.hit, owner) {
                hits += 1;
                assert_eq!(r["gpu_instance"].as_u64(), instance.map(u64::from), "seed {seed} pixel {p}: {r}");
                instanced_hits += usize::from(instance.is_some());
                assert_hit_at(r, hit.distance, hit.point, &format!("seed {seed} pixel {p}"));
            }
            agree += 1;
        }
    }
    eprintln!("random glTF scenes: {agree} unambiguous picks agree with the ray caster, {hits} hits, {instanced_hits} on gpu instances");
    assert!(agree > 700 && hits > 250 && instanced_hits > 0, "{agree} / {hits} / {instanced_hits}");
}
