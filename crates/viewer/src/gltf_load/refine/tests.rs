use super::*;
use crate::scene::{CameraDesc, Lens, MeshAsset, Node};
use glam::{Mat4, Vec2, Vec3, Vec4};
use picking_vk::draw::Topology;
use std::collections::HashMap;

/// A square of half-size `s` on y = 0, as two counter-clockwise triangles seen from +y.
fn ground(s: f32) -> Primitive {
    let positions = vec![Vec3::new(-s, 0.0, -s), Vec3::new(s, 0.0, -s), Vec3::new(s, 0.0, s), Vec3::new(-s, 0.0, s)];
    let uvs = Some(vec![Vec2::new(0.0, 0.0), Vec2::new(1.0, 0.0), Vec2::new(1.0, 1.0), Vec2::new(0.0, 1.0)]);
    Primitive { positions, normals: vec![Vec3::Y; 4], uvs, indices: Some(vec![0, 2, 1, 0, 3, 2]), color: [1.0; 4], ..Default::default() }
}

fn focus_at(eye: DVec3) -> Focus {
    Focus { world: DMat4::IDENTITY, eye, floor: 0.01, ratio: RATIO }
}

fn split(p: &Primitive, focus: &Focus) -> (Primitive, SourceFaces) {
    match refine(p, focus, DVec3::ZERO, usize::MAX) {
        Refined::Split(split) => *split,
        Refined::Unchanged => panic!("not split"),
        Refined::TooLarge(_) => panic!("too large"),
    }
}

/// Every edge by its end points' world positions (what the rasterizer's watertightness
/// needs): +1 one way, -1 the other, so an inner edge of a consistently wound surface sums
/// to 0.
fn add_edges(p: &Primitive, world: Mat4, count: &mut HashMap<([u32; 3], [u32; 3]), i32>) {
    for t in 0..p.triangle_count() {
        let [a, b, c] = p.triangle(t).map(|i| world.transform_point3(p.positions[i as usize]).to_array().map(f32::to_bits));
        for (u, v) in [(a, b), (b, c), (c, a)] {
            *count.entry((u.min(v), u.max(v))).or_insert(0) += if u < v { 1 } else { -1 };
        }
    }
}

/// Watertight: every edge inside the square of half-size `half` is shared by two triangles
/// wound apart; the only open edges lie on its border.
fn assert_watertight(edges: &HashMap<([u32; 3], [u32; 3]), i32>, half: f32) {
    let border = |q: [u32; 3]| f32::from_bits(q[0]).abs() == half || f32::from_bits(q[2]).abs() == half;
    for (&(u, v), &sum) in edges {
        if !(border(u) && border(v)) {
            assert_eq!(sum, 0, "edge {u:?}-{v:?} is not shared by two triangles wound apart");
        }
    }
}

