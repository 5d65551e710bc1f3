//! Run-time GLSL hooks: the host's own shader logic in the pick pass, so a pick sees what the
//! host shows. A fragment predicate drops fragments the host discards (the holes of an
//! alpha-tested leaf, fence or decal); a vertex world-adjust moves vertices where the host's
//! vertex shader puts them (wind, water, terrain morph).
//!
//! A [`HookProgram`] is compiled with shaderc on the first pick that needs it (the `hooks`
//! feature) and cached with its pipelines; draws without hooks use the precompiled SPIR-V and
//! never touch the compiler. A compile error is [`crate::PickError::HookCompile`], with line
//! numbers in the hook's own source. (The GLSL is put together in `pass/hook_glsl.rs` and
//! compiled in `pass/hook_compile.rs`.)
//!
//! What hooks see (GLSL, `#version 450`):
//!
//! ```glsl
//! struct PickVertex {     // vertex stage: vec3 pick_world(PickVertex v)
//!     vec3 local;         // the position as stored (dequantized by the model matrix),
//!                         // morphed and skinned first for a deformed draw
//!     vec3 world;         // model (x instance) times local
//!     mat3 basis;         // the linear part of model (x instance)
//!     uint instance;      // instance index within the draw, from 0
//!     vec4 attrib;        // the attribute stream's value (0, 0, 0, 1 without one)
//! };
//! struct PickFragment {   // fragment stage: bool pick_discard(PickFragment f)
//!     vec3 world;         // the (adjusted) world position, interpolated
//!     vec2 pixel;         // the pixel centre in the host's framebuffer
//!     uvec2 id;           // the object ID as (low, high) words
//!     uint instance;
//!     vec4 attrib;        // interpolated or flat, as the program declares
//! };
//! ```
//!
//! The host's descriptor set is bound at `set = 1` ([`HOOK_SET`]); `set = 0` is the picker's,
//! and so is `set = 2` for a deformed draw (its buffers) or one that reads its instance
//! transforms from storage. Hooks on those need `maxPushConstantsSize` >= 256 (their words
//! follow the hooked push block).
//!
//! A program that reads the host's set is made with the `unsafe`
//! [`HookProgram::with_host_set`], which takes the set layout and the bindings it was created
//! from. Each compiled stage is then checked against them (SPIR-V reflection): every resource
//! the hook declares lies at set 1 in a binding of the right descriptor type and count, whose
//! stages include each stage that uses it; no resource lies at the picker's sets; storage
//! buffers and images are `readonly` (a pick draws each object many times, in passes the host
//! does not see: a hook reads, never writes); and the hook adds no vertex input or stage
//! output. A program that breaks a rule fails to compile with [`crate::PickError::HookCompile`].

use super::BufferRange;
use ash::vk;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The descriptor set index of the host's set in hook GLSL (`layout(set = 1, binding = N)`).
pub const HOOK_SET: u32 = 1;

/// How the attribute stream's elements are stored; the hook reads them as a `vec4` (missing
/// components are 0, and alpha 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AttributeFormat {
    /// Two `f32` (a UV).
    Float32x2,
    /// Three `f32`.
    Float32x3,
    /// Four `f32`.
    Float32x4,
    /// Two half floats.
    Float16x2,
    /// Two unsigned normalized 16-bit values (a quantized UV).
    Unorm16x2,
    /// Four unsigned normalized bytes (a colour).
    Unorm8x4,
}

impl AttributeFormat {
    pub(crate) fn vk(self) -> vk::Format {
        match self {
            AttributeFormat::Float32x2 => vk::Format::R32G32_SFLOAT,
            AttributeFormat::Float32x3 => vk::Format::R32G32B32_SFLOAT,
            AttributeFormat::Float32x4 => vk::Format::R32G32B32A32_SFLOAT,
            AttributeFormat::Float16x2 => vk::Format::R16G16_SFLOAT,
            AttributeFormat::Unorm16x2 => vk::Format::R16G16_UNORM,
            AttributeFormat::Unorm8x4 => vk::Format::R8G8B8A8_UNORM,
        }
    }

    /// Bytes of one element.
    pub fn bytes(self) -> u32 {
        match self {
            AttributeFormat::Float32x2 => 8,
            AttributeFormat::Float32x3 => 12,
            AttributeFormat::Float32x4 => 16,
            AttributeFormat::Float16x2 | AttributeFormat::Unorm16x2 | AttributeFormat::Unorm8x4 => 4,
        }
    }

