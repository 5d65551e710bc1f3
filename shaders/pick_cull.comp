#version 450
// GPU planning (crates/picking-vk/src/gpu_plan): culls the instances of a draw whose
// transforms live in the host's storage buffer against the pixel regions of a frame's queries
// and writes one indirect command per surviving instance, in instance order. A row of
// workgroups per pair (one query region and one instance range of the draw), a thread per
// instance. Survivors claim command slots in any order; the row's last workgroup to finish
// sorts the claimed commands by instance (so the pick draws them in the order the host's draw
// would: depth ties resolve as without culling) and writes the draw count, or on overflow a
// draw count of 0 and the fallback command's instance count (the whole range, in order).
// A pair's job, written by the CPU while recording, lies at `pair * JOB_WORDS` of the slot's
// plan buffer (crates/picking-vk/src/gpu_plan/layout.rs names the words).
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 256) in;
const uint GROUP = 256u;

// Instances the last workgroup sorts in shared memory (a power of two the device's shared
// memory holds); more are sorted in the plan buffer itself.
layout(constant_id = 0) const uint SORT_CAPACITY = 2048u;

layout(push_constant) uniform CullPush {
    uvec4 storage; // as instance_storage.glsl: (base word, stride in words, rows, unused)
    uvec4 pairs;   // (first pair of this draw, pairs, unused, unused)
} pc;

#define PICK_STORAGE_SET 1
#include "instance_storage.glsl"

// Coherent: the row's last workgroup reads what the others wrote.
layout(std430, set = 0, binding = 0) coherent buffer PlanWords {
    uint words[];
} plan;

const uint JOB_WORDS = 48u;
// A pair's counters, from its job's COUNTERS word: claimed slots, finished workgroups, the
// draw count the pick reads.
const uint CLAIMED = 0u;
const uint FINISHED = 1u;
const uint DRAWN = 2u;

shared uint keys[SORT_CAPACITY];
shared uint shared_word;

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

// Writes a survivor's command into its claimed slot: the draw's template (index or vertex
// count, first index or vertex, vertex offset, indexed), one instance.
void claim(uint job, uint instance) {
    uint slot = atomicAdd(plan.words[plan.words[job + 33u] + CLAIMED], 1u);
    if (slot >= plan.words[job + 35u]) {
        return;
    }
    uint at = plan.words[job + 34u] + 5u * slot;
    plan.words[at] = plan.words[job + 37u];
    plan.words[at + 1u] = 1u;
    plan.words[at + 2u] = plan.words[job + 38u];
    if (plan.words[job + 40u] != 0u) {
        plan.words[at + 3u] = plan.words[job + 39u];
        plan.words[at + 4u] = instance;
    } else {
        plan.words[at + 3u] = instance;
        plan.words[at + 4u] = 0u;
    }
}

// Orders keys[a] <= keys[b] (shared) or the commands' instance words (in the buffer; b past
// `count` holds +infinity: nothing to do).
void order_shared(uint a, uint b) {
    uint x = keys[a];
    uint y = keys[b];
    if (x > y) {
        keys[a] = y;
        keys[b] = x;
    }
}

void order_buffer(uint words_at, uint count, uint a, uint b) {
    if (b >= count) {
        return;
    }
    uint x = plan.words[words_at + 5u * a];
    uint y = plan.words[words_at + 5u * b];
    if (x > y) {
        plan.words[words_at + 5u * a] = y;
        plan.words[words_at + 5u * b] = x;
    }
}

// Sorts the `count` claimed commands' instance words ascending (a bitonic network of
// ascending comparisons over the next power of two: a flip, then half-cleaners).
void sort_commands(uint words_at, uint count) {
    uint n = 1u;
    while (n < count) {
        n <<= 1u;
    }
    bool in_shared = n <= SORT_CAPACITY;
    uint lid = gl_LocalInvocationID.x;
    if (in_shared) {
        for (uint i = lid; i < n; i += GROUP) {
            keys[i] = i < count ? plan.words[words_at + 5u * i] : 0xFFFFFFFFu;
        }
        barrier();
    }
    for (uint size = 2u; size <= n; size <<= 1u) {
        for (uint step = size >> 1u; step > 0u; step >>= 1u) {
            for (uint i = lid; i < n / 2u; i += GROUP) {
                uint block = i / step;
                uint offset = i % step;
                uint a = block * 2u * step + offset;
                // The first step of each size flips (compares mirrored positions).
                uint b = step == size >> 1u ? a + 2u * (step - offset) - 1u : a + step;
                if (in_shared) {
                    order_shared(a, b);
                } else {
                    order_buffer(words_at, count, a, b);
                }
            }
            memoryBarrierBuffer();
            barrier();
        }
    }
    if (in_shared) {
        for (uint i = lid; i < count; i += GROUP) {
            plan.words[words_at + 5u * i] = keys[i];
        }
    }
}

// The row's last workgroup: sorts the claimed commands and writes the draw count, or on
// overflow draws nothing from them and the whole range from the fallback command.
void finish(uint job) {
    uint counters = plan.words[job + 33u];
    uint lid = gl_LocalInvocationID.x;
    if (lid == 0u) {
        shared_word = atomicAdd(plan.words[counters + CLAIMED], 0u);
    }
    barrier();
    uint claimed = shared_word;
    if (claimed > plan.words[job + 35u]) {
        if (lid == 0u) {
            plan.words[counters + DRAWN] = 0u;
            plan.words[plan.words[job + 36u] + 1u] = plan.words[job + 32u];
        }
        return;
    }
    // The instance word: the fifth of an indexed command, the fourth of another.
    uint field = plan.words[job + 40u] != 0u ? 4u : 3u;
    sort_commands(plan.words[job + 34u] + field, claimed);
    if (lid == 0u) {
        plan.words[counters + DRAWN] = claimed;
    }
}

void main() {
    uint pair = pc.pairs.x + gl_WorkGroupID.y;
    uint job = pair * JOB_WORDS;
    uint i = gl_GlobalInvocationID.x;
    if (i < plan.words[job + 32u]) {
        uint instance = plan.words[job + 31u] + i;
        if (covers(job, pick_storage_instance(instance))) {
            claim(job, instance);
        }
    }
    // Every workgroup of the row counts itself finished once its writes are visible; the
    // last one finishes the pair.
    memoryBarrierBuffer();
    barrier();
    if (gl_LocalInvocationID.x == 0u) {
        uint finished = atomicAdd(plan.words[plan.words[job + 33u] + FINISHED], 1u);
        shared_word = finished == gl_NumWorkGroups.x - 1u ? 1u : 0u;
    }
    barrier();
    if (shared_word == 0u) {
        return;
    }
    memoryBarrierBuffer();
    barrier();
    finish(job);
}
