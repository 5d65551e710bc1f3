use super::*;
use crate::draw::{BufferRange, IndexWidth};
use ash::vk;
use glam::Vec3;

use crate::draw::geometry::tests::triangle;

fn range() -> BufferRange {
    BufferRange { buffer: vk::Buffer::null(), offset: 0, size: 1 << 20 }
}

#[test]
fn interpolates_point_normal_and_uv() {
    let g = Arc::new(triangle());
    let source = on_triangle(g, None);
    let d = resolve_detail(Some(&source), 0, [0.5, 0.25, 0.25]);
    assert_eq!(d.vertices, Some([0, 1, 2]));
    let s = d.surface.unwrap();
    assert!((s.local_point - DVec3::new(0.5, 1.0, 0.0)).length() < 1e-12);
    assert!((s.face_normal_local.unwrap() - DVec3::Z).length() < 1e-12);
    let expected = (DVec3::Z * 0.5 + DVec3::X * 0.25 + DVec3::Y * 0.25).normalize();
    assert!((s.normal_local.unwrap() - expected).length() < 1e-12);
    assert!((s.uv.unwrap() - Vec2::new(0.25, 0.25)).length() < 1e-7);
}

#[test]
fn normals_stay_perpendicular_under_non_uniform_scale() {
    // A 45-degree slope in XY, stretched 4x along X: the world normal must stay
    // perpendicular to the stretched surface, which a plain model-matrix multiply breaks.
    let g = Arc::new(MeshGeometry { positions: vec![Vec3::ZERO, Vec3::new(1.0, 1.0, 0.0), Vec3::new(0.0, 0.0, 1.0)], ..Default::default() });
    let world = Mat4::from_scale(Vec3::new(4.0, 1.0, 1.0));
    let source = DetailSource {
        triangles: Triangles::NonIndexed { first_vertex: 0, vertex_count: 3 },
        topology: Topology::TriangleList,
        restart: false,
        geometry: Some(g),
        world: Some(world),
        ray: None,
        pixel_world: DVec3::ZERO,
        moved: false,
        deform: None,
    };
    let s = resolve_detail(Some(&source), 0, [1.0 / 3.0; 3]).surface.unwrap();
    let edge_world = DVec3::new(4.0, 1.0, 0.0);
    let n = s.face_normal_world.unwrap();
    assert!(n.dot(edge_world).abs() < 1e-12, "{n:?}");
    assert!(n.dot(DVec3::Z).abs() < 1e-12);
    assert!((n.length() - 1.0).abs() < 1e-12);
    assert!((s.world_point - world.as_dmat4().transform_point3(s.local_point)).length() < 1e-12);
}

/// The detail source of `geometry`'s second triangle (indices 3 to 5), a list, placed by
/// `world`: no ray, no hook, no deformation.
fn on_triangle(geometry: Arc<MeshGeometry>, world: Option<Mat4>) -> DetailSource {
    DetailSource {
        triangles: Triangles::Indexed { range: range(), width: IndexWidth::U32, first_index: 3, index_count: 3, vertex_offset: 0 },
        topology: Topology::TriangleList,
        restart: false,
        geometry: Some(geometry),
        world,
        ray: None,
        pixel_world: DVec3::ZERO,
        moved: false,
        deform: None,
    }
}

/// The detail source of `triangles` drawn with `topology`.
fn src(triangles: Triangles, topology: Topology, restart: bool) -> DetailSource {
    DetailSource { triangles, topology, restart, geometry: None, world: None, ray: None, pixel_world: DVec3::ZERO, moved: false, deform: None }
}

#[test]
fn index_order_honours_first_index_and_vertex_offset() {
    let g = MeshGeometry { positions: vec![Vec3::ZERO; 20], indices: Some(vec![0, 1, 2, 5, 6, 7, 2, 1, 0]), ..Default::default() };
    let t = |first_index, vertex_offset| {
        src(Triangles::Indexed { range: range(), width: IndexWidth::U16, first_index, index_count: 6, vertex_offset }, Topology::TriangleList, false)
    };
    assert_eq!(triangle_vertices(&t(0, 0), Some(&g), 1), Some([5, 6, 7]));
    assert_eq!(triangle_vertices(&t(3, 10), Some(&g), 1), Some([12, 11, 10]));
    assert_eq!(triangle_vertices(&t(3, 0), Some(&g), 2), None, "past index_count");
    assert_eq!(triangle_vertices(&t(0, 0), None, 0), None, "indexed needs geometry");
    let flat = src(Triangles::NonIndexed { first_vertex: 6, vertex_count: 9 }, Topology::TriangleList, false);
    assert_eq!(triangle_vertices(&flat, None, 2), Some([12, 13, 14]));
    assert_eq!(triangle_vertices(&flat, None, 3), None);
}

