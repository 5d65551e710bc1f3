//! The extensions a file may require. The viewer reads the geometry ones itself (quantized,
//! compressed and instanced geometry) and the texture images extensions give
//! (`texture_sources`), the glTF crate reads texture transforms, and ones that
//! change only shading (or add lights or metadata) are read with a warning: the same geometry
//! is drawn and picked. Any other required extension is refused by name, before anything else
//! in the file is checked.

use super::compressed::{DRACO, MESHOPT_EXT, MESHOPT_KHR};
use super::{gpu_instancing, printable, printable_cut, quantized, texture_sources, SceneError};

/// Required extensions the viewer reads.
const READ: &[&str] = &[
    quantized::EXTENSION,
    gpu_instancing::EXTENSION,
    "KHR_texture_transform",
    DRACO,
    MESHOPT_EXT,
    MESHOPT_KHR,
    texture_sources::EXTENSIONS[0],
    texture_sources::EXTENSIONS[1],
    texture_sources::EXTENSIONS[2],
];

/// Refuses a file that requires an extension the viewer does not read, naming it.
pub fn refuse_unread(root: &gltf::json::Root) -> Result<(), SceneError> {
    match root.extensions_required.iter().find(|e| !READ.contains(&e.as_str()) && !shading_only(e)) {
        Some(e) => Err(SceneError::UnreadExtension(printable(e))),
        None => Ok(()),
    }
}

/// Takes off `extensionsRequired` what the viewer reads itself or reads with a warning (the
/// glTF crate's validation refuses every required extension it does not know), and declares
/// KHR_mesh_quantization used where the file only requires it (the attribute types it allows
/// are checked against `extensionsUsed`).
pub fn take_read(root: &mut gltf::json::Root) {
    if root.extensions_required.iter().any(|e| e == quantized::EXTENSION) && !root.extensions_used.iter().any(|e| e == quantized::EXTENSION) {
        root.extensions_used.push(quantized::EXTENSION.into());
    }
    let (shading, required): (Vec<String>, Vec<String>) = std::mem::take(&mut root.extensions_required).into_iter().partition(|e| shading_only(e));
    if !shading.is_empty() {
        log::warn!(
            "the file requires {}: read, but drawn with the viewer's own shading",
            shading.iter().map(|e| printable_cut(e)).collect::<Vec<_>>().join(", ")
        );
    }
    root.extensions_required = required.into_iter().filter(|e| e == "KHR_texture_transform" || !READ.contains(&e.as_str())).collect();
}

/// Whether a required extension changes only how surfaces are shaded (materials but the one
/// that replaces the base colour, and its alpha mask, with its own), or adds lights or
/// metadata: nothing the viewer draws or picks moves or changes its mask.
fn shading_only(extension: &str) -> bool {
    (extension.starts_with("KHR_materials_") && extension != "KHR_materials_pbrSpecularGlossiness")
        || matches!(extension, "KHR_lights_punctual" | "EXT_lights_image_based" | "KHR_xmp_json_ld")
}
