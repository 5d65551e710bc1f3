//! Occlusion for point queries. A ray through a dense scene meets many boxes, but the pixel
//! ends with the nearest surface: once one planned draw surely covers the pixel (a sure hit,
//! [`super::sure_hit`]), every planned draw whose nearest possible depth lies beyond that hit
//! loses the depth test wherever it is drawn, and is dropped. The result is identical, as
//! with every culling step.
//!
//! The argument needs the depth at the pixel to only ever move nearer: every planned draw must
//! test depth in the same direction (LESS or LESS_OR_EQUAL, or GREATER or GREATER_OR_EQUAL),
//! and nothing the picker cannot see may draw (no contributors). Only draws whose depth is
//! bounded by their box are dropped: not instanced, no hook that moves vertices, no
//! deformation, no depth bias, triangles, the host's matrix affine; occluders also need
//! registered geometry read as three f32s, and no hook at all (a hook may discard).

use super::chunks::Chunks;
use super::is_affine;
use super::ray::PixelRay;
use super::sure_hit::{PixelTarget, SureHits};
use super::PlanEntry;
use crate::draw::{PickDraw, PositionFormat, PrimitiveKind, Topology};
use crate::request::camera::{CameraSnapshot, DepthConvention};
use ash::vk;
use glam::{DMat4, DVec3, DVec4, UVec2, Vec3};

/// Occluders tried per pixel, nearest box first.
const MAX_OCCLUDER_TRIES: usize = 4;
/// Fewer planned draws than this are drawn as they are: a proof costs more CPU time than
/// the draws it could save cost the GPU.
const MIN_ENTRIES: usize = 3;

/// Which way the depth test goes for every planned draw.
#[derive(Clone, Copy, PartialEq)]
enum Nearer {
    Smaller,
    Larger,
}

fn nearer_of(draw: &PickDraw, depth: DepthConvention) -> Option<Nearer> {
    nearer_of_compare(draw.raster.depth_compare.unwrap_or(depth.nearer_wins()))
}

/// Whether a draw's depth at any pixel is bounded by its box under its model matrix.
pub(crate) fn depth_bounded_by_box(draw: &PickDraw) -> bool {
    draw.instances.is_none()
        && draw.hooks.as_ref().is_none_or(|h| !h.program.adjusts_world())
        && draw.deformation.is_none()
        && draw.indirect.is_none()
        && draw.raster.depth_bias.is_none()
        && draw.raster.topology.primitive() == PrimitiveKind::Triangle
        && is_affine(&draw.model)
}

/// Reused every pixel: the planned draws' nearest depths and the occluder candidates.
#[derive(Default)]
pub(crate) struct Occlusion {
    /// Per planned entry: the nearest NDC depth its draw can reach (as a "nearness key",
    /// smaller is nearer), or `None` when it cannot be bounded.
    near: Vec<Option<f64>>,
    /// Entries that can prove a sure hit, with their nearest keys.
    occluders: Vec<(f64, u32)>,
    sure_hits: SureHits,
}

/// NDC depth as a key where smaller is nearer.
fn key(z: f64, nearer: Nearer) -> f64 {
    match nearer {
        Nearer::Smaller => z,
        Nearer::Larger => -z,
    }
}

/// Clip z and w of the camera as functions of the world point, and, for a perspective (or
/// any) projection whose z is `alpha * w + beta`, those two: depth then depends on w alone.
struct DepthRows {
    z: DVec4,
    w: DVec4,
    z_of_w: Option<(f64, f64)>,
}

impl DepthRows {
    fn new(camera: &CameraSnapshot) -> Self {
        let (z, w) = (camera.view_projection.row(2), camera.view_projection.row(3));
        let (zl, wl) = (z.truncate(), w.truncate());
        let alpha = if wl.length_squared() > 0.0 { zl.dot(wl) / wl.length_squared() } else { 0.0 };
        let parallel = (zl - alpha * wl).length() <= 1e-12 * zl.length().max(wl.length()) && wl.length_squared() > 0.0;
        DepthRows { z, w, z_of_w: parallel.then_some((alpha, z.w - alpha * w.w)) }
    }
}

