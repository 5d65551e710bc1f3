//! Placing a scene in small f32 coordinates, with the file's float32 values as the truth.
//! Georeferenced scenes sit at 1e5 to 1e6, where an f32 step is 0.01 to 0.06: composing
//! transforms or rendering there in f32 moves surfaces by whole units. Node transforms are
//! composed in f64 (by the loader), a far-off mesh's positions are re-centred on the mesh, or
//! on its point nearest the camera (the difference of nearby floats is exact; a skinned mesh's
//! skins take the shift into their inverse bind matrices), triangles far larger than their
//! distance from the camera are split first ([`super::refine`]), and a far-off scene is
//! rebased on its camera or centre ([`Scene::origin`]), so that every f32 matrix and position
//! the GPU sees is small.

use crate::scene::Scene;
use glam::{DMat4, DVec3};

/// Coordinates beyond this are re-centred; nearer scenes are left exactly as loaded.
const FAR: f64 = 1.0e3;

/// Gives each primitive of a rigid mesh that spans more than `2 * FAR` a mesh of its own,
/// drawn by a child of every node that draws the mesh (named as that node, at its place):
/// one shift for the whole mesh would carry primitives far from it out of f32's reach (a box
/// at the origin, re-centred on the middle of a mesh that also holds a triangle at 2e7, lost
/// its half-unit corners). Skinned and morphed meshes stay whole. Extends `worlds` for the
/// new nodes.
pub fn split_far_primitives(scene: &mut Scene, worlds: &mut Vec<DMat4>) {
    // The nodes added below draw the new meshes only, so the file's meshes keep these users.
    for (m, users) in scene.mesh_users().into_iter().enumerate() {
        let mesh = &scene.meshes[m];
        let rigid = !is_skinned(mesh) && mesh.target_count() == 0;
        let Some((lo, hi)) = mesh_box(mesh) else { continue };
        if !rigid || mesh.primitives.len() < 2 || (hi - lo).max_element() <= 2.0 * FAR {
            continue;
        }
        let moved: Vec<_> = scene.meshes[m].primitives.drain(1..).collect();
        let (name, first) = (scene.meshes[m].name.clone(), scene.meshes[m].first_primitive);
        for (k, primitive) in moved.into_iter().enumerate() {
            let own = scene.meshes.len();
            let first_primitive = first + 1 + k as u32;
            scene.meshes.push(crate::scene::MeshAsset { name: name.clone(), primitives: vec![primitive], first_primitive, ..Default::default() });
            for &n in &users {
                let parent = &scene.nodes[n];
                let child = crate::scene::Node {
                    gltf_index: parent.gltf_index,
                    name: parent.name.clone(),
                    world: parent.world,
                    mesh: Some(own),
                    parent: Some(n),
                    gpu_instance: parent.gpu_instance,
                    ..Default::default()
                };
                scene.nodes.push(child);
                worlds.push(worlds[n]);
            }
        }
    }
}

/// A mesh's box in f64, if it has vertices.
fn mesh_box(mesh: &crate::scene::MeshAsset) -> Option<(DVec3, DVec3)> {
    mesh.primitives
        .iter()
        .flat_map(|p| p.positions.iter())
        .map(|p| p.as_dvec3())
        .fold(None, |b, p| Some(b.map_or((p, p), |(lo, hi): (DVec3, DVec3)| (lo.min(p), hi.max(p)))))
}

