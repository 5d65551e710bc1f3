// Pick pass vertex shader for instanced draws whose per-instance transforms sit in the host's
// storage buffer (InstanceBinding::StorageBuffer), bound at set 1 and read as
// crates/picking-vk/glsl/instance_storage.glsl says (hooked pipelines of such draws share it).
// Compiled twice: shaders/pick_instanced_storage.vert draws the instances its command names;
// shaders/pick_instanced_storage_walked.vert (PICK_WALK) draws a walked pair's survivors,
// the pair in the storage words' last (shaders/pick_walk.glsl).

layout(push_constant) uniform StoragePush {
    mat4 model_view_projection; // as pick_push.glsl
    uvec2 object_id;
    uint draw_index;
    uint first_instance;
    layout(offset = 112) uvec4 storage; // (base word, stride in words, rows, walked pair)
} pc;

#define PICK_STORAGE_SET 1
#include "instance_storage.glsl"
#ifdef PICK_WALK
#include "pick_walk.glsl"
#endif

// The draw's point size (RasterState::point_size), for point lists; ignored otherwise.
layout(constant_id = 0) const float PICK_POINT_SIZE = 1.0;
layout(location = 0) in vec3 in_position;
layout(location = 0) flat out uint out_instance;
layout(location = 1) flat out uvec2 out_object_id;
layout(location = 2) flat out uint out_draw_index;

void main() {
#ifdef PICK_WALK
    uint instance = walked_instance(pc.storage.w, uint(gl_InstanceIndex));
    // Outside the clip volume (x beyond w): never rasterized, whatever the topology.
    gl_Position = vec4(2.0, 2.0, 2.0, 1.0);
    if (instance != NO_INSTANCE) {
        gl_Position = pc.model_view_projection * (pick_storage_instance(instance) * vec4(in_position, 1.0));
    }
#else
    uint instance = uint(gl_InstanceIndex);
    gl_Position = pc.model_view_projection * (pick_storage_instance(instance) * vec4(in_position, 1.0));
#endif
    gl_PointSize = PICK_POINT_SIZE;
    out_instance = instance - pc.first_instance;
    out_object_id = pc.object_id;
    out_draw_index = pc.draw_index;
}
