//! The Vulkan boilerplate the lit pass, the offscreen target and a swapchain share, written
//! once: SPIR-V modules, a cleared colour + depth render pass, graphics pipeline state, the
//! barrier that makes a copy visible to the host, image views, framebuffers and viewports.

use ash::vk;

/// A shader module from SPIR-V bytes (as `include_bytes!` gives them, at any alignment).
///
/// # Safety
/// `device` is live; `spirv` is valid SPIR-V for it (Vulkan does not check).
pub unsafe fn shader_module(device: &ash::Device, spirv: &[u8]) -> Result<vk::ShaderModule, vk::Result> {
    let words: Vec<u32> = spirv.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    // SAFETY: the create info points at `words`, alive for the call.
    unsafe { device.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None) }
}

/// A one-subpass render pass over a colour and a depth attachment, both cleared. The colour
/// ends in `final_layout` (PRESENT_SRC_KHR for a swapchain, TRANSFER_SRC_OPTIMAL for a
/// readback); depth is not stored. The pass waits for earlier frames' attachment writes and
/// transfers, and its colour writes come before a transfer that reads them.
///
/// # Safety
/// `device` is live; the device supports `color_format` as a colour and `depth_format` as a
/// depth attachment, and `final_layout` is a layout a colour attachment may end in.
pub unsafe fn color_depth_render_pass(
    device: &ash::Device,
    color_format: vk::Format,
    depth_format: vk::Format,
    final_layout: vk::ImageLayout,
) -> Result<vk::RenderPass, vk::Result> {
    let attachments = [
        vk::AttachmentDescription::default()
            .format(color_format)
            .samples(vk::SampleCountFlags::TYPE_1)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(vk::AttachmentStoreOp::STORE)
            .initial_layout(vk::ImageLayout::UNDEFINED)
            .final_layout(final_layout),
        vk::AttachmentDescription::default()
            .format(depth_format)
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
    let stages = vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT | vk::PipelineStageFlags::EARLY_FRAGMENT_TESTS | vk::PipelineStageFlags::LATE_FRAGMENT_TESTS;
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
    // SAFETY: the create info points at locals alive for the call.
    unsafe { device.create_render_pass(&info, None) }
}

/// What a pipeline draws into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenderTarget<'a> {
    /// Subpass 0 of a render pass with this many colour attachments.
    Pass { render_pass: vk::RenderPass, colors: usize },
    /// Dynamic rendering with these colour formats and this depth format.
    Formats { colors: &'a [vk::Format], depth: vk::Format },
}

/// What differs between the graphics pipelines here: everything else is fixed (one sample,
/// opaque colour attachments written whole, 1-pixel lines, dynamic viewport and scissor).
#[derive(Clone, Copy)]
pub struct PipelineDesc<'a> {
    /// Vertex and fragment SPIR-V, entry point `main`.
    pub vertex: &'a [u8],
    pub fragment: &'a [u8],
    pub bindings: &'a [vk::VertexInputBindingDescription],
    pub attributes: &'a [vk::VertexInputAttributeDescription],
    /// Depth test with this compare op, and depth writes; `None`: no depth test.
    pub depth_compare: Option<vk::CompareOp>,
    pub cull_mode: vk::CullModeFlags,
    pub front_face: vk::FrontFace,
    pub layout: vk::PipelineLayout,
    pub target: RenderTarget<'a>,
    pub topology: vk::PrimitiveTopology,
    /// Specialization constant 0 of the vertex stage (the lit shaders' point size).
    pub point_size: f32,
}

/// A graphics pipeline for `desc.target`.
///
/// # Safety
/// `device` is live; `desc`'s SPIR-V is valid and matches its vertex input, layout and
/// target; its layout and render pass are live objects of `device` (dynamic rendering
/// enabled for [`RenderTarget::Formats`]).
pub unsafe fn graphics_pipeline(device: &ash::Device, desc: &PipelineDesc<'_>) -> Result<vk::Pipeline, vk::Result> {
    // SAFETY: the caller's contract covers the modules' SPIR-V.
    let vert = unsafe { shader_module(device, desc.vertex) }?;
    // SAFETY: as above.
    let frag = match unsafe { shader_module(device, desc.fragment) } {
        Ok(f) => f,
        Err(e) => {
            // SAFETY: the module was never used.
            unsafe { device.destroy_shader_module(vert, None) };
            return Err(e);
        }
    };
    let point_size = desc.point_size.to_ne_bytes();
    let entries = [vk::SpecializationMapEntry { constant_id: 0, offset: 0, size: 4 }];
    let specialization = vk::SpecializationInfo::default().map_entries(&entries).data(&point_size);
    let stages = [
        vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::VERTEX).module(vert).name(c"main").specialization_info(&specialization),
        vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::FRAGMENT).module(frag).name(c"main"),
    ];
    let vertex_input =
        vk::PipelineVertexInputStateCreateInfo::default().vertex_binding_descriptions(desc.bindings).vertex_attribute_descriptions(desc.attributes);
    let assembly = vk::PipelineInputAssemblyStateCreateInfo::default().topology(desc.topology);
    let viewport = vk::PipelineViewportStateCreateInfo::default().viewport_count(1).scissor_count(1);
    let raster = vk::PipelineRasterizationStateCreateInfo::default()
        .polygon_mode(vk::PolygonMode::FILL)
        .cull_mode(desc.cull_mode)
        .front_face(desc.front_face)
        .line_width(1.0);
    let multisample = vk::PipelineMultisampleStateCreateInfo::default().rasterization_samples(vk::SampleCountFlags::TYPE_1);
    let depth = match desc.depth_compare {
        Some(op) => vk::PipelineDepthStencilStateCreateInfo::default().depth_test_enable(true).depth_write_enable(true).depth_compare_op(op),
        None => vk::PipelineDepthStencilStateCreateInfo::default(),
    };
    let colors = match desc.target {
        RenderTarget::Pass { colors, .. } => colors,
        RenderTarget::Formats { colors, .. } => colors.len(),
    };
    let blend_attachments = vec![vk::PipelineColorBlendAttachmentState::default().color_write_mask(vk::ColorComponentFlags::RGBA); colors];
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
        .layout(desc.layout);
    let mut rendering = vk::PipelineRenderingCreateInfo::default();
    let info = match desc.target {
        RenderTarget::Pass { render_pass, .. } => info.render_pass(render_pass).subpass(0),
        RenderTarget::Formats { colors, depth } => {
            rendering = rendering.color_attachment_formats(colors).depth_attachment_format(depth);
            info.push_next(&mut rendering)
        }
    };
    // SAFETY: the create info points at locals alive for the call.
    let result = unsafe { device.create_graphics_pipelines(vk::PipelineCache::null(), &[info], None) };
    // SAFETY: the modules are not needed once the pipeline exists (or failed).
    unsafe {
        device.destroy_shader_module(vert, None);
        device.destroy_shader_module(frag, None);
    }
    result.map(|p| p[0]).map_err(|(_, e)| e)
}

