//! A small glTF 2.0 writer (meshes with skin influences and morph targets, a node hierarchy,
//! skins, animations, materials with PNG base colour textures, a camera), used to build the
//! built-in scene in `assets/` and by tests that write their own files.

use glam::{Mat4, Quat, Vec3};
use picking_vk_host::{Primitive, TextureData, Wrap};
use serde_json::{json, Value};

#[derive(Default)]
pub struct GltfBuilder {
    bin: Vec<u8>,
    buffer_views: Vec<Value>,
    accessors: Vec<Value>,
    meshes: Vec<Value>,
    materials: Vec<Value>,
    images: Vec<Value>,
    samplers: Vec<Value>,
    textures: Vec<Value>,
    nodes: Vec<Value>,
    cameras: Vec<Value>,
    skins: Vec<Value>,
    animations: Vec<Value>,
    roots: Vec<usize>,
    extensions_used: Vec<&'static str>,
}

/// An animation channel to write: node, path (`translation`, `rotation`, `scale`,
/// `weights`), interpolation (`LINEAR`, `STEP`, `CUBICSPLINE`), key times and flat values.
pub struct ChannelSpec<'a> {
    pub node: usize,
    pub path: &'a str,
    pub interpolation: &'a str,
    pub times: &'a [f32],
    pub values: &'a [f32],
}

/// How a primitive's indices are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexStorage {
    U16,
    U32,
}

