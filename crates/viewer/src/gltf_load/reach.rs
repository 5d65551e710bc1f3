//! Whether a pose keeps every deformed vertex within f32's range. A skin's joint matrices, or
//! morph weights times their targets' offsets, can each be finite and still carry a vertex
//! past it (a key of 3e38 is finite): the GPU's products overflow, and the mesh vanishes from
//! the picture and the picks without an error. Rigid meshes never get here: the loader splits
//! and re-centres them ([`super::rebase`]). The loader refuses such a rest pose, `--time` such a
//! pose, and window playback pauses before showing one; what bounds each primitive is measured
//! once, so the check per frame costs its targets and joints, not its vertices.

use super::SceneError;
pub use crate::scene::PrimitiveReach;
use crate::scene::Scene;
use glam::Mat4;

/// Per mesh, per primitive, for the meshes a skin or morph targets deform (empty for others).
pub fn measure(scene: &Scene) -> Vec<Vec<PrimitiveReach>> {
    let mut deformed: Vec<bool> = scene.meshes.iter().map(|m| m.target_count() > 0).collect();
    for node in scene.nodes.iter().filter(|n| n.skin.is_some()) {
        if let Some(d) = node.mesh.and_then(|m| deformed.get_mut(m)) {
            *d = true;
        }
    }
    scene.meshes.iter().zip(&deformed).map(|(mesh, &d)| if d { mesh.primitives.iter().map(PrimitiveReach::of).collect() } else { vec![] }).collect()
}

/// The largest |entry| of any of `matrices`.
fn largest_entry(matrices: &[Mat4]) -> f64 {
    matrices.iter().flat_map(|m| m.to_cols_array()).fold(0.0f64, |a, v| a.max(f64::from(v.abs())))
}

