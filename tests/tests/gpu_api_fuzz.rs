//! The library under random misuse: draws, requests and query sets drawn at random, most of
//! them wrong somewhere (offsets, strides, counts, formats, topologies, matrices, bounds,
//! registered geometry, instances, viewports, pixels, radii, rectangles), recorded through both
//! draw-list paths. Each must be refused with an error, or recorded as work that the
//! validation layer (synchronization validation on) has nothing to say about and whose
//! results come back one per query, with the default planner and with every storage-buffer
//! instanced draw planned on the GPU. Nothing may panic.
//!
//! The buffers themselves keep the host's side of the contract (they are as large as their
//! ranges say, with every usage, and their indices name real vertices): the library cannot
//! see inside GPU memory, so only what it is told can be wrong.

use ash::vk;
use glam::{Mat4, UVec2, Vec3};
use picking_vk::{
    draw::Aabb, draw::BufferRange, draw::DepthBias, draw::IndexWidth, draw::InstanceBinding, draw::InstanceFormat, draw::Instances, draw::MeshGeometry,
    draw::PositionFormat, draw::Positions, draw::RasterState, draw::Topology, draw::Triangles, request::Ignore, ObjectId, PickDraw, PickQuery, PickRequest,
    PickerConfig, PixelRect, QueryResult, RectMode, Snap, Viewport,
};
use picking_vk_tests::harness::Gpu;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// Vertices in the shared vertex buffer (a ring of points at z = -3).
const VERTICES: u32 = 48;
/// Indices in each index buffer (every one names a real vertex).
const INDICES: u32 = 96;
const INSTANCES: u32 = 12;
const TRIALS: usize = 300;

/// What the random draws point into.
struct Buffers {
    vertices: BufferRange,
    indices16: BufferRange,
    indices32: BufferRange,
    instances: BufferRange,
    geometry: Arc<MeshGeometry>,
    transforms: Arc<[Mat4]>,
}

fn every_usage() -> vk::BufferUsageFlags {
    vk::BufferUsageFlags::VERTEX_BUFFER | vk::BufferUsageFlags::INDEX_BUFFER | vk::BufferUsageFlags::STORAGE_BUFFER
}

/// A random choice among `options`.
fn pick<T: Copy>(rng: &mut fastrand::Rng, options: &[T]) -> T {
    options[rng.usize(..options.len())]
}

thread_local! {
    /// How often [`mostly`] picks a bad value, set per trial: some trials are all good, so the
    /// recorded path is reached as often as the refusals.
    static FAULT_RATE: std::cell::Cell<f32> = const { std::cell::Cell::new(0.0) };
}

/// Mostly `good`, sometimes (at the trial's fault rate) one of `bad`.
fn mostly<T: Copy>(rng: &mut fastrand::Rng, good: T, bad: &[T]) -> T {
    if rng.f32() >= FAULT_RATE.get() {
        good
    } else {
        pick(rng, bad)
    }
}

fn random_matrix(rng: &mut fastrand::Rng) -> Mat4 {
    let sane = Mat4::from_scale_rotation_translation(
        Vec3::new(0.2 + rng.f32(), 0.2 + rng.f32(), 0.2 + rng.f32()),
        glam::Quat::from_rotation_y(rng.f32() * 6.0),
        Vec3::new(rng.f32() - 0.5, rng.f32() - 0.5, rng.f32() - 0.5),
    );
    let mut projective = Mat4::IDENTITY;
    projective.w_axis.w = 2.0;
    projective.x_axis.w = 0.3;
    mostly(rng, sane, &[Mat4::NAN, Mat4::ZERO, Mat4::from_scale(Vec3::splat(1e30)), Mat4::from_translation(Vec3::splat(f32::INFINITY)), projective])
}

