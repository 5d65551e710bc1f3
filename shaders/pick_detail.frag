#version 450
// Detail pick fragment shader (shaders/pick_detail.glsl): the primitive index and the
// barycentric coordinates of the winning fragment.
#extension GL_GOOGLE_include_directive : require

#include "pick_detail.glsl"
