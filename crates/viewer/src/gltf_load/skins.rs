//! Reading skins and animations once the node walk has placed every node: joints and
//! channels name glTF nodes, which become indices into `Scene::nodes`. Every accessor is
//! checked ([`validate::accessor`]) before the glTF reader touches it; key times must be
//! finite, non-negative and increasing, values finite (rotations not all zeros), counts
//! consistent, one channel per animated property, and a skinned mesh's joint indices must
//! name joints of its skin.

use super::validate::accessor;
use super::SceneError;
use crate::animation::{Animation, Channel, Interpolation, Property, Skin};
use crate::scene::Scene;
use glam::{DMat4, Mat4};
use gltf::accessor::{DataType, Dimensions};
use std::collections::HashMap;
use std::sync::Arc;

/// Reads every skin, maps its joints to scene nodes and checks the meshes it deforms.
pub fn load_skins(document: &gltf::Document, buffers: &[Vec<u8>], scene: &mut Scene, node_of: &[Option<usize>]) -> Result<(), SceneError> {
    let lengths: Vec<usize> = buffers.iter().map(Vec::len).collect();
    for skin in document.skins() {
        let bad = |reason: String| SceneError::BadSkin { skin: skin.index(), reason };
        // A skin no node of the shown scene uses (one of another scene) is not read.
        if !scene.nodes.iter().any(|n| n.skin == Some(skin.index())) {
            scene.skins.push(Skin { joints: vec![], inverse_bind: vec![], palette: vec![] });
            continue;
        }
        let mut joints = vec![];
        for joint in skin.joints() {
            let node = node_of.get(joint.index()).copied().flatten().ok_or_else(|| bad(format!("joint node {} is not in the scene", joint.index())))?;
            joints.push(node);
        }
        if joints.is_empty() {
            return Err(bad("it has no joints".into()));
        }
        let inverse_bind = match skin.inverse_bind_matrices() {
            Some(a) => {
                let count =
                    accessor(document, a.index(), &lengths, "inverseBindMatrices", &|d, t, _| d == Dimensions::Mat4 && t == DataType::F32).map_err(bad)?;
                if count < joints.len() as u64 {
                    return Err(bad(format!("{count} inverse bind matrices for {} joints", joints.len())));
                }
                let reader = skin.reader(|b| buffers.get(b.index()).map(Vec::as_slice));
                let matrices: Vec<DMat4> = reader.read_inverse_bind_matrices().into_iter().flatten().map(|m| Mat4::from_cols_array_2d(&m).as_dmat4()).collect();
                if matrices.iter().any(|m| !m.is_finite()) {
                    return Err(bad("an inverse bind matrix is not finite".into()));
                }
                matrices
            }
            None => vec![DMat4::IDENTITY; joints.len()],
        };
        scene.skins.push(Skin { joints, inverse_bind, palette: vec![] });
    }
    for node in scene.nodes.iter_mut() {
        let (Some(s), Some(m)) = (node.skin, node.mesh) else {
            node.skin = None;
            continue;
        };
        let prims = &scene.meshes[m].primitives;
        if prims.iter().all(|p| p.skin.is_empty()) {
            log::warn!("node {}: its mesh has no JOINTS_0, so skin {s} is not applied", node.gltf_index);
            node.skin = None;
            continue;
        }
        let count = scene.skins.get(s).map_or(0, |k| k.joints.len());
        // glTF: every joint index is in range, weighted or not.
        let highest = prims.iter().flat_map(|p| p.skin.iter()).flat_map(|set| set.joints.iter().flatten().copied()).max();
        if let Some(j) = highest.filter(|&j| usize::from(j) >= count) {
            return Err(SceneError::BadNode { node: node.gltf_index, reason: format!("its mesh names joint {j}, but skin {s} has {count} joints") });
        }
    }
    Ok(())
}

