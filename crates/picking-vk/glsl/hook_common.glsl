// Shared by both hook stages: the push constants of hooked pipelines (184 bytes, which needs
// maxPushConstantsSize >= 184; 256 for deformed draws and instance transforms in storage, whose
// vertex stage defines PICK_DEFORM or PICK_INSTANCED_STORAGE and reads their words too) and
// what hooks see. Mirrors `HookPush` in
// crates/picking-vk/src/pass/hooked.rs.
layout(push_constant) uniform HookPush {
    mat4 view_projection;  // projection * view (world space in, clip space out)
    uvec2 object_id;       // 64-bit object ID as (low, high) words
    uint draw_index;       // the draw's snapshot index (rectangles: its base table entry)
    uint first_instance;   // the host's firstInstance, so instances are numbered from 0
    uvec4 rect_tile;       // rectangle passes: (rectangle width, reverse depth, capacity, 0)
    uvec4 rect_origin;     // rectangle passes: the tile's place in its rectangle
    mat4 model;            // object to world
    vec2 pixel_shift;      // target pixel - host pixel (the pass's whole-pixel viewport shift)
#if defined(PICK_DEFORM)
    // The deformation's words, as deform.glsl reads them (see shaders/pick_deform.glsl).
    layout(offset = 192) uvec4 bases;
    uvec4 counts;
    uvec4 stream_first;
    uvec4 stream_stride;
#elif defined(PICK_INSTANCED_STORAGE)
    // As instance_storage.glsl reads them: (base word, stride in words, rows, unused).
    layout(offset = 192) uvec4 storage;
#endif
} pc;

struct PickVertex {
    vec3 local;
    vec3 world;
    mat3 basis;
    uint instance;
    vec4 attrib;
};

struct PickFragment {
    vec3 world;
    vec2 pixel;
    uvec2 id;
    uint instance;
    vec4 attrib;
};
