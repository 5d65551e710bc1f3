//! Splitting triangles far larger than their distance from the camera. The GPU transforms
//! vertices in f32, so a vertex a million units away lands a few hundredths off, and a triangle
//! reaching that far carries the error into its whole plane: a ground quad 2e6 across, seen
//! from 1.4 units above, drew (and picked) 0.03 units high. Near the camera such a triangle
//! is split into pieces about as large as their distance from it; far away its pieces stay
//! large, so a quad 2e6 across becomes a few hundred triangles.
//!
//! The split is decided per edge, by its two end points' world positions alone, so two
//! triangles sharing an edge split it alike: no T-junctions, no cracks. That holds across
//! primitives and meshes too, as long as all of them are split by the same rule: so when one
//! needs it, every eligible primitive is split (a mesh several nodes draw gets a copy per
//! node first). New vertices are exact f64 combinations of the file's vertices (their
//! attributes likewise), computed before the mesh is re-centred, so the surface is the file's.
//! Each new triangle remembers its source triangle and where its corners lie in it, and picks
//! report the file's face and barycentrics.

use crate::scene::{MeshAsset, Scene};
use glam::{DMat4, DVec3, Vec2, Vec3};
use picking_vk::Topology;
use picking_vk_host::Primitive;
use std::collections::{HashMap, HashSet};

/// A triangle needs splitting when a vertex lies more than this many times farther from the
/// camera than the triangle itself (f32's error then stays near 1e-5 of the distance,
/// 0.5 * 2^-24 * 4096); an edge is split while it is this many times longer than the nearest a
/// triangle it bounds can come to the camera, and than the camera's znear.
const RATIO: f64 = 4096.0;
/// How far a triangle reaches from its longest edge, per unit of that edge (sqrt(3) / 2).
const REACH: f64 = 0.8661;
/// Splits per source triangle, at most (each halves an edge).
const MAX_DEPTH: u32 = 400;
/// Triangles the splits may add to a scene, in all.
const MAX_ADDED_TRIANGLES: usize = 1 << 20;
/// Larger primitives are not eligible (their copy would cost too much memory).
const MAX_SOURCE_TRIANGLES: usize = 1 << 20;

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
    /// The source triangle, barycentric weights there and its vertices, of a point of
    /// triangle `face` at `bary`.
    pub fn source_of(&self, face: u32, bary: [f32; 3]) -> Option<(u32, [f32; 3], [u32; 3])> {
        let source = *self.face.get(face as usize)?;
        let c = self.corners.get(face as usize)?;
        let w = std::array::from_fn(|k| bary[0] * c[0][k] + bary[1] * c[1][k] + bary[2] * c[2][k]);
        Some((source, w, *self.source_vertices.get(source as usize)?))
    }
}

/// The camera a primitive is split around: the mesh's world (mesh space to the file's frame),
/// the eye in that frame, and the distance below which precision is not chased (the camera's
/// znear).
#[derive(Clone, Copy, Debug)]
pub struct Focus {
    pub world: DMat4,
    pub eye: DVec3,
    pub floor: f64,
}

/// Meshes that more nodes draw are not split (each node is another place to split for).
const MAX_USERS: usize = 16;

/// The nodes that draw each mesh.
pub(super) fn users_of(scene: &Scene) -> Vec<Vec<usize>> {
    let mut users = vec![vec![]; scene.meshes.len()];
    for (n, node) in scene.nodes.iter().enumerate() {
        if let Some(list) = node.mesh.and_then(|m| users.get_mut(m)) {
            list.push(n);
        }
    }
    users
}

fn is_rigid(mesh: &MeshAsset) -> bool {
    mesh.primitives.iter().all(|p| p.skin.is_empty() && p.morph_targets.is_empty())
}

/// The camera's znear, the floor of the split.
fn floor_of(scene: &Scene) -> Option<f64> {
    scene.camera.as_ref().map(|c| f64::from(c.znear).max(f64::MIN_POSITIVE))
}

