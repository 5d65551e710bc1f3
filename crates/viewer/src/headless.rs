//! Headless mode: render the scene offscreen with its camera, pick every listed pixel, write
//! the results as JSON, and optionally a screenshot (first pick highlighted) and the ID view.

use crate::camera::{scene_camera, OrbitCamera};
use crate::id_view;
use crate::objects::ObjectTable;
use crate::outputs::{png, Staged};
use crate::pick_report::PickReport;
use crate::scene::Scene;
use crate::scene_upload::UploadedScene;
use crate::ViewerError;
use ash::vk;
use glam::UVec2;
use picking_vk::debug::IdImage;
use picking_vk::{DetailMode, DetailStatus, PickRequest, Picker, PickerConfig, Viewport};
use picking_vk_context::{ContextOptions, VulkanContext};
use picking_vk_host::{vk_util, CameraMatrices, FrameStyle, GpuScene, LitPass, Markers, Offscreen, COLOR_FORMAT};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Picks recorded per command buffer: one picker slot each.
const BATCH: usize = 64;
/// Reports kept in memory for the terminal table.
pub const SHOWN_REPORTS: usize = 64;

pub struct HeadlessOptions {
    pub size: (u32, u32),
    pub picks: Vec<(i64, i64)>,
    pub json: Option<PathBuf>,
    pub screenshot: Option<PathBuf>,
    pub id_view: Option<PathBuf>,
    pub validation: bool,
    pub detail: bool,
}

pub struct HeadlessOutcome {
    /// The first picks (at most [`SHOWN_REPORTS`]), for the terminal table; every pick's
    /// record is streamed to the JSON file, so memory does not grow with the pick count.
    pub shown: Vec<PickReport>,
    pub picks: usize,
    pub hits: usize,
    pub detail: DetailStatus,
    pub device: String,
    pub validation_messages: Vec<String>,
}

/// Reads a JSON array of [x, y] pixel pairs. Parsed straight into pairs (16 bytes a pick),
/// so a million picks take megabytes, not a JSON tree; a file that is not such an array is
/// parsed again generically only to say which entry is wrong.
pub fn read_pick_file(path: &Path) -> Result<Vec<(i64, i64)>, ViewerError> {
    let text = std::fs::read_to_string(path).map_err(|e| ViewerError::Input(format!("cannot read pick file {}: {e}", path.display())))?;
    if let Ok(pairs) = serde_json::from_str::<Vec<(i64, i64)>>(&text) {
        return Ok(pairs);
    }
    let value: Value = serde_json::from_str(&text).map_err(|e| ViewerError::Input(format!("pick file {} is not JSON: {e}", path.display())))?;
    let list = value.as_array().ok_or_else(|| ViewerError::Input(format!("pick file {}: expected a JSON array of [x, y] pairs", path.display())))?;
    list.iter()
        .enumerate()
        .map(|(i, p)| match p.as_array().map(|a| a.as_slice()) {
            Some([x, y]) => match (x.as_i64(), y.as_i64()) {
                (Some(x), Some(y)) => Ok((x, y)),
                _ => Err(ViewerError::Input(format!("pick file {}: entry {i} must hold two integers, got {p}", path.display()))),
            },
            _ => Err(ViewerError::Input(format!("pick file {}: entry {i} must be an [x, y] pair, got {p}", path.display()))),
        })
        .collect()
}

/// The process's peak resident memory in KiB (Linux), for the memory-bound checks.
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|l| l.strip_prefix("VmHWM:")).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The camera headless runs use: the scene's first camera, else the default framing.
pub fn headless_camera(scene: &Scene, aspect: f32) -> CameraMatrices {
    match &scene.camera {
        Some(desc) => scene_camera(desc, aspect),
        None => OrbitCamera::framing(scene).matrices(aspect),
    }
}

