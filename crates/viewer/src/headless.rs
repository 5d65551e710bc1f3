//! Headless mode: render the scene offscreen with its camera, run every entry of the pick file
//! (points, radius queries, rectangles; see `pick_file`) as query sets of up to 64 a frame,
//! write one record per entry as JSON, and optionally a screenshot (first point highlighted)
//! and the ID view.

use crate::camera::{depth_convention, scene_camera, too_narrow_horizontally, OrbitCamera, MIN_FOV};
use crate::id_view;
use crate::objects::ObjectTable;
use crate::outputs::{png, Staged};
use crate::pick_file::PickEntry;
use crate::pick_report::PickReport;
use crate::rect_report::{mode_name, RectReport};
use crate::scene::{Lens, Scene};
use crate::scene_upload::UploadedScene;
use crate::ViewerError;
use ash::vk;
use glam::UVec2;
use picking_vk::debug::IdImage;
use picking_vk::{
    config::DetailStatus, config::PassRendering, DetailMode, PickError, PickQuery, PickRequest, Picker, PickerConfig, PixelRect, QueryResult, Snap, Viewport,
};
use picking_vk_context::{ContextOptions, VulkanContext};
use picking_vk_host::{vk_util, CameraMatrices, FrameStyle, GpuScene, LitPass, Markers, Offscreen, COLOR_FORMAT};
use serde_json::Value;
use std::path::PathBuf;

/// Queries one frame's set holds: the pick file is worked through in frames of this many.
const QUERIES_PER_FRAME: u32 = 64;
/// The largest pick radius a headless entry may ask for.
pub const MAX_RADIUS: u32 = 16;
/// Reports kept in memory for the terminal table.
pub const SHOWN_REPORTS: usize = 64;

