//! How a pick pass begins and ends: through a `VkRenderPass` and `VkFramebuffer`, or with
//! dynamic rendering for engines that have no render passes. A [`PassShape`] states a pass
//! once (attachments, the layouts they end in, the external dependencies); the render pass is
//! made from it, and dynamic rendering states the same dependencies as barriers around
//! `vkCmdBeginRendering`, so both paths synchronize alike.

use crate::error::{PickError, Requirement};
use crate::gpu::{GpuImage, Memory, Owned};
use ash::vk;

/// The stages that touch a pass's attachments.
pub(crate) const ATTACHMENT_STAGES: vk::PipelineStageFlags = vk::PipelineStageFlags::from_raw(
    vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT.as_raw()
        | vk::PipelineStageFlags::EARLY_FRAGMENT_TESTS.as_raw()
        | vk::PipelineStageFlags::LATE_FRAGMENT_TESTS.as_raw(),
);

/// One attachment of a pass. Every attachment is cleared when the pass begins.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AttachmentShape {
    pub format: vk::Format,
    /// Whether its contents are kept past the pass.
    pub store: bool,
    /// The layout the pass leaves it in.
    pub final_layout: vk::ImageLayout,
}

/// An external dependency of a pass: what `src` did must be done (and its writes visible)
/// before `dst` runs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dependency {
    pub src_stages: vk::PipelineStageFlags,
    pub src_access: vk::AccessFlags,
    pub dst_stages: vk::PipelineStageFlags,
    pub dst_access: vk::AccessFlags,
}

/// A pass: colour attachments, depth, and its dependencies on the work around it.
#[derive(Clone, Debug)]
pub(crate) struct PassShape {
    pub name: &'static str,
    pub colors: Vec<AttachmentShape>,
    pub depth: AttachmentShape,
    /// Earlier work (a readback copy, a reduce) before the pass touches its attachments.
    pub before: Dependency,
    /// The pass's writes before later work (the copy, the reduce) reads them.
    pub after: Dependency,
}

/// The entry points of dynamic rendering: core in Vulkan 1.3, or `VK_KHR_dynamic_rendering`
/// (the same signatures).
#[derive(Clone, Copy)]
pub(crate) struct DynamicRendering {
    begin: vk::PFN_vkCmdBeginRendering,
    end: vk::PFN_vkCmdEndRendering,
}

/// How the picker begins its passes, with what that needs loaded.
#[derive(Clone, Copy)]
pub(crate) enum Rendering {
    RenderPass,
    Dynamic(DynamicRendering),
}

impl Rendering {
    /// Render passes, or (`dynamic`) dynamic rendering with its entry points loaded. `core`:
    /// the device and instance are Vulkan 1.3.
    ///
    /// # Safety
    /// `device` was created from a physical device of `instance`; both are live.
    pub unsafe fn load(instance: &ash::Instance, device: &ash::Device, dynamic: bool, core: bool) -> Result<Self, PickError> {
        if !dynamic {
            return Ok(Rendering::RenderPass);
        }
        let name = if core { c"vkCmdBeginRendering" } else { c"vkCmdBeginRenderingKHR" };
        // SAFETY: the caller's contract; `name` is NUL-terminated. The loader answers null
        // for an extension the device was not created with.
        if unsafe { instance.get_device_proc_addr(device.handle(), name.as_ptr()) }.is_none() {
            let missing = if core { Requirement::Feature("dynamicRendering") } else { Requirement::Extension(ash::khr::dynamic_rendering::NAME) };
            return Err(PickError::Unsupported { missing: vec![missing] });
        }
        Ok(Rendering::Dynamic(if core {
            let fns = device.fp_v1_3();
            DynamicRendering { begin: fns.cmd_begin_rendering, end: fns.cmd_end_rendering }
        } else {
            let khr = ash::khr::dynamic_rendering::Device::new(instance, device);
            DynamicRendering { begin: khr.fp().cmd_begin_rendering_khr, end: khr.fp().cmd_end_rendering_khr }
        }))
    }
}