/// Sets each node's world (relative to the scene's origin) and the camera's, from the f64
/// worlds the loader composed; re-centres far-off meshes and picks the origin.
pub fn place(scene: &mut Scene, worlds: &[DMat4], camera: Option<DMat4>) {
    // Re-centre far-off meshes; the shift moves into every node that uses the mesh, and into
    // the inverse binds of the skins that deform it.
    let eye = camera.map(|c| c.transform_point3(DVec3::ZERO)).filter(|e| e.is_finite());
    // A mesh that several nodes draw, and that must be split near the camera, gets a copy per
    // node (each split for its own place).
    let needs_split = super::refine::unshare(scene, worlds, eye);
    let users = scene.mesh_users();
    let centres: Vec<DVec3> = (0..scene.meshes.len()).map(|m| centre_near(&scene.meshes[m], &users[m], worlds, eye)).collect();
    let skinned_ok = skinned_shifts_agree(scene, &centres);
    let shifts: Vec<DVec3> = scene.meshes.iter().zip(&centres).map(|(m, &centre)| if is_skinned(m) && !skinned_ok { DVec3::ZERO } else { centre }).collect();
    // Triangles far larger than their distance from the camera are split from the file's own
    // values, the pieces written already shifted (shifting first would round the far corners
    // at their size, tilting the whole plane); the rest are shifted here.
    let split = if needs_split { super::refine::refine_near_camera(scene, worlds, eye, &shifts) } else { Default::default() };
    for (m, (mesh, &shift)) in scene.meshes.iter_mut().zip(&shifts).enumerate() {
        for (p, primitive) in mesh.primitives.iter_mut().enumerate() {
            if shift != DVec3::ZERO && !split.contains(&(m, p)) {
                primitive.positions.iter_mut().for_each(|q| *q = (q.as_dvec3() - shift).as_vec3());
            }
        }
    }
    let users = scene.skin_users();
    for (skin, users) in scene.skins.iter_mut().zip(&users) {
        let skinned_mesh = |n: usize| scene.nodes[n].mesh.filter(|&m| scene.meshes.get(m).is_some_and(is_skinned));
        let shift = users.iter().find_map(|&n| skinned_mesh(n).and_then(|m| shifts.get(m))).copied();
        if let Some(shift) = shift.filter(|&c| c != DVec3::ZERO) {
            skin.inverse_bind.iter_mut().for_each(|ibm| *ibm *= DMat4::from_translation(shift));
        }
    }
    scene.mesh_shift = shifts.clone();
    let worlds: Vec<DMat4> = scene
        .nodes
        .iter()
        .zip(worlds)
        .map(|(node, &world)| match node.mesh.and_then(|m| shifts.get(m)) {
            Some(&shift) if shift != DVec3::ZERO => world * DMat4::from_translation(shift),
            _ => world,
        })
        .collect();
    let (lo, hi) = bounds(scene, &worlds);
    let far = lo.abs().max(hi.abs()).max_element() > FAR || eye.is_some_and(|e| e.abs().max_element() > FAR);
    // Precision matters most where the view is: at the file's camera when it has one (the
    // headless and initial view), else at the centre the default framing looks at.
    let centre = eye.unwrap_or((lo + hi) * 0.5);
    scene.origin = if far { centre.round() } else { DVec3::ZERO };
    let to_scene = DMat4::from_translation(-scene.origin);
    for (node, world) in scene.nodes.iter_mut().zip(&worlds) {
        node.world = (to_scene * *world).as_mat4();
    }
    if let (Some(desc), Some(world)) = (scene.camera.as_mut(), camera) {
        desc.world = (to_scene * world).as_mat4();
    }
}

fn is_skinned(mesh: &crate::scene::MeshAsset) -> bool {
    mesh.primitives.iter().any(|p| !p.skin.is_empty())
}

/// Where a mesh would be re-centred: its rounded centre when far off, else zero.
fn centre_of(mesh: &crate::scene::MeshAsset) -> DVec3 {
    let Some((lo, hi)) = mesh_box(mesh) else {
        return DVec3::ZERO;
    };
    if lo.abs().max(hi.abs()).max_element() <= FAR {
        return DVec3::ZERO;
    }
    ((lo + hi) * 0.5).round()
}

/// Where a far-off mesh is re-centred: where precision matters most, the point of its box
/// nearest the camera, when one node draws it rigidly (a ground 2e6 across, centred on the
/// origin but seen from near its edge, kept 0.06-unit steps there when centred on its middle);
/// else its box centre ([`centre_of`]).
/// `users`: the nodes that draw it.
fn centre_near(m: &crate::scene::MeshAsset, users: &[usize], worlds: &[DMat4], eye: Option<DVec3>) -> DVec3 {
    let centre = centre_of(m);
    let (&[node], Some(eye), Some((lo, hi))) = (users, eye, mesh_box(m)) else { return centre };
    if lo.abs().max(hi.abs()).max_element() <= FAR || is_skinned(m) || m.target_count() > 0 {
        return centre;
    }
    let inverse = worlds.get(node).map(DMat4::inverse).filter(|i| i.is_finite());
    inverse.map(|i| i.transform_point3(eye).clamp(lo, hi).round()).filter(|c| c.is_finite()).unwrap_or(centre)
}

