#version 450
// Pick pass vertex shader for instanced draws: a column-major mat4 per instance, read as
// four per-instance vec4 attributes so no descriptor set is needed.
#extension GL_GOOGLE_include_directive : require
#include "pick_push.glsl"

// The draw's point size (RasterState::point_size), for point lists; ignored otherwise.
layout(constant_id = 0) const float PICK_POINT_SIZE = 1.0;
layout(location = 0) in vec3 in_position;
layout(location = 1) in vec4 in_instance_col0;
layout(location = 2) in vec4 in_instance_col1;
layout(location = 3) in vec4 in_instance_col2;
layout(location = 4) in vec4 in_instance_col3;
layout(location = 0) flat out uint out_instance;
layout(location = 1) flat out uvec2 out_object_id;
layout(location = 2) flat out uint out_draw_index;

void main() {
    mat4 instance = mat4(in_instance_col0, in_instance_col1, in_instance_col2, in_instance_col3);
    gl_Position = pc.model_view_projection * (instance * vec4(in_position, 1.0));
    gl_PointSize = PICK_POINT_SIZE;
    out_instance = uint(gl_InstanceIndex) - pc.first_instance;
    out_object_id = pc.object_id;
    out_draw_index = pc.draw_index;
}