    /// Bytes of one component (the alignment vertex input needs).
    pub(crate) fn component_bytes(self) -> u32 {
        match self {
            AttributeFormat::Float32x2 | AttributeFormat::Float32x3 | AttributeFormat::Float32x4 => 4,
            AttributeFormat::Float16x2 | AttributeFormat::Unorm16x2 => 2,
            AttributeFormat::Unorm8x4 => 1,
        }
    }
}

/// How the attribute reaches the fragment stage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Interpolation {
    /// Perspective-correct interpolation (UVs).
    #[default]
    Smooth,
    /// The provoking vertex's value (per-face data, material indices).
    Flat,
}

/// The attribute a hook program reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HookAttribute {
    /// How each element is stored.
    pub format: AttributeFormat,
    /// How the fragment stage sees it.
    pub interpolation: Interpolation,
}

/// The GLSL of a hook program.
#[derive(Clone, Debug, Default)]
pub struct HookSource {
    /// A name for messages (a material's, for example).
    pub name: String,
    /// Declarations both stages see: the host set's bindings, constants, helpers.
    pub shared: String,
    /// Fragment-stage GLSL that defines `bool pick_discard(PickFragment f)`: `true` drops the
    /// fragment, which then neither hits nor occludes.
    pub discard: Option<String>,
    /// Vertex-stage GLSL that defines `vec3 pick_world(PickVertex v)`: the world position
    /// used for projection and for the world point.
    pub world: Option<String>,
    /// The per-vertex attribute the hooks read, if any.
    pub attribute: Option<HookAttribute>,
}

/// One binding of the host's set layout, as the layout was created with it: what the picker
/// checks a hook's declarations against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HookBinding {
    /// The binding number (`layout(set = 1, binding = N)`).
    pub binding: u32,
    /// Its descriptor type.
    pub descriptor_type: vk::DescriptorType,
    /// Its descriptor count (the largest array the hook may declare there).
    pub count: u32,
    /// The stages it is visible to.
    pub stages: vk::ShaderStageFlags,
}

/// The host's set of a hook program: its layout and the bindings it was created from.
#[derive(Clone, Debug)]
pub(crate) struct HostSet {
    pub layout: vk::DescriptorSetLayout,
    pub bindings: Vec<HookBinding>,
}

/// A compiled-on-first-use hook program, shared by the draws that use it. Its identity keys
/// the picker's shader and pipeline caches: make one per distinct source, not per draw.
#[derive(Debug)]
pub struct HookProgram {
    id: u64,
    source: HookSource,
    host_set: Option<HostSet>,
}

impl HookProgram {
    /// Wraps `source`, which reads no descriptor set of the host's; nothing is compiled until
    /// a pick needs it.
    pub fn new(source: HookSource) -> Arc<HookProgram> {
        Arc::new(HookProgram { id: next_id(), source, host_set: None })
    }

    /// Wraps `source`, whose hooks read the host's descriptor set at [`HOOK_SET`], laid out by
    /// `layout`. Each draw using the program gives a set of that layout
    /// ([`DrawHooks::descriptor_set`]). The compiled stages are checked against `bindings`
    /// (see the module docs); what the picker cannot see is the contract below.
    ///
    /// # Safety
    ///
    /// - `layout` is a valid descriptor set layout of the device of every picker the program
    ///   is used with, created from exactly `bindings` (same numbers, descriptor types,
    ///   counts and stages; immutable samplers allowed) and no flags, and it stays alive
    ///   while any picker holds the program (pipelines are built from it lazily, on the first
    ///   pick or [`Picker::warm_up`](crate::Picker::warm_up) that needs them).
    /// - The layout is compatible with the pick pass: no
    ///   `VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT` and no binding flags the
    ///   device was not created to support.
    pub unsafe fn with_host_set(source: HookSource, layout: vk::DescriptorSetLayout, bindings: &[HookBinding]) -> Arc<HookProgram> {
        let host_set = (layout != vk::DescriptorSetLayout::null()).then(|| HostSet { layout, bindings: bindings.to_vec() });
        Arc::new(HookProgram { id: next_id(), source, host_set })
    }

    /// The program's source.
    pub fn source(&self) -> &HookSource {
        &self.source
    }

    /// The host set's layout, null when the program reads none.
    pub fn host_set_layout(&self) -> vk::DescriptorSetLayout {
        self.host_set.as_ref().map_or(vk::DescriptorSetLayout::null(), |s| s.layout)
    }

    pub(crate) fn host_set(&self) -> Option<&HostSet> {
        self.host_set.as_ref()
    }

    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Whether it moves vertices (then culling and detail treat its draws as displaced).
    pub fn adjusts_world(&self) -> bool {
        self.source.world.is_some()
    }
}

