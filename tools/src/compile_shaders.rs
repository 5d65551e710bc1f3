//! `cargo run -p picking-vk-tools --bin compile-shaders`: regenerates the SPIR-V the picker and
//! the host crate embed from `shaders/`. `--check` only verifies the checked-in files are up to date.

#[path = "shader_build.rs"]
mod shader_build;

fn main() {
    let check = std::env::args().any(|a| a == "--check");
    let mut stale = 0;
    for &(name, kind, crate_dir) in shader_build::SHADERS {
        let spirv = match shader_build::compile(name, kind) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        };
        let path = shader_build::spirv_path(name, crate_dir);
        let current = std::fs::read(&path).unwrap_or_default();
        if current == spirv {
            println!("{name}: up to date");
        } else if check {
            println!("{name}: STALE ({})", path.display());
            stale += 1;
        } else if let Err(e) = std::fs::write(&path, &spirv) {
            eprintln!("error: writing {}: {e}", path.display());
            std::process::exit(1);
        } else {
            println!("{name}: written ({} bytes)", spirv.len());
        }
    }
    if stale > 0 {
        eprintln!("{stale} shader(s) stale: run `cargo run -p picking-vk-tools --bin compile-shaders`");
        std::process::exit(1);
    }
}
