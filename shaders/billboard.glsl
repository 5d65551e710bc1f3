// The push block of the viewer's billboard shaders (crates/host/src/billboards.rs):
// camera-facing squares, one instance each, expanded from their centre and size.
layout(push_constant) uniform BillboardPush {
    mat4 view_projection;
    vec4 right;    // world-space camera right
    vec4 up;       // world-space camera up
    uvec2 id_base; // the first billboard's object ID (low, high)
    uint draw_index;
} pc;
