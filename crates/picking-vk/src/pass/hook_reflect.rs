//! What a compiled hook stage declares, read from its SPIR-V, and the check of it against the
//! host's set and the picker's own template: the rules of `draw/hooks.rs`'s module docs. The
//! template's own declarations are told from the host's by compiling the same stage with
//! neutral hooks (the baseline): whatever the host's stage declares beyond that is the host's.

use crate::draw::hooks::{HookBinding, HOOK_SET};
use ash::vk;

/// The kind of resource a variable is, as the descriptor types that can back it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ResourceKind {
    UniformBuffer,
    StorageBuffer,
    CombinedImageSampler,
    SampledImage,
    StorageImage,
    UniformTexelBuffer,
    StorageTexelBuffer,
    Sampler,
    InputAttachment,
    /// Anything else (acceleration structures, ...): never allowed in a hook.
    Other,
}

impl ResourceKind {
    fn accepts(self, t: vk::DescriptorType) -> bool {
        use vk::DescriptorType as D;
        match self {
            ResourceKind::UniformBuffer => t == D::UNIFORM_BUFFER,
            ResourceKind::StorageBuffer => t == D::STORAGE_BUFFER,
            ResourceKind::CombinedImageSampler => t == D::COMBINED_IMAGE_SAMPLER,
            // A combined image sampler can be read as its image or its sampler alone.
            ResourceKind::SampledImage => t == D::SAMPLED_IMAGE || t == D::COMBINED_IMAGE_SAMPLER,
            ResourceKind::Sampler => t == D::SAMPLER || t == D::COMBINED_IMAGE_SAMPLER,
            ResourceKind::StorageImage => t == D::STORAGE_IMAGE,
            ResourceKind::UniformTexelBuffer => t == D::UNIFORM_TEXEL_BUFFER,
            ResourceKind::StorageTexelBuffer => t == D::STORAGE_TEXEL_BUFFER,
            ResourceKind::InputAttachment | ResourceKind::Other => false,
        }
    }

    fn is_storage(self) -> bool {
        matches!(self, ResourceKind::StorageBuffer | ResourceKind::StorageImage | ResourceKind::StorageTexelBuffer)
    }
}

/// One descriptor-backed variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Resource {
    pub set: u32,
    pub binding: u32,
    pub kind: ResourceKind,
    /// Descriptors it declares (an array's length); `None` for an unsized array.
    pub count: Option<u32>,
    /// Whether the stage may write it (a storage resource not declared `readonly`).
    pub writable: bool,
    /// Whether the stage's code reads or writes it (a declaration alone binds nothing).
    pub used: bool,
}

/// What one stage declares: its resources, and its user-located inputs and outputs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Interface {
    pub resources: Vec<Resource>,
    /// (`true` for an input, location) of every located input and output variable.
    pub locations: Vec<(bool, u32)>,
    /// The module's `OpCapability` operands.
    pub capabilities: Vec<u32>,
    /// The module's `OpExtension` names.
    pub extensions: Vec<String>,
}

/// SPIR-V capabilities Vulkan 1.0 offers without a device feature (Matrix, Shader,
/// InputAttachment, Sampled1D, Image1D, SampledBuffer, ImageBuffer, ImageQuery,
/// DerivativeControl): the only ones a hook may add to its stage.
const FEATURELESS_CAPABILITIES: [u32; 9] = [0, 1, 40, 43, 44, 46, 47, 50, 51];

/// How a message names capability `c`: its SPIR-V name where hooks are likely to reach it.
fn capability_name(c: u32) -> String {
    let name = match c {
        10 => "Float64 (double)",
        11 => "Int64 (64-bit integers)",
        22 => "Int16",
        39 => "Int8",
        35 => "SampleRateShading (gl_SampleID, gl_SamplePosition)",
        5301 => "ShaderNonUniform",
        5302 => "RuntimeDescriptorArray",
        5347 => "PhysicalStorageBufferAddresses (buffer references)",
        _ => return format!("{c}"),
    };
    format!("{c}, {name}")
}

