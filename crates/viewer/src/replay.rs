//! Headless replay of a scripted camera and cursor path (`viewer --headless --replay
//! SCRIPT.json`): frame by frame, the window's same-frame picking offscreen. Each frame records
//! its query set (the hover at the cursor, and the band when the frame has one), the lit pass
//! tinting from the picker's GPU results in the same command buffer, and a copy of what that
//! pass read; it also renders the frame's full-resolution ID image. One JSON record per frame
//! says what was highlighted (read back from the GPU results the lit pass used), what the same
//! frame's CPU results say, what the ID image has under the cursor, and the band's set.
//!
//! The script: `{"frames": [{"orbit": [dx, dy], "cursor": [x, y], "radius": r, "band": [x0, y0, x1, y1]}, ...]}`.
//! `orbit` turns the camera as a drag of that many pixels does in the window, before the
//! frame (default none); `radius` is the hover radius under the thin rule (default 0: a point);
//! `band` a rectangle (visible mode), both corners included.

use crate::camera::{depth_convention, OrbitCamera};
use crate::objects::ObjectTable;
use crate::outputs::{png, Staged};
use crate::rect_report::RectReport;
use crate::scene::Scene;
use crate::scene_upload::UploadedScene;
use crate::ViewerError;
use ash::vk;
use glam::UVec2;
use picking_vk::debug::{IdCopy, IdImage};
use picking_vk::gpu_results::ResultReaders;
use picking_vk::{ObjectId, PickQuery, PickRequest, Picker, PickerConfig, PixelRect, QueryResult, RectMode, Snap, Viewport};
use picking_vk_context::VulkanContext;
use picking_vk_host::{vk_util, FrameStyle, LitPass, Offscreen, PickSets, PickTint, COLOR_FORMAT};
use serde::Deserialize;
use serde_json::{json, Value};
use std::path::Path;

/// Frames a script may hold.
pub const MAX_REPLAY_FRAMES: usize = 100_000;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayFrame {
    #[serde(default)]
    pub orbit: [f32; 2],
    pub cursor: [u32; 2],
    #[serde(default)]
    pub radius: u32,
    #[serde(default)]
    pub band: Option<[u32; 4]>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Script {
    frames: Vec<ReplayFrame>,
}

/// Bytes a script may take: its most frames, written out at length (about 130 bytes each).
pub const MAX_SCRIPT_BYTES: u64 = 32 << 20;

/// Reads a replay script (at most [`MAX_SCRIPT_BYTES`]: a pipe or `/dev/zero` is cut there
/// and refused, not read until memory runs out). Orbits must be finite.
pub fn read_script(path: &Path) -> Result<Vec<ReplayFrame>, ViewerError> {
    let text = crate::capped_read::read_text(path, MAX_SCRIPT_BYTES, "replay script")?;
    let script: Script = serde_json::from_str(&text).map_err(|e| ViewerError::Input(format!("replay script {}: {e}", path.display())))?;
    if script.frames.is_empty() || script.frames.len() > MAX_REPLAY_FRAMES {
        return Err(ViewerError::Input(format!("replay script {}: 1 to {MAX_REPLAY_FRAMES} frames, not {}", path.display(), script.frames.len())));
    }
    // JSON numbers past f32 (1e39) read as infinite.
    if let Some((i, f)) = script.frames.iter().enumerate().find(|(_, f)| !f.orbit.iter().all(|a| a.is_finite())) {
        return Err(ViewerError::Input(format!("replay script {}: frame {i}'s orbit {:?} is not finite", path.display(), f.orbit)));
    }
    Ok(script.frames)
}

/// What the replay draws and picks with, made once.
struct Replayer<'a> {
    ctx: &'a VulkanContext,
    scene: &'a Scene,
    objects: &'a ObjectTable,
    uploaded: &'a UploadedScene,
    picker: Picker,
    lit: LitPass,
    target: Offscreen,
    style: FrameStyle,
    sets: PickSets,
    ids: IdImage,
    /// The first 64 bytes of the results (header and hit 0), copied after the lit pass.
    read: picking_vk_context::HostBuffer,
    size: (u32, u32),
}

