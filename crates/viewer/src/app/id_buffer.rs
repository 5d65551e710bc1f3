//! The ID buffer debug view (`D`): the picker's pass over the whole 3D view, rendered by an
//! `IdImage` into the frame's command buffer, read once that frame completed, and shown in
//! false colour in the panel through the viewer's own texture (`id_texture`). One copy is in
//! flight at a time; nothing is allocated per frame. A view larger than [`MAX_ID_VIEW`] on a
//! side is drawn scaled down to it: the readback and the texture of a 16384 x 16384 view
//! would take some 3 GB.

use super::id_texture::IdTexture;
use super::view_rect::ViewRect;
use super::FRAMES_IN_FLIGHT;
use crate::id_view;
use crate::ViewerError;
use ash::vk;
use picking_vk::debug::{IdCopy, IdImage};
use picking_vk::{PickError, PickRequest, Viewport};
use picking_vk_context::VulkanContext;
use picking_vk_host::CameraMatrices;

/// The ID view's longest side at most, in pixels (the panel shows it far smaller).
const MAX_ID_VIEW: u32 = 2048;

/// The ID view's size for a 3D view of `width` x `height`: the same, or scaled down to
/// [`MAX_ID_VIEW`] on its longer side (the same aspect, at least a pixel a side).
fn id_view_extent(width: u32, height: u32) -> (u32, u32) {
    let longest = width.max(height);
    if longest <= MAX_ID_VIEW {
        return (width, height);
    }
    let scale = |side: u32| ((u64::from(side) * u64::from(MAX_ID_VIEW)).div_ceil(u64::from(longest)) as u32).clamp(1, MAX_ID_VIEW);
    (scale(width), scale(height))
}

pub(super) struct IdBufferView {
    image: Option<IdImage>,
    /// What the panel shows.
    pub texture: IdTexture,
    /// The frame slot whose command buffer holds the copy in flight.
    in_flight: Option<usize>,
    /// The last frame whose panel may have drawn the view.
    last_shown: Option<u64>,
    /// The latest error, until a view is shown again: shown in the panel, never fatal.
    pub error: Option<String>,
}

impl IdBufferView {
    pub fn new(ctx: &VulkanContext) -> Result<Self, ViewerError> {
        Ok(IdBufferView { image: None, texture: IdTexture::new(ctx)?, in_flight: None, last_shown: None, error: None })
    }

    /// Called once a frame, after the slot's fence and the panel: notes whether the view is
    /// shown in `frame`. Once it has not been for as many frames as are in flight, and no copy
    /// is pending, its images and buffers go: hiding the view gives its memory back.
    pub fn note_frame(&mut self, frame: u64, shown: bool) {
        if shown {
            self.last_shown = Some(frame);
        } else if self.last_shown.is_some_and(|f| frame >= f + FRAMES_IN_FLIGHT as u64) && self.in_flight.is_none() {
            // No frame that drew the texture or rendered into the image is still running.
            self.image = None;
            self.texture.release();
            self.last_shown = None;
        }
    }

    /// Records the view's IDs (the scene's pick draws and contributors) into frame slot
    /// `slot`'s `cmd`, unless a copy is in flight; the image follows the view's size.
    ///
    /// # Safety
    /// `cmd` is recording outside a render pass; the scene's buffers and `ctx` outlive the
    /// frame's execution (and the image: `Gfx` drops first).
    pub unsafe fn record(
        &mut self,
        ctx: &VulkanContext,
        cmd: vk::CommandBuffer,
        slot: usize,
        view: ViewRect,
        camera: &CameraMatrices,
        scene: &picking_vk_host::GpuScene,
    ) -> Result<(), ViewerError> {
        let (draws, contributors) = (&scene.pick_draws, scene.contributors());
        if self.in_flight.is_some() {
            return Ok(());
        }
        let (w, h) = id_view_extent(view.width, view.height);
        if self.image.as_ref().is_none_or(|i| i.extent() != (w, h)) {
            // The old image goes first: no copy into it is in flight.
            self.image = None;
            // SAFETY: per the contract, the context outlives the image.
            self.image = self.check(unsafe { IdImage::new(ctx.host_device(), w, h) })?;
        }
        // The ID view shows the 3D view alone, so its viewport starts at the image origin.
        let request = PickRequest::new(Viewport::full(w, h), camera.view, camera.projection)
            .with_depth(crate::camera::depth_convention(&camera.projection))
            .with_contributors(&contributors);
        if let Some(ids) = self.image.as_mut() {
            // SAFETY: per the contract; no other copy into the image is in flight.
            let recorded = unsafe { ids.record(cmd, &request, draws, None, IdCopy::Whole) };
            if self.check(recorded)?.is_some() {
                self.in_flight = Some(slot);
            }
        }
        Ok(())
    }

    /// Device loss is the caller's; other errors are kept for the panel.
    fn check<T>(&mut self, outcome: Result<T, PickError>) -> Result<Option<T>, ViewerError> {
        super::picking::keep_for_panel(&mut self.error, outcome, None)
    }

    /// Takes the view recorded in `slot`, if that is where the copy in flight was: its false
    /// colours go to the texture, to be uploaded by the next frame recorded.
    ///
    /// # Safety
    /// The fence of the frame that last recorded into `slot` has signalled.
    pub unsafe fn take(&mut self, slot: usize) -> Result<(), ViewerError> {
        if self.in_flight != Some(slot) {
            return Ok(());
        }
        self.in_flight = None;
        let Some(ids) = &self.image else { return Ok(()) };
        // SAFETY: per the contract, the frame that recorded the copy has completed.
        let read = unsafe { ids.read() };
        let (w, h) = ids.extent();
        let Some(texels) = self.check(read)? else { return Ok(()) };
        self.error = None;
        self.texture.stage(w, h, |rgba| rgba.extend(texels.iter().flat_map(id_view::false_colour)));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_views_are_drawn_scaled_down_to_the_cap() {
        assert_eq!(id_view_extent(1920, 1080), (1920, 1080));
        assert_eq!(id_view_extent(2048, 2048), (2048, 2048));
        assert_eq!(id_view_extent(16384, 16384), (2048, 2048));
        assert_eq!(id_view_extent(16384, 8192), (2048, 1024));
        assert_eq!(id_view_extent(4097, 1), (2048, 1));
        assert_eq!(id_view_extent(1, 100_000), (1, 2048));
    }
}
