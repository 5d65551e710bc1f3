//! A wgpu frame with and without the picker, side by side in one run: the example's scene
//! drawn offscreen, alone or with a hover pick and a 64x64 rubber band in the same
//! submission (the ring path: results a frame later), and with the pick submitted first and
//! waited for (the same-frame path). Frames of each kind alternate. Prints a Markdown table:
//! CPU time to encode and submit the frame (picking included), and GPU time of the whole
//! submission from wgpu timestamps written before its first and after its last command.
//!
//! `cargo run --release -p picking-vk-wgpu --example wgpu_bench -- [--frames N] [--size WxH]`

#[path = "common/scene.rs"]
mod scene;

use glam::UVec2;
use picking_vk::{PickQuery, PickRequest, PickerConfig, PixelRect, RectMode};
use picking_vk_wgpu::{picking_vk, viewport, WgpuPicker};
use scene::{example_scene, orbit_camera, Highlight, SceneRenderer};
use std::time::{Duration, Instant};

type Error = Box<dyn std::error::Error>;

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Alone,
    Ring,
    SameFrame,
}

/// Timestamps around a submission: one written first, one last.
struct Clock {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    read: wgpu::Buffer,
    period_ns: f64,
}

impl Clock {
    fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Self {
        let set = device.create_query_set(&wgpu::QuerySetDescriptor { label: None, ty: wgpu::QueryType::Timestamp, count: 2 });
        let buffer = |usage| device.create_buffer(&wgpu::BufferDescriptor { label: None, size: 16, usage, mapped_at_creation: false });
        let resolve = buffer(wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC);
        let read = buffer(wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ);
        Clock { set, resolve, read, period_ns: f64::from(queue.get_timestamp_period()) }
    }

    fn start(&self, device: &wgpu::Device) -> wgpu::CommandBuffer {
        let mut encoder = device.create_command_encoder(&Default::default());
        encoder.write_timestamp(&self.set, 0);
        encoder.finish()
    }

    fn stop(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.write_timestamp(&self.set, 1);
        encoder.resolve_query_set(&self.set, 0..2, &self.resolve, 0);
        encoder.copy_buffer_to_buffer(&self.resolve, 0, &self.read, 0, 16);
    }

    /// The submission's GPU time in µs, once it completed.
    fn read_us(&self, device: &wgpu::Device) -> Result<f64, Error> {
        self.read.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        device.poll(wgpu::PollType::wait_indefinitely())?;
        let ticks: Vec<u64> = self.read.slice(..).get_mapped_range()?.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default())).collect();
        self.read.unmap();
        Ok(ticks[1].saturating_sub(ticks[0]) as f64 * self.period_ns / 1000.0)
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(((v.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(f64::NAN)
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1)).cloned();
    let frames: usize = value("--frames").map(|f| f.parse()).transpose()?.unwrap_or(300);
    let size = match value("--size") {
        Some(s) => {
            let (w, h) = s.split_once('x').ok_or("--size WxH")?;
            UVec2::new(w.parse()?, h.parse()?)
        }
        None => UVec2::new(1920, 1080),
    };
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = wgpu::Backends::VULKAN;
    let adapter = pollster::block_on(wgpu::Instance::new(desc).request_adapter(&Default::default()))?;
    let timing = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
    let device_desc = wgpu::DeviceDescriptor { required_features: timing, ..Default::default() };
    let gpu = picking_vk_wgpu::request_device(&adapter, &device_desc, picking_vk_wgpu::offered(&adapter)?)?;
    let config = PickerConfig::default().with_frames_in_flight(2).with_timestamps(true);
    let mut picker = WgpuPicker::new(&gpu, config)?;
    let renderer = SceneRenderer::new(&gpu.device, &example_scene(), scene::COLOR_FORMAT);
    let draws = renderer.pick_draws();
    let target = scene::offscreen(&gpu.device, size);
    let clock = Clock::new(&gpu.device, &gpu.queue);
    let modes = [Mode::Alone, Mode::Ring, Mode::SameFrame];
    let (mut cpu, mut gpu_us, mut pick_us, mut wait) = ([vec![], vec![], vec![]], [vec![], vec![], vec![]], vec![], vec![]);
    for frame in 0..frames * modes.len() {
        let mode = modes[frame % modes.len()];
        let (view, proj) = orbit_camera(frame as f32 * 0.01, size.x as f32 / size.y as f32);
        let cursor = UVec2::new((size.x / 3 + frame as u32 % (size.x / 3)).min(size.x - 65), size.y / 2);
        let queries = [PickQuery::Point(cursor), PickQuery::Rect { rect: PixelRect::new(cursor, cursor + UVec2::splat(64)), mode: RectMode::Visible }];
        let start = Instant::now();
        renderer.update(&gpu.queue, proj * view, &Highlight::default());
        let request = PickRequest::new(viewport(size.x, size.y), view, proj);
        // SAFETY: the benchmark destroys no buffer.
        let pick = if mode == Mode::Alone { None } else { Some(unsafe { picker.record(&request, &queries, &draws) }?) };
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        renderer.render(&mut encoder, &target.color, &target.depth);
        clock.stop(&mut encoder);
        let first = clock.start(&gpu.device);
        match (mode, pick) {
            (Mode::SameFrame, Some(pick)) => {
                let ticket = pick.ticket();
                pick.submit([first], [])?;
                let submitted = Instant::now();
                let results = picker.wait_results(&ticket, Duration::from_secs(2))?;
                wait.push(submitted.elapsed().as_secs_f64() * 1e6);
                pick_us.extend(results.stats.gpu_time_ns.map(|ns| ns / 1000.0));
                gpu.queue.submit([encoder.finish()]);
            }
            (_, Some(pick)) => {
                pick.submit([first], [encoder.finish()])?;
                for results in picker.poll_results()? {
                    pick_us.extend(results.stats.gpu_time_ns.map(|ns| ns / 1000.0));
                }
            }
            (_, None) => {
                gpu.queue.submit([first, encoder.finish()]);
            }
        }
        let i = modes.iter().position(|m| *m == mode).unwrap_or(0);
        cpu[i].push(start.elapsed().as_secs_f64() * 1e6);
        let gpu_frame = clock.read_us(&gpu.device)?;
        // The first frames build pipelines.
        if frame >= modes.len() * 3 {
            gpu_us[i].push(gpu_frame);
        } else {
            cpu[i].pop();
        }
    }
    let info = adapter.get_info();
    println!("wgpu frame with and without picking-vk, {}x{}, {} frames each, {} ({})\n", size.x, size.y, frames, info.name, info.driver_info);
    println!("| frame | CPU µs median | CPU µs p99 | GPU µs median (whole submission) | GPU vs alone |");
    println!("|---|---|---|---|---|");
    let alone_gpu = median(&mut gpu_us[0].clone());
    let names = [
        "scene alone",
        "scene + pick in one submission (ring path)",
        "pick submitted first and waited for, then the scene (same-frame path; GPU column spans both submissions and the wait)",
    ];
    for (i, name) in names.iter().enumerate() {
        let g = median(&mut gpu_us[i]);
        println!("| {name} | {:.1} | {:.1} | {g:.1} | {:.2}x |", median(&mut cpu[i].clone()), percentile(&mut cpu[i], 0.99), g / alone_gpu);
    }
    println!("\nPick pass GPU µs (the picker's timestamps, point + 64x64 rectangle): median {:.1}", median(&mut pick_us));
    println!("Same-frame path, submission to results on the CPU: median {:.1} µs, p99 {:.1} µs", median(&mut wait.clone()), percentile(&mut wait, 0.99));
    Ok(())
}
