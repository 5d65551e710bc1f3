//! The camera as the passes see it: view and projection matrices and the eye.

use glam::{Mat4, Vec3};

/// View and projection for one frame (Vulkan clip space: y down, depth 0..1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraMatrices {
    pub view: Mat4,
    pub projection: Mat4,
    pub eye: Vec3,
}

/// A right-handed Vulkan perspective projection with reversed depth (`znear` at 1, `zfar` at
/// 0; `zfar: None` puts the far plane at infinity). With a float depth buffer, reversed depth
/// keeps about 24 bits of relative precision at every distance: a standard projection
/// crowds everything beyond a few `znear` into the last few values below 1, so a glTF camera
/// with znear 1e-6 drew nothing and picked the wrong one of two boxes 1 unit apart.
pub fn perspective_reverse_z(yfov: f32, aspect: f32, znear: f32, zfar: Option<f32>) -> Mat4 {
    match zfar {
        Some(far) => glam::camera::rh::proj::vulkan::perspective(yfov, aspect, far, znear),
        None => glam::camera::rh::proj::vulkan::perspective_infinite_reverse(yfov, aspect, znear),
    }
}

/// A right-handed Vulkan orthographic projection with standard depth (`znear` at 0, `zfar` at
/// 1): `xmag` and `ymag` are half the view's width and height, as glTF gives them. Its depth is
/// linear in distance, so standard depth keeps it precise: a float's spacing near 0 follows
/// the value, where reversed depth puts near surfaces near 1, spaced by `zfar` times 6e-8 (at
/// zfar 1e8 a surface 2 units off lost to one 5 units off).
pub fn orthographic(xmag: f32, ymag: f32, znear: f32, zfar: f32) -> Mat4 {
    glam::camera::rh::proj::vulkan::orthographic(-xmag, xmag, -ymag, ymag, znear, zfar)
}
