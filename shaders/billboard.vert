#version 450
// Viewer billboards, lit pass and pick pass alike: the corner, the colour, the instance.
#extension GL_GOOGLE_include_directive : require
#include "billboard.glsl"

const vec2 CORNERS[6] = vec2[](vec2(-1.0, -1.0), vec2(1.0, -1.0), vec2(1.0, 1.0), vec2(-1.0, -1.0), vec2(1.0, 1.0), vec2(-1.0, 1.0));

vec4 billboard_corner(vec4 centre_size) {
    vec2 c = CORNERS[gl_VertexIndex % 6] * 0.5 * centre_size.w;
    vec3 p = centre_size.xyz + pc.right.xyz * c.x + pc.up.xyz * c.y;
    return pc.view_projection * vec4(p, 1.0);
}

layout(location = 0) in vec4 in_centre_size;
layout(location = 1) in vec4 in_color;
layout(location = 0) flat out uint out_instance;
layout(location = 1) flat out vec4 out_color;

void main() {
    gl_Position = billboard_corner(in_centre_size);
    out_instance = uint(gl_InstanceIndex);
    out_color = in_color;
}
