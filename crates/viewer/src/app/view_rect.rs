//! Where the 3D view sits in the window (all of it but the side panel), and window positions
//! to the view's framebuffer pixels: the cursor's pixel for the hover query, and the nearest
//! pixel of the view for a rubber band's corner that went off it.

use ash::vk;
use glam::{DVec2, UVec2};
use picking_vk::{cursor_to_pixel, CursorPixel, ViewPlacement, Viewport};

/// Width of the side panel, logical pixels. The panel is on the left, so the 3D view starts
/// at an offset: cursor mapping must account for it.
pub(super) const PANEL_WIDTH: f64 = 330.0;

/// The 3D view in the framebuffer, physical pixels.
#[derive(Clone, Copy, Debug)]
pub(super) struct ViewRect {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

impl ViewRect {
    /// The 3D view in a framebuffer of `extent`: all but the panel on the left.
    pub fn in_framebuffer(extent: vk::Extent2D, scale_factor: f64) -> Option<Self> {
        let panel = ((PANEL_WIDTH * scale_factor).round() as u32).min(extent.width);
        let width = extent.width - panel;
        (width > 0 && extent.height > 0).then_some(ViewRect { x: panel, y: 0, width, height: extent.height })
    }

    pub fn aspect(&self) -> f32 {
        self.width as f32 / self.height as f32
    }

    /// The view's viewport, for the lit pass and the pick request alike.
    pub fn viewport(&self) -> vk::Viewport {
        picking_vk_host::vk_util::viewport(self.x, self.y, self.width, self.height)
    }

    /// The same viewport as the picker takes it.
    pub fn pick_viewport(&self) -> Viewport {
        let v = self.viewport();
        Viewport { x: v.x, y: v.y, width: v.width, height: v.height, min_depth: v.min_depth, max_depth: v.max_depth }
    }

    /// The framebuffer pixel under `cursor` (physical pixels), when it is over the view.
    pub fn pixel_under(&self, cursor: DVec2, scale_factor: f64) -> Option<UVec2> {
        self.locate(cursor, scale_factor)?.inside().map(|p| p + self.origin())
    }

    /// The framebuffer pixel under `cursor`, or the view's pixel nearest it when it is off
    /// the view (a rubber band dragged past the view's edge stops there). `None` only for a
    /// position that is not a number.
    pub fn nearest_pixel(&self, cursor: DVec2, scale_factor: f64) -> Option<UVec2> {
        let (CursorPixel::Inside(p) | CursorPixel::Outside { nearest: p }) = self.locate(cursor, scale_factor)?;
        Some(p + self.origin())
    }

    fn origin(&self) -> UVec2 {
        UVec2::new(self.x, self.y)
    }

    /// Where `cursor` falls relative to the view, in the view's own pixels.
    fn locate(&self, cursor: DVec2, scale_factor: f64) -> Option<CursorPixel> {
        let placement = ViewPlacement {
            origin: DVec2::new(f64::from(self.x), f64::from(self.y)),
            size: DVec2::new(f64::from(self.width), f64::from(self.height)),
            render_extent: UVec2::new(self.width, self.height),
        };
        cursor_to_pixel(cursor / scale_factor, scale_factor, placement).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_off_the_view_clamp_to_its_edge() {
        let view = ViewRect::in_framebuffer(vk::Extent2D { width: 1280, height: 760 }, 1.0).unwrap();
        assert_eq!(view.pixel_under(DVec2::new(400.5, 10.5), 1.0), Some(UVec2::new(400, 10)));
        assert_eq!(view.pixel_under(DVec2::new(100.0, 10.0), 1.0), None, "over the panel");
        assert_eq!(view.nearest_pixel(DVec2::new(100.0, 10.0), 1.0), Some(UVec2::new(330, 10)));
        assert_eq!(view.nearest_pixel(DVec2::new(5000.0, -40.0), 1.0), Some(UVec2::new(1279, 0)));
        assert_eq!(view.nearest_pixel(DVec2::new(f64::NAN, 0.0), 1.0), None);
        // A 2x display: the panel is 660 physical pixels wide.
        let hidpi = ViewRect::in_framebuffer(vk::Extent2D { width: 2560, height: 1520 }, 2.0).unwrap();
        assert_eq!(hidpi.nearest_pixel(DVec2::new(0.0, 3000.0), 2.0), Some(UVec2::new(660, 1519)));
    }
}
