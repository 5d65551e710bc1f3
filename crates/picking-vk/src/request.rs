//! What the host asks for each frame: which pixel, seen through which camera and viewport.

use crate::error::PickError;
use crate::id::ObjectId;
use glam::{Mat4, UVec2};

/// How the host's projection maps depth, and so which depth test the pick pass uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DepthConvention {
    /// Near maps to 0, far to 1; depth cleared to 1, `LESS` wins.
    #[default]
    Standard,
    /// Near maps to 1, far (possibly infinite) to 0; depth cleared to 0, `GREATER` wins.
    Reverse,
}

/// The host's `VkViewport` for the view being picked, in framebuffer pixels. Height must be
/// positive (a y-flip belongs in the projection matrix).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Viewport {
    pub x: f32,
    pub y: f32,
    pub width: f32,
    pub height: f32,
    pub min_depth: f32,
    pub max_depth: f32,
}

impl Viewport {
    /// A viewport covering `width` x `height` pixels from the origin, depth 0..1.
    pub fn full(width: u32, height: u32) -> Self {
        Viewport { x: 0.0, y: 0.0, width: width as f32, height: height as f32, min_depth: 0.0, max_depth: 1.0 }
    }

    pub(crate) fn validate(&self) -> Result<(), PickError> {
        let all = [self.x, self.y, self.width, self.height, self.min_depth, self.max_depth];
        if all.iter().any(|v| !v.is_finite()) {
            return Err(PickError::InvalidRequest(format!("viewport has a non-finite value: {self:?}")));
        }
        if self.width < 1.0 || self.height < 1.0 {
            return Err(PickError::InvalidRequest(format!("viewport is empty: {} x {}", self.width, self.height)));
        }
        if !(0.0..=1.0).contains(&self.min_depth) || !(0.0..=1.0).contains(&self.max_depth) {
            return Err(PickError::InvalidRequest("viewport depth range must lie in 0..=1".into()));
        }
        Ok(())
    }

    /// Whether the pixel's centre lies inside the viewport rectangle.
    pub fn contains_pixel(&self, pixel: UVec2) -> bool {
        let (cx, cy) = (pixel.x as f64 + 0.5, pixel.y as f64 + 0.5);
        let (x, y) = (f64::from(self.x), f64::from(self.y));
        cx >= x && cy >= y && cx < x + f64::from(self.width) && cy < y + f64::from(self.height)
    }
}

/// Leaves an object, or some of its instances, out of one request: the surface behind shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ignore {
    /// Every draw with this ID.
    Object(ObjectId),
    /// Instances `start..start + count` of the draws with this ID.
    Instances { id: ObjectId, start: u32, count: u32 },
}

impl Ignore {
    /// One instance of an object.
    pub fn instance(id: ObjectId, index: u32) -> Self {
        Ignore::Instances { id, start: index, count: 1 }
    }
}

/// One frame's pick: the framebuffer pixel, the camera and viewport the host renders with,
/// and which draws take part.
#[derive(Clone, Copy)]
pub struct PickRequest<'a> {
    /// Framebuffer pixel, origin top-left (see [`crate::cursor_to_pixel`]).
    pub pixel: UVec2,
    pub viewport: Viewport,
    pub view: Mat4,
    pub projection: Mat4,
    /// Draws for which this returns `false` neither hit nor occlude.
    pub filter: Option<&'a dyn Fn(ObjectId) -> bool>,
    pub ignore: &'a [Ignore],
}

impl<'a> PickRequest<'a> {
    pub fn new(pixel: UVec2, viewport: Viewport, view: Mat4, projection: Mat4) -> Self {
        PickRequest { pixel, viewport, view, projection, filter: None, ignore: &[] }
    }

    pub fn with_filter(mut self, filter: &'a dyn Fn(ObjectId) -> bool) -> Self {
        self.filter = Some(filter);
        self
    }

    pub fn with_ignore(mut self, ignore: &'a [Ignore]) -> Self {
        self.ignore = ignore;
        self
    }

