//! A sure hit: a triangle of a draw's registered geometry that the rasterizer covers the
//! pixel centre with, whatever the rounding, and the largest depth it can leave there.
//!
//! The test replays what the GPU does with the same f32 matrix the pass pushes: clip
//! coordinates, the viewport transform, face culling and the depth the pixel gets. Every
//! step carries a bound on how far the GPU's f32 arithmetic and sub-pixel snapping can move
//! it (Vulkan guarantees at least 4 sub-pixel bits: vertices move at most 1/32 px per axis),
//! and the pixel centre must lie inside the triangle by more than that. A triangle the test
//! is unsure of is simply not a sure hit.

use super::chunks::{Chunks, GROUP_TRIANGLES};
use super::ray::SlabRay;
use crate::draw::{MeshGeometry, Triangles};
use crate::Viewport;
use ash::vk;
use glam::{DMat4, DVec2, DVec4, Mat4};
use std::sync::Arc;

/// f32 rounding: each clip coordinate the GPU computes is within `CLIP_ULPS * 2^-24` times
/// the sum of its terms' magnitudes of the exact value (four products and three sums, with
/// slack for the matrix itself being rounded to f32).
const CLIP_ULPS: f64 = 16.0;
const F32_EPS: f64 = 1.0 / (1u64 << 24) as f64;
/// How far snapping can move a vertex, in pixels (1/32 px per axis at 4 sub-pixel bits).
const SNAP_PX: f64 = 0.045;
/// Meshes without a group index and more triangles than this are never searched.
const MAX_SEARCHED_TRIANGLES: u32 = 256;

/// Where the test looks: the pixel centre and the host's viewport.
pub(crate) struct PixelTarget {
    /// The pixel centre, in framebuffer coordinates.
    pub centre: DVec2,
    pub viewport: Viewport,
}

/// The search's scratch space: the triangle groups the ray meets, with where it enters them.
#[derive(Default)]
pub(crate) struct SureHits {
    groups: Vec<(f32, u32)>,
}

/// A vertex in window coordinates with how far the GPU may place it from here.
#[derive(Clone, Copy)]
struct WindowVertex {
    at: DVec2,
    /// NDC depth.
    z: f64,
    /// Bounds on the GPU's error: in pixels (before snapping), and in NDC depth.
    err_px: f64,
    err_z: f64,
}

fn to_window(clip_matrix: &DMat4, abs_matrix: &DMat4, p: glam::Vec3, vp: &Viewport) -> Option<WindowVertex> {
    let p = p.as_dvec3().extend(1.0);
    let c = *clip_matrix * p;
    let err: DVec4 = (*abs_matrix * p.abs()) * (CLIP_ULPS * F32_EPS);
    // In front of the eye and inside the depth range by more than the error: never clipped.
    let w = c.w - err.w;
    if !(w > 0.0 && c.z - err.z > 0.0 && c.z + err.z < w) {
        return None;
    }
    let ndc = c.truncate() / c.w;
    let (half_w, half_h) = (f64::from(vp.width) * 0.5, f64::from(vp.height) * 0.5);
    let at = DVec2::new(f64::from(vp.x) + (ndc.x + 1.0) * half_w, f64::from(vp.y) + (ndc.y + 1.0) * half_h);
    // d(x/w) <= (|dx| + |x/w| |dw|) / w, and likewise for y and z.
    let rel = |e: f64, v: f64| (e + v.abs() * err.w) / w;
    let err_px = rel(err.x, ndc.x) * half_w.abs() + rel(err.y, ndc.y) * half_h.abs();
    let err_z = rel(err.z, ndc.z);
    (at.is_finite() && err_px.is_finite()).then_some(WindowVertex { at, z: ndc.z, err_px, err_z })
}

fn cross(a: DVec2, b: DVec2) -> f64 {
    a.x * b.y - a.y * b.x
}

