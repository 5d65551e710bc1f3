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
use super::depth_bounded_by_box;
use super::depth_keys::{convention_nearer, nearer_of, DepthSummary, Nearer, PixelDepth};
use super::ray::PixelRay;
use super::sphere::BoundingSphere;
use super::sure_hit::SureHits;
use super::PlanEntry;
use crate::draw::PickDraw;
use crate::gpu_plan::layout::TableOcclusion;
use crate::request::camera::CameraSnapshot;
use glam::UVec2;

/// Occluders tried per pixel, nearest box first.
const MAX_OCCLUDER_TRIES: usize = 4;
/// Fewer planned draws than this are drawn as they are: a proof costs more CPU time than
/// the draws it could save cost the GPU.
const MIN_ENTRIES: usize = 3;

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
        let culling = draw.raster.culling_or(camera.culling);
        let (cull, front) = (culling.mode, culling.front_face);
        let (hit, err) = self.sure_hits.nearest(chunks, geometry, &draw.triangles, &clip, &model_ray, depth.target(), cull, front, frame)?;
        Some(depth.far_key(hit, err))
    }

    /// Drops the entries a sure hit proves cannot win the pixel; returns how many, and the
    /// farthest key the pixel can end with (the bound they were dropped by), if proved. `walked`:
    /// a nearest-first walk planned the entries and tried occluders already, proving this
    /// bound (if any) for draws that test depth the convention's way; none are tried again.
    #[allow(clippy::too_many_arguments)]
    pub fn prune(
        &mut self,
        entries: &mut Vec<PlanEntry>,
        draws: &[PickDraw],
        spheres: &[Option<BoundingSphere>],
        camera: &CameraSnapshot,
        pixel: UVec2,
        ray: &PixelRay,
        chunks: &mut Chunks,
        frame: u64,
        walked: Option<Option<f64>>,
    ) -> (u32, Option<f64>) {
        // A walk that proved no bound leaves nothing to prune.
        if (entries.len() < MIN_ENTRIES && walked.is_none()) || walked == Some(None) {
            return (0, None);
        }
        let Some(nearer) = entries.first().and_then(|e| draws.get(e.draw as usize)).and_then(|d| nearer_of(d, camera.depth)) else { return (0, None) };
        let Some(depth) = PixelDepth::new(camera, pixel, nearer) else { return (0, None) };
        let known = walked.flatten().filter(|_| convention_nearer(camera.depth) == Some(nearer));
        self.near.clear();
        self.occluders.clear();
        for (i, e) in entries.iter().enumerate() {
            let Some(draw) = draws.get(e.draw as usize) else { return (0, None) };
            if !depth.tests_like(draw) {
                return (0, None);
            }
            let near = depth.near_key(draw, spheres.get(e.draw as usize).and_then(Option::as_ref));
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
        let Some(bound) = bound else { return (0, None) };
        let before = entries.len();
        let mut k = 0;
        entries.retain(|_| {
            let keep = self.near[k].is_none_or(|near| near <= bound);
            k += 1;
            keep
        });
        ((before - entries.len()) as u32, Some(bound))
    }
}

/// The way every draw of `entries` (a point query's plan, the table's groups included)
/// tests depth, if one.
pub(crate) fn tests_alike(entries: &[PlanEntry], draws: &[PickDraw], camera: &CameraSnapshot) -> Option<Nearer> {
    let mut nearer = None;
    for e in entries {
        let n = nearer_of(draws.get(e.draw as usize)?, camera.depth)?;
        if nearer.is_some_and(|m| m != n) {
            return None;
        }
        nearer = Some(n);
    }
    nearer
}

/// The occlusion the GPU may apply to the table groups of a point query at `pixel` whose
/// draws all test depth towards `nearer` (nothing else draws there: no contributors), with
/// the CPU's `bound`; each group takes it only where [`drops_rows`] allows.
pub(crate) fn table_occlusion(camera: &CameraSnapshot, pixel: UVec2, (nearer, bound): (Nearer, Option<f64>)) -> Option<TableOcclusion> {
    let (larger, rounding) = PixelDepth::new(camera, pixel, nearer)?.ndc_terms();
    Some(TableOcclusion { larger, rounding: f32_up(rounding), bound: bound.map_or(f32::INFINITY, f32_up) })
}

/// Whether the table group whose first draw is `group` (its draws share its pipeline) may
/// drop rows behind a sure hit: not where its depth is not bounded by its box (a bias, lines
/// or points), nor where it is hooked (its vertices go through the model and the
/// view-projection apart, which the GPU's near keys do not bound). A sure hit proves the
/// pixel's depth whichever draw it is of, so each group is dropped from on its own terms.
pub(crate) fn drops_rows(group: &PickDraw) -> bool {
    depth_bounded_by_box(group) && group.hooks.is_none()
}

