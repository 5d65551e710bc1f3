//! Compiling a hooked stage with shaderc (the `hooks` feature). Without the feature, hooked
//! draws are refused with [`PickError::HookCompile`]; draws without hooks never come here.

use crate::draw::hooks::HookSource;
use crate::error::PickError;
use crate::pass::hook_glsl::{assemble, Stage, DISCARD_PART, SHARED_PART, WORLD_PART};

/// SPIR-V words of `stage` of `source`'s pipelines.
pub(crate) fn compile(source: &HookSource, stage: &Stage) -> Result<Vec<u32>, PickError> {
    let text = assemble(source, stage);
    compile_glsl(&text, stage).map_err(|message| PickError::HookCompile { program: source.name.clone(), message: hook_lines(&message) })
}

#[cfg(feature = "hooks")]
fn compile_glsl(text: &str, stage: &Stage) -> Result<Vec<u32>, String> {
    let (kind, name) = match stage {
        Stage::Vertex(_) => (shaderc::ShaderKind::Vertex, "hook.vert"),
        Stage::Fragment(_) => (shaderc::ShaderKind::Fragment, "hook.frag"),
    };
    let compiler = shaderc::Compiler::new().map_err(|e| format!("shaderc is unavailable: {e}"))?;
    let mut options = shaderc::CompileOptions::new().map_err(|e| format!("shaderc is unavailable: {e}"))?;
    options.set_target_env(shaderc::TargetEnv::Vulkan, shaderc::EnvVersion::Vulkan1_0 as u32);
    // Unoptimized: the driver optimizes anyway, and the optimizer would drop inputs a hook
    // does not read, leaving the vertex stage's outputs unconsumed.
    options.set_optimization_level(shaderc::OptimizationLevel::Zero);
    let artifact = compiler.compile_into_spirv(text, kind, name, "main", Some(&options)).map_err(|e| e.to_string())?;
    Ok(artifact.as_binary().to_vec())
}

#[cfg(not(feature = "hooks"))]
fn compile_glsl(_text: &str, _stage: &Stage) -> Result<Vec<u32>, String> {
    Err("picking-vk was built without the `hooks` feature, which compiles hook programs with shaderc".into())
}

/// Names the host's parts in the compiler's `part:line:` prefixes, and escapes control
/// characters (a message may quote the source).
fn hook_lines(message: &str) -> String {
    let parts = [(DISCARD_PART, "discard hook"), (WORLD_PART, "world hook"), (SHARED_PART, "shared declarations")];
    message
        .lines()
        .map(|line| {
            let named = parts.iter().find_map(|(part, name)| {
                let rest = line.strip_prefix(part)?.strip_prefix(':')?;
                let (number, text) = rest.split_once(':')?;
                number.parse::<u32>().ok().map(|n| format!("{name}, line {n}:{text}"))
            });
            named.unwrap_or_else(|| line.to_string())
        })
        .map(|line| line.chars().flat_map(|c| if c.is_control() && c != '\t' { c.escape_default().collect::<Vec<_>>() } else { vec![c] }).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_hook_and_its_line() {
        let m = "discard:3: error: 'x' : undeclared identifier\nhook_pick.frag:40: error: oops\n1 error generated.";
        let out = hook_lines(m);
        assert!(out.starts_with("discard hook, line 3: error: 'x' : undeclared identifier\n"), "{out}");
        assert!(out.contains("hook_pick.frag:40: error: oops"));
        assert_eq!(hook_lines("world:12: error: \u{1b}[31m"), "world hook, line 12: error: \\u{1b}[31m");
    }
}
