//! Where the pass draws: the host's viewport placed on the pass's target (whole, or shifted
//! by whole pixels so a queried region lands on its cell or tile), and the scissor.

use super::PassRecording;
use crate::request::viewport::Viewport;
use ash::vk;
use glam::Vec2;

/// How the host's viewport maps onto the pass's render target.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Framing {
    /// A target as large as the host's framebuffer, optionally scissored to one pixel.
    FullView { scissor: Option<glam::UVec2> },
    /// A region of pixels placed at `at` in a small target (a query's cell or tile): the
    /// host's viewport is shifted by whole pixels so the region's first pixel lands there, and
    /// the scissor is the region. Rasterization is the host's, translated by whole pixels.
    Region { first: glam::UVec2, size: glam::UVec2, at: glam::UVec2 },
}

impl PassRecording<'_> {
    /// The host's viewport placed on this pass's target, and the scissor.
    pub(super) fn viewport_and_scissor(&self, vp: Viewport) -> (vk::Viewport, vk::Rect2D) {
        let pixel_rect = |x: i32, y: i32| vk::Rect2D { offset: vk::Offset2D { x, y }, extent: vk::Extent2D { width: 1, height: 1 } };
        match self.framing {
            // Shift by whole pixels so the requested pixel lands on texel (0, 0).
            Framing::Region { first, size, at } => {
                let dx = at.x as f32 - first.x as f32;
                let dy = at.y as f32 - first.y as f32;
                let scissor = vk::Rect2D { offset: vk::Offset2D { x: at.x as i32, y: at.y as i32 }, extent: vk::Extent2D { width: size.x, height: size.y } };
                (vk::Viewport { x: vp.x + dx, y: vp.y + dy, ..vp.into() }, scissor)
            }
            Framing::FullView { scissor } => {
                let viewport = vp.into();
                let scissor = match scissor {
                    Some(pixel) => pixel_rect(pixel.x as i32, pixel.y as i32),
                    None => vk::Rect2D { offset: vk::Offset2D::default(), extent: self.targets.extent },
                };
                (viewport, scissor)
            }
        }
    }

    /// Sets the viewport and scissor.
    ///
    /// # Safety
    /// Inside the render pass begun by [`PassRecording::begin`].
    pub unsafe fn set_view(&self, (viewport, scissor): &(vk::Viewport, vk::Rect2D)) {
        let host = self.camera.viewport;
        self.pixel_shift.set(Vec2::new(viewport.x - host.x, viewport.y - host.y));
        // SAFETY: the caller's contract.
        unsafe {
            self.device.cmd_set_viewport(self.cmd, 0, &[*viewport]);
            self.device.cmd_set_scissor(self.cmd, 0, &[*scissor]);
        }
    }

    /// The viewport and scissor for one region of a query set.
    pub fn region_view(&self, first: glam::UVec2, size: glam::UVec2, at: glam::UVec2, viewport: Viewport) -> (vk::Viewport, vk::Rect2D) {
        let this = PassRecording { framing: Framing::Region { first, size, at }, ..self.clone() };
        this.viewport_and_scissor(viewport)
    }
}