/// `x` in f32, rounded towards +inf.
fn f32_up(x: f64) -> f32 {
    let f = x as f32;
    if f64::from(f) < x {
        f.next_up()
    } else {
        f
    }
}

/// Whether a draw can be an occluder for some pixel and depth convention.
pub(crate) fn may_occlude(draw: &PickDraw) -> bool {
    can_occlude(draw) && DepthSummary::of(draw, None).is_bounded()
}

/// Whether a draw's registered geometry can prove a sure hit.
pub(crate) fn can_occlude(draw: &PickDraw) -> bool {
    draw.proves_hits()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::draw::{Aabb, BufferRange, MeshGeometry, Positions, Triangles};
    use crate::{ObjectId, Viewport};
    use ash::vk;
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
        Occlusion::default().prune(&mut entries, &draws, &[], &camera, pixel, &ray, &mut Chunks::default(), 1, None);
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
            let culling = crate::draw::RasterState::default().with_culling(mode, vk::FrontFace::COUNTER_CLOCKWISE);
            prune(&[draw(2, -5.0).with_raster(culling), draw(3, -20.0)], centre).len()
        };
        // The square faces the camera one way: culling that face leaves no sure hit.
        assert_eq!([kept(vk::CullModeFlags::FRONT), kept(vk::CullModeFlags::BACK)], [2, 1]);
        assert_eq!(kept(vk::CullModeFlags::FRONT_AND_BACK), 2);
        let always = draw(3, -20.0).with_raster(crate::draw::RasterState::default().with_depth_compare(vk::CompareOp::ALWAYS));
        assert_eq!(prune(&[draw(2, -5.0), always], centre), vec![0, 1], "an ALWAYS draw wins from behind");
        let lequal = crate::draw::RasterState::default().with_depth_compare(vk::CompareOp::LESS_OR_EQUAL);
        assert_eq!(prune(&[draw(2, -5.0).with_raster(lequal), draw(3, -20.0).with_raster(lequal)], centre), vec![0]);
        let biased =
            draw(3, -20.0).with_raster(crate::draw::RasterState::default().with_depth_bias(crate::draw::DepthBias { constant: -1e6, clamp: 0.0, slope: 0.0 }));
        assert_eq!(prune(&[draw(2, -5.0), biased], centre), vec![0, 1], "a bias may pull it in front");
    }

    #[test]
    fn the_gpu_drops_table_rows_only_where_every_draw_tests_depth_one_way_and_boxes_bound_depth() {
        let projection = glam::camera::rh::proj::vulkan::perspective(1.0, 1.0, 0.1, 100.0);
        let camera = CameraSnapshot::new(Mat4::IDENTITY, projection, Viewport::full(64, 64), None).unwrap();
        let entry = |draw| PlanEntry { draw, ..PlanEntry::default() };
        let pixel = UVec2::new(32, 32);
        let greater = crate::draw::RasterState::default().with_depth_compare(vk::CompareOp::GREATER);
        let draws = [draw(1, -5.0), draw(2, -10.0), draw(3, -10.0).with_raster(greater)];
        let nearer = tests_alike(&[entry(0), entry(1)], &draws, &camera).expect("both test LESS");
        assert!(tests_alike(&[entry(0), entry(2)], &draws, &camera).is_none(), "LESS and GREATER");
        let got = table_occlusion(&camera, pixel, (nearer, Some(0.25))).expect("a pixel in view");
        assert_eq!((got.larger, got.bound), (false, 0.25));
        assert!(got.rounding > 0.0 && got.rounding < 1e-6);
        assert_eq!(table_occlusion(&camera, pixel, (nearer, None)).map(|o| o.bound), Some(f32::INFINITY));
        assert!(drops_rows(&draws[1]), "bounded boxes");
        let biased =
            draw(2, -10.0).with_raster(crate::draw::RasterState::default().with_depth_bias(crate::draw::DepthBias { constant: 1.0, clamp: 0.0, slope: 0.0 }));
        assert!(!drops_rows(&biased), "a bias may pull rows nearer");
        let source = crate::draw::hooks::HookSource {
            name: "stripes".into(),
            discard: Some("bool pick_discard(PickFragment f) { return false; }".into()),
            ..Default::default()
        };
        let hooked = draw(2, -10.0).with_hooks(crate::draw::hooks::DrawHooks::new(crate::draw::hooks::HookProgram::new(source)));
        assert!(!drops_rows(&hooked), "a hooked group's rows have no near keys");
        // The bound is rounded towards farther, never nearer.
        assert!(f64::from(f32_up(0.1)) >= 0.1 && f64::from(f32_up(-0.1)) >= -0.1);
    }
}