fn random_raster(rng: &mut fastrand::Rng) -> RasterState {
    let topology = pick(
        rng,
        &[
            Topology::TriangleList,
            Topology::TriangleList,
            Topology::TriangleStrip,
            Topology::TriangleFan,
            Topology::LineList,
            Topology::LineStrip,
            Topology::PointList,
        ],
    );
    let strip = matches!(topology, Topology::TriangleStrip | Topology::TriangleFan | Topology::LineStrip);
    // Restart on a list needs a feature picking does not enable.
    let restart = if strip { rng.bool() } else { mostly(rng, false, &[true]) };
    let cull = pick(rng, &[vk::CullModeFlags::NONE, vk::CullModeFlags::BACK, vk::CullModeFlags::FRONT, vk::CullModeFlags::FRONT_AND_BACK]);
    let mut raster =
        RasterState::default().with_topology(topology, restart).with_culling(cull, pick(rng, &[vk::FrontFace::COUNTER_CLOCKWISE, vk::FrontFace::CLOCKWISE]));
    if rng.f32() < 0.3 {
        let op = pick(rng, &[vk::CompareOp::NEVER, vk::CompareOp::ALWAYS, vk::CompareOp::LESS, vk::CompareOp::GREATER_OR_EQUAL, vk::CompareOp::EQUAL]);
        raster = raster.with_depth_compare(mostly(rng, op, &[vk::CompareOp::from_raw(77)]));
    }
    if rng.f32() < 0.2 {
        let (constant, slope) = (pick(rng, &[0.0, -4.0, 1e6]), pick(rng, &[0.0, 2.0, -1e9]));
        let bias = DepthBias { constant, clamp: 0.0, slope };
        let bad = [
            DepthBias { constant: f32::NAN, ..bias },
            DepthBias { slope: f32::INFINITY, ..bias },
            DepthBias { clamp: 0.01, ..bias },
            DepthBias { clamp: f32::NAN, ..bias },
        ];
        raster = raster.with_depth_bias(mostly(rng, bias, &bad));
    }
    let line_width = mostly(rng, 1.0, &[0.0, 3.0, 64.0, -1.0, f32::NAN, 1e9]);
    let point_size = pick(rng, &[1.0, 4.0]);
    let point_size = mostly(rng, point_size, &[0.0, 9000.0, f32::NAN]);
    raster.with_thickness(line_width, point_size)
}

fn random_triangles(rng: &mut fastrand::Rng, b: &Buffers) -> Triangles {
    if rng.f32() < 0.3 {
        let first_vertex = mostly(rng, 0, &[VERTICES - 3, VERTICES, u32::MAX]);
        let vertex_count = mostly(rng, 3 * (VERTICES / 3), &[0, 1, 4, VERTICES + 3, u32::MAX]);
        return Triangles::NonIndexed { first_vertex, vertex_count };
    }
    let width = pick(rng, &[IndexWidth::U16, IndexWidth::U32]);
    let whole = if width == IndexWidth::U16 { b.indices16 } else { b.indices32 };
    let offset = mostly(rng, 0, &[1, 2, 6, whole.size, whole.size + 4]);
    let range = inside(whole, offset, mostly(rng, whole.size.saturating_sub(offset), &[0, 3, whole.size]));
    let first_index = mostly(rng, 0, &[3, INDICES, u32::MAX - 1]);
    // Whole triangles and whole segments alike.
    let whole_triangles = INDICES - 6 * rng.u32(0..4);
    let index_count = mostly(rng, whole_triangles, &[0, 2, 7, INDICES + 3, u32::MAX]);
    Triangles::Indexed { range, width, first_index, index_count, vertex_offset: 0 }
}

/// `whole`'s bytes from `offset` on, `size` of them, cut to lie inside `whole`: a host's
/// `BufferRange` lies inside its buffer (its contract, which Vulkan gives the picker no way to
/// check), so the rules broken here are the ones the picker can see. A range past the
/// buffer's end drew from outside it (seeds 41 to 241 found one recorded).
fn inside(whole: BufferRange, offset: u64, size: u64) -> BufferRange {
    let offset = offset.min(whole.size);
    BufferRange { offset, size: size.min(whole.size - offset), ..whole }
}

