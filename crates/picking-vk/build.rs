//! With the `hooks` feature, shaderc is linked statically; `build/glslang.rs` adds the glslang
//! and SPIRV-Tools libraries where the system's shaderc needs them.

#[path = "build/glslang.rs"]
mod glslang;

fn main() {
    if std::env::var_os("CARGO_FEATURE_HOOKS").is_some() {
        glslang::link_glslang_where_needed();
    } else {
        glslang::declare_inputs();
    }
}
