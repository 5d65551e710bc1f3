//! The camera of one request, prepared once in f64: the depth convention read off the
//! projection and viewport, and the maps between pixels, depths and world space, exactly as
//! the rasterizer maps them forward (Vulkan conventions: NDC y down, depth 0..1).

use crate::draw::raster::Culling;
use crate::error::{Input, PickError};
use crate::request::viewport::Viewport;
use glam::{DMat4, DVec2, DVec3, DVec4, Mat4, UVec2};

/// Which way framebuffer depth grows, and so which depth test the pick pass uses. The picker
/// reads it off the request's projection and viewport; a request may also state it
/// ([`crate::PickRequest::with_depth`]), and a statement the projection contradicts is refused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DepthConvention {
    /// Near maps to a smaller depth than far: depth cleared to 1, `LESS` wins.
    #[default]
    Standard,
    /// Near maps to a larger depth than far (reverse-Z, possibly with an infinite far plane):
    /// depth cleared to 0, `GREATER` wins.
    Reverse,
}

impl DepthConvention {
    /// The strict depth test under which the nearer fragment wins.
    pub(crate) fn nearer_wins(self) -> ash::vk::CompareOp {
        match self {
            DepthConvention::Standard => ash::vk::CompareOp::LESS,
            DepthConvention::Reverse => ash::vk::CompareOp::GREATER,
        }
    }

    /// The framebuffer depth of the far end of the range: what the pass clears to.
    pub(crate) fn far_depth(self) -> f32 {
        match self {
            DepthConvention::Standard => 1.0,
            DepthConvention::Reverse => 0.0,
        }
    }
}

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
pub(crate) struct CameraSnapshot {
    /// World to view, as the host gave it.
    pub view: DMat4,
    pub view_projection: DMat4,
    pub inverse_view_projection: DMat4,
    pub eye: DVec3,
    pub viewport: Viewport,
    /// Framebuffer depth convention.
    pub depth: DepthConvention,
    /// NDC z of the near plane: 0, or 1 for a reverse-Z projection.
    near_ndc_z: f64,
    /// The request's culling, for draws that state none: with the depth convention, how the
    /// pass rasterizes what the host draws.
    pub culling: Culling,
}

impl CameraSnapshot {
    /// Checks the matrices (finite, invertible), reads the depth convention off the
    /// projection and viewport (checking `stated` against it), and prepares the inverses.
    pub fn new(view: Mat4, projection: Mat4, viewport: Viewport, stated: Option<DepthConvention>) -> Result<Self, PickError> {
        if !view.is_finite() || !projection.is_finite() {
            return Err(PickError::InvalidInput { input: Input::Camera, reason: "the view or projection matrix has a non-finite element".into() });
        }
        viewport.validate()?;
        let view = view.as_dmat4();
        let projection = projection.as_dmat4();
        let view_projection = projection * view;
        let det = view_projection.determinant();
        let inv_view_det = view.determinant();
        if !det.is_finite() || det.abs() < 1e-300 || inv_view_det.abs() < 1e-300 {
            return Err(PickError::InvalidInput { input: Input::Camera, reason: "the view-projection matrix is singular".into() });
        }
        let near_ndc_z = near_plane_ndc_z(&projection.inverse()).or(stated.map(|d| match d {
            DepthConvention::Standard => 0.0,
            DepthConvention::Reverse => 1.0,
        }));
        let near_ndc_z = near_ndc_z.unwrap_or(0.0);
        let depth = framebuffer_convention(near_ndc_z, &viewport).or(stated).unwrap_or_default();
        if let Some(stated) = stated.filter(|&s| s != depth) {
            let reason = format!(
                "the request states {stated:?} depth, but its projection and viewport map the near plane to framebuffer depth {} \
                 and the far plane to {} ({depth:?})",
                viewport.depth_of_ndc(near_ndc_z),
                viewport.depth_of_ndc(1.0 - near_ndc_z)
            );
            return Err(PickError::InvalidInput { input: Input::Camera, reason });
        }
        let eye = view.inverse().w_axis.truncate();
        let inverse_view_projection = view_projection.inverse();
        Ok(CameraSnapshot { view, view_projection, inverse_view_projection, eye, viewport, depth, near_ndc_z, culling: Culling::NONE })
    }

