//! Meshopt buffer views: `EXT_meshopt_compression` (vertex codec 0; filters NONE, OCTAHEDRAL,
//! QUATERNION, EXPONENTIAL) and `KHR_meshopt_compression` (vertex codecs 0 and 1; the COLOR
//! filter too), in the modes ATTRIBUTES, TRIANGLES and INDICES. Decoded by
//! `meshoptimizer-rs`, a pure-Rust port of meshoptimizer whose decoders return errors on
//! malformed streams and check sizes before they allocate.

use super::{field_u64, required_u64, slice_of, Decoded};
use crate::gltf_load::SceneError;
use gltf::json::buffer::Stride;
use gltf::json::validation::USize64;
use meshoptimizer_rs::codec;
use meshoptimizer_rs::{Limits, Workspace};
use serde_json::Value;

/// The extensions' names, as `extensionsUsed` and `extensionsRequired` give them.
pub const EXT: &str = "EXT_meshopt_compression";
pub const KHR: &str = "KHR_meshopt_compression";

/// What a meshopt view says: where its compressed bytes are and what they decode to.
pub struct MeshoptView {
    view: usize,
    extension: &'static str,
    buffer: u64,
    offset: u64,
    length: u64,
    stride: u64,
    count: u64,
    mode: String,
    filter: String,
}

/// The buffers a meshopt extension marks `fallback` (no data a decoder needs).
pub fn fallback_buffers(root: &Value) -> Vec<usize> {
    let buffers = root.get("buffers").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let marked = |b: &Value| [EXT, KHR].iter().any(|e| b.pointer(&format!("/extensions/{e}/fallback")) == Some(&Value::Bool(true)));
    buffers.iter().enumerate().filter(|(_, b)| marked(b)).map(|(i, _)| i).collect()
}

/// Every buffer view with a meshopt extension that must be decoded: all of them where the
/// file requires the extension or the view's own buffer is a data-less fallback; the others
/// are read uncompressed from their own buffer, as a loader without the extension would.
pub fn scan(root: &Value, required: &[String], fallback: &[usize]) -> Result<Vec<MeshoptView>, SceneError> {
    let views = root.get("bufferViews").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
    let mut out = vec![];
    for (index, view) in views.iter().enumerate() {
        let Some((extension, ext)) = [EXT, KHR].into_iter().find_map(|e| view.pointer(&format!("/extensions/{e}")).map(|x| (e, x))) else { continue };
        let bad = |reason: String| SceneError::CompressedView { view: index, extension, reason };
        let own_buffer = field_u64(view, "buffer").map_err(bad)?;
        let has_fallback = own_buffer.is_some_and(|b| !fallback.iter().any(|&f| f as u64 == b));
        if has_fallback && !required.iter().any(|r| r == extension) {
            continue;
        }
        let text = |key: &str, default: Option<&str>| match ext.get(key) {
            None => default.map(str::to_owned).ok_or_else(|| bad(format!("{key} is missing"))),
            Some(v) => v.as_str().map(str::to_owned).ok_or_else(|| bad(format!("{key} is {v}, not a name"))),
        };
        let (mode, filter) = (text("mode", None)?, text("filter", Some("NONE"))?);
        let number = |key: &str| required_u64(ext, key).map_err(&bad);
        out.push(MeshoptView {
            view: index,
            extension,
            buffer: number("buffer")?,
            offset: field_u64(ext, "byteOffset").map_err(&bad)?.unwrap_or(0),
            length: number("byteLength")?,
            stride: number("byteStride")?,
            count: number("count")?,
            mode,
            filter,
        });
    }
    Ok(out)
}

impl MeshoptView {
    /// Decodes the view into `out` and points the document's view at the decoded bytes.
    pub(super) fn decode(&self, root: &mut gltf::json::Root, buffers: &[Vec<u8>], out: &mut Decoded) -> Result<(), SceneError> {
        let bad = |reason: String| SceneError::CompressedView { view: self.view, extension: self.extension, reason };
        let Some(view) = root.buffer_views.get(self.view) else {
            return Err(bad(format!("the file has {} bufferViews", root.buffer_views.len())));
        };
        let size = self.count.checked_mul(self.stride).ok_or_else(|| bad(format!("count {} x byteStride {} overflows", self.count, self.stride)))?;
        if size != view.byte_length.0 {
            return Err(bad(format!(
                "count {} x byteStride {} is {size} bytes, but the bufferView's byteLength is {}",
                self.count, self.stride, view.byte_length.0
            )));
        }
        if view.byte_stride.is_some_and(|s| s.0 as u64 != self.stride) {
            return Err(bad(format!("byteStride {} differs from the bufferView's {}", self.stride, view.byte_stride.map_or(0, |s| s.0))));
        }
        out.reserve(size, || format!("bufferView {} ({})", self.view, self.extension))?;
        let source = slice_of(buffers, self.buffer, self.offset, self.length).map_err(&bad)?;
        let decoded = self.decode_bytes(source, out.budget.saturating_add(size)).map_err(bad)?;
        let at = out.push(&decoded);
        let view = &mut root.buffer_views[self.view];
        view.buffer = gltf::json::Index::new(out.buffer as u32);
        view.byte_offset = Some(USize64(at));
        if self.mode == "ATTRIBUTES" && view.byte_stride.is_none() && self.count > 1 {
            view.byte_stride = Some(Stride(self.stride as usize));
        }
        view.extensions = None;
        Ok(())
    }