/// Reads every animation's channels that target scene nodes.
pub fn load_animations(document: &gltf::Document, buffers: &[Vec<u8>], scene: &mut Scene, node_of: &[Option<usize>]) -> Result<(), SceneError> {
    use gltf::animation::util::ReadOutputs;
    use gltf::animation::Property as P;
    let lengths: Vec<usize> = buffers.iter().map(Vec::len).collect();
    // Samplers' keys, read and checked once per accessor: a sampler of a million keys that
    // drives 200 channels is held once, not 200 times.
    let mut read_times: HashMap<usize, Arc<[f32]>> = HashMap::new();
    let mut read_values: HashMap<(usize, Property), Arc<[f32]>> = HashMap::new();
    for animation in document.animations() {
        let bad = |reason: String| SceneError::BadAnimation { animation: animation.index(), reason };
        let mut out = Animation { name: super::kept_name(animation.name()), channels: vec![] };
        let mut animated: HashMap<(usize, std::mem::Discriminant<P>), usize> = HashMap::new();
        for (c, channel) in animation.channels().enumerate() {
            let target = channel.target();
            let key = (target.node().index(), std::mem::discriminant(&target.property()));
            if let Some(first) = animated.insert(key, c) {
                return Err(bad(format!("channels {first} and {c} animate the same property of node {}", key.0)));
            }
            let Some(node) = node_of.get(target.node().index()).copied().flatten() else { continue };
            let sampler = channel.sampler();
            let property = match target.property() {
                P::Translation => Property::Translation,
                P::Rotation => Property::Rotation,
                P::Scale => Property::Scale,
                P::MorphTargetWeights => Property::Weights,
            };
            let interpolation = match sampler.interpolation() {
                gltf::animation::Interpolation::Step => Interpolation::Step,
                gltf::animation::Interpolation::Linear => Interpolation::Linear,
                gltf::animation::Interpolation::CubicSpline => Interpolation::CubicSpline,
            };
            let width = match property {
                Property::Translation | Property::Scale => 3,
                Property::Rotation => 4,
                Property::Weights => scene.nodes[node].default_weights.len(),
            };
            if width == 0 {
                log::warn!("animation {} channel {c}: node {} has no morph targets for its weights", animation.index(), target.node().index());
                continue;
            }
            let keys = accessor(document, sampler.input().index(), &lengths, "animation input", &|d, t, _| d == Dimensions::Scalar && t == DataType::F32)
                .map_err(|e| bad(format!("channel {c}: {e}")))?;
            let output_ok = |d: Dimensions, t: DataType, normalized: bool| match property {
                Property::Translation | Property::Scale => d == Dimensions::Vec3 && t == DataType::F32,
                Property::Rotation => d == Dimensions::Vec4 && (t == DataType::F32 || (normalized && t != DataType::U32)),
                Property::Weights => d == Dimensions::Scalar && (t == DataType::F32 || (normalized && t != DataType::U32)),
            };
            let values =
                accessor(document, sampler.output().index(), &lengths, "animation output", &output_ok).map_err(|e| bad(format!("channel {c}: {e}")))?;
            let per_key = if interpolation == Interpolation::CubicSpline { 3 } else { 1 } * if property == Property::Weights { width as u64 } else { 1 };
            if keys == 0 || values != keys.saturating_mul(per_key) {
                return Err(bad(format!("channel {c}: {keys} key times and {values} output values, expected {per_key} per key")));
            }
            let reader = channel.reader(|b| buffers.get(b.index()).map(Vec::as_slice));
            let times = match read_times.get(&sampler.input().index()) {
                Some(times) => times.clone(),
                None => {
                    let times: Arc<[f32]> = reader.read_inputs().ok_or_else(|| bad(format!("channel {c}: the key times cannot be read")))?.collect();
                    if times.iter().any(|t| !t.is_finite() || *t < 0.0) || times.windows(2).any(|w| w[1] <= w[0]) {
                        return Err(bad(format!("channel {c}: key times must be finite, non-negative and strictly increasing")));
                    }
                    read_times.insert(sampler.input().index(), times.clone());
                    times
                }
            };
            let values = match read_values.get(&(sampler.output().index(), property)) {
                Some(values) => values.clone(),
                None => {
                    let values: Arc<[f32]> = match reader.read_outputs().ok_or_else(|| bad(format!("channel {c}: the values cannot be read")))? {
                        ReadOutputs::Translations(v) => v.flatten().collect(),
                        ReadOutputs::Scales(v) => v.flatten().collect(),
                        ReadOutputs::Rotations(v) => v.into_f32().flatten().collect(),
                        ReadOutputs::MorphTargetWeights(v) => v.into_f32().collect(),
                    };
                    if values.iter().any(|v| !v.is_finite()) {
                        return Err(bad(format!("channel {c}: a value is not finite")));
                    }
                    // A rotation key of length 0 is no rotation (a spline's tangents may be 0).
                    let stride = if interpolation == Interpolation::CubicSpline { 12 } else { 4 };
                    let value_at = if interpolation == Interpolation::CubicSpline { 4 } else { 0 };
                    if property == Property::Rotation && values.chunks_exact(stride).any(|key| key[value_at..value_at + 4].iter().all(|v| *v == 0.0)) {
                        return Err(bad(format!("channel {c}: a rotation key is all zeros")));
                    }
                    read_values.insert((sampler.output().index(), property), values.clone());
                    values
                }
            };
            if property != Property::Weights && matches!(scene.nodes[node].local, crate::animation::NodeTransform::Matrix(_)) {
                log::warn!("animation {} channel {c}: node {} has a matrix, which glTF does not animate", animation.index(), scene.nodes[node].gltf_index);
                continue;
            }
            out.channels.push(Channel { node, property, interpolation, times, values, width });
        }
        scene.animations.push(out);
    }
    Ok(())
}

