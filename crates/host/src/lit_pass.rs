//! The main pass: simple lit shading of a [`GpuScene`] (base colour times its texture, alpha
//! masks discarded, single-sided materials culled), hover and selection highlights from
//! per-slot flags, and the picked point and its normal drawn as markers. A host's UI (the
//! viewer's egui panel) can draw into the same render pass before it ends.

use crate::camera::CameraMatrices;
use crate::gpu_primitive::GpuPrimitive;
use crate::gpu_scene::GpuScene;
use crate::pick_tint::{PickTint, TintKit};
use crate::shapes;
use crate::vk_util::{self, PipelineDesc, RenderTarget};
use ash::vk;
use glam::{Mat4, Quat, Vec3};
use picking_vk::draw::Topology;
use picking_vk_context::{ContextError, HostBuffer, VulkanContext};

pub const DEPTH_FORMAT: vk::Format = vk::Format::D32_SFLOAT;
/// The frame's words (96 bytes), then a deformed draw's (see `viewer_lit_deformed.vert`).
const PUSH_BYTES: usize = 128;
const FRAME_PUSH_BYTES: usize = 96;
const PUSH_STAGES: vk::ShaderStageFlags = vk::ShaderStageFlags::from_raw(vk::ShaderStageFlags::VERTEX.as_raw() | vk::ShaderStageFlags::FRAGMENT.as_raw());

const LIT_VERT: &[u8] = include_bytes!("../spirv/viewer_lit.vert.spv");
const LIT_DEFORMED_VERT: &[u8] = include_bytes!("../spirv/viewer_lit_deformed.vert.spv");
const LIT_FRAG: &[u8] = include_bytes!("../spirv/viewer_lit.frag.spv");

/// Colours of the picked-point ball and of the normal rod.
const MARKER_COLORS: [[f32; 4]; 2] = [[1.0, 0.15, 0.1, 1.0], [0.1, 0.9, 1.0, 1.0]];

/// Per-slot flags read by the lit shader.
pub mod flags {
    pub const HOVERED: u32 = 1;
    pub const SELECTED: u32 = 2;
    pub const UNLIT: u32 = 4;
    /// Set by the vertex shaders from the GPU results: inside the band being dragged.
    pub const BAND: u32 = 8;
}

/// The picked point and normal drawn in the scene.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Markers {
    pub point: Vec3,
    pub normal: Option<Vec3>,
    /// World-space size of the ball (the rod is 6x as long).
    pub size: f32,
}

impl Markers {
    /// World matrices of the ball and the rod.
    pub fn matrices(&self) -> [Mat4; 2] {
        let ball = Mat4::from_scale_rotation_translation(Vec3::splat(self.size), Quat::IDENTITY, self.point);
        let n = self.normal.unwrap_or(Vec3::Y);
        let rod = Mat4::from_scale_rotation_translation(
            Vec3::new(self.size * 0.25, self.size * 6.0, self.size * 0.25),
            Quat::from_rotation_arc(Vec3::Y, n),
            self.point,
        );
        [ball, rod]
    }
}

pub struct LitPass {
    device: ash::Device,
    /// Destroyed with the pass: read through [`LitPass::render_pass`], never copied out to
    /// outlive it.
    render_pass: vk::RenderPass,
    layout: vk::PipelineLayout,
    /// The texture set's layout (defined as `TextureSets::layout`, so the scene's sets bind).
    set_layout: vk::DescriptorSetLayout,
    /// Set 1 of deformed draws (as `gpu_scene::deform_set_layout`).
    deform_layout: vk::DescriptorSetLayout,
    /// As `pipelines`, for deformed primitives.
    deformed: [vk::Pipeline; 3],
    /// Line lists, line strips, point lists (unculled).
    lines_and_points: [vk::Pipeline; 3],
    /// By culling: both faces; back faces of counter-clockwise fronts (glTF's); back faces of
    /// clockwise fronts (glTF's under a mirroring world matrix).
    pipelines: [vk::Pipeline; 3],
    /// Marker meshes: a ball for the picked point, a thin rod for its normal.
    marker_ball: GpuPrimitive,
    marker_rod: GpuPrimitive,
    /// LESS and a depth cleared to 1 for standard depth; GREATER and 0 for reversed depth.
    depth_compare: vk::CompareOp,
    depth_clear: f32,
    /// Set 2: the picker's GPU results (see `pick_tint`).
    tint: TintKit,
}

