//! Billboards: camera-facing squares drawn by the host's own shaders, in the lit pass and,
//! through picking-vk's contributor seam, in the pick pass. The picker cannot draw them from
//! buffers (the vertex shader builds each square from its centre and the camera's axes), so
//! [`Billboards`] implements [`PickContributor`]: it reserves an ID range (billboard `i` is ID
//! `first_id + i`, instance `i`), builds a pick pipeline for whatever pass the picker names,
//! and draws into it with the contributor GLSL's `pick_write`. Each frame in flight may place
//! them apart ([`Billboards::with_regions`], [`Billboards::place`]): an animation moves them.

use crate::vk_util::{self, PipelineDesc, RenderTarget};
use ash::vk;
use glam::{Mat4, Vec3, Vec4};
use picking_vk::{contributor::Admission, contributor::ContributorContext, contributor::ContributorTarget, contributor::PickContributor};
use picking_vk_context::{ContextError, HostBuffer, VulkanContext};
use std::ops::Range;
use std::sync::Mutex;

const VERT: &[u8] = include_bytes!("../spirv/billboard.vert.spv");
const LIT_FRAG: &[u8] = include_bytes!("../spirv/billboard_lit.frag.spv");
const PICK_FRAG: &[u8] = include_bytes!("../spirv/billboard_pick.frag.spv");
const PICK_DETAIL_FRAG: &[u8] = include_bytes!("../spirv/billboard_pick_detail.frag.spv");
/// `BillboardPush` in `shaders/billboard.glsl`.
const PUSH_BYTES: usize = 108;

/// One billboard: a square `size` wide around `centre`, in `color`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Billboard {
    pub centre: Vec3,
    pub size: f32,
    pub color: [f32; 4],
}

impl Billboard {
    /// Its two triangles in world space for a camera with world-to-view `view` (as the vertex
    /// shader builds them), for CPU oracles.
    pub fn triangles(&self, view: Mat4) -> [[Vec3; 3]; 2] {
        let (right, up) = axes(view);
        let h = 0.5 * self.size;
        let corner = |x: f32, y: f32| self.centre + right * (x * h) + up * (y * h);
        [[corner(-1.0, -1.0), corner(1.0, -1.0), corner(1.0, 1.0)], [corner(-1.0, -1.0), corner(1.0, 1.0), corner(-1.0, 1.0)]]
    }
}

/// A billboard's instance record: centre, size, colour.
fn record(b: &Billboard) -> [f32; 8] {
    [b.centre.x, b.centre.y, b.centre.z, b.size, b.color[0], b.color[1], b.color[2], b.color[3]]
}

/// The camera's world-space right and up axes.
fn axes(view: Mat4) -> (Vec3, Vec3) {
    let to_world = view.inverse();
    (to_world.x_axis.truncate().normalize_or(Vec3::X), to_world.y_axis.truncate().normalize_or(Vec3::Y))
}

/// What a pipeline was built for: render passes by their attachments' formats (any
/// compatible pass will do), dynamic rendering by its formats.
#[derive(Clone, Debug, PartialEq, Eq)]
enum TargetKey {
    /// The lit pass's render pass (one, for the scene's life).
    Lit(vk::RenderPass),
    /// A pick render pass with these formats, and the first one seen (to build with).
    PickPass(Vec<vk::Format>, vk::Format),
    Formats(Vec<vk::Format>, vk::Format),
}

/// Which shaders a pipeline runs: the lit pass's colour, or the pick outputs (with or without
/// the detail attachment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flavour {
    Lit,
    Pick { detail: bool },
}

/// A pipeline's pass, shaders and depth test.
type PipelineKey = (TargetKey, Flavour, vk::CompareOp);

/// Billboards on the GPU, with their pipelines (built on first use per pass, kept until
/// dropped).
pub struct Billboards {
    device: ash::Device,
    /// Per region, a record (centre, size, colour) per billboard.
    instances: HostBuffer,
    /// The billboards as last placed (their sizes and colours never change).
    boards: Vec<Billboard>,
    /// The region draws read: the one last placed.
    region: u32,
    regions: u32,
    count: u32,
    ids: Range<u64>,
    layout: vk::PipelineLayout,
    /// Behind a lock: the picker records through `&self`.
    pipelines: Mutex<Vec<(PipelineKey, vk::Pipeline)>>,
}

impl Billboards {
    /// Uploads `billboards`, with IDs from `first_id`.
    pub fn new(ctx: &VulkanContext, billboards: &[Billboard], first_id: u64) -> Result<Self, ContextError> {
        Self::with_regions(ctx, billboards, first_id, 1)
    }

