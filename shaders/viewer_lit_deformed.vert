#version 450
#extension GL_GOOGLE_include_directive : require
// Viewer: the lit pass's vertex shader for skinned and morphed primitives (one instance
// each). It reads what the picker reads: the skin stream and morph deltas of the primitive
// and the joint matrices and weights of the frame's pose region, here as storage buffers
// (set 1) indexed by gl_VertexIndex. Morph first, then skin; a skinned vertex ignores the
// slot's world matrix (glTF). Outputs as viewer_lit.vert.
layout(push_constant) uniform Frame {
    mat4 view_projection;
    vec4 eye;
    vec4 light_dir;
    // (palette word, or ~0 without a skin; weights word; morph targets; skin sets)
    uvec4 deform;
    // (vertices, unused...)
    uvec4 counts;
} frame;

layout(std430, set = 1, binding = 0) readonly buffer Pose { float words[]; } pose;
layout(std430, set = 1, binding = 1) readonly buffer SkinStream { uint words[]; } skin;
layout(std430, set = 1, binding = 2) readonly buffer Deltas { float words[]; } deltas;

// Point lists' size in pixels (the pipeline's specialization).
layout(constant_id = 0) const float POINT_SIZE = 1.0;
layout(location = 0) in vec3 in_position;
layout(location = 1) in vec3 in_normal;
layout(location = 2) in vec4 in_world0;
layout(location = 3) in vec4 in_world1;
layout(location = 4) in vec4 in_world2;
layout(location = 5) in vec4 in_world3;
layout(location = 6) in uvec4 in_flags;
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

mat4 joint_matrix(uint j) {
    uint at = frame.deform.x + j * 16u;
    mat4 m;
    for (int c = 0; c < 4; c++) {
        uint k = at + uint(4 * c);
        m[c] = vec4(pose.words[k], pose.words[k + 1u], pose.words[k + 2u], pose.words[k + 3u]);
    }
    return m;
}

void main() {
    uint vertex = uint(gl_VertexIndex);
    vec3 p = in_position;
    for (uint t = 0u; t < frame.deform.z; t++) {
        float w = pose.words[frame.deform.y + t];
        uint at = (t * frame.counts.x + vertex) * 3u;
        p += w * vec3(deltas.words[at], deltas.words[at + 1u], deltas.words[at + 2u]);
    }
    mat4 world = mat4(in_world0, in_world1, in_world2, in_world3);
    if (frame.deform.x != 0xFFFFFFFFu) {
        world = mat4(0.0);
        uint sets = frame.deform.w;
        for (uint s = 0u; s < sets; s++) {
            uint at = (vertex * sets + s) * 6u;
            uvec4 j = uvec4(skin.words[at] & 0xFFFFu, skin.words[at] >> 16, skin.words[at + 1u] & 0xFFFFu, skin.words[at + 1u] >> 16);
            vec4 w = vec4(uintBitsToFloat(skin.words[at + 2u]), uintBitsToFloat(skin.words[at + 3u]), uintBitsToFloat(skin.words[at + 4u]),
                uintBitsToFloat(skin.words[at + 5u]));
            world += w.x * joint_matrix(j.x) + w.y * joint_matrix(j.y) + w.z * joint_matrix(j.z) + w.w * joint_matrix(j.w);
        }
    }
    vec3 moved = (world * vec4(p, 1.0)).xyz;
    out_world = moved;
    out_normal = transpose(inverse(mat3(world))) * in_normal;
    out_flags = pick_tint(in_flags.x, in_pick_key, floatBitsToUint(frame.light_dir.w));
    out_base = vec4(unpackUnorm4x8(in_flags.y).rgb, uintBitsToFloat(in_flags.w));
    out_cutoff = uintBitsToFloat(in_flags.z);
    out_uv = in_uv;
    out_color = in_color;
    gl_Position = frame.view_projection * vec4(moved, 1.0);
    gl_PointSize = POINT_SIZE;
}
