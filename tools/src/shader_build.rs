//! Compiling the GLSL in `shaders/` to the SPIR-V checked in under
//! `crates/*/spirv/`, so consumers of the crate never need a shader compiler.

use std::path::{Path, PathBuf};

/// (GLSL source in `shaders/`, shader kind, folder under `crates/` of the crate that embeds it)
/// for every shader.
pub const SHADERS: &[(&str, shaderc::ShaderKind, &str)] = &[
    ("pick.vert", shaderc::ShaderKind::Vertex, "picking-vk"),
    ("pick_instanced.vert", shaderc::ShaderKind::Vertex, "picking-vk"),
    ("pick_batched.vert", shaderc::ShaderKind::Vertex, "picking-vk"),
    ("pick_batched_rect.vert", shaderc::ShaderKind::Vertex, "picking-vk"),
    ("pick_batched_detail.vert", shaderc::ShaderKind::Vertex, "picking-vk"),
    ("pick_instanced_rows.vert", shaderc::ShaderKind::Vertex, "picking-vk"),
    ("pick_instanced_storage.vert", shaderc::ShaderKind::Vertex, "picking-vk"),
    ("pick_instanced_storage_walked.vert", shaderc::ShaderKind::Vertex, "picking-vk"),
    ("pick_skinned.vert", shaderc::ShaderKind::Vertex, "picking-vk"),
    ("pick_skinned8.vert", shaderc::ShaderKind::Vertex, "picking-vk"),
    ("pick_morphed.vert", shaderc::ShaderKind::Vertex, "picking-vk"),
    ("pick_skinned_storage.vert", shaderc::ShaderKind::Vertex, "picking-vk"),
    ("pick_skinned8_storage.vert", shaderc::ShaderKind::Vertex, "picking-vk"),
    ("pick.frag", shaderc::ShaderKind::Fragment, "picking-vk"),
    ("pick_detail.frag", shaderc::ShaderKind::Fragment, "picking-vk"),
    ("pick_batched_detail.frag", shaderc::ShaderKind::Fragment, "picking-vk"),
    ("pick_rect.frag", shaderc::ShaderKind::Fragment, "picking-vk"),
    ("pick_rect_all.frag", shaderc::ShaderKind::Fragment, "picking-vk"),
    ("rect_reduce.comp", shaderc::ShaderKind::Compute, "picking-vk"),
    ("pick_results.comp", shaderc::ShaderKind::Compute, "picking-vk"),
    ("pick_cull.comp", shaderc::ShaderKind::Compute, "picking-vk"),
    ("pick_cull_finish.comp", shaderc::ShaderKind::Compute, "picking-vk"),
    ("pick_cull_draws.comp", shaderc::ShaderKind::Compute, "picking-vk"),
    ("pick_cull_finish_draws.comp", shaderc::ShaderKind::Compute, "picking-vk"),
    ("viewer_lit.vert", shaderc::ShaderKind::Vertex, "host"),
    ("viewer_lit_deformed.vert", shaderc::ShaderKind::Vertex, "host"),
    ("viewer_lit.frag", shaderc::ShaderKind::Fragment, "host"),
    ("billboard.vert", shaderc::ShaderKind::Vertex, "host"),
    ("billboard_lit.frag", shaderc::ShaderKind::Fragment, "host"),
    ("billboard_pick.frag", shaderc::ShaderKind::Fragment, "host"),
    ("billboard_pick_detail.frag", shaderc::ShaderKind::Fragment, "host"),
    ("instance_motion.comp", shaderc::ShaderKind::Compute, "host"),
];

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tools/ sits in the workspace").to_path_buf()
}

/// Where the checked-in SPIR-V of `name` lives, in the crate that embeds it.
pub fn spirv_path(name: &str, crate_dir: &str) -> PathBuf {
    workspace_root().join("crates").join(crate_dir).join("spirv").join(format!("{name}.spv"))
}

/// Compiles one shader from `shaders/` (with `#include` resolved there, then in
/// `crates/picking-vk/glsl/`, the GLSL the library also compiles at run time) to SPIR-V bytes.
pub fn compile(name: &str, kind: shaderc::ShaderKind) -> Result<Vec<u8>, String> {
    let dir = workspace_root().join("shaders");
    let library_glsl = workspace_root().join("crates/picking-vk/glsl");
    let source = std::fs::read_to_string(dir.join(name)).map_err(|e| format!("{name}: {e}"))?;
    let compiler = shaderc::Compiler::new().map_err(|e| e.to_string())?;
    let mut options = shaderc::CompileOptions::new().map_err(|e| e.to_string())?;
    options.set_target_env(shaderc::TargetEnv::Vulkan, shaderc::EnvVersion::Vulkan1_0 as u32);
    options.set_optimization_level(shaderc::OptimizationLevel::Performance);
    options.set_include_callback(move |requested, _, _, _| {
        let path = [dir.join(requested), library_glsl.join(requested)].into_iter().find(|p| p.exists()).unwrap_or_else(|| dir.join(requested));
        let content = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(shaderc::ResolvedInclude { resolved_name: path.display().to_string(), content })
    });
    let artifact = compiler.compile_into_spirv(&source, kind, name, "main", Some(&options)).map_err(|e| e.to_string())?;
    Ok(artifact.as_binary_u8().to_vec())
}