// The SPIR-V opcodes, decorations and storage classes read here.
const OP_EXTENSION: u16 = 10;
const OP_CAPABILITY: u16 = 17;
const OP_TYPE_IMAGE: u16 = 25;
const OP_TYPE_SAMPLER: u16 = 26;
const OP_TYPE_SAMPLED_IMAGE: u16 = 27;
const OP_TYPE_ARRAY: u16 = 28;
const OP_TYPE_RUNTIME_ARRAY: u16 = 29;
const OP_TYPE_STRUCT: u16 = 30;
const OP_TYPE_POINTER: u16 = 32;
const OP_CONSTANT: u16 = 43;
const OP_SPEC_CONSTANT: u16 = 50;
const OP_FUNCTION: u16 = 54;
const OP_FUNCTION_CALL: u16 = 57;
const OP_VARIABLE: u16 = 59;
const OP_IMAGE_TEXEL_POINTER: u16 = 60;
const OP_LOAD: u16 = 61;
const OP_STORE: u16 = 62;
const OP_COPY_MEMORY: u16 = 63;
const OP_ACCESS_CHAIN: u16 = 65;
const OP_IN_BOUNDS_ACCESS_CHAIN: u16 = 66;
const OP_PTR_ACCESS_CHAIN: u16 = 67;
const OP_ARRAY_LENGTH: u16 = 68;
const OP_DECORATE: u16 = 71;
const OP_MEMBER_DECORATE: u16 = 72;
const OP_COPY_OBJECT: u16 = 83;
const OP_ATOMIC_LOAD: u16 = 227;
const OP_ATOMIC_STORE: u16 = 228;
const OP_ATOMIC_LAST: u16 = 242;

const DECORATION_BUFFER_BLOCK: u32 = 3;
const DECORATION_BUILT_IN: u32 = 11;
const DECORATION_NON_WRITABLE: u32 = 24;
const DECORATION_LOCATION: u32 = 30;
const DECORATION_BINDING: u32 = 33;
const DECORATION_DESCRIPTOR_SET: u32 = 34;

const CLASS_UNIFORM_CONSTANT: u32 = 0;
const CLASS_INPUT: u32 = 1;
const CLASS_UNIFORM: u32 = 2;
const CLASS_OUTPUT: u32 = 3;
const CLASS_STORAGE_BUFFER: u32 = 12;

const IMAGE_DIM_BUFFER: u32 = 5;
const IMAGE_DIM_SUBPASS: u32 = 6;

/// The facts about ids that reflection needs, gathered in one walk.
#[derive(Default)]
struct Ids {
    set: Vec<(u32, u32)>,
    binding: Vec<(u32, u32)>,
    location: Vec<(u32, u32)>,
    built_in: Vec<u32>,
    buffer_block: Vec<u32>,
    non_writable: Vec<u32>,
    /// (struct id, member) decorated NonWritable.
    non_writable_members: Vec<(u32, u32)>,
    /// Type instructions by result id: (opcode, operands after the result id).
    types: Vec<(u32, u16, Vec<u32>)>,
    constants: Vec<(u32, u32)>,
    /// (pointer type, result id, storage class).
    variables: Vec<(u32, u32, u32)>,
    /// Ids a function body reads or writes through (pointer operands, call arguments).
    used: Vec<u32>,
    capabilities: Vec<u32>,
    extensions: Vec<String>,
}

fn lookup(pairs: &[(u32, u32)], id: u32) -> Option<u32> {
    pairs.iter().find(|(k, _)| *k == id).map(|(_, v)| *v)
}

