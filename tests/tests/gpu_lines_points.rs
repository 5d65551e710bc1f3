//! Lines and points: line lists and strips (1 pixel, and wide where the device has
//! `wideLines`) and point lists (large where it has `largePoints`) picked by radius queries,
//! against a brute-force oracle over their projected segments and points: a clear winner
//! within the radius must be hit, nothing within reach must be a miss. With detail, the
//! reported segment or point lies under the hit pixel.

use glam::{DVec2, DVec4, Mat4, UVec2, Vec3};
use picking_vk::{
    config::DetailStatus, draw::BufferRange, draw::IndexWidth, draw::MeshGeometry, draw::Positions, draw::PrimitiveKind, draw::RasterState, draw::Topology,
    draw::Triangles, ObjectId, PickDraw, PickFeatures, PickQuery, PickRequest, PickerConfig, QueryResult, Snap,
};
use picking_vk_context::HostBuffer;
use picking_vk_tests::harness::{look, Gpu};
use std::sync::Arc;

const W: u32 = 200;
const H: u32 = 150;

/// One test object: its world-space vertices, topology, and width or size in pixels.
struct Thing {
    id: u64,
    points: Vec<Vec3>,
    topology: Topology,
    thickness: f32,
}

fn things(seed: u64) -> Vec<Thing> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut p = |spread: f32| Vec3::new((rng.f32() - 0.5) * spread, (rng.f32() - 0.5) * spread * 0.75, (rng.f32() - 0.5) * 1.5);
    vec![
        Thing { id: 1, points: (0..8).map(|_| p(3.0)).collect(), topology: Topology::LineList, thickness: 1.0 },
        Thing { id: 2, points: (0..7).map(|_| p(3.0)).collect(), topology: Topology::LineStrip, thickness: 3.0 },
        Thing { id: 3, points: (0..24).map(|_| p(3.2)).collect(), topology: Topology::PointList, thickness: 5.0 },
        Thing { id: 4, points: (0..12).map(|_| p(3.2)).collect(), topology: Topology::PointList, thickness: 1.0 },
    ]
}

/// The segments (or points, as zero-length segments) of a thing, by primitive index.
fn primitives(t: &Thing) -> Vec<[Vec3; 2]> {
    match t.topology {
        Topology::LineList => t.points.chunks_exact(2).map(|s| [s[0], s[1]]).collect(),
        Topology::LineStrip => t.points.windows(2).map(|s| [s[0], s[1]]).collect(),
        _ => t.points.iter().map(|&q| [q, q]).collect(),
    }
}

fn upload(gpu: &Gpu, things: &[Thing]) -> (Vec<PickDraw>, Vec<HostBuffer>) {
    let mut buffers = vec![];
    let mut draws = vec![];
    for t in things {
        let vb = gpu.ctx.upload(&t.points, ash::vk::BufferUsageFlags::VERTEX_BUFFER).unwrap();
        // Lists through an index buffer, strips without: both paths are covered.
        let n = t.points.len() as u32;
        let positions = Positions { range: BufferRange { buffer: vb.buffer, offset: 0, size: vb.size }, stride: 12, vertex_count: n };
        let (triangles, indices) = if t.topology == Topology::LineStrip {
            (Triangles::NonIndexed { first_vertex: 0, vertex_count: n }, None)
        } else {
            let ix: Vec<u32> = (0..n).collect();
            let ib = gpu.ctx.upload(&ix, ash::vk::BufferUsageFlags::INDEX_BUFFER).unwrap();
            let tri = Triangles::Indexed {
                range: BufferRange { buffer: ib.buffer, offset: 0, size: ib.size },
                width: IndexWidth::U32,
                first_index: 0,
                index_count: n,
                vertex_offset: 0,
            };
            buffers.push(ib);
            (tri, Some(ix))
        };
        let geometry = MeshGeometry { positions: t.points.clone(), indices, ..Default::default() };
        let raster = RasterState::default().with_topology(t.topology, false).with_thickness(t.thickness, t.thickness);
        draws.push(PickDraw::new(ObjectId::new(t.id).unwrap(), positions, triangles).with_raster(raster).with_geometry(Arc::new(geometry)));
        buffers.push(vb);
    }
    (draws, buffers)
}

