#version 450
// GPU planning (crates/picking-vk/src/gpu_plan): culls the instances of a draw whose
// transforms live in the host's storage buffer against the pixel regions of a frame's queries
// and writes a bit per instance, set for a survivor, into the pair's survivor bits. A row of
// workgroups per pair (one query region and one instance range of the draw), a thread per
// instance; each workgroup writes its own two words (nothing is claimed or cleared) and sets
// its bit of the pair's summary when it has a survivor.
// shaders/pick_cull_finish.comp, after a barrier, turns each pair's bits into indirect
// commands, one per run of consecutive survivors, in instance order. A pair's job, written by
// the CPU while recording, lies at `pair * JOB_WORDS` of the slot's plan buffer
// (crates/picking-vk/src/gpu_plan/layout.rs names the words).
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64) in;

layout(push_constant) uniform CullPush {
    uvec4 storage; // as instance_storage.glsl: (base word, stride in words, rows, unused)
    uvec4 pairs;   // (first pair of this draw, pairs, unused, unused)
} pc;

#define PICK_STORAGE_SET 1
#include "instance_storage.glsl"

layout(std430, set = 0, binding = 0) buffer PlanWords {
    uint words[];
} plan;

const uint JOB_WORDS = 48u;

// This workgroup's survivor bits: instance base + k is bit k % 32 of word k / 32.
shared uint survived[2];

float job_float(uint at) {
    return uintBitsToFloat(plan.words[at]);
}

vec3 job_vec3(uint at) {
    return vec3(job_float(at), job_float(at + 1u), job_float(at + 2u));
}

vec4 job_vec4(uint at) {
    return vec4(job_float(at), job_float(at + 1u), job_float(at + 2u), job_float(at + 3u));
}

// Whether the instance's box, under the draw's matrix, can cover a pixel centre of the region.
// The box's corners go through the instance transform first, as the vertex shader's positions
// do; their axis-aligned hull is grown by the float rounding of that step, then projected.
// A corner at or behind the eye plane keeps the instance: only its screen extent is tested.
bool covers(uint job, mat4 instance) {
    mat4 mvp = mat4(job_vec4(job), job_vec4(job + 4u), job_vec4(job + 8u), job_vec4(job + 12u));
    vec3 lo = job_vec3(job + 16u);
    vec3 hi = job_vec3(job + 19u);
    vec3 wlo = vec3(3.0e38);
    vec3 whi = vec3(-3.0e38);
    for (uint k = 0u; k < 8u; k++) {
        vec3 corner = vec3((k & 1u) != 0u ? hi.x : lo.x, (k & 2u) != 0u ? hi.y : lo.y, (k & 4u) != 0u ? hi.z : lo.z);
        vec4 p = instance * vec4(corner, 1.0);
        // A projective instance transform: its box is not the hull of the corners' images.
        if (p.w != 1.0) {
            return true;
        }
        wlo = min(wlo, p.xyz);
        whi = max(whi, p.xyz);
    }
    float rounding = 4.0e-7 * max(max(abs(wlo.x), abs(whi.x)), max(max(abs(wlo.y), abs(whi.y)), max(abs(wlo.z), abs(whi.z))));
    wlo -= vec3(rounding);
    whi += vec3(rounding);
    vec2 nlo = vec2(3.0e38);
    vec2 nhi = vec2(-3.0e38);
    for (uint k = 0u; k < 8u; k++) {
        vec3 corner = vec3((k & 1u) != 0u ? whi.x : wlo.x, (k & 2u) != 0u ? whi.y : wlo.y, (k & 4u) != 0u ? whi.z : wlo.z);
        vec4 clip = mvp * vec4(corner, 1.0);
        // Also keeps a NaN: the comparison fails.
        if (!(clip.w > 1.0e-6)) {
            return true;
        }
        vec2 ndc = clip.xy / clip.w;
        nlo = min(nlo, ndc);
        nhi = max(nhi, ndc);
    }
    vec4 viewport = job_vec4(job + 27u);
    vec2 a = viewport.xy + (nlo * 0.5 + 0.5) * viewport.zw;
    vec2 b = viewport.xy + (nhi * 0.5 + 0.5) * viewport.zw;
    float pad = job_float(job + 26u);
    vec2 pmin = min(a, b) - vec2(pad);
    vec2 pmax = max(a, b) + vec2(pad);
    // The region's first and last pixel centres.
    vec4 region = job_vec4(job + 22u);
    return all(lessThanEqual(pmin, region.zw)) && all(greaterThanEqual(pmax, region.xy));
}

void main() {
    uint pair = pc.pairs.x + gl_WorkGroupID.y;
    uint job = pair * JOB_WORDS;
    uint count = plan.words[job + 32u];
    uint base = gl_WorkGroupID.x * 64u;
    // Uniform in the workgroup: a row covers the largest pair of its dispatch.
    if (base >= count) {
        return;
    }
    uint lid = gl_LocalInvocationID.x;
    if (lid < 2u) {
        survived[lid] = 0u;
    }
    barrier();
    uint i = base + lid;
    if (i < count && covers(job, pick_storage_instance(plan.words[job + 31u] + i))) {
        atomicOr(survived[lid >> 5u], 1u << (lid & 31u));
    }
    barrier();
    // The workgroup's two words of the pair's survivor bits (no other workgroup writes them),
    // and its summary bit when it has a survivor (the CPU cleared the summary words).
    if (lid < 2u) {
        plan.words[plan.words[job + 41u] + 2u * gl_WorkGroupID.x + lid] = survived[lid];
    }
    if (lid == 0u && (survived[0] | survived[1]) != 0u) {
        atomicOr(plan.words[plan.words[job + 42u] + gl_WorkGroupID.x / 32u], 1u << (gl_WorkGroupID.x % 32u));
    }
}