/// Records a barrier that makes transfer writes to `buffer` visible to host reads, after a
/// copy into a readback buffer.
///
/// # Safety
/// `cmd` is recording, outside a render pass; `buffer` belongs to `device`.
pub unsafe fn host_read_barrier(device: &ash::Device, cmd: vk::CommandBuffer, buffer: vk::Buffer) {
    let to_host = vk::BufferMemoryBarrier::default()
        .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
        .dst_access_mask(vk::AccessFlags::HOST_READ)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .buffer(buffer)
        .size(vk::WHOLE_SIZE);
    // SAFETY: per the contract.
    unsafe {
        device.cmd_pipeline_barrier(cmd, vk::PipelineStageFlags::TRANSFER, vk::PipelineStageFlags::HOST, vk::DependencyFlags::empty(), &[], &[to_host], &[])
    };
}

/// A 2D view of mip 0, layer 0 of `image` (for images made elsewhere, such as a swapchain's).
///
/// # Safety
/// `image` is a live 2D image of `device`, of `format` (or a compatible one) with `aspect`.
pub unsafe fn image_view_2d(device: &ash::Device, image: vk::Image, format: vk::Format, aspect: vk::ImageAspectFlags) -> Result<vk::ImageView, vk::Result> {
    let info = vk::ImageViewCreateInfo::default()
        .image(image)
        .view_type(vk::ImageViewType::TYPE_2D)
        .format(format)
        .subresource_range(vk::ImageSubresourceRange { aspect_mask: aspect, base_mip_level: 0, level_count: 1, base_array_layer: 0, layer_count: 1 });
    // SAFETY: the create info is valid for a live image of this device.
    unsafe { device.create_image_view(&info, None) }
}

/// A framebuffer of `attachments` (in the render pass's order) covering `extent`.
///
/// # Safety
/// `render_pass` and `attachments` are live objects of `device`, the views compatible with
/// the pass's attachments and at least `extent` large.
pub unsafe fn framebuffer(
    device: &ash::Device,
    render_pass: vk::RenderPass,
    attachments: &[vk::ImageView],
    extent: vk::Extent2D,
) -> Result<vk::Framebuffer, vk::Result> {
    let info = vk::FramebufferCreateInfo::default().render_pass(render_pass).attachments(attachments).width(extent.width).height(extent.height).layers(1);
    // SAFETY: the create info points at `attachments`, live views compatible with the pass.
    unsafe { device.create_framebuffer(&info, None) }
}

/// A viewport over `width` x `height` pixels at (`x`, `y`), depth 0..1.
pub fn viewport(x: u32, y: u32, width: u32, height: u32) -> vk::Viewport {
    vk::Viewport { x: x as f32, y: y as f32, width: width as f32, height: height as f32, min_depth: 0.0, max_depth: 1.0 }
}

/// The pixels a viewport covers, as a scissor rectangle.
pub fn scissor(viewport: &vk::Viewport) -> vk::Rect2D {
    vk::Rect2D {
        offset: vk::Offset2D { x: viewport.x as i32, y: viewport.y as i32 },
        extent: vk::Extent2D { width: viewport.width as u32, height: viewport.height as u32 },
    }
}

/// A fence, signalled from the start when `signalled` (so a frame loop's first wait returns).
pub fn fence(device: &ash::Device, signalled: bool) -> Result<vk::Fence, vk::Result> {
    let flags = if signalled { vk::FenceCreateFlags::SIGNALED } else { vk::FenceCreateFlags::empty() };
    // SAFETY: plain object creation on a live device.
    unsafe { device.create_fence(&vk::FenceCreateInfo::default().flags(flags), None) }
}

/// A binary semaphore.
pub fn semaphore(device: &ash::Device) -> Result<vk::Semaphore, vk::Result> {
    // SAFETY: plain object creation on a live device.
    unsafe { device.create_semaphore(&vk::SemaphoreCreateInfo::default(), None) }
}
