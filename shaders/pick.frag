#version 450
// Basic pick fragment shader: the object ID and (draw, instance) of the nearest fragment.

layout(location = 0) flat in uint in_instance;
layout(location = 1) flat in uvec2 in_object_id;
layout(location = 2) flat in uint in_draw_index;
layout(location = 0) out uvec2 out_object_id;
layout(location = 1) out uvec2 out_draw_instance;

void main() {
    out_object_id = in_object_id;
    out_draw_instance = uvec2(in_draw_index, in_instance);
}