#[test]
fn a_huge_ground_is_split_near_the_camera_without_cracks() {
    let colors = vec![Vec4::new(1.0, 0.0, 0.0, 1.0), Vec4::new(0.0, 1.0, 0.0, 0.5), Vec4::new(0.0, 0.0, 1.0, 0.0), Vec4::new(0.2, 0.4, 0.6, 0.8)];
    let source = Primitive { colors: Some(colors), ..ground(1.0e6) };
    let focus = focus_at(DVec3::new(0.3, 1.4, 0.2));
    assert!(needs_split(&source, &focus));
    let (p, faces) = split(&source, &focus);
    let n = p.triangle_count();
    assert!(n > 20 && n < 2000, "{n} triangles");
    let mut edges = HashMap::new();
    add_edges(&p, Mat4::IDENTITY, &mut edges);
    assert_watertight(&edges, 1.0e6);
    // Without shared vertices (each triangle its own three), the pieces still meet.
    let (loose, _) = split(&picking_vk_host::shapes::plane(1.0e6, [1.0; 4]), &focus);
    let mut edges = HashMap::new();
    add_edges(&loose, Mat4::IDENTITY, &mut edges);
    assert_watertight(&edges, 1.0e6);
    // Same surface: every vertex on the plane, areas summing to the square's, same winding.
    assert!(p.positions.iter().all(|q| q.y == 0.0));
    let area: f64 = (0..n)
        .map(|t| {
            let [a, b, c] = p.triangle(t).map(|i| p.positions[i as usize].as_dvec3());
            let normal = (b - a).cross(c - a);
            assert!(normal.y > 0.0, "triangle {t} keeps the winding");
            normal.y * 0.5
        })
        .sum();
    assert!((area / 4.0e12 - 1.0).abs() < 1e-9, "{area}");
    // Near the camera the pieces are small: the one under it spans no more than an edge
    // may (RATIO times the floor).
    let below = DVec3::new(0.3, 0.0, 0.2);
    let under = (0..n).find(|&t| distance_to_triangle(below, p.triangle(t).map(|i| p.positions[i as usize].as_dvec3())) == 0.0).unwrap();
    let size = p.triangle(under).map(|i| (p.positions[i as usize].as_dvec3() - below).length()).into_iter().fold(0.0, f64::max);
    assert!(size <= RATIO * 0.01, "the triangle under the camera reaches {size} units");
    // Each piece knows its source: its corners, placed by their weights in the source
    // triangle, are its vertices; attributes blend alike.
    let in_source = |vertices: [u32; 3], w: [f32; 3]| -> (DVec3, Vec2, Vec4) {
        let at = (0..3).map(|j| source.positions[vertices[j] as usize].as_dvec3() * f64::from(w[j])).sum();
        let uv = (0..3).map(|j| source.uvs.as_ref().unwrap()[vertices[j] as usize] * w[j]).sum();
        (at, uv, (0..3).map(|j| source.colors.as_ref().unwrap()[vertices[j] as usize] * w[j]).sum())
    };
    for t in 0..n {
        let tri = p.triangle(t);
        let third = 1.0 / 3.0;
        let (from, w, vertices) = faces.source_of(t as u32, [third; 3]).unwrap();
        assert_eq!(vertices, source.triangle(from as usize));
        // The piece's centre, named in the source triangle, is the piece's centre.
        let centre: DVec3 = tri.iter().map(|&i| p.positions[i as usize].as_dvec3() * f64::from(third)).sum();
        assert!((in_source(vertices, w).0 - centre).length() < 1.0, "triangle {t}");
        for (k, &vertex) in tri.iter().enumerate() {
            let (at, uv, color) = in_source(vertices, faces.corners[t][k]);
            assert!((at - p.positions[vertex as usize].as_dvec3()).length() < 1.0, "triangle {t} corner {k}");
            assert!((uv - p.uvs.as_ref().unwrap()[vertex as usize]).length() < 1e-6);
            assert!((color - p.colors.as_ref().unwrap()[vertex as usize]).length() < 1e-6, "colours blend as the vertices do");
        }
    }
    // The file's vertices keep their indices.
    assert_eq!(&p.positions[..4], &source.positions[..]);
}

#[test]
fn only_triangles_far_larger_than_their_distance_need_splitting() {
    let near = focus_at(DVec3::new(0.3, 1.4, 0.2));
    // A 20-unit ground under the camera: f32 is exact enough, and no edge splits.
    assert!(!needs_split(&ground(10.0), &near));
    assert!(matches!(refine(&ground(10.0), &near, DVec3::ZERO, usize::MAX), Refined::Unchanged));
    // A 6-unit floor under a camera whose znear is 1e-3: edges split, none needs to.
    assert!(!needs_split(&ground(3.0), &Focus { floor: 1e-3, ..near }));
    // The huge ground seen from high above: no need (its far corners are 141 times its
    // distance), and its edges, asked anyway, split far less than from near it.
    let high = focus_at(DVec3::new(0.0, 1.0e4, 0.0));
    assert!(!needs_split(&ground(1.0e6), &high));
    assert!(split(&ground(1.0e6), &high).0.triangle_count() * 2 < split(&ground(1.0e6), &near).0.triangle_count());
    // A 100-unit floor two nodes draw: edges the rule would cut, but no need, so the mesh
    // stays shared (and instanced where more nodes draw it).
    let mut floors = scene_of(vec![ground(50.0)], &[(0, Mat4::IDENTITY), (0, Mat4::from_translation(Vec3::X * 100.0))], Vec3::new(0.3, 1.4, 0.2));
    split_scene(&mut floors);
    assert_eq!(floors.meshes.len(), 1);
    assert!(floors.meshes[0].source_faces.is_empty());
    // Points are not split.
    let points = Primitive { topology: Topology::PointList, ..ground(1.0e6) };
    assert!(!needs_split(&points, &near));
    assert!(matches!(refine(&points, &near, DVec3::ZERO, usize::MAX), Refined::Unchanged));
}