pub fn run(scene: &Scene, options: &HeadlessOptions) -> Result<HeadlessOutcome, ViewerError> {
    let (w, h) = options.size;
    if w == 0 || h == 0 || w > 8192 || h > 8192 {
        return Err(ViewerError::Input(format!("--size {w}x{h}: each side must be 1..=8192")));
    }
    let ctx = VulkanContext::new(&ContextOptions { validation: options.validation, want_detail: options.detail, ..Default::default() })?;
    let mut staged = Staged::default();
    let outcome = render_and_pick(&ctx, scene, options, &mut staged);
    let validation_messages = ctx.take_validation_messages();
    let mut outcome = outcome?;
    // Every output succeeded: move them all into place (a failure above left none behind).
    staged.commit()?;
    outcome.device = ctx.device_name.clone();
    outcome.validation_messages = validation_messages;
    Ok(outcome)
}

fn render_and_pick(ctx: &VulkanContext, scene: &Scene, options: &HeadlessOptions, staged: &mut Staged) -> Result<HeadlessOutcome, ViewerError> {
    let (w, h) = options.size;
    let objects = ObjectTable::new(scene);
    let uploaded = UploadedScene::new(ctx, scene, &objects)?;
    let gpu = &uploaded.gpu;
    let camera = headless_camera(scene, w as f32 / h as f32);
    let viewport = Viewport::full(w, h);
    let detail = if options.detail { DetailMode::IfEnabled } else { DetailMode::Off };
    // SAFETY: the context's handles belong together and outlive the picker.
    let mut picker = unsafe { Picker::new(ctx.host_device(), PickerConfig::default().with_frames_in_flight(BATCH).with_detail(detail)) }?;
    let detail_status = picker.detail_status().clone();
    let detail_active = detail_status == DetailStatus::Active;
    let mut outcome = HeadlessOutcome { shown: vec![], picks: 0, hits: 0, detail: detail_status, device: String::new(), validation_messages: vec![] };
    let mut first: Option<PickReport> = None;

    // The JSON records are streamed chunk by chunk into the staged file.
    let mut write_picks = |out: &mut dyn std::io::Write| -> Result<(), ViewerError> {
        let io = |e: std::io::Error| ViewerError::Output(e.to_string());
        out.write_all(b"[").map_err(io)?;
        for chunk in options.picks.chunks(BATCH) {
            for (i, report) in pick_chunk(ctx, &mut picker, chunk, (w, h), &camera, viewport, gpu, scene, &objects)?.into_iter().enumerate() {
                let sep: &[u8] = if outcome.picks == 0 && i == 0 { b"\n  " } else { b",\n  " };
                out.write_all(sep).map_err(io)?;
                serde_json::to_writer(&mut *out, &report.to_json(detail_active)).map_err(|e| ViewerError::Output(e.to_string()))?;
                outcome.hits += usize::from(report.hit.is_some());
                first.get_or_insert_with(|| report.clone());
                if outcome.shown.len() < SHOWN_REPORTS {
                    outcome.shown.push(report);
                }
            }
            outcome.picks += chunk.len();
        }
        out.write_all(b"\n]\n").map_err(io)
    };
    match &options.json {
        Some(path) => {
            let mut result = Ok(());
            staged.write(path, |out| {
                result = write_picks(out);
                Ok(())
            })?;
            result?;
        }
        None => write_picks(&mut std::io::sink())?,
    }

    if let Some(path) = &options.screenshot {
        let hit = first.as_ref().and_then(|r| r.hit.as_ref());
        let selected = uploaded.slot_of(first.as_ref());
        let markers = hit.map(|h| h.markers(0.012, scene.origin));
        let shot = screenshot(ctx, gpu, &camera, (w, h), selected, markers.as_ref())?;
        let bytes = png(&shot)?;
        staged.write(path, |out| out.write_all(&bytes))?;
    }
    if let Some(path) = &options.id_view {
        // SAFETY: the context's handles outlive the image.
        let mut ids = unsafe { IdImage::new(ctx.host_device(), w, h) }?;
        let request = PickRequest::new(UVec2::ZERO, viewport, camera.view, camera.projection);
        // SAFETY: as for the picks.
        ctx.run_once(|cmd| unsafe { ids.record(cmd, &request, &gpu.pick_draws, false, picking_vk::debug::IdCopy::Whole) })??;
        // SAFETY: `run_once` waited.
        let texels = unsafe { ids.read() }?;
        let img = id_view::image(&texels, w, h).ok_or_else(|| ViewerError::Output("ID view size mismatch".into()))?;
        let bytes = png(&img)?;
        staged.write(path, |out| out.write_all(&bytes))?;
    }
    drop(picker);
    Ok(outcome)
}