    /// As [`Billboards::new`], with `regions` places for them (one per frame in flight), each
    /// set by [`Billboards::place`]; all start where `billboards` says, and draws read region 0.
    pub fn with_regions(ctx: &VulkanContext, billboards: &[Billboard], first_id: u64, regions: u32) -> Result<Self, ContextError> {
        let regions = regions.max(1);
        let data: Vec<[f32; 8]> = (0..regions).flat_map(|_| billboards.iter().map(record)).collect();
        let instances = ctx.upload(&data, vk::BufferUsageFlags::VERTEX_BUFFER)?;
        let ranges = [vk::PushConstantRange::default().stage_flags(vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT).size(PUSH_BYTES as u32)];
        // SAFETY: valid create info on a live device.
        let layout = unsafe { ctx.device.create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default().push_constant_ranges(&ranges), None) }?;
        Ok(Billboards {
            device: ctx.device.clone(),
            instances,
            boards: billboards.to_vec(),
            region: 0,
            regions,
            count: billboards.len() as u32,
            ids: first_id..first_id + billboards.len() as u64,
            layout,
            pipelines: Mutex::new(vec![]),
        })
    }

    /// The pipeline for `key`, built on first use (`colors` attachments, for `render_pass`
    /// when the key is a render pass's); null if it fails.
    fn cached(&self, key: PipelineKey, colors: usize, render_pass: vk::RenderPass) -> vk::Pipeline {
        let Ok(mut cache) = self.pipelines.lock() else { return vk::Pipeline::null() };
        if let Some((_, p)) = cache.iter().find(|(k, _)| *k == key) {
            return *p;
        }
        let fragment = match key.1 {
            Flavour::Lit => LIT_FRAG,
            Flavour::Pick { detail: false } => PICK_FRAG,
            Flavour::Pick { detail: true } => PICK_DETAIL_FRAG,
        };
        match self.pipeline(&key.0, render_pass, fragment, colors, key.2) {
            Ok(p) => {
                cache.push((key, p));
                p
            }
            Err(e) => {
                log::error!("billboards: no pipeline: {e}");
                vk::Pipeline::null()
            }
        }
    }

    /// The billboards' IDs.
    pub fn ids(&self) -> Range<u64> {
        self.ids.clone()
    }

    /// Moves billboard `i` to `centres[i]` (those past its end stay) in region `region`, which
    /// later draws and picks read.
    ///
    /// # Safety
    /// No submitted work that reads region `region` is still running.
    pub unsafe fn place(&mut self, region: u32, centres: &[Vec3]) -> Result<(), ContextError> {
        if region >= self.regions {
            return Err(ContextError::Invalid(format!("billboard region {region} of {}", self.regions)));
        }
        for (b, &centre) in self.boards.iter_mut().zip(centres) {
            b.centre = centre;
        }
        let data: Vec<[f32; 8]> = self.boards.iter().map(record).collect();
        // SAFETY: the caller's contract; the write lies in the region.
        unsafe { self.instances.write(self.region_offset(region), &data) }?;
        self.region = region;
        Ok(())
    }

    /// Where region `region`'s records start in the instance buffer.
    fn region_offset(&self, region: u32) -> u64 {
        u64::from(region) * u64::from(self.count) * std::mem::size_of::<[f32; 8]>() as u64
    }

    /// Draws the billboards in a lit pass: subpass 0 of `render_pass` (one colour attachment
    /// and depth, tested with `compare`), viewport and scissor set.
    ///
    /// # Safety
    /// `cmd` is a command buffer of this device, recording inside `render_pass`; the
    /// billboards outlive the command buffer's execution. Pipelines are kept by the render
    /// pass's handle: a render pass destroyed since an earlier `draw` and made again (the
    /// same handle value, perhaps) is compatible with the one it replaced (same formats), or
    /// the billboards are made anew.
    pub unsafe fn draw(&self, cmd: vk::CommandBuffer, render_pass: vk::RenderPass, compare: vk::CompareOp, view: Mat4, view_projection: Mat4) {
        let pipeline = self.cached((TargetKey::Lit(render_pass), Flavour::Lit, compare), 1, render_pass);
        // SAFETY: the caller's contract; `pipeline` was built for `render_pass`.
        unsafe { self.record_with(cmd, pipeline, view, view_projection, 0, &[(0, self.count)]) };
    }

    /// The runs (first, count) of billboards `admission` admits (billboard `i` is ID
    /// `first_id + i`, instance `i`), in order.
    fn admitted_runs(&self, admission: &Admission<'_>) -> Vec<(u32, u32)> {
        if admission.admits_all() {
            return vec![(0, self.count)];
        }
        let mut runs: Vec<(u32, u32)> = vec![];
        for i in (0..self.count).filter(|&i| admission.admits(self.ids.start + u64::from(i), i)) {
            match runs.last_mut() {
                Some((first, count)) if *first + *count == i => *count += 1,
                _ => runs.push((i, 1)),
            }
        }
        runs
    }

    /// Draws the billboards of `runs`.
    ///
    /// # Safety
    /// As [`Billboards::draw`], inside a pass `pipeline` was built for.
    unsafe fn record_with(&self, cmd: vk::CommandBuffer, pipeline: vk::Pipeline, view: Mat4, view_projection: Mat4, draw_index: u32, runs: &[(u32, u32)]) {
        if runs.is_empty() || pipeline == vk::Pipeline::null() {
            return;
        }
        let (right, up) = axes(view);
        let id = [self.ids.start as u32, (self.ids.start >> 32) as u32];
        let words = view_projection
            .to_cols_array()
            .into_iter()
            .map(f32::to_bits)
            .chain(right.extend(0.0).to_array().map(f32::to_bits))
            .chain(Vec4::from((up, 0.0)).to_array().map(f32::to_bits))
            .chain([id[0], id[1], draw_index]);
        let mut push = [0u8; PUSH_BYTES];
        for (chunk, w) in push.chunks_exact_mut(4).zip(words) {
            chunk.copy_from_slice(&w.to_ne_bytes());
        }
        let d = &self.device;
        // SAFETY: the caller's contract; the buffer and pipeline are live.
        unsafe {
            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, pipeline);
            d.cmd_push_constants(cmd, self.layout, vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT, 0, &push);
            d.cmd_bind_vertex_buffers(cmd, 0, &[self.instances.buffer], &[self.region_offset(self.region)]);
            for &(first, count) in runs {
                // The first instance offsets both the instance data and gl_InstanceIndex,
                // from which the shader forms the ID.
                d.cmd_draw(cmd, 6, count, 0, first);
            }
        }
    }

    /// A pipeline for `target` (through `render_pass` when it is a render pass's) with
    /// `colors` attachments, depth-tested with `compare`.
    fn pipeline(
        &self,
        target: &TargetKey,
        render_pass: vk::RenderPass,
        fragment: &[u8],
        colors: usize,
        compare: vk::CompareOp,
    ) -> Result<vk::Pipeline, ContextError> {
        let bindings = [vk::VertexInputBindingDescription { binding: 0, stride: 32, input_rate: vk::VertexInputRate::INSTANCE }];
        let attributes = [
            vk::VertexInputAttributeDescription { location: 0, binding: 0, format: vk::Format::R32G32B32A32_SFLOAT, offset: 0 },
            vk::VertexInputAttributeDescription { location: 1, binding: 0, format: vk::Format::R32G32B32A32_SFLOAT, offset: 16 },
        ];
        let target = match target {
            TargetKey::Lit(_) | TargetKey::PickPass(..) => RenderTarget::Pass { render_pass, colors },
            TargetKey::Formats(colors, depth) => RenderTarget::Formats { colors, depth: *depth },
        };
        let desc = PipelineDesc {
            vertex: VERT,
            fragment,
            bindings: &bindings,
            attributes: &attributes,
            depth_compare: Some(compare),
            cull_mode: vk::CullModeFlags::NONE,
            front_face: vk::FrontFace::COUNTER_CLOCKWISE,
            layout: self.layout,
            target,
            topology: vk::PrimitiveTopology::TRIANGLE_LIST,
            point_size: 1.0,
        };
        // SAFETY: the crate's billboard shaders, which match this layout and vertex input; the
        // target is the live pass (or the formats) `draw`'s caller draws into, on this device.
        Ok(unsafe { vk_util::graphics_pipeline(&self.device, &desc) }?)
    }
}

