//! Turning a pixel and a depth back into world space, in f64, exactly as the rasterizer maps
//! them forward (Vulkan conventions: NDC y down the framebuffer, depth 0..1).

use crate::error::PickError;
use crate::request::{DepthConvention, Viewport};
use glam::{DMat4, DVec2, DVec3, DVec4, Mat4, UVec2};

/// A ray through the picked pixel's centre.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ray {
    /// On the near plane.
    pub origin: DVec3,
    /// Unit length, pointing into the scene.
    pub direction: DVec3,
}

/// The camera of one request, prepared once: inverse view-projection and eye position.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraSnapshot {
    pub view_projection: DMat4,
    pub inverse_view_projection: DMat4,
    pub eye: DVec3,
    pub viewport: Viewport,
    pub depth: DepthConvention,
}

impl CameraSnapshot {
    /// Checks the matrices (finite, invertible) and prepares the inverses.
    pub fn new(view: Mat4, projection: Mat4, viewport: Viewport, depth: DepthConvention) -> Result<Self, PickError> {
        if !view.is_finite() || !projection.is_finite() {
            return Err(PickError::InvalidRequest("view or projection matrix has a non-finite element".into()));
        }
        viewport.validate()?;
        let view = view.as_dmat4();
        let view_projection = projection.as_dmat4() * view;
        let det = view_projection.determinant();
        let inv_view_det = view.determinant();
        if !det.is_finite() || det.abs() < 1e-300 || inv_view_det.abs() < 1e-300 {
            return Err(PickError::InvalidRequest("view-projection matrix is singular".into()));
        }
        let eye = view.inverse().w_axis.truncate();
        Ok(CameraSnapshot { view_projection, inverse_view_projection: view_projection.inverse(), eye, viewport, depth })
    }

    /// NDC x/y of a pixel's centre.
    pub fn pixel_center_ndc(&self, pixel: UVec2) -> DVec2 {
        let vp = &self.viewport;
        let fx = (pixel.x as f64 + 0.5 - f64::from(vp.x)) / f64::from(vp.width);
        let fy = (pixel.y as f64 + 0.5 - f64::from(vp.y)) / f64::from(vp.height);
        DVec2::new(fx * 2.0 - 1.0, fy * 2.0 - 1.0)
    }

    /// NDC z of a framebuffer depth value.
    pub fn depth_to_ndc_z(&self, depth: f32) -> f64 {
        let (min, max) = (f64::from(self.viewport.min_depth), f64::from(self.viewport.max_depth));
        if max == min {
            return f64::from(depth);
        }
        (f64::from(depth) - min) / (max - min)
    }

    /// The world point at NDC (x, y, z); `None` when it lies at infinity.
    pub fn unproject_ndc(&self, ndc: DVec3) -> Option<DVec3> {
        let p = self.inverse_view_projection * DVec4::new(ndc.x, ndc.y, ndc.z, 1.0);
        if p.w.abs() < 1e-300 || !p.is_finite() {
            return None;
        }
        Some(p.truncate() / p.w)
    }

    /// The world point under a pixel's centre at a framebuffer depth.
    pub fn unproject_pixel(&self, pixel: UVec2, depth: f32) -> Option<DVec3> {
        let xy = self.pixel_center_ndc(pixel);
        self.unproject_ndc(DVec3::new(xy.x, xy.y, self.depth_to_ndc_z(depth)))
    }