/// Pixel coordinates of a world point (Vulkan viewport over the whole view).
fn project(view_projection: Mat4, p: Vec3) -> Option<DVec2> {
    let c = view_projection.as_dmat4() * DVec4::new(f64::from(p.x), f64::from(p.y), f64::from(p.z), 1.0);
    (c.w > 1e-6).then(|| DVec2::new((c.x / c.w + 1.0) * 0.5 * f64::from(W), (c.y / c.w + 1.0) * 0.5 * f64::from(H)))
}

fn segment_distance(p: DVec2, a: DVec2, b: DVec2) -> f64 {
    let ab = b - a;
    let t = if ab.length_squared() > 0.0 { ((p - a).dot(ab) / ab.length_squared()).clamp(0.0, 1.0) } else { 0.0 };
    (a + ab * t - p).length()
}

#[test]
fn lines_and_points_are_hit_within_the_radius_like_a_brute_force_oracle() {
    let gpu = Gpu::new();
    let wide = gpu.ctx.picking_features.contains(PickFeatures::WIDE_LINES);
    let mut picker = gpu.picker(PickerConfig::default().with_max_queries(64).with_max_radius(8).with_detail(picking_vk::DetailMode::IfEnabled));
    let detail = *picker.detail_status() == DetailStatus::Active;
    let (view, proj, vp) = look(Vec3::new(0.2, 0.1, 4.0), Vec3::ZERO, W, H);
    let view_projection = proj * view;
    let (mut hits, mut misses, mut detailed, mut checked) = (0, 0, 0, 0);
    for seed in 1..=3u64 {
        let things = things(seed);
        let (draws, _buffers) = upload(&gpu, &things);
        // Per thing, per primitive: the projected segment, and half its drawn thickness.
        let projected: Vec<Vec<Option<(DVec2, DVec2)>>> =
            things.iter().map(|t| primitives(t).iter().map(|[a, b]| Some((project(view_projection, *a)?, project(view_projection, *b)?))).collect()).collect();
        let half = |t: &Thing| if wide { f64::from(t.thickness) / 2.0 } else { 0.5 };
        let request = PickRequest::new(vp, view, proj);
        let mut rng = fastrand::Rng::with_seed(seed * 31);
        for _round in 0..6 {
            let queries: Vec<(UVec2, u32)> = (0..64).map(|_| (UVec2::new(rng.u32(8..W - 8), rng.u32(8..H - 8)), [2, 4, 8][rng.usize(..3)])).collect();
            let set: Vec<PickQuery> = queries.iter().map(|&(pixel, radius)| PickQuery::Radius { pixel, radius, snap: Snap::Nearest }).collect();
            // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
            gpu.run(|cmd| unsafe { picker.record(cmd, 0, &request, &set, &draws) }.map(|_| ()).expect("record"));
            // SAFETY: `run` waited for the frame.
            let results = unsafe { picker.take_results(0) }.expect("resolve").expect("pending");
            for ((pixel, radius), r) in queries.iter().zip(&results.results) {
                let QueryResult::Radius { result, hit_pixel, .. } = r else { panic!("a radius result") };
                let centre = DVec2::new(f64::from(pixel.x) + 0.5, f64::from(pixel.y) + 0.5);
                // Each thing's reach from the cursor: its nearest primitive's distance less half
                // its thickness (how far its nearest covered pixel centre may be, within about a pixel).
                let reach: Vec<f64> = things
                    .iter()
                    .zip(&projected)
                    .map(|(t, segs)| segs.iter().flatten().map(|(a, b)| segment_distance(centre, *a, *b) - half(t)).fold(f64::INFINITY, f64::min))
                    .collect();
                let r = f64::from(*radius);
                let (best, best_reach) = reach.iter().enumerate().fold((0, f64::INFINITY), |acc, (i, &d)| if d < acc.1 { (i, d) } else { acc });
                let runner_up = reach.iter().enumerate().filter(|(i, _)| *i != best).map(|(_, &d)| d).fold(f64::INFINITY, f64::min);
                const MARGIN: f64 = 2.2;
                if best_reach > r + MARGIN {
                    assert!(
                        result.hit.is_none(),
                        "seed {seed} pixel {pixel} r {radius}: nothing within reach ({best_reach:.2}), got {:?}",
                        result.hit.as_ref().map(|h| h.id)
                    );
                    misses += 1;
                } else if best_reach < r - MARGIN && runner_up > best_reach + 2.0 * MARGIN + 1.0 {
                    let hit = result
                        .hit
                        .as_ref()
                        .unwrap_or_else(|| panic!("seed {seed} pixel {pixel} r {radius}: thing {} at {best_reach:.2} missed", things[best].id));
                    assert_eq!(hit.id.get(), things[best].id, "seed {seed} pixel {pixel} r {radius}");
                    let at = hit_pixel.expect("a hit has its pixel");
                    let d = (at.as_dvec2() - pixel.as_dvec2()).length();
                    assert!(d <= r, "the hit pixel lies within the radius");
                    hits += 1;
                    if let Some(dt) = hit.detail.as_ref().filter(|_| detail) {
                        // The reported primitive lies under the hit pixel.
                        let want = if things[best].topology == Topology::PointList { PrimitiveKind::Point } else { PrimitiveKind::Segment };
                        assert_eq!(dt.primitive, want);
                        let (a, b) = projected[best][dt.face as usize].expect("projected");
                        let hit_centre = at.as_dvec2() + DVec2::splat(0.5);
                        assert!(
                            segment_distance(hit_centre, a, b) <= half(&things[best]) + 1.5,
                            "seed {seed}: primitive {} is not under the hit pixel",
                            dt.face
                        );
                        detailed += 1;
                    }
                }
                checked += 1;
            }
        }
    }
    eprintln!(
        "lines and points (wide: {wide}, detail: {detail}): {checked} radius queries, {hits} clear hits, {misses} clear misses, {detailed} with detail checked"
    );
    assert!(hits > 60 && misses > 60, "{hits} hits / {misses} misses");
    assert!(!detail || detailed == hits);
    drop(picker);
    gpu.assert_no_validation_messages();
}

