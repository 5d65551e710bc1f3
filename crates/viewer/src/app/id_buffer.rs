//! The ID buffer debug view (`D`): the picker's pass over the whole 3D view, rendered by an
//! `IdImage` into the frame's command buffer, read once that frame completed, and shown in
//! false colour in the panel. One copy is in flight at a time.

use super::input::ViewRect;
use crate::id_view;
use crate::ViewerError;
use ash::vk;
use glam::UVec2;
use picking_vk::debug::{IdCopy, IdImage};
use picking_vk::{PickDraw, PickRequest, Viewport};
use picking_vk_context::VulkanContext;
use picking_vk_host::CameraMatrices;

#[derive(Default)]
pub(super) struct IdBufferView {
    image: Option<IdImage>,
    /// The frame slot whose command buffer holds the copy in flight.
    in_flight: Option<usize>,
}

impl IdBufferView {
    /// Records the view's IDs into frame slot `slot`'s `cmd`, unless a copy is in flight;
    /// the image follows the view's size.
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass; the draws' buffers and `ctx` outlive the
    /// frame's execution (and the image: `Gfx` drops first).
    pub unsafe fn record(
        &mut self,
        ctx: &VulkanContext,
        cmd: vk::CommandBuffer,
        slot: usize,
        view: ViewRect,
        camera: &CameraMatrices,
        draws: &[PickDraw],
    ) -> Result<(), ViewerError> {
        if self.in_flight.is_some() {
            return Ok(());
        }
        let (w, h) = (view.width, view.height);
        if self.image.as_ref().is_none_or(|i| i.extent() != (w, h)) {
            self.image = None;
            // SAFETY: per the contract, the context outlives the image.
            self.image = Some(unsafe { IdImage::new(ctx.host_device(), w, h) }?);
        }
        // The ID view shows the 3D view alone, so its viewport starts at the image origin.
        let request = PickRequest::new(UVec2::ZERO, Viewport::full(w, h), camera.view, camera.projection);
        if let Some(ids) = self.image.as_mut() {
            // SAFETY: per the contract; no other copy into the image is in flight.
            unsafe { ids.record(cmd, &request, draws, false, IdCopy::Whole) }?;
            self.in_flight = Some(slot);
        }
        Ok(())
    }

    /// The view recorded in `slot`, if that is where the copy in flight was, in false colour.
    ///
    /// # Safety
    /// The fence of the frame that last recorded into `slot` has signalled.
    pub unsafe fn take(&mut self, slot: usize) -> Result<Option<egui::ColorImage>, ViewerError> {
        if self.in_flight != Some(slot) {
            return Ok(None);
        }
        self.in_flight = None;
        let Some(ids) = &self.image else { return Ok(None) };
        // SAFETY: per the contract, the frame that recorded the copy has completed.
        let texels = unsafe { ids.read() }?;
        let (w, h) = ids.extent();
        let rgba: Vec<u8> = texels.iter().flat_map(id_view::false_colour).collect();
        Ok(Some(egui::ColorImage::from_rgba_unmultiplied([w as usize, h as usize], &rgba)))
    }
}