/// Clip w and z over a box (centre `c`, half extent `h`) as affine functions of its points,
/// with bounds on the GPU's f32 error in each.
struct BoxDepth {
    c: DVec3,
    h: DVec3,
    rw: DVec4,
    rz: DVec4,
    ew: f64,
    ez: f64,
}

const CLIP_ROUNDING: f64 = 16.0 * f32::EPSILON as f64;

/// The GPU's error in a clip coordinate whose row is `r` over a point within `terms` (per
/// axis, the sum of the magnitudes that make up the coordinate).
fn rounding_over(r: DVec4, terms: DVec3) -> f64 {
    CLIP_ROUNDING * (r.truncate().abs().dot(terms) + r.w.abs())
}

/// The nearest key any point of the box can take, less the GPU's rounding, or `None`.
fn nearest_key_of(b: &BoxDepth, rows: &DepthRows, nearer: Nearer) -> Option<f64> {
    let BoxDepth { c, h, rw, rz, ew, ez } = *b;
    if rows.z_of_w.is_some() {
        // z / w = alpha + beta / w: monotone in w, whose range over the box is its centre's
        // value plus or minus its spread.
        let (mid, spread) = (rw.truncate().dot(c) + rw.w, rw.truncate().abs().dot(h));
        let (w_lo, w_hi) = (mid - spread - ew, mid + spread + ew);
        if w_lo.is_nan() || w_lo <= 0.0 {
            return None;
        }
        let (alpha, beta) = rows.z_of_w?;
        let (a, b) = (alpha + beta / w_lo, alpha + beta / w_hi);
        let slack = (ez + a.abs().max(b.abs()) * ew) / w_lo;
        let nearest = key(a, nearer).min(key(b, nearer)) - slack;
        return nearest.is_finite().then_some(nearest);
    }
    // z / w is quasi-linear where w > 0: over the box its extremes lie at corners.
    let mut nearest = f64::INFINITY;
    for corner in 0..8 {
        let sign = DVec3::new(if corner & 1 == 0 { -1.0 } else { 1.0 }, if corner & 2 == 0 { -1.0 } else { 1.0 }, if corner & 4 == 0 { -1.0 } else { 1.0 });
        let p = c + sign * h;
        let (z, w) = (rz.truncate().dot(p) + rz.w, rw.truncate().dot(p) + rw.w);
        if (w - ew).is_nan() || w - ew <= 0.0 {
            return None;
        }
        // The nearest the GPU's rounding can make this corner.
        let k = match nearer {
            Nearer::Smaller => key((z - ez) / if z - ez >= 0.0 { w + ew } else { w - ew }, nearer),
            Nearer::Larger => key((z + ez) / if z + ez >= 0.0 { w - ew } else { w + ew }, nearer),
        };
        nearest = nearest.min(k);
    }
    nearest.is_finite().then_some(nearest)
}

/// Per axis of the world point, the sum of the magnitudes of the terms that make it up over
/// the box `c` +- `h` under `model`: what bounds the rounding of a shader that goes through
/// the world point.
fn world_terms(model: &DMat4, c: DVec3, h: DVec3) -> DVec3 {
    model.x_axis.truncate().abs() * (c.x.abs() + h.x)
        + model.y_axis.truncate().abs() * (c.y.abs() + h.y)
        + model.z_axis.truncate().abs() * (c.z.abs() + h.z)
        + model.w_axis.truncate().abs()
}

/// The nearest key any point of `draw`'s box can take, less the GPU's rounding, or `None`.
fn nearest_key(draw: &PickDraw, rows: &DepthRows, nearer: Nearer) -> Option<f64> {
    let local = draw.culling_bounds()?;
    let model = draw.model.as_dmat4();
    // Clip z and w as affine functions of the model-space point.
    let of_model = |v: DVec4| DVec4::new(v.dot(model.x_axis), v.dot(model.y_axis), v.dot(model.z_axis), v.dot(model.w_axis));
    let rw = of_model(rows.w);
    let (c, h) = (local.center().as_dvec3(), local.half_extent().as_dvec3());
    // Rounding in the GPU's f32 clip coordinates: relative to the terms' magnitudes.
    // A hooked draw's shader goes through the world point (model, then view-projection):
    // its rounding is bounded by the camera row's terms over the world point's.
    let world = draw.hooks.as_ref().map(|_| world_terms(&model, c, h));
    let rounding_of = |r: DVec4, camera_row: DVec4| rounding_over(r, c.abs() + h).max(world.map_or(0.0, |t| rounding_over(camera_row, t)));
    let rz = match rows.z_of_w {
        Some((alpha, beta)) => DVec4::new(alpha * rw.x, alpha * rw.y, alpha * rw.z, alpha * rw.w + beta),
        None => of_model(rows.z),
    };
    let b = BoxDepth { c, h, rw, rz, ew: rounding_of(rw, rows.w), ez: rounding_of(rz, rows.z) };
    nearest_key_of(&b, rows, nearer)
}

