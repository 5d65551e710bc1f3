#version 450
// Detail pick fragment shader of batched draws (shaders/pick_batched_detail.vert): as
// shaders/pick_detail.frag, the face counted from the draw's first triangle even where its
// command starts later (a GPU-planned span of chunks).
#extension GL_GOOGLE_include_directive : require

#define PICK_PRIMITIVE_BASE
#include "pick_detail.glsl"