    /// NDC x/y of a pixel's centre.
    pub fn pixel_center_ndc(&self, pixel: UVec2) -> DVec2 {
        self.framebuffer_to_ndc(pixel.as_dvec2() + 0.5)
    }

    /// NDC x/y of a framebuffer position (pixel units, origin top-left).
    pub fn framebuffer_to_ndc(&self, at: DVec2) -> DVec2 {
        let vp = &self.viewport;
        let fx = (at.x - f64::from(vp.x)) / f64::from(vp.width);
        let fy = (at.y - f64::from(vp.y)) / f64::from(vp.height);
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

    /// The depth value the pass clears to: the far end of the framebuffer depth range.
    pub fn clear_depth(&self) -> f32 {
        self.depth.far_depth()
    }

    /// The f32 matrix the pick pass pushes for a draw with `model`: the product taken in f64,
    /// rounded once. Occlusion proves its sure hits with this same matrix.
    pub(crate) fn model_view_projection(&self, model: &Mat4) -> Mat4 {
        (self.view_projection * model.as_dmat4()).as_mat4()
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
        self.ray_at(pixel.as_dvec2() + 0.5)
    }

    /// The ray through a framebuffer position (pixel units), as [`CameraSnapshot::pixel_ray`].
    pub fn ray_at(&self, at: DVec2) -> Option<Ray> {
        let xy = self.framebuffer_to_ndc(at);
        let origin = self.unproject_ndc(DVec3::new(xy.x, xy.y, self.near_ndc_z))?;
        let inside = self.unproject_ndc(DVec3::new(xy.x, xy.y, 0.5))?;
        let direction = (inside - origin).try_normalize()?;
        Some(Ray { origin, direction })
    }
}

/// NDC z (0 or 1) of the near plane, read off the inverse projection: the end of the view
/// axis nearer the eye. `None` when that cannot be told: an orthographic projection whose
/// depth range reaches behind the eye, or one centred on it; the request's statement (or
/// standard depth) decides then.
fn near_plane_ndc_z(inverse_projection: &DMat4) -> Option<f64> {
    let at = |z: f64| *inverse_projection * DVec4::new(0.0, 0.0, z, 1.0);
    let (p0, p1) = (at(0.0), at(1.0));
    // Orthographic (w constant): the eye has no place on the axis, so both planes must lie on
    // one side of the view-space origin for "nearer" to mean anything.
    if (p0.w - p1.w).abs() <= 1e-12 * p0.w.abs().max(p1.w.abs()) {
        let (z0, z1) = (p0.z / p0.w, p1.z / p1.w);
        if z0 * z1 <= 0.0 {
            return None;
        }
    }
    // Distance from the eye (the view-space origin) of the view axis at NDC depth z; a point
    // at infinity (w = 0, an infinite far plane) is infinitely far.
    let distance = |p: DVec4| if p.w.abs() < 1e-300 { f64::INFINITY } else { (p.truncate() / p.w).length() };
    let (d0, d1) = (distance(p0), distance(p1));
    if d0.is_nan() || d1.is_nan() || d0 == d1 {
        None
    } else if d0 < d1 {
        Some(0.0)
    } else {
        Some(1.0)
    }
}

/// Which way framebuffer depth grows from near to far through `viewport`'s depth range (a
/// viewport with min_depth > max_depth reverses it); `None` for an empty depth range.
fn framebuffer_convention(near_ndc_z: f64, viewport: &Viewport) -> Option<DepthConvention> {
    let (near, far) = (viewport.depth_of_ndc(near_ndc_z), viewport.depth_of_ndc(1.0 - near_ndc_z));
    if near < far {
        Some(DepthConvention::Standard)
    } else if near > far {
        Some(DepthConvention::Reverse)
    } else {
        None
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
        CameraSnapshot::new(view, proj, vp, Some(depth)).unwrap()
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
        let cam = CameraSnapshot::new(view, proj, Viewport::full(101, 101), None).unwrap();
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
        assert!(CameraSnapshot::new(nan, Mat4::IDENTITY, vp, None).is_err());
        assert!(CameraSnapshot::new(Mat4::IDENTITY, Mat4::ZERO, vp, None).is_err());
        assert!(CameraSnapshot::new(Mat4::IDENTITY, Mat4::IDENTITY, Viewport::full(0, 10), None).is_err());
    }

    #[test]
    fn the_depth_convention_is_read_off_projection_and_viewport() {
        let view = look_at_mat4(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO, Vec3::Y);
        let vp = Viewport::full(64, 48);
        let cases = [
            (vulkan::perspective(1.0, 1.5, 0.1, 100.0), DepthConvention::Standard),
            (vulkan::perspective(1.0, 1.5, 100.0, 0.1), DepthConvention::Reverse),
            (vulkan::perspective_infinite(1.0, 1.5, 0.1), DepthConvention::Standard),
            (vulkan::perspective_infinite_reverse(1.0, 1.5, 0.1), DepthConvention::Reverse),
            (glam::camera::rh::proj::vulkan::orthographic(-2.0, 2.0, -2.0, 2.0, 0.5, 30.0), DepthConvention::Standard),
        ];
        for (proj, want) in cases {
            let cam = CameraSnapshot::new(view, proj, vp, None).unwrap();
            assert_eq!(cam.depth, want);
            let other = match want {
                DepthConvention::Standard => DepthConvention::Reverse,
                DepthConvention::Reverse => DepthConvention::Standard,
            };
            let err = CameraSnapshot::new(view, proj, vp, Some(other)).unwrap_err();
            assert!(err.to_string().contains("states"), "{err}");
            // A viewport with its depth range reversed turns the framebuffer convention over.
            let flipped = Viewport { min_depth: 1.0, max_depth: 0.0, ..vp };
            assert_eq!(CameraSnapshot::new(view, proj, flipped, None).unwrap().depth, other);
            // The ray starts on the near plane and points into the scene either way.
            let ray = CameraSnapshot::new(view, proj, flipped, None).unwrap().pixel_ray(UVec2::new(32, 24)).unwrap();
            assert!(ray.direction.z < -0.99 && ray.origin.z < 5.0 && ray.origin.z > 4.0, "{ray:?}");
        }
    }

    #[test]
    fn a_negative_height_viewport_flips_y() {
        let view = look_at_mat4(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO, Vec3::Y);
        let proj = vulkan::perspective(1.0, 1.0, 0.1, 100.0);
        let up = CameraSnapshot::new(view, proj, Viewport::full(64, 64), None).unwrap();
        let flipped = Viewport { y: 64.0, height: -64.0, ..Viewport::full(64, 64) };
        let down = CameraSnapshot::new(view, proj, flipped, None).unwrap();
        // Pixel row 3 of the flipped view sees what row 60 of the plain one sees.
        let a = up.pixel_ray(UVec2::new(10, 60)).unwrap();
        let b = down.pixel_ray(UVec2::new(10, 3)).unwrap();
        assert!((a.direction - b.direction).length() < 1e-12, "{a:?} {b:?}");
    }

    #[test]
    fn an_orthographic_view_reaching_behind_the_eye_takes_the_stated_convention() {
        let view = look_at_mat4(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO, Vec3::Y);
        let proj = glam::camera::rh::proj::vulkan::orthographic(-2.0, 2.0, -2.0, 2.0, -20.0, 10.0);
        let vp = Viewport::full(64, 48);
        assert_eq!(CameraSnapshot::new(view, proj, vp, None).unwrap().depth, DepthConvention::Standard);
        let stated = CameraSnapshot::new(view, proj, vp, Some(DepthConvention::Standard)).unwrap();
        assert_eq!(stated.depth, DepthConvention::Standard, "a CAD-style near plane behind the eye is not taken for reverse-Z");
    }
}
