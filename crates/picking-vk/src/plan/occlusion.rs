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
use glam::{DVec4, UVec2};

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
    match draw.raster.depth_compare.unwrap_or(depth.nearer_wins()) {
        vk::CompareOp::LESS | vk::CompareOp::LESS_OR_EQUAL => Some(Nearer::Smaller),
        vk::CompareOp::GREATER | vk::CompareOp::GREATER_OR_EQUAL => Some(Nearer::Larger),
        _ => None,
    }
}

/// Whether a draw's depth at any pixel is bounded by its box under its model matrix.
fn depth_bounded_by_box(draw: &PickDraw) -> bool {
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
    let world_terms = draw.hooks.as_ref().map(|_| {
        model.x_axis.truncate().abs() * (c.x.abs() + h.x)
            + model.y_axis.truncate().abs() * (c.y.abs() + h.y)
            + model.z_axis.truncate().abs() * (c.z.abs() + h.z)
            + model.w_axis.truncate().abs()
    });
    let two_step = |camera_row: DVec4| world_terms.map_or(0.0, |t| camera_row.truncate().abs().dot(t) + camera_row.w.abs());
    let rounding = |r: DVec4| 16.0 * f64::from(f32::EPSILON) * (r.truncate().abs().dot(c.abs() + h) + r.w.abs());
    let rounding_of = |r: DVec4, camera_row: DVec4| rounding(r).max(16.0 * f64::from(f32::EPSILON) * two_step(camera_row));
    let ew = rounding_of(rw, rows.w);
    if let Some((alpha, beta)) = rows.z_of_w {
        // z / w = alpha + beta / w: monotone in w, whose range over the box is its centre's
        // value plus or minus its spread.
        let (mid, spread) = (rw.truncate().dot(c) + rw.w, rw.truncate().abs().dot(h));
        let (w_lo, w_hi) = (mid - spread - ew, mid + spread + ew);
        if w_lo.is_nan() || w_lo <= 0.0 {
            return None;
        }
        let rz = DVec4::new(alpha * rw.x, alpha * rw.y, alpha * rw.z, alpha * rw.w + beta);
        let (a, b) = (alpha + beta / w_lo, alpha + beta / w_hi);
        let slack = (rounding_of(rz, rows.z) + a.abs().max(b.abs()) * ew) / w_lo;
        let nearest = key(a, nearer).min(key(b, nearer)) - slack;
        return nearest.is_finite().then_some(nearest);
    }
    let rz = of_model(rows.z);
    let ez = rounding_of(rz, rows.z);
    // z / w is quasi-linear where w > 0: over the box its extremes lie at corners.
    let mut nearest = f64::INFINITY;
    for corner in 0..8 {
        let sign =
            glam::DVec3::new(if corner & 1 == 0 { -1.0 } else { 1.0 }, if corner & 2 == 0 { -1.0 } else { 1.0 }, if corner & 4 == 0 { -1.0 } else { 1.0 });
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

impl Occlusion {
    /// Drops the entries a sure hit proves cannot win the pixel; returns how many.
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
    ) -> u32 {
        if entries.len() < MIN_ENTRIES {
            return 0;
        }
        let Some(nearer) = draws.get(entries[0].draw as usize).and_then(|d| nearer_of(d, camera.depth)) else { return 0 };
        let vp = camera.viewport;
        let depth_scale = f64::from(vp.max_depth) - f64::from(vp.min_depth);
        if depth_scale == 0.0 {
            return 0;
        }
        // Keys are NDC depths: a flipped depth range flips which way is nearer there. The
        // D32 depth buffer rounds window depth to f32: that much NDC depth apart on each side.
        let rounding = 2.5e-7 / depth_scale.abs();
        let ndc_nearer = match (depth_scale > 0.0, nearer) {
            (true, n) => n,
            (false, Nearer::Smaller) => Nearer::Larger,
            (false, Nearer::Larger) => Nearer::Smaller,
        };
        let rows = DepthRows::new(camera);
        self.near.clear();
        self.occluders.clear();
        for (i, e) in entries.iter().enumerate() {
            let Some(draw) = draws.get(e.draw as usize) else { return 0 };
            if nearer_of(draw, camera.depth) != Some(nearer) {
                return 0;
            }
            let near = depth_bounded_by_box(draw).then(|| nearest_key(draw, &rows, ndc_nearer)).flatten().map(|k| k - rounding);
            if let Some(k) = near.filter(|_| can_occlude(draw)) {
                self.occluders.push((k, i as u32));
            }
            self.near.push(near);
        }
        let target = PixelTarget { centre: pixel.as_dvec2() + 0.5, viewport: vp };
        // The farthest key the pixel can end with once the best occluder is drawn.
        let mut bound: Option<f64> = None;
        for _ in 0..MAX_OCCLUDER_TRIES {
            // The untried occluder with the nearest box.
            let Some(next) = (0..self.occluders.len()).min_by(|&a, &b| self.occluders[a].0.total_cmp(&self.occluders[b].0)) else { break };
            let (near, i) = self.occluders.swap_remove(next);
            if bound.is_some_and(|b| near >= b) {
                break;
            }
            let draw = &draws[entries[i as usize].draw as usize];
            let Some(geometry) = draw.geometry.as_ref() else { continue };
            let inverse = draw.model.inverse();
            if !inverse.is_finite() {
                continue;
            }
            let clip = (camera.view_projection * draw.model.as_dmat4()).as_mat4();
            let model_ray = ray.transformed(&inverse);
            let Some((depth, err)) =
                self.sure_hits.nearest(chunks, geometry, &draw.triangles, &clip, &model_ray, &target, draw.raster.cull_mode, draw.raster.front_face, frame)
            else {
                continue;
            };
            // The farthest the hit can be, as a key.
            let far = key(depth, ndc_nearer) + err + rounding;
            if bound.is_none_or(|b| far < b) {
                bound = Some(far);
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

/// Whether a draw's registered geometry can prove a sure hit.
fn can_occlude(draw: &PickDraw) -> bool {
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
        Occlusion::default().prune(&mut entries, &draws, &camera, pixel, &ray, &mut Chunks::default(), 1);
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