/// # Safety
/// `handle` is an object of `device` that the GPU no longer uses.
unsafe fn destroy_render_pass(device: &ash::Device, handle: vk::RenderPass) {
    // SAFETY: the caller's contract.
    unsafe { device.destroy_render_pass(handle, None) };
}

/// # Safety
/// As [`destroy_render_pass`].
unsafe fn destroy_framebuffer(device: &ash::Device, handle: vk::Framebuffer) {
    // SAFETY: the caller's contract.
    unsafe { device.destroy_framebuffer(handle, None) };
}

/// What a pipeline is built for: a render pass, or the formats dynamic rendering uses.
pub(crate) enum PipelineTarget {
    RenderPass(vk::RenderPass),
    Formats { colors: Vec<vk::Format>, depth: vk::Format },
}

/// The images of one pass (colours in the shape's order, then depth), and their framebuffer
/// when the pass is a render pass; the framebuffer is dropped before the images.
pub(crate) struct PassAttachments {
    pub framebuffer: Option<Owned<vk::Framebuffer>>,
    pub images: Vec<GpuImage>,
    pub extent: vk::Extent2D,
}

impl PassAttachments {
    pub fn bytes(&self) -> u64 {
        self.images.iter().map(GpuImage::bytes).sum()
    }
}

/// A pass as recorded: its shape and how it begins.
pub(crate) struct Pass {
    pub shape: PassShape,
    rendering: Rendering,
    render_pass: Option<Owned<vk::RenderPass>>,
}

impl Pass {
    pub fn new(memory: &Memory, shape: PassShape, rendering: &Rendering) -> Result<Self, PickError> {
        let render_pass = match rendering {
            Rendering::RenderPass => Some(create_render_pass(memory, &shape)?),
            Rendering::Dynamic(_) => None,
        };
        Ok(Pass { shape, rendering: *rendering, render_pass })
    }

    /// The colour attachments' formats and the depth format.
    pub fn formats(&self) -> (Vec<vk::Format>, vk::Format) {
        (self.shape.colors.iter().map(|c| c.format).collect(), self.shape.depth.format)
    }

    pub fn pipeline_target(&self) -> PipelineTarget {
        match &self.render_pass {
            Some(pass) => PipelineTarget::RenderPass(pass.handle),
            None => PipelineTarget::Formats { colors: self.shape.colors.iter().map(|c| c.format).collect(), depth: self.shape.depth.format },
        }
    }

    /// Wraps `images` (the shape's attachments, colours then depth) for recording, with a
    /// framebuffer when the pass is a render pass.
    pub fn attachments(&self, memory: &Memory, images: Vec<GpuImage>, extent: vk::Extent2D) -> Result<PassAttachments, PickError> {
        let framebuffer = match &self.render_pass {
            Some(pass) => {
                let views: Vec<vk::ImageView> = images.iter().map(|i| i.view).collect();
                let info =
                    vk::FramebufferCreateInfo::default().render_pass(pass.handle).attachments(&views).width(extent.width).height(extent.height).layers(1);
                // SAFETY: the views and the render pass are live and compatible.
                let handle = unsafe { memory.device.create_framebuffer(&info, None) }?;
                memory.name(handle, self.shape.name);
                // SAFETY: just created on this device, owned by nothing else.
                Some(unsafe { Owned::new(&memory.device, handle, destroy_framebuffer) })
            }
            None => None,
        };
        Ok(PassAttachments { framebuffer, images, extent })
    }

