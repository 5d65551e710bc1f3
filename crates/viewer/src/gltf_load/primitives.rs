//! Reading a mesh's triangle primitives once [`super::validate`] has passed them: positions,
//! indices (checked against the vertex count), normals (flat per triangle when the file has
//! none, as glTF 2.0 requires), the first texture coordinates, and the material; positions,
//! normals, texture coordinates and morph offsets dequantized where KHR_mesh_quantization
//! stores them as integers ([`super::quantized`]).

use super::materials::{self, Textures};
use super::quantized::read_floats;
use super::SceneError;
use crate::scene::MeshAsset;
use glam::{Vec2, Vec3, Vec4};
use picking_vk::{deform::SkinInfluences, draw::Topology};
use picking_vk_host::Primitive;

/// Vertices a list primitive of `mode` takes (a triangle's 3, a segment's 2; 1 for strips,
/// fans, loops and points, whose every vertex counts): those past the last whole one are
/// left out at load, and `validate` budgets the index list that leaves them out.
pub(super) fn vertices_a_primitive(mode: gltf::mesh::Mode) -> usize {
    match mode {
        gltf::mesh::Mode::Triangles => 3,
        gltf::mesh::Mode::Lines => 2,
        _ => 1,
    }
}

pub fn load_mesh(mesh: &gltf::Mesh, buffers: &[Vec<u8>], textures: &Textures) -> Result<MeshAsset, SceneError> {
    let mut asset = MeshAsset {
        name: super::kept_name(mesh.name()),
        primitives: vec![],
        weights: mesh.weights().map(<[f32]>::to_vec).unwrap_or_default(),
        source_faces: vec![],
        first_primitive: 0,
    };
    for prim in mesh.primitives() {
        let bad = |reason: String| SceneError::BadPrimitive { mesh: mesh.index(), primitive: prim.index(), reason };
        use gltf::mesh::Mode;
        let topology = match prim.mode() {
            // Strips and fans become lists at load: every later step (lit pass, pick, CPU
            // casts, chunks) then sees triangles in glTF's own order and winding.
            Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan => Topology::TriangleList,
            Mode::Lines => Topology::LineList,
            Mode::LineStrip | Mode::LineLoop => Topology::LineStrip,
            Mode::Points => Topology::PointList,
        };
        let data = |b: gltf::Buffer<'_>| buffers.get(b.index()).map(Vec::as_slice);
        let reader = prim.reader(data);
        let attribute = |semantic: gltf::Semantic| prim.get(&semantic);
        let positions = attribute(gltf::Semantic::Positions).ok_or_else(|| bad("it has no POSITION attribute".into()))?;
        let positions: Vec<Vec3> =
            read_floats::<3>(positions, data).ok_or_else(|| bad("its POSITION accessor cannot be read".into()))?.into_iter().map(Vec3::from).collect();
        if positions.iter().any(|p| !p.is_finite()) {
            return Err(bad("a position is not finite".into()));
        }
        let indices: Option<Vec<u32>> = match (prim.indices(), reader.read_indices()) {
            (Some(a), None) => return Err(bad(format!("its index accessor {} cannot be read", a.index()))),
            (_, Some(i)) => Some(i.into_u32().collect()),
            (None, None) => None,
        };
        if let Some(ix) = &indices {
            if let Some(&i) = ix.iter().find(|&&i| i as usize >= positions.len()) {
                return Err(bad(format!("index {i} is past its {} vertices", positions.len())));
            }
        }
        let count = indices.as_ref().map_or(positions.len(), Vec::len);
        let per = vertices_a_primitive(prim.mode());
        // Vertices past the last whole triangle or segment draw nothing (the Khronos validator
        // warns of them): they are left out, as a GPU leaves them.
        let indices = if !count.is_multiple_of(per) {
            log::warn!(
                "mesh {} primitive {}: {count} vertices is not a whole number of {:?} primitives; the last {} are left out",
                mesh.index(),
                prim.index(),
                prim.mode(),
                count % per
            );
            let mut ix = indices.unwrap_or_else(|| (0..positions.len() as u32).collect());
            ix.truncate(count - count % per);
            Some(ix)
        } else {
            indices
        };
        let count = count - count % per;
        // A loop is a strip back to its first vertex.
        let indices = match (prim.mode(), indices) {
            (Mode::LineLoop, ix) if count > 1 => {
                let mut ix = ix.unwrap_or_else(|| (0..positions.len() as u32).collect());
                ix.push(ix[0]);
                Some(ix)
            }
            (mode @ (Mode::TriangleStrip | Mode::TriangleFan), ix) => {
                let ix = ix.unwrap_or_else(|| (0..positions.len() as u32).collect());
                Some(triangle_list_of(mode == Mode::TriangleFan, &ix))
            }
            (_, ix) => ix,
        };
        let mut p = Primitive { positions, indices, topology, ..Default::default() };
        materials::apply(&mut p, &prim.material(), textures).map_err(bad)?;
        // The UVs are the set the base colour texture reads, in its texture transform.
        let (set, transform) = materials::uv_set(&prim.material());
        let textured = prim.material().pbr_metallic_roughness().base_color_texture().is_some();
        match attribute(gltf::Semantic::TexCoords(set)) {
            Some(uv) => {
                let uv = read_floats::<2>(uv, data).ok_or_else(|| bad(format!("its TEXCOORD_{set} accessor cannot be read")))?;
                let uvs: Vec<Vec2> = uv.into_iter().map(|uv| transform.transform_point2(Vec2::from(uv))).collect();
                if uvs.len() != p.positions.len() {
                    return Err(bad(format!("TEXCOORD_{set} and POSITION counts differ")));
                }
                if uvs.iter().any(|uv| !uv.is_finite()) {
                    return Err(bad(format!("a TEXCOORD_{set} value (in its texture transform) is not finite")));
                }
                p.uvs = Some(uvs);
            }
            // glTF: a texture binding needs the coordinate set it names.
            None if textured => return Err(bad(format!("its material's base colour texture reads TEXCOORD_{set}, which the primitive lacks"))),
            None => {}
        }
        if let Some(colors) = reader.read_colors(0) {
            let colors: Vec<Vec4> = colors.into_rgba_f32().map(Vec4::from).collect();
            if colors.len() != p.positions.len() {
                return Err(bad("COLOR_0 and POSITION counts differ".into()));
            }
            if colors.iter().any(|c| !c.is_finite()) {
                return Err(bad("a COLOR_0 value is not finite".into()));
            }
            p.colors = Some(colors);
        }
        read_deformation(&prim, &reader, data, &mut p).map_err(bad)?;
        match attribute(gltf::Semantic::Normals) {
            Some(n) => {
                let n = read_floats::<3>(n, data).ok_or_else(|| bad("its NORMAL accessor cannot be read".into()))?;
                p.normals = n.into_iter().map(|v| Vec3::from(v).normalize_or(Vec3::Y)).collect();
                if p.normals.len() != p.positions.len() {
                    return Err(bad("NORMAL and POSITION counts differ".into()));
                }
            }
            // glTF 2.0: "When normals are not specified, client implementations MUST calculate
            // flat normals". Lines and points have none: they are lit from above.
            None if topology == Topology::TriangleList => p = p.flat_shaded(),
            None => p.normals = vec![Vec3::Y; p.positions.len()],
        }
        asset.primitives.push(p);
    }
    // Every primitive of a mesh has the same morph targets (glTF), and the mesh's weights are
    // one per target.
    let targets = asset.target_count();
    if let Some(p) = asset.primitives.iter().position(|p| p.morph_targets.len() != targets) {
        return Err(SceneError::BadPrimitive {
            mesh: mesh.index(),
            primitive: p,
            reason: format!("it has {} morph targets, the mesh's first primitive {targets}", asset.primitives[p].morph_targets.len()),
        });
    }
    // An empty list is no list of one weight per target either (the schema's minItems is 1).
    let given = mesh.weights().is_some();
    if given && asset.weights.len() != targets {
        return Err(SceneError::BadPrimitive {
            mesh: mesh.index(),
            primitive: 0,
            reason: format!("the mesh has {} weights for {targets} morph targets", asset.weights.len()),
        });
    }
    if asset.weights.iter().any(|w| !w.is_finite()) {
        return Err(SceneError::BadPrimitive { mesh: mesh.index(), primitive: 0, reason: "a morph weight is not finite".into() });
    }
    asset.weights.resize(targets, 0.0);
    Ok(asset)
}

