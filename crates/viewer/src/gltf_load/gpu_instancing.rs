//! EXT_mesh_gpu_instancing: a node that draws its mesh once per instance, each placed in the
//! node's frame by its TRANSLATION, ROTATION and SCALE (accessors of one count; a missing one
//! is the identity). The loader gives each instance a node of its own, a child of the file's
//! node, which then draws nothing itself: placing, batching, splitting and picking treat
//! instances as nodes, and a pick names the file's node and its instance (`gpu_instance`).

use super::validate::{self, BYTES_PER_DRAW, BYTES_PER_NODE};
use super::SceneError;
use crate::scene::NodeTransform;
use glam::{DQuat, DVec3};
use gltf::accessor::{DataType, Dimensions};
use serde::Deserialize;

/// The extension's name, as `extensionsUsed` and `extensionsRequired` give it.
pub const EXTENSION: &str = "EXT_mesh_gpu_instancing";

#[derive(Deserialize)]
struct Nodes {
    #[serde(default)]
    nodes: Vec<RawNode>,
}

#[derive(Deserialize)]
struct RawNode {
    extensions: Option<serde_json::Map<String, serde_json::Value>>,
}

/// The accessors one node's extension names.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct InstanceAccessors {
    translation: Option<usize>,
    rotation: Option<usize>,
    scale: Option<usize>,
}

/// Per node of the file, the accessors its extension names (`None`: not instanced), from the
/// file's JSON; a node whose extension is malformed is refused by name.
pub fn accessors_of_nodes(json: &[u8]) -> Result<Vec<Option<InstanceAccessors>>, SceneError> {
    let nodes: Nodes = serde_json::from_slice(json).map_err(|e| SceneError::Gltf(gltf::Error::Deserialize(e)))?;
    let mut out = Vec::with_capacity(nodes.nodes.len());
    for (n, node) in nodes.nodes.iter().enumerate() {
        let bad = |reason: String| SceneError::BadNode { node: n, reason: format!("its {EXTENSION}: {reason}") };
        let Some(ext) = node.extensions.as_ref().and_then(|e| e.get(EXTENSION)) else {
            out.push(None);
            continue;
        };
        let attributes = ext.get("attributes").and_then(serde_json::Value::as_object).ok_or_else(|| bad("it has no attributes object".into()))?;
        let index = |name: &str| -> Result<Option<usize>, SceneError> {
            match attributes.get(name) {
                None => Ok(None),
                Some(v) => v.as_u64().and_then(|i| usize::try_from(i).ok()).map(Some).ok_or_else(|| bad(format!("{name} is not an accessor index"))),
            }
        };
        let found = InstanceAccessors { translation: index("TRANSLATION")?, rotation: index("ROTATION")?, scale: index("SCALE")? };
        if found == InstanceAccessors::default() {
            return Err(bad("it names none of TRANSLATION, ROTATION and SCALE".into()));
        }
        out.push(Some(found));
    }
    Ok(out)
}

/// The types each attribute may have: floats, and the normalized integers the extension
/// allows for rotations; with KHR_mesh_quantization, 8- and 16-bit signed integers
/// (normalized or not) for translations and scales too.
fn allowed(name: &str, quantized: bool) -> impl Fn(Dimensions, DataType, bool) -> bool + '_ {
    move |dims, data, normalized| {
        let small_signed = matches!(data, DataType::I8 | DataType::I16);
        match name {
            "ROTATION" => dims == Dimensions::Vec4 && (data == DataType::F32 || (normalized && small_signed)),
            _ => dims == Dimensions::Vec3 && (data == DataType::F32 || (quantized && small_signed)),
        }
    }
}