/// Replays `frames` over `scene` at `size`; writes one record per frame to `json` and the last
/// frame's image to `screenshot`. Returns the records.
pub fn run(
    ctx: &VulkanContext,
    scene: &Scene,
    frames: &[ReplayFrame],
    size: (u32, u32),
    staged: &mut Staged,
    outputs: (Option<&Path>, Option<&Path>),
) -> Result<Vec<Value>, ViewerError> {
    let objects = ObjectTable::new(scene);
    let uploaded = UploadedScene::new(ctx, scene, &objects, 1)?;
    let mut camera = OrbitCamera::initial(scene);
    let depth = depth_convention(&camera.matrices(1.0).projection);
    let config = PickerConfig::default().with_frames_in_flight(1).with_max_radius(12).with_gpu_results(true).with_rect_entries(1 << 14);
    // SAFETY: the context's handles belong together and outlive the picker.
    let picker = unsafe { Picker::new(ctx.host_device(), config) }?;
    let lit = LitPass::new(ctx, COLOR_FORMAT, vk::ImageLayout::TRANSFER_SRC_OPTIMAL, depth)?;
    let target = Offscreen::new(ctx, &lit, vk::Extent2D { width: size.0, height: size.1 })?;
    let mut style = FrameStyle::new(ctx, &uploaded.gpu)?;
    // SAFETY: a fresh style, never drawn with. Highlights come from the GPU results alone.
    unsafe {
        style.update(None, None, None)?;
        style.write_pick_keys(&uploaded.pick_keys(&objects))?;
    }
    let sets = PickSets::new(ctx, lit.tint_layout(), &[picker.gpu_results(0)?])?;
    // SAFETY: the context's handles outlive the image.
    let ids = unsafe { IdImage::new(ctx.host_device(), size.0, size.1) }?;
    let read = ctx.host_buffer(64, vk::BufferUsageFlags::TRANSFER_DST)?;
    let mut r = Replayer { ctx, scene, objects: &objects, uploaded: &uploaded, picker, lit, target, style, sets, ids, read, size };
    let mut records = Vec::with_capacity(frames.len());
    for (i, frame) in frames.iter().enumerate() {
        camera.rotate(frame.orbit[0], frame.orbit[1]);
        records.push(r.frame(i, frame, &camera)?);
    }
    if let Some(path) = outputs.0 {
        let text = serde_json::to_string_pretty(&records).map_err(|e| ViewerError::Output(e.to_string()))?;
        staged.write(path, |out| out.write_all(text.as_bytes()))?;
    }
    if let Some(path) = outputs.1 {
        // SAFETY: the last frame's `run_once` waited for its copy.
        let bytes = png(&unsafe { r.target.read() }?)?;
        staged.write(path, |out| out.write_all(&bytes))?;
    }
    Ok(records)
}