/// A random draw; about half of them break some rule.
fn random_draw(rng: &mut fastrand::Rng, b: &Buffers, id: u64) -> PickDraw {
    let format = mostly(rng, PositionFormat::Float32x3, &[PositionFormat::Float16x4, PositionFormat::Snorm16x4, PositionFormat::Unorm8x4]);
    let offset = mostly(rng, 0, &[2, 4, 13, b.vertices.size]);
    let positions = Positions {
        range: inside(b.vertices, offset, mostly(rng, b.vertices.size.saturating_sub(offset), &[0, 11, 12 * 4])),
        stride: mostly(rng, 12, &[0, 4, 8, 14, 16, 2048, 1 << 20]),
        vertex_count: mostly(rng, VERTICES, &[0, 2, VERTICES / 2, VERTICES + 1, u32::MAX]),
    };
    let id = ObjectId::new(id).expect("non-zero");
    let mut draw =
        PickDraw::new(id, positions, random_triangles(rng, b)).with_model(random_matrix(rng)).with_raster(random_raster(rng)).with_position_format(format);
    if rng.f32() < 0.6 {
        let geometry = if rng.f32() < 0.8 {
            b.geometry.clone()
        } else {
            // Registered geometry that does not match what the draw reads.
            Arc::new(MeshGeometry { positions: b.geometry.positions[..5].to_vec(), indices: Some(vec![0, 1, 9]), ..Default::default() })
        };
        draw = draw.with_geometry(geometry);
    }
    if rng.f32() < 0.3 {
        let bounds = pick(
            rng,
            &[
                Aabb { min: Vec3::splat(-2.0), max: Vec3::splat(2.0) },
                Aabb { min: Vec3::splat(1.0), max: Vec3::splat(-1.0) },
                Aabb { min: Vec3::splat(f32::NAN), max: Vec3::ONE },
                Aabb { min: Vec3::splat(-f32::INFINITY), max: Vec3::splat(f32::INFINITY) },
                Aabb { min: Vec3::ZERO, max: Vec3::ZERO },
            ],
        );
        draw = draw.with_bounds(bounds);
    }
    if rng.f32() < 0.35 {
        let instance_format = mostly(rng, InstanceFormat::Mat4, &[InstanceFormat::Rows3x4]);
        let stride = mostly(rng, instance_format.bytes(), &[0, 16, 60, 66, 4096]);
        let offset = mostly(rng, 0, &[4, 6, b.instances.size]);
        let count = rng.u32(0..=INSTANCES);
        let instances = Instances {
            range: inside(b.instances, offset, b.instances.size.saturating_sub(offset)),
            stride,
            first: mostly(rng, 0, &[1, INSTANCES, u32::MAX]),
            count: mostly(rng, count, &[INSTANCES + 1, u32::MAX]),
        };
        draw = draw.with_instances(instances).with_instance_format(instance_format);
        if rng.f32() < 0.5 {
            draw = draw.with_instance_binding(InstanceBinding::StorageBuffer);
        }
        if rng.f32() < 0.7 {
            // Mostly one per instance drawn (any other length is refused).
            let count = mostly(rng, (instances.count as usize).min(INSTANCES as usize), &[0, 1, 3, INSTANCES as usize]);
            draw = draw.with_instance_transforms(b.transforms[..count].to_vec().into());
        }
    }
    draw.with_pickable(rng.f32() < 0.9).with_tag(rng.u64(..))
}

fn random_pixel(rng: &mut fastrand::Rng, w: u32, h: u32) -> UVec2 {
    let inside = UVec2::new(rng.u32(..w.max(1)), rng.u32(..h.max(1)));
    mostly(rng, inside, &[UVec2::new(w, 0), UVec2::new(0, h), UVec2::MAX, UVec2::new(w + 3, h + 9)])
}