#[test]
fn long_lines_split_into_pieces_that_chain_back_to_their_segments() {
    // A strip of two diagonal segments 2e6 long, one passing 0.5 from the camera, the other
    // far from it, and a short one the rule leaves whole.
    let positions =
        vec![Vec3::new(-1.0e6, -0.5, -1.0e6), Vec3::new(1.0e6, -0.5, 1.0e6), Vec3::new(1.0e6, 3.0e5, -1.0e6), Vec3::new(1.0e6, 3.0e5 + 1.0, -1.0e6)];
    let strip = Primitive { positions, normals: vec![Vec3::Y; 4], topology: Topology::LineStrip, color: [1.0; 4], ..Default::default() };
    let focus = focus_at(DVec3::ZERO);
    assert!(needs_split(&strip, &focus));
    let (lines, faces) = split(&strip, &focus);
    assert_eq!(lines.topology, Topology::LineList);
    let ix = lines.indices.as_ref().unwrap();
    let pieces = ix.len() / 2;
    assert_eq!((faces.face.len(), &faces.source_vertices), (pieces, &vec![[0, 1, 1], [1, 2, 2], [2, 3, 3]]));
    assert!(pieces < 200, "{pieces} pieces");
    let at = |i: u32| lines.positions[i as usize].as_dvec3();
    for source in 0..3u32 {
        // The pieces of each segment, in order, run from its start to its end without gaps.
        let mine: Vec<usize> = (0..pieces).filter(|&k| faces.face[k] == source).collect();
        let mut t = 0.0f32;
        for &k in &mine {
            let [c0, c1, c2] = faces.corners[k];
            assert_eq!((c0[0] + c0[1], c1[0] + c1[1], c2), (1.0, 1.0, [0.0; 3]));
            assert_eq!(c0[1], t, "piece {k} starts where the last ended");
            t = c1[1];
            // Its end points are the source segment's at those weights.
            let [a, b, _] = faces.source_vertices[source as usize].map(|v| strip.positions[v as usize].as_dvec3());
            for (corner, index) in [(c0, ix[2 * k]), (c1, ix[2 * k + 1])] {
                let want = a.lerp(b, f64::from(corner[1]));
                assert!((at(index) - want).length() <= 1e-7 * want.length().max(1.0), "piece {k}");
            }
            // A hit halfway along the piece maps halfway between its weights.
            let (from, w, _) = faces.source_of(k as u32, [0.5, 0.5, 0.0]).unwrap();
            assert_eq!((from, w), (source, [1.0 - (c0[1] + c1[1]) / 2.0, (c0[1] + c1[1]) / 2.0, 0.0]));
        }
        assert_eq!(t, 1.0, "segment {source} is covered to its end");
        // The near segment is cut finely close to the camera; the short one not at all.
        match source {
            0 => assert!(mine.iter().any(|&k| (at(ix[2 * k + 1]) - at(ix[2 * k])).length() < 1e4), "pieces near the camera are short"),
            2 => assert_eq!(mine.len(), 1),
            _ => {}
        }
    }
}

#[test]
fn a_camera_over_the_middle_of_one_huge_triangle_splits_it() {
    // No edge passes near the camera: the triangle's own reach decides.
    let positions = vec![Vec3::new(-1.0e6, 0.0, 1.0e6), Vec3::new(1.0e6, 0.0, 1.0e6), Vec3::new(0.0, 0.0, -1.0e6)];
    let p = Primitive { positions, normals: vec![Vec3::Y; 3], indices: None, ..Default::default() };
    let focus = focus_at(DVec3::new(0.0, 2.0, 0.2));
    assert!(needs_split(&p, &focus));
    let (refined, faces) = split(&p, &focus);
    assert!(refined.triangle_count() > 10);
    assert!(faces.face.iter().all(|&f| f == 0));
    // Past its limit a primitive is too large to split, not split part way.
    assert!(matches!(refine(&p, &focus, DVec3::ZERO, refined.triangle_count() - 1), Refined::TooLarge(_)));
}

