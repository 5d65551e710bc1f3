//! Window cursor positions to framebuffer pixels: HiDPI scale and a view that fills only part
//! of the window (a panel beside it), possibly rendered at another resolution than shown.

use crate::error::{Input, PickError};
use glam::{DVec2, UVec2};

/// Where the 3D view is shown inside the window and what it is rendered at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ViewPlacement {
    /// Top-left corner of the view in the window, physical pixels.
    pub origin: DVec2,
    /// Size the view is shown at, physical pixels.
    pub size: DVec2,
    /// Size of the image the view is rendered into (equal to `size` unless scaled).
    pub render_extent: UVec2,
}

impl ViewPlacement {
    /// A view that fills a whole window of `extent` physical pixels, rendered 1:1.
    pub fn whole_window(extent: UVec2) -> Self {
        ViewPlacement { origin: DVec2::ZERO, size: extent.as_dvec2(), render_extent: extent }
    }
}

/// The framebuffer pixel under the cursor, or the nearest one when the cursor is off the view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CursorPixel {
    /// The cursor is over this pixel of the view.
    Inside(UVec2),
    /// The cursor is off the view.
    Outside {
        /// The pixel of the view nearest the cursor.
        nearest: UVec2,
    },
}

impl CursorPixel {
    /// The pixel when the cursor is on the view.
    pub fn inside(self) -> Option<UVec2> {
        match self {
            CursorPixel::Inside(p) => Some(p),
            CursorPixel::Outside { .. } => None,
        }
    }
}

/// Maps a cursor in logical window coordinates (as most toolkits report it) to the pixel of
/// the rendered view it covers (0 to `render_extent - 1`, origin top-left); a query needs the
/// viewport's offset added where the view's viewport does not start at (0, 0). Errors on non-finite input, a non-positive scale or an empty view.
pub fn cursor_to_pixel(cursor_logical: DVec2, scale_factor: f64, view: ViewPlacement) -> Result<CursorPixel, PickError> {
    if !cursor_logical.is_finite() || !scale_factor.is_finite() || scale_factor <= 0.0 {
        return Err(PickError::InvalidInput { input: Input::Cursor, reason: format!("{cursor_logical} at scale {scale_factor} is not usable") });
    }
    if !view.origin.is_finite() || !view.size.is_finite() || view.size.min_element() <= 0.0 || view.render_extent.min_element() == 0 {
        return Err(PickError::InvalidInput { input: Input::ViewPlacement, reason: format!("{view:?} is empty") });
    }
    let physical = cursor_logical * scale_factor;
    let in_view = (physical - view.origin) / view.size * view.render_extent.as_dvec2();
    let floor = in_view.floor();
    let max = (view.render_extent - UVec2::ONE).as_dvec2();
    let nearest = floor.clamp(DVec2::ZERO, max).as_uvec2();
    let inside = floor.x >= 0.0 && floor.y >= 0.0 && floor.x <= max.x && floor.y <= max.y;
    Ok(if inside { CursorPixel::Inside(nearest) } else { CursorPixel::Outside { nearest } })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_factor_and_view_offset() {
        // A 2x display; the view starts 300 physical px right of the window edge (a side panel).
        let view = ViewPlacement { origin: DVec2::new(300.0, 0.0), size: DVec2::new(1000.0, 800.0), render_extent: UVec2::new(1000, 800) };
        let p = cursor_to_pixel(DVec2::new(160.25, 10.75), 2.0, view).unwrap();
        assert_eq!(p, CursorPixel::Inside(UVec2::new(20, 21)));
        // On the panel, left of the view.
        let p = cursor_to_pixel(DVec2::new(100.0, 10.0), 2.0, view).unwrap();
        assert_eq!(p, CursorPixel::Outside { nearest: UVec2::new(0, 20) });
        // Last pixel and one past it.
        assert_eq!(cursor_to_pixel(DVec2::new(649.9, 399.9), 2.0, view).unwrap(), CursorPixel::Inside(UVec2::new(999, 799)));
        assert_eq!(cursor_to_pixel(DVec2::new(650.0, 100.0), 2.0, view).unwrap(), CursorPixel::Outside { nearest: UVec2::new(999, 200) });
    }

    #[test]
    fn view_rendered_at_another_resolution() {
        // Rendered at half resolution and stretched over the view.
        let view = ViewPlacement { origin: DVec2::new(10.0, 20.0), size: DVec2::new(400.0, 200.0), render_extent: UVec2::new(200, 100) };
        assert_eq!(cursor_to_pixel(DVec2::new(13.0, 23.0), 1.0, view).unwrap(), CursorPixel::Inside(UVec2::new(1, 1)));
        assert_eq!(cursor_to_pixel(DVec2::new(409.0, 219.0), 1.0, view).unwrap(), CursorPixel::Inside(UVec2::new(199, 99)));
    }

    #[test]
    fn bad_inputs_are_errors() {
        let view = ViewPlacement::whole_window(UVec2::new(64, 64));
        assert!(cursor_to_pixel(DVec2::new(f64::NAN, 1.0), 1.0, view).is_err());
        assert!(cursor_to_pixel(DVec2::new(1.0, 1.0), 0.0, view).is_err());
        assert!(cursor_to_pixel(DVec2::new(1.0, 1.0), 1.0, ViewPlacement::whole_window(UVec2::new(0, 64))).is_err());
    }
}
