//! Splitting triangles far larger than their distance from the camera. The GPU transforms
//! vertices in f32, so a vertex a million units away lands a few hundredths off, and a triangle
//! reaching that far carries the error into its whole plane: a ground quad 2e6 across, seen
//! from 1.4 units above, drew (and picked) 0.03 units high. Near the camera such a triangle
//! is split into pieces about as large as their distance from it; far away its pieces stay
//! large, so a quad 2e6 across becomes a few hundred triangles.
//!
//! The split is decided per edge, by the edge's two end points alone, so two triangles sharing
//! an edge split it alike: no T-junctions, no cracks. New vertices are exact f64 combinations
//! of the file's vertices (their attributes likewise), so the surface is the file's. Each new
//! triangle remembers its source triangle and where its corners lie in it, and picks report
//! the file's face and barycentrics.

use crate::scene::Scene;
use glam::{DMat4, DVec3, Vec2, Vec3};
use picking_vk::Topology;
use picking_vk_host::Primitive;
use std::collections::HashMap;

/// An edge is split while it is more than this many times longer than the nearest distance
/// from the camera to a triangle it can bound (f32's error then stays near 1e-5 of the
/// distance, 0.5 * 2^-24 * 4096), and longer than this many times the camera's znear.
const RATIO: f64 = 4096.0;
/// How far a triangle reaches from its longest edge, per unit of that edge (sqrt(3) / 2).
const REACH: f64 = 0.8661;
/// Splits per source triangle, at most (each halves an edge); a triangle that needs more
/// leaves its primitive unsplit, as stopping short would leave a crack beside a neighbour.
const MAX_DEPTH: u32 = 40;
/// Triangles the splits may add to a scene, in all; a primitive that would need more than
/// what is left keeps its own triangles.
const MAX_ADDED_TRIANGLES: usize = 1 << 20;
/// Meshes drawn by more nodes than this are left alone (each node is a camera position in
/// the mesh's space to refine around).
const MAX_USERS: usize = 16;

/// Where each triangle of a refined primitive came from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SourceFaces {
    /// Per triangle: its source triangle's index in the file's primitive.
    pub face: Vec<u32>,
    /// Per triangle: its corners' barycentric weights in the source triangle.
    pub corners: Vec<[[f32; 3]; 3]>,
    /// Per source triangle: its vertex indices (which the refined primitive keeps).
    pub source_vertices: Vec<[u32; 3]>,
}

impl SourceFaces {
    /// The source triangle and barycentric weights of a point of triangle `face` at `bary`.
    pub fn source_of(&self, face: u32, bary: [f32; 3]) -> Option<(u32, [f32; 3], [u32; 3])> {
        let source = *self.face.get(face as usize)?;
        let c = self.corners.get(face as usize)?;
        let w = std::array::from_fn(|k| bary[0] * c[0][k] + bary[1] * c[1][k] + bary[2] * c[2][k]);
        Some((source, w, *self.source_vertices.get(source as usize)?))
    }
}

/// A camera position in a mesh's space, and the distance below which precision is not
/// chased (the camera's znear there).
#[derive(Clone, Copy, Debug)]
pub struct Focus {
    pub eye: DVec3,
    pub floor: f64,
}

/// Refines every rigid triangle primitive around the scene's camera (nothing without one).
/// Runs once the scene is placed, so node worlds are what the GPU draws with.
pub fn refine_near_camera(scene: &mut Scene) {
    let Some(camera) = scene.camera.as_ref() else { return };
    let eye = camera.world.w_axis.truncate().as_dvec3();
    let znear = f64::from(camera.znear);
    let mut left = MAX_ADDED_TRIANGLES;
    for m in 0..scene.meshes.len() {
        let users: Vec<DMat4> = scene.nodes.iter().filter(|n| n.mesh == Some(m)).map(|n| n.world.as_dmat4()).take(MAX_USERS + 1).collect();
        let mesh = &scene.meshes[m];
        let deformed = mesh.primitives.iter().any(|p| !p.skin.is_empty() || !p.morph_targets.is_empty());
        if users.is_empty() || users.len() > MAX_USERS || deformed {
            continue;
        }
        let focus: Vec<Focus> = users.iter().filter_map(|world| focus_in(world, eye, znear)).collect();
        if focus.len() != users.len() {
            continue;
        }
        for p in 0..scene.meshes[m].primitives.len() {
            let source = &scene.meshes[m].primitives[p];
            let (before, limit) = (source.triangle_count(), source.triangle_count().saturating_add(left));
            if let Some((refined, faces)) = refine(source, &focus, limit) {
                left -= refined.triangle_count() - before;
                let mesh = &mut scene.meshes[m];
                mesh.primitives[p] = refined;
                mesh.source_faces.resize(mesh.primitives.len(), None);
                mesh.source_faces[p] = Some(faces);
            }
        }
    }
}

