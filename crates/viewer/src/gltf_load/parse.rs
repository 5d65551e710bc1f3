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