/// The NDC depth range the GPU can give the pixel centre if `v` (in the pass's winding) covers
/// it for sure under `cull_mode` and `front_face`: `(depth, error)`.
fn covered_depth(v: [WindowVertex; 3], centre: DVec2, cull_mode: vk::CullModeFlags, front_face: vk::FrontFace) -> Option<(f64, f64)> {
    let move_px = v.iter().map(|w| w.err_px).fold(0.0, f64::max) + SNAP_PX;
    let [a, b, c] = v.map(|w| w.at);
    let area2 = cross(b - a, c - a);
    // Vulkan's polygon area is -area2 / 2 in framebuffer coordinates.
    let counter_clockwise = -area2 > 0.0;
    let front = counter_clockwise == (front_face == vk::FrontFace::COUNTER_CLOCKWISE);
    let culled = if front { cull_mode.contains(vk::CullModeFlags::FRONT) } else { cull_mode.contains(vk::CullModeFlags::BACK) };
    if culled {
        return None;
    }
    // Edge function of edge (p, q) at the centre; moving p and q by up to `move_px` changes it
    // by at most move_px * (|centre - p| + |centre - q|) + 2 move_px^2.
    let edge = |p: DVec2, q: DVec2| {
        let e = cross(q - p, centre - p);
        let slack = move_px * ((centre - p).length() + (centre - q).length()) + 2.0 * move_px * move_px;
        (e, slack)
    };
    let edges = [edge(b, c), edge(c, a), edge(a, b)];
    let sign = area2.signum();
    if !edges.iter().all(|&(e, slack)| e * sign > slack) {
        return None;
    }
    // Screen-space barycentrics: window depth is affine in window x and y.
    let weights = edges.map(|(e, _)| e / area2);
    let depth = weights[0] * v[0].z + weights[1] * v[1].z + weights[2] * v[2].z;
    // The depth plane's slope, times how far snapping and rounding move the triangle.
    let slope =
        DVec2::new((v[1].z - v[0].z) * (c.y - a.y) - (v[2].z - v[0].z) * (b.y - a.y), (v[2].z - v[0].z) * (b.x - a.x) - (v[1].z - v[0].z) * (c.x - a.x))
            / area2;
    let err_vertices = v.iter().map(|w| w.err_z).fold(0.0, f64::max);
    let err = err_vertices + (slope.x.abs() + slope.y.abs()) * 2.0 * move_px + 4.0 * F32_EPS * depth.abs().max(1.0);
    (depth.is_finite() && err.is_finite()).then_some((depth, err))
}

impl SureHits {
    /// The smallest NDC depth a sure hit of `geometry`'s triangles leaves at the pixel, as
    /// `(depth, error)`: the pixel ends with a depth no farther than `depth + error` (nearer
    /// wins) once the draw is drawn. `ray` is the pick ray in the draw's model space; large
    /// meshes are searched through their index of triangle groups, small ones whole.
    #[allow(clippy::too_many_arguments)]
    pub fn nearest(
        &mut self,
        chunks: &mut Chunks,
        geometry: &Arc<MeshGeometry>,
        triangles: &Triangles,
        clip_matrix: &Mat4,
        ray: &SlabRay,
        target: &PixelTarget,
        cull_mode: vk::CullModeFlags,
        front_face: vk::FrontFace,
        frame: u64,
    ) -> Option<(f64, f64)> {
        let count = triangles.element_count() / 3;
        self.groups.clear();
        if !chunks.groups_along_ray(geometry, triangles, ray, frame, &mut self.groups) {
            if count > MAX_SEARCHED_TRIANGLES {
                return None;
            }
            self.groups.extend((0..count.div_ceil(GROUP_TRIANGLES)).map(|g| (0.0, g)));
        }
        let clip = clip_matrix.as_dmat4();
        let abs = DMat4::from_cols(clip.x_axis.abs(), clip.y_axis.abs(), clip.z_axis.abs(), clip.w_axis.abs());
        // The best sure hit so far, and where the ray crosses its triangle.
        let mut best: Option<(f64, f64, f32)> = None;
        for &(entry, group) in &self.groups {
            // Groups come in the order the ray enters them: one entered beyond the best hit
            // holds only triangles behind it (stopping early only ever loosens the bound).
            if best.is_some_and(|(_, _, at)| entry > at) {
                break;
            }
            let first = group * GROUP_TRIANGLES;
            for t in first..(first + GROUP_TRIANGLES).min(count) {
                let Some(points) = geometry.list_triangle(triangles, t) else { continue };
                // The ray must pass through the triangle (a miss in f32 is only a missed chance).
                let Some(at) = roughly_crosses(ray, &points) else { continue };
                let window = points.map(|p| to_window(&clip, &abs, p, &target.viewport));
                let [Some(a), Some(b), Some(c)] = window else { continue };
                if let Some((depth, err)) = covered_depth([a, b, c], target.centre, cull_mode, front_face) {
                    if best.is_none_or(|(d, e, _)| depth + err < d + e) {
                        best = Some((depth, err, at));
                    }
                }
            }
        }
        best.map(|(depth, err, _)| (depth, err))
    }
}