#[test]
fn strips_and_fans_with_restart_name_their_vertices() {
    // Two strips of four indices (two triangles each) around a u16 restart index.
    let g = MeshGeometry { positions: vec![Vec3::ZERO; 20], indices: Some(vec![0, 1, 2, 3, 0xFFFF, 10, 11, 12, 13]), ..Default::default() };
    let strip =
        src(Triangles::Indexed { range: range(), width: IndexWidth::U16, first_index: 0, index_count: 9, vertex_offset: 1 }, Topology::TriangleStrip, true);
    assert_eq!(triangle_vertices(&strip, Some(&g), 1), Some([2, 4, 3]), "odd strip triangles swap their last two");
    assert_eq!(triangle_vertices(&strip, Some(&g), 2), Some([11, 12, 13]), "restart starts a new strip");
    assert_eq!(triangle_vertices(&strip, Some(&g), 4), None);
    let fan = src(Triangles::NonIndexed { first_vertex: 5, vertex_count: 6 }, Topology::TriangleFan, false);
    assert_eq!(triangle_vertices(&fan, None, 3), Some([9, 10, 5]));
}

#[test]
fn segments_report_the_parameter_nearest_the_ray_and_points_their_vertex() {
    let g = Arc::new(MeshGeometry { positions: vec![Vec3::ZERO, Vec3::new(4.0, 0.0, 0.0), Vec3::new(1.0, 1.0, 0.0)], ..Default::default() });
    let source = |topology| DetailSource {
        triangles: Triangles::NonIndexed { first_vertex: 0, vertex_count: 3 },
        topology,
        restart: false,
        geometry: Some(g.clone()),
        world: Some(Mat4::from_translation(Vec3::new(0.0, 0.0, -5.0))),
        // Down -Z through x = 3: a quarter of the way from vertex 1 to 2... of segment 0: t = 0.75.
        ray: Some(Ray { origin: DVec3::new(3.0, 0.0, 0.0), direction: DVec3::NEG_Z }),
        pixel_world: DVec3::ZERO,
        moved: false,
        deform: None,
    };
    let d = resolve_detail(Some(&source(Topology::LineStrip)), 0, [0.3, 0.7, 0.0]);
    assert_eq!((d.primitive, d.vertices), (PrimitiveKind::Segment, Some([0, 1, 1])));
    assert!((d.barycentrics[1] - 0.75).abs() < 1e-6, "{:?}", d.barycentrics);
    let s = d.surface.unwrap();
    assert!((s.world_point - DVec3::new(3.0, 0.0, -5.0)).length() < 1e-9);
    assert_eq!((s.normal_world, s.face_normal_world), (None, None));
    let d = resolve_detail(Some(&source(Topology::PointList)), 2, [1.0, 0.0, 0.0]);
    assert_eq!((d.primitive, d.vertices), (PrimitiveKind::Point, Some([2, 2, 2])));
    assert!((d.surface.unwrap().local_point - DVec3::new(1.0, 1.0, 0.0)).length() < 1e-12);
}

