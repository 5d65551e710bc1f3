//! Texture images an extension gives (`EXT_texture_webp`, `KHR_texture_basisu`,
//! `EXT_texture_avif`): gltfpack and glTF-Transform write them, often with no PNG or JPEG
//! fallback. The glTF crate reads only a texture's own `source`, so each such texture is
//! pointed here at the image the viewer draws: the WebP one (decoded), else the texture's own
//! `source` (the fallback these extensions ask files to give), else the extension's KTX2 or
//! AVIF image, which the viewer cannot decode: the materials using it are drawn and picked
//! without it (`materials::load_textures` warns).

use super::SceneError;
use gltf::json::{Index, Root};
use serde::Deserialize;

/// The extensions, in the order their images are preferred.
pub const EXTENSIONS: [&str; 3] = ["EXT_texture_webp", "KHR_texture_basisu", "EXT_texture_avif"];

#[derive(Deserialize, Default)]
#[serde(default)]
struct Textures {
    textures: Vec<Texture>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Texture {
    source: Option<u64>,
    extensions: Option<serde_json::Map<String, serde_json::Value>>,
}

/// The image texture `t` is drawn with, if an extension names one: the WebP image, else its
/// own `source`, else the first extension's image.
fn chosen(t: &Texture) -> Result<Option<u64>, String> {
    let Some(extensions) = &t.extensions else { return Ok(None) };
    let mut given = vec![];
    for name in EXTENSIONS {
        let Some(ext) = extensions.get(name) else { continue };
        let source = ext.get("source").and_then(serde_json::Value::as_u64).ok_or_else(|| format!("its {name} has no image index as its source"))?;
        given.push((name, source));
    }
    Ok(match (given.first(), t.source) {
        (Some(&("EXT_texture_webp", webp)), _) => Some(webp),
        (Some(_), Some(own)) => Some(own),
        (Some(&(_, other)), None) => Some(other),
        (None, _) => None,
    })
}

/// Points every texture whose image one of [`EXTENSIONS`] gives at the image to draw, where
/// the file declares the extension (`json` the file's JSON, `root` as parsed from it).
pub fn choose(json: &[u8], root: &mut Root) -> Result<(), SceneError> {
    let declared = |e: &str| root.extensions_used.iter().chain(&root.extensions_required).any(|d| d == e);
    if !EXTENSIONS.iter().any(|e| declared(e)) {
        return Ok(());
    }
    let parsed: Textures = serde_json::from_slice(json).map_err(|e| SceneError::Gltf(gltf::Error::Deserialize(e)))?;
    for (i, t) in parsed.textures.iter().enumerate() {
        let image = chosen(t).map_err(|reason| SceneError::Texture { texture: i, reason })?;
        let (Some(image), Some(texture)) = (image, root.textures.get_mut(i)) else { continue };
        // An index past the images is left to the glTF crate's validation, which names it.
        texture.source = Index::new(u32::try_from(image).unwrap_or(u32::MAX));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texture(json: serde_json::Value) -> Texture {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn webp_wins_then_the_fallback_then_the_extensions_own_image() {
        let webp = texture(serde_json::json!({"source": 0, "extensions": {"EXT_texture_webp": {"source": 1}, "KHR_texture_basisu": {"source": 2}}}));
        assert_eq!(chosen(&webp), Ok(Some(1)));
        let basis_with_png = texture(serde_json::json!({"source": 0, "extensions": {"KHR_texture_basisu": {"source": 2}}}));
        assert_eq!(chosen(&basis_with_png), Ok(Some(0)));
        let basis_alone = texture(serde_json::json!({"extensions": {"KHR_texture_basisu": {"source": 2}}}));
        assert_eq!(chosen(&basis_alone), Ok(Some(2)));
        let plain = texture(serde_json::json!({"source": 3}));
        assert_eq!(chosen(&plain), Ok(None));
        let broken = texture(serde_json::json!({"extensions": {"EXT_texture_avif": {"source": "x"}}}));
        assert!(chosen(&broken).unwrap_err().contains("EXT_texture_avif has no image index"));
    }
}
