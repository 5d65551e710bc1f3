//! The file's buffers, treated as untrusted references: a buffer URI resolves inside the
//! scene's folder only (unless allowed), names a regular file, and no more than the buffer's
//! `byteLength` is read from it. Data URIs are decoded in memory; the GLB binary chunk is
//! checked against the header before anything is parsed.

use super::{printable_cut, LoadOptions, SceneError};
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// GLB chunk types: "JSON" and "BIN\0", little-endian.
const JSON_CHUNK: u32 = 0x4E4F_534A;
const BIN_CHUNK: u32 = 0x004E_4942;

/// Splits a GLB container into its JSON and its binary chunk, after checking its header and
/// chunk lengths against the bytes present, so a truncated or inconsistent file is named as
/// such (the parser's own word is "could not completely read the object"). Other bytes are a
/// .gltf's JSON, returned whole.
pub fn split_glb(bytes: &[u8]) -> Result<(&[u8], Option<&[u8]>), SceneError> {
    if !bytes.starts_with(b"glTF") {
        return Ok((bytes, None));
    }
    let word = |at: usize| bytes.get(at..at + 4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]) as usize);
    let bad = |reason: String| Err(SceneError::Glb(reason));
    let (Some(version), Some(length)) = (word(4), word(8)) else { return bad(format!("the file is {} bytes, shorter than a GLB header", bytes.len())) };
    if version != 2 {
        return bad(format!("GLB version {version}; only version 2 exists"));
    }
    if length > bytes.len() {
        return bad(format!("truncated: the header says {length} bytes, the file has {}", bytes.len()));
    }
    if length <= 12 {
        return bad(format!("the header says {length} bytes: no room for the JSON chunk a GLB starts with"));
    }
    let mut at = 12;
    let (mut json, mut bin) = (&bytes[..0], None);
    for index in 0.. {
        if at >= length {
            break;
        }
        let (Some(chunk), Some(kind)) = (word(at), word(at + 4)) else { return bad(format!("truncated chunk header at byte {at}")) };
        // The container allows one JSON chunk, first, and at most one binary chunk, second;
        // chunks of other types are ignored, as the specification asks.
        match (kind as u32, index) {
            (JSON_CHUNK, 0) | (BIN_CHUNK, 1) => {}
            (_, 0) => return bad(format!("the first chunk has type {kind:#010x}, not JSON")),
            (JSON_CHUNK, _) => return bad(format!("a second JSON chunk at byte {at}")),
            (BIN_CHUNK, _) => return bad(format!("a binary chunk at byte {at} that is not the second chunk")),
            _ => {}
        }
        let end = at.checked_add(8).and_then(|a| a.checked_add(chunk));
        match end {
            Some(end) if end <= length => {
                match index {
                    0 => json = &bytes[at + 8..end],
                    1 if kind as u32 == BIN_CHUNK => bin = Some(&bytes[at + 8..end]),
                    _ => {}
                }
                at = end;
            }
            _ => return bad(format!("the chunk at byte {at} claims {chunk} bytes, past the end of the {length}-byte file")),
        }
    }
    Ok((json, bin))
}

