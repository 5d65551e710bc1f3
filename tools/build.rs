//! The tools link shaderc themselves (the shader compiler and its freshness test), so they add
//! glslang and SPIRV-Tools where the system's shaderc needs them, as picking-vk's `hooks` does.

#[path = "../crates/picking-vk/build/glslang.rs"]
mod glslang;

fn main() {
    glslang::link_glslang_where_needed();
}