fn random_queries(rng: &mut fastrand::Rng, w: u32, h: u32) -> Vec<PickQuery> {
    let few = rng.usize(1..6);
    let count = mostly(rng, few, &[0, 17, 40]);
    (0..count)
        .map(|_| match rng.u8(0..3) {
            0 => PickQuery::Point(random_pixel(rng, w, h)),
            1 => {
                let (pixel, small) = (random_pixel(rng, w, h), rng.u32(0..9));
                PickQuery::Radius { pixel, radius: mostly(rng, small, &[64, 10_000, u32::MAX]), snap: if rng.bool() { Snap::Thin } else { Snap::Nearest } }
            }
            _ => {
                let a = random_pixel(rng, w, h);
                let beyond = a.saturating_add(UVec2::new(rng.u32(1..40), rng.u32(1..40)));
                let b = mostly(rng, beyond, &[a, UVec2::ZERO, UVec2::MAX]);
                PickQuery::Rect { rect: PixelRect::new(a, b), mode: pick(rng, &[RectMode::Visible, RectMode::All]) }
            }
        })
        .collect()
}

fn random_request(rng: &mut fastrand::Rng) -> (PickRequest<'static>, u32, u32) {
    let (w, h) = (rng.u32(8..200), rng.u32(8..200));
    let (w, h) = (mostly(rng, w, &[1, 4096]), mostly(rng, h, &[1, 3]));
    let mut viewport = Viewport::full(w, h);
    if rng.f32() < 0.3 {
        viewport = pick(
            rng,
            &[
                Viewport { x: 5.5, y: -3.0, ..viewport },
                Viewport { min_depth: 1.0, max_depth: 0.0, ..viewport },
                Viewport { height: -viewport.height, y: viewport.height, ..viewport },
            ],
        );
    }
    let bad = [Viewport { width: 0.0, ..viewport }, Viewport { width: f32::NAN, ..viewport }, Viewport { x: 1e9, ..viewport }];
    let viewport = mostly(rng, viewport, &bad);
    // Now and then an empty depth range, which depth cannot order surfaces in (refused).
    let viewport = if rng.u32(..50) == 0 { Viewport { min_depth: 0.5, max_depth: 0.5, ..viewport } } else { viewport };
    let aspect = w as f32 / h as f32;
    let perspective = glam::camera::rh::proj::vulkan::perspective(1.0, aspect, 0.1, 50.0);
    let reversed = glam::camera::rh::proj::vulkan::perspective_infinite_reverse(1.0, aspect, 0.1);
    let ortho = glam::camera::rh::proj::vulkan::orthographic(-3.0, 3.0, -2.0, 2.0, 0.1, 50.0);
    let projection = pick(rng, &[perspective, reversed, ortho]);
    let projection = mostly(rng, projection, &[Mat4::NAN, Mat4::ZERO, Mat4::from_scale(Vec3::splat(1e-30))]);
    let view = mostly(rng, Mat4::IDENTITY, &[Mat4::NAN, Mat4::from_translation(Vec3::new(0.0, 0.0, 1e12))]);
    // The pixel requests carried before 0.2, still drawn so that the seed's trials stay the same.
    random_pixel(rng, w, h);
    (PickRequest::new(viewport, view, projection), w, h)
}

/// Whether instance `instance` of `draw` is left out by `ignore`.
fn ignored(draw: &PickDraw, instance: Option<u32>, ignore: &[Ignore]) -> bool {
    ignore.iter().any(|rule| match *rule {
        Ignore::Object(id) => id == draw.id,
        Ignore::Instances { id, start, count } => id == draw.id && instance.is_some_and(|i| i >= start && i - start < count),
    })
}

/// Checks that a hit names a drawn, pickable, not ignored draw (and a real instance of it):
/// whatever the draws were, what comes back is one of them. Returns 1 for a hit, else 0.
fn check_hit(draws: &[PickDraw], ignore: &[Ignore], draw_index: u32, id: ObjectId, tag: u64, instance: Option<u32>, depth: f32) -> Result<usize, String> {
    let draw = draws.get(draw_index as usize).ok_or("a hit on a draw that does not exist")?;
    if draw.id != id || draw.tag != tag {
        return Err("a hit whose ID or tag is not its draw's".into());
    }
    if !draw.pickable || ignored(draw, instance, ignore) {
        return Err("a hit on an unpickable or ignored draw".into());
    }
    match (draw.instances, instance) {
        (None, None) => {}
        (Some(inst), Some(i)) if i < inst.count => {}
        _ => return Err("a hit's instance does not match its draw".into()),
    }
    if !(0.0..=1.0).contains(&depth) {
        return Err(format!("a hit at depth {depth}"));
    }
    Ok(1)
}

