//! The GLSL of a hooked pipeline's stage: `glsl/hook_pick.{vert,frag}` with the variant's
//! defines, and the host's hook source where the template marks it. `#line` directives name
//! each part, so the compiler's messages point into the hook's own lines.

use crate::draw::deform::DeformKey;
use crate::draw::hooks::{HookSource, Interpolation};

const COMMON: &str = include_str!("../../glsl/hook_common.glsl");
const VERTEX: &str = include_str!("../../glsl/hook_pick.vert");
const FRAGMENT: &str = include_str!("../../glsl/hook_pick.frag");
const RECT_TABLE: &str = include_str!("../../glsl/rect_table.glsl");
const DEFORM: &str = include_str!("../../glsl/deform.glsl");
const INSTANCE_STORAGE: &str = include_str!("../../glsl/instance_storage.glsl");
/// The set a hooked draw's storage buffers (its deformation's, or its instance transforms) are
/// bound at: after the host's hook set.
pub(crate) const HOOKED_STORAGE_SET: u32 = crate::draw::hooks::HOOK_SET + 1;
const MARKER: &str = "// @HOOKS@";

/// The names `#line` gives the host's parts; `hook_compile` maps them back.
pub(crate) const SHARED_PART: &str = "shared";
pub(crate) const DISCARD_PART: &str = "discard";
pub(crate) const WORLD_PART: &str = "world";

/// How a hooked vertex stage reads per-instance transforms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum VertexVariant {
    Plain,
    InstancedMat4,
    InstancedRows,
    /// Batch rows carry each draw's model, ID and snapshot index; in a rectangle pass
    /// (`rect`: only a GPU plan table's groups) the row's entry is its snapshot index offset
    /// by the pushed draw index. In the detail pass (`primitive_base`) also the triangles
    /// their command skipped, passed on to [`FragmentVariant::HitDetailBatched`].
    Batched {
        rect: bool,
        primitive_base: bool,
    },
    /// Instance transforms read from a storage buffer.
    InstancedStorage,
    /// A deformed draw: morph targets and up to two influence sets, read as vertex attributes
    /// or as storage words.
    Deformed(DeformKey),
}

/// What a hooked fragment stage writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum FragmentVariant {
    Hit,
    HitDetail,
    /// As `HitDetail`, after a batched vertex stage: the face counts from the draw's first
    /// triangle, the row's primitive base added (a GPU-planned span of chunks).
    HitDetailBatched,
    RectVisible,
    RectAll,
}

pub(crate) enum Stage {
    Vertex(VertexVariant),
    Fragment(FragmentVariant),
}

