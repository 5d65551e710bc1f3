#version 450
// Pick pass vertex shader for draws without per-instance transforms, one draw call each.
#extension GL_GOOGLE_include_directive : require
#include "pick_push.glsl"

// The draw's point size (RasterState::point_size), for point lists; ignored otherwise.
layout(constant_id = 0) const float PICK_POINT_SIZE = 1.0;
layout(location = 0) in vec3 in_position;
layout(location = 0) flat out uint out_instance;
layout(location = 1) flat out uvec2 out_object_id;
layout(location = 2) flat out uint out_draw_index;

void main() {
    gl_Position = pc.model_view_projection * vec4(in_position, 1.0);
    gl_PointSize = PICK_POINT_SIZE;
    out_instance = uint(gl_InstanceIndex) - pc.first_instance;
    out_object_id = pc.object_id;
    out_draw_index = pc.draw_index;
}