/// Reads `words` (one SPIR-V module).
pub(crate) fn reflect(words: &[u32]) -> Result<Interface, String> {
    let mut ids = gather(words)?;
    let mut out = Interface { capabilities: std::mem::take(&mut ids.capabilities), extensions: std::mem::take(&mut ids.extensions), ..Default::default() };
    for &(pointer, id, class) in &ids.variables {
        match class {
            CLASS_INPUT | CLASS_OUTPUT => {
                if let Some(location) = lookup(&ids.location, id) {
                    out.locations.push((class == CLASS_INPUT, location));
                } else if !ids.built_in.contains(&id) && !is_built_in_block(&ids, pointee(&ids, pointer)) {
                    return Err("a stage input or output without a location".into());
                }
            }
            CLASS_UNIFORM_CONSTANT | CLASS_UNIFORM | CLASS_STORAGE_BUFFER => {
                let (Some(set), Some(binding)) = (lookup(&ids.set, id), lookup(&ids.binding, id)) else {
                    return Err("a resource without a descriptor set and binding".into());
                };
                let (kind, count, block) = resource_type(&ids, class, pointee(&ids, pointer));
                let writable = kind.is_storage() && !ids.non_writable.contains(&id) && !block.is_some_and(|b| all_members_non_writable(&ids, b));
                out.resources.push(Resource { set, binding, kind, count, writable, used: ids.used.contains(&id) });
            }
            _ => {}
        }
    }
    Ok(out)
}

fn gather(words: &[u32]) -> Result<Ids, String> {
    if words.len() < 5 || words[0] != 0x0723_0203 {
        return Err("not a SPIR-V module".into());
    }
    let mut ids = Ids::default();
    let mut in_function = false;
    let mut at = 5;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        let op = (words[at] & 0xffff) as u16;
        if count == 0 || at + count > words.len() {
            return Err("a truncated SPIR-V instruction".into());
        }
        let w = &words[at + 1..at + count];
        let arg = |i: usize| w.get(i).copied().unwrap_or(u32::MAX);
        match op {
            OP_CAPABILITY => ids.capabilities.push(arg(0)),
            OP_EXTENSION => {
                let bytes: Vec<u8> = w.iter().flat_map(|word| word.to_le_bytes()).take_while(|b| *b != 0).collect();
                ids.extensions.push(String::from_utf8_lossy(&bytes).into_owned());
            }
            OP_DECORATE => match arg(1) {
                DECORATION_DESCRIPTOR_SET => ids.set.push((arg(0), arg(2))),
                DECORATION_BINDING => ids.binding.push((arg(0), arg(2))),
                DECORATION_LOCATION => ids.location.push((arg(0), arg(2))),
                DECORATION_BUILT_IN => ids.built_in.push(arg(0)),
                DECORATION_BUFFER_BLOCK => ids.buffer_block.push(arg(0)),
                DECORATION_NON_WRITABLE => ids.non_writable.push(arg(0)),
                _ => {}
            },
            OP_MEMBER_DECORATE => match arg(2) {
                DECORATION_NON_WRITABLE => ids.non_writable_members.push((arg(0), arg(1))),
                DECORATION_BUILT_IN => ids.built_in.push(arg(0)),
                _ => {}
            },
            OP_TYPE_IMAGE | OP_TYPE_SAMPLER | OP_TYPE_SAMPLED_IMAGE | OP_TYPE_ARRAY | OP_TYPE_RUNTIME_ARRAY | OP_TYPE_STRUCT | OP_TYPE_POINTER => {
                ids.types.push((arg(0), op, w.get(1..).unwrap_or(&[]).to_vec()));
            }
            OP_CONSTANT | OP_SPEC_CONSTANT => ids.constants.push((arg(1), arg(2))),
            OP_VARIABLE if !in_function => ids.variables.push((arg(0), arg(1), arg(2))),
            OP_FUNCTION => in_function = true,
            OP_LOAD | OP_ACCESS_CHAIN | OP_IN_BOUNDS_ACCESS_CHAIN | OP_PTR_ACCESS_CHAIN | OP_ARRAY_LENGTH | OP_IMAGE_TEXEL_POINTER | OP_COPY_OBJECT => {
                ids.used.push(arg(2))
            }
            OP_STORE | OP_ATOMIC_STORE => ids.used.push(arg(0)),
            OP_COPY_MEMORY => ids.used.extend([arg(0), arg(1)]),
            OP_FUNCTION_CALL => ids.used.extend(w.iter().skip(3).copied()),
            op if (OP_ATOMIC_LOAD..=OP_ATOMIC_LAST).contains(&op) => ids.used.push(arg(2)),
            _ => {}
        }
        at += count;
    }
    Ok(ids)
}