    /// Whether a draw with this ID takes part at all (filter and whole-object ignores).
    pub(crate) fn admits(&self, id: ObjectId) -> bool {
        if self.ignore.contains(&Ignore::Object(id)) {
            return false;
        }
        self.filter.is_none_or(|f| f(id))
    }
}

impl std::fmt::Debug for PickRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PickRequest")
            .field("pixel", &self.pixel)
            .field("viewport", &self.viewport)
            .field("filter", &self.filter.is_some())
            .field("ignore", &self.ignore)
            .finish_non_exhaustive()
    }
}

/// Splits `0..count` into the instance ranges that survive the request's instance ignores,
/// calling `emit(start, count)` for each, in order, without allocating.
pub(crate) fn visible_instance_ranges(id: ObjectId, count: u32, ignore: &[Ignore], mut emit: impl FnMut(u32, u32)) {
    let mut start = 0u32;
    while start < count {
        // The earliest ignored range that covers or follows `start`.
        let mut next_cut: Option<(u32, u32)> = None;
        for rule in ignore {
            if let Ignore::Instances { id: rid, start: s, count: c } = *rule {
                let end = s.saturating_add(c);
                if rid != id || c == 0 || end <= start {
                    continue;
                }
                let s = s.max(start);
                if next_cut.is_none_or(|(ns, _)| s < ns) {
                    next_cut = Some((s, end));
                } else if let Some((ns, ne)) = next_cut {
                    if s == ns && end > ne {
                        next_cut = Some((ns, end));
                    }
                }
            }
        }
        match next_cut {
            Some((s, e)) if s < count => {
                if s > start {
                    emit(start, s - start);
                }
                start = e;
            }
            _ => {
                emit(start, count - start);
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(count: u32, ignore: &[Ignore]) -> Vec<(u32, u32)> {
        let mut out = vec![];
        visible_instance_ranges(ObjectId::new(5).unwrap(), count, ignore, |s, c| out.push((s, c)));
        out
    }

    #[test]
    fn instance_ignores_cut_ranges() {
        let id = ObjectId::new(5).unwrap();
        let other = ObjectId::new(6).unwrap();
        assert_eq!(ranges(10, &[]), vec![(0, 10)]);
        assert_eq!(ranges(10, &[Ignore::instance(id, 0)]), vec![(1, 9)]);
        assert_eq!(ranges(10, &[Ignore::instance(id, 9)]), vec![(0, 9)]);
        assert_eq!(ranges(10, &[Ignore::instance(other, 3)]), vec![(0, 10)]);
        assert_eq!(ranges(10, &[Ignore::Instances { id, start: 6, count: 2 }, Ignore::Instances { id, start: 2, count: 3 }]), vec![(0, 2), (5, 1), (8, 2)]);
        // Overlapping and out-of-range ignores.
        assert_eq!(ranges(10, &[Ignore::Instances { id, start: 2, count: 3 }, Ignore::Instances { id, start: 3, count: 4 }]), vec![(0, 2), (7, 3)]);
        assert_eq!(ranges(4, &[Ignore::Instances { id, start: 2, count: u32::MAX }]), vec![(0, 2)]);
        assert_eq!(ranges(4, &[Ignore::Instances { id, start: 0, count: 4 }]), vec![]);
    }

    #[test]
    fn viewport_checks() {
        let vp = Viewport { x: 10.0, y: 20.0, width: 100.0, height: 50.0, min_depth: 0.0, max_depth: 1.0 };
        vp.validate().unwrap();
        assert!(vp.contains_pixel(UVec2::new(10, 20)));
        assert!(vp.contains_pixel(UVec2::new(109, 69)));
        assert!(!vp.contains_pixel(UVec2::new(110, 69)));
        assert!(!vp.contains_pixel(UVec2::new(9, 30)));
        assert!(Viewport { width: 0.0, ..vp }.validate().is_err());
        assert!(Viewport { x: f32::NAN, ..vp }.validate().is_err());
        assert!(Viewport { max_depth: 2.0, ..vp }.validate().is_err());
    }
}
