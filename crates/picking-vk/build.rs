//! With the `hooks` feature, shaderc is linked statically. Some systems ship its static
//! library without the glslang and SPIRV-Tools libraries it needs (Debian's
//! libshaderc_combined.a): set `PICKING_VK_GLSLANG_STATIC_DIR` to their folder to link them.
fn main() {
    println!("cargo:rerun-if-env-changed=PICKING_VK_GLSLANG_STATIC_DIR");
    if std::env::var_os("CARGO_FEATURE_HOOKS").is_none() {
        return;
    }
    let Some(dir) = std::env::var_os("PICKING_VK_GLSLANG_STATIC_DIR") else { return };
    println!("cargo:rustc-link-search=native={}", dir.to_string_lossy());
    for lib in ["glslang", "MachineIndependent", "GenericCodeGen", "OSDependent", "OGLCompiler", "SPIRV", "SPIRV-Tools-opt", "SPIRV-Tools"] {
        println!("cargo:rustc-link-lib=static={lib}");
    }
    println!("cargo:rustc-link-lib=dylib=stdc++");
}
