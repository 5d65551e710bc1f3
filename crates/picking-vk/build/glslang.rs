//! With the `hooks` feature, shaderc is linked statically (`prefer-static-linking`). Some
//! systems ship that static library (`libshaderc_combined.a`) without the glslang and
//! SPIRV-Tools code it calls: Debian's and Ubuntu's do. This module finds the folder shaderc-sys
//! links from the way shaderc-sys does (`SHADERC_LIB_DIR`, `VULKAN_SDK`, pkg-config, the
//! distribution's library folder), reads the library's symbol index to tell whether it holds
//! glslang, and if it does not, links the static glslang and SPIRV-Tools libraries from
//! `PICKING_VK_GLSLANG_STATIC_DIR`, the same folder, or where pkg-config puts them. When they
//! cannot be found, the build stops here with one message that says what to install or set,
//! instead of a wall of undefined symbols from the linker.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Emits the link lines for glslang and SPIRV-Tools where the static shaderc needs them (see
/// the module docs); exits with one message when they cannot be found.
pub fn link_glslang_where_needed() {
    declare_inputs();
    if std::env::var_os("DOCS_RS").is_some() {
        return;
    }
    if let Some(dir) = std::env::var_os("PICKING_VK_GLSLANG_STATIC_DIR") {
        let dir = PathBuf::from(dir);
        if !has_libs(&dir) {
            fail(&format!("PICKING_VK_GLSLANG_STATIC_DIR is {}, which holds no libglslang.a and libSPIRV-Tools.a.", dir.display()));
        }
        link(&dir);
        return;
    }
    let Some(shaderc_dir) = shaderc_dir() else { return };
    let combined = shaderc_dir.join("libshaderc_combined.a");
    if !combined.is_file() || defines_glslang(&combined) {
        // shaderc is linked dynamically, built from source, or complete: nothing to add.
        return;
    }
    let mut candidates = vec![shaderc_dir.clone()];
    candidates.extend(pkg_config_libdir("glslang"));
    candidates.extend(pkg_config_libdir("SPIRV-Tools"));
    candidates.extend(system_dirs());
    match candidates.iter().find(|d| has_libs(d)) {
        Some(dir) => link(dir),
        None => fail(&format!(
            "shaderc's static library {} does not include glslang and SPIRV-Tools, and their static libraries \
             (libglslang.a, libSPIRV-Tools.a) are in none of: {}.",
            combined.display(),
            candidates.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// The static libraries Debian's shaderc needs, in link order. Newer glslang releases fold some
/// of them into `glslang`: those missing from the folder are skipped.
const GLSLANG_LIBS: [&str; 8] = ["glslang", "MachineIndependent", "GenericCodeGen", "OSDependent", "OGLCompiler", "SPIRV", "SPIRV-Tools-opt", "SPIRV-Tools"];
/// Without these two nothing links.
const REQUIRED: [&str; 2] = ["glslang", "SPIRV-Tools"];
/// A symbol every complete shaderc holds (`glslang::InitializeProcess()`), as it appears in the
/// archive's symbol index.
const GLSLANG_SYMBOL: &[u8] = b"_ZN7glslang17InitializeProcessEv";

/// The variables the search reads: a change re-runs the build script.
pub fn declare_inputs() {
    for var in ["PICKING_VK_GLSLANG_STATIC_DIR", "SHADERC_LIB_DIR", "VULKAN_SDK", "PKG_CONFIG_PATH"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
}

/// Where shaderc-sys looks for shaderc, in its order (shaderc-sys 0.10, `get_search_dir`).
fn shaderc_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("SHADERC_LIB_DIR") {
        return Some(PathBuf::from(dir));
    }
    if let Some(sdk) = std::env::var_os("VULKAN_SDK") {
        return Some(PathBuf::from(sdk).join("lib"));
    }
    pkg_config_libdir("shaderc").or_else(|| system_dirs().into_iter().next())
}

/// The distribution's library folders, the multiarch one first.
fn system_dirs() -> Vec<PathBuf> {
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let arch = if arch == "x86" { "i386".to_string() } else { arch };
    [format!("/usr/lib/{arch}-linux-gnu"), "/usr/lib64".into(), "/usr/lib".into(), "/usr/local/lib".into()]
        .into_iter()
        .map(PathBuf::from)
        .filter(|d| d.is_dir())
        .collect()
}

fn pkg_config_libdir(package: &str) -> Option<PathBuf> {
    let out = Command::new("pkg-config").args(["--variable=libdir", package]).output().ok()?;
    let dir = String::from_utf8(out.stdout).ok()?;
    let dir = dir.trim();
    (out.status.success() && !dir.is_empty()).then(|| PathBuf::from(dir))
}

fn has_libs(dir: &Path) -> bool {
    REQUIRED.iter().all(|lib| dir.join(format!("lib{lib}.a")).is_file())
}

fn link(dir: &Path) {
    println!("cargo:rustc-link-search=native={}", dir.display());
    for lib in GLSLANG_LIBS.iter().filter(|lib| dir.join(format!("lib{lib}.a")).is_file()) {
        println!("cargo:rustc-link-lib=static={lib}");
    }
    println!("cargo:rustc-link-lib=dylib=stdc++");
}

/// Whether the archive's symbol index (its first member, `/` in the GNU and System V formats)
/// lists glslang's entry point: only defined symbols are listed there.
fn defines_glslang(archive: &Path) -> bool {
    let Ok(bytes) = std::fs::read(archive) else { return false };
    let Some(header) = bytes.get(8..68).filter(|_| bytes.starts_with(b"!<arch>\n")) else { return false };
    let (name, size) = (&header[..16], &header[48..58]);
    let is_index = name.starts_with(b"/ ") || name.starts_with(b"/SYM64/");
    let size: usize = std::str::from_utf8(size).ok().and_then(|s| s.trim().parse().ok()).unwrap_or(0);
    let index = bytes.get(68..68usize.saturating_add(size)).unwrap_or(&[]);
    is_index && index.windows(GLSLANG_SYMBOL.len()).any(|w| w == GLSLANG_SYMBOL)
}

fn fail(reason: &str) -> ! {
    eprintln!(
        "\nerror: picking-vk's `hooks` feature links shaderc statically, and shaderc needs glslang and SPIRV-Tools.\n\
         {reason}\n\
         Fix: install the static libraries (Debian/Ubuntu: `apt-get install libshaderc-dev glslang-dev spirv-tools`),\n\
         or set PICKING_VK_GLSLANG_STATIC_DIR to the folder holding libglslang.a and libSPIRV-Tools.a,\n\
         or build shaderc from source with shaderc's `build-from-source` feature (minutes of C++).\n"
    );
    std::process::exit(1);
}
