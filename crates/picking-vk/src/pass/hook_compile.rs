//! Compiling a hooked stage with shaderc (the `hooks` feature). Without the feature, hooked
//! draws are refused with [`PickError::HookCompile`]; draws without hooks never come here.

use crate::draw::hooks::{HookProgram, HookSource};
use crate::error::PickError;
use crate::pass::hook_glsl::{assemble, Stage, DISCARD_PART, SHARED_PART, WORLD_PART};
use crate::pass::hook_reflect::{check, reflect, Interface};
use ash::vk;

/// Hooks that change nothing: the baseline stage, whose declarations are the template's own.
const NEUTRAL_DISCARD: &str = "bool pick_discard(PickFragment f) { return false; }";
const NEUTRAL_WORLD: &str = "vec3 pick_world(PickVertex v) { return v.world; }";

/// The interfaces of baseline stages compiled so far, by their source.
#[derive(Default)]
pub(crate) struct Baselines(Vec<(String, Interface)>);

impl Baselines {
    fn get(&mut self, source: &HookSource, stage: &Stage) -> Result<&Interface, String> {
        let neutral = HookSource {
            name: String::new(),
            shared: String::new(),
            discard: source.discard.as_ref().map(|_| NEUTRAL_DISCARD.into()),
            world: source.world.as_ref().map(|_| NEUTRAL_WORLD.into()),
            attribute: source.attribute,
        };
        let text = assemble(&neutral, stage);
        let index = match self.0.iter().position(|(t, _)| *t == text) {
            Some(i) => i,
            None => {
                let interface = reflect(&compile_glsl(&text, stage).map_err(|e| format!("the hook template did not compile: {e}"))?)?;
                self.0.push((text, interface));
                self.0.len() - 1
            }
        };
        Ok(&self.0[index].1)
    }
}