/// Picks one chunk of pixels (at most a slot each) in one command buffer.
#[allow(clippy::too_many_arguments)]
fn pick_chunk(
    ctx: &VulkanContext,
    picker: &mut Picker,
    chunk: &[(i64, i64)],
    (w, h): (u32, u32),
    camera: &CameraMatrices,
    viewport: Viewport,
    gpu: &GpuScene,
    scene: &Scene,
    objects: &ObjectTable,
) -> Result<Vec<PickReport>, ViewerError> {
    let mut recorded = vec![];
    ctx.run_once(|cmd| -> Result<(), ViewerError> {
        for &(x, y) in chunk {
            let inside = x >= 0 && y >= 0 && x < i64::from(w) && y < i64::from(h);
            if !inside {
                recorded.push(None);
                continue;
            }
            let request = PickRequest::new(UVec2::new(x as u32, y as u32), viewport, camera.view, camera.projection);
            // SAFETY: `cmd` is recording outside a render pass; the scene's buffers outlive
            // the wait in `run_once`.
            let ticket = unsafe { picker.record_shared(cmd, recorded.len(), &request, &gpu.pick_draws) }?;
            recorded.push(Some(ticket.slot));
        }
        Ok(())
    })??;
    let mut reports = Vec::with_capacity(chunk.len());
    for (&(x, y), slot) in chunk.iter().zip(recorded) {
        reports.push(match slot {
            // SAFETY: `run_once` waited for the command buffer.
            Some(slot) => match unsafe { picker.take_result(slot) }? {
                Some(result) => PickReport::new(&result, scene, objects),
                None => PickReport::refused(x as u32, y as u32, "no result".into()),
            },
            None => PickReport::refused(
                x.clamp(0, u32::MAX as i64) as u32,
                y.clamp(0, u32::MAX as i64) as u32,
                format!("pixel ({x}, {y}) lies outside the {w}x{h} view"),
            ),
        });
    }
    Ok(reports)
}

/// Renders one lit frame offscreen and reads it back.
pub fn screenshot(
    ctx: &VulkanContext,
    gpu: &GpuScene,
    camera: &CameraMatrices,
    (w, h): (u32, u32),
    selected_slot: Option<u32>,
    markers: Option<&Markers>,
) -> Result<image::RgbaImage, ViewerError> {
    let pass = LitPass::new(ctx, COLOR_FORMAT, vk::ImageLayout::TRANSFER_SRC_OPTIMAL)?;
    let target = Offscreen::new(ctx, &pass, vk::Extent2D { width: w, height: h })?;
    let mut style = FrameStyle::new(ctx, gpu)?;
    // SAFETY: a fresh style, never drawn with.
    unsafe { style.update(None, selected_slot, markers) }?;
    let viewport = vk_util::viewport(0, 0, w, h);
    // SAFETY: recording outside a render pass; everything drawn outlives the wait.
    ctx.run_once(|cmd| unsafe {
        pass.begin(cmd, target.framebuffer, target.extent);
        pass.draw_scene(cmd, gpu, &style, camera, viewport, markers);
        pass.end(cmd);
        target.record_copy(cmd);
    })?;
    // SAFETY: `run_once` waited for the copy.
    Ok(unsafe { target.read() }?)
}

impl From<vk::Result> for ViewerError {
    fn from(e: vk::Result) -> Self {
        ViewerError::Vulkan(e.into())
    }
}
