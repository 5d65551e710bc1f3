//! GPU results read from WGSL: the app's compute pass, submitted after the pick in the same
//! submission, reads every query's hit and every object's and instance's membership in the
//! rectangles' sets through `gpu_results_wgsl`; they equal the same frame's CPU results.
//! Lavapipe, wgpu's validation and the Khronos layer with synchronization validation.

mod common;
use common::RecordPick;

use common::app::{App, HEIGHT, WIDTH};
use common::scene::orbit_camera;
use glam::UVec2;
use picking_vk::{PickQuery, PickRequest, PickerConfig, PixelRect, QueryResult, RectMode, Snap};
use picking_vk_wgpu::{viewport, WgpuPicker};
use std::collections::BTreeSet;
use std::time::Duration;

const NO_INSTANCE: u32 = u32::MAX;

/// The app's reader: for query `q` < `queries` its hit (8 words), then per rectangle query
/// and key whether the key is in its set, then per key whether any point query hovered it.
const READER: &str = r"
struct Keys { queries: u32, key_count: u32, rects: vec2<u32>, keys: array<vec4<u32>> };
@group(1) @binding(0) var<storage, read> input: Keys;
@group(1) @binding(1) var<storage, read_write> output: array<u32>;

@compute @workgroup_size(1)
fn main() {
    var o = 0u;
    for (var q = 0u; q < input.queries; q++) {
        let h = pick_hit(q);
        output[o] = h.id.x; output[o + 1u] = h.id.y; output[o + 2u] = h.instance; output[o + 3u] = h.draw_index;
        output[o + 4u] = h.pixel.x; output[o + 5u] = h.pixel.y; output[o + 6u] = bitcast<u32>(h.depth); output[o + 7u] = h.flags;
        o += 8u;
    }
    for (var r = 0u; r < 2u; r++) {
        for (var k = 0u; k < input.key_count; k++) {
            let key = input.keys[k];
            output[o] = u32(pick_in_rect(input.rects[r], key.xy, key.z));
            o += 1u;
        }
    }
    for (var k = 0u; k < input.key_count; k++) {
        let key = input.keys[k];
        output[o] = u32(pick_is_hovered(key.xy, key.z));
        o += 1u;
    }
}
";

/// Every object and instance of the example's scene, and one absent.
fn keys() -> Vec<(u64, u32)> {
    let mut keys: Vec<(u64, u32)> = common::scene::example_scene()
        .objects
        .iter()
        .flat_map(|o| match &o.instances {
            Some(list) => (0..list.len() as u32).map(|i| (o.id, i)).collect::<Vec<_>>(),
            None => vec![(o.id, NO_INSTANCE)],
        })
        .collect();
    keys.push((77, NO_INSTANCE));
    keys
}