/// Whether every skin deforms meshes that would all move by the same shift, so each skin's
/// inverse binds can follow it. Otherwise (rare: one skin over meshes far apart) no skinned
/// mesh is re-centred and skinned vertices keep the file's coordinates.
/// `centres`: each mesh's, as [`centre_of`] gives it.
fn skinned_shifts_agree(scene: &Scene, centres: &[DVec3]) -> bool {
    let skinned_centre = |m: usize| scene.meshes.get(m).filter(|mesh| is_skinned(mesh)).and(centres.get(m).copied());
    scene.skin_users().iter().all(|nodes| {
        let mut used = nodes.iter().filter_map(|&n| scene.nodes[n].mesh.and_then(skinned_centre));
        let first = used.next();
        used.all(|c| Some(c) == first)
    })
}

/// World bounds of every mesh node, in f64: each mesh's box once, then its 8 corners per node
/// (O(vertices + nodes), however many nodes share a mesh).
fn bounds(scene: &Scene, worlds: &[DMat4]) -> (DVec3, DVec3) {
    let boxes: Vec<Option<(DVec3, DVec3)>> = scene.meshes.iter().map(mesh_box).collect();
    let mut lo = DVec3::splat(f64::INFINITY);
    let mut hi = DVec3::splat(f64::NEG_INFINITY);
    for (node, world) in scene.nodes.iter().zip(worlds) {
        let Some((a, b)) = node.mesh.and_then(|m| boxes.get(m).copied().flatten()) else { continue };
        for corner in 0..8 {
            let c = DVec3::new(if corner & 1 == 0 { a.x } else { b.x }, if corner & 2 == 0 { a.y } else { b.y }, if corner & 4 == 0 { a.z } else { b.z });
            let w = world.transform_point3(c);
            lo = lo.min(w);
            hi = hi.max(w);
        }
    }
    if lo.x > hi.x {
        (DVec3::ZERO, DVec3::ZERO)
    } else {
        (lo, hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scene::{MeshAsset, Node};
    use glam::Vec3;
    use picking_vk_host::Primitive;

    fn scene_at(offset: DVec3) -> (Scene, Vec<DMat4>) {
        let positions = [Vec3::new(0.25, 0.0, 0.0), Vec3::new(1.5, 0.0, 0.0), Vec3::new(0.0, 1.75, 0.0)];
        let far_positions = positions.iter().map(|p| (p.as_dvec3() + offset).as_vec3()).collect();
        let prim = Primitive { positions: far_positions, ..Default::default() };
        let scene = Scene {
            meshes: vec![MeshAsset { name: None, primitives: vec![prim], ..Default::default() }],
            nodes: vec![Node { mesh: Some(0), ..Default::default() }],
            ..Default::default()
        };
        (scene, vec![DMat4::from_translation(DVec3::new(3.0, -2.0, 0.5))])
    }

    #[test]
    fn far_scenes_keep_the_files_values_and_near_ones_are_untouched() {
        let (mut near, worlds) = scene_at(DVec3::ZERO);
        place(&mut near, &worlds, None);
        assert_eq!(near.origin, DVec3::ZERO);
        assert_eq!(near.nodes[0].world, worlds[0].as_mat4());

        let offset = DVec3::new(1.0e6, -2.5e5, 7.5e5);
        let (mut far, worlds) = scene_at(offset);
        let truth: Vec<DVec3> = far.meshes[0].primitives[0].positions.iter().map(|p| worlds[0].transform_point3(p.as_dvec3())).collect();
        place(&mut far, &worlds, Some(DMat4::from_translation(offset)));
        assert!(far.origin.length() > 1.0e5);
        // Every vertex, placed back in the file's world, is exactly where the file put it.
        let prim = &far.meshes[0].primitives[0];
        for (p, t) in prim.positions.iter().zip(&truth) {
            let back = far.nodes[0].world.as_dmat4().transform_point3(p.as_dvec3()) + far.origin;
            assert!((back - *t).length() < 1e-6, "{back} vs {t}");
            assert!(p.abs().max_element() < 10.0, "rendered coordinates stay small: {p}");
        }
        assert!(far.nodes[0].world.w_axis.truncate().length() < 10.0);
    }
}
