//! The file's JSON parsed as the glTF crate reads it, amended first where only the crate's
//! parser needs it.

use super::SceneError;

/// What glTF leaves optional but the glTF crate's parser needs: a scene without `nodes` (an
/// empty scene) gets an empty list, and a channel whose target names no node (an extension
/// then says what it animates) is dropped, with a warning. The JSON so amended, or `None`
/// when it needs nothing.
fn amended_for_the_parser(json: &[u8]) -> Option<Vec<u8>> {
    let mut root: serde_json::Value = serde_json::from_slice(json).ok()?;
    let mut amended = false;
    for scene in root.get_mut("scenes").and_then(serde_json::Value::as_array_mut).into_iter().flatten() {
        if let Some(scene) = scene.as_object_mut().filter(|s| !s.contains_key("nodes")) {
            scene.insert("nodes".into(), serde_json::Value::Array(vec![]));
            amended = true;
        }
    }
    let mut dropped = 0;
    for animation in root.get_mut("animations").and_then(serde_json::Value::as_array_mut).into_iter().flatten() {
        let Some(channels) = animation.get_mut("channels").and_then(serde_json::Value::as_array_mut) else { continue };
        let before = channels.len();
        channels.retain(|c| c.get("target").is_none_or(|t| t.get("node").is_some()));
        dropped += before - channels.len();
    }
    if dropped > 0 {
        log::warn!("animation channels naming no node (an extension's targets) are not read: {dropped}");
    }
    (amended || dropped > 0).then(|| serde_json::to_vec(&root).ok()).flatten()
}

/// The file's JSON as the glTF crate reads it (amended where only the crate needs it, if its
/// whole tree fits `max_bytes`: see [`tree_fits`]).
pub fn parse(json: &[u8], max_bytes: u64) -> Result<gltf::json::Root, SceneError> {
    let parse = |json: &[u8]| gltf::json::deserialize::from_slice::<gltf::json::Root>(json).map_err(|e| SceneError::Gltf(gltf::Error::Deserialize(e)));
    match parse(json) {
        Ok(root) => Ok(root),
        Err(e) if tree_fits(json, max_bytes) => parse(&amended_for_the_parser(json).ok_or(e)?),
        Err(e) => Err(e),
    }
}

/// Bytes a JSON document may take parsed into a `serde_json::Value` tree, per byte of text
/// (a number array's `0,` becomes a 32-byte value and more).
const TREE_BYTES_PER_BYTE: u64 = 32;

/// Whether `json` parsed whole into a `serde_json::Value` (as the amendments and the
/// compression scan read it) stays within `max_bytes`.
pub fn tree_fits(json: &[u8], max_bytes: u64) -> bool {
    (json.len() as u64).saturating_mul(TREE_BYTES_PER_BYTE) <= max_bytes
}

/// How many elements the file's top-level arrays hold, counted without building them (each
/// element is skipped as `IgnoredAny`).
#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct Arrays {
    nodes: Count,
    materials: Count,
    accessors: Count,
    meshes: Count,
    textures: Count,
    images: Count,
    samplers: Count,
    #[serde(rename = "bufferViews")]
    buffer_views: Count,
    scenes: Count,
    cameras: Count,
    skins: Count,
    animations: Count,
}

#[derive(Clone, Copy, Default)]
struct Count(u64);

impl<'de> serde::Deserialize<'de> for Count {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Counter;
        impl<'de> serde::de::Visitor<'de> for Counter {
            type Value = Count;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Count, A::Error> {
                let mut n = 0;
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                    n += 1;
                }
                Ok(Count(n))
            }
        }
        deserializer.deserialize_seq(Counter)
    }
}

/// Refuses a file whose top-level arrays, parsed, would pass `max_bytes`, before any is
/// parsed: a node of `{}` takes 3 bytes of text and some 600 parsed (the glTF crate's node and
/// the loader's precise transform), so a file within its size limit could otherwise take many
/// times the limit before the scene's budget is first checked. A document the count cannot
/// read is left to the parser, which says what is wrong with it.
pub fn arrays_fit(json: &[u8], max_bytes: u64) -> Result<(), SceneError> {
    use gltf::json as j;
    use std::mem::size_of;
    let Ok(a) = serde_json::from_slice::<Arrays>(json) else { return Ok(()) };
    let node = size_of::<j::Node>() + super::precise::BYTES_PER_NODE_TRANSFORM;
    let sizes = [
        (a.nodes, node),
        (a.materials, size_of::<j::Material>()),
        (a.accessors, size_of::<j::Accessor>()),
        (a.meshes, size_of::<j::Mesh>()),
        (a.textures, size_of::<j::Texture>()),
        (a.images, size_of::<j::Image>()),
        (a.samplers, size_of::<j::texture::Sampler>()),
        (a.buffer_views, size_of::<j::buffer::View>()),
        (a.scenes, size_of::<j::Scene>()),
        (a.cameras, size_of::<j::Camera>()),
        (a.skins, size_of::<j::Skin>()),
        (a.animations, size_of::<j::Animation>()),
    ];
    let bytes = sizes.iter().fold(0u64, |sum, (count, size)| sum.saturating_add(count.0.saturating_mul(*size as u64)));
    if bytes > max_bytes {
        return Err(SceneError::Budget(format!(
            "its {} nodes and the other objects of its top-level arrays take about {bytes} bytes once parsed, over the limit of {max_bytes} (--max-scene-bytes)",
            a.nodes.0
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_of_three_bytes_are_refused_before_they_are_parsed() {
        let nodes = format!("{{\"asset\":{{\"version\":\"2.0\"}},\"nodes\":[{}{{}}]}}", "{},".repeat(100_000));
        let err = arrays_fit(nodes.as_bytes(), 1 << 20).expect_err("100,001 nodes in 1 MiB").to_string();
        assert!(err.contains("100001 nodes"), "{err}");
        assert!(arrays_fit(nodes.as_bytes(), 1 << 30).is_ok());
        // What the count cannot read is the parser's to refuse.
        assert!(arrays_fit(b"{\"nodes\": 3}", 1).is_ok());
    }
}
