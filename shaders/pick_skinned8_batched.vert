#version 450
// Pick pass vertex shader for batched deformed draws: eight influences per vertex (see pick_deform.glsl).
#extension GL_GOOGLE_include_directive : require
#define SKIN_SETS 2
#define PICK_BATCHED
#include "pick_deform.glsl"
