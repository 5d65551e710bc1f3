//! SPIR-V compiled from `shaders/` by `cargo run -p picking-vk-tools --bin compile-shaders`;
//! a test in tools/ checks these stay in step with the GLSL.

pub(crate) const PICK_VERT: &[u8] = include_bytes!("../../spirv/pick.vert.spv");
pub(crate) const PICK_INSTANCED_VERT: &[u8] = include_bytes!("../../spirv/pick_instanced.vert.spv");
pub(crate) const PICK_INSTANCED_ROWS_VERT: &[u8] = include_bytes!("../../spirv/pick_instanced_rows.vert.spv");
pub(crate) const PICK_INSTANCED_STORAGE_VERT: &[u8] = include_bytes!("../../spirv/pick_instanced_storage.vert.spv");
pub(crate) const PICK_INSTANCED_STORAGE_WALKED_VERT: &[u8] = include_bytes!("../../spirv/pick_instanced_storage_walked.vert.spv");
pub(crate) const PICK_SKINNED_VERT: &[u8] = include_bytes!("../../spirv/pick_skinned.vert.spv");
pub(crate) const PICK_SKINNED8_VERT: &[u8] = include_bytes!("../../spirv/pick_skinned8.vert.spv");
pub(crate) const PICK_MORPHED_VERT: &[u8] = include_bytes!("../../spirv/pick_morphed.vert.spv");
pub(crate) const PICK_SKINNED_STORAGE_VERT: &[u8] = include_bytes!("../../spirv/pick_skinned_storage.vert.spv");
pub(crate) const PICK_SKINNED8_STORAGE_VERT: &[u8] = include_bytes!("../../spirv/pick_skinned8_storage.vert.spv");
pub(crate) const PICK_BATCHED_VERT: &[u8] = include_bytes!("../../spirv/pick_batched.vert.spv");
pub(crate) const PICK_BATCHED_RECT_VERT: &[u8] = include_bytes!("../../spirv/pick_batched_rect.vert.spv");
pub(crate) const PICK_BATCHED_DETAIL_VERT: &[u8] = include_bytes!("../../spirv/pick_batched_detail.vert.spv");
pub(crate) const PICK_FRAG: &[u8] = include_bytes!("../../spirv/pick.frag.spv");
pub(crate) const PICK_DETAIL_FRAG: &[u8] = include_bytes!("../../spirv/pick_detail.frag.spv");
pub(crate) const PICK_BATCHED_DETAIL_FRAG: &[u8] = include_bytes!("../../spirv/pick_batched_detail.frag.spv");
pub(crate) const PICK_RECT_FRAG: &[u8] = include_bytes!("../../spirv/pick_rect.frag.spv");
pub(crate) const PICK_RECT_ALL_FRAG: &[u8] = include_bytes!("../../spirv/pick_rect_all.frag.spv");
pub(crate) const RECT_REDUCE_COMP: &[u8] = include_bytes!("../../spirv/rect_reduce.comp.spv");
pub(crate) const PICK_RESULTS_COMP: &[u8] = include_bytes!("../../spirv/pick_results.comp.spv");
pub(crate) const PICK_CULL_COMP: &[u8] = include_bytes!("../../spirv/pick_cull.comp.spv");
pub(crate) const PICK_CULL_FINISH_COMP: &[u8] = include_bytes!("../../spirv/pick_cull_finish.comp.spv");
pub(crate) const PICK_CULL_DRAWS_COMP: &[u8] = include_bytes!("../../spirv/pick_cull_draws.comp.spv");
pub(crate) const PICK_CULL_FINISH_DRAWS_COMP: &[u8] = include_bytes!("../../spirv/pick_cull_finish_draws.comp.spv");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pass::pipeline::words;

    #[test]
    fn spirv_is_present_and_well_formed() {
        for code in [
            PICK_VERT,
            PICK_INSTANCED_VERT,
            PICK_INSTANCED_ROWS_VERT,
            PICK_INSTANCED_STORAGE_VERT,
            PICK_INSTANCED_STORAGE_WALKED_VERT,
            PICK_SKINNED_VERT,
            PICK_SKINNED8_VERT,
            PICK_MORPHED_VERT,
            PICK_SKINNED_STORAGE_VERT,
            PICK_SKINNED8_STORAGE_VERT,
            PICK_BATCHED_VERT,
            PICK_BATCHED_RECT_VERT,
            PICK_FRAG,
            PICK_DETAIL_FRAG,
            PICK_RECT_FRAG,
            PICK_RECT_ALL_FRAG,
            RECT_REDUCE_COMP,
            PICK_RESULTS_COMP,
        ] {
            assert_eq!(code.len() % 4, 0);
            assert_eq!(words(code)[0], 0x0723_0203, "SPIR-V magic");
        }
    }
}