/// Where the ray, from its origin on, passes through the triangle or close to it, as a ray
/// parameter (a cheap first test: a sure hit's pixel centre lies well inside its triangle).
fn roughly_crosses(ray: &SlabRay, [a, b, c]: &[glam::Vec3; 3]) -> Option<f32> {
    const SLACK: f32 = 1e-3;
    let (e1, e2) = (*b - *a, *c - *a);
    let p = ray.dir.cross(e2);
    let det = e1.dot(p);
    if det.abs() <= f32::MIN_POSITIVE || !det.is_finite() {
        return None;
    }
    let inv = det.recip();
    let s = ray.origin - *a;
    let u = s.dot(p) * inv;
    let q = s.cross(e1);
    let v = ray.dir.dot(q) * inv;
    let t = e2.dot(q) * inv;
    (u >= -SLACK && v >= -SLACK && u + v <= 1.0 + SLACK && t >= -SLACK * t.abs().max(1.0)).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vertex(x: f64, y: f64, z: f64) -> WindowVertex {
        WindowVertex { at: DVec2::new(x, y), z, err_px: 0.0, err_z: 0.0 }
    }

    #[test]
    fn a_centre_well_inside_is_covered_at_the_interpolated_depth() {
        let v = [vertex(0.0, 0.0, 0.2), vertex(10.0, 0.0, 0.4), vertex(0.0, 10.0, 0.6)];
        let (depth, err) = covered_depth(v, DVec2::new(2.5, 2.5), vk::CullModeFlags::NONE, vk::FrontFace::COUNTER_CLOCKWISE).unwrap();
        assert!((depth - (0.2 + 0.25 * 0.2 + 0.25 * 0.4)).abs() < 1e-12, "{depth}");
        assert!(err > 0.0 && err < 0.01, "{err}");
        // Near an edge (within snapping reach) or outside: not sure.
        assert!(covered_depth(v, DVec2::new(0.02, 5.0), vk::CullModeFlags::NONE, vk::FrontFace::COUNTER_CLOCKWISE).is_none());
        assert!(covered_depth(v, DVec2::new(6.0, 6.0), vk::CullModeFlags::NONE, vk::FrontFace::COUNTER_CLOCKWISE).is_none());
    }

    #[test]
    fn culled_faces_never_cover() {
        // Clockwise in framebuffer coordinates (y down): area2 > 0, Vulkan area < 0.
        let v = [vertex(0.0, 0.0, 0.5), vertex(10.0, 0.0, 0.5), vertex(0.0, 10.0, 0.5)];
        let at = DVec2::new(2.0, 2.0);
        let ccw = vk::FrontFace::COUNTER_CLOCKWISE;
        assert!(covered_depth(v, at, vk::CullModeFlags::BACK, ccw).is_none(), "back-facing under CCW");
        assert!(covered_depth(v, at, vk::CullModeFlags::FRONT, ccw).is_some());
        assert!(covered_depth(v, at, vk::CullModeFlags::FRONT, vk::FrontFace::CLOCKWISE).is_none());
        assert!(covered_depth(v, at, vk::CullModeFlags::FRONT_AND_BACK, ccw).is_none());
    }

    #[test]
    fn the_first_test_passes_crossings_and_drops_clear_misses() {
        let tri = [glam::Vec3::new(-1.0, -1.0, -5.0), glam::Vec3::new(1.0, -1.0, -5.0), glam::Vec3::new(0.0, 1.0, -5.0)];
        let ray = |x: f32, dir: f32| SlabRay::new(glam::Vec3::new(x, 0.0, 0.0), glam::Vec3::new(0.0, 0.0, dir));
        assert_eq!(roughly_crosses(&ray(0.0, -1.0), &tri), Some(5.0));
        assert!(roughly_crosses(&ray(0.9, -1.0), &tri).is_none(), "beside it");
        assert!(roughly_crosses(&ray(0.0, 1.0), &tri).is_none(), "behind the origin");
    }

    #[test]
    fn vertices_behind_the_eye_or_past_the_depth_range_are_never_sure() {
        let vp = Viewport::full(100, 100);
        let m = DMat4::IDENTITY;
        assert!(to_window(&m, &m, glam::Vec3::new(0.0, 0.0, 0.5), &vp).is_some());
        let behind = DMat4::from_cols(DVec4::X, DVec4::Y, DVec4::Z, DVec4::new(0.0, 0.0, 0.0, -1.0));
        assert!(to_window(&behind, &behind, glam::Vec3::new(0.0, 0.0, 0.5), &vp).is_none());
        assert!(to_window(&m, &m, glam::Vec3::new(0.0, 0.0, 1.5), &vp).is_none(), "clipped by the far plane");
        assert!(to_window(&m, &m, glam::Vec3::new(0.0, 0.0, f32::NAN), &vp).is_none());
    }
}