#[test]
fn slivers_split_into_few_pieces_as_wide_as_they_are() {
    // A million units long and one wide, passing 0.06 from the camera; and one with its
    // wide end there.
    for (positions, eye) in [
        ([Vec3::new(-5.0e5, 0.0, 0.0), Vec3::new(5.0e5, 0.0, 0.0), Vec3::new(0.0, 0.0, 1.0)], DVec3::new(0.3, 0.0649, 0.5)),
        ([Vec3::new(0.0, 0.0, 0.0), Vec3::new(1.0e6, 0.0, 0.5), Vec3::new(0.0, 0.0, 1.0)], DVec3::new(0.2, 0.05, 0.5)),
    ] {
        let p = Primitive { positions: positions.to_vec(), normals: vec![Vec3::Y; 3], indices: None, ..Default::default() };
        let focus = Focus { world: DMat4::IDENTITY, eye, floor: 0.0185, ratio: RATIO };
        assert!(needs_split(&p, &focus));
        let (refined, _) = split(&p, &focus);
        let n = refined.triangle_count();
        assert!(n < 1000, "{n} pieces");
        let area: f64 = (0..n)
            .map(|t| {
                let [a, b, c] = refined.triangle(t).map(|i| refined.positions[i as usize].as_dvec3());
                (b - a).cross(c - a).length() * 0.5
            })
            .sum();
        let [a, b, c] = positions.map(|q| q.as_dvec3());
        assert!((area / ((b - a).cross(c - a).length() * 0.5) - 1.0).abs() < 1e-6, "{area}");
    }
}

/// What placing does for the split, on a scene in the file's frame (no re-centring).
fn split_scene(scene: &mut Scene) {
    let worlds: Vec<DMat4> = scene.nodes.iter().map(|n| n.world.as_dmat4()).collect();
    let eye = scene.camera.as_ref().map(|c| c.world.w_axis.truncate().as_dvec3());
    if unshare(scene, &worlds, eye) {
        refine_near_camera(scene, &worlds, eye, &vec![DVec3::ZERO; scene.meshes.len()]);
    }
}

fn scene_of(meshes: Vec<Primitive>, worlds: &[(usize, Mat4)], eye: Vec3) -> Scene {
    Scene {
        meshes: meshes.into_iter().map(|p| MeshAsset { primitives: vec![p], ..Default::default() }).collect(),
        nodes: worlds.iter().map(|&(m, world)| Node { mesh: Some(m), world, ..Default::default() }).collect(),
        camera: Some(CameraDesc { world: Mat4::from_translation(eye), lens: Lens::Perspective { yfov: 1.0, aspect: None }, znear: 0.01, zfar: None }),
        ..Default::default()
    }
}

#[test]
fn scenes_split_in_world_space_alike_across_meshes_or_not_at_all() {
    let eye = Vec3::new(0.3, 1.4, 0.2);
    // A unit square stretched a million times by its node: distances are the world's.
    let mut stretched = scene_of(vec![ground(1.0)], &[(0, Mat4::from_scale(Vec3::new(1.0e6, 1.0, 1.0e6)))], eye);
    split_scene(&mut stretched);
    let p = &stretched.meshes[0].primitives[0];
    let world = stretched.nodes[0].world;
    let under = (0..p.triangle_count())
        .map(|t| p.triangle(t).map(|i| world.transform_point3(p.positions[i as usize]).as_dvec3()))
        .find(|&v| distance_to_triangle(DVec3::new(0.3, 0.0, 0.2), v) == 0.0)
        .unwrap();
    let size = under.iter().map(|q| (*q - DVec3::new(0.3, 0.0, 0.2)).length()).fold(0.0, f64::max);
    assert!(size <= RATIO * 0.01, "under the camera a piece reaches {size} units of the world");
    // The two halves of a huge ground as two meshes: split alike along the edge they share.
    let half = |x0: f32, x1: f32| {
        let positions = vec![Vec3::new(x0, 0.0, -1.0e6), Vec3::new(x1, 0.0, -1.0e6), Vec3::new(x1, 0.0, 1.0e6), Vec3::new(x0, 0.0, 1.0e6)];
        Primitive { positions, normals: vec![Vec3::Y; 4], indices: Some(vec![0, 2, 1, 0, 3, 2]), ..Default::default() }
    };
    let mut halves = scene_of(vec![half(-1.0e6, 0.0), half(0.0, 1.0e6)], &[(0, Mat4::IDENTITY), (1, Mat4::IDENTITY)], eye);
    split_scene(&mut halves);
    let mut edges = HashMap::new();
    for mesh in &halves.meshes {
        assert!(mesh.source_faces[0].is_some());
        add_edges(&mesh.primitives[0], Mat4::IDENTITY, &mut edges);
    }
    assert_watertight(&edges, 1.0e6);
    // A mesh two nodes draw gets a copy for the second, each split for its own place: the
    // first still meets its neighbour without cracks.
    let lifted = Mat4::from_translation(Vec3::Y);
    let mut shared = scene_of(vec![half(-1.0e6, 0.0), half(0.0, 1.0e6)], &[(0, Mat4::IDENTITY), (1, Mat4::IDENTITY), (1, lifted)], eye);
    split_scene(&mut shared);
    assert_eq!(shared.meshes.len(), 3);
    assert_eq!(shared.nodes.iter().map(|n| n.mesh).collect::<Vec<_>>(), [Some(0), Some(1), Some(2)]);
    let mut edges = HashMap::new();
    for mesh in &shared.meshes[..2] {
        add_edges(&mesh.primitives[0], Mat4::IDENTITY, &mut edges);
    }
    assert_watertight(&edges, 1.0e6);
    assert!(shared.meshes.iter().all(|m| m.source_faces[0].is_some()));
}

