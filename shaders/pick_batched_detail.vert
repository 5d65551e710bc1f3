#version 450
// Pick pass vertex shader for batched draws in the detail pass: as shaders/pick_batched.vert,
// and passes on the row's primitive base (a GPU-planned span's first triangle) to
// shaders/pick_batched_detail.frag.
#extension GL_GOOGLE_include_directive : require

#define PICK_PRIMITIVE_BASE
#include "pick_batched.glsl"
