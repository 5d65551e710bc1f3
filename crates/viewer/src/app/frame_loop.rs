//! The frame loop: wait for the slot's previous frame and take what it produced, acquire a
//! swapchain image, run the panel, record (picks, ID view, lit pass, panel), submit, present.
//! The swapchain is rebuilt when the window changes.

use super::panel::{PanelData, PanelFrame};
use super::picking::FrameQueries;
use super::view_rect::ViewRect;
use super::{recovery, Gfx, Gpu, Running, SceneView, FRAMES_IN_FLIGHT};
use crate::swapchain::Swapchain;
use crate::ViewerError;
use ash::vk;
use picking_vk::PickRequest;
use picking_vk_context::{CommandBuffers, VulkanContext};
use picking_vk_host::{vk_util, CameraMatrices, FrameStyle, GpuScene};

/// One frame in flight: the fence of its submission, the semaphore its swapchain image
/// signals, what the lit pass reads, and egui textures to free once it completed.
struct Frame {
    device: ash::Device,
    fence: vk::Fence,
    image_available: vk::Semaphore,
    style: FrameStyle,
    egui_free: Vec<egui::TextureId>,
}

impl Drop for Frame {
    fn drop(&mut self) {
        // SAFETY: the device is idle when frames are dropped (see Running::drop).
        unsafe {
            self.device.destroy_fence(self.fence, None);
            self.device.destroy_semaphore(self.image_available, None);
        }
    }
}

/// The frames in flight and their command buffers (in a pool of their own, which egui's
/// texture uploads use too).
pub(super) struct Frames {
    frames: Vec<Frame>,
    commands: CommandBuffers,
    /// The selection's lit-pass slots, gathered each frame (kept to reuse its memory).
    selected_slots: Vec<u32>,
}

impl Frames {
    /// `pick_keys`: each lit slot's object for the GPU results' highlights.
    pub fn new(ctx: &VulkanContext, scene: &GpuScene, pick_keys: &[[u32; 4]]) -> Result<Self, ViewerError> {
        let commands = ctx.command_buffers(FRAMES_IN_FLIGHT as u32)?;
        let mut frames = vec![];
        for _ in 0..FRAMES_IN_FLIGHT {
            let mut style = FrameStyle::new(ctx, scene)?;
            // SAFETY: a fresh style, never drawn with.
            unsafe { style.write_pick_keys(pick_keys) }?;
            frames.push(Frame {
                device: ctx.device.clone(),
                // Signalled, so the first wait returns.
                fence: vk_util::fence(&ctx.device, true)?,
                image_available: vk_util::semaphore(&ctx.device)?,
                style,
                egui_free: vec![],
            });
        }
        Ok(Frames { frames, commands, selected_slots: vec![] })
    }
}

impl Running {
    /// The 3D view of the current swapchain.
    pub(super) fn view_rect(&self) -> Option<ViewRect> {
        let extent = self.gpu.as_ref()?.gfx.as_ref()?.swapchain.as_ref()?.extent;
        ViewRect::in_framebuffer(extent, self.window.scale_factor())
    }

