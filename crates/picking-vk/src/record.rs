//! Recording the pick pass: validation first (so an error records nothing), then one render
//! pass over the admitted draws. Shared by the 1x1 picker and the full-size [`crate::IdImage`].

use crate::cull::Plan;
use crate::draw::{PickDraw, Triangles};
use crate::error::PickError;
use crate::pass::{PassLayout, PassTargets};
use crate::pipeline::{PickPush, PipelineKey, Pipelines};
use crate::request::PickRequest;
use crate::resolve::DrawSnapshot;
use crate::view_math::CameraSnapshot;
use ash::vk;

/// How the host's viewport maps onto the pass's render target.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Framing {
    /// A 1x1 target holding only the request's pixel: the host's viewport is shifted so that
    /// pixel lands on texel (0, 0). Rasterization is the host's, translated by whole pixels.
    PixelOnly,
    /// A target as large as the host's framebuffer, optionally scissored to the request's pixel.
    FullView { scissor_to_pixel: bool },
}

fn pipeline_key(draw: &PickDraw) -> PipelineKey {
    PipelineKey { position_stride: draw.positions.stride, instance_stride: draw.instances.map(|i| i.stride) }
}

/// Validates every planned draw and builds any pipeline the frame needs, before anything is
/// recorded. Draws culled away this frame are neither drawn nor checked.
pub(crate) fn prepare(pipelines: &mut Pipelines, draws: &[PickDraw], plan: &Plan) -> Result<(), PickError> {
    for entry in &plan.entries {
        let index = entry.draw as usize;
        let draw = draws.get(index).ok_or(PickError::InvalidDraw { index, reason: "planned draw is missing".into() })?;
        draw.validate(index)?;
        if pipelines.cached(pipeline_key(draw)).is_none() {
            pipelines.get(pipeline_key(draw))?;
        }
    }
    Ok(())
}

/// What a recorded pass drew.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PassStats {
    /// Draws recorded into the pass.
    pub draws_recorded: u32,
    /// Draws left out by `pickable`, the filter or a whole-object ignore.
    pub draws_skipped: u32,
    /// Draws whose bounds the pick ray missed (culling on).
    pub draws_culled: u32,
    /// Instances of recorded draws whose bounds the pick ray missed.
    pub instances_culled: u32,
}

pub(crate) struct PassRecording<'a> {
    pub device: &'a ash::Device,
    pub cmd: vk::CommandBuffer,
    pub render_pass: vk::RenderPass,
    pub layout: PassLayout,
    pub targets: &'a PassTargets,
    pub pipelines: &'a Pipelines,
    pub camera: &'a CameraSnapshot,
    pub framing: Framing,
}

