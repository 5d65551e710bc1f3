//! The texture coordinate and texel under a hit, for the panel and the JSON. With detail the
//! picker already knows the UV; without it (no barycentric extension) the pick ray is cast on
//! the CPU against the one primitive the hit names (its triangles only, in its own space).

use crate::scene::{Node, Scene};
use glam::{DVec3, Vec2};
use picking_vk::{deform::DeformPose, request::Ray, results::HitDetail};
use picking_vk_host::{Primitive, TextureData};
use std::borrow::Cow;

/// Primitives with more triangles are not ray cast on the CPU (the panel runs every frame).
const MAX_CPU_TRIANGLES: usize = 200_000;

/// The texel a hit's UV reads in its primitive's base colour texture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TexelReport {
    /// Index among the scene's textures.
    pub texture: usize,
    pub xy: [u32; 2],
    pub rgba: [u8; 4],
}

/// UV and texel of a hit on primitive `primitive` of scene node `node`; `ray` in the scene's
/// frame. `None`s where the primitive has no UVs (or no texture, for the texel).
pub fn lookup(scene: &Scene, node: usize, primitive: usize, detail: Option<&HitDetail>, ray: Option<Ray>) -> (Option<Vec2>, Option<TexelReport>) {
    let Some(node) = scene.nodes.get(node) else { return (None, None) };
    let Some(p) = node.mesh.and_then(|m| scene.meshes.get(m)).and_then(|m| m.primitives.get(primitive)) else { return (None, None) };
    let uv = match detail.and_then(|d| d.surface).and_then(|s| s.uv) {
        Some(uv) => Some(uv),
        // Checked before posing: deforming a mesh every frame for a cast that cannot answer
        // (no UVs, too many triangles) would be wasted.
        None => ray.filter(|_| p.uvs.is_some() && p.triangle_count() <= MAX_CPU_TRIANGLES).and_then(|ray| {
            // A skinned or morphed node is cast against its current pose.
            let (positions, world) = posed(scene, node, p)?;
            cpu_uv(p, &positions, world, ray, p.texture.and_then(|t| scene.textures.get(t)))
        }),
    };
    let texel = match (uv, p.texture.and_then(|t| scene.textures.get(t).map(|data| (t, data)))) {
        (Some(uv), Some((texture, data))) => {
            let (xy, rgba) = data.nearest(uv);
            Some(TexelReport { texture, xy, rgba })
        }
        _ => None,
    };
    (uv, texel)
}

/// `p` as `node` draws it now, and the matrix that places it: morph targets blended by the
/// node's weights, then skinned by its joints' matrices (which place it themselves: a
/// skinned mesh's node transform plays no part, as in glTF). Borrowed when `p` is rigid.
fn posed<'p>(scene: &Scene, node: &Node, p: &'p Primitive) -> Option<(Cow<'p, [glam::Vec3]>, glam::DMat4)> {
    let palette = node.skin.and_then(|s| scene.skins.get(s)).map(|s| s.palette.as_slice()).filter(|_| !p.skin.is_empty());
    let morphed = node.weights.iter().zip(&p.morph_targets).any(|(w, _)| *w != 0.0);
    if palette.is_none() && !morphed {
        return Some((Cow::Borrowed(&p.positions), node.world.as_dmat4()));
    }
    // As many vertices as triangles at most: deforming is per vertex, every frame.
    if p.positions.len() > MAX_CPU_TRIANGLES {
        return None;
    }
    // Deformed as the pick shader deforms it (the picker's own CPU deformation).
    let pose = DeformPose { joint_matrices: palette.map(<[_]>::to_vec).unwrap_or_default(), morph_weights: node.weights.clone() };
    let positions = (0..p.positions.len())
        .map(|v| pose.deform_vertex(p.positions[v], v, &p.morph_targets, &p.skin, palette.is_some()).map(|(q, _)| q.as_vec3()))
        .collect::<Option<Vec<_>>>()?;
    let world = if palette.is_some() { glam::DMat4::IDENTITY } else { node.world.as_dmat4() };
    Some((Cow::Owned(positions), world))
}

