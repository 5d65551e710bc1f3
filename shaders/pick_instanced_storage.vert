#version 450
// Pick pass vertex shader for instanced draws whose per-instance transforms sit in the host's
// storage buffer (InstanceBinding::StorageBuffer): instance gl_InstanceIndex reads the
// element at word `base + gl_InstanceIndex * stride` of the buffer the picker binds at set 1
// (the whole buffer: offsets need no descriptor alignment), a column-major mat4 or, with
// `rows` set, a row-major 3x4.

layout(push_constant) uniform StoragePush {
    mat4 model_view_projection; // as pick_push.glsl
    uvec2 object_id;
    uint draw_index;
    uint first_instance;
    layout(offset = 112) uvec4 storage; // (base word, stride in words, rows, unused)
} pc;

layout(std430, set = 1, binding = 0) readonly buffer InstanceWords {
    float words[];
} instances;

// The draw's point size (RasterState::point_size), for point lists; ignored otherwise.
layout(constant_id = 0) const float PICK_POINT_SIZE = 1.0;
layout(location = 0) in vec3 in_position;
layout(location = 0) flat out uint out_instance;
layout(location = 1) flat out uvec2 out_object_id;
layout(location = 2) flat out uint out_draw_index;

void main() {
    uint at = pc.storage.x + uint(gl_InstanceIndex) * pc.storage.y;
    mat4 instance;
    if (pc.storage.z != 0u) {
        vec4 r0 = vec4(instances.words[at], instances.words[at + 1u], instances.words[at + 2u], instances.words[at + 3u]);
        vec4 r1 = vec4(instances.words[at + 4u], instances.words[at + 5u], instances.words[at + 6u], instances.words[at + 7u]);
        vec4 r2 = vec4(instances.words[at + 8u], instances.words[at + 9u], instances.words[at + 10u], instances.words[at + 11u]);
        instance = transpose(mat4(r0, r1, r2, vec4(0.0, 0.0, 0.0, 1.0)));
    } else {
        for (int c = 0; c < 4; c++) {
            uint k = at + uint(4 * c);
            instance[c] = vec4(instances.words[k], instances.words[k + 1u], instances.words[k + 2u], instances.words[k + 3u]);
        }
    }
    gl_Position = pc.model_view_projection * (instance * vec4(in_position, 1.0));
    gl_PointSize = PICK_POINT_SIZE;
    out_instance = uint(gl_InstanceIndex) - pc.first_instance;
    out_object_id = pc.object_id;
    out_draw_index = pc.draw_index;
}
