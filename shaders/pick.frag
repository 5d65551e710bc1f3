#version 450
// Basic pick fragment shader: the object ID and (draw, instance) of the nearest fragment.
#extension GL_GOOGLE_include_directive : require
#include "pick_push.glsl"

layout(location = 0) flat in uint in_instance;
layout(location = 0) out uvec2 out_object_id;
layout(location = 1) out uvec2 out_draw_instance;

void main() {
    out_object_id = pc.object_id;
    out_draw_instance = uvec2(pc.draw_index, in_instance);
}