/// What the nearest-first walk knows of the draws below a node of the shared list's
/// hierarchy: how they test depth, a world box around them (around each draw's exact box,
/// computed in f64 and rounded outwards to f32) and a bound on their world terms (see
/// [`world_terms`], rounded up).
#[derive(Clone, Copy, Debug)]
pub(crate) struct DepthSummary {
    kinds: u8,
    terms: Vec3,
    lo: Vec3,
    hi: Vec3,
}

impl Default for DepthSummary {
    fn default() -> Self {
        DepthSummary { kinds: 0, terms: Vec3::ZERO, lo: Vec3::INFINITY, hi: Vec3::NEG_INFINITY }
    }
}

/// `v` in f32, rounded down (`up == false`) or up per component.
fn to_f32_rounded(v: DVec3, up: bool) -> Vec3 {
    let round = |x: f64| {
        let f = x as f32;
        match (up, f64::from(f).total_cmp(&x)) {
            (true, std::cmp::Ordering::Less) => f.next_up(),
            (false, std::cmp::Ordering::Greater) => f.next_down(),
            _ => f,
        }
    };
    Vec3::new(round(v.x), round(v.y), round(v.z))
}

/// `DepthSummary::kinds`: the draw tests with LESS or LESS_OR_EQUAL, with GREATER or
/// GREATER_OR_EQUAL, with the convention's own test, or its depth is not bounded by its box.
const TESTS_SMALLER: u8 = 1;
const TESTS_LARGER: u8 = 2;
const TESTS_CONVENTION: u8 = 4;
const UNBOUNDED: u8 = 8;

impl DepthSummary {
    /// One draw's summary.
    pub fn of(draw: &PickDraw) -> Self {
        let unbounded = DepthSummary { kinds: UNBOUNDED, ..DepthSummary::default() };
        let Some(local) = draw.culling_bounds().filter(|_| depth_bounded_by_box(draw)) else { return unbounded };
        let kinds = match draw.raster.depth_compare {
            None => TESTS_CONVENTION,
            Some(vk::CompareOp::LESS | vk::CompareOp::LESS_OR_EQUAL) => TESTS_SMALLER,
            Some(vk::CompareOp::GREATER | vk::CompareOp::GREATER_OR_EQUAL) => TESTS_LARGER,
            Some(_) => return unbounded,
        };
        let model = draw.model.as_dmat4();
        let (c, h) = (local.center().as_dvec3(), local.half_extent().as_dvec3());
        let centre = model.transform_point3(c);
        let half = model.x_axis.truncate().abs() * h.x + model.y_axis.truncate().abs() * h.y + model.z_axis.truncate().abs() * h.z;
        // f64 rounding of the box itself, far below any margin.
        let half = half + (centre.abs() + half) * 1e-12;
        let summary = DepthSummary {
            kinds,
            terms: to_f32_rounded(world_terms(&model, c, h), true),
            lo: to_f32_rounded(centre - half, false),
            hi: to_f32_rounded(centre + half, true),
        };
        if summary.terms.is_finite() && summary.lo.is_finite() && summary.hi.is_finite() {
            summary
        } else {
            unbounded
        }
    }

    pub fn merge(a: Self, b: Self) -> Self {
        DepthSummary { kinds: a.kinds | b.kinds, terms: a.terms.max(b.terms), lo: a.lo.min(b.lo), hi: a.hi.max(b.hi) }
    }
}

/// The depth arguments for one pixel, for draws that test depth towards `nearer`.
pub(crate) struct PixelDepth {
    nearer: Nearer,
    /// `nearer` in NDC depth (a flipped depth range flips it).
    ndc_nearer: Nearer,
    convention: DepthConvention,
    rows: DepthRows,
    /// The D32 depth buffer's rounding of window depth, in NDC depth.
    rounding: f64,
    target: PixelTarget,
}

