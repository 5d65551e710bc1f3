#version 450
// GPU planning (crates/picking-vk/src/gpu_plan): culls the instances of a draw whose
// transforms the planner reads from the host's buffer against the pixel regions of a frame's
// queries, and writes a bit per instance and region, set for a survivor, into each pair's
// survivor bits. A dispatch per draw: a workgroup per 64 instances (counted from the draw's
// first), a thread per instance, which transforms and projects its instance once and tests
// the result against the region of every pair of the draw whose range holds it. Each
// workgroup writes its own two words of each pair's bits (nothing is claimed or cleared) and
// sets its bit of a pair's summary when it has a survivor there.
// shaders/pick_cull_finish.comp, after a barrier, turns each pair's bits into indirect
// commands, one per run of consecutive survivors, in instance order. A pair's job, written by
// the CPU while recording, lies at `pair * JOB_WORDS` of the slot's plan buffer
// (crates/picking-vk/src/gpu_plan/layout.rs names the words); the draw's words are read from
// its first pair's.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64) in;

layout(push_constant) uniform CullPush {
    uvec4 storage; // as instance_storage.glsl: (base word, stride in words, rows, unused)
    uvec4 pairs;   // (first pair of this draw, pairs, first workgroup, the draw's first instance)
} pc;

#define PICK_STORAGE_SET 1
// Instance pairs of a point or radius query may be walked (shaders/pick_walk.glsl).
#define CULL_WALKS
#include "instance_storage.glsl"
#include "pick_cull.glsl"

void main() {
    uint group = pc.pairs.z + gl_WorkGroupID.x;
    // The instance, counted from the draw's first; the draw's words from its first pair.
    uint i = 64u * group + gl_LocalInvocationID.x;
    uint job = pc.pairs.x * JOB_WORDS;
    bool keep = false;
    vec4 rect = vec4(3.0e38, 3.0e38, -3.0e38, -3.0e38);
    if (i < plan.words[job + 46u]) {
        mat4 mvp = mat4(job_vec4(job), job_vec4(job + 4u), job_vec4(job + 8u), job_vec4(job + 12u));
        rect = screen_bounds(job, mvp, job_vec3(job + 16u), job_vec3(job + 19u), pick_storage_instance(pc.pairs.w + i), keep);
    }
    test_pairs(group, i, rect, keep, pc.pairs.x, pc.pairs.y);
}
