//! Materials as the viewer draws and picks them: the base colour factor and texture (read with
//! the coordinate set its `texCoord` or texture transform names), `alphaMode` MASK with
//! `alphaCutoff`, and `doubleSided`. BLEND is drawn and picked as opaque; a primitive without
//! a material is drawn and picked from both sides. Images (PNG, JPEG, WebP; KTX2 and AVIF
//! images are left undrawn) come from the GLB chunk or another buffer view, a data URI, or a
//! file beside the scene (the buffers' rules), and are decoded within the loader's byte
//! budget and a size limit.

use super::buffers::{decode_data_uri, read_file};
use super::{printable, LoadOptions, SceneError};
use picking_vk_host::{Primitive, SamplerDesc, TextureData, Wrap};
use std::io::Cursor;
use std::path::Path;

/// Largest image side accepted (Vulkan guarantees 4096; common GPUs take 16384).
const MAX_SIDE: u32 = 8192;

/// The decoded base colour textures, and for each glTF texture its index among them (only
/// textures a material uses as its base colour are decoded).
pub struct Textures {
    pub data: Vec<TextureData>,
    by_gltf: Vec<Option<usize>>,
    /// The real paths of the image files read.
    pub files: Vec<std::path::PathBuf>,
}

/// An image's decoded RGBA8 texels, width and height.
type Decoded = (std::sync::Arc<[u8]>, u32, u32);

/// Decodes every texture a material uses as its base colour; `budget` is what decoding may
/// still allocate, in bytes, and shrinks by what it does.
pub fn load_textures(
    document: &gltf::Document,
    buffers: &[Vec<u8>],
    base: Option<&Path>,
    options: &LoadOptions,
    budget: &mut u64,
) -> Result<Textures, SceneError> {
    let mut out = Textures { data: vec![], by_gltf: vec![None; document.textures().len()], files: vec![] };
    // Each image is decoded (and counted) once, however many textures sample it.
    let mut decoded: Vec<Option<Decoded>> = vec![None; document.images().len()];
    // Images read once and left undrawn: KTX2 and AVIF (`texture_sources`).
    let mut undrawn = vec![false; document.images().len()];
    for material in document.materials() {
        let Some(info) = material.pbr_metallic_roughness().base_color_texture() else { continue };
        let texture = info.texture();
        let image = texture.source();
        if out.by_gltf[texture.index()].is_some() || undrawn.get(image.index()).copied().unwrap_or(false) {
            continue;
        }
        let (rgba, width, height) = match decoded.get(image.index()).cloned().flatten() {
            Some(d) => d,
            None => {
                let bad = |reason: String| SceneError::BadImage { image: image.index(), reason };
                let bytes = image_bytes(&image, buffers, base, options, &mut out.files).map_err(&bad)?;
                if let Some(format) = undecoded_format(&bytes) {
                    // Its materials are drawn and picked without it, as their colour factor
                    // and alpha alone.
                    log::warn!("image {}: a {format} image, which the viewer does not decode: its materials are drawn without it", image.index());
                    if let Some(u) = undrawn.get_mut(image.index()) {
                        *u = true;
                    }
                    continue;
                }
                let rgba = decode(&bytes, *budget).map_err(&bad)?;
                *budget = budget.saturating_sub(rgba.as_raw().len() as u64);
                let (width, height) = (rgba.width(), rgba.height());
                let d: Decoded = (rgba.into_raw().into(), width, height);
                if let Some(slot) = decoded.get_mut(image.index()) {
                    *slot = Some(d.clone());
                }
                d
            }
        };
        let sampler = sampler_of(&texture.sampler());
        out.by_gltf[texture.index()] = Some(out.data.len());
        out.data.push(TextureData { width, height, rgba, sampler });
    }
    Ok(out)
}