/// Refuses a pose that could carry a deformed mesh's vertices past f32's range: a skin's
/// joint matrices, or morph weights times their targets' offsets (a node's world over a rigid
/// morphed mesh). Each value is finite, but the GPU's products would not be, and the mesh
/// would vanish from the picture and the picks without an error. Rigid meshes are split and
/// re-centred at load instead ([`super::rebase`]).
pub fn check_deformed_reach(scene: &Scene) -> Result<(), SceneError> {
    for node in &scene.nodes {
        let Some(m) = node.mesh else { continue };
        let mesh = &scene.meshes[m];
        let skin = node.skin.and_then(|s| Some((s, scene.skins.get(s)?)));
        if skin.is_none() && mesh.target_count() == 0 {
            continue;
        }
        // The matrices that map the (morphed) vertices, and the sum of their weights.
        let (matrices, weight) = match skin {
            Some((_, skin)) => (&skin.palette[..], None),
            None => (std::slice::from_ref(&node.world), Some(1.0)),
        };
        let largest = matrices.iter().flat_map(|m| m.to_cols_array()).fold(0.0f64, |a, v| a.max(f64::from(v.abs())));
        for p in &mesh.primitives {
            let weight = weight.unwrap_or_else(|| {
                p.skin.iter().flat_map(|set| set.weights.iter().map(|w| w.iter().map(|x| f64::from(*x)).sum::<f64>())).fold(0.0f64, f64::max)
            });
            // A component of Σ w · M · (x, y, z, 1) is at most (Σ w) · 4 · max |M| · max |v|.
            let bound = weight * 4.0 * largest * morphed_reach(p, &node.weights);
            if bound.is_nan() || bound >= f64::from(f32::MAX) {
                return Err(match skin {
                    Some((s, _)) => {
                        SceneError::BadSkin { skin: s, reason: format!("its joint matrices carry node {}'s vertices past f32's range", node.gltf_index) }
                    }
                    None => SceneError::BadNode { node: node.gltf_index, reason: "its morph weights carry its vertices past f32's range".into() },
                });
            }
        }
    }
    Ok(())
}

/// The largest coordinate a primitive's vertices can take under morph `weights` (per target,
/// its weight times its largest offset), and at least 1 (the homogeneous coordinate).
fn morphed_reach(p: &picking_vk_host::Primitive, weights: &[f32]) -> f64 {
    let largest = |v: &[glam::Vec3]| v.iter().flat_map(|v| v.to_array()).fold(0.0f64, |a, x| a.max(f64::from(x.abs())));
    let offsets: f64 = p.morph_targets.iter().zip(weights).map(|(t, w)| f64::from(w.abs()) * largest(t)).sum();
    largest(&p.positions).max(1.0) + offsets
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{MeshAsset, Node};
    use picking_vk::SkinInfluences;
    use picking_vk_host::Primitive;

    /// One node skinned by one joint whose matrix is `palette`, over a vertex at `x`.
    fn skinned_scene(palette: Mat4, x: f32) -> Scene {
        let skin = SkinInfluences { joints: vec![[0; 4]], weights: vec![[1.0, 0.0, 0.0, 0.0]] };
        let prim = Primitive { positions: vec![glam::Vec3::new(x, 0.0, 0.0)], skin: vec![skin], ..Default::default() };
        let node = Node { gltf_index: 3, mesh: Some(0), skin: Some(0), ..Default::default() };
        Scene {
            meshes: vec![MeshAsset { primitives: vec![prim], ..Default::default() }],
            nodes: vec![node],
            skins: vec![crate::animation::Skin { joints: vec![0], inverse_bind: vec![DMat4::IDENTITY], palette: vec![palette] }],
            ..Default::default()
        }
    }

    #[test]
    fn joint_matrices_that_carry_vertices_past_f32_are_refused() {
        let huge = Mat4::from_diagonal(glam::Vec4::new(3e38, 1.0, 1.0, 1.0));
        assert!(check_deformed_reach(&skinned_scene(Mat4::from_scale(glam::Vec3::splat(1e4)), 1e6)).is_ok(), "a large rig far out is fine");
        let err = check_deformed_reach(&skinned_scene(huge, 1.5)).unwrap_err().to_string();
        assert!(err.contains("past f32's range") && err.contains("node 3"), "{err}");
    }

    #[test]
    fn morph_weights_that_carry_vertices_past_f32_are_refused() {
        // One triangle whose target moves a vertex by `offset`, at weight `weight`.
        let morphed = |offset: f32, weight: f32| {
            let positions = vec![glam::Vec3::ZERO, glam::Vec3::X, glam::Vec3::Y];
            let prim =
                Primitive { positions, morph_targets: vec![vec![glam::Vec3::ZERO, glam::Vec3::ZERO, glam::Vec3::new(0.0, offset, 0.0)]], ..Default::default() };
            let node = Node { gltf_index: 5, mesh: Some(0), weights: vec![weight], ..Default::default() };
            Scene { meshes: vec![MeshAsset { primitives: vec![prim], ..Default::default() }], nodes: vec![node], ..Default::default() }
        };
        assert!(check_deformed_reach(&morphed(1e6, 1.0)).is_ok(), "a large offset is fine");
        assert!(check_deformed_reach(&morphed(3e38, 0.0)).is_ok(), "an unused target is fine");
        let err = check_deformed_reach(&morphed(3e38, 1.0)).unwrap_err().to_string();
        assert!(err.contains("morph weights") && err.contains("past f32's range") && err.contains("node 5"), "{err}");
        assert!(check_deformed_reach(&morphed(1e37, 20.0)).is_err(), "a weight past 1 counts");
    }
}