/// When the scene needs splitting, gives every node but the first its own copy of a rigid
/// mesh that 2 to [`MAX_USERS`] nodes draw and that the split rule cuts somewhere: the split
/// follows each copy's place. Copies add at most [`MAX_ADDED_TRIANGLES`] in all. `worlds`:
/// each node's world in the file's frame (f64); `eye` the camera there. Returns whether a mesh
/// that one node now draws needs splitting: only then is [`refine_near_camera`] called.
pub fn unshare(scene: &mut Scene, worlds: &[DMat4], eye: Option<DVec3>) -> bool {
    let (Some(eye), Some(floor)) = (eye, floor_of(scene)) else { return false };
    let users = users_of(scene);
    // Per mesh: the places it is drawn at, if it is rigid and every one is finite.
    let places: Vec<Vec<Focus>> = (0..scene.meshes.len())
        .map(|m| {
            let focus: Option<Vec<Focus>> =
                users[m].iter().map(|&n| Some(Focus { world: worlds.get(n).copied().filter(DMat4::is_finite)?, eye, floor })).collect();
            focus.filter(|_| is_rigid(&scene.meshes[m])).unwrap_or_default()
        })
        .collect();
    let needs: Vec<bool> =
        places.iter().zip(&scene.meshes).map(|(places, mesh)| places.iter().any(|f| mesh.primitives.iter().any(|p| needs_split(p, f)))).collect();
    if !needs.contains(&true) {
        return false;
    }
    // Whether each mesh ends up drawn by one node (its copies too).
    let mut single: Vec<bool> = users.iter().map(|nodes| nodes.len() == 1).collect();
    let mut left = MAX_ADDED_TRIANGLES;
    for (m, nodes) in users.iter().enumerate() {
        let triangles: usize = scene.meshes[m].primitives.iter().map(Primitive::triangle_count).sum();
        let added = triangles.saturating_mul(nodes.len().saturating_sub(1));
        if nodes.len() < 2 || nodes.len() > MAX_USERS || added > left {
            continue;
        }
        let cut = places[m].iter().any(|f| scene.meshes[m].primitives.iter().any(|p| any_edge_splits(p, f)));
        if !cut {
            continue;
        }
        left -= added;
        single[m] = true;
        for &n in &nodes[1..] {
            scene.nodes[n].mesh = Some(scene.meshes.len());
            scene.meshes.push(scene.meshes[m].clone());
        }
    }
    // A copy needs what its original needed for some place: say so when one needed at all.
    needs.iter().zip(&single).any(|(&need, &one)| need && one)
}

/// Splits the scene's rigid triangle primitives around its camera (nothing without one), and
/// returns the `(mesh, primitive)`s split; called when [`unshare`] found one that needs it.
/// Eligible: triangle lists of meshes that one node draws, with no skin or morph targets. Runs in the
/// file's frame, before far-off meshes are re-centred: `worlds` are the nodes' worlds there,
/// `eye` the camera's place, and `shifts` each mesh's re-centring, which the split pieces'
/// positions are written with. A primitive whose split passes the limits stays whole.
pub fn refine_near_camera(scene: &mut Scene, worlds: &[DMat4], eye: Option<DVec3>, shifts: &[DVec3]) -> HashSet<(usize, usize)> {
    let mut split = HashSet::new();
    let (Some(eye), Some(floor)) = (eye, floor_of(scene)) else { return split };
    let users = users_of(scene);
    let eligible: Vec<(usize, Focus)> = (0..scene.meshes.len())
        .filter_map(|m| {
            let [node] = users[m][..] else { return None };
            let world = worlds.get(node).copied().filter(DMat4::is_finite)?;
            is_rigid(&scene.meshes[m]).then_some((m, Focus { world, eye, floor }))
        })
        .collect();
    let mut left = MAX_ADDED_TRIANGLES;
    for (m, focus) in &eligible {
        let shift = shifts.get(*m).copied().unwrap_or(DVec3::ZERO);
        for p in 0..scene.meshes[*m].primitives.len() {
            let source = &scene.meshes[*m].primitives[p];
            let before = source.triangle_count();
            match refine(source, focus, shift, before.saturating_add(left)) {
                Refined::Unchanged => {}
                Refined::Split(refined) => {
                    let (primitive, faces) = *refined;
                    left -= primitive.triangle_count() - before;
                    let mesh = &mut scene.meshes[*m];
                    mesh.primitives[p] = primitive;
                    mesh.source_faces.resize(mesh.primitives.len(), None);
                    mesh.source_faces[p] = Some(faces);
                    split.insert((*m, p));
                }
                Refined::TooLarge => log::warn!("picking-vk viewer: mesh {m} primitive {p}: triangles far larger than their distance from the camera are left whole (splitting them passes the limits)"),
            }
        }
    }
    split
}

