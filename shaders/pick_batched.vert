#version 450
// Pick pass vertex shader for batched draws: one indirect draw covers a run of objects that
// share their buffers. Each draw's data is a row of a per-frame buffer, read as per-instance
// attributes: the indirect command's firstInstance selects the row.
#extension GL_GOOGLE_include_directive : require

#include "pick_batched.glsl"