#[test]
fn bad_line_widths_and_list_restarts_are_refused() {
    let gpu = Gpu::new();
    let mut picker = gpu.picker(PickerConfig::default());
    let things = things(5);
    let (draws, _buffers) = upload(&gpu, &things);
    let (view, proj, vp) = look(Vec3::new(0.0, 0.0, 4.0), Vec3::ZERO, W, H);
    let request = PickRequest::new(vp, view, proj);
    let pixel = UVec2::new(10, 10);
    let refused = |raster: RasterState, expect: &str, picker: &mut picking_vk::Picker| {
        let mut list = draws.clone();
        list[0].raster = raster;
        let mut err = None;
        // SAFETY: recording outside a render pass; an error records nothing.
        gpu.run(|cmd| err = unsafe { picker.record(cmd, 0, &request, &[PickQuery::Point(pixel)], &list) }.err());
        let message = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains(expect), "{message:?} should mention {expect:?}");
    };
    let line = draws[0].raster;
    refused(line.with_thickness(0.0, 1.0), "must be positive", &mut picker);
    refused(line.with_thickness(f32::NAN, 1.0), "must be positive", &mut picker);
    refused(line.with_topology(Topology::LineList, true), "primitiveTopologyListRestart", &mut picker);
    // Seven indices are not whole segments.
    let mut odd = draws.clone();
    if let Triangles::Indexed { index_count, .. } = &mut odd[0].triangles {
        *index_count = 7;
    }
    let mut err = None;
    // SAFETY: as above.
    gpu.run(|cmd| err = unsafe { picker.record(cmd, 0, &request, &[PickQuery::Point(pixel)], &odd) }.err());
    assert!(err.is_some_and(|e| e.to_string().contains("LineList")));
    drop(picker);
    gpu.assert_no_validation_messages();
}

