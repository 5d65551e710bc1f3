//! The SPIR-V embedded in picking-vk and picking-vk-host must be what `shaders/` compiles to today.

#[path = "../src/shader_build.rs"]
mod shader_build;

#[test]
fn checked_in_spirv_matches_the_glsl() {
    for &(name, kind, crate_dir) in shader_build::SHADERS {
        let fresh = shader_build::compile(name, kind).unwrap_or_else(|e| panic!("{e}"));
        let checked_in = std::fs::read(shader_build::spirv_path(name, crate_dir)).unwrap();
        assert!(fresh == checked_in, "{name}: checked-in SPIR-V is stale; run `cargo run -p picking-vk-tools --bin compile-shaders`");
    }
}
