#version 450
// Pick pass vertex shader for deformed draws: eight influences per vertex, joints and weights read as storage
// words, and morph targets (see pick_deform.glsl).
#extension GL_GOOGLE_include_directive : require
#define SKIN_SETS 2
#define SKIN_FROM_STORAGE
#include "pick_deform.glsl"
