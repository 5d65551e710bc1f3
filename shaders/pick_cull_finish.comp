#version 450
// GPU planning, after shaders/pick_cull.comp and a barrier: a workgroup per pair turns the
// pair's survivor bits (those of the cull workgroups its summary marks) into indirect
// commands, one per run of consecutive survivors, in instance order (so the pick draws them
// in the order the host's draw would: depth ties resolve as without culling), and writes the
// pair's survivor and draw counts. When the runs overflow the pair's share of the commands,
// one command (the fallback's) draws the whole range, in order. Job and
// counter words as in crates/picking-vk/src/gpu_plan/layout.rs.

#extension GL_GOOGLE_include_directive : require

#include "pick_cull_finish.glsl"

// Instance pairs of a point or radius query may be walked: their job names the totals.
bool walked(uint job) {
    return plan.words[job + 53u] != 0u;
}

// Instances: a run ends only at a culled instance.
uint template_starts(uint w) {
    return 0u;
}

// The draw's template, the same for every run.
uvec3 command_template(uint job, uint candidate) {
    return uvec3(plan.words[job + 37u], plan.words[job + 38u], plan.words[job + 39u]);
}

// The fallback command draws the whole range: as the pair's one command where it has room
// for one (so the pick records no draw of the fallback word there), else at its own word.
void overflow(uint job, uint counters) {
    uint fallback = plan.words[job + 36u];
    uint range = plan.words[job + 45u];
    if (plan.words[job + 35u] > 0u) {
        uint at = plan.words[job + 34u];
        for (uint w = 0u; w < 5u; w++) {
            plan.words[at + w] = w == 1u ? range : plan.words[fallback + w];
        }
        plan.words[counters + DRAWN] = 1u;
    } else {
        plan.words[fallback + 1u] = range;
    }
    add_total(TOTAL_FALLBACKS, uint(range != 0u));
}

// Instances are never dropped behind a sure hit on the GPU.
void drop_occluded(uint job, uint counters, uint bits, uint n, uint summary) {
}

// Instances are drawn by runs, never by chunks.
bool finish_by_chunks(uint job, uint counters, uint commands, uint capacity, bool indexed, uint bits, uint n, uint summary, uint instance_base) {
    return false;
}

// Instances are the host's: their rows cannot be copied, so runs past the commands fall back.
bool compact_survivors(uint job, uint counters, uint commands, uint capacity, bool indexed, uint bits, uint n, uint summaries, uint first_mask, uint before, uint survivors) {
    return false;
}
