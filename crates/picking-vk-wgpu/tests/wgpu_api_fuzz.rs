//! Hostile draws through the bridge: random offsets, strides, formats, index formats and
//! ranges, instance ranges and base vertices, some past their buffers. Each draw is built and
//! picked alone: the bridge and the picker answer with a result or an error, never a panic,
//! never a validation message, and the picker keeps working after every refusal.

mod common;
use common::RecordPick;

use glam::{Mat4, UVec2, Vec3};
use picking_vk::{PickQuery, PickRequest, PickerConfig};
use picking_vk_wgpu::{viewport, InstanceTransforms, VertexPositions, WgpuDraw, WgpuPicker};
use std::time::Duration;
use wgpu::util::DeviceExt;

const W: u32 = 64;
const H: u32 = 48;

#[test]
fn hostile_draws_get_results_or_errors_and_the_picker_goes_on() {
    let adapter = common::adapter();
    let gpu = common::device(&adapter);
    let mut picker = WgpuPicker::new(&gpu, PickerConfig::default().with_frames_in_flight(2).with_max_queries(4)).expect("the picker");
    let mut rng = fastrand::Rng::with_seed(9);
    // Positions of a triangle fan near the camera's axis, with junk around them.
    let floats: Vec<f32> = (0..4096).map(|i| if i % 3 == 2 { -3.0 } else { rng.f32() * 2.0 - 1.0 }).collect();
    let bytes: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
    let vertices = gpu.device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: None, contents: &bytes, usage: wgpu::BufferUsages::VERTEX });
    // Indices, some far past the vertices (the GPU reads them under robustBufferAccess).
    let indices: Vec<u8> = (0..2048u32).map(|i| if i % 97 == 0 { 1_000_000 + i } else { i % 300 }).flat_map(u32::to_le_bytes).collect();
    let index_buffer = gpu.device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: None, contents: &indices, usage: wgpu::BufferUsages::INDEX });
    let transforms: Vec<u8> =
        (0..32).flat_map(|i| Mat4::from_translation(Vec3::new(i as f32 * 0.01, 0.0, 0.0)).to_cols_array()).flat_map(f32::to_le_bytes).collect();
    let instances = gpu.device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: None, contents: &transforms, usage: wgpu::BufferUsages::VERTEX });
    let view = glam::camera::rh::view::look_at_mat4(Vec3::ZERO, Vec3::new(0.0, 0.0, -1.0), Vec3::Y);
    let proj = glam::camera::rh::proj::directx::perspective(1.2, W as f32 / H as f32, 0.1, 20.0);
    let request = PickRequest::new(viewport(W, H), view, proj);
    let formats = [
        wgpu::VertexFormat::Float32x3,
        wgpu::VertexFormat::Float32x3,
        wgpu::VertexFormat::Float32x3,
        wgpu::VertexFormat::Float16x4,
        wgpu::VertexFormat::Snorm16x4,
        wgpu::VertexFormat::Unorm8x4,
        wgpu::VertexFormat::Float32x2,
        wgpu::VertexFormat::Uint32x3,
    ];
    let (mut built, mut picked, mut refused_at_record) = (0, 0, 0);
    for case in 0..1000u64 {
        let mut pick = |n: u32| rng.u32(0..n);
        let positions = VertexPositions {
            buffer: &vertices,
            offset: [0u64, 0, 4, 12, 1000, 16384, 20000][pick(7) as usize],
            array_stride: [12u64, 12, 12, 16, 24, 0, 4, 2048, 1 << 33][pick(9) as usize],
            attribute_offset: [0u64, 0, 0, 4, 2, 40000][pick(6) as usize],
            format: formats[pick(formats.len() as u32) as usize],
        };
        let id = picking_vk::ObjectId::new(case + 1).unwrap();
        let (a, b) = (pick(400), pick(400));
        let draw = if rng.bool() {
            let format = if rng.bool() { wgpu::IndexFormat::Uint16 } else { wgpu::IndexFormat::Uint32 };
            WgpuDraw::indexed(id, positions, &index_buffer, [0u64, 0, 4, 2, 6, 8192, 9000][rng.usize(0..7)], format, a..b, rng.i32(-10..400))
        } else {
            WgpuDraw::new(id, positions, a..b)
        };
        let draw = match draw {
            Ok(d) if rng.bool() => {
                let source = InstanceTransforms {
                    buffer: &instances,
                    offset: [0u64, 4, 64, 2048, 4096][rng.usize(0..5)],
                    array_stride: [0u64, 48, 64, 80][rng.usize(0..4)],
                    format: Default::default(),
                };
                let (s, e) = (rng.u32(0..40), rng.u32(0..40));
                d.with_instances(source, s..e)
            }
            other => other,
        };
        let Ok(draw) = draw else { continue };
        built += 1;
        let point = UVec2::new(rng.u32(0..W), rng.u32(0..H));
        match picker.record_pick(&request, &[PickQuery::Point(point)], &[draw]) {
            Ok(commands) => {
                let ticket = commands.ticket();
                commands.submit([], []).expect("submitted");
                picker.wait_results(&ticket, Duration::from_secs(20)).expect("a recorded pick completes");
                picked += 1;
            }
            Err(e) => {
                assert!(e.is_recoverable(), "case {case}: {e}");
                refused_at_record += 1;
            }
        }
    }
    eprintln!("{built} draws built, {picked} picked, {refused_at_record} refused at record");
    assert!(picked >= 40 && refused_at_record >= 40, "the cases must reach both the GPU and the refusals: {picked} {refused_at_record}");
    common::assert_no_messages();
}