/// The camera in the space of a mesh drawn with `world`; the floor shrinks by its largest
/// scale, so a split edge is never longer than intended in the world.
fn focus_in(world: &DMat4, eye: DVec3, znear: f64) -> Option<Focus> {
    let inverse = world.inverse();
    let scale = [world.x_axis, world.y_axis, world.z_axis].iter().map(|c| c.truncate().length()).fold(0.0, f64::max);
    let focus = Focus { eye: inverse.transform_point3(eye), floor: znear.max(f64::MIN_POSITIVE) / scale };
    (focus.eye.is_finite() && focus.floor.is_finite() && focus.floor > 0.0).then_some(focus)
}

/// A point of a source triangle: weights of up to three of the file's vertices, sorted by
/// vertex (unused slots `u32::MAX`, weight 0), so that one point has one key however it was
/// reached. Weights are dyadic: exact in f64.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Point {
    vertex: [u32; 3],
    weight: [f64; 3],
}

impl Point {
    fn vertex(i: u32) -> Self {
        Point { vertex: [i, u32::MAX, u32::MAX], weight: [1.0, 0.0, 0.0] }
    }

    fn key(&self) -> ([u32; 3], [u64; 3]) {
        (self.vertex, self.weight.map(f64::to_bits))
    }

    /// The midpoint of `a` and `b`; `None` when they span more than three vertices (they then
    /// belong to no one triangle).
    fn midpoint(a: &Point, b: &Point) -> Option<Point> {
        let mut terms: Vec<(u32, f64)> = vec![];
        for p in [a, b] {
            for k in 0..3 {
                if p.vertex[k] == u32::MAX {
                    continue;
                }
                match terms.iter_mut().find(|t| t.0 == p.vertex[k]) {
                    Some(t) => t.1 += 0.5 * p.weight[k],
                    None => terms.push((p.vertex[k], 0.5 * p.weight[k])),
                }
            }
        }
        if terms.len() > 3 {
            return None;
        }
        terms.sort_by_key(|t| t.0);
        let mut out = Point { vertex: [u32::MAX; 3], weight: [0.0; 3] };
        for (k, (v, w)) in terms.into_iter().enumerate() {
            (out.vertex[k], out.weight[k]) = (v, w);
        }
        Some(out)
    }

    /// The weighted sum of `values` (in slot order, so the same point always sums alike).
    fn blend<T: Copy>(&self, values: &[T], to: impl Fn(T) -> DVec3) -> Option<DVec3> {
        let mut sum = DVec3::ZERO;
        for k in 0..3 {
            if self.vertex[k] != u32::MAX {
                sum += to(*values.get(self.vertex[k] as usize)?) * self.weight[k];
            }
        }
        Some(sum)
    }
}

/// A corner of a triangle being split: the point, its position, and its weights in the source
/// triangle.
#[derive(Clone, Copy)]
struct Corner {
    point: Point,
    at: DVec3,
    bary: [f64; 3],
}

struct Refiner<'a> {
    source: &'a Primitive,
    focus: &'a [Focus],
    /// Output vertices by point; the file's vertices keep their indices.
    index_of: HashMap<([u32; 3], [u64; 3]), u32>,
    points: Vec<Point>,
    indices: Vec<u32>,
    faces: SourceFaces,
    /// Triangles the output may hold.
    limit: usize,
}