/// The UV where `ray` first meets `p`, its vertices at `positions`, under `world`, by brute
/// force: both sides, or for a single-sided primitive only the faces the pick does not cull
/// (front faces); for a masked one only where its alpha (`texture`: its base colour
/// texture) passes the cutoff, as the pick's discard hook has it.
fn cpu_uv(p: &Primitive, positions: &[glam::Vec3], world: glam::DMat4, ray: Ray, texture: Option<&TextureData>) -> Option<Vec2> {
    let to_local = world.inverse();
    let origin = to_local.transform_point3(ray.origin);
    let dir = to_local.transform_vector3(ray.direction);
    let mut best: Option<(f64, usize, [f64; 3])> = None;
    for t in 0..p.triangle_count() {
        let corners = p.triangle(t);
        let v = corners.map(|i| positions.get(i as usize).copied().unwrap_or_default().as_dvec3());
        if let Some((dist, bary, det)) = intersect(origin, dir, v) {
            // In the primitive's own space the front is always the counter-clockwise side: a
            // mirroring world turns the winding on screen and the pick's front face with it.
            if p.single_sided && det <= 0.0 {
                continue;
            }
            // A hole of the mask is passed through (checked only for a nearer face: the
            // texel lookup costs more than the comparison).
            let masked = || p.alpha_cutoff.is_some_and(|cutoff| p.mask_alpha(t, bary, texture).is_some_and(|(alpha, _)| alpha < cutoff));
            if best.is_none_or(|(d, _, _)| dist < d) && !masked() {
                best = Some((dist, t, bary));
            }
        }
    }
    let (_, t, bary) = best?;
    p.uv_at(t, bary)
}