    /// One frame: finish the slot's previous frame, acquire, run the panel, record, submit,
    /// present. Nothing while the window cannot be seen.
    pub(super) fn draw_frame(&mut self) -> Result<(), ViewerError> {
        if self.visibility.hidden_because(&self.window).is_some() {
            return Ok(());
        }
        let Some(gpu) = self.gpu.as_mut() else { return Ok(()) };
        if gpu.needs_rebuild || gpu.gfx.as_ref().is_some_and(|g| g.swapchain.is_none()) {
            gpu.rebuild_swapchain(self.window.inner_size())?;
        }
        let slot = (self.frame_index % FRAMES_IN_FLIGHT as u64) as usize;
        let view = self.view_rect();
        let scale = self.window.scale_factor();
        let pixel = self.input.pixel(view, scale);
        // The band being dragged (drawn) and the one released (selects), in the view's pixels.
        let dragged_band = view.zip(self.input.band()).and_then(|(v, b)| b.query(v, scale));
        let released_band = self.input.take_band().zip(view).and_then(|(b, v)| b.query(v, scale));
        let inject_loss = self.recovery.inject_now(self.frame_index);
        let invalid_pick = pixel.is_some() && self.recovery.pick_error_now(self.frame_index);
        let Running { gpu, panel, input, view: scene_view, frame_index, window, .. } = self;
        let Some(Gpu { gfx: Some(gfx), needs_rebuild, ctx, .. }) = gpu.as_mut() else { return Ok(()) };
        if inject_loss {
            // As if the fence wait below had returned ERROR_DEVICE_LOST.
            return Err(recovery::device_lost());
        }
        gfx.finish_slot(ctx, slot, *frame_index, scene_view, pixel.is_some())?;
        // A moving scene is posed into this slot's region: the frame that last read it is done.
        let pose_region = match input.settings.playback.as_mut() {
            Some(playback) => {
                playback.pose(&mut scene_view.scene, std::time::Instant::now());
                // SAFETY: `finish_slot` waited on this slot's fence, and region `slot` is only
                // read by this slot's frames.
                unsafe { gfx.scene.pose(&scene_view.scene, &scene_view.objects, slot as u32) }?;
                slot as u32
            }
            None => 0,
        };
        let same_frame = input.settings.same_frame;
        let queries = FrameQueries {
            hover: pixel,
            hover_radius: input.settings.hover_radius,
            click: input.take_click(),
            band: released_band,
            live_band: dragged_band.filter(|_| same_frame),
        };
        let camera = view.map(|v| scene_view.camera.matrices(v.aspect()));
        let mut plan = FramePlan {
            slot,
            frame: *frame_index,
            image: 0,
            extent: vk::Extent2D::default(),
            view,
            camera,
            queries,
            show_ids: input.settings.show_ids,
            invalid_pick,
            origin: scene_view.scene.origin,
            pose_region,
            picked_early: false,
        };
        if same_frame {
            // Before the panel, so it shows this frame's hover.
            gfx.pick_early(ctx, &mut plan, scene_view, pixel.is_some())?;
        }
        let Some((image, extent)) = gfx.acquire(slot, needs_rebuild)? else { return Ok(()) };
        (plan.image, plan.extent) = (image, extent);
        // The panel first: it decides what is shown this frame.
        let data = PanelData::new(&ctx.device_name, &gfx.picking, &gfx.id_buffer, dragged_band);
        let mut ui = panel.run(window, &data, &mut input.settings);
        gfx.upload_ui_textures(ctx, slot, &mut ui)?;
        gfx.record(ctx, &plan, &ui)?;
        gfx.submit_and_present(ctx, slot, image, needs_rebuild)?;
        if *frame_index == 0 {
            println!("ready: {}x{} on {}", extent.width, extent.height, ctx.device_name);
        }
        *frame_index += 1;
        Ok(())
    }
}

impl Gpu {
    fn rebuild_swapchain(&mut self, size: winit::dpi::PhysicalSize<u32>) -> Result<(), ViewerError> {
        self.ctx.wait_idle()?;
        let Some(gfx) = self.gfx.as_mut() else { return Ok(()) };
        // The old swapchain is retired by the new one's creation, then destroyed with its
        // views, framebuffers, semaphores and depth buffer.
        let old = gfx.swapchain.take();
        let old_handle = old.as_ref().map_or(vk::SwapchainKHR::null(), |s| s.handle);
        let s = &self.surface;
        let extent = vk::Extent2D { width: size.width, height: size.height };
        let made = Swapchain::new(&self.ctx, &s.loader, s.handle, s.format, &gfx.lit, extent, old_handle);
        drop(old);
        gfx.swapchain = made?;
        self.needs_rebuild = false;
        Ok(())
    }
}

/// What one frame records, decided before recording starts.
struct FramePlan {
    slot: usize,
    frame: u64,
    /// The acquired swapchain image and the swapchain's extent.
    image: usize,
    extent: vk::Extent2D,
    /// The 3D view and its camera (absent while the panel fills the window).
    view: Option<ViewRect>,
    camera: Option<CameraMatrices>,
    /// The hover query at the cursor, and a click or a released rubber band to select with.
    queries: FrameQueries,
    show_ids: bool,
    /// Test hook: hand the picker a non-finite view matrix this frame.
    invalid_pick: bool,
    /// The scene's origin in the file's world (hits are reported there; markers drawn here).
    origin: glam::DVec3,
    /// The pose region the lit pass and the picks read.
    pose_region: u32,
    /// The set was recorded and submitted early (the same-frame path): the frame's command
    /// buffer records no pick, and the lit pass tints from the GPU results.
    picked_early: bool,
}