    /// Begins the pass over all of `targets`, clearing attachment `i` to `clears[i]`.
    ///
    /// # Safety
    /// `cmd` is recording outside any pass; `targets` were made by [`Pass::attachments`] of
    /// this pass, and `clears` has one value per attachment.
    pub unsafe fn begin(&self, device: &ash::Device, cmd: vk::CommandBuffer, targets: &PassAttachments, clears: &[vk::ClearValue]) {
        let area = vk::Rect2D { offset: vk::Offset2D::default(), extent: targets.extent };
        let Rendering::Dynamic(dynamic) = &self.rendering else {
            let (Some(pass), Some(framebuffer)) = (&self.render_pass, &targets.framebuffer) else {
                log::error!("picking-vk: {} has no framebuffer; nothing recorded", self.shape.name);
                return;
            };
            let begin = vk::RenderPassBeginInfo::default().render_pass(pass.handle).framebuffer(framebuffer.handle).render_area(area).clear_values(clears);
            // SAFETY: the caller's contract; render pass and framebuffer belong to this device.
            unsafe { device.cmd_begin_render_pass(cmd, &begin, vk::SubpassContents::INLINE) };
            return;
        };
        let colors = self.shape.colors.len();
        let before = self.shape.before;
        // Attachments start UNDEFINED, as the render pass's do: the pass clears them.
        let barriers: Vec<vk::ImageMemoryBarrier> = targets
            .images
            .iter()
            .enumerate()
            .map(|(i, image)| {
                layout_change(image.image, i == colors, vk::ImageLayout::UNDEFINED, attachment_layout(i == colors), before.src_access, before.dst_access)
            })
            .collect();
        let attachment = |i: usize, store: bool| {
            vk::RenderingAttachmentInfo::default()
                .image_view(targets.images[i].view)
                .image_layout(attachment_layout(i == colors))
                .load_op(vk::AttachmentLoadOp::CLEAR)
                .store_op(if store { vk::AttachmentStoreOp::STORE } else { vk::AttachmentStoreOp::DONT_CARE })
                .clear_value(clears[i])
        };
        let color_infos: Vec<vk::RenderingAttachmentInfo> = self.shape.colors.iter().enumerate().map(|(i, c)| attachment(i, c.store)).collect();
        let depth_info = attachment(colors, self.shape.depth.store);
        let info = vk::RenderingInfo::default().render_area(area).layer_count(1).color_attachments(&color_infos).depth_attachment(&depth_info);
        // SAFETY: the caller's contract; the images and views are live objects of this device,
        // and `dynamic` holds entry points the device returned (checked in `Rendering::load`).
        unsafe {
            barrier(device, cmd, before, &barriers);
            (dynamic.begin)(cmd, &info);
        }
    }

    /// Ends the pass begun by [`Pass::begin`], leaving each attachment in its final layout.
    ///
    /// # Safety
    /// Inside the pass begun by [`Pass::begin`] with the same `targets`.
    pub unsafe fn end(&self, device: &ash::Device, cmd: vk::CommandBuffer, targets: &PassAttachments) {
        let Rendering::Dynamic(dynamic) = &self.rendering else {
            // SAFETY: the caller's contract.
            unsafe { device.cmd_end_render_pass(cmd) };
            return;
        };
        let colors = self.shape.colors.len();
        let after = self.shape.after;
        let shapes = self.shape.colors.iter().chain([&self.shape.depth]);
        let barriers: Vec<vk::ImageMemoryBarrier> = targets
            .images
            .iter()
            .zip(shapes)
            .enumerate()
            .filter(|(i, (_, shape))| shape.final_layout != attachment_layout(*i == colors))
            .map(|(i, (image, shape))| {
                layout_change(image.image, i == colors, attachment_layout(i == colors), shape.final_layout, after.src_access, after.dst_access)
            })
            .collect();
        // SAFETY: the caller's contract; the entry point as in `begin`.
        unsafe {
            (dynamic.end)(cmd);
            barrier(device, cmd, after, &barriers);
        }
    }
}

fn attachment_layout(depth: bool) -> vk::ImageLayout {
    if depth {
        vk::ImageLayout::DEPTH_STENCIL_ATTACHMENT_OPTIMAL
    } else {
        vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL
    }
}