impl PixelDepth {
    fn new(camera: &CameraSnapshot, pixel: UVec2, nearer: Nearer) -> Option<Self> {
        let vp = camera.viewport;
        let depth_scale = f64::from(vp.max_depth) - f64::from(vp.min_depth);
        if depth_scale == 0.0 {
            return None;
        }
        // Keys are NDC depths: a flipped depth range flips which way is nearer there. The
        // D32 depth buffer rounds window depth to f32: that much NDC depth apart on each side.
        let ndc_nearer = match (depth_scale > 0.0, nearer) {
            (true, n) => n,
            (false, Nearer::Smaller) => Nearer::Larger,
            (false, Nearer::Larger) => Nearer::Smaller,
        };
        Some(PixelDepth {
            nearer,
            ndc_nearer,
            convention: camera.depth,
            rows: DepthRows::new(camera),
            rounding: 2.5e-7 / depth_scale.abs(),
            target: PixelTarget { centre: pixel.as_dvec2() + 0.5, viewport: vp },
        })
    }

    /// For draws that test depth the way the camera's convention does.
    pub fn for_convention(camera: &CameraSnapshot, pixel: UVec2) -> Option<Self> {
        Self::new(camera, pixel, nearer_of_compare(camera.depth.nearer_wins())?)
    }

    /// Whether `draw` tests depth towards this pixel's `nearer`.
    pub fn tests_like(&self, draw: &PickDraw) -> bool {
        nearer_of(draw, self.convention) == Some(self.nearer)
    }

    /// The nearest key `draw` can leave at the pixel, if its depth is bounded by its box.
    pub fn near_key(&self, draw: &PickDraw) -> Option<f64> {
        depth_bounded_by_box(draw).then(|| nearest_key(draw, &self.rows, self.ndc_nearer)).flatten().map(|k| k - self.rounding)
    }

    /// A key no draw the summary covers can come nearer than, if every one of them tests
    /// depth towards `nearer` and is bounded by its box.
    pub fn summary_key(&self, s: &DepthSummary) -> Option<f64> {
        let convention = if nearer_of_compare(self.convention.nearer_wins()) == Some(self.nearer) { TESTS_CONVENTION } else { 0 };
        let towards = match self.nearer {
            Nearer::Smaller => TESTS_SMALLER,
            Nearer::Larger => TESTS_LARGER,
        };
        if s.kinds & !(convention | towards) != 0 || s.kinds == 0 {
            return None;
        }
        // The box in world space: the model matrix is the identity, and the rounding is
        // bounded by the camera rows over the summarized world terms (which bound each draw's
        // own, see `nearest_key`).
        let (lo, hi, terms) = (s.lo.as_dvec3(), s.hi.as_dvec3(), s.terms.as_dvec3());
        let (c, h) = ((lo + hi) * 0.5, (hi - lo) * 0.5);
        let rows = &self.rows;
        let ew = rounding_over(rows.w, terms);
        let (rz, ez) = match rows.z_of_w {
            Some((alpha, beta)) => {
                let rz = DVec4::new(alpha * rows.w.x, alpha * rows.w.y, alpha * rows.w.z, alpha * rows.w.w + beta);
                // Bounds both forms a draw's own z error takes (through its matrix, or the
                // world point).
                (rz, (alpha.abs() * ew + CLIP_ROUNDING * beta.abs()).max(rounding_over(rows.z, terms)))
            }
            None => (rows.z, rounding_over(rows.z, terms)),
        };
        nearest_key_of(&BoxDepth { c, h, rw: rows.w, rz, ew, ez }, rows, self.ndc_nearer).map(|k| k - self.rounding)
    }
}

fn nearer_of_compare(op: vk::CompareOp) -> Option<Nearer> {
    match op {
        vk::CompareOp::LESS | vk::CompareOp::LESS_OR_EQUAL => Some(Nearer::Smaller),
        vk::CompareOp::GREATER | vk::CompareOp::GREATER_OR_EQUAL => Some(Nearer::Larger),
        _ => None,
    }
}

