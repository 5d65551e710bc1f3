//! The viewer's main pass: simple lit shading of the scene, hover/selection highlights via
//! per-instance flags, and the picked-point markers. egui draws into the same render pass.

use crate::camera::CameraMatrices;
use crate::gpu_scene::{flags, GpuPrimitive, GpuScene, Markers};
use ash::vk;
use glam::Vec3;
use picking_vk_context::{ContextError, HostBuffer, VulkanContext};

pub const DEPTH_FORMAT: vk::Format = vk::Format::D32_SFLOAT;
const PUSH_BYTES: usize = 112;

const LIT_VERT: &[u8] = include_bytes!("../spirv/viewer_lit.vert.spv");
const LIT_FRAG: &[u8] = include_bytes!("../spirv/viewer_lit.frag.spv");

pub struct LitPass {
    device: ash::Device,
    pub render_pass: vk::RenderPass,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
}

/// Per-frame-in-flight data the pass reads: instance flags and the marker matrices.
pub struct FrameStyle {
    flags: HostBuffer,
    markers: HostBuffer,
    slots: u32,
}

impl FrameStyle {
    pub fn new(ctx: &VulkanContext, scene: &GpuScene) -> Result<Self, ContextError> {
        let slots = scene.slot_count;
        let flags = ctx.host_buffer(u64::from(slots + 2) * 16, vk::BufferUsageFlags::VERTEX_BUFFER)?;
        let markers = ctx.host_buffer(2 * 64, vk::BufferUsageFlags::VERTEX_BUFFER)?;
        Ok(FrameStyle { flags, markers, slots })
    }

    /// Writes this frame's highlights and markers.
    ///
    /// # Safety
    /// No submitted work that reads this style is still running: the frame that last drew
    /// with it has completed (its fence signalled), or it was never drawn with.
    pub unsafe fn update(&mut self, hovered_slot: Option<u32>, selected_slot: Option<u32>, markers: Option<&Markers>) -> Result<(), ContextError> {
        let mut words = vec![[0u32; 4]; self.slots as usize + 2];
        if let Some(s) = hovered_slot.filter(|&s| s < self.slots) {
            words[s as usize][0] |= flags::HOVERED;
        }
        if let Some(s) = selected_slot.filter(|&s| s < self.slots) {
            words[s as usize][0] |= flags::SELECTED;
        }
        words[self.slots as usize][0] = flags::UNLIT;
        words[self.slots as usize + 1][0] = flags::UNLIT;
        // SAFETY: per the contract, the GPU is not reading these buffers.
        unsafe { self.flags.write(0, &words) }?;
        if let Some(m) = markers {
            // SAFETY: as above.
            unsafe { self.markers.write(0, &m.matrices().map(|m| m.to_cols_array())) }?;
        }
        Ok(())
    }
}

fn module(device: &ash::Device, bytes: &[u8]) -> Result<vk::ShaderModule, vk::Result> {
    let words: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    // SAFETY: valid SPIR-V words alive for the call.
    unsafe { device.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None) }
}

