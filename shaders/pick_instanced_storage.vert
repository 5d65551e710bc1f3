#version 450
// Pick pass vertex shader for instanced draws whose per-instance transforms sit in the host's
// storage buffer (InstanceBinding::StorageBuffer), bound at set 1 and read as
// crates/picking-vk/glsl/instance_storage.glsl says (hooked pipelines of such draws share it).
#extension GL_GOOGLE_include_directive : require

layout(push_constant) uniform StoragePush {
    mat4 model_view_projection; // as pick_push.glsl
    uvec2 object_id;
    uint draw_index;
    uint first_instance;
    layout(offset = 112) uvec4 storage; // (base word, stride in words, rows, unused)
} pc;

#define PICK_STORAGE_SET 1
#include "instance_storage.glsl"

// The draw's point size (RasterState::point_size), for point lists; ignored otherwise.
layout(constant_id = 0) const float PICK_POINT_SIZE = 1.0;
layout(location = 0) in vec3 in_position;
layout(location = 0) flat out uint out_instance;
layout(location = 1) flat out uvec2 out_object_id;
layout(location = 2) flat out uint out_draw_index;

void main() {
    gl_Position = pc.model_view_projection * (pick_storage_instance(uint(gl_InstanceIndex)) * vec4(in_position, 1.0));
    gl_PointSize = PICK_POINT_SIZE;
    out_instance = uint(gl_InstanceIndex) - pc.first_instance;
    out_object_id = pc.object_id;
    out_draw_index = pc.draw_index;
}
