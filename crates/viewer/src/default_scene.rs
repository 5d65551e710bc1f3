//! The built-in scene, shipped as `assets/default_scene.glb` and embedded in the binary. It is
//! made to show off picking: distinct meshes, an instanced field (many nodes sharing one mesh),
//! thin and small objects, overlapping depths, a node hierarchy with a camera, an
//! alpha-tested fence picked through its holes, and a single-sided wall seen from behind
//! (invisible, and not picked, until the view goes round it), and a skinned tube that bends
//! back and forth (an animation over its joint chain), picked where it is drawn, a polyline
//! path on the ground and a floating point cloud (line and point primitives).
//! `viewer --write-default-scene PATH` regenerates it; a test keeps the asset in step.

use crate::gltf_write::{ChannelSpec, GltfBuilder, IndexStorage};
use glam::{Mat4, Quat, Vec3};
use picking_vk_host::{shapes, SamplerDesc, TextureData};

/// A fence's texture: slats and two rails, transparent between them (alpha 0), 64 x 64.
fn fence_texture() -> TextureData {
    let size = 64u32;
    let mut rgba = Vec::with_capacity((size * size * 4) as usize);
    for y in 0..size {
        for x in 0..size {
            let slat = x % 16 < 9;
            let rail = (8..14).contains(&y) || (48..54).contains(&y);
            let grain = ((x * 7 + y * 3) % 11) as u8 * 4;
            let opaque = slat || rail;
            rgba.extend([150 + grain, 105 + grain / 2, 60, if opaque { 255 } else { 0 }]);
        }
    }
    TextureData { rgba: rgba.into(), width: size, height: size, sampler: SamplerDesc { linear_mag: false, linear_min: false, ..SamplerDesc::default() } }
}

/// A tube of `radius` standing `height` tall over `bones` joints: its vertices weighted to
/// the two nearest joints (linear blend), rings at every tenth of a bone.
pub fn skinned_tube(height: f32, radius: f32, bones: u32, color: [f32; 4]) -> picking_vk_host::Primitive {
    let length = height / bones as f32;
    let mut p = shapes::tube(radius, height, bones * 4, 12, color);
    let mut set = picking_vk::deform::SkinInfluences::default();
    for q in &p.positions {
        // Between the centres of bones k and k + 1.
        let along = (q.y / length - 0.5).clamp(0.0, bones as f32 - 1.0);
        let k = (along.floor() as u32).min(bones.saturating_sub(2));
        let f = (along - k as f32).clamp(0.0, 1.0);
        set.joints.push([k as u16, (k + 1).min(bones - 1) as u16, 0, 0]);
        set.weights.push([1.0 - f, f, 0.0, 0.0]);
    }
    p.skin = vec![set];
    p
}

/// The joint chain of a [`skinned_tube`] placed at `base`: joint `k` sits `k` bone lengths up
/// its parent chain and turns about Z by `angles[k]`; returns (joint nodes, inverse binds).
/// The inverse binds map the tube's own vertices (standing on the origin) to each joint, so
/// at rest (all angles 0) the tube stands on `base`.
pub fn tube_joints(b: &mut GltfBuilder, name: &str, base: Vec3, height: f32, angles: &[f32]) -> (Vec<usize>, Vec<Mat4>) {
    let length = height / angles.len() as f32;
    let mut joints: Vec<usize> = vec![];
    // Built from the tip down, so each joint can name its child.
    for k in (0..angles.len()).rev() {
        let t = if k == 0 { base } else { Vec3::new(0.0, length, 0.0) };
        let children: Vec<usize> = joints.first().copied().into_iter().collect();
        let node = b.add_trs_node(&format!("{name} joint {k}"), None, (t, Quat::from_rotation_z(angles[k]), Vec3::ONE), &children);
        joints.insert(0, node);
    }
    let inverse_bind = (0..angles.len()).map(|k| Mat4::from_translation(Vec3::new(0.0, -length * k as f32, 0.0))).collect();
    (joints, inverse_bind)
}

/// The checked-in asset.
pub const DEFAULT_SCENE_GLB: &[u8] = include_bytes!("../../../assets/default_scene.glb");

