#version 450
#extension GL_GOOGLE_include_directive : require
// Viewer: simple lit shading. Every draw is instanced: a world matrix and a style per instance
// (flags: hovered, selected, unlit; the base colour; the alpha cutoff), so highlighting is a
// write to the per-frame flag buffer and consecutive draws share all other state.
layout(push_constant) uniform Frame {
    mat4 view_projection;
    vec4 eye;        // world-space camera position
    vec4 light_dir;  // world-space direction towards the light
} frame;

// Point lists' size in pixels (the pipeline's specialization).
layout(constant_id = 0) const float POINT_SIZE = 1.0;
layout(location = 0) in vec3 in_position;
layout(location = 1) in vec3 in_normal;
layout(location = 2) in vec4 in_world0;
layout(location = 3) in vec4 in_world1;
layout(location = 4) in vec4 in_world2;
layout(location = 5) in vec4 in_world3;
layout(location = 6) in uvec4 in_flags; // x: flags, y: base colour (packUnorm4x8), z: alpha cutoff, w: alpha
layout(location = 7) in vec2 in_uv;
// The vertex colour (glTF COLOR_0; white when the primitive has none).
layout(location = 8) in vec4 in_color;
// The slot's object for the picker's GPU results: ID (low, high), instance.
layout(location = 9) in uvec4 in_pick_key;
#include "viewer_pick_tint.glsl"

layout(location = 0) out vec3 out_world;
layout(location = 1) out vec3 out_normal;
layout(location = 2) flat out uint out_flags;
layout(location = 3) flat out vec4 out_base;
layout(location = 4) flat out float out_cutoff;
layout(location = 5) out vec2 out_uv;
layout(location = 6) out vec4 out_color;

void main() {
    mat4 world = mat4(in_world0, in_world1, in_world2, in_world3);
    vec4 p = world * vec4(in_position, 1.0);
    out_world = p.xyz;
    // Inverse transpose keeps normals right under non-uniform scale.
    out_normal = transpose(inverse(mat3(world))) * in_normal;
    out_flags = pick_tint(in_flags.x, in_pick_key, floatBitsToUint(frame.light_dir.w));
    out_base = vec4(unpackUnorm4x8(in_flags.y).rgb, uintBitsToFloat(in_flags.w));
    out_cutoff = uintBitsToFloat(in_flags.z);
    out_uv = in_uv;
    out_color = in_color;
    gl_Position = frame.view_projection * p;
    gl_PointSize = POINT_SIZE;
}
