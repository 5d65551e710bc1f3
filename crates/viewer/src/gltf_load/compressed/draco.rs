//! Draco primitives (`KHR_draco_mesh_compression`): the stream in the extension's bufferView
//! is decoded by `draco-core` (a pure-Rust Draco decoder; sequential and EdgeBreaker
//! streams, quantized and octahedral attributes undone as it decodes) into a triangle list
//! and the attributes the extension names. Each is written in the component type its glTF
//! accessor declares, so a quantized file decodes to the same integers it would hold
//! uncompressed.

use super::{required_u64, slice_of, Decoded};
use crate::gltf_load::SceneError;
use draco_core::{DataType, DecodeLimits, DecoderBuffer, Mesh, MeshDecoder};
use gltf::accessor::{DataType as ComponentType, Dimensions};
use gltf::json::accessor::GenericComponentType;
use gltf::json::validation::{Checked, USize64};
use gltf::json::Index;
use serde_json::Value;

/// The extension's name, as `extensionsUsed` and `extensionsRequired` give it.
pub const EXTENSION: &str = "KHR_draco_mesh_compression";

/// What a primitive's extension says: the stream's bufferView and, per attribute name, the
/// Draco attribute (its unique id) that holds its values.
pub struct DracoPrimitive {
    mesh: usize,
    primitive: usize,
    view: u64,
    attributes: Vec<(String, u32)>,
}

/// Every primitive with the extension.
pub fn scan(root: &Value) -> Result<Vec<DracoPrimitive>, SceneError> {
    let meshes = root.get("meshes").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let mut out = vec![];
    for (mesh, m) in meshes.iter().enumerate() {
        let primitives = m.get("primitives").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        for (primitive, p) in primitives.iter().enumerate() {
            let Some(ext) = p.pointer(&format!("/extensions/{EXTENSION}")) else { continue };
            let bad = |reason: String| SceneError::BadPrimitive { mesh, primitive, reason: format!("{EXTENSION}: {reason}") };
            let view = required_u64(ext, "bufferView").map_err(&bad)?;
            let named = ext.get("attributes").and_then(Value::as_object).ok_or_else(|| bad("attributes is missing or not an object".into()))?;
            let mut attributes = vec![];
            for (name, id) in named {
                let id =
                    id.as_u64().and_then(|i| u32::try_from(i).ok()).ok_or_else(|| bad(format!("attribute {name} names Draco attribute {id}, not an id")))?;
                attributes.push((name.clone(), id));
            }
            out.push(DracoPrimitive { mesh, primitive, view, attributes });
        }
    }
    Ok(out)
}

