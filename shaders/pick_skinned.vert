#version 450
// Pick pass vertex shader for deformed draws: four influences per vertex, and morph targets (see pick_deform.glsl).
#extension GL_GOOGLE_include_directive : require
#define SKIN_SETS 1
#include "pick_deform.glsl"
