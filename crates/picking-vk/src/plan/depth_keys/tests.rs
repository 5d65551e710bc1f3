use super::*;
use crate::draw::{Aabb, BufferRange, MeshGeometry, Positions, Triangles};
use crate::plan::sphere::spheres_of;
use crate::{ObjectId, Viewport};
use glam::Mat4;
use std::sync::Arc;

fn draw(id: u64) -> PickDraw {
    let range = BufferRange { buffer: vk::Buffer::null(), offset: 0, size: 1 << 10 };
    PickDraw::new(ObjectId::new(id).unwrap(), Positions { range, stride: 12, vertex_count: 4 }, Triangles::NonIndexed { first_vertex: 0, vertex_count: 3 })
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
    let mut next = crate::plan::test_rng(99);
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
        let (mut nearest, mut nearest_vertex) = (f64::INFINITY, f64::INFINITY);
        for k in 0..4 {
            let axis = Vec3::new(next() - 0.5, next() - 0.5, next() - 0.5).normalize_or(Vec3::Y);
            let scale = Vec3::new(0.1 + next() * 3.0, 0.1 + next() * 3.0, 0.1 + next() * 3.0);
            let t = offset + Vec3::new((next() - 0.5) * 20.0, (next() - 0.5) * 15.0, -2.0 - next() * 60.0);
            let model = Mat4::from_scale_rotation_translation(scale, glam::Quat::from_axis_angle(axis, next() * 6.0), t);
            let min = Vec3::new(next(), next(), next()) * -2.0;
            let bounds = Aabb { min, max: min + Vec3::new(next(), next(), next()) * 3.0 + 0.01 };
            // Every other draw is a mesh of points in its box, so its sphere counts too.
            // (The draw reads three vertices.)
            let points: Vec<Vec3> = (0..3).map(|_| bounds.min + (bounds.max - bounds.min) * Vec3::new(next(), next(), next())).collect();
            let d = draw(k + 1).with_model(model).with_bounds(bounds);
            let d =
                if case % 4 < 2 { d.with_geometry(Arc::new(MeshGeometry { positions: points.clone(), ..Default::default() })).with_bounds(bounds) } else { d };
            let sphere = spheres_of(std::slice::from_ref(&d))[0];
            assert_eq!(sphere.is_some(), case % 4 < 2);
            let own = DepthSummary::of(&d, sphere.as_ref());
            merged = DepthSummary::merge(merged, own);
            let Some(key) = pd.near_key(&d, sphere.as_ref()) else { continue };
            nearest = nearest.min(key);
            compared += 1;
            if let Some(summary_key) = pd.summary_key(&own) {
                keyed += 1;
                // Both bound the same vertices; the summary's world box may be the tighter.
                if sphere.is_none() {
                    assert!(summary_key <= key, "case {case}: summary {summary_key} beyond the draw's {key}");
                }
            }
            // Neither key lies beyond a vertex the draw has (exact NDC depth in f64).
            if sphere.is_some() {
                let vp = camera.view_projection * model.as_dmat4();
                for p in &points {
                    let clip = vp * p.as_dvec3().extend(1.0);
                    let k = super::key(clip.z / clip.w, pd.ndc_nearer);
                    nearest_vertex = nearest_vertex.min(k);
                    assert!(key <= k, "case {case}: the draw's key {key} beyond its vertex at {k}");
                    if let Some(summary_key) = pd.summary_key(&own) {
                        assert!(summary_key <= k, "case {case}: summary {summary_key} beyond a vertex at {k}");
                    }
                }
            }
        }
        if let Some(summary_key) = pd.summary_key(&merged) {
            assert!(summary_key <= nearest || case % 4 < 2, "case {case}: merged summary {summary_key} beyond {nearest}");
            assert!(summary_key <= nearest_vertex, "case {case}: merged summary {summary_key} beyond a vertex at {nearest_vertex}");
        }
    }
    assert!(keyed * 2 > compared, "most summaries give a key: {keyed} of {compared}");
}