impl DracoPrimitive {
    /// Decodes the stream into `out` and points the primitive's index and attribute accessors
    /// at the decoded data (in place: glTF says they describe it).
    pub(super) fn decode(&self, root: &mut gltf::json::Root, buffers: &[Vec<u8>], out: &mut Decoded) -> Result<(), SceneError> {
        let bad = |reason: String| SceneError::BadPrimitive { mesh: self.mesh, primitive: self.primitive, reason: format!("{EXTENSION}: {reason}") };
        let view = usize::try_from(self.view)
            .ok()
            .and_then(|v| root.buffer_views.get(v))
            .ok_or_else(|| bad(format!("bufferView {} is not in the file", self.view)))?;
        let stream = slice_of(buffers, view.buffer.value() as u64, view.byte_offset.map_or(0, |o| o.0), view.byte_length.0).map_err(&bad)?;
        // The decoder's own ceilings on what it allocates: what the budget has left, for the
        // attribute bytes and for the faces and points it holds (12 and at least 4 bytes each).
        let budget = out.budget.max(1);
        let mut limits = DecodeLimits::default().with_max_decoded_bytes(budget);
        (limits.max_points, limits.max_faces) = ((budget / 4).max(1), (budget / 12).max(1));
        let mut mesh = Mesh::new();
        MeshDecoder::new()
            .decode(&mut DecoderBuffer::new(stream).with_limits(limits), &mut mesh)
            .map_err(|e| bad(format!("the stream does not decode: {e}")))?;
        let points = mesh.num_points();
        // The corners and their bytes (4 each), charged before either is built.
        let faces = mesh.faces().len() as u64;
        out.reserve(faces.saturating_mul(12), || format!("mesh {} primitive {} ({EXTENSION})", self.mesh, self.primitive))?;
        let corners: Vec<u32> = mesh.faces().as_flattened().iter().map(|p| p.0).collect();
        if let Some(i) = corners.iter().find(|&&i| i as usize >= points) {
            return Err(bad(format!("the stream's triangles name point {i}, but it decodes {points} points")));
        }
        self.write_indices(root, &corners, out).map_err(&bad)?;
        for (name, id) in &self.attributes {
            // Its values are read as f32s, 4 bytes a component, then encoded in no more.
            let components = mesh.attribute_by_unique_id(*id).map_or(0, |a| u64::from(a.num_components()));
            let read = (points as u64).saturating_mul(components).saturating_mul(4);
            out.reserve(read, || format!("mesh {} primitive {} ({EXTENSION})", self.mesh, self.primitive))?;
            let (index, bytes, accessor) = self.attribute(root, &mesh, name, *id).map_err(&bad)?;
            place_accessor(root, self.view, out, &bytes, index, accessor).map_err(&bad)?;
        }
        let prim = &mut root.meshes[self.mesh].primitives[self.primitive];
        // Draco holds triangles: a strip's decoded indices are a list.
        prim.mode = Checked::Valid(gltf::json::mesh::Mode::Triangles);
        Ok(())
    }

    /// Points the primitive's index accessor at `corners`, as u32s, after checking its count.
    fn write_indices(&self, root: &mut gltf::json::Root, corners: &[u32], out: &mut Decoded) -> Result<(), String> {
        let prim = &root.meshes[self.mesh].primitives[self.primitive];
        let Some(index) = prim.indices.map(|i| i.value()) else {
            return Err("it has no indices accessor, which the extension requires".into());
        };
        let template = root.accessors.get(index).cloned().ok_or_else(|| format!("its indices name accessor {index}, not in the file"))?;
        if template.count.0 != corners.len() as u64 {
            return Err(format!("its indices accessor says {} indices, but the stream decodes {}", template.count.0, corners.len()));
        }
        let bytes: Vec<u8> = corners.iter().flat_map(|i| i.to_le_bytes()).collect();
        let accessor = gltf::json::Accessor {
            component_type: Checked::Valid(GenericComponentType(ComponentType::U32)),
            type_: Checked::Valid(Dimensions::Scalar),
            normalized: false,
            min: None,
            max: None,
            sparse: None,
            ..template
        };
        place_accessor(root, self.view, out, &bytes, index, accessor)
    }

    /// The accessor of attribute `name` (its index and JSON) and Draco attribute `id` in the
    /// bytes it declares.
    fn attribute(&self, root: &gltf::json::Root, mesh: &Mesh, name: &str, id: u32) -> Result<(usize, Vec<u8>, gltf::json::Accessor), String> {
        let prim = &root.meshes[self.mesh].primitives[self.primitive];
        let accessor = prim.attributes.iter().find(|(k, _)| semantic_name(k).as_deref() == Some(name)).map(|(_, v)| v.value());
        let accessor = accessor.ok_or_else(|| format!("it names attribute {name}, which the primitive does not have"))?;
        let template = root.accessors.get(accessor).cloned().ok_or_else(|| format!("attribute {name} names accessor {accessor}, not in the file"))?;
        let (Checked::Valid(component), Checked::Valid(dims)) = (&template.component_type, &template.type_) else {
            return Err(format!("accessor {accessor} ({name}) has an unknown component type or type"));
        };
        let (component, components) = (component.0, dims.multiplicity());
        let attribute =
            mesh.attribute_by_unique_id(id).ok_or_else(|| format!("attribute {name} names Draco attribute {id}, which the stream does not have"))?;
        if usize::from(attribute.num_components()) != components {
            return Err(format!("attribute {name}: the stream's attribute has {} components, accessor {accessor} {components}", attribute.num_components()));
        }
        let points = mesh.num_points();
        if template.count.0 != points as u64 {
            return Err(format!("attribute {name}: accessor {accessor} says {} vertices, but the stream decodes {points}", template.count.0));
        }
        let values = attribute.read_f32s(points, components);
        let from_float = matches!(attribute.data_type(), DataType::Float32 | DataType::Float64);
        let bytes = encode(&values, component, template.normalized && from_float)
            .map_err(|v| format!("attribute {name}: the value {v} does not fit accessor {accessor}'s {component:?}"))?;
        Ok((accessor, bytes, gltf::json::Accessor { sparse: None, ..template }))
    }
}

