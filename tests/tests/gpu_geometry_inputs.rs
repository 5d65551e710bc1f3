//! Geometry as engines store it: quantized and half-float positions (glTF
//! `KHR_mesh_quantization`), read as their normalized values with the dequantizing transform
//! folded into the model matrix, picked like the decoded floats by the ray oracle; and
//! instance transforms as row-major 3x4 matrices, picked like the same `mat4`s.

use ash::vk;
use glam::{Mat4, UVec2, Vec3};
use picking_vk::{
    draw::Aabb, draw::BufferRange, draw::IndexWidth, draw::PositionFormat, draw::Positions, draw::Triangles, ObjectId, PickDraw, PickQuery, PickRequest,
    PickerConfig, Viewport,
};
use picking_vk_tests::harness::{random_pixels, random_scene_camera, Gpu};
use picking_vk_tests::oracle::{Oracle, OracleCamera};
use picking_vk_tests::scene::{Mesh, Object, Scene};

const W: u32 = 160;
const H: u32 = 120;

/// `value` in 0..1 (unorm) or -1..1 (snorm) stored in `bits` bits, and what the GPU reads back.
fn quantize(value: f32, bits: u32, signed: bool) -> (i64, f32) {
    let max = ((1i64 << (bits - u32::from(signed))) - 1) as f32;
    let q = (value * max).round() as i64;
    (q, q as f32 / max)
}

/// The mesh's positions in `format` (4 components, the 4th 0) and as the GPU decodes them.
fn encode(mesh: &Mesh, format: PositionFormat) -> (Vec<u8>, Vec<Vec3>) {
    let (mut bytes, mut decoded) = (vec![], vec![]);
    for p in &mesh.positions {
        let mut d = Vec3::ZERO;
        for axis in 0..4 {
            let v = if axis < 3 { p[axis] } else { 0.0 };
            match format {
                PositionFormat::Snorm16x4 => {
                    let (q, back) = quantize(v, 16, true);
                    bytes.extend_from_slice(&(q as i16).to_le_bytes());
                    if axis < 3 {
                        d[axis] = back;
                    }
                }
                // Unorm holds 0..1: the unit sphere is stored as (p + 1) / 2.
                PositionFormat::Unorm8x4 => {
                    let (q, back) = quantize((v + 1.0) * 0.5, 8, false);
                    bytes.push(q as u8);
                    if axis < 3 {
                        d[axis] = back;
                    }
                }
                PositionFormat::Float16x4 => {
                    let h = f16_bits(v);
                    bytes.extend_from_slice(&h.to_le_bytes());
                    if axis < 3 {
                        d[axis] = f16_value(h);
                    }
                }
                _ => unreachable!("not tested here"),
            }
        }
        decoded.push(d);
    }
    (bytes, decoded)
}

/// IEEE half bits of `v` (round to nearest; normal values only, as the unit sphere needs).
fn f16_bits(v: f32) -> u16 {
    if v == 0.0 {
        return 0;
    }
    let bits = v.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32 - 127 + 15;
    let mant = bits & 0x7f_ffff;
    let rounded = (mant + 0x1000) >> 13;
    let (exp, mant) = if rounded == 0x400 { (exp + 1, 0) } else { (exp, rounded) };
    sign | ((exp as u16) << 10) | mant as u16
}

fn f16_value(h: u16) -> f32 {
    if h & 0x7fff == 0 {
        return 0.0;
    }
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f) - 15;
    let mant = f32::from(h & 0x3ff) / 1024.0;
    sign * (1.0 + mant) * 2f32.powi(exp)
}

