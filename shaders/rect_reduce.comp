#version 450
// Rectangle reduction for `Visible` mode: each pixel of the tile adds the entry that won its
// depth test to the table (pixel count, nearest depth, first pixel).
#extension GL_GOOGLE_include_directive : require
#include "rect_table.glsl"

layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 1, rg32ui) uniform readonly uimage2D entries;
// (tile width, tile height, reverse depth, table capacity), then the tile's place in its
// rectangle and the rectangle's width (x, y, width, unused).
layout(push_constant) uniform ReducePush {
    uvec4 tile;
    uvec4 origin;
} pc;

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= pc.tile.x || p.y >= pc.tile.y) {
        return;
    }
    uvec2 texel = imageLoad(entries, ivec2(p)).xy;
    if (texel.x == 0u) {
        return;
    }
    uint key = pc.tile.z != 0u ? ~texel.y : texel.y;
    uvec2 q = p + pc.origin.xy;
    table_add(texel.x - 1u, pc.tile.w, key, q.y * pc.origin.z + q.x);
}
