//! What hooked pipelines are built from: per hook program, its shader modules (compiled on the
//! first pick that needs them, then kept) and its pipeline layouts (the pass's set 0, the
//! host's set at `HOOK_SET`, and the larger push block of `glsl/hook_common.glsl`; for
//! deformed draws and instance transforms in storage also those buffers at
//! `HOOKED_STORAGE_SET` and their push words).

use crate::draw::hooks::{DrawHooks, HOOK_SET};
use crate::error::{PickError, Requirement};
use crate::gpu::Memory;
use crate::pass::hook_compile::{compile, Baselines};
use crate::pass::hook_glsl::{FragmentVariant, Stage, VertexVariant, HOOKED_STORAGE_SET};
use ash::vk;
use glam::{Mat4, Vec2};

/// Bytes of [`HookPush`].
pub(crate) const HOOK_PUSH_SIZE: u32 = 184;
/// Bytes of the hooked push block of a draw with storage buffers: [`HookPush`], then up to
/// sixteen words from byte 192 (`glsl/hook_common.glsl` with `PICK_DEFORM`: the deformation's,
/// or with `PICK_INSTANCED_STORAGE`: the instance storage's four).
pub(crate) const HOOK_STORAGE_PUSH_SIZE: u32 = 256;
const STORAGE_WORDS_AT: usize = 192;

/// Push constants of hooked pipelines, laid out as `HookPush` in `glsl/hook_common.glsl`.
pub(crate) struct HookPush {
    pub view_projection: Mat4,
    pub object_id: [u32; 2],
    pub draw_index: u32,
    pub first_instance: u32,
    /// The rectangle passes' tile words (zero in the hit pass).
    pub rect: [u32; 8],
    pub model: Mat4,
    pub pixel_shift: Vec2,
}

impl HookPush {
    pub fn to_bytes(&self) -> [u8; HOOK_PUSH_SIZE as usize] {
        let mut out = [0u8; HOOK_PUSH_SIZE as usize];
        let words = self
            .view_projection
            .to_cols_array()
            .map(f32::to_bits)
            .into_iter()
            .chain([self.object_id[0], self.object_id[1], self.draw_index, self.first_instance])
            .chain(self.rect)
            .chain(self.model.to_cols_array().map(f32::to_bits))
            .chain([self.pixel_shift.x.to_bits(), self.pixel_shift.y.to_bits()]);
        for (chunk, word) in out.chunks_exact_mut(4).zip(words) {
            chunk.copy_from_slice(&word.to_ne_bytes());
        }
        out
    }

    /// The push block of a draw with storage buffers: these words, then its storage `words`.
    pub fn to_bytes_with_storage(&self, words: &[u32]) -> [u8; HOOK_STORAGE_PUSH_SIZE as usize] {
        let mut out = [0u8; HOOK_STORAGE_PUSH_SIZE as usize];
        out[..HOOK_PUSH_SIZE as usize].copy_from_slice(&self.to_bytes());
        for (chunk, word) in out[STORAGE_WORDS_AT..].chunks_exact_mut(4).zip(words) {
            chunk.copy_from_slice(&word.to_ne_bytes());
        }
        out
    }
}

/// Vertex modules per program: five rigid variants, then five deformed ones.
const VERTEX_VARIANTS: usize = 10;

/// One program's modules (the fragment stage, and a vertex stage per variant, built as
/// needed) and its layout.
struct ProgramShaders {
    program: u64,
    layout: vk::PipelineLayout,
    /// For draws with storage buffers (deformed, or instance transforms in storage), made on
    /// first need (null until then).
    storage_layout: vk::PipelineLayout,
    /// The host's set layout, or an empty one: what set `HOOK_SET` of `storage_layout` holds.
    hook_set_layout: vk::DescriptorSetLayout,
    frag: vk::ShaderModule,
    /// The detail pass's fragment stage after a batched vertex stage (which passes on the
    /// rows' primitive base), made on first need.
    frag_batched: vk::ShaderModule,
    verts: [vk::ShaderModule; VERTEX_VARIANTS],
}

/// The hooked shaders of one pass flavour; freed on drop (after the pipelines built from them).
pub(crate) struct HookedShaders {
    memory: Memory,
    fragment: FragmentVariant,
    /// Set 0 of every hooked layout: the flavour's own set (the rectangle table), else an
    /// empty set made on first need (`own_empty`).
    set0: vk::DescriptorSetLayout,
    /// An empty set layout, made on first need: set 0 where the flavour has none, and the
    /// hook set of storage layouts whose program has none.
    own_empty: vk::DescriptorSetLayout,
    /// The layout of a draw's storage buffers (the pass's storage sets).
    storage_set: vk::DescriptorSetLayout,
    max_push_constants: u32,
    programs: Vec<ProgramShaders>,
    /// Stages compiled so far (tests check that draws without hooks never compile).
    pub compilations: u32,
    /// The template's own declarations per stage, for checking the host's.
    baselines: Baselines,
}

