//! Random scenes through the bridge against the CPU ray cast: meshes packed into shared wgpu
//! buffers at offsets (vertex slices, attribute offsets inside interleaved vertices, base
//! vertices, index slices and first indices, 16- and 32-bit indices, non-indexed ranges),
//! instanced objects drawing a sub-range of a shared instance buffer, as wgpu apps lay them
//! out. Every unambiguous pixel must agree, instance numbers included.

mod common;
use common::RecordPick;

use glam::{Mat4, Quat, UVec2, Vec3};
use picking_vk::{PickQuery, PickRequest, PickerConfig};
use picking_vk_tests::oracle::{Oracle, OracleCamera};
use picking_vk_tests::scene::{Mesh, Object, Scene};
use picking_vk_wgpu::{viewport, InstanceTransforms, VertexPositions, WgpuDraw, WgpuPicker};
use std::time::Duration;
use wgpu::util::DeviceExt;

const W: u32 = 256;
const H: u32 = 192;

/// How one object's geometry sits in the shared buffers.
struct Placed {
    id: u64,
    mesh: Mesh,
    /// Vertex slice start, array stride, attribute offset (bytes).
    slice: u64,
    stride: u64,
    attribute: u64,
    /// Base vertex (indexed draws) or first vertex (non-indexed).
    base: u32,
    /// Index slice start (bytes), first index, 16-bit indices; `None`: non-indexed.
    indices: Option<(u64, u32, bool)>,
    model: Mat4,
    /// Instance range in the shared instance buffer.
    instances: Option<std::ops::Range<u32>>,
}

fn random_mesh(rng: &mut fastrand::Rng) -> Mesh {
    match rng.u32(0..3) {
        0 => Mesh::cuboid(Vec3::new(0.2 + rng.f32() * 0.6, 0.2 + rng.f32() * 0.6, 0.2 + rng.f32() * 0.6)),
        1 => Mesh::sphere(6 + rng.u32(0..6), 8 + rng.u32(0..8)),
        _ => {
            let count = 4 + rng.usize(0..8);
            Mesh::random_soup(rng, count)
        }
    }
}

