//! Posing a scene at a time: glTF animations (translation, rotation, scale and morph weight
//! channels; STEP, LINEAR and CUBICSPLINE samplers) applied to the node hierarchy, composed in
//! f64, then each node's world, each skin's joint matrices and each node's morph weights for
//! the GPU. Every animation of the file plays at once, each held at its last key after it ends
//! (glTF samplers clamp).

use crate::scene::{NodeTransform, PoseFault, Property, Scene};
use glam::{DMat4, DQuat, DVec3, Mat4};

/// Poses `scene` at `time` seconds (`None`: the file's own node transforms, no animation):
/// node worlds (relative to the origin, re-centred meshes shifted), the camera's, skin
/// palettes and morph weights.
pub fn pose(scene: &mut Scene, time: Option<f32>) {
    let mut locals: Vec<NodeTransform> = scene.nodes.iter().map(|n| n.local).collect();
    let mut weights: Vec<Vec<f32>> = scene.nodes.iter().map(|n| n.default_weights.clone()).collect();
    for channel in scene.animations.iter().flat_map(|a| &a.channels).filter(|_| time.is_some()) {
        let v = channel.sample(time.unwrap_or_default());
        if channel.property == Property::Weights {
            let target = &mut weights[channel.node];
            for (w, &value) in target.iter_mut().zip(&v) {
                *w = value as f32;
            }
            continue;
        }
        let NodeTransform::Trs { translation, rotation, scale } = &mut locals[channel.node] else { continue };
        match channel.property {
            Property::Translation => *translation = DVec3::new(v[0], v[1], v[2]),
            Property::Rotation => *rotation = DQuat::from_xyzw(v[0], v[1], v[2], v[3]).normalize(),
            Property::Scale => *scale = DVec3::new(v[0], v[1], v[2]),
            Property::Weights => {}
        }
    }
    // An instance's weights are its file node's (which animations target).
    for (i, node) in scene.nodes.iter().enumerate() {
        if let (Some(_), Some(p)) = (node.gpu_instance, node.parent) {
            weights[i] = weights[p].clone();
        }
    }
    let to_scene = DMat4::from_translation(-scene.origin);
    let mut worlds: Vec<DMat4> = Vec::with_capacity(scene.nodes.len());
    for (i, node) in scene.nodes.iter().enumerate() {
        let parent = node.parent.map_or(DMat4::IDENTITY, |p| worlds[p]);
        worlds.push(parent * locals[i].matrix());
    }
    // A non-finite pose (a degenerate key, or one past f32's range) keeps the last good
    // transform, and says so in `pose_fault` (the loader and `--time` refuse it, playback
    // pauses before it).
    let mut fault = None;
    for (i, node) in scene.nodes.iter_mut().enumerate() {
        let shift = node.mesh.and_then(|m| scene.mesh_shift.get(m)).copied().unwrap_or(DVec3::ZERO);
        let world = (to_scene * worlds[i] * DMat4::from_translation(shift)).as_mat4();
        if world.is_finite() {
            node.world = world;
        } else if node.mesh.is_some() || scene.billboards.iter().any(|b| b.node == i) {
            fault = fault.or(Some(PoseFault::Node(node.gltf_index)));
        }
        node.weights = std::mem::take(&mut weights[i]);
    }
    for b in &mut scene.billboards {
        let centre = worlds.get(b.node).map(|w| (to_scene * *w).w_axis.truncate().as_vec3());
        if let Some(centre) = centre.filter(|c| c.is_finite()) {
            b.centre = centre;
        }
    }
    if let (Some(c), Some(desc)) = (scene.camera_node, scene.camera.as_mut()) {
        // The view ignores the node's scale (glTF 2.0, 3.10.2).
        match crate::camera::camera_frame(&worlds[c]).map(|f| (to_scene * f).as_mat4()).filter(Mat4::is_finite) {
            Some(world) => desc.world = world,
            None => fault = fault.or(Some(PoseFault::Camera(scene.nodes[c].gltf_index))),
        }
    }
    for (s, skin) in scene.skins.iter_mut().enumerate() {
        skin.palette = skin.joints.iter().zip(&skin.inverse_bind).map(|(&j, ibm)| (to_scene * worlds[j] * *ibm).as_mat4()).collect();
        if skin.palette.iter().any(|m| !m.is_finite()) {
            skin.palette.iter_mut().for_each(|m| *m = Mat4::IDENTITY);
            if scene.nodes.iter().any(|n| n.skin == Some(s) && n.mesh.is_some()) {
                fault = fault.or(Some(PoseFault::Skin(s)));
            }
        }
    }
    scene.pose_fault = fault;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{Channel, Interpolation};

    fn channel(interpolation: Interpolation, property: Property, times: Vec<f32>, values: Vec<f32>, width: usize) -> Channel {
        Channel { node: 0, property, interpolation, times: times.into(), values: values.into(), width }
    }

    #[test]
    fn samplers_clamp_step_interpolate_and_follow_splines() {
        let linear = channel(Interpolation::Linear, Property::Translation, vec![1.0, 3.0], vec![0.0, 0.0, 0.0, 4.0, 2.0, -2.0], 3);
        assert_eq!(linear.sample(0.0), vec![0.0, 0.0, 0.0], "before the first key: the first value");
        assert_eq!(linear.sample(2.0), vec![2.0, 1.0, -1.0]);
        assert_eq!(linear.sample(9.0), vec![4.0, 2.0, -2.0], "after the last key: the last value");
        let step = channel(Interpolation::Step, Property::Scale, vec![0.0, 1.0], vec![1.0, 1.0, 1.0, 2.0, 2.0, 2.0], 3);
        assert_eq!(step.sample(0.99), vec![1.0; 3]);
        assert_eq!(step.sample(1.0), vec![2.0; 3]);
        // A quarter turn about Y halfway: slerp gives the eighth turn.
        let half = std::f32::consts::FRAC_1_SQRT_2;
        let rot = channel(Interpolation::Linear, Property::Rotation, vec![0.0, 1.0], vec![0.0, 0.0, 0.0, 1.0, 0.0, half, 0.0, half], 4);
        let v = rot.sample(0.5);
        let q = DQuat::from_xyzw(v[0], v[1], v[2], v[3]);
        assert!((q.to_axis_angle().1 - std::f64::consts::FRAC_PI_4).abs() < 1e-6);
        // A cubic spline with zero tangents eases: the midpoint is the mean, a quarter is less.
        let spline = channel(Interpolation::CubicSpline, Property::Weights, vec![0.0, 2.0], vec![0.0, 0.0, 0.0, 0.0, 1.0, 0.0], 1);
        assert!((spline.sample(1.0)[0] - 0.5).abs() < 1e-12);
        assert!((spline.sample(0.5)[0] - 0.15625).abs() < 1e-12);
    }
}