#[test]
fn pieces_are_written_shifted_from_the_files_values() {
    // A tilted ground 4e7 across, re-centred near a camera 1e6 from its middle: shifting
    // first rounds its far corners at their size (steps of 2), which tilts the whole plane;
    // the pieces near the camera, blended from the file's values, stay on the file's plane.
    let turn = Mat4::from_rotation_x(0.3);
    let mut p = ground(2.0e7);
    p.positions.iter_mut().for_each(|q| *q = turn.transform_point3(*q));
    let on_plane = turn.transform_point3(Vec3::new(1.0e6, 0.0, 1.0e6)).as_dvec3();
    let normal = turn.transform_vector3(Vec3::Y).as_dvec3();
    let eye = on_plane + normal * 2.0;
    let shift = eye.round();
    let (refined, _) = match refine(&p, &Focus { world: DMat4::IDENTITY, eye, floor: 0.01, ratio: RATIO }, shift, usize::MAX) {
        Refined::Split(split) => *split,
        _ => panic!("not split"),
    };
    // The file's plane, through its first three vertices in f64.
    let [a, b, c] = p.triangle(0).map(|i| p.positions[i as usize].as_dvec3());
    let n = (b - a).cross(c - a).normalize();
    let worst_near = |refined: &Primitive| {
        let near: Vec<DVec3> = refined.positions.iter().map(|q| q.as_dvec3() + shift).filter(|q| (*q - eye).length() < 100.0).collect();
        assert!(near.len() >= 3);
        near.iter().map(|q| (*q - a).dot(n).abs()).fold(0.0, f64::max)
    };
    assert!(worst_near(&refined) < 1e-3, "{}", worst_near(&refined));
    // Shifted first, then split: the pieces near the camera lie off the file's plane.
    let mut shifted = p.clone();
    shifted.positions.iter_mut().for_each(|q| *q = (q.as_dvec3() - shift).as_vec3());
    let Refined::Split(late) = refine(&shifted, &Focus { world: DMat4::IDENTITY, eye: eye - shift, floor: 0.01, ratio: RATIO }, DVec3::ZERO, usize::MAX) else {
        panic!()
    };
    assert!(worst_near(&late.0) > 1e-2, "{}", worst_near(&late.0));
}

#[test]
fn a_narrow_field_of_view_tightens_the_rule() {
    assert_eq!((ratio_of(1.0), ratio_of(2.5), ratio_of(0.0), ratio_of(f32::NAN)), (RATIO, RATIO, RATIO, RATIO));
    let tele = ratio_of(0.05);
    assert!((tele / RATIO - (0.025f64.tan() / 0.5f64.tan())).abs() < 1e-9, "{tele}");
    assert_eq!((ratio_of(5.9e-4), ratio_of(1e-30)), (MIN_RATIO, MIN_RATIO));
    // A ground 2.6e5 across 316 units below: left whole under a wide field, split under a
    // narrow one.
    let eye = DVec3::new(-86.9, 316.1, 44.2);
    assert!(!needs_split(&ground(1.28e5), &focus_at(eye)));
    assert!(needs_split(&ground(1.28e5), &Focus { ratio: ratio_of(5.9e-4), ..focus_at(eye) }));
}
