//! The queries of one frame's query set: points, points with a pick radius, and rectangles.
//! Each is checked against the view and the picker's limits before anything is recorded.

use crate::error::{Input, Limit, PickError};
use crate::request::viewport::Viewport;
use glam::UVec2;

/// A half-open rectangle of framebuffer pixels: columns `min.x..max.x`, rows `min.y..max.y`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PixelRect {
    /// The first column and row inside.
    pub min: UVec2,
    /// One past the last column and row inside.
    pub max: UVec2,
}

impl PixelRect {
    /// The rectangle from `min` (inside) to `max` (outside).
    pub fn new(min: UVec2, max: UVec2) -> Self {
        PixelRect { min, max }
    }

    /// The rectangle spanned by two corner pixels in any order, both inside (a rubber band;
    /// a corner at `u32::MAX` stays one pixel short of it).
    pub fn spanning(a: UVec2, b: UVec2) -> Self {
        PixelRect { min: a.min(b), max: a.max(b).saturating_add(UVec2::ONE) }
    }

    /// Columns and rows covered (0 when empty).
    pub fn size(&self) -> UVec2 {
        self.max.saturating_sub(self.min)
    }

    /// Pixels covered.
    pub fn area(&self) -> u64 {
        let s = self.size();
        u64::from(s.x) * u64::from(s.y)
    }

    /// Whether no pixel is covered.
    pub fn is_empty(&self) -> bool {
        self.area() == 0
    }

    /// Whether `pixel` is inside.
    pub fn contains(&self, pixel: UVec2) -> bool {
        pixel.cmpge(self.min).all() && pixel.cmplt(self.max).all()
    }

    /// The pixels both rectangles cover.
    pub fn intersection(&self, other: &PixelRect) -> PixelRect {
        let min = self.min.max(other.min);
        PixelRect { min, max: self.max.min(other.max).max(min) }
    }
}

/// What a rectangle query reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RectMode {
    /// Every object and instance that is the nearest surface at some pixel of the rectangle.
    #[default]
    Visible,
    /// Every object and instance whose geometry covers some pixel centre of the rectangle,
    /// occluded or not ("select through"). Needs [`crate::PickFeatures::SELECT_THROUGH`].
    All,
}

/// One query of a frame's query set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PickQuery {
    /// What lies under one pixel, as [`crate::Picker::record`] reports it. Pixels of every
    /// query are absolute framebuffer coordinates: the viewport's offset included, origin
    /// top-left, y down (a flipped viewport's too). [`crate::cursor_to_pixel`] gives a pixel
    /// of the rendered view: add the viewport's `x` and `y` where the view does not start at
    /// the framebuffer's corner.
    Point(UVec2),
    /// A hit within `radius` pixels of `pixel` (Euclidean distance between pixel centres),
    /// chosen by `snap`.
    Radius {
        /// The cursor's pixel.
        pixel: UVec2,
        /// At most [`crate::PickerConfig::max_radius`].
        radius: u32,
        /// Which hit of the disc answers.
        snap: Snap,
    },
    /// The objects in a rectangle of pixels (clipped to the view).
    Rect {
        /// The rectangle.
        rect: PixelRect,
        /// Visible surfaces only, or everything.
        mode: RectMode,
    },
}

/// How a radius query chooses among the hits in its disc (the pixels whose centres lie within
/// the radius of the cursor's). First, under either rule, only hits of draws with the highest
/// [`PickDraw::priority`](crate::PickDraw::priority) found in the disc take part.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Snap {
    /// The hit nearest the cursor: the smallest distance between pixel centres, then the
    /// nearer surface (depth), then the first pixel in row-major order. Where the cursor's
    /// own pixel hits a draw of that top priority, that is the answer.
    #[default]
    Nearest,
    /// The object that shows the fewest pixels in the disc, so a thin object (a pole, a
    /// wire, a small part) wins over the large surface behind or around it. Objects are told
    /// apart by ID and instance. The answer is the chosen object's pixel nearest the cursor
    /// (ties as for `Nearest`). Objects with as many pixels go by that pixel: nearer the
    /// cursor, then the nearer surface, then the object seen first in row-major order.
    Thin,
}

/// A query's place in its frame's results: [`crate::FrameResults::get`] takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QueryTicket {
    /// The frame the query was recorded in.
    pub frame: u64,
    /// Its position in the query list handed to [`crate::Picker::record`] (64 bits:
    /// no position aliases another).
    pub index: u64,
}

/// The pixels a viewport covers (pixel centres inside it).
pub(crate) fn view_pixels(viewport: &Viewport) -> PixelRect {
    let (top, bottom) = viewport.rows();
    let x0 = f64::from(viewport.x);
    let x1 = x0 + f64::from(viewport.width);
    // Pixel c is inside when c + 0.5 lies in [lo, hi).
    let first = |lo: f64| (lo - 0.5).ceil().max(0.0).min(f64::from(u32::MAX)) as u32;
    let end = |hi: f64| (hi - 0.5).ceil().max(0.0).min(f64::from(u32::MAX)) as u32;
    PixelRect { min: UVec2::new(first(x0), first(top)), max: UVec2::new(end(x1), end(bottom)) }
}

/// A query as the picker records it: pixels clipped to the view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CheckedQuery {
    /// A point, or a radius query: `region` holds the pixels within `radius` (clipped).
    Hit {
        pixel: UVec2,
        radius: Option<(u32, Snap)>,
        region: PixelRect,
    },
    Rect {
        rect: PixelRect,
        mode: RectMode,
    },
}