/// Refuses a pose that could carry a deformed vertex past f32's range, by the scene's own
/// measures (taken again when it has none, as a scene built by hand).
pub fn check(scene: &Scene) -> Result<(), SceneError> {
    let measured;
    let reach = if scene.deformed_reach.len() == scene.meshes.len() {
        &scene.deformed_reach
    } else {
        measured = measure(scene);
        &measured
    };
    // Once per skin, not per node that uses it: a skin of many joints used by many nodes
    // would cost their product every pose.
    let palettes: Vec<f64> = scene.skins.iter().map(|k| largest_entry(&k.palette)).collect();
    for node in &scene.nodes {
        let Some(primitives) = node.mesh.and_then(|m| reach.get(m)) else { continue };
        let skin = node.skin.and_then(|s| Some((s, *palettes.get(s)?)));
        let (joints, world) = (skin.map_or(0.0, |(_, k)| k), largest_entry(std::slice::from_ref(&node.world)));
        for p in primitives {
            // A component of Σ w · M · (x, y, z, 1) is at most (Σ w) · 4 · max |M| · max |v|.
            let bound = match skin {
                Some(_) if p.skinned => p.weights * 4.0 * joints * p.morphed(&node.weights),
                // Drawn rigid: only morph targets can carry it out (rigid meshes were split).
                _ if p.offsets.is_empty() => continue,
                _ => 4.0 * world * p.morphed(&node.weights),
            };
            if bound.is_nan() || bound >= f64::from(f32::MAX) {
                return Err(match skin {
                    Some((s, _)) if p.skinned => {
                        SceneError::BadSkin { skin: s, reason: format!("its joint matrices carry node {}'s vertices past f32's range", node.gltf_index) }
                    }
                    _ => SceneError::BadNode { node: node.gltf_index, reason: "its morph weights carry its vertices past f32's range".into() },
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{MeshAsset, Node};
    use glam::{DMat4, Vec3};
    use picking_vk::deform::SkinInfluences;
    use picking_vk_host::Primitive;

    /// One node skinned by one joint whose matrix is `palette`, over a vertex at `x`.
    fn skinned_scene(palette: Mat4, x: f32) -> Scene {
        let skin = SkinInfluences { joints: vec![[0; 4]], weights: vec![[1.0, 0.0, 0.0, 0.0]] };
        let prim = Primitive { positions: vec![Vec3::new(x, 0.0, 0.0)], skin: vec![skin], ..Default::default() };
        let node = Node { gltf_index: 3, mesh: Some(0), skin: Some(0), ..Default::default() };
        Scene {
            meshes: vec![MeshAsset { primitives: vec![prim], ..Default::default() }],
            nodes: vec![node],
            skins: vec![crate::scene::Skin { joints: vec![0], inverse_bind: vec![DMat4::IDENTITY], palette: vec![palette] }],
            ..Default::default()
        }
    }

    #[test]
    fn joint_matrices_that_carry_vertices_past_f32_are_refused() {
        let huge = Mat4::from_diagonal(glam::Vec4::new(3e38, 1.0, 1.0, 1.0));
        assert!(check(&skinned_scene(Mat4::from_scale(Vec3::splat(1e4)), 1e6)).is_ok(), "a large rig far out is fine");
        let err = check(&skinned_scene(huge, 1.5)).unwrap_err().to_string();
        assert!(err.contains("past f32's range") && err.contains("node 3"), "{err}");
        // Weights of two influence sets add up per vertex.
        let mut scene = skinned_scene(Mat4::from_scale(Vec3::splat(5e37)), 1.0);
        assert!(check(&scene).is_ok());
        let second = SkinInfluences { joints: vec![[0; 4]], weights: vec![[1.0, 0.0, 0.0, 0.0]] };
        scene.meshes[0].primitives[0].skin.push(second);
        assert!(check(&scene).is_err(), "eight influences weigh 2");
    }

    /// One triangle whose target moves a vertex by `offset`, at weight `weight`.
    fn morphed(offset: f32, weight: f32) -> Scene {
        let positions = vec![Vec3::ZERO, Vec3::X, Vec3::Y];
        let prim = Primitive { positions, morph_targets: vec![vec![Vec3::ZERO, Vec3::ZERO, Vec3::new(0.0, offset, 0.0)]], ..Default::default() };
        let node = Node { gltf_index: 5, mesh: Some(0), weights: vec![weight], ..Default::default() };
        Scene { meshes: vec![MeshAsset { primitives: vec![prim], ..Default::default() }], nodes: vec![node], ..Default::default() }
    }

    #[test]
    fn morph_weights_that_carry_vertices_past_f32_are_refused() {
        assert!(check(&morphed(1e6, 1.0)).is_ok(), "a large offset is fine");
        assert!(check(&morphed(3e38, 0.0)).is_ok(), "an unused target is fine");
        let err = check(&morphed(3e38, 1.0)).unwrap_err().to_string();
        assert!(err.contains("morph weights") && err.contains("past f32's range") && err.contains("node 5"), "{err}");
        assert!(check(&morphed(1e37, 20.0)).is_err(), "a weight past 1 counts");
        // A skinned node's primitive without influences is drawn rigid, by its node's world.
        let mut scene = morphed(3e38, 1.0);
        scene.nodes[0].skin = Some(0);
        scene.skins = vec![crate::scene::Skin { joints: vec![0], inverse_bind: vec![DMat4::IDENTITY], palette: vec![Mat4::IDENTITY] }];
        assert!(check(&scene).unwrap_err().to_string().contains("morph weights"), "drawn rigid, checked as rigid");
    }

    #[test]
    fn the_measures_taken_at_load_serve_every_pose() {
        let mut scene = morphed(3e38, 0.0);
        scene.deformed_reach = measure(&scene);
        assert_eq!(scene.deformed_reach[0].len(), 1);
        scene.nodes[0].weights = vec![1.0];
        assert!(check(&scene).is_err(), "a later pose is checked against the same measures");
    }
}