#[test]
fn quantized_and_half_float_positions_pick_like_their_decoded_floats() {
    let gpu = Gpu::new();
    let mesh = Mesh::sphere(12, 16);
    let indices = mesh.indices.clone().expect("indexed");
    let ib = gpu.ctx.upload(&indices, vk::BufferUsageFlags::INDEX_BUFFER).expect("index buffer");
    let (view, proj) = random_scene_camera(picking_vk::DepthConvention::Standard, W, H);
    let vp = Viewport::full(W, H);
    let mut picker = gpu.picker(PickerConfig::default().with_frames_in_flight(64));
    let mut compared = 0;
    for (k, format) in [PositionFormat::Snorm16x4, PositionFormat::Unorm8x4, PositionFormat::Float16x4].into_iter().enumerate() {
        // Where the sphere stands, and the dequantizing transform (unorm: 0..1 back to -1..1).
        let place = Mat4::from_translation(Vec3::new(-0.6 + 0.6 * k as f32, 0.1, -5.0)) * Mat4::from_scale(Vec3::splat(1.3));
        let dequantize = match format {
            PositionFormat::Unorm8x4 => Mat4::from_translation(Vec3::splat(-1.0)) * Mat4::from_scale(Vec3::splat(2.0)),
            _ => Mat4::IDENTITY,
        };
        let (bytes, decoded) = encode(&mesh, format);
        let vb = gpu.ctx.upload(&bytes, vk::BufferUsageFlags::VERTEX_BUFFER).expect("vertex buffer");
        let positions =
            Positions { range: BufferRange { buffer: vb.buffer, offset: 0, size: vb.size }, stride: format.bytes(), vertex_count: decoded.len() as u32 };
        let triangles = Triangles::Indexed {
            range: BufferRange { buffer: ib.buffer, offset: 0, size: ib.size },
            width: IndexWidth::U32,
            first_index: 0,
            index_count: indices.len() as u32,
            vertex_offset: 0,
        };
        let local_bounds = Aabb::from_points(&decoded).expect("bounds");
        let draw = PickDraw::new(ObjectId::new(10 + k as u64).unwrap(), positions, triangles)
            .with_position_format(format)
            .with_model(place * dequantize)
            .with_bounds(local_bounds);
        // The oracle sees the decoded values under the same transform.
        let mut scene = Scene::default();
        let world_points: Vec<Vec3> = decoded.iter().map(|p| dequantize.transform_point3(*p)).collect();
        scene.meshes.push(Mesh { positions: world_points, indices: Some(indices.clone()) });
        scene.objects.push(Object::new(10 + k as u64, 0, place));
        let oracle = Oracle::new(&scene, OracleCamera::new(view, proj, [0.0, 0.0, f64::from(W), f64::from(H)]));
        let draws = [draw];
        let pixels = random_pixels(40 + k as u64, 128, W, H);
        let request = PickRequest::new(vp, view, proj);
        for chunk in pixels.chunks(64) {
            for (r, p) in gpu.pick_batch(&mut picker, &request, chunk, &draws).iter().zip(chunk) {
                let want = oracle.pick(*p);
                if want.ambiguous {
                    continue;
                }
                assert_eq!(r.id().map(ObjectId::get), want.hit.as_ref().map(|h| h.id), "{format:?} pixel {p}");
                if let (Some(got), Some(w)) = (&r.hit, &want.hit) {
                    assert!((got.distance - w.distance).abs() <= 1e-3 * w.distance, "{format:?} pixel {p}: {} vs {}", got.distance, w.distance);
                    compared += 1;
                }
            }
        }
        drop(vb);
    }
    assert!(compared > 30, "hits compared: {compared}");
    // A stride shorter than the format's position is refused.
    let short = PickDraw::new(
        ObjectId::new(1).unwrap(),
        Positions { range: BufferRange { buffer: ib.buffer, offset: 0, size: 64 }, stride: 4, vertex_count: 4 },
        Triangles::NonIndexed { first_vertex: 0, vertex_count: 3 },
    )
    .with_position_format(PositionFormat::Snorm16x4);
    let request = PickRequest::new(vp, view, proj);
    gpu.run(|cmd| {
        // SAFETY: recording outside a render pass; a refused pick records nothing.
        let err = unsafe { picker.record(cmd, 0, &request, &[PickQuery::Point(UVec2::new(3, 3))], &[short]) }.expect_err("short stride");
        assert!(err.to_string().contains("stride"), "{err}");
    });
    drop((picker, ib));
    gpu.assert_no_validation_messages();
}

