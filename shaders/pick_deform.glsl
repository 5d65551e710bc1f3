// Body of the deformed pick vertex shaders (pick_skinned.vert: four influences,
// pick_skinned8.vert: eight, pick_morphed.vert: none), which define SKIN_SETS first, and
// SKIN_FROM_STORAGE where joints and weights are read as storage words rather than vertex
// attributes (pick_skinned_storage.vert, pick_skinned8_storage.vert). The deformation itself
// is crates/picking-vk/glsl/deform.glsl, which hooked pipelines of deformed draws share; the
// host's buffers are bound at set 1, and the push block follows pick_push.glsl and the
// rectangle words.

layout(push_constant) uniform DeformPush {
    mat4 model_view_projection; // as pick_push.glsl
    uvec2 object_id;
    uint draw_index;
    uint first_instance;
    // (joint base word, delta base word, weight base word, target count)
    layout(offset = 112) uvec4 bases;
    // (joint count, vertices per morph target, unused, unused)
    uvec4 counts;
    // Influence streams read from storage: the first word of the joints and weights of set
    // 0, then of set 1; their strides in words.
    uvec4 stream_first;
    uvec4 stream_stride;
} pc;

// The draw's point size (RasterState::point_size), for point lists; ignored otherwise.
layout(constant_id = 0) const float PICK_POINT_SIZE = 1.0;
layout(location = 0) in vec3 in_position;
layout(location = 0) flat out uint out_instance;
layout(location = 1) flat out uvec2 out_object_id;
layout(location = 2) flat out uint out_draw_index;

#define PICK_STORAGE_SET 1
#include "deform.glsl"

void main() {
    vec3 p = pick_deformed(in_position, uint(gl_VertexIndex));
    gl_Position = pc.model_view_projection * vec4(p, 1.0);
    gl_PointSize = PICK_POINT_SIZE;
    out_instance = uint(gl_InstanceIndex) - pc.first_instance;
    out_object_id = pc.object_id;
    out_draw_index = pc.draw_index;
}
