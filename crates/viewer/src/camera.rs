//! Cameras: the scene's glTF camera, or an orbit camera framing the scene that the mouse
//! drives (drag to rotate, right-drag or shift-drag to pan, wheel to zoom).

use crate::scene::{CameraDesc, Scene};
use glam::Vec3;
use picking_vk_host::camera::perspective;
use picking_vk_host::CameraMatrices;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OrbitCamera {
    pub target: Vec3,
    pub distance: f32,
    pub yaw: f32,
    pub pitch: f32,
    pub yfov: f32,
    pub znear: f32,
    pub zfar: Option<f32>,
}

impl OrbitCamera {
    /// Frames the scene's bounds from above and in front.
    pub fn framing(scene: &Scene) -> Self {
        let (lo, hi) = scene.bounds();
        let radius = ((hi - lo).length() * 0.5).max(0.01);
        let yfov = 0.8f32;
        OrbitCamera {
            target: (lo + hi) * 0.5,
            distance: radius / (yfov * 0.5).sin() * 1.05,
            yaw: 0.35,
            pitch: 0.45,
            yfov,
            znear: radius * 0.01,
            zfar: Some(radius * 20.0),
        }
    }

    /// An orbit camera placed where a glTF camera is, looking at the same point.
    pub fn from_desc(desc: &CameraDesc, scene: &Scene) -> Self {
        let eye = desc.world.transform_point3(Vec3::ZERO);
        let forward = desc.world.transform_vector3(-Vec3::Z).normalize_or(-Vec3::Z);
        let (lo, hi) = scene.bounds();
        // Orbit around the point on the view axis closest to the scene's centre.
        let distance = (((lo + hi) * 0.5 - eye).dot(forward)).max(desc.znear * 10.0);
        let target = eye + forward * distance;
        let dir = (eye - target).normalize_or(Vec3::Z);
        OrbitCamera { target, distance, yaw: dir.x.atan2(dir.z), pitch: dir.y.clamp(-1.0, 1.0).asin(), yfov: desc.yfov, znear: desc.znear, zfar: desc.zfar }
    }

    pub fn eye(&self) -> Vec3 {
        let dir = Vec3::new(self.pitch.cos() * self.yaw.sin(), self.pitch.sin(), self.pitch.cos() * self.yaw.cos());
        self.target + dir * self.distance
    }

    pub fn matrices(&self, aspect: f32) -> CameraMatrices {
        let eye = self.eye();
        let view = glam::camera::rh::view::look_at_mat4(eye, self.target, Vec3::Y);
        CameraMatrices { view, projection: perspective(self.yfov, aspect, self.znear, self.zfar), eye }
    }

    pub fn rotate(&mut self, dx: f32, dy: f32) {
        self.yaw -= dx * 0.008;
        self.pitch = (self.pitch + dy * 0.008).clamp(-1.5, 1.5);
    }

    pub fn pan(&mut self, dx: f32, dy: f32, viewport_height: f32) {
        let m = self.matrices(1.0);
        let right = Vec3::new(m.view.x_axis.x, m.view.y_axis.x, m.view.z_axis.x);
        let up = Vec3::new(m.view.x_axis.y, m.view.y_axis.y, m.view.z_axis.y);
        let scale = 2.0 * self.distance * (self.yfov * 0.5).tan() / viewport_height.max(1.0);
        self.target += (-right * dx + up * dy) * scale;
    }

    pub fn zoom(&mut self, steps: f32) {
        self.distance = (self.distance * 0.9f32.powf(steps)).max(self.znear * 2.0);
    }
}

/// The matrices of the scene's own camera (exactly as authored), for headless runs.
pub fn scene_camera(desc: &CameraDesc, aspect: f32) -> CameraMatrices {
    CameraMatrices {
        view: desc.world.inverse(),
        projection: perspective(desc.yfov, aspect, desc.znear, desc.zfar),
        eye: desc.world.transform_point3(Vec3::ZERO),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orbit_eye_sits_at_distance_and_looks_at_target() {
        let cam = OrbitCamera { target: Vec3::new(1.0, 2.0, 3.0), distance: 5.0, yaw: 0.3, pitch: 0.2, yfov: 0.8, znear: 0.1, zfar: Some(100.0) };
        assert!((cam.eye().distance(cam.target) - 5.0).abs() < 1e-5);
        let m = cam.matrices(1.5);
        let t = m.view.transform_point3(cam.target);
        assert!(t.x.abs() < 1e-4 && t.y.abs() < 1e-4 && t.z < 0.0, "target straight ahead: {t}");
    }

    #[test]
    fn orbit_from_a_gltf_camera_keeps_its_eye_and_direction() {
        let world = glam::camera::rh::view::look_at_mat4(Vec3::new(0.0, 3.0, 6.0), Vec3::ZERO, Vec3::Y).inverse();
        let desc = CameraDesc { world, yfov: 0.7, znear: 0.1, zfar: Some(50.0) };
        let scene = Scene::default();
        let cam = OrbitCamera::from_desc(&desc, &scene);
        assert!((cam.eye() - Vec3::new(0.0, 3.0, 6.0)).length() < 1e-3, "{}", cam.eye());
    }
}
