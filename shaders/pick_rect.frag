#version 450
// Rectangle pass, `Visible` mode: the nearest fragment's table entry (+1; 0 = nothing) and
// its depth bits, reduced afterwards by rect_reduce.comp. The entry is the draw's base entry
// (sent as `draw_index`) plus its instance.

layout(location = 0) flat in uint in_instance;
layout(location = 1) flat in uvec2 in_object_id;
layout(location = 2) flat in uint in_draw_index;
layout(location = 0) out uvec2 out_entry_depth;

void main() {
    // ID 0 is never drawn; reading the ID keeps the vertex stage's outputs all consumed.
    if (in_object_id == uvec2(0u)) {
        discard;
    }
    out_entry_depth = uvec2(in_draw_index + in_instance + 1u, floatBitsToUint(gl_FragCoord.z));
}
