#version 450
// Pick pass vertex shader for instanced draws whose per-instance transform is a row-major
// 3x4 matrix (three vec4 rows, 48 bytes: the affine part; the last row is 0, 0, 0, 1).
#extension GL_GOOGLE_include_directive : require
#include "pick_push.glsl"

// The draw's point size (RasterState::point_size), for point lists; ignored otherwise.
layout(constant_id = 0) const float PICK_POINT_SIZE = 1.0;
layout(location = 0) in vec3 in_position;
layout(location = 1) in vec4 in_instance_row0;
layout(location = 2) in vec4 in_instance_row1;
layout(location = 3) in vec4 in_instance_row2;
layout(location = 0) flat out uint out_instance;
layout(location = 1) flat out uvec2 out_object_id;
layout(location = 2) flat out uint out_draw_index;

void main() {
    // mat4() takes columns: built from the rows it is the transpose of the instance matrix.
    mat4 instance = transpose(mat4(in_instance_row0, in_instance_row1, in_instance_row2, vec4(0.0, 0.0, 0.0, 1.0)));
    gl_Position = pc.model_view_projection * (instance * vec4(in_position, 1.0));
    gl_PointSize = PICK_POINT_SIZE;
    out_instance = uint(gl_InstanceIndex) - pc.first_instance;
    out_object_id = pc.object_id;
    out_draw_index = pc.draw_index;
}
