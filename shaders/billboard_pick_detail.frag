#version 450
// As billboard_pick.frag, for passes with the detail attachment.
#extension GL_GOOGLE_include_directive : require
#define PICK_DETAIL 1
#include "billboard.glsl"
#include "pick_contributor.glsl"

layout(location = 0) flat in uint in_instance;
layout(location = 1) flat in vec4 in_color;

void main() {
    // A fully transparent billboard is neither drawn nor picked.
    if (in_color.a <= 0.0) {
        discard;
    }
    pick_write(pick_id_add(pc.id_base, in_instance), pc.draw_index, in_instance);
}