/// Whether the rule splits an edge of `p`'s triangles (at its rest pose).
fn any_edge_splits(p: &Primitive, focus: &Focus) -> bool {
    p.topology == Topology::TriangleList
        && (0..p.triangle_count())
            .filter_map(|t| source_corners(p, focus, &p.triangle(t)))
            .any(|[a, b, c]| focus.splits(&a, &b) || focus.splits(&b, &c) || focus.splits(&c, &a))
}

/// Whether a triangle of `p` has a vertex more than [`RATIO`] times farther from the camera
/// than the triangle (or than znear, for triangles nearer than that).
fn needs_split(p: &Primitive, focus: &Focus) -> bool {
    if p.topology != Topology::TriangleList {
        return false;
    }
    (0..p.triangle_count()).any(|t| {
        let Some(v) = source_corners(p, focus, &p.triangle(t)).map(|c| c.map(|c| c.world)) else { return false };
        let far = v.iter().map(|q| (*q - focus.eye).length()).fold(0.0, f64::max);
        // Cheap first: no vertex that far from the camera, no need.
        far > RATIO * focus.floor && far > RATIO * distance_to_triangle(focus.eye, v).max(focus.floor)
    })
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

    /// The file's vertex this point is, if it is one.
    fn as_vertex(&self) -> Option<u32> {
        (self.weight[0] == 1.0).then_some(self.vertex[0])
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

/// A corner of a triangle being split: the point, its world position, and its weights in the
/// source triangle.
#[derive(Clone, Copy)]
struct Corner {
    point: Point,
    world: DVec3,
    bary: [f64; 3],
}

struct Refiner<'a> {
    source: &'a Primitive,
    focus: &'a Focus,
    /// New vertices by point, numbered after the file's.
    index_of: HashMap<([u32; 3], [u64; 3]), u32>,
    new_points: Vec<Point>,
    indices: Vec<u32>,
    faces: SourceFaces,
    /// Triangles the output may hold.
    limit: usize,
}

/// The corner of `p` at `point`, with its weights in the source triangle.
fn corner(p: &Primitive, focus: &Focus, point: Point, bary: [f64; 3]) -> Option<Corner> {
    let at = point.blend(&p.positions, Vec3::as_dvec3)?;
    Some(Corner { point, world: focus.world.transform_point3(at), bary })
}

/// The corners of source triangle `t` (its vertices, weights the unit vectors).
fn source_corners(p: &Primitive, focus: &Focus, t: &[u32; 3]) -> Option<[Corner; 3]> {
    let at = |k: usize| {
        let mut bary = [0.0; 3];
        bary[k] = 1.0;
        corner(p, focus, Point::vertex(t[k]), bary)
    };
    Some([at(0)?, at(1)?, at(2)?])
}

impl Focus {
    /// Whether the edge from `a` to `b` is split: a pure function of its two end points' world
    /// positions, taken in a fixed order, so every triangle that shares it agrees (also where
    /// they do not share vertex indices, as in non-indexed meshes).
    fn splits(&self, a: &Corner, b: &Corner) -> bool {
        let first = a.world.to_array().partial_cmp(&b.world.to_array()).is_some_and(|o| o.is_le());
        let (a, b) = if first { (a.world, b.world) } else { (b.world, a.world) };
        let length = (b - a).length();
        // Most edges are too short to split anywhere: no distance needed.
        if length.is_nan() || length <= RATIO * self.floor {
            return false;
        }
        let near = (distance_to_segment(self.eye, a, b) - REACH * length).max(0.0);
        length > RATIO * near.max(self.floor)
    }
}

impl Refiner<'_> {
    fn corner_between(&self, a: &Corner, b: &Corner) -> Option<Corner> {
        corner(self.source, self.focus, Point::midpoint(&a.point, &b.point)?, std::array::from_fn(|k| 0.5 * (a.bary[k] + b.bary[k])))
    }

    /// Splits `tri` (of source triangle `face`) until no edge splits, emitting the pieces in
    /// order; `None` when the output would pass its limit or [`MAX_DEPTH`] (stopping short
    /// would leave a crack beside a neighbour that splits the shared edge).
    fn split(&mut self, face: u32, tri: [Corner; 3], depth: u32) -> Option<()> {
        // The longest edge the rule splits is halved, through the opposite corner; the
        // halves take the other edges, which are split (or not) further down. One edge at a
        // time keeps a sliver's pieces as wide as it is (splitting all three edges at once
        // keeps their shape, and a sliver 1e6 long and 1 wide became a million pieces).
        let marked = (0..3).filter(|&k| self.focus.splits(&tri[k], &tri[(k + 1) % 3]));
        let length = |k: usize| (tri[(k + 1) % 3].world - tri[k].world).length();
        let Some(r) = marked.max_by(|&i, &j| length(i).total_cmp(&length(j)).then(j.cmp(&i))) else { return self.emit(face, tri) };
        if depth >= MAX_DEPTH {
            return None;
        }
        let [a, b, c] = [tri[r], tri[(r + 1) % 3], tri[(r + 2) % 3]];
        let ab = self.corner_between(&a, &b)?;
        self.split(face, [a, ab, c], depth + 1)?;
        self.split(face, [ab, b, c], depth + 1)
    }

    fn emit(&mut self, face: u32, tri: [Corner; 3]) -> Option<()> {
        if self.faces.face.len() >= self.limit {
            return None;
        }
        let first_new = self.source.positions.len() as u32;
        for corner in &tri {
            let index = match corner.point.as_vertex() {
                Some(v) => v,
                None => {
                    let next = first_new + self.new_points.len() as u32;
                    let index = *self.index_of.entry(corner.point.key()).or_insert(next);
                    if index == next {
                        self.new_points.push(corner.point);
                    }
                    index
                }
            };
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

/// The distance from `p` to the triangle `[a, b, c]` (its closest point, by the regions of
/// Ericson's Real-Time Collision Detection, 5.1.5); degenerate triangles fall back to their
/// edges.
fn distance_to_triangle(p: DVec3, [a, b, c]: [DVec3; 3]) -> f64 {
    let edges = distance_to_segment(p, a, b).min(distance_to_segment(p, b, c)).min(distance_to_segment(p, c, a));
    let n = (b - a).cross(c - a);
    if n.length_squared().is_nan() || n.length_squared() <= 0.0 {
        return edges;
    }
    // Inside the triangle's prism: the distance to its plane.
    let inside = [(a, b), (b, c), (c, a)].iter().all(|&(u, v)| (v - u).cross(p - u).dot(n) >= 0.0);
    if inside {
        (p - a).dot(n).abs() / n.length()
    } else {
        edges
    }
}

/// What [`refine`] made of a primitive.
pub enum Refined {
    /// No edge splits (or the primitive is not a plain rigid triangle list).
    Unchanged,
    Split(Box<(Primitive, SourceFaces)>),
    /// Splitting it would pass `limit` triangles or [`MAX_DEPTH`], or it is too large to copy.
    TooLarge,
}

/// `p` with its triangles split around `focus`, and where each came from; its positions (the
/// file's vertices and the new ones, blended from the file's in f64) are written less `shift`.
pub fn refine(p: &Primitive, focus: &Focus, shift: DVec3, limit: usize) -> Refined {
    let rigid = p.skin.is_empty() && p.morph_targets.is_empty();
    let attributes_match = p.normals.len() == p.positions.len() && p.uvs.as_ref().is_none_or(|u| u.len() == p.positions.len());
    if p.topology != Topology::TriangleList || !rigid {
        return Refined::Unchanged;
    }
    // Nothing to do unless some edge splits.
    if !any_edge_splits(p, focus) {
        return Refined::Unchanged;
    }
    let mut r = Refiner { source: p, focus, index_of: HashMap::new(), new_points: vec![], indices: vec![], faces: SourceFaces::default(), limit };
    let source_triangles: Vec<[u32; 3]> = (0..p.triangle_count()).map(|t| p.triangle(t)).collect();
    if !attributes_match || source_triangles.len() > MAX_SOURCE_TRIANGLES || p.positions.len() >= u32::MAX as usize / 2 {
        return Refined::TooLarge;
    }
    for (face, t) in source_triangles.iter().enumerate() {
        let Some(tri) = source_corners(p, focus, t) else { return Refined::TooLarge };
        if r.split(face as u32, tri, 0).is_none() {
            return Refined::TooLarge;
        }
    }
    r.faces.source_vertices = source_triangles;
    // The file's vertices, then the new ones.
    let blended = |values: &[Vec3], less: DVec3| -> Option<Vec<Vec3>> {
        let new = r.new_points.iter().map(|q| q.blend(values, Vec3::as_dvec3).map(|v| (v - less).as_vec3()));
        values.iter().map(|v| Some((v.as_dvec3() - less).as_vec3())).chain(new).collect()
    };
    let (Some(positions), Some(normals)) = (blended(&p.positions, shift), blended(&p.normals, DVec3::ZERO)) else { return Refined::TooLarge };
    // Normals are blended, not renormalised: the shaders normalise after interpolating, so a
    // split triangle shades as its source did.
    let uvs = match &p.uvs {
        Some(uvs) => {
            let new = r.new_points.iter().map(|q| q.blend(uvs, |v: Vec2| v.as_dvec2().extend(0.0)).map(|v| v.truncate().as_vec2()));
            match uvs.iter().copied().map(Some).chain(new).collect::<Option<Vec<_>>>() {
                Some(uvs) => Some(uvs),
                None => return Refined::TooLarge,
            }
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
    Refined::Split(Box::new((refined, r.faces)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{CameraDesc, MeshAsset, Node};
    use glam::Mat4;

    /// A square of half-size `s` on y = 0, as two counter-clockwise triangles seen from +y.
    fn ground(s: f32) -> Primitive {
        let positions = vec![Vec3::new(-s, 0.0, -s), Vec3::new(s, 0.0, -s), Vec3::new(s, 0.0, s), Vec3::new(-s, 0.0, s)];
        let uvs = Some(vec![Vec2::new(0.0, 0.0), Vec2::new(1.0, 0.0), Vec2::new(1.0, 1.0), Vec2::new(0.0, 1.0)]);
        Primitive { positions, normals: vec![Vec3::Y; 4], uvs, indices: Some(vec![0, 2, 1, 0, 3, 2]), color: [1.0; 4], ..Default::default() }
    }

    fn focus_at(eye: DVec3) -> Focus {
        Focus { world: DMat4::IDENTITY, eye, floor: 0.01 }
    }

    fn split(p: &Primitive, focus: &Focus) -> (Primitive, SourceFaces) {
        match refine(p, focus, DVec3::ZERO, usize::MAX) {
            Refined::Split(split) => *split,
            Refined::Unchanged => panic!("not split"),
            Refined::TooLarge => panic!("too large"),
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
        let source = ground(1.0e6);
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
        // Lines are not split.
        let lines = Primitive { topology: Topology::LineList, ..ground(1.0e6) };
        assert!(!needs_split(&lines, &near));
        assert!(matches!(refine(&lines, &near, DVec3::ZERO, usize::MAX), Refined::Unchanged));
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
        assert!(matches!(refine(&p, &focus, DVec3::ZERO, refined.triangle_count() - 1), Refined::TooLarge));
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
            let focus = Focus { world: DMat4::IDENTITY, eye, floor: 0.0185 };
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
            camera: Some(CameraDesc { world: Mat4::from_translation(eye), yfov: 1.0, aspect: None, znear: 0.01, zfar: None }),
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
        let (refined, _) = match refine(&p, &Focus { world: DMat4::IDENTITY, eye, floor: 0.01 }, shift, usize::MAX) {
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
        let Refined::Split(late) = refine(&shifted, &Focus { world: DMat4::IDENTITY, eye: eye - shift, floor: 0.01 }, DVec3::ZERO, usize::MAX) else {
            panic!()
        };
        assert!(worst_near(&late.0) > 1e-2, "{}", worst_near(&late.0));
    }
}
