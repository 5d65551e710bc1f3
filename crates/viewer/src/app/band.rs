//! The rubber band (Shift + left drag over the 3D view): the rectangle it covers in the view's
//! framebuffer pixels, which is what its release asks the picker for, and its outline drawn
//! over the view while it is dragged.

use super::view_rect::ViewRect;
use glam::DVec2;
use picking_vk::{PixelRect, RectMode};

/// A rubber band: its corners as window positions (physical pixels; the pointer may be off
/// the window) and how it selects.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Band {
    pub from: DVec2,
    pub to: DVec2,
    /// Alt held: select through (everything under the band, hidden or not).
    pub through: bool,
    /// Ctrl held: add to the selection instead of replacing it.
    pub add: bool,
}

/// A band ready for the picker: its pixels and how it selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BandQuery {
    pub rect: PixelRect,
    pub mode: RectMode,
    pub add: bool,
}

impl Band {
    pub fn mode(&self) -> RectMode {
        if self.through {
            RectMode::All
        } else {
            RectMode::Visible
        }
    }

    /// The band in `view`'s framebuffer pixels, both corners included; a corner off the view
    /// counts at the view's nearest pixel, so the band never reaches past the view.
    pub fn query(&self, view: ViewRect, scale_factor: f64) -> Option<BandQuery> {
        let a = view.nearest_pixel(self.from, scale_factor)?;
        let b = view.nearest_pixel(self.to, scale_factor)?;
        Some(BandQuery { rect: PixelRect::spanning(a, b), mode: self.mode(), add: self.add })
    }
}

/// Draws the band over the 3D view, on egui's foreground layer (above the panel's own
/// layers, never taking input): a translucent fill with an outline, blue for visible
/// objects, orange for select-through; a `+` at the corner when it adds to the selection.
pub(super) fn paint(ctx: &egui::Context, band: &BandQuery) {
    let ppp = ctx.pixels_per_point();
    let corner = |p: glam::UVec2| egui::pos2(p.x as f32 / ppp, p.y as f32 / ppp);
    let rect = egui::Rect::from_min_max(corner(band.rect.min), corner(band.rect.max));
    let (stroke, fill) = match band.mode {
        RectMode::Visible => (egui::Color32::from_rgb(90, 170, 255), egui::Color32::from_rgba_unmultiplied(90, 170, 255, 40)),
        RectMode::All => (egui::Color32::from_rgb(255, 160, 60), egui::Color32::from_rgba_unmultiplied(255, 160, 60, 40)),
    };
    let painter = ctx.layer_painter(egui::LayerId::new(egui::Order::Foreground, egui::Id::new("rubber band")));
    painter.rect(rect, 0.0, fill, egui::Stroke::new(1.5, stroke), egui::StrokeKind::Inside);
    let label = match (band.mode, band.add) {
        (RectMode::Visible, false) => "",
        (RectMode::Visible, true) => "+",
        (RectMode::All, false) => "through",
        (RectMode::All, true) => "+ through",
    };
    if !label.is_empty() {
        painter.text(rect.left_top() + egui::vec2(4.0, 2.0), egui::Align2::LEFT_TOP, label, egui::FontId::proportional(13.0), stroke);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ash::vk;
    use glam::UVec2;

    #[test]
    fn a_band_is_clamped_to_the_view_in_any_direction() {
        let view = ViewRect::in_framebuffer(vk::Extent2D { width: 1280, height: 760 }, 1.0).unwrap();
        // Dragged up and left, past the panel and the top edge.
        let band = Band { from: DVec2::new(900.2, 500.7), to: DVec2::new(50.0, -20.0), through: true, add: false };
        let q = band.query(view, 1.0).unwrap();
        assert_eq!(q.rect, PixelRect::new(UVec2::new(330, 0), UVec2::new(901, 501)));
        assert_eq!(q.mode, RectMode::All);
        let inside = Band { from: DVec2::new(400.0, 300.0), to: DVec2::new(410.0, 305.0), through: false, add: true };
        let q = inside.query(view, 1.0).unwrap();
        assert_eq!((q.rect.size(), q.mode, q.add), (UVec2::new(11, 6), RectMode::Visible, true));
    }
}
