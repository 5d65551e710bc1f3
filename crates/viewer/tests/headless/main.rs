//! The viewer's headless mode on lavapipe with validation on: picks on the built-in scene and
//! on glTF files written here, checked against the CPU ray oracle; bad files and arguments.
//! One test binary, a module per topic; they share the viewer runs, the oracle and the
//! written scene defined here.

use glam::{Mat4, UVec2, Vec3};
use picking_vk_host::shapes;
use picking_vk_tests::oracle::{Oracle, OracleCamera};
use picking_vk_tests::scene as oracle_scene;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use viewer::gltf_write::{GltfBuilder, IndexStorage};
use viewer::scene::Scene;

mod built_in;
mod cameras;
mod deformation;
mod instancing;
mod materials;
mod quantized;
mod queries;
mod random_scenes;
mod refusals;

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