pub struct HeadlessOptions {
    pub size: (u32, u32),
    pub picks: Vec<PickEntry>,
    pub json: Option<PathBuf>,
    pub screenshot: Option<PathBuf>,
    pub id_view: Option<PathBuf>,
    pub validation: bool,
    pub detail: bool,
    /// How the picker begins its passes.
    pub rendering: PassRendering,
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

/// Refuses a `--size` with a side of 0 or past 8192.
pub fn check_size((w, h): (u32, u32)) -> Result<(), ViewerError> {
    if w == 0 || h == 0 || w > 8192 || h > 8192 {
        return Err(ViewerError::Input(format!("--size {w}x{h}: each side must be 1..=8192")));
    }
    Ok(())
}

pub fn run(scene: &Scene, options: &HeadlessOptions) -> Result<HeadlessOutcome, ViewerError> {
    let (w, h) = options.size;
    check_size((w, h))?;
    // A camera without its own aspectRatio takes the view's: a tall enough view narrows its
    // horizontal field past what the f32 pipeline aims (as the loader refuses for a file's).
    if let Some(Lens::Perspective { yfov, aspect: None }) = scene.camera.as_ref().map(|d| d.lens) {
        if let Some(xfov) = too_narrow_horizontally(yfov, w as f32 / h as f32) {
            return Err(ViewerError::Input(format!(
                "--size {w}x{h}: the scene camera (yfov {yfov:e}, no aspectRatio) would see a horizontal field of {xfov:e} radians, below {MIN_FOV:e}: the f32 pipeline cannot aim a pixel that narrow"
            )));
        }
    }
    let ctx = VulkanContext::new(&ContextOptions { validation: options.validation, want_detail: options.detail, ..Default::default() })?;
    let mut staged = Staged::default();
    let outcome = render_and_pick(&ctx, scene, options, &mut staged);
    let validation_messages = ctx.take_validation_messages();
    let mut outcome = outcome?;
    // Every output succeeded: move them all into place (a failure above left none behind). A
    // run with validation messages fails (exit 3): its outputs are dropped too.
    if validation_messages.is_empty() {
        staged.commit()?;
    }
    outcome.device = ctx.device_name.clone();
    outcome.validation_messages = validation_messages;
    Ok(outcome)
}

fn render_and_pick(ctx: &VulkanContext, scene: &Scene, options: &HeadlessOptions, staged: &mut Staged) -> Result<HeadlessOutcome, ViewerError> {
    let (w, h) = options.size;
    let objects = ObjectTable::new(scene);
    let uploaded = UploadedScene::new(ctx, scene, &objects, 1)?;
    let gpu = &uploaded.gpu;
    let camera = headless_camera(scene, w as f32 / h as f32);
    let viewport = Viewport::full(w, h);
    let detail = if options.detail { DetailMode::IfEnabled } else { DetailMode::Off };
    let config = PickerConfig::default()
        .with_frames_in_flight(1)
        .with_detail(detail)
        .with_max_queries(QUERIES_PER_FRAME)
        .with_max_radius(MAX_RADIUS)
        .with_rect_entries(1 << 16)
        .with_rendering(options.rendering);
    // SAFETY: the context's handles belong together and outlive the picker.
    let mut picker = unsafe { Picker::new(ctx.host_device(), config) }?;
    let detail_status = picker.detail_status().clone();
    let detail_active = detail_status == DetailStatus::Active;
    let mut outcome = HeadlessOutcome { shown: vec![], picks: 0, hits: 0, detail: detail_status, device: String::new(), validation_messages: vec![] };
    let mut first: Option<PickReport> = None;
    let frame = FrameInputs { ctx, size: (w, h), camera: &camera, viewport, gpu, scene, objects: &objects, detail_active };

    // The JSON records are streamed frame by frame into the staged file.
    let mut write_picks = |out: &mut dyn std::io::Write| -> Result<(), ViewerError> {
        let io = |e: std::io::Error| ViewerError::Output(e.to_string());
        out.write_all(b"[").map_err(io)?;
        for chunk in options.picks.chunks(QUERIES_PER_FRAME as usize) {
            for (i, record) in pick_frame(&frame, &mut picker, chunk)?.into_iter().enumerate() {
                let sep: &[u8] = if outcome.picks == 0 && i == 0 { b"\n  " } else { b",\n  " };
                out.write_all(sep).map_err(io)?;
                serde_json::to_writer(&mut *out, &record.json).map_err(|e| ViewerError::Output(e.to_string()))?;
                if let Some(report) = record.point {
                    outcome.hits += usize::from(report.hit.is_some());
                    first.get_or_insert_with(|| report.clone());
                    if outcome.shown.len() < SHOWN_REPORTS {
                        outcome.shown.push(report);
                    }
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
        let contributors = gpu.contributors();
        let request =
            PickRequest::new(viewport, camera.view, camera.projection).with_depth(depth_convention(&camera.projection)).with_contributors(&contributors);
        // SAFETY: as for the picks.
        ctx.run_once(|cmd| unsafe { ids.record(cmd, &request, &gpu.pick_draws, None, picking_vk::debug::IdCopy::Whole) })??;
        // SAFETY: `run_once` waited.
        let texels = unsafe { ids.read() }?;
        let img = id_view::image(&texels, w, h).ok_or_else(|| ViewerError::Output("ID view size mismatch".into()))?;
        let bytes = png(&img)?;
        staged.write(path, |out| out.write_all(&bytes))?;
    }
    drop(picker);
    Ok(outcome)
}

/// What every frame of picks shares.
struct FrameInputs<'a> {
    ctx: &'a VulkanContext,
    size: (u32, u32),
    camera: &'a CameraMatrices,
    viewport: Viewport,
    gpu: &'a GpuScene,
    scene: &'a Scene,
    objects: &'a ObjectTable,
    detail_active: bool,
}

/// One entry's record; `point` for point and radius entries (the terminal table, the
/// screenshot's highlight).
struct Record {
    json: Value,
    point: Option<PickReport>,
}

fn outside(x: i64, y: i64, (w, h): (u32, u32)) -> String {
    format!("pixel ({x}, {y}) lies outside the {w}x{h} view")
}

/// The query an entry asks for, or why it cannot run.
fn query_of(entry: &PickEntry, (w, h): (u32, u32)) -> Result<PickQuery, String> {
    let inside = |x: i64, y: i64| x >= 0 && y >= 0 && x < i64::from(w) && y < i64::from(h);
    match *entry {
        PickEntry::Point { x, y } if inside(x, y) => Ok(PickQuery::Point(UVec2::new(x as u32, y as u32))),
        PickEntry::Point { x, y } => Err(outside(x, y, (w, h))),
        PickEntry::Radius { radius, .. } if !(0..=i64::from(MAX_RADIUS)).contains(&radius) => Err(format!("radius {radius} must lie in 0..={MAX_RADIUS}")),
        PickEntry::Radius { x, y, radius, snap } if inside(x, y) => {
            Ok(PickQuery::Radius { pixel: UVec2::new(x as u32, y as u32), radius: radius as u32, snap })
        }
        PickEntry::Radius { x, y, .. } => Err(outside(x, y, (w, h))),
        PickEntry::Rect { rect: [x0, y0, x1, y1], mode } => {
            if x1 <= x0 || y1 <= y0 {
                return Err(format!("rectangle [{x0}, {y0}, {x1}, {y1}] is empty (it is half-open: x0 < x1, y0 < y1)"));
            }
            let clip = |v: i64, max: u32| v.clamp(0, i64::from(max)) as u32;
            let (min, max) = (UVec2::new(clip(x0, w), clip(y0, h)), UVec2::new(clip(x1, w), clip(y1, h)));
            if min.x >= max.x || min.y >= max.y {
                return Err(format!("rectangle [{x0}, {y0}, {x1}, {y1}] lies outside the {w}x{h} view"));
            }
            Ok(PickQuery::Rect { rect: PixelRect::new(min, max), mode })
        }
        PickEntry::Malformed(ref why) => Err(why.clone()),
    }
}

/// The record of an entry that did not run.
fn refused(entry: &PickEntry, why: String, detail_active: bool) -> Record {
    // The record echoes the pixel as the file gave it (-1 stays -1), never a clamped pixel
    // that could pass for a real one.
    let as_given = |x: i64, y: i64| {
        let mut json = PickReport::refused(0, 0, why.clone()).to_json(detail_active);
        (json["x"], json["y"]) = (x.into(), y.into());
        json
    };
    let json = match *entry {
        PickEntry::Point { x, y } => as_given(x, y),
        PickEntry::Radius { x, y, radius, snap } => {
            let mut json = as_given(x, y);
            json["radius"] = radius.into();
            json["snap"] = snap_name(snap).into();
            json["hit_pixel"] = Value::Null;
            json
        }
        PickEntry::Rect { rect, mode } => serde_json::json!({ "rect": rect, "mode": mode_name(mode), "objects": [], "error": why }),
        PickEntry::Malformed(_) => serde_json::json!({ "error": why }),
    };
    Record { json, point: None }
}

/// A snapping rule as pick files and records name it.
fn snap_name(snap: Snap) -> &'static str {
    match snap {
        Snap::Nearest => "nearest",
        Snap::Thin => "thin",
    }
}

/// The record of a query's result. A radius query's `x`, `y` are its cursor, as the entry
/// gave it; the pixel it answers for is `hit_pixel`.
fn record_of(frame: &FrameInputs<'_>, query: &PickQuery, result: &QueryResult) -> Record {
    match result {
        QueryResult::Point(r) => {
            let report = PickReport::new(r, frame.scene, frame.objects);
            Record { json: report.to_json(frame.detail_active), point: Some(report) }
        }
        QueryResult::Radius { result, radius, snap, hit_pixel } => {
            let report = PickReport::new(result, frame.scene, frame.objects);
            let mut json = report.to_json(frame.detail_active);
            if let PickQuery::Radius { pixel, .. } = query {
                (json["x"], json["y"]) = (pixel.x.into(), pixel.y.into());
            }
            json["radius"] = (*radius).into();
            json["snap"] = snap_name(*snap).into();
            json["hit_pixel"] = hit_pixel.map_or(Value::Null, |p| serde_json::json!([p.x, p.y]));
            Record { json, point: Some(report) }
        }
        QueryResult::Rect(r) => Record { json: RectReport::new(r, frame.scene, frame.objects).to_json(), point: None },
    }
}

/// Records `queries` as one set in one command buffer and takes their results; the
/// picker's refusal is returned inside (device loss apart).
fn run_set(frame: &FrameInputs<'_>, picker: &mut Picker, queries: &[PickQuery]) -> Result<Result<Vec<QueryResult>, PickError>, ViewerError> {
    let contributors = frame.gpu.contributors();
    let request = PickRequest::new(frame.viewport, frame.camera.view, frame.camera.projection)
        .with_depth(depth_convention(&frame.camera.projection))
        .with_contributors(&contributors);
    let mut recorded = Ok(());
    frame.ctx.run_once(|cmd| {
        // SAFETY: `cmd` is recording outside a render pass; the scene's buffers outlive the
        // wait in `run_once`. A refused set records nothing.
        recorded = unsafe { picker.record(cmd, 0, &request, queries, &frame.gpu.pick_draws) }.map(|_| ());
    })?;
    match recorded {
        Err(PickError::DeviceLost) => return Err(PickError::DeviceLost.into()),
        Err(e) => return Ok(Err(e)),
        Ok(()) => {}
    }
    // SAFETY: `run_once` waited for the command buffer.
    let results = unsafe { picker.take_results(0) }?.ok_or_else(|| ViewerError::Output("no results for a recorded query set".into()))?;
    Ok(Ok(results.results))
}

/// Runs one frame of entries (at most [`QUERIES_PER_FRAME`]): the valid ones as one query
/// set; if the picker refuses the set, each query alone, so only the faulty entries fail.
fn pick_frame(frame: &FrameInputs<'_>, picker: &mut Picker, entries: &[PickEntry]) -> Result<Vec<Record>, ViewerError> {
    let checked: Vec<Result<PickQuery, String>> = entries.iter().map(|e| query_of(e, frame.size)).collect();
    let queries: Vec<PickQuery> = checked.iter().filter_map(|q| q.as_ref().ok().copied()).collect();
    let mut results: Vec<Result<QueryResult, String>> = vec![];
    if !queries.is_empty() {
        match run_set(frame, picker, &queries)? {
            Ok(all) => results.extend(all.into_iter().map(Ok)),
            Err(_) => {
                for q in &queries {
                    results.push(match run_set(frame, picker, std::slice::from_ref(q))? {
                        Ok(mut one) if !one.is_empty() => Ok(one.remove(0)),
                        Ok(_) => Err("no result".into()),
                        Err(e) => Err(e.to_string()),
                    });
                }
            }
        }
    }
    let mut results = results.into_iter();
    Ok(entries
        .iter()
        .zip(checked)
        .map(|(entry, check)| match check.map(|query| (query, results.next())) {
            Err(why) | Ok((_, Some(Err(why)))) => refused(entry, why, frame.detail_active),
            Ok((query, Some(Ok(result)))) => record_of(frame, &query, &result),
            Ok((_, None)) => refused(entry, "no result".into(), frame.detail_active),
        })
        .collect())
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
    let pass = LitPass::new(ctx, COLOR_FORMAT, vk::ImageLayout::TRANSFER_SRC_OPTIMAL, depth_convention(&camera.projection))?;
    let target = Offscreen::new(ctx, &pass, vk::Extent2D { width: w, height: h })?;
    let mut style = FrameStyle::new(ctx, gpu)?;
    // SAFETY: a fresh style, never drawn with.
    unsafe { style.update(None, selected_slot, markers) }?;
    let viewport = vk_util::viewport(0, 0, w, h);
    // SAFETY: recording outside a render pass; everything drawn outlives the wait.
    ctx.run_once(|cmd| unsafe {
        pass.begin(cmd, target.framebuffer(), target.extent());
        pass.draw_scene(cmd, gpu, 0, &style, camera, viewport, markers);
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