impl PassRecording<'_> {
    /// The host's viewport placed on this pass's target, and the scissor.
    fn viewport_and_scissor(&self, request: &PickRequest<'_>) -> (vk::Viewport, vk::Rect2D) {
        let vp = request.viewport;
        let pixel_rect = |x: i32, y: i32| vk::Rect2D { offset: vk::Offset2D { x, y }, extent: vk::Extent2D { width: 1, height: 1 } };
        match self.framing {
            // Shift by whole pixels so the requested pixel lands on texel (0, 0).
            Framing::PixelOnly => (
                vk::Viewport {
                    x: vp.x - request.pixel.x as f32,
                    y: vp.y - request.pixel.y as f32,
                    width: vp.width,
                    height: vp.height,
                    min_depth: vp.min_depth,
                    max_depth: vp.max_depth,
                },
                pixel_rect(0, 0),
            ),
            Framing::FullView { scissor_to_pixel } => {
                let viewport = vk::Viewport { x: vp.x, y: vp.y, width: vp.width, height: vp.height, min_depth: vp.min_depth, max_depth: vp.max_depth };
                let scissor = if scissor_to_pixel {
                    pixel_rect(request.pixel.x as i32, request.pixel.y as i32)
                } else {
                    vk::Rect2D { offset: vk::Offset2D::default(), extent: self.targets.extent }
                };
                (viewport, scissor)
            }
        }
    }

    /// Records the render pass over the planned draws. `prepare` must have succeeded for this
    /// plan. Appends one snapshot per recorded draw; the fragment shader writes its index.
    ///
    /// # Safety
    /// `cmd` is in the recording state outside any render pass; every buffer the draws name is
    /// a live buffer of this device with the usage the draw types document.
    pub unsafe fn record(&self, request: &PickRequest<'_>, draws: &[PickDraw], plan: &Plan, snapshots: &mut Vec<DrawSnapshot>) -> PassStats {
        let d = self.device;
        let cmd = self.cmd;
        let clear = self.layout.clear_values();
        let begin = vk::RenderPassBeginInfo::default()
            .render_pass(self.render_pass)
            .framebuffer(self.targets.framebuffer)
            .render_area(vk::Rect2D { offset: vk::Offset2D::default(), extent: self.targets.extent })
            .clear_values(&clear[..self.layout.attachment_count()]);
        let (viewport, scissor) = self.viewport_and_scissor(request);
        // SAFETY: (whole block) the caller guarantees `cmd` is recording outside a render pass
        // and that the draws' buffers are live; render pass, framebuffer and pipelines belong
        // to this device and stay alive until the host's command buffer completes.
        unsafe {
            d.cmd_begin_render_pass(cmd, &begin, vk::SubpassContents::INLINE);
            d.cmd_set_viewport(cmd, 0, &[viewport]);
            d.cmd_set_scissor(cmd, 0, &[scissor]);
        }
        let mut stats = PassStats {
            draws_recorded: 0,
            draws_skipped: plan.stats.draws_skipped,
            draws_culled: plan.stats.draws_culled,
            instances_culled: plan.stats.instances_culled,
        };
        let mut bound: Option<vk::Pipeline> = None;
        let mut last: Option<(PipelineKey, vk::Pipeline)> = None;
        for entry in &plan.entries {
            let Some(draw) = draws.get(entry.draw as usize) else { continue };
            let key = pipeline_key(draw);
            // Consecutive draws mostly share a layout: skip the hash lookup then.
            let cached = match last {
                Some((k, p)) if k == key => Some(p),
                _ => self.pipelines.cached(key),
            };
            let Some(pipeline) = cached else {
                // `prepare` built every key; a miss means it was not called. Skip rather than panic.
                log::error!("picking-vk: pipeline missing for {key:?}; was prepare() skipped?");
                continue;
            };
            last = Some((key, pipeline));
            let draw_index = snapshots.len() as u32;
            snapshots.push(DrawSnapshot::of(draw));
            stats.draws_recorded += 1;
            let push = PickPush {
                model_view_projection: (self.camera.view_projection * draw.model.as_dmat4()).as_mat4(),
                object_id: draw.id.to_words(),
                draw_index,
                first_instance: draw.instances.map_or(0, |i| i.first),
            };
            // SAFETY: as above; offsets and counts were validated against the buffer ranges.
            unsafe {
                if bound != Some(pipeline) {
                    d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, pipeline);
                    bound = Some(pipeline);
                }
                d.cmd_push_constants(cmd, self.pipelines.layout, vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT, 0, &push.to_bytes());
                d.cmd_bind_vertex_buffers(cmd, 0, &[draw.positions.range.buffer], &[draw.positions.range.offset]);
                if let Some(inst) = draw.instances {
                    d.cmd_bind_vertex_buffers(cmd, 1, &[inst.range.buffer], &[inst.range.offset]);
                }
                if let Triangles::Indexed { range, width, .. } = draw.triangles {
                    d.cmd_bind_index_buffer(cmd, range.buffer, range.offset, width.vk());
                }
            }
            let base = draw.instances.map_or(0, |i| i.first);
            let ranges = &plan.ranges[entry.first_range as usize..(entry.first_range + entry.range_count) as usize];
            // Ignored and culled instances are cut out of the draw: they neither hit nor occlude.
            for &(start, count) in ranges {
                // SAFETY: as above.
                unsafe {
                    match draw.triangles {
                        Triangles::NonIndexed { first_vertex, vertex_count } => d.cmd_draw(cmd, vertex_count, count, first_vertex, base + start),
                        Triangles::Indexed { first_index, index_count, vertex_offset, .. } => {
                            d.cmd_draw_indexed(cmd, index_count, count, first_index, vertex_offset, base + start)
                        }
                    }
                }
            }
        }
        // SAFETY: as above; the render pass begun here ends here.
        unsafe { d.cmd_end_render_pass(cmd) };
        stats
    }
}