/// The texture coordinate set a material's base colour texture reads (`texCoord`, or its
/// `KHR_texture_transform` override) and the transform that extension applies to it
/// (offset, rotation, scale); set 0 and no transform without a texture.
pub fn uv_set(material: &gltf::Material) -> (u32, glam::Affine2) {
    let Some(info) = material.pbr_metallic_roughness().base_color_texture() else { return (0, glam::Affine2::IDENTITY) };
    let Some(t) = info.texture_transform() else { return (info.tex_coord(), glam::Affine2::IDENTITY) };
    // KHR_texture_transform: uv' = T(offset) * R(rotation) * S(scale) * uv, where R turns
    // the other way from glam's (its matrix is [cos sin; -sin cos]).
    let transform = glam::Affine2::from_translation(t.offset().into()) * glam::Affine2::from_angle(-t.rotation()) * glam::Affine2::from_scale(t.scale().into());
    (t.tex_coord().unwrap_or(info.tex_coord()), transform)
}

/// An image's encoded bytes; a file read has its real path pushed onto `files`.
fn image_bytes(
    image: &gltf::Image,
    buffers: &[Vec<u8>],
    base: Option<&Path>,
    options: &LoadOptions,
    files: &mut Vec<std::path::PathBuf>,
) -> Result<Vec<u8>, String> {
    match image.source() {
        gltf::image::Source::View { view, .. } => {
            let buffer = buffers.get(view.buffer().index()).ok_or_else(|| format!("buffer view {} names a missing buffer", view.index()))?;
            let end = view.offset().checked_add(view.length()).filter(|&e| e <= buffer.len());
            let end = end.ok_or_else(|| format!("buffer view {} ({} bytes at {}) lies outside its buffer", view.index(), view.length(), view.offset()))?;
            Ok(buffer[view.offset()..end].to_vec())
        }
        gltf::image::Source::Uri { uri, .. } if uri.starts_with("data:") => decode_data_uri(uri),
        gltf::image::Source::Uri { uri, .. } => read_file(uri, base, options.max_bytes, options).map(|(data, real)| {
            files.push(real);
            data
        }),
    }
}

/// The format of an image the viewer does not decode (a KTX2 or AVIF image, which
/// `KHR_texture_basisu` and `EXT_texture_avif` give), told by its signature.
fn undecoded_format(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(&[0xAB, b'K', b'T', b'X', b' ', b'2', b'0', 0xBB]) {
        return Some("KTX2");
    }
    // An ISO media file whose `ftyp` box names an AVIF brand, as its major brand or among its
    // compatible ones (after the minor version).
    let ftyp = bytes.get(4..8).filter(|t| *t == b"ftyp").and_then(|_| bytes.get(..4))?;
    let size = u32::from_be_bytes([ftyp[0], ftyp[1], ftyp[2], ftyp[3]]) as usize;
    let brands = bytes.get(8..size.min(bytes.len()))?;
    let avif = brands.chunks_exact(4).enumerate().any(|(i, b)| i != 1 && (b == b"avif" || b == b"avis"));
    avif.then_some("AVIF")
}

/// PNG, JPEG or WebP (told by their signatures) to RGBA8, refusing images larger than
/// `MAX_SIDE` on a side or than `budget` bytes decoded.
fn decode(bytes: &[u8], budget: u64) -> Result<image::RgbaImage, String> {
    let format = match bytes {
        [0x89, b'P', b'N', b'G', ..] => image::ImageFormat::Png,
        [0xFF, 0xD8, 0xFF, ..] => image::ImageFormat::Jpeg,
        [b'R', b'I', b'F', b'F', _, _, _, _, b'W', b'E', b'B', b'P', ..] => image::ImageFormat::WebP,
        _ => return Err("not a PNG, JPEG or WebP image".into()),
    };
    let mut reader = image::ImageReader::with_format(Cursor::new(bytes), format);
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_SIDE);
    limits.max_image_height = Some(MAX_SIDE);
    limits.max_alloc = Some(budget);
    reader.limits(limits);
    let decoded = reader.decode().map_err(|e| match e {
        image::ImageError::Limits(_) => format!("it is larger than the limits ({MAX_SIDE} texels a side, {budget} bytes left of --max-scene-bytes)"),
        other => format!("it does not decode: {}", printable(&other.to_string())),
    })?;
    let (w, h) = (decoded.width(), decoded.height());
    if u64::from(w) * u64::from(h) * 4 > budget {
        return Err(format!("its {w}x{h} texels exceed the {budget} bytes left of --max-scene-bytes"));
    }
    Ok(decoded.into_rgba8())
}

