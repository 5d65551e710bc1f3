//! The camera as the passes see it: view and projection matrices and the eye.

use glam::{Mat4, Vec3};

/// View and projection for one frame (Vulkan clip space: y down, depth 0..1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraMatrices {
    pub view: Mat4,
    pub projection: Mat4,
    pub eye: Vec3,
}

/// A right-handed Vulkan perspective projection; `zfar: None` puts the far plane at infinity.
pub fn perspective(yfov: f32, aspect: f32, znear: f32, zfar: Option<f32>) -> Mat4 {
    match zfar {
        Some(far) => glam::camera::rh::proj::vulkan::perspective(yfov, aspect, znear, far),
        None => glam::camera::rh::proj::vulkan::perspective_infinite(yfov, aspect, znear),
    }
}