impl GltfBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    fn push_view(&mut self, bytes: &[u8], target: Option<u32>) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let mut view = json!({ "buffer": 0, "byteOffset": self.bin.len(), "byteLength": bytes.len() });
        if let Some(t) = target {
            view["target"] = json!(t);
        }
        self.bin.extend_from_slice(bytes);
        self.buffer_views.push(view);
        self.buffer_views.len() - 1
    }

    /// Vertex attribute floats: their view is an ARRAY_BUFFER.
    fn push_floats(&mut self, data: &[f32], components: usize, with_bounds: bool) -> usize {
        self.push_floats_in(data, components, with_bounds, Some(34962))
    }

    /// Floats in a view of `target` (none for what no vertex stage reads: keyframe times).
    fn push_floats_in(&mut self, data: &[f32], components: usize, with_bounds: bool, target: Option<u32>) -> usize {
        let bytes: Vec<u8> = data.iter().flat_map(|f| f.to_le_bytes()).collect();
        let view = self.push_view(&bytes, target);
        let kind = ["", "SCALAR", "VEC2", "VEC3", "VEC4"][components];
        let mut acc = json!({ "bufferView": view, "componentType": 5126, "count": data.len() / components, "type": kind });
        if with_bounds {
            let mut lo = vec![f32::INFINITY; components];
            let mut hi = vec![f32::NEG_INFINITY; components];
            for chunk in data.chunks(components) {
                for (k, v) in chunk.iter().enumerate() {
                    lo[k] = lo[k].min(*v);
                    hi[k] = hi[k].max(*v);
                }
            }
            acc["min"] = json!(lo);
            acc["max"] = json!(hi);
        }
        self.accessors.push(acc);
        self.accessors.len() - 1
    }

    /// Adds `texture` as a PNG image in the binary buffer with its sampler; returns the
    /// texture's index, which primitives name in [`Primitive::texture`].
    pub fn add_texture(&mut self, texture: &TextureData) -> usize {
        let mut png = vec![];
        let image = image::RgbaImage::from_raw(texture.width, texture.height, texture.rgba.to_vec());
        if let Some(image) = image {
            if let Err(e) = image.write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png) {
                log::error!("encoding a texture failed: {e}");
            }
        }
        let view = self.push_view(&png, None);
        self.images.push(json!({ "bufferView": view, "mimeType": "image/png" }));
        let s = &texture.sampler;
        let wrap = |w: Wrap| match w {
            Wrap::Repeat => 10497,
            Wrap::ClampToEdge => 33071,
            Wrap::MirroredRepeat => 33648,
        };
        let filter = |linear: bool| if linear { 9729 } else { 9728 };
        self.samplers.push(json!({ "magFilter": filter(s.linear_mag), "minFilter": filter(s.linear_min), "wrapS": wrap(s.wrap_s), "wrapT": wrap(s.wrap_t) }));
        self.textures.push(json!({ "source": self.images.len() - 1, "sampler": self.samplers.len() - 1 }));
        self.textures.len() - 1
    }

    /// Adds `p`'s material: base colour (and texture), alpha mask, sidedness.
    pub fn add_material(&mut self, p: &Primitive) -> usize {
        let mut pbr = json!({ "baseColorFactor": p.color, "metallicFactor": 0.0 });
        if let Some(t) = p.texture {
            pbr["baseColorTexture"] = json!({ "index": t });
        }
        let mut material = json!({ "pbrMetallicRoughness": pbr, "doubleSided": !p.single_sided });
        if let Some(cutoff) = p.alpha_cutoff {
            material["alphaMode"] = json!("MASK");
            material["alphaCutoff"] = json!(cutoff);
        }
        self.materials.push(material);
        self.materials.len() - 1
    }

    /// Adds a mesh of several primitives; returns its index.
    pub fn add_mesh(&mut self, name: &str, primitives: &[(&Primitive, IndexStorage)]) -> usize {
        let mut prims = vec![];
        for (p, storage) in primitives {
            let material = self.add_material(p);
            let pos: Vec<f32> = p.positions.iter().flat_map(|v| v.to_array()).collect();
            let pos = self.push_floats(&pos, 3, true);
            let nrm: Vec<f32> = p.normals.iter().flat_map(|v| v.to_array()).collect();
            let nrm = self.push_floats(&nrm, 3, false);
            let mut attributes = json!({ "POSITION": pos, "NORMAL": nrm });
            if let Some(uvs) = &p.uvs {
                let uv: Vec<f32> = uvs.iter().flat_map(|v| v.to_array()).collect();
                attributes["TEXCOORD_0"] = json!(self.push_floats(&uv, 2, false));
            }
            if let Some(colors) = &p.colors {
                let rgba: Vec<f32> = colors.iter().flat_map(|c| c.to_array()).collect();
                attributes["COLOR_0"] = json!(self.push_floats(&rgba, 4, false));
            }
            for (set, influences) in p.skin.iter().enumerate() {
                // A joint slot of zero weight names joint 0, as glTF asks of unused slots.
                let used = influences
                    .joints
                    .iter()
                    .zip(&influences.weights)
                    .flat_map(|(j, w)| std::array::from_fn::<u16, 4, _>(|k| if w[k] == 0.0 { 0 } else { j[k] }));
                let joints: Vec<u8> = used.flat_map(u16::to_le_bytes).collect();
                let view = self.push_view(&joints, Some(34962));
                self.accessors.push(json!({ "bufferView": view, "componentType": 5123, "count": influences.joints.len(), "type": "VEC4" }));
                attributes[format!("JOINTS_{set}")] = json!(self.accessors.len() - 1);
                let weights: Vec<f32> = influences.weights.iter().flatten().copied().collect();
                attributes[format!("WEIGHTS_{set}")] = json!(self.push_floats(&weights, 4, false));
            }
            let mode = match p.topology {
                picking_vk::draw::Topology::PointList => 0,
                picking_vk::draw::Topology::LineList => 1,
                picking_vk::draw::Topology::LineStrip => 3,
                _ => 4,
            };
            let mut prim = json!({ "attributes": attributes, "material": material, "mode": mode });
            if !p.morph_targets.is_empty() {
                let targets: Vec<Value> = p
                    .morph_targets
                    .iter()
                    .map(|t| {
                        let d: Vec<f32> = t.iter().flat_map(|v| v.to_array()).collect();
                        json!({ "POSITION": self.push_floats(&d, 3, true) })
                    })
                    .collect();
                prim["targets"] = json!(targets);
            }
            if let Some(ix) = &p.indices {
                let (bytes, ctype): (Vec<u8>, u32) = match storage {
                    IndexStorage::U16 => (ix.iter().flat_map(|&i| (i as u16).to_le_bytes()).collect(), 5123),
                    IndexStorage::U32 => (ix.iter().flat_map(|&i| i.to_le_bytes()).collect(), 5125),
                };
                let view = self.push_view(&bytes, Some(34963));
                self.accessors.push(json!({ "bufferView": view, "componentType": ctype, "count": ix.len(), "type": "SCALAR" }));
                prim["indices"] = json!(self.accessors.len() - 1);
            }
            prims.push(prim);
        }
        self.meshes.push(json!({ "name": name, "primitives": prims }));
        self.meshes.len() - 1
    }

    /// Adds a node (local transform as a matrix); children are given as node indices.
    pub fn add_node(&mut self, name: &str, mesh: Option<usize>, local: Mat4, children: &[usize]) -> usize {
        let mut node = json!({ "name": name });
        if local != Mat4::IDENTITY {
            node["matrix"] = json!(local.to_cols_array());
        }
        if let Some(m) = mesh {
            node["mesh"] = json!(m);
        }
        if !children.is_empty() {
            node["children"] = json!(children);
        }
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    /// Adds a node with a translation, rotation, scale transform (what animations target).
    pub fn add_trs_node(&mut self, name: &str, mesh: Option<usize>, (t, r, s): (Vec3, Quat, Vec3), children: &[usize]) -> usize {
        let node = self.add_node(name, mesh, Mat4::IDENTITY, children);
        self.nodes[node]["translation"] = json!(t.to_array());
        self.nodes[node]["rotation"] = json!(r.to_array());
        self.nodes[node]["scale"] = json!(s.to_array());
        node
    }

    /// Sets a TRS node's translation in f64: the digits a georeferenced file writes, more
    /// than an f32 holds far from the origin.
    pub fn set_translation(&mut self, node: usize, t: [f64; 3]) {
        self.nodes[node]["translation"] = json!(t);
    }

    /// Sets a node's `extras`.
    pub fn set_extras(&mut self, node: usize, extras: Value) {
        self.nodes[node]["extras"] = extras;
    }

    /// Sets a node's morph weights.
    pub fn set_weights(&mut self, node: usize, weights: &[f32]) {
        self.nodes[node]["weights"] = json!(weights);
    }

    /// Draws `node`'s mesh once per instance (EXT_mesh_gpu_instancing) instead of once at the
    /// node: instance `k` at `translations[k]`, `rotations[k]` and `scales[k]` in the node's
    /// frame (an empty list leaves that attribute out).
    pub fn set_gpu_instances(&mut self, node: usize, translations: &[Vec3], rotations: &[Quat], scales: &[Vec3]) {
        let mut attributes = serde_json::Map::new();
        let lists: [(&str, Vec<f32>, usize); 3] = [
            ("TRANSLATION", translations.iter().flat_map(|v| v.to_array()).collect(), 3),
            ("ROTATION", rotations.iter().flat_map(|q| q.to_array()).collect(), 4),
            ("SCALE", scales.iter().flat_map(|v| v.to_array()).collect(), 3),
        ];
        for (name, data, components) in lists {
            if !data.is_empty() {
                attributes.insert(name.into(), json!(self.push_floats(&data, components, false)));
            }
        }
        self.nodes[node]["extensions"] = json!({ "EXT_mesh_gpu_instancing": { "attributes": attributes } });
        if !self.extensions_used.contains(&"EXT_mesh_gpu_instancing") {
            self.extensions_used.push("EXT_mesh_gpu_instancing");
        }
    }

    /// Adds a skin over `joints` (node indices) with their inverse bind matrices and makes
    /// `node` use it; returns the skin's index.
    pub fn add_skin(&mut self, node: usize, joints: &[usize], inverse_bind: &[Mat4]) -> usize {
        let data: Vec<f32> = inverse_bind.iter().flat_map(|m| m.to_cols_array()).collect();
        let bytes: Vec<u8> = data.iter().flat_map(|f| f.to_le_bytes()).collect();
        let view = self.push_view(&bytes, None);
        self.accessors.push(json!({ "bufferView": view, "componentType": 5126, "count": inverse_bind.len(), "type": "MAT4" }));
        self.skins.push(json!({ "joints": joints, "inverseBindMatrices": self.accessors.len() - 1 }));
        self.nodes[node]["skin"] = json!(self.skins.len() - 1);
        self.skins.len() - 1
    }

    /// Adds an animation of `channels`.
    pub fn add_animation(&mut self, name: &str, channels: &[ChannelSpec<'_>]) {
        let mut samplers = vec![];
        let mut out = vec![];
        for (i, c) in channels.iter().enumerate() {
            let input = self.push_floats_in(c.times, 1, true, None);
            let width = match c.path {
                "rotation" => 4,
                "weights" => 1,
                _ => 3,
            };
            let bytes: Vec<u8> = c.values.iter().flat_map(|f| f.to_le_bytes()).collect();
            let view = self.push_view(&bytes, None);
            let kind = ["", "SCALAR", "VEC2", "VEC3", "VEC4"][width];
            self.accessors.push(json!({ "bufferView": view, "componentType": 5126, "count": c.values.len() / width, "type": kind }));
            samplers.push(json!({ "input": input, "output": self.accessors.len() - 1, "interpolation": c.interpolation }));
            out.push(json!({ "sampler": i, "target": { "node": c.node, "path": c.path } }));
        }
        self.animations.push(json!({ "name": name, "samplers": samplers, "channels": out }));
    }

    /// Adds a node holding a perspective camera looking down its local -Z.
    pub fn add_camera_node(&mut self, name: &str, yfov: f32, znear: f32, zfar: Option<f32>, local: Mat4) -> usize {
        let mut persp = json!({ "yfov": yfov, "znear": znear });
        if let Some(f) = zfar {
            persp["zfar"] = json!(f);
        }
        self.cameras.push(json!({ "type": "perspective", "perspective": persp }));
        let node = self.add_node(name, None, local, &[]);
        self.nodes[node]["camera"] = json!(self.cameras.len() - 1);
        node
    }

    /// Adds a node holding an orthographic camera looking down its local -Z, `xmag` and `ymag`
    /// half its view's width and height.
    pub fn add_orthographic_camera_node(&mut self, name: &str, (xmag, ymag): (f32, f32), znear: f32, zfar: f32, local: Mat4) -> usize {
        self.cameras.push(json!({ "type": "orthographic", "orthographic": { "xmag": xmag, "ymag": ymag, "znear": znear, "zfar": zfar } }));
        let node = self.add_node(name, None, local, &[]);
        self.nodes[node]["camera"] = json!(self.cameras.len() - 1);
        node
    }

    pub fn add_root(&mut self, node: usize) {
        self.roots.push(node);
    }

    /// Makes `node` the scene's first root (its camera is met first).
    pub fn add_root_first(&mut self, node: usize) {
        self.roots.insert(0, node);
    }

    /// Keeps only the roots named in `names` (and roots added later).
    pub fn clear_roots_but(&mut self, names: &[&str]) {
        let nodes = &self.nodes;
        self.roots.retain(|&r| nodes[r]["name"].as_str().is_some_and(|n| names.contains(&n)));
    }

    fn document(&self, uri: Option<&str>) -> Value {
        let mut buffer = json!({ "byteLength": self.bin.len() });
        if let Some(u) = uri {
            buffer["uri"] = json!(u);
        }
        let mut doc = json!({
            "asset": { "version": "2.0", "generator": "picking-vk viewer" },
            "scene": 0,
            "scenes": [{ "nodes": self.roots }],
            "nodes": self.nodes,
            "meshes": self.meshes,
            "materials": self.materials,
            "accessors": self.accessors,
            "bufferViews": self.buffer_views,
            "buffers": [buffer],
        });
        if !self.cameras.is_empty() {
            doc["cameras"] = json!(self.cameras);
        }
        if !self.skins.is_empty() {
            doc["skins"] = json!(self.skins);
        }
        if !self.animations.is_empty() {
            doc["animations"] = json!(self.animations);
        }
        if !self.extensions_used.is_empty() {
            doc["extensionsUsed"] = json!(self.extensions_used);
        }
        if !self.textures.is_empty() {
            doc["images"] = json!(self.images);
            doc["samplers"] = json!(self.samplers);
            doc["textures"] = json!(self.textures);
        }
        doc
    }

    /// The binary .glb form.
    pub fn to_glb(&self) -> Vec<u8> {
        let mut json_bytes = serde_json::to_vec(&self.document(None)).unwrap_or_default();
        while !json_bytes.len().is_multiple_of(4) {
            json_bytes.push(b' ');
        }
        let mut bin = self.bin.clone();
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        let total = 12 + 8 + json_bytes.len() + 8 + bin.len();
        let mut out = Vec::with_capacity(total);
        out.extend_from_slice(b"glTF");
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(&(total as u32).to_le_bytes());
        out.extend_from_slice(&(json_bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(b"JSON");
        out.extend_from_slice(&json_bytes);
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&bin);
        out
    }

    /// The .gltf (JSON) form with its buffer in a separate file named `bin_uri`.
    pub fn to_gltf(&self, bin_uri: &str) -> (String, Vec<u8>) {
        (serde_json::to_string_pretty(&self.document(Some(bin_uri))).unwrap_or_default(), self.bin.clone())
    }
}