impl Occlusion {
    /// The farthest key the pixel can end with once `draw` is drawn, if one of its triangles
    /// surely covers the pixel.
    pub fn sure_far(&mut self, depth: &PixelDepth, draw: &PickDraw, camera: &CameraSnapshot, ray: &PixelRay, chunks: &mut Chunks, frame: u64) -> Option<f64> {
        let geometry = draw.geometry.as_ref()?;
        let inverse = draw.model.inverse();
        if !inverse.is_finite() {
            return None;
        }
        let clip = camera.model_view_projection(&draw.model);
        let model_ray = ray.transformed(&inverse);
        let (cull, front) = (draw.raster.cull_mode, draw.raster.front_face);
        let (hit, err) = self.sure_hits.nearest(chunks, geometry, &draw.triangles, &clip, &model_ray, &depth.target, cull, front, frame)?;
        Some(key(hit, depth.ndc_nearer) + err + depth.rounding)
    }

    /// Drops the entries a sure hit proves cannot win the pixel; returns how many. `walked`:
    /// a nearest-first walk planned the entries and tried occluders already, proving this
    /// bound (if any) for draws that test depth the convention's way; none are tried again.
    #[allow(clippy::too_many_arguments)]
    pub fn prune(
        &mut self,
        entries: &mut Vec<PlanEntry>,
        draws: &[PickDraw],
        camera: &CameraSnapshot,
        pixel: UVec2,
        ray: &PixelRay,
        chunks: &mut Chunks,
        frame: u64,
        walked: Option<Option<f64>>,
    ) -> u32 {
        // A walk that proved no bound leaves nothing to prune.
        if (entries.len() < MIN_ENTRIES && walked.is_none()) || walked == Some(None) {
            return 0;
        }
        let Some(nearer) = entries.first().and_then(|e| draws.get(e.draw as usize)).and_then(|d| nearer_of(d, camera.depth)) else { return 0 };
        let Some(depth) = PixelDepth::new(camera, pixel, nearer) else { return 0 };
        let known = walked.flatten().filter(|_| PixelDepth::for_convention(camera, pixel).is_some_and(|c| c.nearer == nearer));
        self.near.clear();
        self.occluders.clear();
        for (i, e) in entries.iter().enumerate() {
            let Some(draw) = draws.get(e.draw as usize) else { return 0 };
            if !depth.tests_like(draw) {
                return 0;
            }
            let near = depth.near_key(draw);
            if let Some(k) = near.filter(|_| walked.is_none() && can_occlude(draw)) {
                self.occluders.push((k, i as u32));
            }
            self.near.push(near);
        }
        // The farthest key the pixel can end with once the best occluder is drawn.
        let mut bound: Option<f64> = known;
        for _ in 0..MAX_OCCLUDER_TRIES {
            // The untried occluder with the nearest box.
            let Some(next) = (0..self.occluders.len()).min_by(|&a, &b| self.occluders[a].0.total_cmp(&self.occluders[b].0)) else { break };
            let (near, i) = self.occluders.swap_remove(next);
            if bound.is_some_and(|b| near >= b) {
                break;
            }
            let draw = &draws[entries[i as usize].draw as usize];
            if let Some(far) = self.sure_far(&depth, draw, camera, ray, chunks, frame) {
                bound = Some(bound.map_or(far, |b: f64| b.min(far)));
            }
        }
        let Some(bound) = bound else { return 0 };
        let before = entries.len();
        let mut k = 0;
        entries.retain(|_| {
            let keep = self.near[k].is_none_or(|near| near <= bound);
            k += 1;
            keep
        });
        (before - entries.len()) as u32
    }
}

/// Whether a draw can be an occluder for some pixel and depth convention.
pub(crate) fn may_occlude(draw: &PickDraw) -> bool {
    can_occlude(draw) && depth_bounded_by_box(draw) && DepthSummary::of(draw).kinds & UNBOUNDED == 0
}

