//! Compressed geometry, decoded before anything reads an accessor: meshopt buffer views
//! (`EXT_meshopt_compression`, `KHR_meshopt_compression`) and Draco primitives
//! (`KHR_draco_mesh_compression`). What is decoded is appended to one buffer of its own and
//! the document is rewritten to read it there, so every later check (bounds, types, NaN,
//! budget) and reader sees plain accessors, exactly as for an uncompressed file.
//!
//! The glTF crate drops the JSON of extensions it does not know, so what each extension says
//! is read from the file's own JSON ([`Compression::scan`]).

mod draco;
mod meshopt;

use super::SceneError;
use gltf::json::validation::USize64;
use serde_json::Value;

pub use draco::EXTENSION as DRACO;
pub use meshopt::{EXT as MESHOPT_EXT, KHR as MESHOPT_KHR};

/// What a file's compression extensions say, read from its JSON.
#[derive(Default)]
pub struct Compression {
    draco: Vec<draco::DracoPrimitive>,
    meshopt: Vec<meshopt::MeshoptView>,
    /// Buffers a meshopt extension marks `fallback`: they hold no data a decoder needs, and
    /// are not read.
    pub fallback_buffers: Vec<usize>,
}

impl Compression {
    /// Reads the compression extensions of `json` (the file's JSON chunk). `required` is the
    /// file's `extensionsRequired`: a meshopt view whose own buffer holds the uncompressed
    /// data is read from there when the file does not require the extension.
    pub fn scan(json: &[u8], required: &[String], max_bytes: u64) -> Result<Compression, SceneError> {
        if ![DRACO, MESHOPT_EXT, MESHOPT_KHR].iter().any(|e| contains(json, e)) {
            return Ok(Compression::default());
        }
        if !super::parse::tree_fits(json, max_bytes) {
            let reason = format!("its {} bytes of JSON, read whole for the compression extensions, would pass --max-scene-bytes ({max_bytes})", json.len());
            return Err(SceneError::Budget(reason));
        }
        let root: Value = serde_json::from_slice(json).map_err(|e| SceneError::Gltf(gltf::Error::Deserialize(e)))?;
        let fallback_buffers = meshopt::fallback_buffers(&root);
        Ok(Compression { draco: draco::scan(&root)?, meshopt: meshopt::scan(&root, required, &fallback_buffers)?, fallback_buffers })
    }

    /// Decodes every compressed view and primitive into a new buffer at the end of `buffers`
    /// and points `root` at it. `max_bytes` bounds the buffers and the decoded bytes together
    /// (checked before each decode allocates). Returns the bytes decoded.
    pub fn decode(&self, root: &mut gltf::json::Root, buffers: &mut Vec<Vec<u8>>, max_bytes: u64) -> Result<u64, SceneError> {
        if self.draco.is_empty() && self.meshopt.is_empty() {
            return Ok(0);
        }
        let loaded = buffers.iter().map(|b| b.len() as u64).sum::<u64>();
        let mut out = Decoded { bytes: vec![], buffer: buffers.len(), budget: max_bytes.saturating_sub(loaded), placed: Default::default() };
        for view in &self.meshopt {
            view.decode(root, buffers, &mut out)?;
        }
        for primitive in &self.draco {
            primitive.decode(root, buffers, &mut out)?;
        }
        let decoded = out.bytes.len() as u64;
        // The new buffer: a copy of an existing one's JSON (its name and extras do not matter)
        // with the decoded length and no source; `buffers` holds its bytes.
        let Some(template) = root.buffers.first().cloned() else {
            return Err(SceneError::Buffer { index: 0, reason: "compressed data needs a buffer, and the file has none".into() });
        };
        root.buffers.push(gltf::json::Buffer { byte_length: USize64(decoded), uri: None, extensions: None, ..template });
        buffers.push(out.bytes);
        Ok(decoded)
    }
}

/// The decoded bytes, which become buffer `buffer`, and what the budget has left.
struct Decoded {
    bytes: Vec<u8>,
    buffer: usize,
    budget: u64,
    /// The Draco stream (its buffer view) that wrote each accessor decoded so far: two
    /// streams may not both describe one accessor.
    placed: std::collections::HashMap<usize, u64>,
}

impl Decoded {
    /// Takes `bytes` off the budget before they are decoded; `what` names the refusal.
    fn reserve(&mut self, bytes: u64, what: impl FnOnce() -> String) -> Result<(), SceneError> {
        if bytes > self.budget {
            return Err(SceneError::Budget(format!("{} decodes to {bytes} bytes, over what the limit leaves (--max-scene-bytes)", what())));
        }
        self.budget -= bytes;
        Ok(())
    }

    /// Appends `data` (4-byte aligned, as every accessor type needs) and returns its offset.
    fn push(&mut self, data: &[u8]) -> u64 {
        self.bytes.resize(self.bytes.len().next_multiple_of(4), 0);
        let at = self.bytes.len() as u64;
        self.bytes.extend_from_slice(data);
        at
    }
}

/// Whether `needle` occurs in `haystack` (a cheap test before parsing the JSON again).
fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

/// Field `key` of `object` as an index or length, or what is wrong with it.
fn field_u64(object: &Value, key: &str) -> Result<Option<u64>, String> {
    match object.get(key) {
        None => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or_else(|| format!("{key} is {v}, not a non-negative integer")),
    }
}

/// Like [`field_u64`], for a field the extension requires.
fn required_u64(object: &Value, key: &str) -> Result<u64, String> {
    field_u64(object, key)?.ok_or_else(|| format!("{key} is missing"))
}

/// The bytes of `buffer` from `offset`, `length` long, or what is wrong.
fn slice_of(buffers: &[Vec<u8>], buffer: u64, offset: u64, length: u64) -> Result<&[u8], String> {
    let data =
        usize::try_from(buffer).ok().and_then(|b| buffers.get(b)).ok_or_else(|| format!("it names buffer {buffer}, but the file has {}", buffers.len()))?;
    let end = offset.checked_add(length).filter(|&e| e <= data.len() as u64);
    end.map(|e| &data[offset as usize..e as usize])
        .ok_or_else(|| format!("bytes {offset}..{} are past the end of buffer {buffer} ({} bytes)", offset.saturating_add(length), data.len()))
}