impl Replayer<'_> {
    fn frame(&mut self, index: usize, frame: &ReplayFrame, camera: &OrbitCamera) -> Result<Value, ViewerError> {
        let (w, h) = self.size;
        let cursor = UVec2::from(frame.cursor);
        let matrices = camera.matrices(w as f32 / h as f32);
        let contributors = self.uploaded.gpu.contributors();
        // The lit pass's vertex shaders read the results, and so does the copy below.
        let readers = ResultReaders {
            stages: vk::PipelineStageFlags::VERTEX_SHADER | vk::PipelineStageFlags::TRANSFER,
            access: vk::AccessFlags::SHADER_READ | vk::AccessFlags::TRANSFER_READ,
        };
        let request = PickRequest::new(Viewport::full(w, h), matrices.view, matrices.projection)
            .with_depth(depth_convention(&matrices.projection))
            .with_contributors(&contributors)
            .with_result_readers(readers);
        let hover = match frame.radius {
            0 => PickQuery::Point(cursor),
            radius => PickQuery::Radius { pixel: cursor, radius, snap: Snap::Thin },
        };
        let band =
            frame.band.map(|[x0, y0, x1, y1]| PickQuery::Rect { rect: PixelRect::spanning(UVec2::new(x0, y0), UVec2::new(x1, y1)), mode: RectMode::Visible });
        let set: Vec<PickQuery> = std::iter::once(hover).chain(band).collect();
        self.style.tint = PickTint { set: self.sets.set(0), hover: true, band_query: band.map(|_| 1) };
        let draws = &self.uploaded.gpu.pick_draws;
        let (d, viewport) = (&self.ctx.device, vk_util::viewport(0, 0, w, h));
        let to_host = vk::MemoryBarrier::default().src_access_mask(vk::AccessFlags::TRANSFER_WRITE).dst_access_mask(vk::AccessFlags::HOST_READ);
        let results = self.picker.gpu_results(0)?.buffer;
        let recorded = self.ctx.run_once(|cmd| -> Result<(), ViewerError> {
            // SAFETY: (whole block) recording outside a render pass; everything recorded
            // outlives the wait in `run_once`; the slot was taken after the last frame.
            unsafe {
                self.picker.record(cmd, 0, &request, &set, draws)?;
                self.lit.begin(cmd, self.target.framebuffer(), self.target.extent());
                self.lit.draw_scene(cmd, &self.uploaded.gpu, 0, &self.style, &matrices, viewport, None);
                self.lit.end(cmd);
                self.target.record_copy(cmd);
                d.cmd_copy_buffer(cmd, results, self.read.buffer, &[vk::BufferCopy { src_offset: 0, dst_offset: 0, size: 64 }]);
                d.cmd_pipeline_barrier(cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::HOST, vk::DependencyFlags::empty(), &[to_host], &[], &[]);
                self.ids.record(cmd, &request, draws, None, IdCopy::Pixel(cursor))?;
            }
            Ok(())
        })?;
        recorded?;
        // SAFETY: `run_once` waited for the frame.
        let cpu = unsafe { self.picker.take_results(0) }?.ok_or_else(|| ViewerError::Output("the frame's results are missing".into()))?;
        // SAFETY: as above.
        let texel = unsafe { self.ids.read_pixel() }?;
        // SAFETY: as above; the barrier made the copy visible to the host.
        let words: Vec<u32> = unsafe { self.read.read_bytes() }?.chunks_exact(4).map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect();
        let frame_number = u64::from(words[0]) | u64::from(words[1]) << 32;
        // Hit 0 starts at word 8: ID (low, high), instance, draw index, pixel, depth, flags.
        let gpu_key = (words[15] & 1 != 0).then(|| (u64::from(words[8]) | u64::from(words[9]) << 32, words[10]));
        let cpu_key = cpu.pick(0).and_then(|p| p.hit.as_ref()).map(|h| (h.id.get(), h.instance.unwrap_or(u32::MAX)));
        let under = ObjectId::from_words(texel.id).map(|id| {
            // A draw of its own reports no instance; instanced objects and the billboards (the
            // host's contributor, not in the object table) report theirs.
            let instanced = !matches!(self.objects.get(id).map(|o| &o.kind), Some(crate::objects::ObjectKind::Node(_)));
            (id.get(), if instanced { texel.draw_instance[1] } else { u32::MAX })
        });
        let band_names: Vec<Value> = match cpu.results.get(1) {
            Some(QueryResult::Rect(rect)) => RectReport::new(rect, self.scene, self.objects).objects.iter().map(|o| json!(o.node_name)).collect(),
            _ => vec![],
        };
        Ok(json!({
            "frame": index,
            "results_frame": frame_number,
            "cursor": frame.cursor,
            "radius": frame.radius,
            "highlighted": self.describe(gpu_key),
            "cpu_hover": self.describe(cpu_key),
            "under_cursor": self.describe(under),
            "band": frame.band.map(|_| band_names),
        }))
    }

    /// An object and instance as the records name it: ID, instance (absent when not
    /// instanced) and node name.
    fn describe(&self, key: Option<(u64, u32)>) -> Value {
        let Some((id, instance)) = key else { return Value::Null };
        let instance = (instance != u32::MAX).then_some(instance);
        let name = ObjectId::new(id)
            .ok()
            .and_then(|i| self.objects.get(i))
            .and_then(|o| o.node(instance))
            .and_then(|n| self.scene.nodes.get(n))
            .and_then(|n| n.name.clone());
        json!({"id": id, "instance": instance, "node": name})
    }
}