    /// The view's decoded bytes (filters applied), or what is wrong with the stream.
    fn decode_bytes(&self, source: &[u8], max_bytes: u64) -> Result<Vec<u8>, String> {
        let (count, stride) = (usize::try_from(self.count).map_err(|_| "count too large")?, self.stride as usize);
        let limits = Limits { max_bytes: usize::try_from(max_bytes).unwrap_or(usize::MAX), ..Limits::default() };
        let mut workspace = Workspace::new(limits);
        let codec_error = |e: meshoptimizer_rs::Error| format!("{} stream: {e}", self.mode);
        let khr = self.extension == KHR;
        match (self.mode.as_str(), self.filter.as_str()) {
            ("TRIANGLES", "NONE") => codec::decode_index_buffer(count, stride, source, &mut workspace).map_err(codec_error),
            ("INDICES", "NONE") => codec::decode_index_sequence(count, stride, source, &mut workspace).map_err(codec_error),
            ("TRIANGLES" | "INDICES", f) => Err(format!("filter {f} applies only to ATTRIBUTES")),
            ("ATTRIBUTES", filter) => {
                // EXT defines only version 0 of the vertex codec; KHR adds version 1.
                if !khr && source.first().is_some_and(|b| b & 0x0f != 0) {
                    return Err(format!("vertex codec version {} is not defined by {EXT}", source[0] & 0x0f));
                }
                let mut data = codec::decode_vertex_buffer(count, stride, source, &mut workspace).map_err(codec_error)?;
                let filtered = match filter {
                    "NONE" => Ok(()),
                    "OCTAHEDRAL" => codec::decode_filter_oct(&mut data, count, stride, &mut workspace),
                    "QUATERNION" => codec::decode_filter_quat(&mut data, count, stride, &mut workspace),
                    "EXPONENTIAL" => codec::decode_filter_exp(&mut data, count, stride, &mut workspace),
                    "COLOR" if khr => codec::decode_filter_color(&mut data, count, stride, &mut workspace),
                    other => return Err(format!("filter {other:?} is not one {} defines", self.extension)),
                };
                filtered.map_err(|e| format!("{filter} filter: {e}"))?;
                Ok(data)
            }
            (other, _) => Err(format!("mode {other:?} is not ATTRIBUTES, TRIANGLES or INDICES")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use meshoptimizer_rs::codec::{encode_filter_color, encode_vertex_buffer, VertexEncoding};

    fn colour_view(extension: &'static str, count: u64) -> MeshoptView {
        let text = |s: &str| s.to_owned();
        MeshoptView { view: 0, extension, buffer: 0, offset: 0, length: 0, stride: 4, count, mode: text("ATTRIBUTES"), filter: text("COLOR") }
    }

    /// RGBA8 colours through the COLOR filter and vertex codec 1 (what KHR adds to EXT).
    fn encoded_colours(colours: &[[f32; 4]]) -> Vec<u8> {
        let mut ws = Workspace::default();
        let flat: Vec<f32> = colours.iter().flatten().copied().collect();
        let filtered = encode_filter_color(colours.len(), 4, 8, &flat, &mut ws).unwrap();
        encode_vertex_buffer(&filtered, colours.len(), 4, VertexEncoding::new(1, 2).unwrap(), &mut ws).unwrap()
    }

    #[test]
    fn khr_colour_filtered_views_with_vertex_codec_1_decode_to_their_colours() {
        let colours: Vec<[f32; 4]> = (0..37).map(|i| [i as f32 / 36.0, 1.0 - i as f32 / 36.0, 0.25, 0.5 + (i % 2) as f32 * 0.5]).collect();
        let stream = encoded_colours(&colours);
        let decoded = colour_view(KHR, colours.len() as u64).decode_bytes(&stream, 1 << 20).unwrap();
        assert_eq!(decoded.len(), colours.len() * 4);
        for (got, want) in decoded.chunks(4).zip(&colours) {
            for (g, w) in got.iter().zip(want) {
                assert!((f32::from(*g) / 255.0 - w).abs() <= 2.0 / 255.0, "{got:?} against {want:?}");
            }
        }
        // EXT defines neither the COLOR filter nor vertex codec 1.
        let ext = colour_view(EXT, colours.len() as u64).decode_bytes(&stream, 1 << 20).unwrap_err();
        assert!(ext.contains("vertex codec version 1"), "{ext}");
        let unfiltered = MeshoptView { filter: "NONE".into(), ..colour_view(EXT, colours.len() as u64) };
        assert!(unfiltered.decode_bytes(&stream, 1 << 20).unwrap_err().contains("version 1"));
    }

    #[test]
    fn a_stream_that_decodes_past_the_byte_limit_is_refused_before_it_allocates() {
        let stream = encoded_colours(&[[0.5; 4]; 64]);
        let err = colour_view(KHR, 1 << 28).decode_bytes(&stream, 1 << 20).unwrap_err();
        assert!(err.contains("ATTRIBUTES stream"), "{err}");
    }
}
