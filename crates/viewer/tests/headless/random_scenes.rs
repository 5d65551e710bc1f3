//! Random glTF scenes against a ray caster built from what was written, not from what the
//! viewer loads.

use super::*;

/// A random glTF scene and what a ray caster needs of it, taken from what was written, not
/// from what the viewer loads: per oracle object its node, `gpu_instance` and primitive in the
/// node's mesh, placed by
/// world transforms the test composes itself (parent times local, in f64), and the camera's
/// world transform and lens as written.
struct RandomGltf {
    builder: GltfBuilder,
    oracle: oracle_scene::Scene,
    owners: Vec<(usize, Option<u32>, usize)>,
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
    let place = |oracle: &mut oracle_scene::Scene,
                 owners: &mut Vec<(usize, Option<u32>, usize)>,
                 node: usize,
                 mesh: usize,
                 world: glam::DMat4,
                 instance: Option<u32>| {
        let (_, first, sides) = &meshes[mesh];
        for (k, &single_sided) in sides.iter().enumerate() {
            let mut object = oracle_scene::Object::new(node as u64 + 1, first + k, world.as_mat4());
            if single_sided {
                let front = if world.determinant() < 0.0 { ash::vk::FrontFace::CLOCKWISE } else { ash::vk::FrontFace::COUNTER_CLOCKWISE };
                object.raster = picking_vk::draw::RasterState::default().with_culling(ash::vk::CullModeFlags::BACK, front);
            }
            oracle.objects.push(object);
            owners.push((node, instance, k));
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
/// the oracle's node (and `gpu_instance`, and the primitive of the node's mesh), at its
/// distance and world position.
#[test]
fn random_gltf_scenes_pick_like_a_ray_caster_built_from_the_written_transforms() {
    let (w, h) = (320, 240);
    let (mut agree, mut hits, mut instanced_hits, mut second_primitive_hits) = (0, 0, 0, 0);
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
            assert_eq!(r["node"].as_u64(), owner.map(|(node, ..)| node as u64), "seed {seed} pixel {p}: viewer says {r}, oracle {:?}", want.hit);
            assert_eq!(r["hit"].as_bool(), Some(want.hit.is_some()), "seed {seed} pixel {p}");
            if let (Some(hit), Some((_, instance, primitive))) = (want.hit, owner) {
                hits += 1;
                assert_eq!(r["gpu_instance"].as_u64(), instance.map(u64::from), "seed {seed} pixel {p}: {r}");
                assert_eq!(r["mesh_primitive"].as_u64(), Some(primitive as u64), "seed {seed} pixel {p}: {r}");
                second_primitive_hits += usize::from(primitive > 0);
                instanced_hits += usize::from(instance.is_some());
                assert_hit_at(r, hit.distance, hit.point, &format!("seed {seed} pixel {p}"));
            }
            agree += 1;
        }
    }
    eprintln!("random glTF scenes: {agree} unambiguous picks agree with the ray caster, {hits} hits, {instanced_hits} on gpu instances, {second_primitive_hits} on a mesh's second primitive");
    assert!(agree > 700 && hits > 250 && instanced_hits > 0 && second_primitive_hits > 0, "{agree} / {hits} / {instanced_hits} / {second_primitive_hits}");
}
