//! The split itself: a source triangle's longest marked edge is halved until no edge is
//! marked, new vertices are exact f64 blends of the file's, and each piece remembers where
//! its corners lie in its source triangle.

use super::{any_edge_splits, Focus, SourceFaces, MAX_DEPTH, MAX_SOURCE_TRIANGLES};
use glam::{DVec3, DVec4, Vec2, Vec3, Vec4};
use picking_vk::draw::Topology;
use picking_vk_host::Primitive;
use std::collections::HashMap;

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

    /// The weighted sum of `values`, each taken to f64 by `to` (in slot order, so the same point
    /// always sums alike).
    fn blend<T: Copy, S: Copy + Default + std::ops::AddAssign + std::ops::Mul<f64, Output = S>>(&self, values: &[T], to: impl Fn(T) -> S) -> Option<S> {
        let mut sum = S::default();
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
pub(super) struct Corner {
    point: Point,
    pub world: DVec3,
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
pub(super) fn source_corners(p: &Primitive, focus: &Focus, t: &[u32; 3]) -> Option<[Corner; 3]> {
    let at = |k: usize| {
        let mut bary = [0.0; 3];
        bary[k] = 1.0;
        corner(p, focus, Point::vertex(t[k]), bary)
    };
    Some([at(0)?, at(1)?, at(2)?])
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

    /// Splits segment `[a, b]` (of source segment `face`) in halves until the rule splits
    /// neither, as [`Refiner::split`] does a triangle.
    fn split_segment(&mut self, face: u32, [a, b]: [Corner; 2], depth: u32) -> Option<()> {
        if !self.focus.splits(&a, &b) {
            return self.emit(face, [a, b]);
        }
        if depth >= MAX_DEPTH {
            return None;
        }
        let ab = self.corner_between(&a, &b)?;
        self.split_segment(face, [a, ab], depth + 1)?;
        self.split_segment(face, [ab, b], depth + 1)
    }

    /// Emits a triangle or a segment (`N` = 3 or 2).
    fn emit<const N: usize>(&mut self, face: u32, corners: [Corner; N]) -> Option<()> {
        if self.faces.face.len() >= self.limit {
            return None;
        }
        let first_new = self.source.positions.len() as u32;
        for corner in &corners {
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
        // A segment's third corner weighs nothing.
        self.faces.corners.push(std::array::from_fn(|k| corners.get(k).map_or([0.0; 3], |c| c.bary.map(|w| w as f32))));
        Some(())
    }
}

/// A primitive's triangles, or its segments as `[a, b, b]` (how picks name a segment's
/// vertices), in the order picks number them (a strip's segment `k` joins its vertices `k`
/// and `k + 1`); none for points.
pub(super) fn source_elements(p: &Primitive) -> Vec<[u32; 3]> {
    let vertex = |k: usize| p.indices.as_ref().map_or(Some(k as u32), |ix| ix.get(k).copied());
    let count = p.indices.as_ref().map_or(p.positions.len(), Vec::len);
    let segment = |a: usize, b: usize| Some([vertex(a)?, vertex(b)?, vertex(b)?]);
    match p.topology {
        Topology::TriangleList => (0..p.triangle_count()).map(|t| p.triangle(t)).collect(),
        Topology::LineList => (0..count / 2).filter_map(|s| segment(2 * s, 2 * s + 1)).collect(),
        Topology::LineStrip => (1..count).filter_map(|k| segment(k - 1, k)).collect(),
        _ => vec![],
    }
}

/// How many triangles or segments `p` has ([`source_elements`] without the list).
pub(super) fn element_count(p: &Primitive) -> usize {
    let count = p.indices.as_ref().map_or(p.positions.len(), Vec::len);
    match p.topology {
        Topology::TriangleList => count / 3,
        Topology::LineList => count / 2,
        Topology::LineStrip => count.saturating_sub(1),
        _ => 0,
    }
}

fn is_lines(p: &Primitive) -> bool {
    matches!(p.topology, Topology::LineList | Topology::LineStrip)
}

/// What [`refine`] made of a primitive.
pub enum Refined {
    /// No edge splits (or the primitive is not a plain rigid triangle or line primitive).
    Unchanged,
    Split(Box<(Primitive, SourceFaces)>),
    /// Splitting it would pass `limit` triangles or [`MAX_DEPTH`], or it is too large to copy;
    /// with the work done before it stopped (source elements and pieces made).
    TooLarge(usize),
}

/// `p` with its triangles (or segments: a strip becomes a list) split around `focus`, and
/// where each came from; its positions (the file's vertices and the new ones, blended from the
/// file's in f64) are written less `shift`.
pub fn refine(p: &Primitive, focus: &Focus, shift: DVec3, limit: usize) -> Refined {
    let rigid = p.skin.is_empty() && p.morph_targets.is_empty();
    let n = p.positions.len();
    let attributes_match = p.normals.len() == n && p.uvs.as_ref().is_none_or(|u| u.len() == n) && p.colors.as_ref().is_none_or(|c| c.len() == n);
    if !(p.topology == Topology::TriangleList || is_lines(p)) || !rigid {
        return Refined::Unchanged;
    }
    // Nothing to do unless some edge splits.
    if !any_edge_splits(p, focus) {
        return Refined::Unchanged;
    }
    let mut r = Refiner { source: p, focus, index_of: HashMap::new(), new_points: vec![], indices: vec![], faces: SourceFaces::default(), limit };
    let sources = source_elements(p);
    if !attributes_match || sources.len() > MAX_SOURCE_TRIANGLES || p.positions.len() >= u32::MAX as usize / 2 {
        return Refined::TooLarge(sources.len());
    }
    for (face, t) in sources.iter().enumerate() {
        let Some([a, b, c]) = source_corners(p, focus, t) else { return Refined::TooLarge(face + r.indices.len() / 3) };
        let split = if is_lines(p) { r.split_segment(face as u32, [a, b], 0) } else { r.split(face as u32, [a, b, c], 0) };
        if split.is_none() {
            return Refined::TooLarge(face + r.indices.len() / 3);
        }
    }
    let sources_len = sources.len();
    r.faces.source_vertices = sources;
    // The file's vertices, then the new ones; positions written less the shift (after the
    // blend, as the file's own are).
    let new_points = &r.new_points;
    let vec3 = |v: Vec3| v.as_dvec3().extend(0.0);
    let positions = with_new_points(&p.positions, new_points, vec3, |d| (d.truncate() - shift).as_vec3());
    // Normals are blended, not renormalised: the shaders normalise after interpolating, so a
    // split triangle shades as its source did.
    let normals = with_new_points(&p.normals, new_points, vec3, |d| d.truncate().as_vec3());
    // Optional attributes: `Some(None)` without them, `None` when a blend fails.
    let uvs = p.uvs.as_ref().map_or(Some(None), |uvs| {
        with_new_points(uvs, new_points, |v: Vec2| v.as_dvec2().extend(0.0).extend(0.0), |d| d.truncate().truncate().as_vec2()).map(Some)
    });
    let colors = p.colors.as_ref().map_or(Some(None), |colors| with_new_points(colors, new_points, Vec4::as_dvec4, |d| d.as_vec4()).map(Some));
    let (Some(positions), Some(normals), Some(uvs), Some(colors)) = (positions, normals, uvs, colors) else {
        return Refined::TooLarge(sources_len + r.indices.len() / 3);
    };
    let refined = Primitive {
        positions,
        normals,
        uvs,
        colors,
        indices: Some(r.indices),
        color: p.color,
        texture: p.texture,
        alpha_cutoff: p.alpha_cutoff,
        single_sided: p.single_sided,
        // Pieces of a strip are separate segments.
        topology: if is_lines(p) { Topology::LineList } else { p.topology },
        ..Default::default()
    };
    Refined::Split(Box::new((refined, r.faces)))
}

/// `values` (one per file vertex) followed by each new point's blend of them, through f64:
/// `to` takes a value there, `from` brings it (or a blend) back.
fn with_new_points<T: Copy>(values: &[T], new_points: &[Point], to: impl Fn(T) -> DVec4, from: impl Fn(DVec4) -> T) -> Option<Vec<T>> {
    let new = new_points.iter().map(|q| q.blend(values, &to).map(&from));
    values.iter().map(|&v| Some(from(to(v)))).chain(new).collect()
}