impl Refiner<'_> {
    /// Whether the edge from `a` to `b` is split: a pure function of its two end points' positions,
    /// taken in a fixed order, so both triangles that share it agree (also where they do not
    /// share vertex indices, as in non-indexed meshes).
    fn splits(&self, a: &Corner, b: &Corner) -> bool {
        let first = a.at.to_array().partial_cmp(&b.at.to_array()).is_some_and(|o| o.is_le());
        let (a, b) = if first { (a.at, b.at) } else { (b.at, a.at) };
        let length = (b - a).length();
        // Most edges are too short to split anywhere: no distances needed.
        if !self.focus.iter().any(|f| length > RATIO * f.floor) {
            return false;
        }
        self.focus.iter().any(|f| {
            let near = (distance_to_segment(f.eye, a, b) - REACH * length).max(0.0);
            length > RATIO * near.max(f.floor)
        })
    }

    fn corner_between(&self, a: &Corner, b: &Corner) -> Option<Corner> {
        let point = Point::midpoint(&a.point, &b.point)?;
        let at = point.blend(&self.source.positions, Vec3::as_dvec3)?;
        Some(Corner { point, at, bary: std::array::from_fn(|k| 0.5 * (a.bary[k] + b.bary[k])) })
    }

    /// Splits `tri` (of source triangle `face`) until no edge splits, emitting the pieces in
    /// order; `None` when the output would pass its limit or [`MAX_DEPTH`].
    fn split(&mut self, face: u32, tri: [Corner; 3], depth: u32) -> Option<()> {
        let split = [self.splits(&tri[0], &tri[1]), self.splits(&tri[1], &tri[2]), self.splits(&tri[2], &tri[0])];
        let count = split.iter().filter(|&&s| s).count();
        if count == 0 {
            return self.emit(face, tri);
        }
        if depth >= MAX_DEPTH {
            return None;
        }
        // Rotate so that the split edges come first: edge 0 (and edge 1 when two split).
        let r = match (count, split) {
            (1, [true, _, _]) | (2, [true, true, _]) | (3, _) => 0,
            (1, [_, true, _]) | (2, [_, true, true]) => 1,
            _ => 2,
        };
        let [a, b, c] = [tri[r], tri[(r + 1) % 3], tri[(r + 2) % 3]];
        let ab = self.corner_between(&a, &b)?;
        let children = match count {
            1 => vec![[a, ab, c], [ab, b, c]],
            2 => {
                let bc = self.corner_between(&b, &c)?;
                vec![[ab, b, bc], [a, ab, bc], [a, bc, c]]
            }
            _ => {
                let (bc, ca) = (self.corner_between(&b, &c)?, self.corner_between(&c, &a)?);
                vec![[a, ab, ca], [ab, b, bc], [ca, bc, c], [ab, bc, ca]]
            }
        };
        for child in children {
            self.split(face, child, depth + 1)?;
        }
        Some(())
    }

    fn emit(&mut self, face: u32, tri: [Corner; 3]) -> Option<()> {
        if self.faces.face.len() >= self.limit {
            return None;
        }
        for corner in &tri {
            let next = self.points.len() as u32;
            let index = *self.index_of.entry(corner.point.key()).or_insert(next);
            if index == next {
                self.points.push(corner.point);
            }
            self.indices.push(index);
        }
        self.faces.face.push(face);
        self.faces.corners.push(tri.map(|c| c.bary.map(|w| w as f32)));
        Some(())
    }
}