#[test]
fn wgsl_reads_the_frames_results_in_the_same_submission() {
    let adapter = common::adapter();
    let app = App::new(common::device(&adapter));
    let gpu = &app.gpu;
    let config = PickerConfig::default().with_frames_in_flight(2).with_max_queries(16).with_gpu_results(true);
    let mut picker = WgpuPicker::new(gpu, config).expect("a picker with GPU results");
    let keys = keys();
    let source = format!("{}\n{READER}", picking_vk_wgpu::gpu_results_wgsl(0, 0));
    let module = gpu.device.create_shader_module(wgpu::ShaderModuleDescriptor { label: Some("reader"), source: wgpu::ShaderSource::Wgsl(source.into()) });
    let pipeline = gpu.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("reader"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    // One bind group per slot: the pick's slot says which results buffer this frame writes.
    let results_groups: Vec<wgpu::BindGroup> = (0..2)
        .map(|slot| {
            let buffer = picker.gpu_results(slot).expect("the slot's results");
            let entries = [wgpu::BindGroupEntry { binding: 0, resource: buffer.as_entire_binding() }];
            gpu.device.create_bind_group(&wgpu::BindGroupDescriptor { label: None, layout: &pipeline.get_bind_group_layout(0), entries: &entries })
        })
        .collect();
    let mut rng = fastrand::Rng::with_seed(11);
    let select_through = gpu.features().contains(picking_vk::PickFeatures::SELECT_THROUGH);
    let (mut hits, mut members) = (0, 0);
    for (frame, angle) in [0.4f32, 2.2, 4.0, 5.3].into_iter().enumerate() {
        let camera = orbit_camera(angle, WIDTH as f32 / HEIGHT as f32);
        let mut queries: Vec<PickQuery> = (0..8).map(|_| PickQuery::Point(UVec2::new(rng.u32(40..WIDTH - 40), rng.u32(40..HEIGHT - 40)))).collect();
        queries.push(PickQuery::Radius {
            pixel: UVec2::new(rng.u32(40..WIDTH - 40), rng.u32(40..HEIGHT - 40)),
            radius: 6,
            snap: if frame % 2 == 0 { Snap::Nearest } else { Snap::Thin },
        });
        let rect =
            PixelRect::new(UVec2::new(rng.u32(0..WIDTH / 2), rng.u32(0..HEIGHT / 2)), UVec2::new(rng.u32(WIDTH / 2..WIDTH), rng.u32(HEIGHT / 2..HEIGHT)));
        let second_mode = if select_through { RectMode::All } else { RectMode::Visible };
        queries.extend([PickQuery::Rect { rect, mode: RectMode::Visible }, PickQuery::Rect { rect, mode: second_mode }]);
        let rect_queries = [queries.len() as u32 - 2, queries.len() as u32 - 1];
        // The reader's input and output.
        let mut input: Vec<u32> = vec![queries.len() as u32, keys.len() as u32, rect_queries[0], rect_queries[1]];
        input.extend(keys.iter().flat_map(|&(id, i)| [id as u32, (id >> 32) as u32, i, 0]));
        let input_bytes: Vec<u8> = input.iter().flat_map(|w| w.to_le_bytes()).collect();
        let input = wgpu::util::DeviceExt::create_buffer_init(
            &gpu.device,
            &wgpu::util::BufferInitDescriptor { label: None, contents: &input_bytes, usage: wgpu::BufferUsages::STORAGE },
        );
        let out_words = 8 * queries.len() + 3 * keys.len();
        let buffer = |usage| gpu.device.create_buffer(&wgpu::BufferDescriptor { label: None, size: 4 * out_words as u64, usage, mapped_at_creation: false });
        let (output, read) =
            (buffer(wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC), buffer(wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ));
        let io_entries = [
            wgpu::BindGroupEntry { binding: 0, resource: input.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 1, resource: output.as_entire_binding() },
        ];
        let io = gpu.device.create_bind_group(&wgpu::BindGroupDescriptor { label: None, layout: &pipeline.get_bind_group_layout(1), entries: &io_entries });

        app.renderer.update(&gpu.queue, camera.1 * camera.0, &Default::default());
        let mut scene = gpu.device.create_command_encoder(&Default::default());
        app.renderer.render(&mut scene, &app.target.color, &app.target.depth);
        let request = PickRequest::new(viewport(WIDTH, HEIGHT), camera.0, camera.1);
        let commands = picker.record_pick(&request, &queries, &app.renderer.pick_draws()).expect("recorded");
        let ticket = commands.ticket();
        let mut reader = gpu.device.create_command_encoder(&Default::default());
        {
            let mut pass = reader.begin_compute_pass(&Default::default());
            pass.set_pipeline(&pipeline);
            pass.set_bind_group(0, &results_groups[ticket.slot], &[]);
            pass.set_bind_group(1, &io, &[]);
            pass.dispatch_workgroups(1, 1, 1);
        }
        reader.copy_buffer_to_buffer(&output, 0, &read, 0, 4 * out_words as u64);
        commands.submit([scene.finish()], [reader.finish()]).expect("submitted");
        let cpu = picker.wait_results(&ticket, Duration::from_secs(20)).expect("the same frame's CPU results");
        read.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        gpu.device.poll(wgpu::PollType::wait_indefinitely()).expect("idle");
        let words: Vec<u32> = read.slice(..).get_mapped_range().expect("mapped").chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();

        let mut hovered = BTreeSet::new();
        for (q, result) in cpu.results.iter().enumerate() {
            let w = &words[8 * q..8 * q + 8];
            match result {
                QueryResult::Rect(_) => assert_eq!(w[7], 0, "frame {frame}: a rectangle has no hit"),
                _ => {
                    let hit = result.pick().and_then(|p| p.hit.as_ref());
                    assert_eq!(w[7] & 1 == 1, hit.is_some(), "frame {frame}, query {q}: found");
                    if let Some(h) = hit {
                        let key = (h.id.get(), h.instance.unwrap_or(NO_INSTANCE));
                        assert_eq!((u64::from(w[0]) | u64::from(w[1]) << 32, w[2], w[3]), (key.0, key.1, h.draw_index), "frame {frame}, query {q}");
                        hovered.insert(key);
                        hits += 1;
                    }
                }
            }
        }
        for (r, &query) in rect_queries.iter().enumerate() {
            let QueryResult::Rect(set) = &cpu.results[query as usize] else { panic!("a rectangle") };
            let in_set: BTreeSet<(u64, u32)> = set.objects.iter().map(|o| (o.id.get(), o.instance.unwrap_or(NO_INSTANCE))).collect();
            for (k, key) in keys.iter().enumerate() {
                let gpu_says = words[8 * queries.len() + r * keys.len() + k] == 1;
                assert_eq!(gpu_says, in_set.contains(key), "frame {frame}, rectangle {r}, key {key:?}");
                members += usize::from(gpu_says);
            }
        }
        for (k, key) in keys.iter().enumerate() {
            assert_eq!(words[8 * queries.len() + 2 * keys.len() + k] == 1, hovered.contains(key), "frame {frame}, hovered {key:?}");
        }
        read.unmap();
    }
    eprintln!("GPU results agree with the CPU's: {hits} hits, {members} rectangle memberships");
    assert!(hits >= 12 && members >= 8, "the views must show the scene");
    common::assert_no_messages();
}

#[test]
fn a_picker_without_gpu_results_has_none_to_bind() {
    let adapter = common::adapter();
    let gpu = common::device(&adapter);
    let picker = common::picker(&gpu, 2, 4);
    assert!(picker.gpu_results(0).is_err(), "no GPU results without PickerConfig::gpu_results");
}

/// wgpu requires a buffer it is handed to be initialized: each slot's results buffer is
/// cleared when the picker is made, and reads as no queries (zeros) before its first pick.
#[test]
fn results_buffers_read_zeros_before_the_first_pick() {
    let adapter = common::adapter();
    let gpu = common::device(&adapter);
    let config = PickerConfig::default().with_frames_in_flight(2).with_max_queries(4).with_gpu_results(true);
    let picker = WgpuPicker::new(&gpu, config).expect("the picker");
    for slot in 0..2 {
        let results = picker.gpu_results(slot).expect("a results buffer");
        let read = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: results.size(),
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(results, 0, &read, 0, results.size());
        gpu.queue.submit([encoder.finish()]);
        read.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        gpu.device.poll(wgpu::PollType::wait_indefinitely()).expect("idle");
        assert!(read.slice(..).get_mapped_range().expect("mapped").iter().all(|&b| b == 0), "slot {slot} holds what was there before");
    }
    drop(picker);
    common::assert_no_messages();
}