fn layout_change(
    image: vk::Image,
    depth: bool,
    old: vk::ImageLayout,
    new: vk::ImageLayout,
    src: vk::AccessFlags,
    dst: vk::AccessFlags,
) -> vk::ImageMemoryBarrier<'static> {
    let aspect_mask = if depth { vk::ImageAspectFlags::DEPTH } else { vk::ImageAspectFlags::COLOR };
    vk::ImageMemoryBarrier::default()
        .src_access_mask(src)
        .dst_access_mask(dst)
        .old_layout(old)
        .new_layout(new)
        .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
        .image(image)
        .subresource_range(vk::ImageSubresourceRange { aspect_mask, base_mip_level: 0, level_count: 1, base_array_layer: 0, layer_count: 1 })
}

/// The dependency as one barrier: a global memory barrier (buffers the pass shares with the
/// work around it) and the attachments' layout changes.
///
/// # Safety
/// `cmd` is recording outside any pass; the images are live.
unsafe fn barrier(device: &ash::Device, cmd: vk::CommandBuffer, dep: Dependency, images: &[vk::ImageMemoryBarrier<'_>]) {
    let memory = [vk::MemoryBarrier::default().src_access_mask(dep.src_access).dst_access_mask(dep.dst_access)];
    // SAFETY: the caller's contract.
    unsafe { device.cmd_pipeline_barrier(cmd, dep.src_stages, dep.dst_stages, vk::DependencyFlags::empty(), &memory, &[], images) };
}

/// The render pass of `shape`: one subpass, every attachment cleared, the shape's dependencies
/// as external subpass dependencies.
fn create_render_pass(memory: &Memory, shape: &PassShape) -> Result<Owned<vk::RenderPass>, PickError> {
    let describe = |a: &AttachmentShape| {
        vk::AttachmentDescription::default()
            .format(a.format)
            .samples(vk::SampleCountFlags::TYPE_1)
            .load_op(vk::AttachmentLoadOp::CLEAR)
            .store_op(if a.store { vk::AttachmentStoreOp::STORE } else { vk::AttachmentStoreOp::DONT_CARE })
            .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
            .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
            .initial_layout(vk::ImageLayout::UNDEFINED)
            .final_layout(a.final_layout)
    };
    let attachments: Vec<vk::AttachmentDescription> = shape.colors.iter().chain([&shape.depth]).map(describe).collect();
    let colors = shape.colors.len() as u32;
    let color_refs: Vec<vk::AttachmentReference> =
        (0..colors).map(|attachment| vk::AttachmentReference { attachment, layout: attachment_layout(false) }).collect();
    let depth_ref = vk::AttachmentReference { attachment: colors, layout: attachment_layout(true) };
    let subpass = vk::SubpassDescription::default()
        .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
        .color_attachments(&color_refs)
        .depth_stencil_attachment(&depth_ref);
    let (before, after) = (shape.before, shape.after);
    let dependencies = [
        vk::SubpassDependency::default()
            .src_subpass(vk::SUBPASS_EXTERNAL)
            .dst_subpass(0)
            .src_stage_mask(before.src_stages)
            .src_access_mask(before.src_access)
            .dst_stage_mask(before.dst_stages)
            .dst_access_mask(before.dst_access),
        vk::SubpassDependency::default()
            .src_subpass(0)
            .dst_subpass(vk::SUBPASS_EXTERNAL)
            .src_stage_mask(after.src_stages)
            .src_access_mask(after.src_access)
            .dst_stage_mask(after.dst_stages)
            .dst_access_mask(after.dst_access),
    ];
    let info = vk::RenderPassCreateInfo::default().attachments(&attachments).subpasses(std::slice::from_ref(&subpass)).dependencies(&dependencies);
    // SAFETY: all pointers in `info` refer to locals alive for the call.
    let pass = unsafe { memory.device.create_render_pass(&info, None) }?;
    memory.name(pass, shape.name);
    // SAFETY: just created on this device, owned by nothing else.
    Ok(unsafe { Owned::new(&memory.device, pass, destroy_render_pass) })
}
