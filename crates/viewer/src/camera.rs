//! Cameras: the scene's glTF camera, or an orbit camera framing the scene that the mouse
//! drives (drag to rotate, right-drag or shift-drag to pan, wheel to zoom).
//!
//! The orbit camera stays usable whatever the input: the distance is clamped to a range set
//! by the scene's size, the target cannot be panned further than that range from the scene,
//! pans are guarded against tiny views, and the far plane always reaches past the scene, so
//! the scene never vanishes and the matrices never become singular or non-finite.

use crate::scene::{CameraDesc, Lens, Scene};
use glam::{DMat4, DVec3, Vec3};
use picking_vk::DepthConvention;
use picking_vk_host::camera::{orthographic, perspective_reverse_z};
use picking_vk_host::CameraMatrices;

/// The depth convention the viewer draws and picks a projection with: reversed for a
/// perspective one ([`perspective_reverse_z`]), whose precision then holds at every distance;
/// standard for an orthographic one ([`orthographic`]: its depth is linear). It is stated
/// with every pick, since an orthographic projection whose near plane is the eye's (znear 0)
/// does not show which way its depth goes.
pub fn depth_convention(projection: &glam::Mat4) -> DepthConvention {
    if projection.row(3) == glam::Vec4::W {
        DepthConvention::Standard
    } else {
        DepthConvention::Reverse
    }
}

/// How far out the wheel zooms, in scene radii (the scene then spans about 2% of the view).
pub const MAX_ZOOM_OUT_RADII: f32 = 100.0;
/// Pans treat a view shorter than this (physical pixels) as this tall: in a 1-pixel view a
/// 1-pixel cursor move would otherwise pan by the whole view.
pub const MIN_PAN_VIEW_HEIGHT: f32 = 100.0;

/// The scene's bounding sphere, which the camera's limits and far plane follow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sphere {
    pub center: Vec3,
    pub radius: f32,
}

