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
//! report the file's face and barycentrics. Segments of lines are split by the same rule (a
//! strip becomes a list), their pieces reporting the file's segment and its `t`.

mod split;

pub use crate::scene::SourceFaces;

use crate::scene::{Lens, MeshAsset, Scene};
use glam::{DMat4, DVec3};
use picking_vk_host::Primitive;
use split::{element_count, refine, source_corners, source_elements, Corner, Refined};
use std::collections::HashSet;

/// A triangle needs splitting when a vertex lies more than this many times farther from the
/// camera than the triangle itself (f32's error then stays near 1e-5 of the distance,
/// 0.5 * 2^-24 * 4096); an edge is split while it is this many times longer than the nearest a
/// triangle it bounds can come to the camera, and than the camera's znear.
const RATIO: f64 = 4096.0;
/// The least the ratio comes to under a narrow field of view ([`ratio_of`]).
const MIN_RATIO: f64 = 16.0;
/// How far a triangle reaches from its longest edge, per unit of that edge (sqrt(3) / 2).
const REACH: f64 = 0.8661;
/// Splits per source triangle, at most (each halves an edge).
const MAX_DEPTH: u32 = 400;
/// Triangles (and segments) the splits may add to a scene, in all.
const MAX_ADDED_TRIANGLES: usize = 1 << 20;
/// Larger primitives are not eligible (their copy would cost too much memory).
const MAX_SOURCE_TRIANGLES: usize = 1 << 20;

/// The camera a primitive is split around: the mesh's world (mesh space to the file's frame),
/// the eye in that frame, the distance below which precision is not chased (the camera's
/// znear), and the ratio of the rule ([`ratio_of`]).
#[derive(Clone, Copy, Debug)]
pub struct Focus {
    pub world: DMat4,
    pub eye: DVec3,
    pub floor: f64,
    pub ratio: f64,
}

/// Meshes that more nodes draw are not split (each node is another place to split for).
const MAX_USERS: usize = 16;

fn is_rigid(mesh: &MeshAsset) -> bool {
    mesh.primitives.iter().all(|p| p.skin.is_empty() && p.morph_targets.is_empty())
}

/// The camera's znear, the floor of the split, and the rule's ratio. The rule is about
/// perspective, where f32's error grows with a vertex's distance against the triangle's:
/// scenes seen through an orthographic camera are not split.
fn floor_of(scene: &Scene) -> Option<(f64, f64)> {
    let c = scene.camera.as_ref()?;
    let Lens::Perspective { yfov, .. } = c.lens else { return None };
    Some((f64::from(c.znear).max(f64::MIN_POSITIVE), ratio_of(yfov)))
}

/// [`RATIO`] for a camera of vertical field `yfov`: a narrower field magnifies f32's error on
/// screen by as much (tan(yfov / 2) against a 1 radian field's), so the rule tightens by that
/// factor, to [`MIN_RATIO`] at most (pieces near the camera are the ratio times znear across:
/// below that, a ground under a field of 2e-6 radians became too many to split, and drew
/// nothing whole). A ground 2.6e5 across seen from 316 units with a field of 6e-4 radians lost
/// a column of the pick pass to near-plane clipping, unsplit.
fn ratio_of(yfov: f32) -> f64 {
    let tan = (f64::from(yfov) * 0.5).tan();
    if tan.is_finite() && tan > 0.0 {
        (RATIO * (tan / 0.5f64.tan()).min(1.0)).max(MIN_RATIO)
    } else {
        RATIO
    }
}

