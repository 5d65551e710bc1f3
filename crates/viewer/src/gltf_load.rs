//! Loading glTF 2.0 (.gltf with its buffers, or .glb) into the viewer's [`Scene`]: the node
//! hierarchy flattened to world transforms, every triangle primitive, and the first camera.
//! Anything malformed is a [`SceneError`] naming the problem, never a panic.

use crate::scene::{CameraDesc, MeshAsset, Node, Scene};
use glam::{Mat4, Vec2, Vec3};
use picking_vk_host::Primitive;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    #[error("could not read {path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("not a valid glTF 2.0 file: {0}")]
    Gltf(#[from] gltf::Error),
    #[error("mesh {mesh} primitive {primitive}: {reason}")]
    BadPrimitive { mesh: usize, primitive: usize, reason: String },
    #[error("node {node}: {reason}")]
    BadNode { node: usize, reason: String },
    #[error("cannot load the file's buffers ({uris}): {source}")]
    Buffers { uris: String, source: gltf::Error },
    #[error("the file has no triangle meshes to show")]
    Empty,
}

/// Loads a .gltf or .glb file from disk.
pub fn load_path(path: &Path) -> Result<Scene, SceneError> {
    let bytes = std::fs::read(path).map_err(|source| SceneError::Io { path: path.display().to_string(), source })?;
    load_bytes(&bytes, path.parent())
}

/// Loads glTF from memory; `base` resolves relative buffer URIs (.gltf with a .bin).
pub fn load_bytes(bytes: &[u8], base: Option<&Path>) -> Result<Scene, SceneError> {
    let gltf::Gltf { document, blob } = gltf::Gltf::from_slice(bytes)?;
    let buffers = gltf::import_buffers(&document, base, blob).map_err(|source| {
        let uris: Vec<String> = document
            .buffers()
            .map(|b| match b.source() {
                gltf::buffer::Source::Uri(u) if !u.starts_with("data:") => u.to_string(),
                gltf::buffer::Source::Uri(_) => "embedded data".into(),
                gltf::buffer::Source::Bin => "GLB binary chunk".into(),
            })
            .collect();
        SceneError::Buffers { uris: uris.join(", "), source }
    })?;
    let mut scene = Scene::default();
    for mesh in document.meshes() {
        scene.meshes.push(load_mesh(&mesh, &buffers)?);
    }
    let root_scene = document.default_scene().or_else(|| document.scenes().next());
    let roots: Vec<gltf::Node> = match &root_scene {
        Some(s) => s.nodes().collect(),
        None => document.nodes().collect(),
    };
    // Iterative walk with a depth bound: a malicious file cannot overflow the stack.
    let mut stack: Vec<(gltf::Node, Mat4, usize)> = roots.into_iter().rev().map(|n| (n, Mat4::IDENTITY, 0)).collect();
    let mut visited = vec![false; document.nodes().len()];
    while let Some((node, parent, depth)) = stack.pop() {
        if depth > 256 || std::mem::replace(&mut visited[node.index()], true) {
            return Err(SceneError::BadNode { node: node.index(), reason: "the node hierarchy has a cycle or is too deep".into() });
        }
        let local = Mat4::from_cols_array_2d(&node.transform().matrix());
        let world = parent * local;
        if !world.is_finite() {
            return Err(SceneError::BadNode { node: node.index(), reason: "its transform is not finite".into() });
        }
        if let Some(cam) = node.camera() {
            if scene.camera.is_none() {
                match cam.projection() {
                    gltf::camera::Projection::Perspective(p) => {
                        scene.camera = Some(CameraDesc { world, yfov: p.yfov(), znear: p.znear(), zfar: p.zfar() });
                    }
                    gltf::camera::Projection::Orthographic(_) => {
                        log::warn!("node {}: orthographic cameras are not supported; using the default view", node.index())
                    }
                }
            }
        }
        let mesh = node.mesh().map(|m| m.index());
        scene.nodes.push(Node { gltf_index: node.index(), name: node.name().map(str::to_owned), world, mesh });
        for child in node.children().collect::<Vec<_>>().into_iter().rev() {
            stack.push((child, world, depth + 1));
        }
    }
    let drawable = scene.nodes.iter().any(|n| n.mesh.is_some_and(|m| !scene.meshes[m].primitives.is_empty()));
    if !drawable {
        return Err(SceneError::Empty);
    }
    Ok(scene)
}

fn load_mesh(mesh: &gltf::Mesh, buffers: &[gltf::buffer::Data]) -> Result<MeshAsset, SceneError> {
    let mut asset = MeshAsset { name: mesh.name().map(str::to_owned), primitives: vec![] };
    for prim in mesh.primitives() {
        let bad = |reason: String| SceneError::BadPrimitive { mesh: mesh.index(), primitive: prim.index(), reason };
        if prim.mode() != gltf::mesh::Mode::Triangles {
            log::warn!("mesh {} primitive {}: mode {:?} is not drawn (triangles only)", mesh.index(), prim.index(), prim.mode());
            continue;
        }
        let reader = prim.reader(|b| buffers.get(b.index()).map(|d| &d.0[..]));
        let positions: Vec<Vec3> = reader.read_positions().ok_or_else(|| bad("it has no POSITION attribute".into()))?.map(Vec3::from).collect();
        if positions.iter().any(|p| !p.is_finite()) {
            return Err(bad("a position is not finite".into()));
        }
        let indices: Option<Vec<u32>> = reader.read_indices().map(|i| i.into_u32().collect());
        if let Some(ix) = &indices {
            if let Some(&i) = ix.iter().find(|&&i| i as usize >= positions.len()) {
                return Err(bad(format!("index {i} is past its {} vertices", positions.len())));
            }
        }
        let count = indices.as_ref().map_or(positions.len(), Vec::len);
        if !count.is_multiple_of(3) {
            return Err(bad(format!("{count} vertices is not a whole number of triangles")));
        }
        let mut p = Primitive { positions, normals: vec![], uvs: None, indices, color: prim.material().pbr_metallic_roughness().base_color_factor() };
        match reader.read_normals() {
            Some(n) => {
                p.normals = n.map(|v| Vec3::from(v).normalize_or(Vec3::Y)).collect();
                if p.normals.len() != p.positions.len() {
                    return Err(bad("NORMAL and POSITION counts differ".into()));
                }
            }
            None => p.compute_normals(),
        }
        if let Some(uv) = reader.read_tex_coords(0) {
            let uvs: Vec<Vec2> = uv.into_f32().map(Vec2::from).collect();
            if uvs.len() == p.positions.len() {
                p.uvs = Some(uvs);
            }
        }
        asset.primitives.push(p);
    }
    Ok(asset)
}