fn vertex_index(v: VertexVariant) -> usize {
    match v {
        VertexVariant::Plain => 0,
        VertexVariant::InstancedMat4 => 1,
        VertexVariant::InstancedRows => 2,
        // A set of hooked shaders serves one pass (rectangle or not).
        VertexVariant::Batched { .. } => 3,
        VertexVariant::InstancedStorage => 4,
        VertexVariant::Deformed(d) => 5 + d.shader_variant(),
    }
}

impl HookedShaders {
    pub fn new(
        memory: &Memory,
        fragment: FragmentVariant,
        set0: Option<vk::DescriptorSetLayout>,
        storage_set: vk::DescriptorSetLayout,
        max_push_constants: u32,
    ) -> Self {
        HookedShaders {
            memory: memory.clone(),
            fragment,
            set0: set0.unwrap_or_default(),
            own_empty: vk::DescriptorSetLayout::null(),
            storage_set,
            max_push_constants,
            programs: vec![],
            compilations: 0,
            baselines: Baselines::default(),
        }
    }

    /// The layout of `program`'s pipelines (with `storage`: of draws with storage buffers),
    /// once prepared.
    pub fn layout(&self, program: u64, storage: bool) -> Option<vk::PipelineLayout> {
        let p = self.programs.iter().find(|p| p.program == program)?;
        let layout = if storage { p.storage_layout } else { p.layout };
        (layout != vk::PipelineLayout::null()).then_some(layout)
    }

    /// The vertex and fragment modules and the layout for `hooks` with `vertex`'s instancing,
    /// compiling what is missing.
    pub fn prepare(&mut self, hooks: &DrawHooks, vertex: VertexVariant) -> Result<(vk::ShaderModule, vk::ShaderModule, vk::PipelineLayout), PickError> {
        let id = hooks.program.id();
        let index = match self.programs.iter().position(|p| p.program == id) {
            Some(i) => i,
            None => {
                let shaders = self.new_program(hooks)?;
                self.programs.push(shaders);
                self.programs.len() - 1
            }
        };
        let storage = matches!(vertex, VertexVariant::Deformed(_) | VertexVariant::InstancedStorage);
        if storage && self.programs[index].storage_layout == vk::PipelineLayout::null() {
            let layout = self.storage_layout(self.programs[index].hook_set_layout)?;
            self.memory.name(layout, &format!("hook layout with storage {:?}", hooks.program.source().name));
            self.programs[index].storage_layout = layout;
        }
        let v = vertex_index(vertex);
        if self.programs[index].verts[v] == vk::ShaderModule::null() {
            let module = self.module(hooks, Stage::Vertex(vertex))?;
            self.programs[index].verts[v] = module;
        }
        let batched = matches!(vertex, VertexVariant::Batched { primitive_base: true, .. });
        if batched && self.programs[index].frag_batched == vk::ShaderModule::null() {
            let module = self.module(hooks, Stage::Fragment(FragmentVariant::HitDetailBatched))?;
            self.programs[index].frag_batched = module;
        }
        let p = &self.programs[index];
        let frag = if batched { p.frag_batched } else { p.frag };
        Ok((p.verts[v], frag, if storage { p.storage_layout } else { p.layout }))
    }