impl PickQuery {
    /// Checks the query against the view and the picker's limits.
    pub(crate) fn check(&self, index: usize, view: &PixelRect, max_radius: u32, select_through: bool) -> Result<CheckedQuery, PickError> {
        let outside = |p: UVec2| PickError::OutsideView { x: p.x.into(), y: p.y.into() };
        match *self {
            PickQuery::Point(pixel) => {
                if !view.contains(pixel) {
                    return Err(outside(pixel));
                }
                Ok(CheckedQuery::Hit { pixel, radius: None, region: PixelRect { min: pixel, max: pixel + UVec2::ONE } })
            }
            PickQuery::Radius { pixel, radius, snap } => {
                if !view.contains(pixel) {
                    return Err(outside(pixel));
                }
                if radius > max_radius {
                    return Err(PickError::Capacity { limit: Limit::Radius, configured: max_radius.into(), asked: radius.into() });
                }
                let r = UVec2::splat(radius);
                let around = PixelRect { min: pixel.saturating_sub(r), max: pixel.saturating_add(r).saturating_add(UVec2::ONE) };
                Ok(CheckedQuery::Hit { pixel, radius: Some((radius, snap)), region: around.intersection(view) })
            }
            PickQuery::Rect { rect, mode } => {
                if rect.is_empty() {
                    return Err(PickError::InvalidInput { input: Input::Query(Some(index)), reason: format!("empty rectangle {rect:?}") });
                }
                let clipped = rect.intersection(view);
                if clipped.is_empty() {
                    return Err(outside(rect.min));
                }
                if mode == RectMode::All && !select_through {
                    return Err(PickError::Unsupported {
                        missing: vec![crate::error::Requirement::Feature("fragmentStoresAndAtomics (PickFeatures::SELECT_THROUGH)")],
                    });
                }
                Ok(CheckedQuery::Rect { rect: clipped, mode })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn view_pixels_follow_pixel_centres() {
        let vp = Viewport { x: 10.0, y: 20.0, width: 100.0, height: 50.0, min_depth: 0.0, max_depth: 1.0 };
        let r = view_pixels(&vp);
        assert_eq!((r.min, r.max), (UVec2::new(10, 20), UVec2::new(110, 70)));
        for p in [r.min, r.max - UVec2::ONE] {
            assert!(vp.contains_pixel(p));
        }
        assert!(!vp.contains_pixel(r.max));
        let flipped = Viewport { y: 70.0, height: -50.0, ..vp };
        assert_eq!(view_pixels(&flipped), r);
        let odd = Viewport { x: 0.6, width: 2.0, ..vp };
        assert_eq!((view_pixels(&odd).min.x, view_pixels(&odd).max.x), (1, 3), "centres 1.5 and 2.5 lie in [0.6, 2.6)");
    }

    #[test]
    fn queries_are_clipped_and_checked() {
        let view = PixelRect::new(UVec2::ZERO, UVec2::new(64, 32));
        let q = PickQuery::Radius { pixel: UVec2::new(1, 30), radius: 4, snap: Snap::Nearest }.check(0, &view, 8, false).unwrap();
        assert_eq!(
            q,
            CheckedQuery::Hit { pixel: UVec2::new(1, 30), radius: Some((4, Snap::Nearest)), region: PixelRect::new(UVec2::new(0, 26), UVec2::new(6, 32)) }
        );
        assert!(PickQuery::Radius { pixel: UVec2::new(1, 1), radius: 9, snap: Snap::Nearest }.check(0, &view, 8, false).is_err());
        assert!(matches!(PickQuery::Point(UVec2::new(64, 0)).check(0, &view, 8, false), Err(PickError::OutsideView { .. })));
        let rect = PickQuery::Rect { rect: PixelRect::new(UVec2::new(60, 10), UVec2::new(90, 12)), mode: RectMode::Visible };
        assert_eq!(
            rect.check(0, &view, 8, false).unwrap(),
            CheckedQuery::Rect { rect: PixelRect::new(UVec2::new(60, 10), UVec2::new(64, 12)), mode: RectMode::Visible }
        );
        let off = PickQuery::Rect { rect: PixelRect::new(UVec2::new(70, 10), UVec2::new(90, 12)), mode: RectMode::Visible };
        assert!(matches!(off.check(0, &view, 8, false), Err(PickError::OutsideView { .. })));
        let all = PickQuery::Rect { rect: PixelRect::new(UVec2::ZERO, UVec2::ONE), mode: RectMode::All };
        assert!(matches!(all.check(0, &view, 8, false), Err(PickError::Unsupported { .. })));
        assert_eq!(PixelRect::spanning(UVec2::new(5, 2), UVec2::new(3, 4)), PixelRect::new(UVec2::new(3, 2), UVec2::new(6, 5)));
        assert_eq!(PixelRect::spanning(UVec2::ZERO, UVec2::MAX).max, UVec2::MAX, "no overflow");
        let huge = PickQuery::Rect { rect: PixelRect::new(UVec2::ZERO, UVec2::MAX), mode: RectMode::Visible };
        assert_eq!(huge.check(0, &view, 8, false).unwrap(), CheckedQuery::Rect { rect: view, mode: RectMode::Visible }, "clipped to the view");
        let far = PickQuery::Radius { pixel: UVec2::new(63, 31), radius: 8, snap: Snap::Nearest };
        assert!(far.check(0, &view, u32::MAX, false).is_ok(), "a huge maximum radius does not overflow");
    }
}