#[test]
fn random_scenes_packed_in_shared_buffers_pick_like_a_ray_cast() {
    let adapter = common::adapter();
    let gpu = common::device(&adapter);
    let mut picker = WgpuPicker::new(&gpu, PickerConfig::default().with_max_queries(240)).expect("the picker");
    let (mut checked, mut on_instances) = (0, 0);
    for seed in 0..6u64 {
        let mut rng = fastrand::Rng::with_seed(100 + seed);
        // The shared instance buffer: 40 transforms; objects draw sub-ranges of it.
        let transforms: Vec<Mat4> = (0..40)
            .map(|_| {
                Mat4::from_scale_rotation_translation(
                    Vec3::splat(0.4 + rng.f32() * 0.5),
                    Quat::from_rotation_z(rng.f32() * 3.0),
                    Vec3::new(rng.f32() * 3.0 - 1.5, rng.f32() * 2.0 - 1.0, rng.f32() * 1.5),
                )
            })
            .collect();
        let mut vertex_bytes: Vec<u8> = vec![0; 4 * rng.usize(0..8)];
        let mut index_bytes: Vec<u8> = vec![0; 4 * rng.usize(0..8)];
        let mut placed = vec![];
        for k in 0..10u64 {
            let mesh = random_mesh(&mut rng);
            let stride = [12u64, 16, 20, 24, 32][rng.usize(0..5)];
            let attribute = 4 * rng.u64(0..=(stride - 12) / 4);
            // A vertex slice at the end of what is there (4-byte aligned), then some unused
            // vertices before the ones the draw reads.
            let slice = vertex_bytes.len() as u64;
            let base = rng.u32(0..5);
            let count = base as usize + mesh.positions.len();
            vertex_bytes.resize(vertex_bytes.len() + count * stride as usize, 0);
            for (v, p) in mesh.positions.iter().enumerate() {
                let at = slice as usize + (base as usize + v) * stride as usize + attribute as usize;
                vertex_bytes[at..at + 12].copy_from_slice(&p.to_array().map(f32::to_le_bytes).concat());
            }
            let indices = mesh.indices.as_ref().map(|ix| {
                let short = ix.len() < 60_000 && rng.bool();
                let slice = index_bytes.len() as u64;
                let first = rng.u32(0..4);
                let width = if short { 2 } else { 4 };
                index_bytes.resize(index_bytes.len() + (first as usize + ix.len()) * width, 0xAB);
                for (n, &i) in ix.iter().enumerate() {
                    let at = slice as usize + (first as usize + n) * width;
                    if short {
                        index_bytes[at..at + 2].copy_from_slice(&(i as u16).to_le_bytes());
                    } else {
                        index_bytes[at..at + 4].copy_from_slice(&i.to_le_bytes());
                    }
                }
                index_bytes.resize(index_bytes.len().next_multiple_of(4), 0);
                (slice, first, short)
            });
            let instances = rng.bool().then(|| {
                let start = rng.u32(0..36);
                start..start + rng.u32(1..=4)
            });
            let model = Mat4::from_translation(Vec3::new(rng.f32() * 4.0 - 2.0, rng.f32() * 3.0 - 1.5, -4.0 - rng.f32() * 4.0));
            placed.push(Placed { id: k + 1, mesh, slice, stride, attribute, base, indices, model, instances });
        }
        let buffer = |bytes: &[u8], usage| gpu.device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: None, contents: bytes, usage });
        let vertices = buffer(&vertex_bytes, wgpu::BufferUsages::VERTEX);
        let indices = buffer(&index_bytes, wgpu::BufferUsages::INDEX);
        let instance_bytes: Vec<u8> = transforms.iter().flat_map(|m| m.to_cols_array()).flat_map(f32::to_le_bytes).collect();
        let instance_buffer = buffer(&instance_bytes, wgpu::BufferUsages::VERTEX);
        let mut scene = Scene { meshes: vec![], objects: vec![] };
        let mut draws = vec![];
        for p in &placed {
            let positions = VertexPositions {
                buffer: &vertices,
                offset: p.slice,
                array_stride: p.stride,
                attribute_offset: p.attribute,
                format: wgpu::VertexFormat::Float32x3,
            };
            let id = picking_vk::ObjectId::new(p.id).unwrap();
            let mut draw = match (p.indices, &p.mesh.indices) {
                (Some((slice, first, short)), Some(ix)) => {
                    let format = if short { wgpu::IndexFormat::Uint16 } else { wgpu::IndexFormat::Uint32 };
                    WgpuDraw::indexed(id, positions, &indices, slice, format, first..first + ix.len() as u32, p.base as i32)
                }
                _ => WgpuDraw::new(id, positions, p.base..p.base + p.mesh.positions.len() as u32),
            }
            .expect("a draw")
            .with_model(p.model);
            let mut object = Object::new(p.id, scene.meshes.len(), p.model);
            if let Some(range) = &p.instances {
                let source = InstanceTransforms { buffer: &instance_buffer, offset: 0, array_stride: 64, format: Default::default() };
                draw = draw.with_instances(source, range.clone()).expect("instances");
                object.instances = Some(transforms[range.start as usize..range.end as usize].to_vec());
            }
            scene.meshes.push(p.mesh.clone());
            scene.objects.push(object);
            draws.push(draw);
        }
        let view = glam::camera::rh::view::look_at_mat4(Vec3::new(0.3, 0.2, 1.0), Vec3::new(0.0, 0.0, -6.0), Vec3::Y);
        let proj = glam::camera::rh::proj::directx::perspective(1.0, W as f32 / H as f32, 0.5, 40.0);
        let oracle = Oracle::new(&scene, OracleCamera::new(view, proj, [0.0, f64::from(H), f64::from(W), -f64::from(H)]));
        let pixels: Vec<UVec2> = (0..240).map(|_| UVec2::new(rng.u32(0..W), rng.u32(0..H))).collect();
        let queries: Vec<PickQuery> = pixels.iter().map(|&p| PickQuery::Point(p)).collect();
        let commands = picker.record_pick(&PickRequest::new(viewport(W, H), view, proj), &queries, &draws).expect("recorded");
        let ticket = commands.ticket();
        commands.submit([], []).expect("submitted");
        let results = picker.wait_results(&ticket, Duration::from_secs(20)).expect("results");
        for (i, &pixel) in pixels.iter().enumerate() {
            let answer = oracle.pick(pixel);
            if answer.ambiguous {
                continue;
            }
            let expected = answer.hit.map(|h| (h.id, h.instance));
            let got = results.pick(i).and_then(|p| p.hit.as_ref()).map(|h| (h.id.get(), h.instance));
            assert_eq!(got, expected, "seed {seed}, pixel {pixel}");
            checked += 1;
            on_instances += usize::from(expected.is_some_and(|(_, i)| i.is_some()));
        }
    }
    eprintln!("{checked} unambiguous pixels agree with the ray cast, {on_instances} on instances");
    assert!(checked >= 1000 && on_instances >= 30, "the scenes must be seen: {checked} pixels, {on_instances} on instances");
    common::assert_no_messages();
}