fn type_of(ids: &Ids, id: u32) -> Option<(u16, &[u32])> {
    ids.types.iter().find(|(k, _, _)| *k == id).map(|(_, op, operands)| (*op, &operands[..]))
}

/// The type a pointer type points at.
fn pointee(ids: &Ids, pointer: u32) -> u32 {
    match type_of(ids, pointer) {
        Some((OP_TYPE_POINTER, [_, ty, ..])) => *ty,
        _ => u32::MAX,
    }
}

fn is_built_in_block(ids: &Ids, ty: u32) -> bool {
    match type_of(ids, ty) {
        Some((OP_TYPE_STRUCT, _)) => ids.built_in.contains(&ty),
        Some((OP_TYPE_ARRAY | OP_TYPE_RUNTIME_ARRAY, [element, ..])) => is_built_in_block(ids, *element),
        _ => false,
    }
}

fn all_members_non_writable(ids: &Ids, block: u32) -> bool {
    let members = match type_of(ids, block) {
        Some((OP_TYPE_STRUCT, members)) => members.len() as u32,
        _ => return false,
    };
    (0..members).all(|m| ids.non_writable_members.contains(&(block, m)))
}

/// The kind, descriptor count and (for a buffer) block struct of a resource variable of type
/// `ty` in storage class `class`.
fn resource_type(ids: &Ids, class: u32, ty: u32) -> (ResourceKind, Option<u32>, Option<u32>) {
    let (element, count) = match type_of(ids, ty) {
        Some((OP_TYPE_ARRAY, [element, length, ..])) => (*element, lookup(&ids.constants, *length)),
        Some((OP_TYPE_RUNTIME_ARRAY, [element, ..])) => (*element, None),
        _ => (ty, Some(1)),
    };
    let kind = match type_of(ids, element) {
        Some((OP_TYPE_STRUCT, _)) if class == CLASS_STORAGE_BUFFER || ids.buffer_block.contains(&element) => ResourceKind::StorageBuffer,
        Some((OP_TYPE_STRUCT, _)) if class == CLASS_UNIFORM => ResourceKind::UniformBuffer,
        Some((OP_TYPE_SAMPLED_IMAGE, _)) => ResourceKind::CombinedImageSampler,
        Some((OP_TYPE_SAMPLER, _)) => ResourceKind::Sampler,
        Some((OP_TYPE_IMAGE, [_, dim, _, _, _, sampled, ..])) => match (*dim, *sampled) {
            (IMAGE_DIM_SUBPASS, _) => ResourceKind::InputAttachment,
            (IMAGE_DIM_BUFFER, 2) => ResourceKind::StorageTexelBuffer,
            (IMAGE_DIM_BUFFER, _) => ResourceKind::UniformTexelBuffer,
            (_, 2) => ResourceKind::StorageImage,
            _ => ResourceKind::SampledImage,
        },
        _ => ResourceKind::Other,
    };
    let block = matches!(kind, ResourceKind::StorageBuffer | ResourceKind::UniformBuffer).then_some(element);
    (kind, count, block)
}

fn is_dynamic(t: vk::DescriptorType) -> bool {
    t == vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC || t == vk::DescriptorType::STORAGE_BUFFER_DYNAMIC
}