#[test]
fn row_major_3x4_instance_transforms_pick_like_their_mat4s() {
    let gpu = Gpu::new();
    let mut scene = Scene::default();
    scene.meshes.push(Mesh::cuboid(Vec3::new(0.3, 0.2, 0.25)));
    let mut rng = fastrand::Rng::with_seed(91);
    let transforms: Vec<Mat4> = (0..20)
        .map(|i| {
            let axis = Vec3::new(rng.f32() - 0.5, rng.f32() - 0.5, rng.f32() - 0.5).normalize_or(Vec3::Y);
            Mat4::from_scale_rotation_translation(
                Vec3::new(0.6 + rng.f32(), 0.6 + rng.f32(), 0.6 + rng.f32()),
                glam::Quat::from_axis_angle(axis, rng.f32() * 6.0),
                Vec3::new((i % 5) as f32 * 0.9 - 1.8, (i / 5) as f32 * 0.8 - 1.2, -6.0 - rng.f32()),
            )
        })
        .collect();
    let mut obj = Object::new(5, 0, Mat4::IDENTITY);
    obj.instances = Some(transforms.clone());
    scene.objects.push(obj);
    let gs = scene.upload(&gpu.ctx);
    let as_mat4 = gs.draws[0].clone();
    // The same transforms as three rows of four each (the affine part).
    let rows: Vec<[f32; 12]> = transforms
        .iter()
        .map(|m| {
            let t = m.transpose().to_cols_array();
            std::array::from_fn(|k| t[k])
        })
        .collect();
    let rb = gpu.ctx.upload(&rows, vk::BufferUsageFlags::VERTEX_BUFFER).expect("rows buffer");
    let inst = as_mat4.instances.expect("instanced");
    let as_rows = as_mat4.clone().with_instance_format(picking_vk::draw::InstanceFormat::Rows3x4).with_instances(picking_vk::draw::Instances {
        range: BufferRange { buffer: rb.buffer, offset: 0, size: rb.size },
        stride: 48,
        ..inst
    });
    let (view, proj) = random_scene_camera(picking_vk::DepthConvention::Standard, W, H);
    let vp = Viewport::full(W, H);
    let request = PickRequest::new(vp, view, proj);
    let covered = gpu.covered_pixels(&request, std::slice::from_ref(&as_mat4), 4);
    assert!(covered.len() > 300, "the instances fill part of the view: {}", covered.len());
    let mut picker = gpu.picker(PickerConfig::default().with_frames_in_flight(64));
    let mut instances_seen = std::collections::BTreeSet::new();
    for chunk in covered.iter().take(192).copied().collect::<Vec<_>>().chunks(64) {
        let a = gpu.pick_batch(&mut picker, &request, chunk, std::slice::from_ref(&as_mat4));
        let b = gpu.pick_batch(&mut picker, &request, chunk, std::slice::from_ref(&as_rows));
        for ((x, y), p) in a.iter().zip(&b).zip(chunk) {
            let key = |r: &picking_vk::PickResult| r.hit.as_ref().map(|h| (h.id, h.instance, h.depth));
            assert_eq!(key(x), key(y), "pixel {p}");
            instances_seen.extend(y.hit.as_ref().and_then(|h| h.instance));
        }
    }
    assert!(instances_seen.len() > 8, "instances hit: {instances_seen:?}");
    drop((picker, rb, gs));
    gpu.assert_no_validation_messages();
}