/// Whether a draw's registered geometry can prove a sure hit.
pub(crate) fn can_occlude(draw: &PickDraw) -> bool {
    // A hook may discard the fragment: only unhooked draws prove hits.
    draw.geometry.is_some() && draw.hooks.is_none() && draw.position_format == PositionFormat::Float32x3 && draw.raster.topology == Topology::TriangleList
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draw::{Aabb, BufferRange, MeshGeometry, Positions, Triangles};
    use crate::{ObjectId, Viewport};
    use glam::{Mat4, Vec3};
    use std::sync::Arc;

    /// A square of side 2 in the z = 0 plane, two triangles, counter-clockwise seen from +z.
    fn square() -> Arc<MeshGeometry> {
        let positions = vec![Vec3::new(-1.0, -1.0, 0.0), Vec3::new(1.0, -1.0, 0.0), Vec3::new(1.0, 1.0, 0.0), Vec3::new(-1.0, 1.0, 0.0)];
        Arc::new(MeshGeometry { positions, indices: Some(vec![0, 1, 2, 0, 2, 3]), ..Default::default() })
    }

    fn draw(id: u64, z: f32) -> PickDraw {
        let range = BufferRange { buffer: vk::Buffer::null(), offset: 0, size: 1 << 10 };
        let triangles = Triangles::Indexed { range, width: crate::draw::IndexWidth::U32, first_index: 0, index_count: 6, vertex_offset: 0 };
        PickDraw::new(ObjectId::new(id).unwrap(), Positions { range, stride: 12, vertex_count: 4 }, triangles)
            .with_geometry(square())
            .with_model(Mat4::from_translation(Vec3::new(0.0, 0.0, z)))
    }

    fn prune(draws: &[PickDraw], pixel: UVec2) -> Vec<u32> {
        let (w, h) = (64, 64);
        let projection = glam::camera::rh::proj::vulkan::perspective(1.0, 1.0, 0.1, 100.0);
        let camera = CameraSnapshot::new(Mat4::IDENTITY, projection, Viewport::full(w, h), None).unwrap();
        let ray = PixelRay::new(&camera, pixel).unwrap();
        // An unbounded draw (never dropped) makes up the planned draws occlusion needs.
        let mut filler = draw(99, -50.0);
        filler.bounds = None;
        let draws: Vec<PickDraw> = draws.iter().cloned().chain([filler]).collect();
        let mut entries: Vec<PlanEntry> =
            (0..draws.len() as u32).map(|draw| PlanEntry { draw, first_range: 0, range_count: 1, ..PlanEntry::default() }).collect();
        Occlusion::default().prune(&mut entries, &draws, &camera, pixel, &ray, &mut Chunks::default(), 1, None);
        entries.iter().map(|e| e.draw).filter(|&d| d as usize != draws.len() - 1).collect()
    }

    #[test]
    fn a_sure_hit_drops_what_lies_behind_it_and_keeps_what_may_lie_in_front() {
        let centre = UVec2::new(32, 32);
        assert_eq!(prune(&[draw(1, -10.0), draw(2, -5.0), draw(3, -20.0)], centre), vec![1], "1 and 3 lie behind 2's sure hit");
        // Off the squares (their edges project inside the view): nothing is sure, all stay.
        assert_eq!(prune(&[draw(1, -10.0), draw(2, -5.0), draw(3, -20.0)], UVec2::new(1, 1)), vec![0, 1, 2]);
        // A box reaching in front of the hit stays.
        let thick = draw(4, -20.0).with_bounds(Aabb { min: Vec3::new(-1.0, -1.0, -1.0), max: Vec3::new(1.0, 1.0, 16.0) });
        assert_eq!(prune(&[draw(2, -5.0), thick], centre), vec![0, 1]);
    }

    #[test]
    fn summaries_round_outwards_to_f32() {
        let v = DVec3::new(0.1, -1.0e6 - 0.3, 1.0 / 3.0);
        let (down, up) = (to_f32_rounded(v, false).as_dvec3(), to_f32_rounded(v, true).as_dvec3());
        assert!(down.cmple(v).all() && up.cmpge(v).all() && down.cmplt(up).all(), "{down} {v} {up}");
        assert_eq!(to_f32_rounded(DVec3::splat(0.5), true), Vec3::splat(0.5), "exact values stay");
    }

    #[test]
    fn a_summary_never_lies_nearer_than_the_draws_it_covers() {
        // Random boxes under random affine matrices, near the origin and a million units out,
        // with perspective (both conventions) and orthographic cameras: the key of a summary
        // (one draw's, or merged) is never farther than any covered draw's own key.
        let mut rng = 99u32;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 17;
            rng ^= rng << 5;
            rng as f32 / u32::MAX as f32
        };
        let (mut compared, mut keyed) = (0, 0);
        for case in 0..200 {
            let offset = if case % 2 == 0 { Vec3::ZERO } else { Vec3::new(1.0e6, -4.0e5, 2.0e5) };
            let (projection, depth) = match case % 3 {
                0 => (glam::camera::rh::proj::vulkan::perspective(1.0, 1.5, 0.1, 100.0), DepthConvention::Standard),
                1 => (glam::camera::rh::proj::vulkan::perspective_infinite_reverse(1.0, 1.5, 0.1), DepthConvention::Reverse),
                _ => (glam::camera::rh::proj::vulkan::orthographic(-8.0, 8.0, -6.0, 6.0, 0.1, 100.0), DepthConvention::Standard),
            };
            let view = Mat4::from_translation(-offset);
            let camera = CameraSnapshot::new(view, projection, Viewport::full(64, 48), Some(depth)).unwrap();
            let pixel = UVec2::new((next() * 63.0) as u32, (next() * 47.0) as u32);
            let Some(pd) = PixelDepth::for_convention(&camera, pixel) else { continue };
            let mut merged = DepthSummary::default();
            let mut nearest = f64::INFINITY;
            for k in 0..4 {
                let axis = Vec3::new(next() - 0.5, next() - 0.5, next() - 0.5).normalize_or(Vec3::Y);
                let scale = Vec3::new(0.1 + next() * 3.0, 0.1 + next() * 3.0, 0.1 + next() * 3.0);
                let t = offset + Vec3::new((next() - 0.5) * 20.0, (next() - 0.5) * 15.0, -2.0 - next() * 60.0);
                let model = Mat4::from_scale_rotation_translation(scale, glam::Quat::from_axis_angle(axis, next() * 6.0), t);
                let min = Vec3::new(next(), next(), next()) * -2.0;
                let bounds = Aabb { min, max: min + Vec3::new(next(), next(), next()) * 3.0 + 0.01 };
                let d = draw(k + 1, 0.0).with_model(model).with_bounds(bounds);
                let own = DepthSummary::of(&d);
                merged = DepthSummary::merge(merged, own);
                let Some(key) = pd.near_key(&d) else { continue };
                nearest = nearest.min(key);
                compared += 1;
                if let Some(summary_key) = pd.summary_key(&own) {
                    keyed += 1;
                    assert!(summary_key <= key, "case {case}: summary {summary_key} beyond the draw's {key}");
                }
            }
            if let Some(summary_key) = pd.summary_key(&merged) {
                assert!(summary_key <= nearest, "case {case}: merged summary {summary_key} beyond {nearest}");
            }
        }
        assert!(keyed * 2 > compared, "most summaries give a key: {keyed} of {compared}");
    }

    #[test]
    fn culled_faces_other_compares_and_biased_draws_are_respected() {
        let centre = UVec2::new(32, 32);
        let kept = |mode| {
            let culling = crate::RasterState::default().with_culling(mode, vk::FrontFace::COUNTER_CLOCKWISE);
            prune(&[draw(2, -5.0).with_raster(culling), draw(3, -20.0)], centre).len()
        };
        // The square faces the camera one way: culling that face leaves no sure hit.
        assert_eq!([kept(vk::CullModeFlags::FRONT), kept(vk::CullModeFlags::BACK)], [2, 1]);
        assert_eq!(kept(vk::CullModeFlags::FRONT_AND_BACK), 2);
        let always = draw(3, -20.0).with_raster(crate::RasterState::default().with_depth_compare(vk::CompareOp::ALWAYS));
        assert_eq!(prune(&[draw(2, -5.0), always], centre), vec![0, 1], "an ALWAYS draw wins from behind");
        let lequal = crate::RasterState::default().with_depth_compare(vk::CompareOp::LESS_OR_EQUAL);
        assert_eq!(prune(&[draw(2, -5.0).with_raster(lequal), draw(3, -20.0).with_raster(lequal)], centre), vec![0]);
        let biased = draw(3, -20.0).with_raster(crate::RasterState::default().with_depth_bias(crate::DepthBias { constant: -1e6, clamp: 0.0, slope: 0.0 }));
        assert_eq!(prune(&[draw(2, -5.0), biased], centre), vec![0, 1], "a bias may pull it in front");
    }
}
