#version 450
// A walked pair's surviving instances from the host's storage buffer
// (shaders/pick_instanced_storage.glsl, shaders/pick_walk.glsl).
#extension GL_GOOGLE_include_directive : require

#define PICK_WALK
#include "pick_instanced_storage.glsl"