/// The complete source of one stage of `source`'s pipelines.
pub(crate) fn assemble(source: &HookSource, stage: &Stage) -> String {
    let mut defines: Vec<String> = vec![];
    if source.discard.is_some() {
        defines.push("PICK_DISCARD_HOOK".into());
    }
    if source.world.is_some() {
        defines.push("PICK_WORLD_HOOK".into());
    }
    if let Some(a) = source.attribute {
        defines.push("PICK_ATTRIBUTE".into());
        if a.interpolation == Interpolation::Flat {
            defines.push("PICK_ATTRIBUTE_FLAT".into());
        }
    }
    let (template, template_name, hook) = match stage {
        Stage::Vertex(v) => {
            match *v {
                VertexVariant::Plain => {}
                VertexVariant::InstancedMat4 => defines.push("PICK_INSTANCED_MAT4".into()),
                VertexVariant::InstancedRows => defines.push("PICK_INSTANCED_ROWS".into()),
                VertexVariant::Batched { rect, primitive_base } => {
                    defines.push("PICK_BATCHED".into());
                    if rect {
                        defines.push("PICK_RECT_ENTRIES".into());
                    }
                    if primitive_base {
                        defines.push("PICK_PRIMITIVE_BASE".into());
                    }
                }
                VertexVariant::InstancedStorage => defines.extend(["PICK_INSTANCED_STORAGE".into(), format!("PICK_STORAGE_SET {HOOKED_STORAGE_SET}")]),
                VertexVariant::Deformed(d) => {
                    defines.extend(["PICK_DEFORM".into(), format!("SKIN_SETS {}", d.set_count().min(2)), format!("PICK_STORAGE_SET {HOOKED_STORAGE_SET}")]);
                    if d.from_storage {
                        defines.push("SKIN_FROM_STORAGE".into());
                    }
                }
            }
            (VERTEX, "hook_pick.vert", source.world.as_deref().map(|w| (WORLD_PART, w)))
        }
        Stage::Fragment(f) => {
            let variant: &[&str] = match f {
                FragmentVariant::Hit => &["PICK_HIT"],
                FragmentVariant::HitDetail => &["PICK_HIT_DETAIL"],
                FragmentVariant::HitDetailBatched => &["PICK_HIT_DETAIL", "PICK_PRIMITIVE_BASE"],
                FragmentVariant::RectVisible => &["PICK_RECT_VISIBLE"],
                FragmentVariant::RectAll => &["PICK_RECT_ALL"],
            };
            defines.extend(variant.iter().map(|d| d.to_string()));
            (FRAGMENT, "hook_pick.frag", source.discard.as_deref().map(|d| (DISCARD_PART, d)))
        }
    };
    let (head, tail) = template.split_once(MARKER).unwrap_or((template, ""));
    let mut out = String::from("#version 450\n#extension GL_GOOGLE_cpp_style_line_directive : require\n");
    for d in &defines {
        out.push_str(&format!("#define {d}\n"));
    }
    out.push_str(&format!("#line 1 \"hook_common.glsl\"\n{COMMON}\n"));
    match stage {
        Stage::Vertex(VertexVariant::Deformed(_)) => out.push_str(&format!("#line 1 \"deform.glsl\"\n{DEFORM}\n")),
        Stage::Vertex(VertexVariant::InstancedStorage) => out.push_str(&format!("#line 1 \"instance_storage.glsl\"\n{INSTANCE_STORAGE}\n")),
        _ => {}
    }
    out.push_str(&format!("#line 1 \"{template_name}\"\n{head}\n"));
    out.push_str(&format!("#line 1 \"{SHARED_PART}\"\n{}\n", source.shared));
    if let Some((part, text)) = hook {
        out.push_str(&format!("#line 1 \"{part}\"\n{text}\n"));
    }
    // The rectangle table (written by the template) is declared after the hook parts, which
    // so cannot name it.
    if matches!(stage, Stage::Fragment(FragmentVariant::RectAll)) {
        out.push_str(&format!("#line 1 \"rect_table.glsl\"\n{RECT_TABLE}\n"));
    }
    // The template resumes on the line after the marker.
    let resume = head.lines().count() + 1;
    out.push_str(&format!("#line {resume} \"{template_name}\"\n{tail}"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_parts_are_named_and_defines_follow_the_source() {
        let source =
            HookSource { shared: "float k = 2.0;".into(), discard: Some("bool pick_discard(PickFragment f) { return false; }".into()), ..Default::default() };
        let frag = assemble(&source, &Stage::Fragment(FragmentVariant::RectAll));
        assert!(frag.starts_with("#version 450\n"));
        assert!(frag.contains("#define PICK_DISCARD_HOOK\n") && frag.contains("#define PICK_RECT_ALL\n"));
        assert!(!frag.contains("PICK_WORLD_HOOK") && !frag.contains("#define PICK_ATTRIBUTE"));
        assert!(frag.contains("#line 1 \"discard\"\nbool pick_discard"));
        assert!(frag.contains("#line 1 \"shared\"\nfloat k"));
        assert!(frag.contains("table_add"), "the table functions come with RectAll");
        assert!(frag.find("RectTable") > frag.find("bool pick_discard"), "the table is declared after the hooks");
        let vert = assemble(&source, &Stage::Vertex(VertexVariant::InstancedRows));
        assert!(vert.contains("#define PICK_INSTANCED_ROWS\n"));
        assert!(!vert.contains("#line 1 \"discard\""), "the discard hook stays in the fragment stage");
        assert!(!vert.contains("vec3 pick_deformed("), "the deformation comes with deformed variants only");
        let influences = (crate::deform::JointFormat::U8x4, 0, crate::deform::WeightFormat::Float32x4, 0, None);
        let deformed = assemble(&source, &Stage::Vertex(VertexVariant::Deformed(DeformKey { sets: [Some(influences); 2], from_storage: true })));
        assert!(deformed.contains("#define SKIN_SETS 2\n") && deformed.contains("#define SKIN_FROM_STORAGE\n"));
        assert!(deformed.contains("#define PICK_STORAGE_SET 2\n") && deformed.contains("vec3 pick_deformed("));
        let stored = assemble(&source, &Stage::Vertex(VertexVariant::InstancedStorage));
        assert!(stored.contains("#define PICK_STORAGE_SET 2\n") && stored.contains("mat4 pick_storage_instance("));
        assert!(!stored.contains("vec3 pick_deformed(") && !deformed.contains("mat4 pick_storage_instance("));
    }
}
