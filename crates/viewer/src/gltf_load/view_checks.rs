//! The view a loaded scene gives: each camera of the file checked before it is read
//! ([`camera`]), then, once the scene is placed, its camera must give the picker a view and
//! depth it can use at every view shape, and a scene without one must fit the orbit camera's
//! framing.

use super::SceneError;
use crate::scene::{Lens, Scene};

/// The smallest depth a camera may give the scene's far side. Normal f32s (from 1.2e-38) keep
/// their full precision, but a rasterizer's depth slopes across a triangle are smaller still:
/// at depths of 1e-31 (znear 1e-30), lavapipe drew some pixels of a box and not others.
const MIN_DEPTH: f32 = 1e-20;

/// The largest scene radius the viewer frames without a camera: the orbit camera's f32
/// arithmetic squares distances of up to `MAX_ZOOM_OUT_RADII` radii, which overflow past
/// about 1.8e19 (a triangle 2e20 across was framed as a unit sphere, and showed nothing).
pub const MAX_FRAMED_RADIUS: f64 = 1e16;

/// A scene without a camera must fit the framing: else it is refused, not shown blank.
pub(super) fn check_framing(scene: &Scene) -> Result<(), SceneError> {
    if scene.camera.is_some() {
        return Ok(());
    }
    let (lo, hi) = scene.bounds();
    let radius = (hi.as_dvec3() - lo.as_dvec3()).length() * 0.5;
    if radius <= MAX_FRAMED_RADIUS {
        return Ok(());
    }
    Err(SceneError::Budget(format!(
        "it spans {:.3e} units and has no camera: the viewer frames scenes up to {:.0e} across (give the file a camera)",
        2.0 * radius,
        2.0 * MAX_FRAMED_RADIUS
    )))
}

/// The scene's camera, placed, must give the picker a view and projection it accepts at every
/// view shape the viewer draws (1 to 8192 pixels a side): its values can each be valid and
/// the matrices still unusable (a denormal yfov, znear 1e-38), and every pick would fail.
pub(super) fn check_camera(scene: &Scene) -> Result<(), SceneError> {
    let (Some(desc), Some(node)) = (&scene.camera, scene.camera_node.and_then(|n| scene.nodes.get(n))) else { return Ok(()) };
    // Reversed depth puts a surface at distance d at about znear / d; an orthographic view's
    // standard depth at (d - znear) / (zfar - znear). Where the scene reaches (or halfway to
    // zfar, if nearer), the projection as built in f32 must give a normal float depth well
    // above the denormals the depth buffer flushes to 0 (see MIN_DEPTH): else nothing there is
    // drawn or picked right, as with znear 1e-38, or an orthographic zfar of 3e38.
    let sphere = crate::camera::Sphere::of(scene);
    let farthest = desc.world.transform_point3(glam::Vec3::ZERO).distance(sphere.center) + sphere.radius;
    let reach = desc.zfar.map_or(farthest, |f| farthest.min(desc.znear + (f - desc.znear) * 0.5)).max(desc.znear);
    let projection = crate::camera::scene_camera(desc, 1.0).projection;
    let clip = projection * glam::Vec4::new(0.0, 0.0, -reach, 1.0);
    // (A scene wholly before an orthographic camera's near plane is not drawn: nothing to check.)
    let depth = if !desc.lens.is_perspective() && reach <= desc.znear { 1.0 } else { clip.z / clip.w };
    // NaN (a degenerate matrix) is refused too.
    if reach.is_finite() && depth.partial_cmp(&MIN_DEPTH).is_none_or(std::cmp::Ordering::is_lt) {
        let reason = format!(
            "its camera (znear {}) gives depth {depth:e} at distance {reach}, where the scene reaches: below {MIN_DEPTH:e}, which the depth buffer cannot use",
            desc.znear
        );
        return Err(SceneError::BadNode { node: node.gltf_index, reason });
    }
    // An orthographic view as narrow against the scene's distance as a perspective field below
    // MIN_FOV is as far past what f32 aims.
    if let Lens::Orthographic { xmag, ymag } = desc.lens {
        if xmag < 0.0 || ymag < 0.0 {
            let reason =
                format!("its orthographic camera's xmag {xmag} and ymag {ymag} mirror the view, which the viewer does not draw (glTF asks for positive ones)");
            return Err(SceneError::BadNode { node: node.gltf_index, reason });
        }
        let field = 2.0 * f64::from(xmag.min(ymag)) / f64::from(farthest);
        if field < f64::from(crate::camera::MIN_FOV) {
            let reason = format!(
                "its orthographic camera's xmag {xmag} and ymag {ymag} span {field:e} of the scene's distance ({farthest}), below {:e}: the f32 pipeline cannot aim a pixel that narrow",
                crate::camera::MIN_FOV
            );
            return Err(SceneError::BadNode { node: node.gltf_index, reason });
        }
    }
    for (w, h) in [(1u32, 1u32), (8192, 1), (1, 8192)] {
        let m = crate::camera::scene_camera(desc, w as f32 / h as f32);
        let request =
            picking_vk::PickRequest::new(picking_vk::Viewport::full(w, h), m.view, m.projection).with_depth(crate::camera::depth_convention(&m.projection));
        if let Err(e) = request.ray(glam::UVec2::ZERO) {
            let far = desc.zfar.map_or("infinite".to_owned(), |f| f.to_string());
            let reason = format!("its camera ({}, znear {}, zfar {far}) gives a view the picker cannot use: {e}", desc.lens, desc.znear);
            return Err(SceneError::BadNode { node: node.gltf_index, reason });
        }
    }
    Ok(())
}