impl Sphere {
    pub fn of(scene: &Scene) -> Self {
        let (lo, hi) = scene.bounds();
        let radius = ((hi - lo).length() * 0.5).max(0.01);
        let center = (lo + hi) * 0.5;
        if center.is_finite() && radius.is_finite() {
            Sphere { center, radius }
        } else {
            Sphere { center: Vec3::ZERO, radius: 1.0 }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OrbitCamera {
    pub target: Vec3,
    pub distance: f32,
    pub yaw: f32,
    pub pitch: f32,
    pub yfov: f32,
    /// An orthographic camera's half view height per unit of `distance` (so the wheel zooms
    /// it); `None`: perspective, with `yfov`.
    pub ortho: Option<f32>,
    pub znear: f32,
    /// The far plane asked for (`None`: infinite); [`OrbitCamera::matrices`] pushes a finite
    /// one out when the scene would cross it.
    pub zfar: Option<f32>,
    /// The scene the camera looks at.
    pub scene: Sphere,
    /// The distances the wheel may reach.
    pub min_distance: f32,
    pub max_distance: f32,
}

impl OrbitCamera {
    /// The window's (and the replay's) first camera: the scene's own, else a framing of it.
    pub fn initial(scene: &Scene) -> Self {
        scene.camera.as_ref().map_or_else(|| OrbitCamera::framing(scene), |desc| OrbitCamera::from_desc(desc, scene))
    }

    /// Frames the scene's bounds from above and in front.
    pub fn framing(scene: &Scene) -> Self {
        let bounds = Sphere::of(scene);
        let yfov = 0.8f32;
        let radius = bounds.radius;
        let camera = OrbitCamera {
            target: bounds.center,
            distance: radius / (yfov * 0.5).sin() * 1.05,
            yaw: 0.35,
            pitch: 0.45,
            yfov,
            ortho: None,
            znear: radius * 0.01,
            zfar: Some(radius * 20.0),
            scene: bounds,
            min_distance: 0.0,
            max_distance: 0.0,
        };
        camera.with_limits()
    }

    /// An orbit camera placed where a glTF camera is, looking at the same point (an
    /// orthographic one keeps its view height, at the window's shape).
    pub fn from_desc(desc: &CameraDesc, scene: &Scene) -> Self {
        let bounds = Sphere::of(scene);
        let eye = desc.world.transform_point3(Vec3::ZERO);
        let forward = desc.world.transform_vector3(-Vec3::Z).normalize_or(-Vec3::Z);
        // Orbit around the point on the view axis closest to the scene's centre.
        let distance = ((bounds.center - eye).dot(forward)).max(desc.znear * 10.0);
        let (yfov, ortho, distance) = match desc.lens {
            Lens::Perspective { yfov, .. } => (yfov, None, distance),
            // An orthographic camera's znear may be 0: its distance (which sets the view
            // height) keeps a floor.
            Lens::Orthographic { ymag, .. } => {
                let distance = distance.max(bounds.radius * 1e-3);
                (0.8, Some(ymag / distance), distance)
            }
        };
        let target = eye + forward * distance;
        let dir = (eye - target).normalize_or(Vec3::Z);
        let camera = OrbitCamera {
            target,
            distance,
            yaw: dir.x.atan2(dir.z),
            pitch: dir.y.clamp(-1.0, 1.0).asin(),
            yfov,
            ortho,
            znear: desc.znear,
            zfar: desc.zfar,
            scene: bounds,
            min_distance: 0.0,
            max_distance: 0.0,
        };
        camera.with_limits()
    }

    /// Sets the zoom range from the scene's size and the near plane; the starting distance is
    /// always inside it.
    fn with_limits(mut self) -> Self {
        self.min_distance = (self.znear * 2.0).min(self.distance);
        self.max_distance = (self.scene.radius * MAX_ZOOM_OUT_RADII).max(self.distance);
        self
    }

    pub fn eye(&self) -> Vec3 {
        let dir = Vec3::new(self.pitch.cos() * self.yaw.sin(), self.pitch.sin(), self.pitch.cos() * self.yaw.cos());
        // An orthographic view does not change with the eye's distance (its height follows
        // `distance`): the eye stays clear of the scene, so zooming in never clips it away.
        let clear = self.target.distance(self.scene.center) + 2.0 * self.scene.radius;
        self.target + dir * if self.ortho.is_some() { self.distance.max(clear) } else { self.distance }
    }

    /// Near and far planes for the current eye: the far plane (when finite) reaches past the
    /// whole scene, and the near plane moves out with the eye once the scene is far away, so
    /// depth keeps its precision when zoomed out.
    pub fn clip_planes(&self) -> (f32, Option<f32>) {
        let gap = self.eye().distance(self.scene.center) - self.scene.radius;
        let near = if gap > 0.0 { self.znear.max(gap * 1e-3) } else { self.znear };
        let far = self.zfar.map(|f| f.max(self.past_scene()).max(near * 2.0));
        (near, far)
    }

    /// A distance from the eye beyond the whole scene, with a margin: the nearest a far plane
    /// may lie.
    fn past_scene(&self) -> f32 {
        self.eye().distance(self.scene.center) + 2.0 * self.scene.radius
    }

    pub fn matrices(&self, aspect: f32) -> CameraMatrices {
        let eye = self.eye();
        let view = glam::camera::rh::view::look_at_mat4(eye, self.target, Vec3::Y);
        let (near, far) = self.clip_planes();
        // A window far taller than wide would narrow the horizontal field past what f32 aims
        // (MIN_FOV, which the loader and headless runs refuse): the view widens instead.
        let widest = f64::from(MIN_FOV) * 1.01;
        let projection = match self.ortho {
            None => {
                let yfov = f64::from(self.yfov).max(2.0 * ((widest * 0.5).tan() / f64::from(aspect)).atan());
                perspective_reverse_z(yfov as f32, aspect, near, far)
            }
            Some(scale) => {
                // The far plane reaches past the scene (an orthographic file camera has one).
                let reach = self.past_scene();
                let far = far.unwrap_or(reach);
                let half = (scale * self.distance).max((widest * 0.5 * f64::from(reach) / f64::from(aspect.min(1.0))) as f32);
                orthographic(half * aspect, half, near, far)
            }
        };
        CameraMatrices { view, projection, eye }
    }

    pub fn rotate(&mut self, dx: f32, dy: f32) {
        if !(dx.is_finite() && dy.is_finite()) {
            return;
        }
        self.yaw = (self.yaw - dx * 0.008).rem_euclid(std::f32::consts::TAU);
        self.pitch = (self.pitch + dy * 0.008).clamp(-1.5, 1.5);
    }

    /// Moves the target with the cursor; `viewport_height` in the same pixels as `dx`, `dy`.
    pub fn pan(&mut self, dx: f32, dy: f32, viewport_height: f32) {
        if !(dx.is_finite() && dy.is_finite()) {
            return;
        }
        let m = self.matrices(1.0);
        let right = Vec3::new(m.view.x_axis.x, m.view.y_axis.x, m.view.z_axis.x);
        let up = Vec3::new(m.view.x_axis.y, m.view.y_axis.y, m.view.z_axis.y);
        let height = if viewport_height.is_finite() { viewport_height.max(MIN_PAN_VIEW_HEIGHT) } else { MIN_PAN_VIEW_HEIGHT };
        let half_height = self.ortho.map_or(self.distance * (self.yfov * 0.5).tan(), |scale| scale * self.distance);
        let scale = 2.0 * half_height / height;
        let target = self.target + (-right * dx + up * dy) * scale;
        // The target stays within the zoom range of the scene: the scene can be panned out of
        // view, but not so far that the camera cannot come back.
        let offset = target - self.scene.center;
        let reach = self.max_distance;
        self.target = if offset.length() > reach { self.scene.center + offset.normalize_or_zero() * reach } else { target };
    }

    /// Zooms in by `steps` wheel steps (out when negative), within the scene's zoom range.
    pub fn zoom(&mut self, steps: f32) {
        if !steps.is_finite() {
            return;
        }
        self.distance = (self.distance * 0.9f32.powf(steps)).clamp(self.min_distance, self.max_distance);
    }
}

/// The narrowest field of view a camera may have, vertical or horizontal, in radians. A pixel
/// of a view that narrow spans less than f32 resolves of a direction: at 1e-7 a rectangle lost
/// 3% of a ground it saw whole, at 1e-10 points missed a box the view was filled with (and an
/// aspectRatio of 1e-8 lost half the view's columns).
pub const MIN_FOV: f32 = 1e-6;

/// The horizontal field of view, in radians, of a camera of vertical field `yfov` at `aspect`,
/// where it is narrower than [`MIN_FOV`]: the view such a camera would give is refused.
pub fn too_narrow_horizontally(yfov: f32, aspect: f32) -> Option<f64> {
    let field = 2.0 * (f64::from(aspect) * (f64::from(yfov) / 2.0).tan()).atan();
    (field < f64::from(MIN_FOV)).then_some(field)
}

/// A camera node's global transform with its scale ignored, as glTF 2.0 derives the view
/// matrix (3.10.2): the eye where the node is, looking down its -Z axis with its +Y as up
/// (made perpendicular to the view direction, so a sheared parent cannot skew the view).
/// `None` when the node's axes collapse (a zero scale, or two axes parallel: which way is up
/// or right is then anyone's guess) or are not finite.
pub fn camera_frame(world: &DMat4) -> Option<DMat4> {
    let (x, y, z) = (world.x_axis.truncate(), world.y_axis.truncate(), world.z_axis.truncate());
    // The sine-like volume of the three axes, free of their scale: 1 for orthogonal axes.
    // Below 1e-6 the axes are parallel within what f32 authoring tools round to.
    let volume = x.dot(y.cross(z)).abs() / (x.length() * y.length() * z.length());
    if !volume.is_finite() || volume <= 1e-6 {
        return None;
    }
    let forward = world.transform_vector3(DVec3::NEG_Z).try_normalize()?;
    let up = world.transform_vector3(DVec3::Y);
    let right = forward.cross(up).try_normalize()?;
    let up = right.cross(forward);
    let frame = DMat4::from_cols(right.extend(0.0), up.extend(0.0), (-forward).extend(0.0), world.w_axis);
    frame.is_finite().then_some(frame)
}

/// The matrices of the scene's own camera (exactly as authored), for headless runs: the
/// file's `aspectRatio` where it gives one, else `view_aspect` (glTF 2.0, 3.10.3); an
/// orthographic camera's `xmag` and `ymag` as they are, whatever the view's shape.
pub fn scene_camera(desc: &CameraDesc, view_aspect: f32) -> CameraMatrices {
    let projection = match desc.lens {
        Lens::Perspective { yfov, aspect } => perspective_reverse_z(yfov, aspect.unwrap_or(view_aspect), desc.znear, desc.zfar),
        // Validation gives an orthographic camera a far plane.
        Lens::Orthographic { xmag, ymag } => orthographic(xmag, ymag, desc.znear, desc.zfar.unwrap_or(f32::MAX)),
    };
    CameraMatrices { view: desc.world.inverse(), projection, eye: desc.world.transform_point3(Vec3::ZERO) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec4;

    fn scene() -> Scene {
        crate::load_scene(None).unwrap()
    }

    fn finite_and_invertible(m: &CameraMatrices) -> bool {
        let vp = m.projection * m.view;
        vp.is_finite() && vp.determinant().abs() > 0.0 && vp.inverse().is_finite()
    }

    /// Whether the scene's centre lies between the near and far planes.
    fn centre_in_depth_range(m: &CameraMatrices, centre: Vec3) -> bool {
        let clip = m.projection * m.view * Vec4::from((centre, 1.0));
        let z = clip.z / clip.w;
        clip.w > 0.0 && (0.0..=1.0).contains(&z)
    }

    #[test]
    fn orbit_eye_sits_at_distance_and_looks_at_target() {
        let mut cam = OrbitCamera::framing(&scene());
        cam.target = Vec3::new(1.0, 2.0, 3.0);
        cam.distance = 5.0;
        assert!((cam.eye().distance(cam.target) - 5.0).abs() < 1e-5);
        let m = cam.matrices(1.5);
        let t = m.view.transform_point3(cam.target);
        assert!(t.x.abs() < 1e-4 && t.y.abs() < 1e-4 && t.z < 0.0, "target straight ahead: {t}");
    }

    #[test]
    fn orbit_from_a_gltf_camera_keeps_its_eye_and_direction() {
        let world = glam::camera::rh::view::look_at_mat4(Vec3::new(0.0, 3.0, 6.0), Vec3::ZERO, Vec3::Y).inverse();
        let desc = CameraDesc { world, lens: Lens::Perspective { yfov: 0.7, aspect: None }, znear: 0.1, zfar: Some(50.0) };
        let scene = Scene::default();
        let cam = OrbitCamera::from_desc(&desc, &scene);
        assert!((cam.eye() - Vec3::new(0.0, 3.0, 6.0)).length() < 1e-3, "{}", cam.eye());
    }

    #[test]
    fn a_camera_nodes_scale_is_ignored() {
        let eye = DVec3::new(1.0, 2.0, 3.0);
        let rotation = glam::DQuat::from_euler(glam::EulerRot::YXZ, 0.7, -0.3, 0.2);
        let rigid = DMat4::from_rotation_translation(rotation, eye);
        for scale in [DVec3::splat(2.0), DVec3::new(1.0, 1.5, 0.25), DVec3::splat(1e-30), DVec3::splat(1e30)] {
            let scaled = DMat4::from_scale_rotation_translation(scale, rotation, eye);
            let frame = camera_frame(&scaled).expect("a frame");
            assert!(frame.abs_diff_eq(rigid, 1e-12), "scale {scale}: {frame} vs {rigid}");
        }
        // A sheared parent (non-uniform scale above a rotated child): the view direction is
        // kept exactly, the frame stays orthonormal.
        let sheared = DMat4::from_scale(DVec3::new(1.0, 3.0, 1.0)) * rigid;
        let frame = camera_frame(&sheared).unwrap();
        let forward = sheared.transform_vector3(DVec3::NEG_Z).normalize();
        assert!(frame.transform_vector3(DVec3::NEG_Z).abs_diff_eq(forward, 1e-12));
        assert!((frame.determinant() - 1.0).abs() < 1e-12);
        assert_eq!(camera_frame(&DMat4::from_scale(DVec3::ZERO)), None);
        assert_eq!(camera_frame(&DMat4::from_scale(DVec3::new(0.0, 1.0, 1.0))), None);
        // Two axes parallel: no frame, whichever pair and however they are scaled.
        let axis = rotation * DVec3::new(0.3, -0.5, 0.8).normalize();
        let other = rotation * DVec3::X;
        for (a, b, c) in [(axis, axis * 2.0, other), (other, axis, axis * -0.5), (axis, other, axis)] {
            let world = DMat4::from_cols(a.extend(0.0), b.extend(0.0), c.extend(0.0), eye.extend(1.0));
            assert_eq!(camera_frame(&world), None, "{world}");
        }
    }

    #[test]
    fn framing_projection_is_unchanged_at_the_start() {
        // Headless runs use the framing camera as it starts: its planes are the authored ones.
        let cam = OrbitCamera::framing(&scene());
        assert_eq!(cam.clip_planes(), (cam.znear, cam.zfar));
    }

    #[test]
    fn zooming_out_a_thousand_steps_stays_finite_and_keeps_the_scene_in_depth_range() {
        let s = scene();
        let desc = s.camera.unwrap();
        let ortho = CameraDesc { lens: Lens::Orthographic { xmag: 3.0, ymag: 2.0 }, zfar: Some(100.0), ..desc };
        for start in [OrbitCamera::framing(&s), OrbitCamera::from_desc(&desc, &s), OrbitCamera::from_desc(&ortho, &s)] {
            let mut cam = start;
            for i in 0..1000 {
                cam.zoom(-1.0);
                let m = cam.matrices(1.6);
                assert!(finite_and_invertible(&m), "step {i}: {m:?}");
                assert!(centre_in_depth_range(&m, cam.scene.center), "step {i}: the scene left the depth range");
            }
            assert!((cam.distance - cam.max_distance).abs() <= cam.max_distance * 1e-6);
            for _ in 0..2000 {
                cam.zoom(1.0);
            }
            assert!((cam.distance - cam.min_distance).abs() <= cam.min_distance * 1e-6);
            assert!(finite_and_invertible(&cam.matrices(1.6)));
        }
    }

    #[test]
    fn a_window_far_taller_than_wide_widens_the_view_rather_than_narrow_it_past_min_fov() {
        let s = scene();
        let narrow = CameraDesc { lens: Lens::Perspective { yfov: 2e-6, aspect: None }, ..s.camera.unwrap() };
        let ortho = CameraDesc { lens: Lens::Orthographic { xmag: 1e-5, ymag: 1e-5 }, zfar: Some(100.0), ..s.camera.unwrap() };
        for desc in [narrow, ortho] {
            let cam = OrbitCamera::from_desc(&desc, &s);
            let aspect = 1.0 / 8192.0;
            let m = cam.matrices(aspect);
            // The horizontal field: how far apart the view's left and right edges lie at the
            // target, against the distance to the scene's far side.
            let inverse = (m.projection * m.view).inverse();
            let target = m.projection * m.view * cam.target.extend(1.0);
            let at = |x: f32| inverse.project_point3(Vec3::new(x, 0.0, target.z / target.w));
            let reach = cam.past_scene();
            let field = at(1.0).distance(at(-1.0)) / if cam.ortho.is_some() { reach } else { cam.eye().distance(cam.target) };
            assert!(field >= MIN_FOV, "{desc:?}: a horizontal field of {field:e}");
            assert!(finite_and_invertible(&m));
            // A square window keeps a field of 2e-6 as it is.
            if let Lens::Perspective { yfov, .. } = desc.lens {
                let (near, far) = cam.clip_planes();
                assert_eq!(cam.matrices(1.0).projection, perspective_reverse_z(yfov, 1.0, near, far));
            }
        }
    }

    #[test]
    fn an_orthographic_file_camera_starts_the_orbit_at_its_view_height_and_zooms_it() {
        let s = scene();
        let desc = CameraDesc { lens: Lens::Orthographic { xmag: 3.0, ymag: 2.0 }, zfar: Some(100.0), ..s.camera.unwrap() };
        let mut cam = OrbitCamera::from_desc(&desc, &s);
        // Clip y of a point 2 units above the view axis, at the target: the view's edge.
        let edge = |cam: &OrbitCamera| {
            let m = cam.matrices(1.5);
            let up = Vec3::new(m.view.x_axis.y, m.view.y_axis.y, m.view.z_axis.y);
            let clip = m.projection * m.view * (cam.target + up * 2.0).extend(1.0);
            clip.y / clip.w
        };
        assert!((edge(&cam).abs() - 1.0).abs() < 1e-4, "{}", edge(&cam));
        cam.zoom(5.0);
        assert!(edge(&cam).abs() > 1.5, "zooming in magnifies: {}", edge(&cam));
        assert!(cam.eye().distance(cam.scene.center) > cam.scene.radius, "the eye stays clear of the scene");
    }

    #[test]
    fn pans_in_tiny_views_are_bounded_and_the_target_stays_in_reach() {
        let mut cam = OrbitCamera::framing(&scene());
        let before = cam.target;
        cam.pan(1.0, 0.0, 1.0);
        let one_pixel = cam.target.distance(before);
        assert!(one_pixel < cam.distance * 0.02, "a 1-pixel pan in a 1-pixel view moved {one_pixel}");
        for _ in 0..100_000 {
            cam.pan(5000.0, -3000.0, 1.0);
        }
        assert!(cam.target.distance(cam.scene.center) <= cam.max_distance * 1.0001);
        assert!(finite_and_invertible(&cam.matrices(1.0)));
        cam.pan(f32::NAN, 1.0, 0.0);
        cam.rotate(f32::INFINITY, 0.0);
        cam.zoom(f32::NAN);
        assert!(cam.matrices(1.0).projection.is_finite() && cam.eye().is_finite());
    }

    #[test]
    fn rotating_back_and_forth_returns_to_the_same_view() {
        let start = OrbitCamera::framing(&scene());
        let mut cam = start;
        let path = [(30.0, 4.0), (-7.0, 12.0), (100.0, -50.0), (3.0, 3.0)];
        for (dx, dy) in path {
            cam.rotate(dx, dy);
        }
        for (dx, dy) in path.iter().rev() {
            cam.rotate(-dx, -dy);
        }
        let (a, b) = (cam.matrices(1.0).view, start.matrices(1.0).view);
        assert!(a.abs_diff_eq(b, 1e-4), "{a} vs {b}");
    }
}