/// Checks `stage` (a hook stage of `stage_flag`) against `baseline` (the same stage with neutral
/// hooks) and the host's `bindings` (`None`: the program reads no host set).
pub(crate) fn check(stage: &Interface, baseline: &Interface, bindings: Option<&[HookBinding]>, stage_flag: vk::ShaderStageFlags) -> Result<(), String> {
    // What takes a device feature or extension the picker did not check would break Vulkan's
    // rules for the shader module (VUID-VkShaderModuleCreateInfo-pCode-08740/08742).
    let featureless = |c: &u32| baseline.capabilities.contains(c) || FEATURELESS_CAPABILITIES.contains(c);
    if let Some(&c) = stage.capabilities.iter().find(|c| !featureless(c)) {
        return Err(format!(
            "the hook needs SPIR-V capability {}, which takes a device feature the picker does not check: hooks may add only what Vulkan 1.0 offers without one",
            capability_name(c)
        ));
    }
    if let Some(e) = stage.extensions.iter().find(|e| !baseline.extensions.contains(e)) {
        return Err(format!("the hook needs SPIR-V extension {e}, which takes a device extension the picker does not check"));
    }
    // The picker binds the host's set with no dynamic offsets, which a layout with a dynamic
    // binding would need (VUID-vkCmdBindDescriptorSets-dynamicOffsetCount-00359).
    if let Some(b) = bindings.and_then(|b| b.iter().find(|b| is_dynamic(b.descriptor_type))) {
        return Err(format!(
            "the host set's binding {} is {:?}: the picker binds the set with no dynamic offsets, so its bindings may not be dynamic",
            b.binding, b.descriptor_type
        ));
    }
    let mut own = baseline.resources.clone();
    for r in &stage.resources {
        let at = format!("set = {}, binding = {}", r.set, r.binding);
        if r.set != HOOK_SET {
            // The template's own: the same declaration, once.
            let same = own.iter().position(|o| Resource { used: r.used, ..o.clone() } == *r);
            match same {
                Some(i) => {
                    own.swap_remove(i);
                    continue;
                }
                None => return Err(format!("the hook declares a resource at {at}: sets 0 and 2 are the picker's, the host's set is {HOOK_SET}")),
            }
        }
        if r.writable {
            return Err(format!("the storage resource at {at} must be declared readonly: hooks read, never write"));
        }
        let Some(bindings) = bindings else {
            return Err(format!("the hook declares a resource at {at}, and the program reads no host set (HookProgram::with_host_set)"));
        };
        let matching: Vec<&HookBinding> = bindings.iter().filter(|b| b.binding == r.binding).collect();
        let b = match matching[..] {
            [b] => b,
            [] => return Err(format!("the host set has no binding {} for the resource at {at}", r.binding)),
            _ => return Err(format!("the host set's bindings name binding {} more than once", r.binding)),
        };
        if !r.kind.accepts(b.descriptor_type) {
            return Err(format!("the resource at {at} is a {:?}, and the host set's binding is {:?}", r.kind, b.descriptor_type));
        }
        match r.count {
            None => return Err(format!("the resource at {at} is an unsized array: hooks index only sized arrays")),
            Some(n) if n > b.count => return Err(format!("the resource at {at} declares {n} descriptors, the host set's binding holds {}", b.count)),
            Some(_) => {}
        }
        if r.used && !b.stages.contains(stage_flag) {
            return Err(format!("the {stage_flag:?} stage uses the resource at {at}, and the host set's binding is visible to {:?} only", b.stages));
        }
    }
    let mut own = baseline.locations.clone();
    for l in &stage.locations {
        if let Some(i) = own.iter().position(|o| o == l) {
            own.swap_remove(i);
        } else {
            let what = if l.0 { "input" } else { "output" };
            return Err(format!("the hook declares a stage {what} at location {}: hooks add no inputs or outputs", l.1));
        }
    }
    Ok(())
}