fn sampler_of(s: &gltf::texture::Sampler) -> SamplerDesc {
    use gltf::texture::{MagFilter, MinFilter, WrappingMode};
    let wrap = |w: WrappingMode| match w {
        WrappingMode::ClampToEdge => Wrap::ClampToEdge,
        WrappingMode::MirroredRepeat => Wrap::MirroredRepeat,
        WrappingMode::Repeat => Wrap::Repeat,
    };
    // One level: mipmapped minification reads level 0 with the filter it names.
    let linear_min = s.min_filter().is_none_or(|f| matches!(f, MinFilter::Linear | MinFilter::LinearMipmapNearest | MinFilter::LinearMipmapLinear));
    SamplerDesc { linear_mag: s.mag_filter() != Some(MagFilter::Nearest), linear_min, wrap_s: wrap(s.wrap_s()), wrap_t: wrap(s.wrap_t()) }
}

/// Gives `p` the material `material`: colour, texture, alpha mask and sidedness.
pub fn apply(p: &mut Primitive, material: &gltf::Material, textures: &Textures) -> Result<(), String> {
    let pbr = material.pbr_metallic_roughness();
    let color = pbr.base_color_factor();
    if !color.iter().all(|c| c.is_finite() && (0.0..=1.0).contains(c)) {
        return Err(format!("material {}: baseColorFactor {color:?} lies outside 0..1", material.index().unwrap_or(0)));
    }
    p.color = color;
    p.texture = pbr.base_color_texture().and_then(|t| textures.by_gltf.get(t.texture().index()).copied().flatten());
    // A primitive with no material at all stays two-sided (glTF's default material is
    // single-sided; files that name no material are mostly raw geometry, seen from any side).
    p.single_sided = material.index().is_some() && !material.double_sided();
    p.alpha_cutoff = match material.alpha_mode() {
        gltf::material::AlphaMode::Mask => {
            let cutoff = material.alpha_cutoff().unwrap_or(0.5);
            if !cutoff.is_finite() || cutoff < 0.0 {
                return Err(format!("material {}: alphaCutoff {cutoff} is not a number >= 0", material.index().unwrap_or(0)));
            }
            Some(cutoff)
        }
        gltf::material::AlphaMode::Opaque | gltf::material::AlphaMode::Blend => None,
    };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_told_by_signature_and_held_to_the_budget() {
        assert!(decode(b"GIF89a....", 1 << 20).unwrap_err().contains("not a PNG, JPEG or WebP"));
        let mut png = vec![];
        image::RgbaImage::from_pixel(64, 64, image::Rgba([1, 2, 3, 4])).write_to(&mut Cursor::new(&mut png), image::ImageFormat::Png).unwrap();
        assert_eq!(decode(&png, 1 << 20).unwrap().get_pixel(5, 5).0, [1, 2, 3, 4]);
        assert!(decode(&png, 1000).unwrap_err().contains("limits") || decode(&png, 1000).unwrap_err().contains("exceed"));
        assert!(decode(&png[..40], 1 << 20).unwrap_err().contains("does not decode"));
        // Lossless WebP decodes to the same texels.
        let mut webp = vec![];
        let image = image::RgbaImage::from_fn(16, 8, |x, y| image::Rgba([x as u8 * 9, y as u8 * 20, 7, if (x + y) % 3 == 0 { 0 } else { 255 }]));
        image.write_to(&mut Cursor::new(&mut webp), image::ImageFormat::WebP).unwrap();
        assert_eq!(decode(&webp, 1 << 20).unwrap(), image);
        // KTX2 and AVIF are told apart, not decoded.
        assert_eq!(undecoded_format(b"\xABKTX 20\xBB\r\n\x1A\n...."), Some("KTX2"));
        assert_eq!(undecoded_format(b"\0\0\0\x10ftypavif\0\0\0\0"), Some("AVIF"));
        // A major brand of `mif1` with `avif` among the compatible ones.
        assert_eq!(undecoded_format(b"\0\0\0\x18ftypmif1\0\0\0\0mif1avif"), Some("AVIF"));
        assert_eq!(undecoded_format(b"\0\0\0\x14ftypmif1\0\0\0\0heic"), None);
        assert_eq!(undecoded_format(&png), None);
    }
}