pub fn build() -> GltfBuilder {
    let mut b = GltfBuilder::new();
    let u16s = IndexStorage::U16;
    let ground = b.add_mesh("Ground", &[(&shapes::plane(8.0, [0.55, 0.57, 0.6, 1.0]), u16s)]);
    let cube = b.add_mesh("Cube", &[(&shapes::cuboid(Vec3::splat(0.5), [0.85, 0.3, 0.25, 1.0]), u16s)]);
    let ball = b.add_mesh("Sphere", &[(&shapes::sphere(0.6, 24, 32, [0.25, 0.55, 0.9, 1.0]), IndexStorage::U32)]);
    let ring = b.add_mesh("Torus", &[(&shapes::torus(0.55, 0.18, 32, 16, [0.95, 0.75, 0.2, 1.0]), u16s)]);
    // One mesh, two primitives: a lamp post with a shade, picked as one object.
    let lamp =
        b.add_mesh("Lamp", &[(&shapes::cylinder(0.03, 1.6, 12, [0.2, 0.2, 0.22, 1.0]), u16s), (&shapes::sphere(0.15, 10, 14, [1.0, 0.95, 0.7, 1.0]), u16s)]);
    let pole = b.add_mesh("Pole", &[(&shapes::cylinder(0.01, 1.2, 8, [0.9, 0.9, 0.9, 1.0]), u16s)]);
    let sheet = b.add_mesh("Sheet", &[(&shapes::cuboid(Vec3::new(0.5, 0.4, 0.004), [0.4, 0.85, 0.5, 1.0]), u16s)]);
    let pebble = b.add_mesh("Pebble", &[(&shapes::sphere(0.035, 6, 8, [0.95, 0.4, 0.8, 1.0]), u16s)]);
    let crate_mesh = b.add_mesh("Crate", &[(&shapes::cuboid(Vec3::splat(0.16), [0.6, 0.45, 0.3, 1.0]), u16s)]);
    let fence_texture = b.add_texture(&fence_texture());
    let fence_board = picking_vk_host::Primitive { texture: Some(fence_texture), alpha_cutoff: Some(0.5), ..shapes::plane(1.0, [1.0; 4]) };
    let fence = b.add_mesh("Fence", &[(&fence_board, u16s)]);
    let wall_board = picking_vk_host::Primitive { single_sided: true, ..shapes::plane(1.0, [0.55, 0.75, 0.95, 1.0]) };
    let wall = b.add_mesh("One-sided wall", &[(&wall_board, u16s)]);

    let mut roots = vec![];
    let t = Mat4::from_translation;
    roots.push(b.add_node("Ground", Some(ground), Mat4::IDENTITY, &[]));
    // A turntable: children inherit its rotation and offset.
    let child_cube = b.add_node("Cube", Some(cube), t(Vec3::new(-1.6, 0.5, 0.0)) * Mat4::from_rotation_y(0.5), &[]);
    let child_ball = b.add_node("Sphere", Some(ball), t(Vec3::new(0.0, 0.6, 0.2)), &[]);
    let child_ring = b.add_node("Torus", Some(ring), t(Vec3::new(1.5, 0.75, 0.0)) * Mat4::from_rotation_x(1.2), &[]);
    roots.push(b.add_node("Turntable", None, t(Vec3::new(0.0, 0.0, 0.5)) * Mat4::from_rotation_y(0.2), &[child_cube, child_ball, child_ring]));
    // Overlapping depths: a thin glass-like sheet in front of the sphere, and two
    // interpenetrating boxes.
    roots.push(b.add_node("Sheet", Some(sheet), t(Vec3::new(-0.2, 0.7, 1.6)) * Mat4::from_rotation_y(-0.3), &[]));
    roots.push(b.add_node("Box A", Some(cube), t(Vec3::new(2.6, 0.45, 2.0)) * Mat4::from_scale(Vec3::new(0.9, 0.9, 0.9)), &[]));
    roots.push(b.add_node("Box B", Some(cube), t(Vec3::new(2.9, 0.6, 2.3)) * Mat4::from_rotation_y(0.8) * Mat4::from_scale(Vec3::new(0.6, 1.2, 0.6)), &[]));
    // Thin and small things.
    roots.push(b.add_node("Lamp", Some(lamp), t(Vec3::new(-2.8, 0.0, 1.8)), &[]));
    roots.push(b.add_node("Pole", Some(pole), t(Vec3::new(0.9, 0.0, 2.4)) * Mat4::from_rotation_z(0.15), &[]));
    for k in 0..5 {
        let p = Vec3::new(-1.0 + k as f32 * 0.22, 0.035, 2.7 + (k % 2) as f32 * 0.1);
        roots.push(b.add_node(&format!("Pebble {k}"), Some(pebble), t(p), &[]));
    }
    // An instanced field: 6 x 6 crates sharing one mesh, drawn as one instanced draw.
    for i in 0..36 {
        let (x, z) = ((i % 6) as f32, (i / 6) as f32);
        let pose = Mat4::from_scale_rotation_translation(
            Vec3::splat(0.8 + 0.06 * ((i * 7) % 5) as f32),
            Quat::from_rotation_y(i as f32 * 0.4),
            Vec3::new(-2.2 + x * 0.45, 0.14, -3.6 + z * 0.45),
        );
        roots.push(b.add_node(&format!("Crate {i}"), Some(crate_mesh), pose, &[]));
    }
    // The fence stands up (its plane turned to face the camera) in front of the crate field.
    let upright = Mat4::from_rotation_x(std::f32::consts::FRAC_PI_2);
    roots.push(b.add_node("Fence", Some(fence), t(Vec3::new(-1.2, 0.5, -1.0)) * upright * Mat4::from_scale(Vec3::new(1.0, 1.0, 0.5)), &[]));
    // The wall faces away from the camera, in front of the two boxes: seen from behind, it is
    // culled in both passes, and the boxes show (and pick) through it.
    let away = Mat4::from_rotation_x(-std::f32::consts::FRAC_PI_2);
    roots.push(b.add_node("One-sided wall", Some(wall), t(Vec3::new(2.7, 0.6, 3.1)) * away * Mat4::from_scale(Vec3::new(0.7, 1.0, 0.6)), &[]));
    // A winding path (a line strip) on the ground, and a ball of points in the air.
    let path: Vec<Vec3> = (0..40)
        .map(|i| {
            let s = i as f32 / 39.0;
            Vec3::new(-3.4 + 1.0 * s + 0.25 * (s * 12.0).sin(), 0.02, -1.5 + 2.7 * s)
        })
        .collect();
    let path_prim = picking_vk_host::Primitive {
        normals: vec![Vec3::Y; path.len()],
        positions: path,
        color: [0.95, 0.9, 0.2, 1.0],
        topology: picking_vk::draw::Topology::LineStrip,
        ..Default::default()
    };
    let path_mesh = b.add_mesh("Path", &[(&path_prim, u16s)]);
    roots.push(b.add_node("Path", Some(path_mesh), Mat4::IDENTITY, &[]));
    let cloud: Vec<Vec3> = (0..300u32)
        .map(|i| {
            // A Fibonacci sphere, shells at three radii.
            let k = i as f32 + 0.5;
            let y = 1.0 - 2.0 * k / 300.0;
            let r = (1.0 - y * y).sqrt();
            let a = k * 2.399_963;
            Vec3::new(r * a.cos(), y, r * a.sin()) * (0.2 + 0.1 * (i % 3) as f32)
        })
        .collect();
    let cloud_prim = picking_vk_host::Primitive {
        normals: vec![Vec3::Y; cloud.len()],
        positions: cloud,
        color: [0.2, 0.9, 0.95, 1.0],
        topology: picking_vk::draw::Topology::PointList,
        ..Default::default()
    };
    let cloud_mesh = b.add_mesh("Point cloud", &[(&cloud_prim, u16s)]);
    roots.push(b.add_node("Point cloud", Some(cloud_mesh), t(Vec3::new(2.5, 1.5, -1.0)), &[]));
    // Signposts: billboards the viewer draws and picks through a contributor.
    for (k, (p, color)) in [
        (Vec3::new(-0.6, 1.9, -2.2), [0.95, 0.35, 0.3, 1.0]),
        (Vec3::new(0.4, 2.1, -2.6), [0.3, 0.8, 0.4, 1.0]),
        (Vec3::new(1.4, 1.9, -2.2), [0.35, 0.5, 0.95, 1.0]),
    ]
    .into_iter()
    .enumerate()
    {
        let node = b.add_node(&format!("Signpost {k}"), None, t(p), &[]);
        b.set_extras(node, serde_json::json!({ "picking_vk_billboard": { "size": 0.45, "color": color } }));
        roots.push(node);
    }
    // The bending tube: four joints under a skinned mesh, swaying over four seconds.
    let tube_mesh = b.add_mesh("Bending tube", &[(&skinned_tube(1.4, 0.09, 4, [0.55, 0.35, 0.85, 1.0]), u16s)]);
    let (joints, inverse_bind) = tube_joints(&mut b, "Bending tube", Vec3::new(-1.9, 0.0, 2.9), 1.4, &[0.0; 4]);
    let tube = b.add_node("Bending tube", Some(tube_mesh), Mat4::IDENTITY, &[]);
    b.add_skin(tube, &joints, &inverse_bind);
    roots.extend([joints[0], tube]);
    let times = [0.0, 1.0, 2.0, 3.0, 4.0];
    let sway = [0.0f32, 0.35, 0.0, -0.35, 0.0];
    let keys: Vec<Vec<f32>> = (1..4).map(|k| sway.iter().flat_map(|a| Quat::from_rotation_z(a * (1.0 + 0.2 * k as f32)).to_array()).collect()).collect();
    let channels: Vec<ChannelSpec<'_>> = keys
        .iter()
        .enumerate()
        .map(|(i, v)| ChannelSpec { node: joints[i + 1], path: "rotation", interpolation: "LINEAR", times: &times, values: v })
        .collect();
    b.add_animation("Sway", &channels);
    let eye = Vec3::new(0.5, 3.6, 7.2);
    let camera = glam::camera::rh::view::look_at_mat4(eye, Vec3::new(0.0, 0.4, -0.4), Vec3::Y).inverse();
    roots.push(b.add_camera_node("Camera", 0.75, 0.1, Some(60.0), camera));
    for r in roots {
        b.add_root(r);
    }
    b
}
