#version 450
// Rectangle pass, `All` mode ("select through"): no depth test; every fragment adds itself
// to its table entry, so occluded surfaces count too.
#extension GL_GOOGLE_include_directive : require
#include "rect_table.glsl"

layout(location = 0) flat in uint in_instance;
layout(location = 1) flat in uvec2 in_object_id;
layout(location = 2) flat in uint in_draw_index;

// After the 80 bytes of PickPush: (rectangle width, reverse depth, table capacity, unused)
// and the tile's place in its rectangle (x, y, unused, unused).
layout(push_constant) uniform RectPush {
    layout(offset = 80) uvec4 tile;
    uvec4 origin;
} rect;

void main() {
    // ID 0 is never drawn; reading the ID keeps the vertex stage's outputs all consumed.
    if (in_object_id == uvec2(0u)) {
        return;
    }
    uint depth = floatBitsToUint(gl_FragCoord.z);
    uint key = rect.tile.y != 0u ? ~depth : depth;
    uvec2 p = uvec2(gl_FragCoord.xy) + rect.origin.xy;
    table_add(in_draw_index + in_instance, rect.tile.z, key, p.y * rect.tile.x + p.x);
}