fn check_result(query: &PickQuery, result: &QueryResult, draws: &[PickDraw], ignore: &[Ignore]) -> Result<usize, String> {
    let point = |r: &picking_vk::PickResult| match &r.hit {
        Some(h) => check_hit(draws, ignore, h.draw_index, h.id, h.tag, h.instance, h.depth),
        None => Ok(0),
    };
    match (query, result) {
        (PickQuery::Point(pixel), QueryResult::Point(r)) if r.pixel == *pixel => point(r),
        (PickQuery::Radius { pixel, radius, snap }, QueryResult::Radius { result, radius: r, snap: s, hit_pixel }) if r == radius && s == snap => {
            if let Some(p) = hit_pixel {
                let d = p.as_vec2().distance(pixel.as_vec2());
                if d > *radius as f32 + 1e-3 || result.hit.is_none() || result.pixel != *p {
                    return Err(format!("a radius hit at {p}, {d} pixels away"));
                }
            }
            point(result)
        }
        (PickQuery::Rect { rect, mode }, QueryResult::Rect(r)) if r.mode == *mode => {
            let mut hits = 0;
            for o in &r.objects {
                if o.pixels == 0 || !rect.contains(o.pixel) {
                    return Err(format!("a rectangle object of {} pixels at {}", o.pixels, o.pixel));
                }
                hits += check_hit(draws, ignore, o.draw_index, o.id, o.tag, o.instance, o.depth)?;
            }
            Ok(hits.min(1))
        }
        _ => Err("a result of another kind or pixel than its query".into()),
    }
}

