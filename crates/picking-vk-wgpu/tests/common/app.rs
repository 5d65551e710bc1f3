//! The tests' app: its device, the example's scene renderer and an offscreen target, and a
//! frame that renders and picks in one submission.

use super::scene::{example_scene, Highlight, SceneRenderer};
use super::RecordPick;
use glam::{Mat4, UVec2};
use picking_vk::{FrameResults, PickQuery, PickRequest};
use picking_vk_wgpu::{viewport, WgpuPicker};
use std::time::Duration;

pub const WIDTH: u32 = 320;
pub const HEIGHT: u32 = 240;

/// The app: its device, scene renderer and offscreen target.
pub struct App {
    pub gpu: picking_vk_wgpu::PickingDevice,
    pub renderer: SceneRenderer,
    pub target: super::scene::Offscreen,
}

impl App {
    pub fn new(gpu: picking_vk_wgpu::PickingDevice) -> Self {
        let renderer = SceneRenderer::new(&gpu.device, &example_scene(), super::scene::COLOR_FORMAT);
        let target = super::scene::offscreen(&gpu.device, UVec2::new(WIDTH, HEIGHT));
        App { gpu, renderer, target }
    }

    /// Renders the scene and picks `queries` in one submission, after the app's `before` work
    /// (and after the scene pass, or before it with `pick_first`); returns the same frame's
    /// results.
    pub fn frame(
        &self,
        picker: &mut WgpuPicker,
        camera: (Mat4, Mat4),
        queries: &[PickQuery],
        before: Vec<wgpu::CommandBuffer>,
        pick_first: bool,
    ) -> FrameResults {
        let gpu = &self.gpu;
        self.renderer.update(&gpu.queue, camera.1 * camera.0, &Highlight::default());
        let mut encoder = gpu.device.create_command_encoder(&Default::default());
        self.renderer.render(&mut encoder, &self.target.color, &self.target.depth);
        let request = PickRequest::new(viewport(WIDTH, HEIGHT), camera.0, camera.1);
        let commands = picker.record_pick(&request, queries, &self.renderer.pick_draws()).expect("recorded");
        let ticket = commands.ticket();
        let scene = encoder.finish();
        if pick_first {
            commands.submit(before, [scene]).expect("submitted");
        } else {
            commands.submit(before.into_iter().chain([scene]), []).expect("submitted");
        }
        picker.wait_results(&ticket, Duration::from_secs(20)).expect("the same frame's results")
    }
}