/// Every buffer's bytes, in the document's order; the real path of each file read is pushed
/// onto `files`. The buffers in `fallback` (data-less meshopt fallbacks) are not read: they
/// are empty.
pub fn load(
    root: &gltf::json::Root,
    blob: Option<Vec<u8>>,
    base: Option<&Path>,
    options: &LoadOptions,
    fallback: &[usize],
    files: &mut Vec<PathBuf>,
) -> Result<Vec<Vec<u8>>, SceneError> {
    let mut blob = blob;
    let read = || root.buffers.iter().enumerate().filter(|(i, _)| !fallback.contains(i));
    let total = read().try_fold(0u64, |sum, (_, b)| sum.checked_add(b.byte_length.0)).unwrap_or(u64::MAX);
    if total > options.max_bytes {
        return Err(SceneError::Budget(format!("its buffers declare {total} bytes, over the limit of {} (--max-scene-bytes)", options.max_bytes)));
    }
    let mut out = Vec::with_capacity(root.buffers.len());
    for (index, buffer) in root.buffers.iter().enumerate() {
        if fallback.contains(&index) {
            out.push(vec![]);
            continue;
        }
        // Within the budget checked above.
        let length = buffer.byte_length.0 as usize;
        let bad = |reason: String| SceneError::Buffer { index, reason };
        let mut data = match buffer.uri.as_deref() {
            None => blob.take().ok_or_else(|| bad("it names the GLB binary chunk, which the file does not have".into()))?,
            Some(uri) if uri.starts_with("data:") => decode_data_uri(uri).map_err(bad)?,
            Some(uri) => {
                let (data, real) = read_file(uri, base, length as u64, options).map_err(bad)?;
                files.push(real);
                data
            }
        };
        if data.len() < length {
            return Err(bad(format!("it declares {length} bytes but holds {}", data.len())));
        }
        // The buffer is its declared bytes: nothing past them (a GLB chunk's padding, the rest
        // of a longer data URI) is read, as for a file.
        data.truncate(length);
        out.push(data);
    }
    Ok(out)
}

/// The bytes of a base64 data URI (buffers and images alike).
pub(super) fn decode_data_uri(uri: &str) -> Result<Vec<u8>, String> {
    let (header, payload) = uri.split_once(',').ok_or("a data URI without a comma")?;
    if !header.ends_with(";base64") {
        return Err(format!("data URI {:?} is not base64", printable_cut(header)));
    }
    base64::decode(payload).map_err(|e| format!("its base64 data does not decode: {e}"))
}