/// Checks a camera: the projection object its type names is there (the reader assumes it,
/// and panics where it is not), and its parameters.
pub fn camera(document: &gltf::Document, camera: &gltf::Camera) -> Result<(), SceneError> {
    use gltf::json::{camera::Type, validation::Checked};
    let raw = &document.as_json().cameras[camera.index()];
    let has_its_projection = match raw.type_ {
        Checked::Valid(Type::Perspective) => raw.perspective.is_some(),
        Checked::Valid(Type::Orthographic) => raw.orthographic.is_some(),
        Checked::Invalid => false,
    };
    if !has_its_projection {
        let reason = "its type names a projection (perspective or orthographic) whose object it lacks".to_owned();
        return Err(SceneError::BadCamera { camera: camera.index(), reason });
    }
    match camera.projection() {
        gltf::camera::Projection::Perspective(p) => perspective(camera.index(), &p),
        gltf::camera::Projection::Orthographic(o) => orthographic(camera.index(), &o),
    }
}

/// Checks an orthographic camera's parameters: magnifications finite and not 0, znear at
/// least 0 and zfar beyond it, as glTF requires. (A negative magnification, which glTF
/// discourages but allows, is refused where the camera is used: see `check_camera`.)
fn orthographic(camera: usize, o: &gltf::camera::Orthographic) -> Result<(), SceneError> {
    let bad = |reason: String| Err(SceneError::BadCamera { camera, reason });
    let (xmag, ymag, znear, zfar) = (o.xmag(), o.ymag(), o.znear(), o.zfar());
    if let Some((name, value)) = [("xmag", xmag), ("ymag", ymag)].into_iter().find(|(_, v)| !(v.is_finite() && *v != 0.0)) {
        return bad(format!("{name} {value} must be a number other than 0"));
    }
    if !(znear.is_finite() && znear >= 0.0) {
        return bad(format!("znear {znear} must be 0 or more"));
    }
    if !(zfar.is_finite() && zfar > znear) {
        return bad(format!("zfar {zfar} must be greater than znear {znear}"));
    }
    Ok(())
}

/// Checks a perspective camera's parameters.
fn perspective(camera: usize, p: &gltf::camera::Perspective) -> Result<(), SceneError> {
    use crate::camera::{too_narrow_horizontally, MIN_FOV};
    let bad = |reason: String| Err(SceneError::BadCamera { camera, reason });
    let (yfov, znear) = (p.yfov(), p.znear());
    if !(yfov.is_finite() && yfov > 0.0 && yfov < std::f32::consts::PI) {
        return bad(format!("yfov {yfov} must lie strictly between 0 and pi"));
    }
    if yfov < MIN_FOV {
        return bad(format!(
            "yfov {yfov:e} is below {MIN_FOV:e} radians: the f32 pipeline cannot aim a pixel that narrow (its picks and image would be wrong)"
        ));
    }
    if !(znear.is_finite() && znear > 0.0) {
        return bad(format!("znear {znear} must be positive"));
    }
    if let Some(zfar) = p.zfar().filter(|&f| !(f.is_finite() && f > znear)) {
        return bad(format!("zfar {zfar} must be greater than znear {znear}"));
    }
    if let Some(aspect) = p.aspect_ratio().filter(|&a| !(a.is_finite() && a > 0.0)) {
        return bad(format!("aspectRatio {aspect} must be positive"));
    }
    if let Some((aspect, xfov)) = p.aspect_ratio().and_then(|a| too_narrow_horizontally(yfov, a).map(|field| (a, field))) {
        return bad(format!(
            "aspectRatio {aspect:e} makes the horizontal field {xfov:e} radians, below {MIN_FOV:e}: the f32 pipeline cannot aim a pixel that narrow (its picks and image would be wrong)"
        ));
    }
    Ok(())
}