#[test]
fn instance_transforms_in_a_storage_buffer_pick_like_vertex_attributes() {
    let gpu = Gpu::new();
    let mut scene = Scene::default();
    scene.meshes.push(Mesh::sphere(6, 10));
    let mut rng = fastrand::Rng::with_seed(17);
    let transforms: Vec<Mat4> = (0..24)
        .map(|i| {
            Mat4::from_scale_rotation_translation(
                Vec3::new(0.3 + rng.f32() * 0.3, 0.3 + rng.f32() * 0.3, 0.3 + rng.f32() * 0.3),
                glam::Quat::from_rotation_z(rng.f32() * 3.0),
                Vec3::new((i % 6) as f32 * 0.8 - 2.0, (i / 6) as f32 * 0.8 - 1.2, -6.0 - rng.f32()),
            )
        })
        .collect();
    let mut obj = Object::new(9, 0, Mat4::from_rotation_y(0.2));
    obj.instances = Some(transforms.clone());
    scene.objects.push(obj);
    let gs = scene.upload(&gpu.ctx);
    let as_attributes = gs.draws[0].clone();
    let inst = as_attributes.instances.expect("instanced");
    // Mat4s at an 80-byte stride after 100 bytes of other data, and 3x4 rows packed.
    let mut padded = vec![0f32; 25];
    for m in &transforms {
        padded.extend(m.to_cols_array());
        padded.extend([0.0; 4]);
    }
    let rows: Vec<f32> = transforms.iter().flat_map(|m| m.transpose().to_cols_array().into_iter().take(12)).collect();
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let (mb, rb) = (gpu.ctx.upload(&padded, usage).unwrap(), gpu.ctx.upload(&rows, usage).unwrap());
    let storage = |b: &picking_vk_context::HostBuffer, offset: u64, stride: u32, format| {
        as_attributes
            .clone()
            .with_instance_binding(picking_vk::draw::InstanceBinding::StorageBuffer)
            .with_instance_format(format)
            .with_instances(picking_vk::draw::Instances { range: BufferRange { buffer: b.buffer, offset, size: b.size - offset }, stride, ..inst })
    };
    let variants = [storage(&mb, 100, 80, picking_vk::draw::InstanceFormat::Mat4), storage(&rb, 0, 48, picking_vk::draw::InstanceFormat::Rows3x4)];
    let (view, proj) = random_scene_camera(picking_vk::DepthConvention::Reverse, W, H);
    let vp = Viewport::full(W, H);
    let request = PickRequest::new(vp, view, proj);
    let covered = gpu.covered_pixels(&request, std::slice::from_ref(&as_attributes), 8);
    assert!(covered.len() > 300, "the instances fill part of the view: {}", covered.len());
    let mut picker = gpu.picker(PickerConfig::default().with_frames_in_flight(64));
    let mut instances_seen = std::collections::BTreeSet::new();
    let key = |r: &picking_vk::PickResult| r.hit.as_ref().map(|h| (h.id, h.instance, h.depth));
    for chunk in covered.iter().take(128).copied().collect::<Vec<_>>().chunks(64) {
        let want = gpu.pick_batch(&mut picker, &request, chunk, std::slice::from_ref(&as_attributes));
        for draw in &variants {
            let got = gpu.pick_batch(&mut picker, &request, chunk, std::slice::from_ref(draw));
            for ((a, b), p) in want.iter().zip(&got).zip(chunk) {
                assert_eq!(key(a), key(b), "pixel {p}");
                instances_seen.extend(b.hit.as_ref().and_then(|h| h.instance));
            }
        }
    }
    assert!(instances_seen.len() > 8, "instances hit: {instances_seen:?}");
    // Rectangles read the storage buffer too: the same per-instance pixel counts.
    let rect =
        [picking_vk::PickQuery::Rect { rect: picking_vk::PixelRect::new(UVec2::new(10, 10), UVec2::new(W - 10, H - 10)), mode: picking_vk::RectMode::Visible }];
    let mut rects = vec![];
    for draw in std::iter::once(&as_attributes).chain(&variants) {
        // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
        gpu.run(|cmd| unsafe { picker.record(cmd, 0, &request, &rect, std::slice::from_ref(draw)) }.map(|_| ()).unwrap());
        // SAFETY: `run` waited.
        rects.push(unsafe { picker.take_results(0) }.unwrap().unwrap().results);
    }
    assert_eq!(rects[0], rects[1]);
    assert_eq!(rects[0], rects[2]);
    drop((picker, mb, rb, gs));
    gpu.assert_no_validation_messages();
}
