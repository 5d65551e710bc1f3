// Shared by shaders/pick_cull_finish.comp (instances) and shaders/pick_cull_finish_draws.comp
// (a shared list's draws), which define what differs: which survivors start a run beyond
// those after a non-survivor (`template_starts`), a run's command template, and what an
// overflow sets.

layout(local_size_x = 64) in;
const uint GROUP = 64u;

layout(push_constant) uniform FinishPush {
    uvec4 pairs; // (pairs, the first, the table's run-start bits (draws), the occluder directory (draws))
} pc;

layout(std430, set = 0, binding = 0) buffer PlanWords {
    uint words[];
} plan;

const uint JOB_WORDS = 52u;
const uint SURVIVORS = 0u;
const uint TABLE_FALLBACK = 1u;
const uint DRAWN = 2u;

// The candidate of the pair's bit 0 (the instance, or the table row).
uint bit0;

// The survivors of word `w` of the pair's bits that start a run even after a survivor.
uint template_starts(uint w);
// A run's command template from `candidate` on: (count, first index or vertex, vertex offset).
uvec3 command_template(uint job, uint candidate);
// Marks the pair's overflow: its fallback draws the whole range.
void overflow(uint job, uint counters);
// Clears the survivor bits of candidates that cannot win the pair's pixel (occlusion), before
// the runs are counted: `bits` and `n` the pair's bit words, `summary` its first summary
// word. Every thread of the workgroup calls it.
void drop_occluded(uint job, uint counters, uint bits, uint n, uint summary);

shared uint partial[GROUP];

// The exclusive prefix sum of `v` over the workgroup's threads; `total` gets the sum.
uint scan(uint v, out uint total) {
    uint lid = gl_LocalInvocationID.x;
    partial[lid] = v;
    barrier();
    for (uint d = 1u; d < GROUP; d <<= 1u) {
        uint add = lid >= d ? partial[lid - d] : 0u;
        barrier();
        partial[lid] += add;
        barrier();
    }
    uint inclusive = partial[lid];
    total = partial[GROUP - 1u];
    barrier();
    return inclusive - v;
}

// Word `w` of the pair's bits (`bits`, `n` words); 0 outside them.
uint bits_word(uint bits, uint n, uint w) {
    return w < n ? plan.words[bits + w] : 0u;
}

// The survivors that start a run (the one before is not a survivor), of word `w`.
uint run_starts(uint bits, uint n, uint w) {
    uint b = bits_word(bits, n, w);
    uint before = w > 0u ? bits_word(bits, n, w - 1u) >> 31u : 0u;
    return b & (~((b << 1u) | before) | template_starts(w));
}

// The survivors that end a run (the one after is not a survivor), of word `w`.
uint run_ends(uint bits, uint n, uint w) {
    uint b = bits_word(bits, n, w);
    uint after = bits_word(bits, n, w + 1u) << 31u;
    uint next_starts = (template_starts(w) >> 1u) | (template_starts(w + 1u) << 31u);
    return b & (~((b >> 1u) | after) | next_starts);
}

// Adds the run starts, run ends and survivors of the two bit words of each cull workgroup
// whose bit `mask` (a summary word, `first_group` its first) sets.
uvec3 count_groups(uint bits, uint n, uint mask, uint first_group) {
    uvec3 counts = uvec3(0u);
    for (; mask != 0u; mask &= mask - 1u) {
        uint w = 2u * (first_group + uint(findLSB(mask)));
        for (uint k = w; k < w + 2u; k++) {
            counts += uvec3(bitCount(run_starts(bits, n, k)), bitCount(run_ends(bits, n, k)), bitCount(bits_word(bits, n, k)));
        }
    }
    return counts;
}

