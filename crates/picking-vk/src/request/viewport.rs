//! The host's `VkViewport`, taken as it is: offset, negative height (the usual y-flip) and a
//! reversed depth range included.

use crate::error::{Input, PickError, Requirement};
use glam::UVec2;

/// The device's viewport limits: `viewportBoundsRange`, `maxViewportDimensions`, and whether
/// a negative height is allowed (Vulkan 1.1 or `VK_KHR_maintenance1`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ViewportLimits {
    pub bounds: [f32; 2],
    pub max: [u32; 2],
    pub negative_height: bool,
}

impl ViewportLimits {
    /// The limits of a device with these `limits`; `negative_height` from
    /// `PickSupport::negative_viewport_height` (taken as a value: the request stage comes
    /// before the host contract).
    pub fn of(limits: &ash::vk::PhysicalDeviceLimits, negative_height: bool) -> Self {
        ViewportLimits { bounds: limits.viewport_bounds_range, max: limits.max_viewport_dimensions, negative_height }
    }

    /// Checks `vp` moved by (`dx`, `dy`) pixels against the limits.
    pub fn check(&self, vp: &Viewport, dx: f64, dy: f64) -> Result<(), PickError> {
        if vp.height < 0.0 && !self.negative_height {
            return Err(PickError::Unsupported { missing: vec![Requirement::ApiVersion(1, 1)] });
        }
        let x = f64::from(vp.x) + dx;
        let (top, bottom) = vp.rows();
        let (top, bottom) = (top + dy, bottom + dy);
        let [lo, hi] = self.bounds.map(f64::from);
        let [max_w, max_h] = self.max.map(f64::from);
        let too_large = f64::from(vp.width) > max_w || (bottom - top) > max_h;
        if too_large || x < lo || top < lo || x + f64::from(vp.width) > hi || bottom > hi {
            return Err(PickError::Unsupported {
                missing: vec![Requirement::Limit {
                    name: "viewportBoundsRange / maxViewportDimensions",
                    needed: format!("a viewport of {}x{} at ({x}, {top}); the device allows {:?} within {:?}", vp.width, vp.height, self.max, self.bounds),
                }],
            });
        }
        Ok(())
    }
}

/// The host's `VkViewport` for the view being picked, in framebuffer pixels. A negative
/// `height` (Vulkan 1.1) flips y as it does in the host's pass: `y` is then the bottom edge.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Viewport {
    /// Where NDC x = -1 lands.
    pub x: f32,
    /// Where NDC y = -1 lands (the top edge, or the bottom one when `height` is negative).
    pub y: f32,
    /// Width in pixels.
    pub width: f32,
    /// Height in pixels; negative flips y.
    pub height: f32,
    /// Framebuffer depth of NDC z = 0.
    pub min_depth: f32,
    /// Framebuffer depth of NDC z = 1.
    pub max_depth: f32,
}

impl From<ash::vk::Viewport> for Viewport {
    fn from(v: ash::vk::Viewport) -> Self {
        Viewport { x: v.x, y: v.y, width: v.width, height: v.height, min_depth: v.min_depth, max_depth: v.max_depth }
    }
}

impl From<Viewport> for ash::vk::Viewport {
    fn from(v: Viewport) -> Self {
        ash::vk::Viewport { x: v.x, y: v.y, width: v.width, height: v.height, min_depth: v.min_depth, max_depth: v.max_depth }
    }
}

impl Viewport {
    /// A viewport covering `width` x `height` pixels from the origin, depth 0..1.
    pub fn full(width: u32, height: u32) -> Self {
        Viewport { x: 0.0, y: 0.0, width: width as f32, height: height as f32, min_depth: 0.0, max_depth: 1.0 }
    }

    pub(crate) fn validate(&self) -> Result<(), PickError> {
        let all = [self.x, self.y, self.width, self.height, self.min_depth, self.max_depth];
        if all.iter().any(|v| !v.is_finite()) {
            return Err(PickError::InvalidInput { input: Input::Viewport, reason: format!("a non-finite value: {self:?}") });
        }
        if self.width < 1.0 || self.height.abs() < 1.0 {
            return Err(PickError::InvalidInput { input: Input::Viewport, reason: format!("empty: {} x {}", self.width, self.height) });
        }
        if !(0.0..=1.0).contains(&self.min_depth) || !(0.0..=1.0).contains(&self.max_depth) {
            return Err(PickError::InvalidInput { input: Input::Viewport, reason: "its depth range must lie in 0..=1".into() });
        }
        if self.min_depth == self.max_depth {
            // Every fragment lands on one depth: the depth test cannot tell surfaces apart.
            let reason = format!("its depth range is empty (min_depth = max_depth = {}): depth cannot order surfaces", self.min_depth);
            return Err(PickError::InvalidInput { input: Input::Viewport, reason });
        }
        Ok(())
    }

    /// The rows the viewport covers, top to bottom: `(top, bottom)` with `top < bottom`.
    pub(crate) fn rows(&self) -> (f64, f64) {
        let (a, b) = (f64::from(self.y), f64::from(self.y) + f64::from(self.height));
        (a.min(b), a.max(b))
    }

    /// Framebuffer depth of an NDC depth.
    pub(crate) fn depth_of_ndc(&self, z: f64) -> f64 {
        f64::from(self.min_depth) + z * (f64::from(self.max_depth) - f64::from(self.min_depth))
    }

    /// Whether the pixel's centre lies inside the viewport rectangle.
    pub fn contains_pixel(&self, pixel: UVec2) -> bool {
        let (cx, cy) = (pixel.x as f64 + 0.5, pixel.y as f64 + 0.5);
        let x = f64::from(self.x);
        let (top, bottom) = self.rows();
        cx >= x && cy >= top && cx < x + f64::from(self.width) && cy < bottom
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(Viewport { min_depth: 1.0, max_depth: 1.0, ..vp }.validate().is_err(), "an empty depth range orders nothing");
        Viewport { min_depth: 1.0, max_depth: 0.0, ..vp }.validate().unwrap();
        // A y-flipped viewport covers the same rows from its bottom edge up.
        let flipped = Viewport { y: 70.0, height: -50.0, ..vp };
        flipped.validate().unwrap();
        assert!(flipped.contains_pixel(UVec2::new(10, 20)) && flipped.contains_pixel(UVec2::new(109, 69)));
        assert!(!flipped.contains_pixel(UVec2::new(50, 70)) && !flipped.contains_pixel(UVec2::new(50, 19)));
        assert!(Viewport { height: -0.5, ..vp }.validate().is_err());
    }
}