impl Gfx {
    /// Waits for the slot's previous frame (as every frame loop does before reusing its
    /// command buffer), then takes what it produced: the pick result, the ID view, and egui
    /// textures to free. No extra stall.
    fn finish_slot(&mut self, ctx: &VulkanContext, slot: usize, frame: u64, shown: &SceneView, cursor_in_view: bool) -> Result<(), ViewerError> {
        let fence = self.frames.frames[slot].fence;
        // SAFETY: the fence is live.
        unsafe { ctx.device.wait_for_fences(&[fence], true, u64::MAX) }?;
        // SAFETY: the fence of the frame that last recorded into this slot has signalled.
        unsafe { self.picking.take_results(slot, frame, &shown.scene, &shown.objects, cursor_in_view) }?;
        // SAFETY: as above.
        unsafe { self.id_buffer.take(slot) }?;
        for id in std::mem::take(&mut self.frames.frames[slot].egui_free) {
            self.egui_renderer.free_texture(id).map_err(super::egui_error)?;
        }
        Ok(())
    }

    /// Records the frame into the slot's command buffer: the query set (hover, band), the ID
    /// view when shown, then the lit pass with the highlights and markers, and the panel on top.
    fn record(&mut self, ctx: &VulkanContext, plan: &FramePlan, ui: &PanelFrame) -> Result<(), ViewerError> {
        let slot = plan.slot;
        let markers = self.picking.shown_hit().map(|h| h.markers(0.008, plan.origin));
        // The same-frame path tints the hover from the GPU results, the ring path from the
        // result it took a round later.
        let hovered = self.scene.slot_of(self.picking.hovered.as_ref()).filter(|_| !plan.picked_early);
        let selected = &mut self.frames.selected_slots;
        selected.clear();
        selected.extend(self.picking.selection.entries().iter().filter_map(|s| self.scene.slot_of_node(s.scene_node)));
        // SAFETY: `finish_slot` waited on the slot's fence: the frame that last drew with this
        // style has completed.
        unsafe { self.frames.frames[slot].style.update_selection(hovered, selected, markers.as_ref()) }?;
        let cmd = self.frames.commands[slot];
        // SAFETY: `finish_slot` waited on the slot's fence, so its command buffer is idle.
        unsafe {
            ctx.device.reset_command_buffer(cmd, vk::CommandBufferResetFlags::empty())?;
            ctx.device.begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT))?;
        }
        let draws = &self.scene.gpu.pick_draws;
        let q = &plan.queries;
        let asks = q.hover.is_some() || q.band.is_some();
        if let (Some(view), Some(camera), true, false) = (plan.view, plan.camera.as_ref(), asks, plan.picked_early) {
            let contributors = self.scene.gpu.contributors();
            let request = pick_request(view, camera, plan.invalid_pick, &contributors);
            // SAFETY: `cmd` is recording outside a render pass; the scene's buffers live as long
            // as `self`, which outlives every frame's work (the device idles before it drops).
            unsafe { self.picking.record(cmd, slot, plan.frame, &request, draws, q) }?;
        }
        let recorded = self.picking.recorded;
        let tint = picking_vk_host::PickTint { set: self.pick_sets.set(slot), hover: recorded.hover, band_query: recorded.band };
        self.frames.frames[slot].style.tint = if plan.picked_early { tint } else { Default::default() };
        self.id_buffer.note_frame(plan.frame, plan.show_ids);
        if plan.show_ids {
            // SAFETY: `finish_slot` waited on the slot's fence; `cmd` is the slot's, recording
            // outside a render pass, and is submitted below.
            unsafe { self.id_buffer.texture.record_upload(ctx, &mut self.egui_renderer, cmd, slot) }?;
        }
        if let (true, Some(view), Some(camera)) = (plan.show_ids, plan.view, plan.camera.as_ref()) {
            // SAFETY: as for the pick; the context outlives `self`.
            unsafe { self.id_buffer.record(ctx, cmd, slot, view, camera, &self.scene.gpu) }?;
        }
        let Some(sc) = self.swapchain.as_ref() else { return Ok(()) };
        // SAFETY: `cmd` is recording; framebuffer and buffers are live.
        unsafe {
            self.lit.begin(cmd, sc.framebuffers[plan.image], plan.extent);
            if let (Some(view), Some(camera)) = (plan.view, plan.camera.as_ref()) {
                self.lit.draw_scene(cmd, &self.scene.gpu, plan.pose_region, &self.frames.frames[slot].style, camera, view.viewport(), markers.as_ref());
            }
        }
        self.egui_renderer.cmd_draw(cmd, plan.extent, ui.pixels_per_point, &ui.primitives).map_err(super::egui_error)?;
        // SAFETY: as above.
        unsafe {
            self.lit.end(cmd);
            ctx.device.end_command_buffer(cmd)?;
        }
        Ok(())
    }

    /// The same-frame path: records the frame's set into the slot's early command buffer,
    /// submits it first and takes its results now (see `Picking::pick_same_frame`).
    fn pick_early(&mut self, ctx: &VulkanContext, plan: &mut FramePlan, shown: &SceneView, cursor_in_view: bool) -> Result<(), ViewerError> {
        let q = &plan.queries;
        self.picking.recorded = Default::default();
        let (Some(view), Some(camera), true) = (plan.view, plan.camera.as_ref(), q.hover.is_some() || q.band.is_some() || q.live_band.is_some()) else {
            return Ok(());
        };
        let contributors = self.scene.gpu.contributors();
        let request = pick_request(view, camera, plan.invalid_pick, &contributors);
        let draws = &self.scene.gpu.pick_draws;
        // SAFETY: `finish_slot` waited on the slot's fence (the early submission went before
        // it); the scene's buffers outlive every frame's work.
        unsafe { self.picking.pick_same_frame(ctx, plan.slot, plan.frame, &request, draws, q, (&shown.scene, &shown.objects, cursor_in_view)) }?;
        plan.picked_early = true;
        Ok(())
    }

    /// The next swapchain image and the swapchain's extent; `None` when the swapchain is out
    /// of date (rebuilt next frame).
    fn acquire(&self, slot: usize, needs_rebuild: &mut bool) -> Result<Option<(usize, vk::Extent2D)>, ViewerError> {
        let Some(sc) = self.swapchain.as_ref() else { return Ok(None) };
        // SAFETY: swapchain and semaphore are live; the semaphore is unsignalled (its last
        // wait completed with this slot's fence).
        let acquired = unsafe { sc.loader.acquire_next_image(sc.handle, u64::MAX, self.frames.frames[slot].image_available, vk::Fence::null()) };
        match acquired {
            Ok((i, suboptimal)) => {
                *needs_rebuild |= suboptimal;
                Ok(Some((i as usize, sc.extent)))
            }
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => {
                *needs_rebuild = true;
                Ok(None)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Uploads the panel's new textures now, and queues the ones it freed until this frame
    /// completed; the deltas are then handled (egui checks that none is dropped unapplied).
    fn upload_ui_textures(&mut self, ctx: &VulkanContext, slot: usize, ui: &mut PanelFrame) -> Result<(), ViewerError> {
        for (id, deltas) in &ui.textures.set {
            for delta in deltas {
                self.egui_renderer.set_texture(ctx.queue, self.frames.commands.pool(), *id, delta).map_err(super::egui_error)?;
            }
        }
        self.frames.frames[slot].egui_free = ui.textures.free.iter().copied().collect();
        ui.textures.clear();
        Ok(())
    }

    fn submit_and_present(&self, ctx: &VulkanContext, slot: usize, image: usize, needs_rebuild: &mut bool) -> Result<(), ViewerError> {
        let Some(sc) = self.swapchain.as_ref() else { return Ok(()) };
        let frame = &self.frames.frames[slot];
        let waits = [frame.image_available];
        let stages = [vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT];
        let signals = [sc.render_finished[image]];
        let cmds = [self.frames.commands[slot]];
        let submit = vk::SubmitInfo::default().wait_semaphores(&waits).wait_dst_stage_mask(&stages).command_buffers(&cmds).signal_semaphores(&signals);
        // SAFETY: the fence was waited; everything submitted is live.
        unsafe {
            ctx.device.reset_fences(&[frame.fence])?;
            ctx.device.queue_submit(ctx.queue, &[submit], frame.fence)?;
        }
        let swapchains = [sc.handle];
        let indices = [image as u32];
        let present = vk::PresentInfoKHR::default().wait_semaphores(&signals).swapchains(&swapchains).image_indices(&indices);
        // SAFETY: the image was acquired and rendered this frame.
        match unsafe { sc.loader.queue_present(ctx.queue, &present) } {
            Ok(suboptimal) => *needs_rebuild |= suboptimal,
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => *needs_rebuild = true,
            Err(e) => return Err(e.into()),
        }
        Ok(())
    }
}

/// The pick request of the view and camera (a non-finite view matrix when the test hook asks).
fn pick_request<'a>(
    view: ViewRect,
    camera: &CameraMatrices,
    invalid: bool,
    contributors: &'a [&'a dyn picking_vk::contributor::PickContributor],
) -> PickRequest<'a> {
    let view_matrix = if invalid { glam::Mat4::NAN } else { camera.view };
    PickRequest::new(view.pick_viewport(), view_matrix, camera.projection)
        .with_depth(crate::camera::depth_convention(&camera.projection))
        .with_contributors(contributors)
}
