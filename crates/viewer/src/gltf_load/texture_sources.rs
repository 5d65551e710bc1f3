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

/// A texture's own image and the extensions' (read as typed fields: whatever else a texture
/// holds is skipped, never built into a tree).
#[derive(Deserialize, Default)]
#[serde(default)]
struct Texture {
    source: Option<u64>,
    extensions: Option<Extensions>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Extensions {
    #[serde(rename = "EXT_texture_webp")]
    webp: Option<Source>,
    #[serde(rename = "KHR_texture_basisu")]
    basisu: Option<Source>,
    #[serde(rename = "EXT_texture_avif")]
    avif: Option<Source>,
}

/// An extension's image: a missing or malformed `source` fails the file's JSON.
#[derive(Deserialize)]
struct Source {
    source: u64,
}

/// The image texture `t` is drawn with, if an extension the file declares (`declared`, in
/// [`EXTENSIONS`]' order) names one: the WebP image, else its own `source`, else the
/// extension's (KTX2, then AVIF).
fn chosen(t: &Texture, declared: [bool; 3]) -> Option<u64> {
    let e = t.extensions.as_ref()?;
    let given = |s: &Option<Source>, i: usize| s.as_ref().filter(|_| declared[i]).map(|s| s.source);
    let (webp, other) = (given(&e.webp, 0), given(&e.basisu, 1).or(given(&e.avif, 2)));
    match (webp, t.source, other) {
        (Some(webp), _, _) => Some(webp),
        (None, Some(own), Some(_)) => Some(own),
        (None, None, other) => other,
        (None, Some(_), None) => None,
    }
}

/// Points every texture whose image one of [`EXTENSIONS`] gives at the image to draw, where
/// the file declares the extension (`json` the file's JSON, `root` as parsed from it).
pub fn choose(json: &[u8], root: &mut Root) -> Result<(), SceneError> {
    let declared = EXTENSIONS.map(|e| root.extensions_used.iter().chain(&root.extensions_required).any(|d| d == e));
    if !declared.contains(&true) {
        return Ok(());
    }
    let parsed: Textures = serde_json::from_slice(json).map_err(|e| SceneError::Gltf(gltf::Error::Deserialize(e)))?;
    for (i, t) in parsed.textures.iter().enumerate() {
        let (Some(image), Some(texture)) = (chosen(t, declared), root.textures.get_mut(i)) else { continue };
        // An index past the images is left to the glTF crate's validation, which names it.
        texture.source = Index::new(u32::try_from(image).unwrap_or(u32::MAX));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [bool; 3] = [true; 3];

    fn texture(json: serde_json::Value) -> Texture {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn webp_wins_then_the_fallback_then_the_extensions_own_image() {
        let webp = texture(serde_json::json!({"source": 0, "extensions": {"EXT_texture_webp": {"source": 1}, "KHR_texture_basisu": {"source": 2}}}));
        assert_eq!(chosen(&webp, ALL), Some(1));
        let basis_with_png = texture(serde_json::json!({"source": 0, "extensions": {"KHR_texture_basisu": {"source": 2}, "OTHER": [1, 2]}}));
        assert_eq!(chosen(&basis_with_png, ALL), Some(0));
        let basis_alone = texture(serde_json::json!({"extensions": {"KHR_texture_basisu": {"source": 2}}}));
        assert_eq!(chosen(&basis_alone, ALL), Some(2));
        let avif_alone = texture(serde_json::json!({"extensions": {"EXT_texture_avif": {"source": 4}}}));
        assert_eq!(chosen(&avif_alone, ALL), Some(4));
        let plain = texture(serde_json::json!({"source": 3}));
        assert_eq!(chosen(&plain, ALL), None);
        // Only what the file declares is read; `"extensions": null` is no extension.
        assert_eq!(chosen(&webp, [false, true, true]), Some(0), "WebP undeclared: the fallback");
        assert_eq!(chosen(&basis_alone, [true, false, true]), None);
        assert_eq!(chosen(&texture(serde_json::json!({"source": 1, "extensions": null})), ALL), None);
        let broken = serde_json::from_value::<Texture>(serde_json::json!({"extensions": {"EXT_texture_avif": {"source": "x"}}}));
        assert!(broken.is_err(), "a malformed source fails the JSON");
    }
}