    /// An empty set layout, made once.
    fn empty_set(&mut self) -> Result<vk::DescriptorSetLayout, PickError> {
        if self.own_empty == vk::DescriptorSetLayout::null() {
            // SAFETY: an empty set layout on a live device; destroyed in `Drop`.
            self.own_empty = unsafe { self.memory.device.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default(), None) }?;
        }
        Ok(self.own_empty)
    }

    /// The layout of a program's draws with storage buffers: set 0, the hook set (`hook_set`),
    /// the storage buffers' set, and the push block with their words.
    fn storage_layout(&mut self, hook_set: vk::DescriptorSetLayout) -> Result<vk::PipelineLayout, PickError> {
        if self.max_push_constants < HOOK_STORAGE_PUSH_SIZE {
            let needed = format!(
                "{HOOK_STORAGE_PUSH_SIZE} bytes for hooked draws that are deformed or read instances from storage, the device has {}",
                self.max_push_constants
            );
            return Err(PickError::Unsupported { missing: vec![Requirement::Limit { name: "maxPushConstantsSize", needed }] });
        }
        let set_layouts = [self.set0, hook_set, self.storage_set];
        debug_assert_eq!(set_layouts.len() as u32, HOOKED_STORAGE_SET + 1);
        let stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT;
        let ranges = [vk::PushConstantRange::default().stage_flags(stages).size(HOOK_STORAGE_PUSH_SIZE)];
        let info = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts).push_constant_ranges(&ranges);
        // SAFETY: the set layouts are live (the host keeps its own alive, per `HookProgram::with_host_set`).
        Ok(unsafe { self.memory.device.create_pipeline_layout(&info, None) }?)
    }

    fn new_program(&mut self, hooks: &DrawHooks) -> Result<ProgramShaders, PickError> {
        if self.max_push_constants < HOOK_PUSH_SIZE {
            let needed = format!("{HOOK_PUSH_SIZE} bytes for hooked draws, the device has {}", self.max_push_constants);
            return Err(PickError::Unsupported { missing: vec![Requirement::Limit { name: "maxPushConstantsSize", needed }] });
        }
        let device = self.memory.device.clone();
        if self.set0 == vk::DescriptorSetLayout::null() {
            self.set0 = self.empty_set()?;
        }
        let source = hooks.program.source();
        let host_layout = hooks.program.host_set().map(|s| s.layout);
        let hook_set_layout = match host_layout {
            None => self.empty_set()?,
            Some(l) => l,
        };
        let mut set_layouts = vec![self.set0];
        if let Some(l) = host_layout {
            debug_assert_eq!(set_layouts.len() as u32, HOOK_SET);
            set_layouts.push(l);
        }
        let stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT;
        let ranges = [vk::PushConstantRange::default().stage_flags(stages).size(HOOK_PUSH_SIZE)];
        let frag = self.module(hooks, Stage::Fragment(self.fragment))?;
        let info = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts).push_constant_ranges(&ranges);
        // SAFETY: the set layouts are live (the host keeps its own alive, per `HookProgram::with_host_set`).
        let layout = match unsafe { device.create_pipeline_layout(&info, None) } {
            Ok(layout) => layout,
            Err(e) => {
                // SAFETY: just created, used by nothing.
                unsafe { device.destroy_shader_module(frag, None) };
                return Err(e.into());
            }
        };
        self.memory.name(layout, &format!("hook layout {:?}", source.name));
        Ok(ProgramShaders {
            program: hooks.program.id(),
            layout,
            storage_layout: vk::PipelineLayout::null(),
            hook_set_layout,
            frag,
            frag_batched: vk::ShaderModule::null(),
            verts: [vk::ShaderModule::null(); VERTEX_VARIANTS],
        })
    }

    fn module(&mut self, hooks: &DrawHooks, stage: Stage) -> Result<vk::ShaderModule, PickError> {
        let code = compile(&hooks.program, &stage, &mut self.baselines)?;
        self.compilations += 1;
        let info = vk::ShaderModuleCreateInfo::default().code(&code);
        // SAFETY: `info` points at SPIR-V words that outlive the call.
        let module = unsafe { self.memory.device.create_shader_module(&info, None) }?;
        self.memory.name(module, &format!("hook {:?}", hooks.program.source().name));
        Ok(module)
    }
}

impl Drop for HookedShaders {
    fn drop(&mut self) {
        // SAFETY: the owner drops the pipelines built from these first, and the GPU no longer
        // uses any of them; null handles are ignored.
        unsafe {
            for p in self.programs.drain(..) {
                for m in p.verts.into_iter().chain([p.frag, p.frag_batched]) {
                    self.memory.device.destroy_shader_module(m, None);
                }
                self.memory.device.destroy_pipeline_layout(p.layout, None);
                self.memory.device.destroy_pipeline_layout(p.storage_layout, None);
            }
            self.memory.device.destroy_descriptor_set_layout(self.own_empty, None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_constants_follow_the_glsl_layout() {
        let push = HookPush {
            view_projection: Mat4::from_cols_array(&std::array::from_fn(|i| i as f32)),
            object_id: [3, 4],
            draw_index: 5,
            first_instance: 6,
            rect: [7, 8, 9, 10, 11, 12, 13, 14],
            model: Mat4::from_cols_array(&std::array::from_fn(|i| 100.0 + i as f32)),
            pixel_shift: Vec2::new(-2.0, 3.5),
        };
        let bytes = push.to_bytes();
        let word = |i: usize| u32::from_ne_bytes(bytes[i * 4..i * 4 + 4].try_into().unwrap());
        assert_eq!(f32::from_bits(word(5)), 5.0, "column-major view-projection at 0");
        assert_eq!([word(16), word(17), word(18), word(19)], [3, 4, 5, 6]);
        assert_eq!((word(20), word(27)), (7, 14), "rectangle words at 80");
        assert_eq!(f32::from_bits(word(28)), 100.0, "model at 112");
        assert_eq!((f32::from_bits(word(44)), f32::from_bits(word(45))), (-2.0, 3.5), "pixel shift at 176");
        let deformed = push.to_bytes_with_storage(&std::array::from_fn::<u32, 16, _>(|i| 200 + i as u32));
        assert_eq!(deformed[..HOOK_PUSH_SIZE as usize], bytes[..]);
        let word = |i: usize| u32::from_ne_bytes(deformed[i * 4..i * 4 + 4].try_into().unwrap());
        assert_eq!((word(48), word(63)), (200, 215), "the deformation's words at 192, as hook_common.glsl declares them");
    }
}