// SAFETY: `record` binds its own pipeline (built for the target it is handed), vertex buffer
// and push constants and nothing else; the buffer lives as long as `self`, which the host
// keeps past the frame; `ids` is a field set once.
unsafe impl PickContributor for Billboards {
    fn ids(&self) -> Range<u64> {
        self.ids.clone()
    }

    unsafe fn record(&self, ctx: &ContributorContext<'_>) {
        let (target, colors, render_pass) = match ctx.target {
            ContributorTarget::RenderPass { render_pass, colors, depth } => (TargetKey::PickPass(colors.to_vec(), depth), colors.len(), render_pass),
            ContributorTarget::Formats { colors, depth } => (TargetKey::Formats(colors.to_vec(), depth), colors.len(), vk::RenderPass::null()),
        };
        let pipeline = self.cached((target, Flavour::Pick { detail: ctx.detail }, ctx.depth_compare), colors, render_pass);
        // SAFETY: the picker's contract (inside its pass, for which `pipeline` was built);
        // the buffer lives as long as `self`, which the host keeps past the frame.
        unsafe { self.record_with(ctx.command_buffer, pipeline, ctx.view, ctx.view_projection, ctx.draw_index, &self.admitted_runs(&ctx.admission)) };
    }
}

impl Drop for Billboards {
    fn drop(&mut self) {
        // SAFETY: owners drop the billboards once the GPU is done with them; null is ignored.
        unsafe {
            if let Ok(cache) = self.pipelines.get_mut() {
                for (_, p) in cache.drain(..) {
                    self.device.destroy_pipeline(p, None);
                }
            }
            self.device.destroy_pipeline_layout(self.layout, None);
        }
    }
}