/// Reads every instanced node's instances as transforms in the node's frame (per node of the
/// file; `None` where the node is not instanced), after checking the accessors and charging
/// the nodes and draws they add to `budget`.
pub fn read(
    document: &gltf::Document,
    accessors: &[Option<InstanceAccessors>],
    buffers: &[Vec<u8>],
    budget: &mut u64,
) -> Result<Vec<Option<Vec<NodeTransform>>>, SceneError> {
    let json = document.as_json();
    let quantized = json.extensions_used.iter().any(|e| e == super::quantized::EXTENSION);
    let lengths: Vec<usize> = buffers.iter().map(Vec::len).collect();
    let data = |b: gltf::Buffer<'_>| buffers.get(b.index()).map(Vec::as_slice);
    let mut out = vec![None; json.nodes.len()];
    for (n, refs) in accessors.iter().enumerate() {
        let Some(refs) = refs else { continue };
        let bad = |reason: String| SceneError::BadNode { node: n, reason: format!("its {EXTENSION}: {reason}") };
        let named = [("TRANSLATION", refs.translation), ("ROTATION", refs.rotation), ("SCALE", refs.scale)];
        let mut count = None;
        for (name, index) in named {
            let Some(index) = index else { continue };
            let c = validate::accessor(document, index, &lengths, name, &allowed(name, quantized)).map_err(&bad)?;
            if let Some(first) = count.filter(|&first| first != c) {
                return Err(bad(format!("its accessors hold {first} and {c} instances; they must hold as many")));
            }
            count = Some(c);
        }
        let count = count.unwrap_or_default();
        let node = json.nodes.get(n);
        let primitives = node.and_then(|node| node.mesh.as_ref()).and_then(|m| json.meshes.get(m.value())).map_or(0, |m| m.primitives.len() as u64);
        let name = node.and_then(|node| node.name.as_ref()).map_or(0, |s| s.len().min(super::MAX_NAME_BYTES) as u64);
        let weights = node.and_then(|node| node.mesh.as_ref()).map_or(0, |m| validate::targets_of(json, m.value()).saturating_mul(8));
        let bytes = count.saturating_mul((BYTES_PER_NODE + primitives * BYTES_PER_DRAW + name).saturating_add(weights));
        validate::charge(budget, bytes, &|| format!("node {n}'s {count} {EXTENSION} instances (their nodes and draws, about)"))?;
        let read = |index: Option<usize>, name: &str| -> Result<Option<Vec<[f32; 4]>>, SceneError> {
            let Some(accessor) = index.and_then(|i| document.accessors().nth(i)) else { return Ok(None) };
            let values = if name == "ROTATION" {
                super::quantized::read_floats::<4>(accessor, data)
            } else {
                super::quantized::read_floats::<3>(accessor, data).map(|v| v.into_iter().map(|[x, y, z]| [x, y, z, 0.0]).collect())
            };
            let values = values.ok_or_else(|| bad(format!("its {name} accessor cannot be read")))?;
            if let Some(i) = values.iter().position(|v| !v.iter().all(|c| c.is_finite())) {
                return Err(bad(format!("instance {i}'s {name} is not finite")));
            }
            Ok(Some(values))
        };
        let (translations, rotations, scales) = (read(refs.translation, "TRANSLATION")?, read(refs.rotation, "ROTATION")?, read(refs.scale, "SCALE")?);
        let mut transforms = Vec::with_capacity(count as usize);
        for i in 0..count as usize {
            let vec3 = |v: &Option<Vec<[f32; 4]>>, default: DVec3| {
                v.as_ref().and_then(|v| v.get(i)).map_or(default, |c| DVec3::new(c[0].into(), c[1].into(), c[2].into()))
            };
            let rotation = match rotations.as_ref().and_then(|r| r.get(i)) {
                None => DQuat::IDENTITY,
                Some(q) => {
                    let q = DQuat::from_array(q.map(f64::from));
                    // As for a node's rotation: a unit quaternion, written with float noise.
                    if q.length() <= 1e-6 {
                        return Err(bad(format!("instance {i}'s ROTATION is {:?}, not a rotation", q.to_array())));
                    }
                    q.normalize()
                }
            };
            transforms.push(NodeTransform::Trs { translation: vec3(&translations, DVec3::ZERO), rotation, scale: vec3(&scales, DVec3::ONE) });
        }
        out[n] = Some(transforms);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_name_their_accessors_and_malformed_extensions_are_refused() {
        let json = br#"{"nodes":[{}, {"extensions":{"EXT_mesh_gpu_instancing":{"attributes":{"TRANSLATION":3,"SCALE":5,"_ID":9}}}},
            {"extensions":{"OTHER":{}}}]}"#;
        let found = accessors_of_nodes(json).unwrap();
        assert_eq!(found, vec![None, Some(InstanceAccessors { translation: Some(3), rotation: None, scale: Some(5) }), None]);
        for (body, expected) in [
            (r#"{}"#, "no attributes"),
            (r#"{"attributes":{}}"#, "names none"),
            (r#"{"attributes":{"ROTATION":-1}}"#, "ROTATION is not an accessor index"),
            (r#"{"attributes":{"SCALE":"2"}}"#, "SCALE is not an accessor index"),
        ] {
            let json = format!(r#"{{"nodes":[{{"extensions":{{"EXT_mesh_gpu_instancing":{body}}}}}]}}"#);
            let e = accessors_of_nodes(json.as_bytes()).unwrap_err().to_string();
            assert!(e.contains("node 0") && e.contains(expected), "{body}: {e}");
        }
    }
}
