//! How near a draw can come at a pixel, as a "nearness key" (NDC depth, smaller is nearer):
//! from its box under its model matrix, less every rounding the GPU's f32 clip coordinates
//! and the D32 depth buffer can bring (see [`super::occlusion`], which drops what lies beyond
//! a sure hit); and the same bound for a whole subtree of the shared list's hierarchy, from
//! a summary of its draws (see [`super::nearest_first`]).

use super::depth_bounded_by_box;
use super::sphere::{within_sphere, BoundingSphere};
use super::sure_hit::PixelTarget;
use crate::draw::{Aabb, PickDraw};
use crate::request::camera::{CameraSnapshot, DepthConvention};
use ash::vk;
use glam::{DMat4, DVec3, DVec4, UVec2, Vec3};

/// Which way the depth test goes for every planned draw.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Nearer {
    Smaller,
    Larger,
}

/// Which way the convention's own depth test goes.
pub(super) fn convention_nearer(depth: DepthConvention) -> Option<Nearer> {
    nearer_of_compare(depth.nearer_wins())
}

/// Which way `draw`'s depth test goes under the convention `depth`; `None` for ALWAYS and the like.
pub(super) fn nearer_of(draw: &PickDraw, depth: DepthConvention) -> Option<Nearer> {
    nearer_of_compare(draw.raster.depth_compare.unwrap_or(depth.nearer_wins()))
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
    /// Clip z's row where clip w's is `w` and z's is `z` (both of one space): for a projection
    /// whose z follows w, `alpha * w + beta`, else `z` itself.
    fn z_row(&self, w: DVec4, z: DVec4) -> DVec4 {
        match self.z_of_w {
            Some((alpha, beta)) => DVec4::new(alpha * w.x, alpha * w.y, alpha * w.z, alpha * w.w + beta),
            None => z,
        }
    }

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

/// The world box (centre, half extent) around the box `c` +- `h` under `model`.
fn world_box(model: &DMat4, c: DVec3, h: DVec3) -> (DVec3, DVec3) {
    let half = model.x_axis.truncate().abs() * h.x + model.y_axis.truncate().abs() * h.y + model.z_axis.truncate().abs() * h.z;
    (model.transform_point3(c), half)
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

/// The nearest key any point of `draw`'s box (and of the box around its world sphere, when
/// it has one: the farther of the two holds) can take, less the GPU's rounding, or `None`.
fn nearest_key(draw: &PickDraw, sphere: Option<&BoundingSphere>, rows: &DepthRows, nearer: Nearer) -> Option<f64> {
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
    let rz = rows.z_row(rw, of_model(rows.z));
    let b = BoxDepth { c, h, rw, rz, ew: rounding_of(rw, rows.w), ez: rounding_of(rz, rows.z) };
    let of_box = nearest_key_of(&b, rows, nearer)?;
    // The same vertices, so the same rounding, bounded in world space by the box around the
    // sphere cut to the world box around the draw's box.
    let of_sphere = sphere.and_then(|s| {
        let (centre, half) = world_box(&model, c, h);
        let lo = (centre - half).max(s.centre - s.radius);
        let hi = (centre + half).min(s.centre + s.radius);
        if !lo.cmple(hi).all() {
            return None;
        }
        let rz = rows.z_row(rows.w, rows.z);
        nearest_key_of(&BoxDepth { c: (lo + hi) * 0.5, h: (hi - lo) * 0.5, rw: rows.w, rz, ..b }, rows, nearer)
    });
    Some(of_sphere.map_or(of_box, |k| k.max(of_box)))
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
    /// One draw's summary; its box also within its world sphere's, when it has one.
    pub fn of(draw: &PickDraw, sphere: Option<&BoundingSphere>) -> Self {
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
        let (centre, half) = world_box(&model, c, h);
        // f64 rounding of the box itself, far below any margin.
        let half = half + (centre.abs() + half) * 1e-12;
        let summary = DepthSummary {
            kinds,
            terms: to_f32_rounded(world_terms(&model, c, h), true),
            lo: to_f32_rounded(centre - half, false),
            hi: to_f32_rounded(centre + half, true),
        };
        let cut = within_sphere(Aabb { min: summary.lo, max: summary.hi }, sphere);
        let summary = DepthSummary { lo: cut.min, hi: cut.max, ..summary };
        if summary.terms.is_finite() && summary.lo.is_finite() && summary.hi.is_finite() {
            summary
        } else {
            unbounded
        }
    }

    /// Whether every draw summarized is bounded by its box and tests depth one of the ways
    /// the nearness keys understand.
    pub fn is_bounded(&self) -> bool {
        self.kinds & UNBOUNDED == 0
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
    pub(super) fn new(camera: &CameraSnapshot, pixel: UVec2, nearer: Nearer) -> Option<Self> {
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
        Self::new(camera, pixel, convention_nearer(camera.depth)?)
    }

    /// Whether nearer is larger NDC depth, and the depth buffer's rounding in NDC depth: what
    /// the GPU's occlusion of a table needs to key depths as these keys do.
    pub(super) fn ndc_terms(&self) -> (bool, f64) {
        (self.ndc_nearer == Nearer::Larger, self.rounding)
    }

    /// Where a sure hit is looked for.
    pub(super) fn target(&self) -> &PixelTarget {
        &self.target
    }

    /// The farthest key the pixel can end with after a sure hit at NDC depth `depth`, give or
    /// take `err`: the D32 buffer's rounding added.
    pub(super) fn far_key(&self, depth: f64, err: f64) -> f64 {
        key(depth, self.ndc_nearer) + err + self.rounding
    }

    /// Whether `draw` tests depth towards this pixel's `nearer`.
    pub fn tests_like(&self, draw: &PickDraw) -> bool {
        nearer_of(draw, self.convention) == Some(self.nearer)
    }

    /// The nearest key `draw` can leave at the pixel, if its depth is bounded by its box.
    pub fn near_key(&self, draw: &PickDraw, sphere: Option<&BoundingSphere>) -> Option<f64> {
        depth_bounded_by_box(draw).then(|| nearest_key(draw, sphere, &self.rows, self.ndc_nearer)).flatten().map(|k| k - self.rounding)
    }

    /// A key no draw the summary covers can come nearer than, if every one of them tests
    /// depth towards `nearer` and is bounded by its box.
    pub fn summary_key(&self, s: &DepthSummary) -> Option<f64> {
        let convention = if convention_nearer(self.convention) == Some(self.nearer) { TESTS_CONVENTION } else { 0 };
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
        let rz = rows.z_row(rows.w, rows.z);
        let ez = match rows.z_of_w {
            // Bounds both forms a draw's own z error takes (through its matrix, or the world
            // point).
            Some((alpha, beta)) => (alpha.abs() * ew + CLIP_ROUNDING * beta.abs()).max(rounding_over(rows.z, terms)),
            None => rounding_over(rows.z, terms),
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

#[cfg(test)]
mod tests;