/// SPIR-V words of `stage` of `program`'s pipelines, checked against the program's host set
/// (`hook_reflect`).
pub(crate) fn compile(program: &HookProgram, stage: &Stage, baselines: &mut Baselines) -> Result<Vec<u32>, PickError> {
    let source = program.source();
    let error = |message: String| PickError::HookCompile { program: source.name.clone(), message };
    let code = compile_glsl(&assemble(source, stage), stage).map_err(|message| error(hook_lines(&message)))?;
    let flag = match stage {
        Stage::Vertex(_) => vk::ShaderStageFlags::VERTEX,
        Stage::Fragment(_) => vk::ShaderStageFlags::FRAGMENT,
    };
    let interface = reflect(&code).map_err(error)?;
    let baseline = baselines.get(source, stage).map_err(error)?;
    check(&interface, baseline, program.host_set().map(|s| &s.bindings[..]), flag).map_err(error)?;
    Ok(code)
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

    /// Compiles `shared` (with a discard hook `discard`) for `stages`, against `bindings`
    /// (`None`: no host set); the first error's message.
    #[cfg(feature = "hooks")]
    fn checked(shared: &str, discard: &str, bindings: Option<&[crate::hooks::HookBinding]>, stages: &[Stage]) -> Result<(), String> {
        use crate::{hooks::AttributeFormat, hooks::HookAttribute, hooks::Interpolation};
        let source = HookSource {
            name: "test".into(),
            shared: shared.into(),
            discard: Some(format!("bool pick_discard(PickFragment f) {{ {discard} }}")),
            world: None,
            attribute: Some(HookAttribute { format: AttributeFormat::Float32x2, interpolation: Interpolation::Smooth }),
        };
        let program = match bindings {
            // SAFETY: the layout is never used: nothing here builds a pipeline.
            Some(b) => unsafe { HookProgram::with_host_set(source, ash::vk::Handle::from_raw(1), b) },
            None => HookProgram::new(source),
        };
        let mut baselines = Baselines::default();
        for stage in stages {
            compile(&program, stage, &mut baselines).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    #[cfg(feature = "hooks")]
    #[test]
    fn hook_declarations_are_checked_against_the_host_set() {
        use crate::draw::deform::DeformKey;
        use crate::pass::hook_glsl::{FragmentVariant, VertexVariant};
        use vk::{DescriptorType as T, ShaderStageFlags as S};
        let binding = |binding, descriptor_type, count, stages| crate::hooks::HookBinding { binding, descriptor_type, count, stages };
        let texture = [binding(0, T::COMBINED_IMAGE_SAMPLER, 1, S::FRAGMENT)];
        let sampler = "layout(set = 1, binding = 0) uniform sampler2D tex;\n";
        let samples = "return texture(tex, f.attrib.xy).a < 0.5;";
        let influences = (crate::deform::JointFormat::U8x4, 0, crate::deform::WeightFormat::Float32x4, 0, None);
        let all_stages = [
            Stage::Fragment(FragmentVariant::Hit),
            Stage::Fragment(FragmentVariant::HitDetail),
            Stage::Fragment(FragmentVariant::HitDetailBatched),
            Stage::Fragment(FragmentVariant::RectVisible),
            Stage::Fragment(FragmentVariant::RectAll),
            Stage::Vertex(VertexVariant::InstancedMat4),
            Stage::Vertex(VertexVariant::InstancedRows),
            Stage::Vertex(VertexVariant::Batched { rect: false, primitive_base: false }),
            Stage::Vertex(VertexVariant::Batched { rect: false, primitive_base: true }),
            Stage::Vertex(VertexVariant::Batched { rect: true, primitive_base: false }),
            Stage::Vertex(VertexVariant::Plain),
            Stage::Vertex(VertexVariant::InstancedStorage),
            Stage::Vertex(VertexVariant::Deformed(DeformKey { sets: [Some(influences); 2], from_storage: true })),
        ];
        // The template's own resources (the rectangle table, the storage sets) and the
        // vertex stage's unused declaration of a fragment-only binding pass.
        checked(sampler, samples, Some(&texture), &all_stages).unwrap();
        checked("", "return false;", None, &all_stages).unwrap();
        let frag = [Stage::Fragment(FragmentVariant::Hit)];
        let vert = [Stage::Vertex(VertexVariant::Plain)];
        let refused = |shared: &str, discard: &str, bindings: Option<&[crate::hooks::HookBinding]>, stages: &[Stage], says: &str| {
            let e = checked(shared, discard, bindings, stages).expect_err(says);
            assert!(e.contains(says), "{e:?} does not say {says:?}");
        };
        refused(sampler, samples, None, &frag, "reads no host set");
        refused(sampler, samples, Some(&[binding(1, T::COMBINED_IMAGE_SAMPLER, 1, S::FRAGMENT)]), &frag, "has no binding 0");
        refused(sampler, samples, Some(&[binding(0, T::UNIFORM_BUFFER, 1, S::FRAGMENT)]), &frag, "UNIFORM_BUFFER");
        refused(sampler, samples, Some(&[binding(0, T::COMBINED_IMAGE_SAMPLER, 1, S::VERTEX)]), &frag, "visible to VERTEX only");
        refused(sampler, samples, Some(&[texture[0], texture[0]]), &frag, "more than once");
        let array = "layout(set = 1, binding = 0) uniform sampler2D texs[4];\n";
        refused(array, "return texture(texs[3], f.attrib.xy).a < 0.5;", Some(&texture), &frag, "declares 4 descriptors");
        checked(array, "return texture(texs[3], f.attrib.xy).a < 0.5;", Some(&[binding(0, T::COMBINED_IMAGE_SAMPLER, 4, S::FRAGMENT)]), &frag).unwrap();
        let at_zero = "layout(set = 0, binding = 3) uniform sampler2D tex;\n";
        refused(at_zero, samples, Some(&texture), &frag, "sets 0 and 2 are the picker's");
        let at_two = "layout(set = 2, binding = 0) uniform sampler2D tex;\n";
        refused(at_two, samples, Some(&texture), &frag, "sets 0 and 2 are the picker's");
        let storage = [binding(0, T::STORAGE_BUFFER, 1, S::FRAGMENT)];
        let written = "layout(std430, set = 1, binding = 0) buffer Hits { uint count; } hits;\n";
        refused(written, "hits.count += 1u; return false;", Some(&storage), &frag, "must be declared readonly");
        let read = "layout(std430, set = 1, binding = 0) readonly buffer Cut { float level; } cut;\n";
        checked(read, "return f.world.y > cut.level;", Some(&storage), &frag).unwrap();
        // The set is bound with no dynamic offsets: a dynamic binding, used or not, is refused.
        refused(read, "return f.world.y > cut.level;", Some(&[binding(0, T::STORAGE_BUFFER_DYNAMIC, 1, S::FRAGMENT)]), &frag, "may not be dynamic");
        let unused_dynamic = [storage[0], binding(1, T::UNIFORM_BUFFER_DYNAMIC, 1, S::FRAGMENT)];
        refused(read, "return f.world.y > cut.level;", Some(&unused_dynamic), &frag, "binding 1 is UNIFORM_BUFFER_DYNAMIC");
        let block = "layout(set = 1, binding = 0) uniform Cut { float level; } cut;\n";
        refused(block, "return f.world.y > cut.level;", Some(&texture), &frag, "UniformBuffer, and the host set's binding is COMBINED_IMAGE_SAMPLER");
        refused("layout(location = 7) in vec4 extra;\n", "return false;", None, &vert, "stage input at location 7");
        refused("layout(location = 6) out vec4 extra;\n", "extra = vec4(1.0); return false;", None, &frag, "stage output at location 6");
        // What takes a device feature: doubles, 64-bit integers, sample shading, buffer references.
        refused("", "double d = double(f.world.y); return d > 0.5lf;", None, &frag, "capability 10, Float64");
        refused("#extension GL_ARB_gpu_shader_int64 : require\n", "return uint64_t(f.world.y) > 2ul;", None, &frag, "Int64");
        refused("", "return gl_SampleID > 0;", None, &frag, "SampleRateShading");
        let reference = "#extension GL_EXT_buffer_reference : require\nlayout(buffer_reference) buffer Far { float v; };\nlayout(std430, set = 1, binding = 0) readonly buffer P { Far far; } p;\n";
        refused(reference, "return p.far.v > 0.0;", Some(&storage), &frag, "PhysicalStorageBufferAddresses");
        // textureSize (ImageQuery) and derivatives need none.
        checked(sampler, "return textureSize(tex, 0).x > 4 && dFdxFine(f.attrib.x) > 0.0;", Some(&texture), &frag).unwrap();
        // The rectangle table the template writes is out of a hook's reach.
        let rect_all = [Stage::Fragment(FragmentVariant::RectAll)];
        refused("", "table.words[0] = 7u; return false;", None, &rect_all, "undeclared identifier");
    }
}