/// `values` in `component`'s little-endian bytes. Integers are written as the values the
/// stream holds; `scale` maps floats in -1..1 onto a normalized integer's range first.
fn encode(values: &[f32], component: ComponentType, scale: bool) -> Result<Vec<u8>, f32> {
    let max = match component {
        ComponentType::F32 => return Ok(values.iter().flat_map(|v| v.to_le_bytes()).collect()),
        ComponentType::I8 => 127.0,
        ComponentType::U8 => 255.0,
        ComponentType::I16 => 32767.0,
        ComponentType::U16 => 65535.0,
        ComponentType::U32 => 4_294_967_295.0,
    };
    let min = if matches!(component, ComponentType::I8 | ComponentType::I16) { -max - 1.0 } else { 0.0 };
    let mut out = Vec::with_capacity(values.len() * component.size());
    for &v in values {
        let i = if scale { (v * max).round() } else { v.round() };
        if !(min..=max).contains(&i) {
            return Err(v);
        }
        match component {
            ComponentType::I8 => out.push(i as i8 as u8),
            ComponentType::U8 => out.push(i as u8),
            ComponentType::I16 => out.extend((i as i16).to_le_bytes()),
            ComponentType::U16 => out.extend((i as u16).to_le_bytes()),
            _ => out.extend((i as u32).to_le_bytes()),
        }
    }
    Ok(out)
}

/// Appends `bytes` to the decoded buffer in a new tightly packed bufferView (a copy of the
/// stream's view, `stream_view`, pointed there) and makes accessor `index` `accessor` over it.
/// Refuses an accessor another stream already described (the two primitives would share
/// whichever decoded last).
fn place_accessor(
    root: &mut gltf::json::Root,
    stream_view: u64,
    out: &mut Decoded,
    bytes: &[u8],
    index: usize,
    accessor: gltf::json::Accessor,
) -> Result<(), String> {
    if let Some(&other) = out.placed.get(&index).filter(|&&v| v != stream_view) {
        return Err(format!("accessor {index} is described by the streams of bufferViews {other} and {stream_view}: each needs its own"));
    }
    out.placed.insert(index, stream_view);
    let at = out.push(bytes);
    let view = gltf::json::buffer::View {
        buffer: Index::new(out.buffer as u32),
        byte_offset: Some(USize64(at)),
        byte_length: USize64(bytes.len() as u64),
        byte_stride: None,
        target: None,
        extensions: None,
        ..root.buffer_views[stream_view as usize].clone()
    };
    root.buffer_views.push(view);
    let view = Index::new(root.buffer_views.len() as u32 - 1);
    root.accessors[index] = gltf::json::Accessor { buffer_view: Some(view), byte_offset: None, ..accessor };
    Ok(())
}

/// An attribute key's glTF name (`POSITION`, `TEXCOORD_0`, ...).
fn semantic_name(key: &Checked<gltf::json::mesh::Semantic>) -> Option<String> {
    match key {
        Checked::Valid(s) => serde_json::to_value(s).ok().and_then(|v| v.as_str().map(str::to_owned)),
        Checked::Invalid => None,
    }
}