#[test]
fn culling_keeps_every_pixel_a_point_sprite_or_wide_line_covers() {
    // Every pixel within 6 of each projected vertex, picked with culling (per-frame and shared
    // lists) and without, at a usual and a wide field of view: the same object everywhere.
    // (A 5-pixel sprite covers pixel centres 2.5 px away on both axes, farther than the two
    // footprints culling pads triangles by.)
    let gpu = Gpu::new();
    let config = PickerConfig::default().with_max_queries(64);
    let (mut culled, mut shared, mut full) = (gpu.picker(config), gpu.picker(config), gpu.picker(config.with_culling(false)));
    let mut compared = 0usize;
    let mut covered = 0usize;
    for (seed, yfov) in [(7u64, 0.8f32), (8, 2.6), (9, 2.9)] {
        // Lone sprites and short lines: a draw's box is then its primitive, as tight as it gets.
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut p = |spread: f32| Vec3::new((rng.f32() - 0.5) * spread, (rng.f32() - 0.5) * spread * 0.75, (rng.f32() - 0.5) * 1.5);
        let mut things: Vec<Thing> = (0..16)
            .map(|k| Thing { id: 10 + k, points: vec![p(if yfov > 2.0 { 30.0 } else { 3.2 })], topology: Topology::PointList, thickness: 5.0 })
            .collect();
        for k in 0..6 {
            let a = p(if yfov > 2.0 { 30.0 } else { 3.0 });
            things.push(Thing { id: 40 + k, points: vec![a, a + Vec3::new(0.05, 0.02, 0.0)], topology: Topology::LineList, thickness: 3.0 });
        }
        let (draws, _buffers) = upload(&gpu, &things);
        let list: Arc<[PickDraw]> = draws.clone().into();
        let view = glam::camera::rh::view::look_at_mat4(Vec3::new(0.2, 0.1, 4.0), Vec3::ZERO, Vec3::Y);
        let proj = glam::camera::rh::proj::vulkan::perspective(yfov, W as f32 / H as f32, 0.1, 100.0);
        let vp = picking_vk::Viewport::full(W, H);
        let request = PickRequest::new(vp, view, proj);
        let mut pixels = vec![];
        for t in &things {
            for p in &t.points {
                let Some(at) = project(proj * view, *p) else { continue };
                for dy in -6..=6 {
                    for dx in -6..=6 {
                        let (x, y) = (at.x.floor() as i64 + dx, at.y.floor() as i64 + dy);
                        if (0..i64::from(W)).contains(&x) && (0..i64::from(H)).contains(&y) {
                            pixels.push(UVec2::new(x as u32, y as u32));
                        }
                    }
                }
            }
        }
        pixels.sort_by_key(|p| (p.y, p.x));
        pixels.dedup();
        for chunk in pixels.chunks(64) {
            let set: Vec<PickQuery> = chunk.iter().map(|&p| PickQuery::Point(p)).collect();
            let run = |picker: &mut picking_vk::Picker, shared_list: bool| {
                gpu.run(|cmd| {
                    // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
                    let ticket = unsafe {
                        if shared_list {
                            picker.record(cmd, 0, &request, &set, &list)
                        } else {
                            picker.record(cmd, 0, &request, &set, &draws)
                        }
                    };
                    ticket.expect("record");
                });
                // SAFETY: `run` waited for the frame.
                let frame = unsafe { picker.take_results(0) }.expect("resolve").expect("pending");
                frame
                    .results
                    .iter()
                    .map(|r| match r {
                        QueryResult::Point(p) => p.hit.as_ref().map(|h| (h.id, h.depth.to_bits())),
                        other => panic!("a point result, not {other:?}"),
                    })
                    .collect::<Vec<_>>()
            };
            let (a, b, c) = (run(&mut culled, false), run(&mut shared, true), run(&mut full, false));
            for (k, p) in chunk.iter().enumerate() {
                assert_eq!(a[k], c[k], "seed {seed} field {yfov} pixel {p}: culled per-frame list vs not culled");
                assert_eq!(b[k], c[k], "seed {seed} field {yfov} pixel {p}: culled shared list vs not culled");
                covered += usize::from(c[k].is_some());
                compared += 1;
            }
        }
    }
    eprintln!("lines and points culling parity: {compared} pixels identical, {covered} covered");
    assert!(covered > 500, "the sprites and lines cover many of the pixels: {covered}");
    drop((culled, shared, full));
    gpu.assert_no_validation_messages();
}
