#version 450
// Instances from the host's storage buffer, as their command names them
// (shaders/pick_instanced_storage.glsl).
#extension GL_GOOGLE_include_directive : require

#include "pick_instanced_storage.glsl"