/// Reads at most `length` bytes of a regular file named by a relative URI inside `base`;
/// returns them and the file's real path.
pub(super) fn read_file(uri: &str, base: Option<&Path>, length: u64, options: &LoadOptions) -> Result<(Vec<u8>, PathBuf), String> {
    let shown = printable_cut(uri);
    let decoded = urlencoding::decode_binary(uri.as_bytes());
    let decoded = String::from_utf8(decoded.into_owned()).map_err(|_| format!("URI {shown:?} decodes to bytes that are not UTF-8"))?;
    let absolute = decoded.contains(':') || decoded.starts_with('/') || decoded.starts_with('\\');
    if absolute && !options.allow_external_uris {
        return Err(format!("URI {shown:?} is absolute or has a scheme; only files beside the scene are read (--allow-external-uris)"));
    }
    let base = base.ok_or_else(|| format!("URI {shown:?} names a file, but the scene was not loaded from a folder"))?;
    let relative = Path::new(decoded.strip_prefix("file://").unwrap_or(&decoded));
    let path: PathBuf = if options.allow_external_uris {
        base.join(relative)
    } else {
        // `..` is followed by name, never above the folder: nothing outside it is looked at.
        let mut inside = PathBuf::new();
        for c in relative.components() {
            let stays = match c {
                Component::Normal(name) => {
                    inside.push(name);
                    true
                }
                Component::CurDir => true,
                Component::ParentDir => inside.pop(),
                Component::RootDir | Component::Prefix(_) => false,
            };
            if !stays {
                return Err(format!("URI {shown:?} leaves the scene's folder; only files beside the scene are read (--allow-external-uris)"));
            }
        }
        base.join(inside)
    };
    // A link inside the folder may still point out of it: compare real paths.
    let real = path.canonicalize().map_err(|_| format!("URI {shown:?}: the file cannot be opened"))?;
    if !options.allow_external_uris {
        let folder = base.canonicalize().map_err(|_| format!("URI {shown:?}: the scene's folder cannot be resolved"))?;
        if !real.starts_with(&folder) {
            return Err(format!("URI {shown:?} resolves outside the scene's folder (--allow-external-uris)"));
        }
    }
    // Regular files only: no devices, FIFOs or folders (a FIFO would block forever).
    let meta = std::fs::metadata(&real).map_err(|_| format!("URI {shown:?}: the file cannot be opened"))?;
    if !meta.is_file() {
        return Err(format!("URI {shown:?} is not a regular file"));
    }
    let file = std::fs::File::open(&real).map_err(|_| format!("URI {shown:?}: the file cannot be opened"))?;
    let mut data = Vec::with_capacity(length.min(meta.len()) as usize);
    file.take(length).read_to_end(&mut data).map_err(|e| format!("URI {shown:?}: reading failed: {e}"))?;
    Ok((data, real))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glb_headers_are_checked_against_the_bytes() {
        let mut glb = b"glTF".to_vec();
        glb.extend(2u32.to_le_bytes());
        glb.extend(40u32.to_le_bytes());
        assert!(split_glb(&glb).unwrap_err().to_string().contains("truncated"));
        glb.truncate(8);
        assert!(split_glb(&glb).is_err());
        // A bare 12-byte header: no JSON chunk follows.
        glb.extend(12u32.to_le_bytes());
        assert!(split_glb(&glb).unwrap_err().to_string().contains("no room for the JSON chunk"));
        assert!(split_glb(b"{\"asset\":{}}").is_ok(), "JSON is not a GLB");
    }

    /// A GLB of the given chunks (type, 4 bytes of payload each).
    fn glb_of(chunks: &[u32]) -> Vec<u8> {
        let mut glb = b"glTF".to_vec();
        glb.extend(2u32.to_le_bytes());
        glb.extend((12 + 12 * chunks.len() as u32).to_le_bytes());
        for kind in chunks {
            glb.extend(4u32.to_le_bytes());
            glb.extend(kind.to_le_bytes());
            glb.extend(b"{}  ");
        }
        glb
    }

    #[test]
    fn glb_chunks_come_json_first_and_binary_second_once_each() {
        const OTHER: u32 = 0x1234_5678;
        assert!(split_glb(&glb_of(&[JSON_CHUNK])).is_ok());
        assert!(split_glb(&glb_of(&[JSON_CHUNK, BIN_CHUNK, OTHER])).is_ok(), "unknown chunks are ignored");
        let glb = glb_of(&[JSON_CHUNK, OTHER]);
        assert_eq!(split_glb(&glb).unwrap(), (&b"{}  "[..], None), "an unknown chunk is no binary chunk");
        let glb = glb_of(&[JSON_CHUNK, BIN_CHUNK]);
        assert_eq!(split_glb(&glb).unwrap().1, Some(&b"{}  "[..]));
        let refused = |chunks: &[u32], says: &str| {
            let error = split_glb(&glb_of(chunks)).unwrap_err().to_string();
            assert!(error.contains(says), "{chunks:x?}: {error}");
        };
        refused(&[BIN_CHUNK, JSON_CHUNK], "not JSON");
        refused(&[JSON_CHUNK, JSON_CHUNK], "second JSON chunk");
        refused(&[JSON_CHUNK, BIN_CHUNK, BIN_CHUNK], "not the second chunk");
        refused(&[JSON_CHUNK, OTHER, BIN_CHUNK], "not the second chunk");
    }

    #[test]
    fn uris_stay_inside_the_scene_folder() {
        let dir = std::env::temp_dir().join(format!("viewer-uri-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("mesh.bin"), [7u8; 16]).unwrap();
        let options = LoadOptions::default();
        assert_eq!(read_file("mesh.bin", Some(&dir), 8, &options).unwrap().0, vec![7u8; 8], "at most byteLength bytes");
        for hostile in ["../../etc/passwd", "/etc/passwd", "file:///etc/passwd", "%2e%2e/%2e%2e/etc/passwd", "sub/../../x.bin", "%FF%FE.bin"] {
            let err = read_file(hostile, Some(&dir), 8, &options).unwrap_err();
            assert!(!err.contains("root:"), "{err}");
        }
        assert!(read_file("/dev/zero", Some(&dir), 8, &LoadOptions { allow_external_uris: true, ..options }).unwrap_err().contains("not a regular file"));
        // A step up that stays inside the folder is followed by name.
        assert_eq!(read_file("sub/../mesh.bin", Some(&dir), 4, &options).unwrap().0, vec![7u8; 4]);
        assert!(read_file("sub/../../mesh.bin", Some(&dir), 4, &options).unwrap_err().contains("leaves the scene's folder"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