/// When the scene needs splitting, gives every node but the first its own copy of a rigid
/// mesh that 2 to [`MAX_USERS`] nodes draw and that the split rule cuts somewhere: the split
/// follows each copy's place. Copies add at most [`MAX_ADDED_TRIANGLES`] in all (a vertex counting a third). `worlds`:
/// each node's world in the file's frame (f64); `eye` the camera there. Returns whether a mesh
/// that one node now draws needs splitting: only then is [`refine_near_camera`] called.
pub fn unshare(scene: &mut Scene, worlds: &[DMat4], eye: Option<DVec3>) -> bool {
    let (Some(eye), Some((floor, ratio))) = (eye, floor_of(scene)) else { return false };
    let users = scene.mesh_users();
    // Per mesh: the places it is drawn at, if it is rigid and every one is finite.
    let places: Vec<Vec<Focus>> = (0..scene.meshes.len())
        .map(|m| {
            let focus: Option<Vec<Focus>> =
                users[m].iter().map(|&n| Some(Focus { world: worlds.get(n).copied().filter(DMat4::is_finite)?, eye, floor, ratio })).collect();
            focus.filter(|_| is_rigid(&scene.meshes[m])).unwrap_or_default()
        })
        .collect();
    // Only a mesh that ends up with one node counts (below): one of more than MAX_USERS nodes
    // never does, and is not tested (a node's every triangle at each of 200,000 places).
    let needs: Vec<bool> = places
        .iter()
        .zip(&scene.meshes)
        .map(|(places, mesh)| places.len() <= MAX_USERS && places.iter().any(|f| mesh.primitives.iter().any(|p| needs_split(p, f))))
        .collect();
    if !needs.contains(&true) {
        return false;
    }
    // Whether each mesh ends up drawn by one node (its copies too).
    let mut single: Vec<bool> = users.iter().map(|nodes| nodes.len() == 1).collect();
    let mut left = MAX_ADDED_TRIANGLES;
    for (m, nodes) in users.iter().enumerate() {
        // A copy holds every vertex too: a mesh's size counts its triangles or its vertices
        // over 3, whichever is more (40 million unused vertices are not copied 15 times).
        let vertices: usize = scene.meshes[m].primitives.iter().map(|p| p.positions.len()).sum();
        let triangles: usize = scene.meshes[m].primitives.iter().map(element_count).sum::<usize>().max(vertices / 3);
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
/// Eligible: triangle lists and lines of meshes that one node draws, with no skin or morph targets. Runs in the
/// file's frame, before far-off meshes are re-centred: `worlds` are the nodes' worlds there,
/// `eye` the camera's place, and `shifts` each mesh's re-centring, which the split pieces'
/// positions are written with. A primitive whose split passes the limits stays whole.
pub fn refine_near_camera(scene: &mut Scene, worlds: &[DMat4], eye: Option<DVec3>, shifts: &[DVec3]) -> HashSet<(usize, usize)> {
    let mut split = HashSet::new();
    let (Some(eye), Some((floor, ratio))) = (eye, floor_of(scene)) else { return split };
    let users = scene.mesh_users();
    let eligible: Vec<(usize, Focus)> = (0..scene.meshes.len())
        .filter_map(|m| {
            let [node] = users[m][..] else { return None };
            let world = worlds.get(node).copied().filter(DMat4::is_finite)?;
            is_rigid(&scene.meshes[m]).then_some((m, Focus { world, eye, floor, ratio }))
        })
        .collect();
    let mut left = MAX_ADDED_TRIANGLES;
    // A split that passes the limits is dropped after up to `left` new pieces (and its
    // source's triangles) of work: failures are charged the work they did to a budget of
    // their own, or ten thousand primitives of one huge triangle repeated would each do it.
    let mut failures_left = 4 * MAX_ADDED_TRIANGLES;
    for (m, focus) in &eligible {
        let shift = shifts.get(*m).copied().unwrap_or(DVec3::ZERO);
        for p in 0..scene.meshes[*m].primitives.len() {
            if failures_left == 0 {
                log::warn!("picking-vk viewer: splits that passed the limits used up their budget: the rest of the scene's triangles are left whole");
                return split;
            }
            let source = &scene.meshes[*m].primitives[p];
            let before = element_count(source);
            match refine(source, focus, shift, before.saturating_add(left)) {
                Refined::Unchanged => {}
                Refined::Split(refined) => {
                    let (primitive, faces) = *refined;
                    left -= element_count(&primitive) - before;
                    let mesh = &mut scene.meshes[*m];
                    mesh.primitives[p] = primitive;
                    mesh.source_faces.resize(mesh.primitives.len(), None);
                    mesh.source_faces[p] = Some(faces);
                    split.insert((*m, p));
                }
                Refined::TooLarge(work) => {
                    failures_left = failures_left.saturating_sub(work.max(1));
                    log::warn!("picking-vk viewer: mesh {m} primitive {p}: triangles far larger than their distance from the camera are left whole (splitting them passes the limits)");
                }
            }
        }
    }
    split
}

/// Whether the rule splits an edge of `p`'s triangles or a segment of its lines (at its rest
/// pose).
fn any_edge_splits(p: &Primitive, focus: &Focus) -> bool {
    source_elements(p).iter().filter_map(|t| source_corners(p, focus, t)).any(|[a, b, c]| focus.splits(&a, &b) || focus.splits(&b, &c) || focus.splits(&c, &a))
}

/// Whether a triangle (or segment) of `p` has a vertex more than the ratio times farther from
/// the camera than the triangle (or than znear, for triangles nearer than that).
fn needs_split(p: &Primitive, focus: &Focus) -> bool {
    source_elements(p).iter().any(|t| {
        // A segment `[a, b, b]` is a degenerate triangle: its distance is the segment's.
        let Some(v) = source_corners(p, focus, t).map(|c| c.map(|c| c.world)) else { return false };
        let far = v.iter().map(|q| (*q - focus.eye).length()).fold(0.0, f64::max);
        // Cheap first: no vertex that far from the camera, no need.
        far > focus.ratio * focus.floor && far > focus.ratio * distance_to_triangle(focus.eye, v).max(focus.floor)
    })
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
        if length.is_nan() || length <= self.ratio * self.floor {
            return false;
        }
        let near = (distance_to_segment(self.eye, a, b) - REACH * length).max(0.0);
        length > self.ratio * near.max(self.floor)
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

#[cfg(test)]
mod tests;
