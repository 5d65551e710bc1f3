//! Debian's libshaderc_combined.a is not self-contained: link the static glslang and
//! SPIRV-Tools libraries it needs (see ../shared/ENVIRONMENT.md).
fn main() {
    println!("cargo:rustc-link-search=native=/usr/lib/x86_64-linux-gnu");
    for lib in ["glslang", "MachineIndependent", "GenericCodeGen", "OSDependent", "OGLCompiler", "SPIRV", "SPIRV-Tools-opt", "SPIRV-Tools"] {
        println!("cargo:rustc-link-lib=static={lib}");
    }
    println!("cargo:rustc-link-lib=dylib=stdc++");
}