/// Per-frame-in-flight data the pass reads: each slot's flags and colour, and the marker
/// matrices.
pub struct FrameStyle {
    flags: HostBuffer,
    /// Per slot its object's pick key (ID low, high, instance, 0), then a zero key per marker.
    keys: HostBuffer,
    /// What the lit pass reads the picker's GPU results for, this frame.
    pub tint: PickTint,
    markers: HostBuffer,
    slots: u32,
    /// Per slot, then per marker, with no flags set: `[flags, packed RGBA8 colour, alpha
    /// cutoff bits (0: opaque), colour alpha bits]`.
    unflagged: Vec<[u32; 4]>,
}

impl FrameStyle {
    /// The style of `scene` as its draws place it (call after the draws are added).
    pub fn new(ctx: &VulkanContext, scene: &GpuScene) -> Result<Self, ContextError> {
        let slots = scene.slot_count;
        let flags = ctx.host_buffer(u64::from(slots + 2) * 16, vk::BufferUsageFlags::VERTEX_BUFFER)?;
        let markers = ctx.host_buffer(2 * 64, vk::BufferUsageFlags::VERTEX_BUFFER)?;
        let keys = ctx.upload(&vec![[0u32; 4]; slots as usize + 2], vk::BufferUsageFlags::VERTEX_BUFFER)?;
        // The colour is per slot rather than a push constant per draw: a push constant that
        // changes between draws is new fragment state for every draw, which a software
        // rasterizer (lavapipe) copies per draw, about 100 MB a frame for 2,000 objects.
        let mut unflagged = vec![[0, pack_unorm4x8([1.0; 4]), 0, 1f32.to_bits()]; slots as usize];
        for rd in &scene.render_draws {
            let p = &scene.primitives[rd.primitive];
            let style = [0, pack_unorm4x8(p.color), p.alpha_cutoff.unwrap_or(0.0).to_bits(), p.color[3].to_bits()];
            let first = rd.first_slot as usize;
            for word in unflagged.iter_mut().skip(first).take(rd.slot_count as usize) {
                *word = style;
            }
        }
        unflagged.extend(MARKER_COLORS.map(|c| [flags::UNLIT, pack_unorm4x8(c), 0, 1f32.to_bits()]));
        Ok(FrameStyle { flags, keys, tint: PickTint::default(), markers, slots, unflagged })
    }

    /// Writes each slot's pick key (`[ID low, ID high, instance or 0xFFFFFFFF, 0]`, in slot
    /// order; slots past `keys` keep theirs), which the GPU results' highlights look up.
    ///
    /// # Safety
    /// As [`FrameStyle::update_selection`].
    pub unsafe fn write_pick_keys(&mut self, keys: &[[u32; 4]]) -> Result<(), ContextError> {
        let keys = &keys[..keys.len().min(self.slots as usize)];
        // SAFETY: per the contract, the GPU is not reading this buffer.
        unsafe { self.keys.write(0, keys) }
    }

    /// Writes this frame's highlights and markers: one hovered and at most one selected slot.
    ///
    /// # Safety
    /// As [`FrameStyle::update_selection`].
    pub unsafe fn update(&mut self, hovered_slot: Option<u32>, selected_slot: Option<u32>, markers: Option<&Markers>) -> Result<(), ContextError> {
        // SAFETY: the caller's contract is `update_selection`'s.
        unsafe { self.update_selection(hovered_slot, selected_slot.as_slice(), markers) }
    }

    /// Writes this frame's highlights and markers: one hovered slot and any number of
    /// selected ones (slots out of range are ignored).
    ///
    /// # Safety
    /// No submitted work that reads this style is still running: the frame that last drew
    /// with it has completed (its fence signalled), or it was never drawn with.
    pub unsafe fn update_selection(&mut self, hovered_slot: Option<u32>, selected_slots: &[u32], markers: Option<&Markers>) -> Result<(), ContextError> {
        let mut words = self.unflagged.clone();
        if let Some(s) = hovered_slot.filter(|&s| s < self.slots) {
            words[s as usize][0] |= flags::HOVERED;
        }
        for &s in selected_slots.iter().filter(|&&s| s < self.slots) {
            words[s as usize][0] |= flags::SELECTED;
        }
        // SAFETY: per the contract, the GPU is not reading these buffers.
        unsafe { self.flags.write(0, &words) }?;
        if let Some(m) = markers {
            // SAFETY: as above.
            unsafe { self.markers.write(0, &m.matrices().map(|m| m.to_cols_array())) }?;
        }
        Ok(())
    }
}