#[test]
fn deformed_hits_deform_only_their_triangle() {
    use crate::draw::deform::{SkinInfluences, SkinReads};
    // The triangle of `triangle()`; vertex 0 follows joint 0 (identity), vertices 1 and 2
    // joint 1 (a quarter turn about Y and a lift), vertex 3 half of each.
    let mut g = triangle();
    g.skin = vec![SkinInfluences {
        joints: vec![[0, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0]],
        weights: vec![[1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0]],
    }];
    g.morph_targets = vec![vec![Vec3::Z; 4]];
    g.validate().unwrap();
    let turn = Mat4::from_translation(Vec3::new(0.0, 1.0, 0.0)) * Mat4::from_rotation_y(std::f32::consts::FRAC_PI_2);
    let model = Mat4::from_translation(Vec3::new(0.0, 0.0, -3.0));
    let pose = Arc::new(DeformPose { joint_matrices: vec![Mat4::IDENTITY, turn], morph_weights: vec![0.0] });
    let world = |p: Vec3, m: Mat4| model.as_dmat4().transform_point3(m.as_dmat4().transform_point3(p.as_dvec3()));
    let corners = [world(Vec3::ZERO, Mat4::IDENTITY), world(Vec3::new(2.0, 0.0, 0.0), turn), world(Vec3::new(0.0, 4.0, 0.0), turn)];
    // Aim at weights (0.2, 0.3, 0.5) on the deformed triangle.
    let target = corners[0] * 0.2 + corners[1] * 0.3 + corners[2] * 0.5;
    let origin = DVec3::new(3.0, 1.0, 4.0);
    let source = DetailSource {
        ray: Some(Ray { origin, direction: (target - origin).normalize() }),
        deform: Some((pose.clone(), SkinReads { sets: 1, joints: 2 })),
        ..on_triangle(Arc::new(g), Some(model))
    };
    let d = resolve_detail(Some(&source), 0, [0.21, 0.29, 0.5]);
    for (got, want) in d.barycentrics.iter().zip([0.2, 0.3, 0.5]) {
        assert!((got - want).abs() < 1e-6, "{:?}", d.barycentrics);
    }
    let s = d.surface.unwrap();
    assert!((s.world_point - target).length() < 1e-6, "{:?}", s.world_point);
    assert!((s.local_point - DVec3::new(0.6, 2.0, 0.0)).length() < 1e-6, "rest space: {:?}", s.local_point);
    let n = s.face_normal_world.unwrap();
    assert!(n.dot(corners[1] - corners[0]).abs() < 1e-9 && n.dot(corners[2] - corners[0]).abs() < 1e-9, "the deformed face's normal");
    assert!((s.face_normal_local.unwrap() - DVec3::Z).length() < 1e-12, "the rest face's normal");
    // Normals: vertex 0 keeps +Z, vertices 1 and 2 turn to +X (a quarter turn about Y).
    let turned = |n: DVec3| turn.as_dmat4().transform_vector3(n);
    let expected = (DVec3::Z * 0.2 + turned(DVec3::X) * 0.3 + turned(DVec3::Y) * 0.5).normalize();
    assert!((s.normal_world.unwrap() - expected).length() < 1e-6, "{:?} vs {expected:?}", s.normal_world);
    // A non-zero morph weight moves the surface, and normals become unavailable.
    let morphed = DetailSource {
        deform: Some((Arc::new(DeformPose { morph_weights: vec![0.5], ..(*pose).clone() }), SkinReads { sets: 1, joints: 2 })),
        ..source.clone()
    };
    let s = resolve_detail(Some(&morphed), 0, [0.2, 0.3, 0.5]).surface.unwrap();
    assert_eq!((s.normal_world, s.normal_local), (None, None));
    assert!(s.face_normal_world.is_some());
    // A skin reading a second set of influences the geometry lacks: no surface (the GPU moved
    // the vertices by joints the CPU was not given).
    let two_sets = DetailSource { deform: Some((pose.clone(), SkinReads { sets: 2, joints: 2 })), ..source.clone() };
    assert!(resolve_detail(Some(&two_sets), 0, [0.2, 0.3, 0.5]).surface.is_none());
    // A second registered set the skin does not read is left out of the blend: the same
    // surface as with one set.
    let mut extra = (*source.geometry.clone().unwrap()).clone();
    extra.skin.push(SkinInfluences { joints: vec![[1, 0, 0, 0]; 4], weights: vec![[1.0, 0.0, 0.0, 0.0]; 4] });
    let unread = DetailSource { geometry: Some(Arc::new(extra)), ..source.clone() };
    let p = |s: &DetailSource| resolve_detail(Some(s), 0, [0.2, 0.3, 0.5]).surface.unwrap().world_point;
    assert!((p(&unread) - p(&source)).length() < 1e-12, "{:?} vs {:?}", p(&unread), p(&source));
}

