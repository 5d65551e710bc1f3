//! A pick pipeline's vertex input: which of the draw's streams are bound where, as its
//! [`PipelineKey`] says.

use crate::draw::DrawHooks;
use crate::pass::pipeline_key::{PipelineKey, ROW_BYTES};
use ash::vk;

/// The vertex bindings and attributes of a pipeline of `key`: positions at binding 0, then
/// instance matrices or batch rows (1), the hooks' attribute stream (2), skin influences (3..).
/// `primitive_base`: batch rows' last word too (`shaders/pick_batched_detail.vert`).
pub(crate) fn vertex_input(
    key: &PipelineKey,
    hooks: Option<&DrawHooks>,
    primitive_base: bool,
) -> (Vec<vk::VertexInputBindingDescription>, Vec<vk::VertexInputAttributeDescription>) {
    let mut bindings = vec![vk::VertexInputBindingDescription { binding: 0, stride: key.position_stride, input_rate: vk::VertexInputRate::VERTEX }];
    let mut attributes = vec![vk::VertexInputAttributeDescription { location: 0, binding: 0, format: key.position_format.vk(), offset: 0 }];
    // Instance matrices or batch rows: a mat4 in locations 1-4 either way.
    let per_instance = match (key.instance_stride, key.batched) {
        // A storage buffer's transforms are read by index, not as attributes.
        (Some(_), _) if key.instance_storage => None,
        (Some(stride), _) => Some(stride),
        (None, true) => Some(ROW_BYTES),
        (None, false) => None,
    };
    if let Some(stride) = per_instance {
        bindings.push(vk::VertexInputBindingDescription { binding: 1, stride, input_rate: vk::VertexInputRate::INSTANCE });
        // A mat4 as four vec4 columns, or a 3x4 as three vec4 rows.
        let vectors = if key.instance_rows && key.instance_stride.is_some() { 3 } else { 4 };
        for column in 0..vectors {
            attributes.push(vk::VertexInputAttributeDescription {
                location: 1 + column,
                binding: 1,
                format: vk::Format::R32G32B32A32_SFLOAT,
                offset: 16 * column,
            });
        }
    }
    // The hooks' attribute stream: binding 2, location 8.
    if let (Some(h), Some(attribute)) = (key.hook, hooks.and_then(|h| h.program.source().attribute)) {
        bindings.push(vk::VertexInputBindingDescription { binding: 2, stride: h.attribute_stride, input_rate: vk::VertexInputRate::VERTEX });
        attributes.push(vk::VertexInputAttributeDescription { location: 8, binding: 2, format: attribute.format.vk(), offset: 0 });
    }
    // Skin influences read as attributes: joints and weights of each set at bindings 3..,
    // locations 9..; an interleaved set reads both from the joints' binding (the weights'
    // is bound, unused).
    for (k, (joints, joint_stride, weights, weight_stride, shared)) in key.deform.iter().filter(|d| !d.from_storage).flat_map(|d| d.sets).flatten().enumerate()
    {
        let (binding, location) = (3 + 2 * k as u32, 9 + 2 * k as u32);
        bindings.push(vk::VertexInputBindingDescription { binding, stride: joint_stride, input_rate: vk::VertexInputRate::VERTEX });
        attributes.push(vk::VertexInputAttributeDescription { location, binding, format: joints.vk(), offset: 0 });
        let (weight_binding, offset) = match shared {
            Some(delta) => (binding, delta),
            None => {
                bindings.push(vk::VertexInputBindingDescription { binding: binding + 1, stride: weight_stride, input_rate: vk::VertexInputRate::VERTEX });
                (binding + 1, 0)
            }
        };
        attributes.push(vk::VertexInputAttributeDescription { location: location + 1, binding: weight_binding, format: weights.vk(), offset });
    }
    if key.batched && key.instance_stride.is_none() {
        attributes.push(vk::VertexInputAttributeDescription { location: 5, binding: 1, format: vk::Format::R32G32_UINT, offset: 64 });
        attributes.push(vk::VertexInputAttributeDescription { location: 6, binding: 1, format: vk::Format::R32_UINT, offset: 72 });
        if primitive_base {
            attributes.push(vk::VertexInputAttributeDescription { location: 7, binding: 1, format: vk::Format::R32_UINT, offset: 76 });
        }
    }
    (bindings, attributes)
}