void main() {
    uint pair = pc.pairs.y + gl_WorkGroupID.x;
    if (gl_WorkGroupID.x >= pc.pairs.x) {
        return;
    }
    uint lid = gl_LocalInvocationID.x;
    uint job = pair * JOB_WORDS;
    uint counters = plan.words[job + 33u];
    // The bits cover whole cull workgroups from the instance of bit 0; the range lies in them.
    uint count = plan.words[job + 32u];
    uint first_instance = plan.words[job + 31u];
    bit0 = first_instance;
    uint bits = plan.words[job + 41u];
    uint summary = plan.words[job + 42u];
    // The cull pass wrote two words per 64 instances, and a summary bit per 64 instances
    // with a survivor: only those words are read (a pick's pair has a few).
    uint groups = (count + 63u) / 64u;
    uint n = 2u * groups;
    uint summaries = (groups + 31u) / 32u;
    drop_occluded(job, counters, bits, n, summary);
    uvec3 own = uvec3(0u);
    for (uint s = lid; s < summaries; s += GROUP) {
        own += count_groups(bits, n, plan.words[summary + s], 32u * s);
    }
    uint total_runs;
    uint total_survivors;
    scan(own.x, total_runs);
    scan(own.z, total_survivors);
    if (lid == 0u) {
        plan.words[counters + SURVIVORS] = total_survivors;
    }
    if (total_runs > plan.words[job + 35u]) {
        if (lid == 0u) {
            plan.words[counters + DRAWN] = 0u;
            overflow(job, counters);
        }
        return;
    }
    // Command k of a run: the draw's template with the run's first instance; its instance
    // count is first written as the run's end (relative, exclusive) by the thread that finds
    // the end, then made a count below. Both threads find k as the run's rank among starts
    // or ends: the k-th start and the k-th end bound the same run. A thread takes a summary
    // word's workgroups, in order.
    uint commands = plan.words[job + 34u];
    bool indexed = plan.words[job + 40u] != 0u;
    // Runs started and ended before the chunk (a run may end in a later chunk).
    uint started = 0u;
    uint ended = 0u;
    for (uint chunk = 0u; chunk < summaries; chunk += GROUP) {
        uint s = chunk + lid;
        uint mask = s < summaries ? plan.words[summary + s] : 0u;
        uvec3 mine = count_groups(bits, n, mask, 32u * s);
        uint chunk_starts;
        uint chunk_ends;
        uint k = started + scan(mine.x, chunk_starts);
        uint e = ended + scan(mine.y, chunk_ends);
        for (; mask != 0u; mask &= mask - 1u) {
            uint group_word = 2u * (32u * s + uint(findLSB(mask)));
            for (uint w = group_word; w < group_word + 2u; w++) {
                for (uint starts = run_starts(bits, n, w); starts != 0u; starts &= starts - 1u) {
                    uint at = commands + 5u * k;
                    uint instance = first_instance + 32u * w + uint(findLSB(starts));
                    uvec3 run = command_template(job, instance);
                    plan.words[at] = run.x;
                    plan.words[at + 2u] = run.y;
                    plan.words[at + 3u] = indexed ? run.z : instance;
                    plan.words[at + 4u] = indexed ? instance : 0u;
                    k++;
                }
                for (uint ends = run_ends(bits, n, w); ends != 0u; ends &= ends - 1u) {
                    plan.words[commands + 5u * e + 1u] = 32u * w + uint(findLSB(ends)) + 1u;
                    e++;
                }
            }
        }
        started += chunk_starts;
        ended += chunk_ends;
    }
    memoryBarrierBuffer();
    barrier();
    for (uint k = lid; k < total_runs; k += GROUP) {
        uint at = commands + 5u * k;
        uint start = plan.words[at + (indexed ? 4u : 3u)] - first_instance;
        // Clamped to the range: a command never draws past it.
        uint end = min(plan.words[at + 1u], plan.words[job + 44u] + plan.words[job + 45u]);
        plan.words[at + 1u] = end > start ? end - start : 0u;
    }
    if (lid == 0u) {
        plan.words[counters + DRAWN] = total_runs;
    }
}