#[test]
fn ray_refines_barycentrics_on_the_known_triangle() {
    let g = Arc::new(triangle());
    let world = Mat4::from_translation(Vec3::new(0.0, 0.0, -3.0)) * Mat4::from_scale(Vec3::new(2.0, 1.0, 1.0));
    // Aim at the world point with weights (0.2, 0.3, 0.5): local (0.6, 2.0, 0) -> world (1.2, 2.0, -3).
    let target = DVec3::new(1.2, 2.0, -3.0);
    let origin = DVec3::new(0.3, -0.4, 2.0);
    let ray = Ray { origin, direction: (target - origin).normalize() };
    let source = DetailSource { ray: Some(ray), ..on_triangle(g, Some(world)) };
    let d = resolve_detail(Some(&source), 0, [0.2001, 0.2999, 0.5]);
    assert_eq!(d.gpu_barycentrics, [0.2001, 0.2999, 0.5]);
    for (got, want) in d.barycentrics.iter().zip([0.2, 0.3, 0.5]) {
        assert!((got - want).abs() < 1e-6, "{:?}", d.barycentrics);
    }
    assert!((d.surface.unwrap().world_point - target).length() < 1e-6);
    // Moved by a world-adjust hook: the GPU's weights, the moved point, no normals.
    let moved = DVec3::new(1.2, 2.5, -3.0);
    let adjusted = DetailSource { pixel_world: moved, moved: true, ..source };
    let d = resolve_detail(Some(&adjusted), 0, [0.2001, 0.2999, 0.5]);
    assert_eq!(d.barycentrics, d.gpu_barycentrics);
    let s = d.surface.unwrap();
    assert_eq!(s.world_point, moved);
    assert!((s.local_point - DVec3::new(0.6002, 1.9996, 0.0)).length() < 1e-3, "the rest-space point: {:?}", s.local_point);
    assert_eq!((s.face_normal_world, s.normal_world, s.face_normal_local), (None, None, None));
}

#[test]
fn an_instance_the_cpu_cannot_place_keeps_its_local_surface_and_the_world_point_from_depth() {
    // An instanced draw whose transforms only the GPU knows: no world matrix.
    let from_depth = DVec3::new(10.0, -2.0, 7.5);
    let source = DetailSource {
        ray: Some(Ray { origin: DVec3::new(0.1, 0.2, 5.0), direction: DVec3::NEG_Z }),
        pixel_world: from_depth,
        ..on_triangle(Arc::new(triangle()), None)
    };
    let d = resolve_detail(Some(&source), 0, [0.5, 0.25, 0.25]);
    assert_eq!(d.barycentrics, d.gpu_barycentrics, "no world matrix to refine them with");
    let s = d.surface.unwrap();
    assert_eq!((s.world_point, s.face_normal_world, s.normal_world), (from_depth, None, None));
    assert!((s.local_point - DVec3::new(0.5, 1.0, 0.0)).length() < 1e-12);
    assert!(s.face_normal_local.is_some() && s.normal_local.is_some());
    // A segment of such an instance: the GPU's parameter, the world point from depth.
    let segment = DetailSource { triangles: Triangles::NonIndexed { first_vertex: 0, vertex_count: 3 }, topology: Topology::LineStrip, ..source };
    let d = resolve_detail(Some(&segment), 0, [0.3, 0.7, 0.0]);
    assert_eq!(d.barycentrics, [0.3, 0.7, 0.0]);
    assert_eq!(d.surface.unwrap().world_point, from_depth);
}

#[test]
fn a_mirroring_model_signs_deformed_and_rigid_face_normals_alike() {
    // A morphed draw at rest (weight 0) deforms to its rest triangle: its world face normal
    // must be the rigid draw's, the local +Z under the inverse transpose, also where the model
    // mirrors (the world edges' cross product then points the other way).
    let mut g = triangle();
    g.morph_targets = vec![vec![Vec3::ONE; 4]];
    g.validate().unwrap();
    let model = Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0)) * Mat4::from_translation(Vec3::new(0.5, 0.0, -3.0));
    let rigid = on_triangle(Arc::new(g), Some(model));
    let pose = Arc::new(DeformPose { joint_matrices: vec![], morph_weights: vec![0.0] });
    let deformed = DetailSource { deform: Some((pose, SkinReads { sets: 0, joints: 0 })), ..rigid.clone() };
    let n = |s: &DetailSource| resolve_detail(Some(s), 0, [0.2, 0.3, 0.5]).surface.unwrap().face_normal_world.unwrap();
    assert!((n(&rigid) - DVec3::Z).length() < 1e-12, "{:?}", n(&rigid));
    assert!((n(&deformed) - DVec3::Z).length() < 1e-12, "{:?}", n(&deformed));
}

#[test]
fn a_singular_model_keeps_the_surface_without_world_normals() {
    // A decal flattened to the z = 0 plane: no inverse transpose, but the point and UV stand.
    let world = Mat4::from_scale(Vec3::new(1.0, 1.0, 0.0));
    let source = on_triangle(Arc::new(triangle()), Some(world));
    let s = resolve_detail(Some(&source), 0, [0.5, 0.25, 0.25]).surface.expect("the surface of a singular model");
    assert!((s.world_point - DVec3::new(0.5, 1.0, 0.0)).length() < 1e-12, "{:?}", s.world_point);
    assert_eq!((s.face_normal_world, s.normal_world), (None, None));
    assert!(s.uv.is_some() && s.face_normal_local.is_some());
}