fn distance_to_segment(p: DVec3, a: DVec3, b: DVec3) -> f64 {
    let ab = b - a;
    let t = if ab.length_squared() > 0.0 { ((p - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0) } else { 0.0 };
    (p - (a + ab * t)).length()
}

/// `p` with its triangles split around `focus`, and where each came from; `None` when no
/// edge splits (or the split would pass `limit` triangles, or `p` is not a plain triangle
/// list).
pub fn refine(p: &Primitive, focus: &[Focus], limit: usize) -> Option<(Primitive, SourceFaces)> {
    let rigid = p.skin.is_empty() && p.morph_targets.is_empty();
    let attributes_match = p.normals.len() == p.positions.len() && p.uvs.as_ref().is_none_or(|u| u.len() == p.positions.len());
    if p.topology != Topology::TriangleList || !rigid || !attributes_match || focus.is_empty() || p.positions.len() >= u32::MAX as usize {
        return None;
    }
    let mut r = Refiner { source: p, focus, index_of: HashMap::new(), points: vec![], indices: vec![], faces: SourceFaces::default(), limit };
    let corner = |i: u32, k: usize| -> Option<Corner> {
        let mut bary = [0.0; 3];
        bary[k] = 1.0;
        Some(Corner { point: Point::vertex(i), at: p.positions.get(i as usize)?.as_dvec3(), bary })
    };
    let source_triangles: Vec<[u32; 3]> = (0..p.triangle_count()).map(|t| p.triangle(t)).collect();
    // Nothing to do unless some edge splits (most scenes: none).
    let any = source_triangles.iter().any(|t| {
        let c = [0, 1, 2].map(|k| corner(t[k], k));
        let [Some(a), Some(b), Some(c)] = c else { return false };
        r.splits(&a, &b) || r.splits(&b, &c) || r.splits(&c, &a)
    });
    if !any {
        return None;
    }
    for i in 0..p.positions.len() as u32 {
        r.index_of.insert(Point::vertex(i).key(), i);
        r.points.push(Point::vertex(i));
    }
    for (face, t) in source_triangles.iter().enumerate() {
        let [Some(a), Some(b), Some(c)] = [0, 1, 2].map(|k| corner(t[k], k)) else { return None };
        r.split(face as u32, [a, b, c], 0)?;
    }
    r.faces.source_vertices = source_triangles;
    let blend3 = |values: &[Vec3]| r.points.iter().map(|q| q.blend(values, Vec3::as_dvec3).map(|v| v.as_vec3())).collect::<Option<Vec<_>>>();
    let positions = blend3(&p.positions)?;
    // Normals are blended, not renormalised: the shaders normalise after interpolating, so a
    // split triangle shades as its source did.
    let normals = blend3(&p.normals)?;
    let uvs = match &p.uvs {
        Some(uvs) => {
            Some(r.points.iter().map(|q| q.blend(uvs, |v: Vec2| v.as_dvec2().extend(0.0)).map(|v| v.truncate().as_vec2())).collect::<Option<Vec<_>>>()?)
        }
        None => None,
    };
    let refined = Primitive {
        positions,
        normals,
        uvs,
        indices: Some(r.indices),
        color: p.color,
        texture: p.texture,
        alpha_cutoff: p.alpha_cutoff,
        single_sided: p.single_sided,
        topology: p.topology,
        ..Default::default()
    };
    Some((refined, r.faces))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A square of half-size `s` on y = 0, as two counter-clockwise triangles seen from +y.
    fn ground(s: f32) -> Primitive {
        let positions = vec![Vec3::new(-s, 0.0, -s), Vec3::new(s, 0.0, -s), Vec3::new(s, 0.0, s), Vec3::new(-s, 0.0, s)];
        let uvs = Some(vec![Vec2::new(0.0, 0.0), Vec2::new(1.0, 0.0), Vec2::new(1.0, 1.0), Vec2::new(0.0, 1.0)]);
        Primitive { positions, normals: vec![Vec3::Y; 4], uvs, indices: Some(vec![0, 2, 1, 0, 3, 2]), color: [1.0; 4], ..Default::default() }
    }

    /// Every edge by its end points' positions (what the rasterizer's watertightness needs):
    /// +1 one way, -1 the other, so an inner edge of a consistently wound surface sums to 0.
    fn edges(p: &Primitive) -> HashMap<([u32; 3], [u32; 3]), i32> {
        let mut count = HashMap::new();
        for t in 0..p.triangle_count() {
            let [a, b, c] = p.triangle(t).map(|i| p.positions[i as usize].to_array().map(f32::to_bits));
            for (u, v) in [(a, b), (b, c), (c, a)] {
                *count.entry((u.min(v), u.max(v))).or_insert(0) += if u < v { 1 } else { -1 };
            }
        }
        count
    }

    /// Watertight: every edge inside the square is shared by two triangles wound apart; the
    /// only open edges lie on the square's border.
    fn assert_watertight(p: &Primitive, half: f32) {
        let border = |q: [u32; 3]| f32::from_bits(q[0]).abs() == half || f32::from_bits(q[2]).abs() == half;
        for ((u, v), sum) in edges(p) {
            if !(border(u) && border(v)) {
                assert_eq!(sum, 0, "edge {u:?}-{v:?} is not shared by two triangles wound apart");
            }
        }
    }

    #[test]
    fn a_huge_ground_is_split_near_the_camera_without_cracks() {
        let source = ground(1.0e6);
        let focus = [Focus { eye: DVec3::new(0.3, 1.4, 0.2), floor: 0.01 }];
        let (p, faces) = refine(&source, &focus, usize::MAX).expect("refined");
        let n = p.triangle_count();
        assert!(n > 20 && n < 2000, "{n} triangles");
        assert_watertight(&p, 1.0e6);
        // Without shared vertices (each triangle its own three), the pieces still meet.
        let (loose, _) = refine(&picking_vk_host::shapes::plane(1.0e6, [1.0; 4]), &focus, usize::MAX).expect("refined");
        assert_watertight(&loose, 1.0e6);
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
        let under = (0..n)
            .find(|&t| {
                let [a, b, c] = p.triangle(t).map(|i| p.positions[i as usize].as_dvec3());
                let (e, f) = (DVec3::new(0.3, 0.0, 0.2), (b - a).cross(c - a).y);
                [(a, b), (b, c), (c, a)].iter().all(|&(u, v)| (v - u).cross(e - u).y * f >= 0.0)
            })
            .unwrap();
        let size = p.triangle(under).map(|i| p.positions[i as usize].as_dvec3()).iter().map(|q| (*q - DVec3::new(0.3, 0.0, 0.2)).length()).fold(0.0, f64::max);
        assert!(size <= RATIO * 0.01, "the triangle under the camera reaches {size} units");
        // Each piece knows its source: its corners, placed by their weights in the source
        // triangle, are its vertices; attributes blend alike.
        let in_source = |vertices: [u32; 3], w: [f32; 3]| -> (DVec3, Vec2) {
            let at = (0..3).map(|j| source.positions[vertices[j] as usize].as_dvec3() * f64::from(w[j])).sum();
            (at, (0..3).map(|j| source.uvs.as_ref().unwrap()[vertices[j] as usize] * w[j]).sum())
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
                let (at, uv) = in_source(vertices, faces.corners[t][k]);
                assert!((at - p.positions[vertex as usize].as_dvec3()).length() < 1.0, "triangle {t} corner {k}");
                assert!((uv - p.uvs.as_ref().unwrap()[vertex as usize]).length() < 1e-6);
            }
        }
        // The file's vertices keep their indices.
        assert_eq!(&p.positions[..4], &source.positions[..]);
    }

    #[test]
    fn ordinary_meshes_change_nothing_and_far_cameras_little() {
        let focus = [Focus { eye: DVec3::new(0.3, 1.4, 0.2), floor: 0.01 }];
        // A 20-unit ground under the same camera: f32 is exact enough.
        assert!(refine(&ground(10.0), &focus, usize::MAX).is_none());
        // The huge ground seen from high above it is split far less than from near it.
        let near = refine(&ground(1.0e6), &focus, usize::MAX).unwrap().0.triangle_count();
        let high = refine(&ground(1.0e6), &[Focus { eye: DVec3::new(0.0, 1.0e4, 0.0), floor: 0.01 }], usize::MAX).unwrap().0.triangle_count();
        assert!(high * 2 < near, "{high} vs {near}");
        // Lines are not split.
        let lines = Primitive { topology: Topology::LineList, ..ground(1.0e6) };
        assert!(refine(&lines, &focus, usize::MAX).is_none());
    }

    #[test]
    fn a_camera_over_the_middle_of_one_huge_triangle_splits_it() {
        // No edge passes near the camera: the triangle's own reach decides.
        let positions = vec![Vec3::new(-1.0e6, 0.0, 1.0e6), Vec3::new(1.0e6, 0.0, 1.0e6), Vec3::new(0.0, 0.0, -1.0e6)];
        let p = Primitive { positions, normals: vec![Vec3::Y; 3], indices: None, ..Default::default() };
        let (refined, faces) = refine(&p, &[Focus { eye: DVec3::new(0.0, 2.0, 0.2), floor: 0.01 }], usize::MAX).expect("refined");
        assert!(refined.triangle_count() > 10);
        assert!(faces.face.iter().all(|&f| f == 0));
        // Past its limit a primitive keeps its own triangles.
        assert!(refine(&p, &[Focus { eye: DVec3::new(0.0, 2.0, 0.2), floor: 0.01 }], refined.triangle_count() - 1).is_none());
    }
}