fn next_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A per-vertex attribute stream in the host's buffer (`VERTEX_BUFFER` usage): the range
/// starts at the first vertex's element, so an interleaved layout gives its offset there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttributeStream {
    /// Starts at the first vertex's element.
    pub range: BufferRange,
    /// Bytes from one vertex to the next.
    pub stride: u32,
    /// How many vertices the range holds.
    pub vertex_count: u32,
}

/// The hooks of one draw: the program, and what it reads for this draw.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct DrawHooks {
    /// The program.
    pub program: Arc<HookProgram>,
    /// The attribute stream, when the program declares an attribute.
    pub attribute: Option<AttributeStream>,
    /// The host's descriptor set at [`HOOK_SET`], when the program reads one
    /// ([`HookProgram::with_host_set`]). [`Picker::record`](crate::Picker::record)'s contract
    /// covers it: allocated from the program's layout, every binding the hooks use written,
    /// and neither freed nor updated until the frames that use it complete.
    pub descriptor_set: vk::DescriptorSet,
    /// With a world-adjust hook: `true` when the draw's `bounds` already contain every
    /// adjusted position, so culling may use them. Otherwise adjusted draws are never culled.
    pub bounds_cover_adjustment: bool,
}

impl DrawHooks {
    /// `program` with no attribute stream or descriptor set.
    pub fn new(program: Arc<HookProgram>) -> Self {
        DrawHooks { program, attribute: None, descriptor_set: vk::DescriptorSet::null(), bounds_cover_adjustment: false }
    }

    /// Sets [`DrawHooks::attribute`].
    pub fn with_attribute(mut self, stream: AttributeStream) -> Self {
        self.attribute = Some(stream);
        self
    }

    /// Sets [`DrawHooks::descriptor_set`].
    pub fn with_descriptor_set(mut self, set: vk::DescriptorSet) -> Self {
        self.descriptor_set = set;
        self
    }

    /// Checks the hooks against their program: the attribute stream and the descriptor set
    /// are given exactly when the program reads them, and the stream covers the draw's
    /// `vertex_count` positions within the device's largest binding stride.
    pub(crate) fn validate(&self, vertex_count: u32, max_stride: u32) -> Result<(), String> {
        let source = self.program.source();
        let name = &source.name;
        if source.discard.is_none() && source.world.is_none() {
            return Err(format!("hook program {name:?} has neither a discard nor a world hook"));
        }
        match (source.attribute, self.attribute) {
            (Some(a), Some(s)) => {
                let (size, component) = (a.format.bytes(), a.format.component_bytes());
                if s.range.buffer == vk::Buffer::null() {
                    return Err("the hook attribute stream's buffer is null".into());
                }
                s.range.check_size("hook attribute stream")?;
                if s.stride < size || s.stride > max_stride {
                    return Err(format!("hook attribute stride {} lies outside {size}..={max_stride} bytes", s.stride));
                }
                if !s.range.offset.is_multiple_of(u64::from(component)) || !s.stride.is_multiple_of(component) {
                    return Err(format!("hook attribute offset {} and stride {} must be multiples of {component} bytes", s.range.offset, s.stride));
                }
                if s.vertex_count < vertex_count {
                    return Err(format!("hook attribute stream holds {} vertices, the positions {vertex_count}", s.vertex_count));
                }
                let needed = u64::from(s.vertex_count).saturating_sub(1) * u64::from(s.stride) + u64::from(size);
                if s.vertex_count > 0 && needed > s.range.size {
                    return Err(format!("hook attribute stream needs {needed} bytes, its range holds {}", s.range.size));
                }
            }
            (Some(_), None) => return Err(format!("hook program {name:?} reads an attribute, and the draw gives no stream")),
            (None, Some(_)) => return Err(format!("the draw gives an attribute stream, and hook program {name:?} declares none")),
            (None, None) => {}
        }
        match (self.program.host_set.is_some(), self.descriptor_set != vk::DescriptorSet::null()) {
            (true, false) => Err(format!("hook program {name:?} reads a host set, and the draw gives no descriptor set")),
            (false, true) => Err(format!("the draw gives a descriptor set, and hook program {name:?} reads no host set")),
            _ => Ok(()),
        }
    }

    /// Whether culling may skip the draw: hooks that only discard leave its bounds as they are.
    pub(crate) fn keeps_bounds(&self) -> bool {
        !self.program.adjusts_world() || self.bounds_cover_adjustment
    }
}

/// What distinguishes hooked pipelines: the program and the attribute stream's stride.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct HookKey {
    pub program: u64,
    pub attribute_stride: u32,
}

impl HookKey {
    pub fn of(hooks: &DrawHooks) -> Self {
        HookKey { program: hooks.program.id(), attribute_stride: hooks.attribute.map_or(0, |a| a.stride) }
    }
}
