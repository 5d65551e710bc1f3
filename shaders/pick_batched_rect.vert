#version 450
// Rectangle passes' vertex shader for a GPU plan table's groups (crates/picking-vk/src/
// record/rect.rs): the rows the cull pass composed, read as per-instance attributes, as in
// shaders/pick_batched.vert. A row's table entry is its snapshot index (the table's row 0 at
// a fixed base, plus the row) plus the pushed draw index, which maps the group's rows onto
// its entries.
#extension GL_GOOGLE_include_directive : require

#include "pick_push.glsl"
#define PICK_RECT_ENTRIES
#include "pick_batched.glsl"