impl LitPass {
    /// The render pass (this pass's: destroyed when it drops).
    pub fn render_pass(&self) -> vk::RenderPass {
        self.render_pass
    }

    /// `final_layout`: PRESENT_SRC_KHR for a swapchain, TRANSFER_SRC_OPTIMAL for a screenshot.
    /// `depth`: the depth convention of the projections it will draw with.
    pub fn new(ctx: &VulkanContext, color_format: vk::Format, final_layout: vk::ImageLayout, depth: picking_vk::DepthConvention) -> Result<Self, ContextError> {
        let (depth_compare, depth_clear) = match depth {
            picking_vk::DepthConvention::Standard => (vk::CompareOp::LESS, 1.0),
            picking_vk::DepthConvention::Reverse => (vk::CompareOp::GREATER, 0.0),
        };
        let device = &ctx.device;
        let marker_ball = GpuPrimitive::upload(ctx, &shapes::sphere(1.0, 12, 16, MARKER_COLORS[0]))?;
        let marker_rod = GpuPrimitive::upload(ctx, &shapes::cylinder(1.0, 1.0, 10, MARKER_COLORS[1]))?;
        // The caller's colour format (a swapchain's, or COLOR_FORMAT) must be renderable.
        // SAFETY: the context's instance and physical device.
        let properties = unsafe { ctx.instance.get_physical_device_format_properties(ctx.physical_device, color_format) };
        if !properties.optimal_tiling_features.contains(vk::FormatFeatureFlags::COLOR_ATTACHMENT) {
            return Err(ContextError::Invalid(format!("{color_format:?} is not a colour attachment format of this device")));
        }
        let present = final_layout == vk::ImageLayout::PRESENT_SRC_KHR && ctx.swapchain;
        if !(present || [vk::ImageLayout::TRANSFER_SRC_OPTIMAL, vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL].contains(&final_layout)) {
            return Err(ContextError::Invalid(format!("{final_layout:?} is not a final layout of the lit pass on this device")));
        }
        // SAFETY: the context's live device; the colour format was checked above and the depth
        // format is the one the context's images use; the final layout is a colour one (a
        // presentable one only where the device enabled swapchains).
        let render_pass = unsafe { vk_util::color_depth_render_pass(device, color_format, DEPTH_FORMAT, final_layout) }?;
        let mut pass = LitPass {
            device: device.clone(),
            render_pass,
            layout: vk::PipelineLayout::null(),
            set_layout: vk::DescriptorSetLayout::null(),
            deform_layout: vk::DescriptorSetLayout::null(),
            deformed: [vk::Pipeline::null(); 3],
            lines_and_points: [vk::Pipeline::null(); 3],
            pipelines: [vk::Pipeline::null(); 3],
            marker_ball,
            marker_rod,
            depth_compare,
            depth_clear,
            tint: TintKit::new(ctx)?,
        };
        let set_bindings = [vk::DescriptorSetLayoutBinding::default()
            .binding(0)
            .descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER)
            .descriptor_count(1)
            .stage_flags(vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT)];
        // SAFETY: the create info points at `set_bindings`, alive for the call.
        pass.set_layout = unsafe { device.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&set_bindings), None) }?;
        pass.deform_layout = crate::gpu_scene::deform_set_layout(device)?;
        let ranges = [vk::PushConstantRange::default().stage_flags(PUSH_STAGES).size(PUSH_BYTES as u32)];
        let set_layouts = [pass.set_layout, pass.deform_layout, pass.tint.layout];
        let info = vk::PipelineLayoutCreateInfo::default().push_constant_ranges(&ranges).set_layouts(&set_layouts);
        // SAFETY: the create info points at locals alive for the call.
        pass.layout = unsafe { device.create_pipeline_layout(&info, None) }?;
        // Positions, normals, UVs and colours per vertex; the slot's world matrix and style per
        // instance.
        let bindings = [
            vk::VertexInputBindingDescription { binding: 0, stride: 12, input_rate: vk::VertexInputRate::VERTEX },
            vk::VertexInputBindingDescription { binding: 1, stride: 12, input_rate: vk::VertexInputRate::VERTEX },
            vk::VertexInputBindingDescription { binding: 2, stride: 64, input_rate: vk::VertexInputRate::INSTANCE },
            vk::VertexInputBindingDescription { binding: 3, stride: 16, input_rate: vk::VertexInputRate::INSTANCE },
            vk::VertexInputBindingDescription { binding: 4, stride: 8, input_rate: vk::VertexInputRate::VERTEX },
            vk::VertexInputBindingDescription { binding: 5, stride: 16, input_rate: vk::VertexInputRate::VERTEX },
            vk::VertexInputBindingDescription { binding: 6, stride: 16, input_rate: vk::VertexInputRate::INSTANCE },
        ];
        let mut attributes = vec![
            vk::VertexInputAttributeDescription { location: 0, binding: 0, format: vk::Format::R32G32B32_SFLOAT, offset: 0 },
            vk::VertexInputAttributeDescription { location: 1, binding: 1, format: vk::Format::R32G32B32_SFLOAT, offset: 0 },
        ];
        for c in 0..4 {
            attributes.push(vk::VertexInputAttributeDescription { location: 2 + c, binding: 2, format: vk::Format::R32G32B32A32_SFLOAT, offset: 16 * c });
        }
        attributes.push(vk::VertexInputAttributeDescription { location: 6, binding: 3, format: vk::Format::R32G32B32A32_UINT, offset: 0 });
        attributes.push(vk::VertexInputAttributeDescription { location: 7, binding: 4, format: vk::Format::R32G32_SFLOAT, offset: 0 });
        attributes.push(vk::VertexInputAttributeDescription { location: 8, binding: 5, format: vk::Format::R32G32B32A32_SFLOAT, offset: 0 });
        attributes.push(vk::VertexInputAttributeDescription { location: 9, binding: 6, format: vk::Format::R32G32B32A32_UINT, offset: 0 });
        let culling = [
            (vk::CullModeFlags::NONE, vk::FrontFace::COUNTER_CLOCKWISE),
            (vk::CullModeFlags::BACK, vk::FrontFace::COUNTER_CLOCKWISE),
            (vk::CullModeFlags::BACK, vk::FrontFace::CLOCKWISE),
        ];
        let triangles = PipelineDesc {
            vertex: LIT_VERT,
            fragment: LIT_FRAG,
            bindings: &bindings,
            attributes: &attributes,
            depth_compare: Some(depth_compare),
            cull_mode: vk::CullModeFlags::NONE,
            front_face: vk::FrontFace::COUNTER_CLOCKWISE,
            layout: pass.layout,
            target: RenderTarget::Pass { render_pass, colors: 1 },
            topology: vk::PrimitiveTopology::TRIANGLE_LIST,
            point_size: 1.0,
        };
        for (slot, (cull_mode, front_face)) in culling.into_iter().enumerate() {
            let desc = PipelineDesc { cull_mode, front_face, ..triangles };
            // SAFETY: the crate's compiled shaders, which match these vertex inputs, this
            // pass's layout and render pass, all of the context's device.
            pass.pipelines[slot] = unsafe { vk_util::graphics_pipeline(device, &desc) }?;
            // SAFETY: as above, with the deformed vertex shader.
            pass.deformed[slot] = unsafe { vk_util::graphics_pipeline(device, &PipelineDesc { vertex: LIT_DEFORMED_VERT, ..desc }) }?;
        }
        // Points as large as the picker draws them, where the device allows (else 1 pixel).
        let point_size = if ctx.picking_features.contains(picking_vk::PickFeatures::WIDE_LINES) { crate::mesh::POINT_SIZE } else { 1.0 };
        let topologies = [vk::PrimitiveTopology::LINE_LIST, vk::PrimitiveTopology::LINE_STRIP, vk::PrimitiveTopology::POINT_LIST];
        for (slot, topology) in topologies.into_iter().enumerate() {
            // SAFETY: as above.
            pass.lines_and_points[slot] = unsafe { vk_util::graphics_pipeline(device, &PipelineDesc { topology, point_size, ..triangles }) }?;
        }
        Ok(pass)
    }

    /// Begins the pass on `framebuffer`, cleared.
    ///
    /// # Safety
    /// `cmd` is a command buffer of this pass's device, recording outside a render pass;
    /// `framebuffer` matches this pass; the pass and the framebuffer are not dropped until
    /// `cmd` completes.
    pub unsafe fn begin(&self, cmd: vk::CommandBuffer, framebuffer: vk::Framebuffer, extent: vk::Extent2D) {
        let clear = [
            vk::ClearValue { color: vk::ClearColorValue { float32: [0.09, 0.1, 0.12, 1.0] } },
            vk::ClearValue { depth_stencil: vk::ClearDepthStencilValue { depth: self.depth_clear, stencil: 0 } },
        ];
        let begin = vk::RenderPassBeginInfo::default()
            .render_pass(self.render_pass)
            .framebuffer(framebuffer)
            .render_area(vk::Rect2D { offset: vk::Offset2D::default(), extent })
            .clear_values(&clear);
        // SAFETY: per the contract.
        unsafe { self.device.cmd_begin_render_pass(cmd, &begin, vk::SubpassContents::INLINE) };
    }

    /// Draws the scene (and markers) into `viewport`, scissored to it, posed as pose region
    /// `region` of the scene says.
    ///
    /// # Safety
    /// Inside this pass, begun with [`LitPass::begin`]; the pass, the scene and the style
    /// (their buffers and sets) stay alive until the command buffer completes; `region` is
    /// one of the scene's pose regions; the style's tint set and the scene's deform sets were
    /// made on this device for this pass's layouts.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn draw_scene(
        &self,
        cmd: vk::CommandBuffer,
        scene: &GpuScene,
        region: u32,
        style: &FrameStyle,
        camera: &CameraMatrices,
        viewport: vk::Viewport,
        markers: Option<&Markers>,
    ) {
        let d = &self.device;
        let view_projection = camera.projection * camera.view;
        let light = Vec3::new(0.4, 1.0, 0.6).normalize();
        let mut push = [0u8; FRAME_PUSH_BYTES];
        // light_dir.w carries the GPU results' tint mode.
        let light = light.extend(f32::from_bits(style.tint.mode()));
        let words = view_projection.to_cols_array().into_iter().chain(camera.eye.extend(1.0).to_array()).chain(light.to_array());
        for (chunk, w) in push.chunks_exact_mut(4).zip(words) {
            chunk.copy_from_slice(&w.to_ne_bytes());
        }
        // Pipeline and texture set are bound only when they change: most draws share both.
        let bound = std::cell::Cell::new((vk::Pipeline::null(), vk::DescriptorSet::null()));
        // `count` instances from `first`, with the per-instance bindings at these byte offsets.
        let draw =
            |prim: &GpuPrimitive, mirrored: bool, instances: [(vk::Buffer, u64); 3], first: u32, count: u32, deform: Option<(vk::DescriptorSet, [u32; 8])>| {
                let pipelines = if deform.is_some() { &self.deformed } else { &self.pipelines };
                let pipeline = match (prim.topology, prim.single_sided, mirrored) {
                    (Topology::LineList, ..) => self.lines_and_points[0],
                    (Topology::LineStrip, ..) => self.lines_and_points[1],
                    (Topology::PointList, ..) => self.lines_and_points[2],
                    (_, false, _) => pipelines[0],
                    (_, true, false) => pipelines[1],
                    (_, true, true) => pipelines[2],
                };
                let set = scene.texture_set(prim);
                // SAFETY: per the contract; the buffers are live and sized for these ranges.
                unsafe {
                    let (bound_pipeline, bound_set) = bound.get();
                    if pipeline != bound_pipeline {
                        d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, pipeline);
                    }
                    if set != bound_set {
                        d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::GRAPHICS, self.layout, 0, &[set], &[]);
                    }
                    bound.set((pipeline, set));
                    if let Some((deform_set, words)) = deform {
                        d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::GRAPHICS, self.layout, 1, &[deform_set], &[]);
                        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
                        d.cmd_push_constants(cmd, self.layout, PUSH_STAGES, FRAME_PUSH_BYTES as u32, &bytes);
                    }
                    let colors = prim.colors.as_ref().map_or(scene.white_colors.buffer, |c| c.buffer);
                    let buffers = [prim.positions.buffer, prim.normals.buffer, instances[0].0, instances[1].0, prim.uvs.buffer, colors, instances[2].0];
                    d.cmd_bind_vertex_buffers(cmd, 0, &buffers, &[0, 0, instances[0].1, instances[1].1, 0, 0, instances[2].1]);
                    match &prim.indices {
                        Some(ib) => {
                            d.cmd_bind_index_buffer(cmd, ib.buffer, 0, vk::IndexType::UINT32);
                            d.cmd_draw_indexed(cmd, prim.count, count, 0, 0, first);
                        }
                        None => d.cmd_draw(cmd, prim.count, count, 0, first),
                    }
                }
            };
        // SAFETY: per the contract.
        unsafe {
            d.cmd_push_constants(cmd, self.layout, PUSH_STAGES, 0, &push);
            let tint_set = if style.tint.set == vk::DescriptorSet::null() { self.tint.empty_set } else { style.tint.set };
            d.cmd_bind_descriptor_sets(cmd, vk::PipelineBindPoint::GRAPHICS, self.layout, 2, &[tint_set], &[]);
            d.cmd_set_viewport(cmd, 0, &[viewport]);
            d.cmd_set_scissor(cmd, 0, &[vk_util::scissor(&viewport)]);
        }
        let worlds_at = u64::from(region) * scene.region_bytes();
        for rd in &scene.render_draws {
            let prim = &scene.primitives[rd.primitive];
            let deform = scene.deform_sets[rd.primitive].filter(|_| rd.skin.is_some() || rd.weights.is_some()).map(|set| {
                let palette = rd.skin.filter(|_| prim.skin.is_some()).map_or(u32::MAX, |s| scene.palette_word(region, s));
                let (weights, targets) = match rd.weights.filter(|_| prim.morph.is_some()) {
                    Some(k) => (scene.weights_word(region, k), prim.target_count),
                    None => (0, 0),
                };
                (set, [palette, weights, targets, prim.skin_sets, prim.vertex_count, 0, 0, 0])
            });
            draw(prim, rd.mirrored, [(scene.worlds.buffer, worlds_at), (style.flags.buffer, 0), (style.keys.buffer, 0)], rd.first_slot, rd.slot_count, deform);
        }
        if let Some(m) = markers {
            // Marker k reads matrix k of the marker buffer and flag `slots + k` (unlit).
            let flags_at = |k: u64| (u64::from(style.slots) + k) * 16;
            let shown: &[(&GpuPrimitive, u64)] = if m.normal.is_some() { &[(&self.marker_ball, 0), (&self.marker_rod, 1)] } else { &[(&self.marker_ball, 0)] };
            for &(prim, k) in shown {
                draw(prim, false, [(style.markers.buffer, k * 64), (style.flags.buffer, flags_at(k)), (style.keys.buffer, flags_at(k))], 0, 1, None);
            }
        }
        if let Some(b) = &scene.billboards {
            // Last: the billboards' pipeline layout is their own, and binding it disturbs the
            // frame's push constants for anything drawn after.
            // SAFETY: per the contract: inside this render pass, the billboards outlive the frame.
            unsafe { b.draw(cmd, self.render_pass, self.depth_compare, camera.view, view_projection) };
        }
    }

    /// The layout of set 2, the picker's GPU results.
    pub fn tint_layout(&self) -> vk::DescriptorSetLayout {
        self.tint.layout
    }

    /// # Safety
    /// Inside this pass.
    pub unsafe fn end(&self, cmd: vk::CommandBuffer) {
        // SAFETY: per the contract.
        unsafe { self.device.cmd_end_render_pass(cmd) };
    }
}

impl Drop for LitPass {
    fn drop(&mut self) {
        // SAFETY: owners drop the pass after the GPU is done with it; null is ignored.
        unsafe {
            for p in self.pipelines.into_iter().chain(self.deformed).chain(self.lines_and_points) {
                self.device.destroy_pipeline(p, None);
            }
            self.device.destroy_pipeline_layout(self.layout, None);
            self.device.destroy_descriptor_set_layout(self.set_layout, None);
            self.device.destroy_descriptor_set_layout(self.deform_layout, None);
            self.device.destroy_render_pass(self.render_pass, None);
        }
    }
}

/// `color` as GLSL's `packUnorm4x8` packs it (red in the low byte).
fn pack_unorm4x8(color: [f32; 4]) -> u32 {
    color.iter().rev().fold(0, |packed, c| (packed << 8) | (c.clamp(0.0, 1.0) * 255.0).round() as u32)
}