impl LitPass {
    /// `final_layout`: PRESENT_SRC_KHR for a swapchain, TRANSFER_SRC_OPTIMAL for a screenshot.
    pub fn new(device: &ash::Device, color_format: vk::Format, final_layout: vk::ImageLayout) -> Result<Self, vk::Result> {
        let attachments = [
            vk::AttachmentDescription::default()
                .format(color_format)
                .samples(vk::SampleCountFlags::TYPE_1)
                .load_op(vk::AttachmentLoadOp::CLEAR)
                .store_op(vk::AttachmentStoreOp::STORE)
                .initial_layout(vk::ImageLayout::UNDEFINED)
                .final_layout(final_layout),
            vk::AttachmentDescription::default()
                .format(DEPTH_FORMAT)
                .samples(vk::SampleCountFlags::TYPE_1)
                .load_op(vk::AttachmentLoadOp::CLEAR)
                .store_op(vk::AttachmentStoreOp::DONT_CARE)
                .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
                .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
                .initial_layout(vk::ImageLayout::UNDEFINED)
                .final_layout(vk::ImageLayout::DEPTH_STENCIL_ATTACHMENT_OPTIMAL),
        ];
        let color_ref = [vk::AttachmentReference { attachment: 0, layout: vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL }];
        let depth_ref = vk::AttachmentReference { attachment: 1, layout: vk::ImageLayout::DEPTH_STENCIL_ATTACHMENT_OPTIMAL };
        let subpass = vk::SubpassDescription::default()
            .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
            .color_attachments(&color_ref)
            .depth_stencil_attachment(&depth_ref);
        let stages =
            vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT | vk::PipelineStageFlags::EARLY_FRAGMENT_TESTS | vk::PipelineStageFlags::LATE_FRAGMENT_TESTS;
        let writes = vk::AccessFlags::COLOR_ATTACHMENT_WRITE | vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_WRITE;
        let dependencies = [
            // Earlier frames' attachment writes and screenshot copies come first.
            vk::SubpassDependency::default()
                .src_subpass(vk::SUBPASS_EXTERNAL)
                .dst_subpass(0)
                .src_stage_mask(stages | vk::PipelineStageFlags::TRANSFER)
                .src_access_mask(vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_WRITE)
                .dst_stage_mask(stages)
                .dst_access_mask(writes | vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_READ),
            // The colour is read by a copy (screenshot) or presented afterwards.
            vk::SubpassDependency::default()
                .src_subpass(0)
                .dst_subpass(vk::SUBPASS_EXTERNAL)
                .src_stage_mask(vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT)
                .src_access_mask(vk::AccessFlags::COLOR_ATTACHMENT_WRITE)
                .dst_stage_mask(vk::PipelineStageFlags::TRANSFER)
                .dst_access_mask(vk::AccessFlags::TRANSFER_READ),
        ];
        let info = vk::RenderPassCreateInfo::default().attachments(&attachments).subpasses(std::slice::from_ref(&subpass)).dependencies(&dependencies);
        // SAFETY: pointers refer to locals alive for the call.
        let render_pass = unsafe { device.create_render_pass(&info, None) }?;
        let mut pass = LitPass { device: device.clone(), render_pass, layout: vk::PipelineLayout::null(), pipeline: vk::Pipeline::null() };
        let ranges = [vk::PushConstantRange::default().stage_flags(vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT).size(PUSH_BYTES as u32)];
        // SAFETY: valid create info.
        pass.layout = unsafe { device.create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default().push_constant_ranges(&ranges), None) }?;
        pass.pipeline = pass.build_pipeline()?;
        Ok(pass)
    }

    fn build_pipeline(&self) -> Result<vk::Pipeline, vk::Result> {
        let d = &self.device;
        let vert = module(d, LIT_VERT)?;
        let frag = match module(d, LIT_FRAG) {
            Ok(f) => f,
            Err(e) => {
                // SAFETY: unused module.
                unsafe { d.destroy_shader_module(vert, None) };
                return Err(e);
            }
        };
        let stages = [
            vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::VERTEX).module(vert).name(c"main"),
            vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::FRAGMENT).module(frag).name(c"main"),
        ];
        let bindings = [
            vk::VertexInputBindingDescription { binding: 0, stride: 12, input_rate: vk::VertexInputRate::VERTEX },
            vk::VertexInputBindingDescription { binding: 1, stride: 12, input_rate: vk::VertexInputRate::VERTEX },
            vk::VertexInputBindingDescription { binding: 2, stride: 64, input_rate: vk::VertexInputRate::INSTANCE },
            vk::VertexInputBindingDescription { binding: 3, stride: 16, input_rate: vk::VertexInputRate::INSTANCE },
        ];
        let mut attributes = vec![
            vk::VertexInputAttributeDescription { location: 0, binding: 0, format: vk::Format::R32G32B32_SFLOAT, offset: 0 },
            vk::VertexInputAttributeDescription { location: 1, binding: 1, format: vk::Format::R32G32B32_SFLOAT, offset: 0 },
        ];
        for c in 0..4 {
            attributes.push(vk::VertexInputAttributeDescription { location: 2 + c, binding: 2, format: vk::Format::R32G32B32A32_SFLOAT, offset: 16 * c });
        }
        attributes.push(vk::VertexInputAttributeDescription { location: 6, binding: 3, format: vk::Format::R32G32B32A32_UINT, offset: 0 });
        let vertex_input = vk::PipelineVertexInputStateCreateInfo::default().vertex_binding_descriptions(&bindings).vertex_attribute_descriptions(&attributes);
        let assembly = vk::PipelineInputAssemblyStateCreateInfo::default().topology(vk::PrimitiveTopology::TRIANGLE_LIST);
        let viewport = vk::PipelineViewportStateCreateInfo::default().viewport_count(1).scissor_count(1);
        let raster = vk::PipelineRasterizationStateCreateInfo::default().polygon_mode(vk::PolygonMode::FILL).cull_mode(vk::CullModeFlags::NONE).line_width(1.0);
        let multisample = vk::PipelineMultisampleStateCreateInfo::default().rasterization_samples(vk::SampleCountFlags::TYPE_1);
        let depth = vk::PipelineDepthStencilStateCreateInfo::default().depth_test_enable(true).depth_write_enable(true).depth_compare_op(vk::CompareOp::LESS);
        let blend_attachments = [vk::PipelineColorBlendAttachmentState::default().color_write_mask(vk::ColorComponentFlags::RGBA)];
        let blend = vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend_attachments);
        let dynamic_states = [vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
        let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic_states);
        let info = vk::GraphicsPipelineCreateInfo::default()
            .stages(&stages)
            .vertex_input_state(&vertex_input)
            .input_assembly_state(&assembly)
            .viewport_state(&viewport)
            .rasterization_state(&raster)
            .multisample_state(&multisample)
            .depth_stencil_state(&depth)
            .color_blend_state(&blend)
            .dynamic_state(&dynamic)
            .layout(self.layout)
            .render_pass(self.render_pass);
        // SAFETY: all pointers refer to locals alive for the call.
        let result = unsafe { d.create_graphics_pipelines(vk::PipelineCache::null(), &[info], None) };
        // SAFETY: modules are no longer needed once the pipeline exists (or failed).
        unsafe {
            d.destroy_shader_module(vert, None);
            d.destroy_shader_module(frag, None);
        }
        result.map(|p| p[0]).map_err(|(_, e)| e)
    }

    /// Begins the pass on `framebuffer`, cleared.
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass; `framebuffer` matches this pass.
    pub unsafe fn begin(&self, cmd: vk::CommandBuffer, framebuffer: vk::Framebuffer, extent: vk::Extent2D) {
        let clear = [
            vk::ClearValue { color: vk::ClearColorValue { float32: [0.09, 0.1, 0.12, 1.0] } },
            vk::ClearValue { depth_stencil: vk::ClearDepthStencilValue { depth: 1.0, stencil: 0 } },
        ];
        let begin = vk::RenderPassBeginInfo::default()
            .render_pass(self.render_pass)
            .framebuffer(framebuffer)
            .render_area(vk::Rect2D { offset: vk::Offset2D::default(), extent })
            .clear_values(&clear);
        // SAFETY: per the contract.
        unsafe { self.device.cmd_begin_render_pass(cmd, &begin, vk::SubpassContents::INLINE) };
    }

    /// Draws the scene (and markers) into `viewport`, scissored to it.
    ///
    /// # Safety
    /// Inside this pass, begun with [`LitPass::begin`]; the scene and style buffers stay alive
    /// until the command buffer completes.
    pub unsafe fn draw_scene(
        &self,
        cmd: vk::CommandBuffer,
        scene: &GpuScene,
        style: &FrameStyle,
        camera: &CameraMatrices,
        viewport: vk::Viewport,
        markers: Option<&Markers>,
    ) {
        let d = &self.device;
        let scissor = vk::Rect2D {
            offset: vk::Offset2D { x: viewport.x as i32, y: viewport.y as i32 },
            extent: vk::Extent2D { width: viewport.width as u32, height: viewport.height as u32 },
        };
        let view_projection = camera.projection * camera.view;
        let light = Vec3::new(0.4, 1.0, 0.6).normalize();
        let push = |color: [f32; 4]| {
            let mut bytes = [0u8; PUSH_BYTES];
            let words = view_projection.to_cols_array().into_iter().chain(camera.eye.extend(1.0).to_array()).chain(light.extend(0.0).to_array()).chain(color);
            for (chunk, w) in bytes.chunks_exact_mut(4).zip(words) {
                chunk.copy_from_slice(&w.to_ne_bytes());
            }
            bytes
        };
        let draw = |prim: &GpuPrimitive, first: u32, count: u32| {
            // SAFETY: per the contract; buffers are live and sized for these ranges.
            unsafe {
                d.cmd_push_constants(cmd, self.layout, vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT, 0, &push(prim.color));
                d.cmd_bind_vertex_buffers(cmd, 0, &[prim.positions.buffer, prim.normals.buffer, scene.worlds.buffer, style.flags.buffer], &[0, 0, 0, 0]);
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
            d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, self.pipeline);
            d.cmd_set_viewport(cmd, 0, &[viewport]);
            d.cmd_set_scissor(cmd, 0, &[scissor]);
        }
        for rd in &scene.render_draws {
            draw(&scene.primitives[rd.primitive], rd.first_slot, rd.slot_count);
        }
        if let Some(m) = markers {
            // Marker k reads matrix k of the marker buffer and flag `slots + k` (unlit).
            let flags_at = |k: u64| (u64::from(style.slots) + k) * 16;
            let rods: &[(&GpuPrimitive, u64)] =
                if m.normal.is_some() { &[(&scene.marker_ball, 0), (&scene.marker_rod, 1)] } else { &[(&scene.marker_ball, 0)] };
            for &(prim, k) in rods {
                // SAFETY: per the contract; the marker and flag buffers hold these entries.
                unsafe {
                    d.cmd_push_constants(cmd, self.layout, vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT, 0, &push(prim.color));
                    d.cmd_bind_vertex_buffers(
                        cmd,
                        0,
                        &[prim.positions.buffer, prim.normals.buffer, style.markers.buffer, style.flags.buffer],
                        &[0, 0, k * 64, flags_at(k)],
                    );
                    match &prim.indices {
                        Some(ib) => {
                            d.cmd_bind_index_buffer(cmd, ib.buffer, 0, vk::IndexType::UINT32);
                            d.cmd_draw_indexed(cmd, prim.count, 1, 0, 0, 0);
                        }
                        None => d.cmd_draw(cmd, prim.count, 1, 0, 0),
                    }
                }
            }
        }
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
            self.device.destroy_pipeline(self.pipeline, None);
            self.device.destroy_pipeline_layout(self.layout, None);
            self.device.destroy_render_pass(self.render_pass, None);
        }
    }
}