/// Reads skin influences (two sets of four at most) and morph target position deltas, all
/// one per vertex.
fn read_deformation<'a, 's, F>(prim: &gltf::Primitive<'a>, reader: &gltf::mesh::Reader<'a, 's, F>, data: F, p: &mut Primitive) -> Result<(), String>
where
    F: Clone + Fn(gltf::Buffer<'a>) -> Option<&'s [u8]>,
{
    let n = p.positions.len();
    for set in 0..2 {
        match (reader.read_joints(set), reader.read_weights(set)) {
            (Some(joints), Some(weights)) => {
                let joints: Vec<[u16; 4]> = joints.into_u16().collect();
                let weights: Vec<[f32; 4]> = weights.into_f32().collect();
                if joints.len() != n || weights.len() != n {
                    return Err(format!("JOINTS_{set} or WEIGHTS_{set} count differs from POSITION's {n}"));
                }
                if weights.iter().flatten().any(|w| !(w.is_finite() && *w >= 0.0)) {
                    return Err(format!("a WEIGHTS_{set} value is negative or not finite"));
                }
                p.skin.push(SkinInfluences { joints, weights });
            }
            (None, None) => break,
            _ => return Err(format!("JOINTS_{set} and WEIGHTS_{set} come in pairs")),
        }
    }
    // The viewer skins with eight influences: say so where a file has more (or a gap).
    // Asked of the attribute, not the reader: an unvalidated set's reader may panic on a
    // component type the specification does not allow (gltf's `read_joints` on FLOAT).
    let has_joints = |set: usize| prim.get(&gltf::Semantic::Joints(set as u32)).is_some();
    if let Some(set) = (p.skin.len()..p.skin.len() + 3).find(|&set| has_joints(set)) {
        log::warn!("JOINTS_{set} is not read (the viewer skins with JOINTS_0 and JOINTS_1 only): the weights it holds are left out");
    }
    for (t, target) in prim.morph_targets().enumerate() {
        let deltas: Vec<Vec3> = match target.positions() {
            Some(positions) => {
                let read = read_floats::<3>(positions, data.clone()).ok_or_else(|| format!("morph target {t}'s POSITION accessor cannot be read"))?;
                read.into_iter().map(Vec3::from).collect()
            }
            None => vec![Vec3::ZERO; n],
        };
        if deltas.len() != n {
            return Err(format!("morph target {t} has {} positions for {n} vertices", deltas.len()));
        }
        if deltas.iter().any(|d| !d.is_finite()) {
            return Err(format!("a morph target {t} position is not finite"));
        }
        p.morph_targets.push(deltas);
    }
    Ok(())
}

/// A strip's or fan's triangles as a list, as glTF 2.0 numbers and winds them (3.7.2.1): strip
/// triangle i is (i, i + 1 + i % 2, i + 2 - i % 2), fan triangle i is (i + 1, i + 2, 0).
fn triangle_list_of(fan: bool, ix: &[u32]) -> Vec<u32> {
    let count = ix.len().saturating_sub(2);
    let mut out = Vec::with_capacity(3 * count);
    for i in 0..count {
        let corners = if fan { [i + 1, i + 2, 0] } else { [i, i + 1 + i % 2, i + 2 - i % 2] };
        out.extend(corners.map(|k| ix[k]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::triangle_list_of;

    #[test]
    fn strips_and_fans_become_lists_in_gltf_order_and_winding() {
        let ix = [10, 11, 12, 13, 14];
        // Strip: (0 1 2), then (1 3 2): every triangle counter-clockwise like the first.
        assert_eq!(triangle_list_of(false, &ix), vec![10, 11, 12, 11, 13, 12, 12, 13, 14]);
        assert_eq!(triangle_list_of(true, &ix), vec![11, 12, 10, 12, 13, 10, 13, 14, 10]);
        assert!(triangle_list_of(false, &ix[..2]).is_empty(), "fewer than three vertices: no triangle");
    }
}