/// Möller–Trumbore, both sides: the ray parameter, barycentrics, and the determinant
/// (positive when the ray meets the counter-clockwise side: it travels against the normal).
fn intersect(origin: DVec3, dir: DVec3, v: [DVec3; 3]) -> Option<(f64, [f64; 3], f64)> {
    let (e1, e2) = (v[1] - v[0], v[2] - v[0]);
    let p = dir.cross(e2);
    let det = e1.dot(p);
    if det.abs() < 1e-18 {
        return None;
    }
    let s = origin - v[0];
    let u = s.dot(p) / det;
    let q = s.cross(e1);
    let w = dir.dot(q) / det;
    if u < 0.0 || w < 0.0 || u + w > 1.0 {
        return None;
    }
    let t = e2.dot(q) / det;
    (t > 0.0).then_some((t, [1.0 - u - w, u, w], det))
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;
    use picking_vk_host::shapes;

    #[test]
    fn the_cpu_ray_finds_the_uv_of_the_hit() {
        // The plane spans -1..1 in X and Z with UV (0, 0) at (-1, -1) and (1, 1) at (1, 1).
        let plane = shapes::plane(1.0, [1.0; 4]);
        let ray = Ray { origin: DVec3::new(0.5, 3.0, -0.5), direction: DVec3::NEG_Y };
        let uv = cpu_uv(&plane, &plane.positions, glam::DMat4::IDENTITY, ray, None).unwrap();
        assert!((uv - Vec2::new(0.75, 0.25)).length() < 1e-6, "{uv}");
        let moved = glam::DMat4::from_translation(DVec3::new(10.0, 0.0, 0.0));
        let ray = Ray { origin: DVec3::new(10.5, 3.0, -0.5), direction: DVec3::NEG_Y };
        assert!((cpu_uv(&plane, &plane.positions, moved, ray, None).unwrap() - Vec2::new(0.75, 0.25)).length() < 1e-6);
        assert_eq!(cpu_uv(&plane, &plane.positions, moved, Ray { origin: DVec3::new(0.0, 3.0, 0.0), direction: DVec3::NEG_Y }, None), None, "a miss");
    }

    #[test]
    fn skinned_and_morphed_nodes_are_cast_in_their_current_pose() {
        use crate::scene::{MeshAsset, Node};
        let mut plane = shapes::plane(1.0, [1.0; 4]);
        let n = plane.positions.len();
        plane.skin = vec![picking_vk::deform::SkinInfluences { joints: vec![[0; 4]; n], weights: vec![[1.0, 0.0, 0.0, 0.0]; n] }];
        plane.morph_targets = vec![vec![Vec3::new(0.0, 0.0, 0.5); n]];
        // The joint moves the plane 10 along x; the morph target, weighted 1, 0.5 along z.
        let joint = glam::Mat4::from_translation(Vec3::new(10.0, 0.0, 0.0));
        let node = Node { mesh: Some(0), skin: Some(0), weights: vec![1.0], ..Default::default() };
        let scene = Scene {
            meshes: vec![MeshAsset { primitives: vec![plane], ..Default::default() }],
            nodes: vec![node],
            skins: vec![crate::scene::Skin { joints: vec![0], inverse_bind: vec![glam::DMat4::IDENTITY], palette: vec![joint] }],
            ..Default::default()
        };
        // At rest the plane spans -1..1; posed, x 9..11 and z -0.5..1.5: (10.5, -0.5 + 0.5) is
        // UV (0.75, 0.25) of the posed plane, off the rest one.
        let ray = Ray { origin: DVec3::new(10.5, 3.0, 0.0), direction: DVec3::NEG_Y };
        let (uv, _) = lookup(&scene, 0, 0, None, Some(ray));
        assert!(uv.is_some_and(|uv| (uv - Vec2::new(0.75, 0.25)).length() < 1e-6), "{uv:?}");
    }

    #[test]
    fn a_single_sided_primitive_gives_the_uv_of_the_face_the_pick_keeps() {
        // Two parallel squares, the upper one (y = 1) facing down and UV 0.75, the lower one
        // (y = 0) facing up and UV 0.25; the ray comes from above.
        let square = |y: f32, up: bool, uv: f32| {
            let p = [Vec3::new(-1.0, y, -1.0), Vec3::new(1.0, y, -1.0), Vec3::new(1.0, y, 1.0), Vec3::new(-1.0, y, 1.0)];
            let order = if up { [0, 3, 2, 0, 2, 1] } else { [0, 1, 2, 0, 2, 3] };
            (p, order, uv)
        };
        let mut positions = vec![];
        let mut indices = vec![];
        let mut uvs = vec![];
        for (p, order, uv) in [square(1.0, false, 0.75), square(0.0, true, 0.25)] {
            let base = positions.len() as u32;
            positions.extend(p);
            uvs.extend([Vec2::splat(uv); 4]);
            indices.extend(order.map(|i| base + i));
        }
        let mut prim = Primitive { positions, uvs: Some(uvs), indices: Some(indices), ..shapes::plane(1.0, [1.0; 4]) };
        prim.normals = vec![Vec3::Y; prim.positions.len()];
        let ray = Ray { origin: DVec3::new(0.2, 3.0, 0.1), direction: DVec3::NEG_Y };
        let uv_of = |p: &Primitive, world| cpu_uv(p, &p.positions, world, ray, None).unwrap().x;
        assert_eq!(uv_of(&prim, glam::DMat4::IDENTITY), 0.75, "both sides: the nearer square");
        prim.single_sided = true;
        assert_eq!(uv_of(&prim, glam::DMat4::IDENTITY), 0.25, "the upper square faces away: culled");
        // Mirrored in y about the plane y = 0.5, the squares swap places and windings turn: the
        // square now on top (the old lower one) faces away from the ray and is culled.
        let mirror = glam::DMat4::from_translation(DVec3::new(0.0, 1.0, 0.0)) * glam::DMat4::from_scale(DVec3::new(1.0, -1.0, 1.0));
        assert_eq!(uv_of(&prim, mirror), 0.75);
    }

    #[test]
    fn a_masked_primitive_gives_the_uv_of_the_face_its_mask_keeps() {
        // Two squares facing up, y = 1 over y = 0; u runs with x, the lower one's half a
        // texture further, and v tells them apart (0.1 upper, 0.9 lower). The texture is one
        // row of two texels: u < 0.5 a hole (alpha 0), the rest solid.
        let mut positions = vec![];
        let mut uvs = vec![];
        let mut indices = vec![];
        for (y, shift, v) in [(1.0, 0.0, 0.1), (0.0, 0.5, 0.9)] {
            let base = positions.len() as u32;
            for (x, z) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                positions.push(Vec3::new(x, y, z));
                uvs.push(Vec2::new((x + 1.0) / 2.0 + shift, v));
            }
            indices.extend([0, 3, 2, 0, 2, 1].map(|i| base + i));
        }
        let mut prim = Primitive { positions, uvs: Some(uvs), indices: Some(indices), ..shapes::plane(1.0, [1.0; 4]) };
        prim.normals = vec![Vec3::Y; prim.positions.len()];
        let sampler = picking_vk_host::SamplerDesc { linear_mag: false, linear_min: false, ..Default::default() };
        let texture = TextureData { rgba: vec![255, 255, 255, 0, 255, 255, 255, 255].into(), width: 2, height: 1, sampler };
        let uv_at = |p: &Primitive, x: f64| {
            let ray = Ray { origin: DVec3::new(x, 3.0, 0.2), direction: DVec3::NEG_Y };
            let uv = cpu_uv(p, &p.positions, glam::DMat4::IDENTITY, ray, Some(&texture)).expect("a hit");
            (uv * 100.0).round() / 100.0
        };
        assert_eq!(uv_at(&prim, -0.5), Vec2::new(0.25, 0.1), "unmasked: the upper square");
        prim.alpha_cutoff = Some(0.5);
        assert_eq!(uv_at(&prim, -0.5), Vec2::new(0.75, 0.9), "through the upper square's hole to the lower one");
        assert_eq!(uv_at(&prim, 0.5), Vec2::new(0.75, 0.1), "the upper square is solid here");
        // The colour's alpha takes part: at 0.4 everything is below the cutoff.
        prim.color[3] = 0.4;
        let ray = Ray { origin: DVec3::new(0.5, 3.0, 0.2), direction: DVec3::NEG_Y };
        assert_eq!(cpu_uv(&prim, &prim.positions, glam::DMat4::IDENTITY, ray, Some(&texture)), None);
    }
}