    /// The ray through a pixel's centre: from the near plane, through a point half way in NDC
    /// depth (finite even for an infinite far plane).
    pub fn pixel_ray(&self, pixel: UVec2) -> Option<Ray> {
        let xy = self.pixel_center_ndc(pixel);
        let near_z = match self.depth {
            DepthConvention::Standard => 0.0,
            DepthConvention::Reverse => 1.0,
        };
        let origin = self.unproject_ndc(DVec3::new(xy.x, xy.y, near_z))?;
        let inside = self.unproject_ndc(DVec3::new(xy.x, xy.y, 0.5))?;
        let direction = (inside - origin).try_normalize()?;
        Some(Ray { origin, direction })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::camera::rh::{proj::vulkan, view::look_at_mat4};
    use glam::Vec3;

    fn camera(depth: DepthConvention, infinite: bool) -> CameraSnapshot {
        let view = look_at_mat4(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO, Vec3::Y);
        let proj = match (depth, infinite) {
            (DepthConvention::Standard, false) => vulkan::perspective(1.0, 1.5, 0.1, 100.0),
            (DepthConvention::Reverse, false) => vulkan::perspective(1.0, 1.5, 100.0, 0.1),
            (DepthConvention::Reverse, true) => vulkan::perspective_infinite_reverse(1.0, 1.5, 0.1),
            (DepthConvention::Standard, true) => vulkan::perspective_infinite(1.0, 1.5, 0.1),
        };
        let vp = Viewport { x: 30.0, y: 10.0, width: 300.0, height: 200.0, min_depth: 0.0, max_depth: 1.0 };
        CameraSnapshot::new(view, proj, vp, depth).unwrap()
    }

    /// Projects a world point to (pixel-space x, y, depth) as the rasterizer would.
    fn project(cam: &CameraSnapshot, p: DVec3) -> DVec3 {
        let c = cam.view_projection * p.extend(1.0);
        let n = c.truncate() / c.w;
        let vp = cam.viewport;
        DVec3::new(f64::from(vp.x) + (n.x + 1.0) * 0.5 * f64::from(vp.width), f64::from(vp.y) + (n.y + 1.0) * 0.5 * f64::from(vp.height), n.z)
    }

    #[test]
    fn unprojection_inverts_projection_for_every_convention() {
        for (depth, infinite) in
            [(DepthConvention::Standard, false), (DepthConvention::Reverse, false), (DepthConvention::Reverse, true), (DepthConvention::Standard, true)]
        {
            let cam = camera(depth, infinite);
            for world in [DVec3::new(0.3, -0.2, 1.0), DVec3::new(-1.0, 0.5, -3.0), DVec3::new(0.0, 0.0, -40.0)] {
                let s = project(&cam, world);
                // Place the point exactly at a pixel centre by moving along the view ray.
                let pixel = UVec2::new((s.x - 0.5).round() as u32, (s.y - 0.5).round() as u32);
                let ray = cam.pixel_ray(pixel).unwrap();
                let t = (world - ray.origin).dot(ray.direction);
                let on_ray = ray.origin + ray.direction * t;
                let depth_value = project(&cam, on_ray).z as f32;
                let back = cam.unproject_pixel(pixel, depth_value).unwrap();
                let tol = 1e-4 * (1.0 + t.abs()) * if infinite { 20.0 } else { 1.0 };
                assert!((back - on_ray).length() < tol, "{depth:?} inf={infinite}: {back} vs {on_ray}");
            }
        }
    }

    #[test]
    fn ray_at_view_centre_looks_down_minus_z() {
        let view = Mat4::IDENTITY;
        let proj = vulkan::perspective(1.0, 1.0, 0.1, 10.0);
        let cam = CameraSnapshot::new(view, proj, Viewport::full(101, 101), DepthConvention::Standard).unwrap();
        let ray = cam.pixel_ray(UVec2::new(50, 50)).unwrap();
        assert!((ray.direction - DVec3::NEG_Z).length() < 1e-9, "{:?}", ray.direction);
        assert!((ray.origin - DVec3::new(0.0, 0.0, -0.1)).length() < 1e-7, "{:?}", ray.origin); // near = 0.1f32
        assert_eq!(cam.eye, DVec3::ZERO);
    }

    #[test]
    fn pixels_below_map_to_positive_ndc_y() {
        let cam = camera(DepthConvention::Standard, false);
        let top = cam.pixel_center_ndc(UVec2::new(30, 10));
        let bottom = cam.pixel_center_ndc(UVec2::new(329, 209));
        assert!(top.x < -0.99 && top.y < -0.99 && bottom.x > 0.99 && bottom.y > 0.99);
    }

    #[test]
    fn bad_matrices_are_refused() {
        let vp = Viewport::full(10, 10);
        let nan = Mat4::from_cols_array(&[f32::NAN; 16]);
        assert!(CameraSnapshot::new(nan, Mat4::IDENTITY, vp, DepthConvention::Standard).is_err());
        assert!(CameraSnapshot::new(Mat4::IDENTITY, Mat4::ZERO, vp, DepthConvention::Standard).is_err());
        assert!(CameraSnapshot::new(Mat4::IDENTITY, Mat4::IDENTITY, Viewport::full(0, 10), DepthConvention::Standard).is_err());
    }
}
