//! Reading skins and animations once the node walk has placed every node: joints and
//! channels name glTF nodes, which become indices into `Scene::nodes`. Every accessor is
//! checked ([`validate::accessor`]) before the glTF reader touches it; key times must be
//! finite and increasing, values finite (rotations not all zeros), counts consistent, and a
//! skinned mesh's weighted joint indices must name joints of its skin. What exporters write
//! against glTF's rules but can be shown (keys before 0 s, a property two channels animate,
//! unweighted joint indices past the skin) is read with a warning.

use super::validate::{accessor, charge};
use super::SceneError;
use crate::scene::Scene;
use crate::scene::{Animation, Channel, Interpolation, Property, Skin};
use glam::{DMat4, Mat4};
use gltf::accessor::{DataType, Dimensions};
use std::collections::HashMap;
use std::sync::Arc;

/// Reads every skin, maps its joints to scene nodes and checks the meshes it deforms; what
/// it reads is taken from `budget`.
pub fn load_skins(document: &gltf::Document, buffers: &[Vec<u8>], scene: &mut Scene, node_of: &[Option<usize>], budget: &mut u64) -> Result<(), SceneError> {
    let lengths: Vec<usize> = buffers.iter().map(Vec::len).collect();
    let used: std::collections::HashSet<usize> = scene.nodes.iter().filter_map(|n| n.skin).collect();
    for skin in document.skins() {
        let bad = |reason: String| SceneError::BadSkin { skin: skin.index(), reason };
        // A skin no node of the shown scene uses (one of another scene) is not read.
        if !used.contains(&skin.index()) {
            scene.skins.push(Skin { joints: vec![], inverse_bind: vec![], palette: vec![] });
            continue;
        }
        // Each joint holds a node index, an inverse bind matrix (read or identity) and a
        // palette entry per pose (8 + 128 + 64 bytes): charged before any is built.
        let joint_count = skin.joints().len() as u64;
        charge(budget, joint_count.saturating_mul(200), &|| format!("skin {}'s {joint_count} joints", skin.index()))?;
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
                // Only the joints' matrices are read (glTF asks for exactly as many), charged
                // with the joints above.
                let reader = skin.reader(|b| buffers.get(b.index()).map(Vec::as_slice));
                let matrices = reader.read_inverse_bind_matrices().into_iter().flatten().take(joints.len());
                let matrices: Vec<DMat4> = matrices.map(|m| Mat4::from_cols_array_2d(&m).as_dmat4()).collect();
                if matrices.iter().any(|m| !m.is_finite()) {
                    return Err(bad("an inverse bind matrix is not finite".into()));
                }
                // As for node matrices: glTF's are affine (float noise in the last row aside).
                if let Some(k) = matrices.iter().position(|m| !m.row(3).abs_diff_eq(glam::DVec4::W, super::precise::AFFINE_NOISE)) {
                    return Err(bad(format!("inverse bind matrix {k}'s last row is {:?}, not (0, 0, 0, 1): glTF's are affine", matrices[k].row(3).to_array())));
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
        let highest = prims
            .iter()
            .flat_map(|p| p.skin.iter())
            .flat_map(|set| set.joints.iter().zip(&set.weights))
            .flat_map(|(j, w)| (0..4).filter(|&k| w[k] != 0.0).map(move |k| j[k]))
            .max();
        if let Some(j) = highest.filter(|&j| usize::from(j) >= count) {
            return Err(SceneError::BadNode { node: node.gltf_index, reason: format!("its mesh names joint {j}, but skin {s} has {count} joints") });
        }
        // glTF wants every index in range, weighted or not, and some exporters pad with others:
        // an unweighted one past the skin (the weighted ones are in range, above) becomes joint
        // 0, so no shader reads past the palette.
        let mut padded = 0;
        for joints in scene.meshes[m].primitives.iter_mut().flat_map(|p| p.skin.iter_mut()).flat_map(|set| set.joints.iter_mut()) {
            for j in joints.iter_mut().filter(|j| usize::from(**j) >= count) {
                (*j, padded) = (0, padded + 1);
            }
        }
        if padded > 0 {
            log::warn!("node {}: {padded} unweighted joint indices past skin {s}'s {count} joints read joint 0", node.gltf_index);
        }
    }
    Ok(())
}

/// Reads every animation's channels that target scene nodes; each accessor read is taken from
/// `budget`.
pub fn load_animations(
    document: &gltf::Document,
    buffers: &[Vec<u8>],
    scene: &mut Scene,
    node_of: &[Option<usize>],
    budget: &mut u64,
) -> Result<(), SceneError> {
    use gltf::animation::util::ReadOutputs;
    use gltf::animation::Property as P;
    let lengths: Vec<usize> = buffers.iter().map(Vec::len).collect();
    // Samplers' keys, read and checked once per accessor: a sampler of a million keys that
    // drives 200 channels is held once, not 200 times.
    let mut read_times: HashMap<usize, Arc<[f32]>> = HashMap::new();
    let mut read_values: HashMap<(usize, Property, Interpolation), Arc<[f32]>> = HashMap::new();
    for animation in document.animations() {
        let bad = |reason: String| SceneError::BadAnimation { animation: animation.index(), reason };
        let mut out = Animation { name: super::kept_name(animation.name()), channels: vec![] };
        let mut animated: HashMap<(usize, std::mem::Discriminant<P>), usize> = HashMap::new();
        for (c, channel) in animation.channels().enumerate() {
            let target = channel.target();
            let key = (target.node().index(), std::mem::discriminant(&target.property()));
            // glTF forbids two channels on one property, but exporters write them: the first plays.
            if let Some(&first) = animated.get(&key) {
                log::warn!("animation {} channels {first} and {c} animate the same property of node {}: channel {c} is skipped", animation.index(), key.0);
                continue;
            }
            animated.insert(key, c);
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
                    charge(budget, keys.saturating_mul(4), &|| format!("animation {} channel {c}'s key times", animation.index()))?;
                    let times: Arc<[f32]> = reader.read_inputs().ok_or_else(|| bad(format!("channel {c}: the key times cannot be read")))?.collect();
                    if times.iter().any(|t| !t.is_finite()) || times.windows(2).any(|w| w[1] <= w[0]) {
                        return Err(bad(format!("channel {c}: key times must be finite and strictly increasing")));
                    }
                    // glTF wants them from 0 on, but exporters write earlier keys; they play as given.
                    if times.first().is_some_and(|&t| t < 0.0) {
                        log::warn!("animation {} channel {c}: key times start before 0 s, at {}", animation.index(), times[0]);
                    }
                    read_times.insert(sampler.input().index(), times.clone());
                    times
                }
            };
            let values = match read_values.get(&(sampler.output().index(), property, interpolation)) {
                Some(values) => values.clone(),
                None => {
                    let floats = values.saturating_mul(if property == Property::Weights { 1 } else { width as u64 });
                    charge(budget, floats.saturating_mul(4), &|| format!("animation {} channel {c}'s values", animation.index()))?;
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
                    read_values.insert((sampler.output().index(), property, interpolation), values.clone());
                    values
                }
            };
            if property != Property::Weights && matches!(scene.nodes[node].local, crate::scene::NodeTransform::Matrix(_)) {
                log::warn!("animation {} channel {c}: node {} has a matrix, which glTF does not animate", animation.index(), scene.nodes[node].gltf_index);
                continue;
            }
            out.channels.push(Channel { node, property, interpolation, times, values, width });
        }
        scene.animations.push(out);
    }
    Ok(())
}