#[test]
fn random_misuse_is_refused_or_recorded_cleanly() {
    let gpu = Gpu::new();
    let ring: Vec<Vec3> = (0..VERTICES).map(|i| (i as f32 * 0.7).sin_cos()).map(|(s, c)| Vec3::new(s * 1.5, c, -3.0 - s)).collect();
    let indices: Vec<u32> = (0..INDICES).map(|i| (i * 7 + i / 3) % VERTICES).collect();
    let transforms: Vec<Mat4> = (0..INSTANCES).map(|i| Mat4::from_translation(Vec3::new(i as f32 * 0.3 - 1.8, 0.0, 0.0))).collect();
    let vb = gpu.ctx.upload(&ring, every_usage()).expect("vertices");
    let ib16 = gpu.ctx.upload(&indices.iter().map(|&i| i as u16).collect::<Vec<_>>(), every_usage()).expect("u16 indices");
    let ib32 = gpu.ctx.upload(&indices, every_usage()).expect("u32 indices");
    let cols: Vec<[f32; 16]> = transforms.iter().map(|m| m.to_cols_array()).collect();
    let inst = gpu.ctx.upload(&cols, every_usage()).expect("instances");
    let whole = |b: &picking_vk_context::HostBuffer| BufferRange { buffer: b.buffer, offset: 0, size: b.size };
    let geometry = MeshGeometry { positions: ring.clone(), indices: Some(indices.clone()), ..Default::default() };
    geometry.validate().expect("the test's own geometry is consistent");
    let buffers = Buffers {
        vertices: whole(&vb),
        indices16: whole(&ib16),
        indices32: whole(&ib32),
        instances: whole(&inst),
        geometry: Arc::new(geometry),
        transforms: transforms.into(),
    };
    let config = PickerConfig::default().with_frames_in_flight(2).with_max_queries(16).with_max_radius(16);
    // Odd trials plan every storage-buffer instanced draw on the GPU (with or without CPU
    // transforms); even ones leave the planner its default choice.
    let mut pickers = [gpu.picker(config), gpu.picker(config.with_planner(picking_vk::config::Planner::Gpu))];
    // `PICKING_VK_TEST_SEEDS=a..b`: TRIALS a seed, from a generator seeded by `a`.
    let seeds = picking_vk_tests::harness::seeds(0..1);
    let trials = TRIALS * seeds.clone().count();
    let mut rng = fastrand::Rng::with_seed(0x5eed_f026 ^ seeds.start);
    let (mut recorded, mut refused, mut hits, mut gpu_planned) = (0usize, 0usize, 0usize, 0usize);
    for trial in 0..trials {
        FAULT_RATE.set(pick(&mut rng, &[0.0, 0.03, 0.1, 0.3]));
        let draws: Vec<PickDraw> = (0..rng.usize(1..5)).map(|k| random_draw(&mut rng, &buffers, 1 + k as u64)).collect();
        let (request, w, h) = random_request(&mut rng);
        let ignore: Vec<Ignore> = match rng.u8(0..6) {
            0 => vec![Ignore::Object(ObjectId::new(1).expect("non-zero"))],
            1 => vec![Ignore::Instances {
                id: ObjectId::new(rng.u64(1..5)).expect("non-zero"),
                start: rng.u32(0..INSTANCES),
                count: mostly(&mut rng, 3, &[0, u32::MAX]),
            }],
            _ => vec![],
        };
        let request = request.with_ignore(&ignore);
        let queries = random_queries(&mut rng, w, h);
        let shared: Arc<[PickDraw]> = draws.clone().into();
        let picker = &mut pickers[trial % 2];
        for (path, slot) in [("per frame", 0), ("shared", 1)] {
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                gpu.ctx
                    .run_once(|cmd| {
                        // SAFETY: recording outside a render pass; the buffers outlive the
                        // wait in `run_once`.
                        unsafe {
                            match path {
                                "per frame" => picker.record(cmd, slot, &request, &queries, &draws),
                                _ => picker.record(cmd, slot, &request, &queries, &shared),
                            }
                        }
                    })
                    .expect("submit")
            }));
            let what = || format!("trial {trial} ({path}): {request:?}\nqueries {queries:?}\ndraws {draws:#?}");
            match outcome {
                Err(_) => panic!("panicked: {}", what()),
                Ok(Ok(_ticket)) => {
                    recorded += 1;
                    // SAFETY: `run_once` waited for the frame.
                    let results = unsafe { picker.take_results(slot) }.unwrap_or_else(|e| panic!("{e}: {}", what()));
                    let results = results.unwrap_or_else(|| panic!("no results pending: {}", what()));
                    assert_eq!(results.results.len(), queries.len(), "{}", what());
                    gpu_planned += results.results.iter().filter_map(QueryResult::pick).filter(|p| p.stats.gpu_plan.is_some_and(|s| s.ranges > 0)).count();
                    for (query, result) in queries.iter().zip(&results.results) {
                        hits += check_result(query, result, &draws, &ignore).unwrap_or_else(|e| panic!("{e}: {result:?}\n{}", what()));
                    }
                }
                Ok(Err(error)) => {
                    refused += 1;
                    assert!(!error.to_string().is_empty());
                    assert!(!picker.is_pending(slot), "a refused record left the slot pending: {error}: {}", what());
                }
            }
            let messages = gpu.ctx.take_validation_messages();
            assert!(messages.is_empty(), "{} validation message(s):\n{}\n{}", messages.len(), messages.join("\n"), what());
        }
    }
    // The generator reaches both outcomes often, and recorded draws are hit.
    eprintln!("{recorded} recorded ({hits} hits, {gpu_planned} picks planned on the GPU), {refused} refused of {} records", 2 * trials);
    assert!(gpu_planned > 0, "some picks were planned on the GPU");
    assert!(recorded >= trials / 5 && refused >= trials / 5 && hits >= trials / 10, "{recorded} recorded ({hits} hits), {refused} refused");
    drop((pickers, vb, ib16, ib32, inst));
    gpu.assert_no_validation_messages();
}
