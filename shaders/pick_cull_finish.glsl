// Shared by shaders/pick_cull_finish.comp (instances) and shaders/pick_cull_finish_draws.comp
// (a shared list's draws), which define what differs: which survivors start a run beyond
// those after a non-survivor (`template_starts`), a run's command template, and what an
// overflow sets.

// The workgroup's threads: a power of two the picker chooses from the device's limits
// (`gpu_plan::finish_group`). One workgroup finishes a pair, so its threads are all that hide
// the latency of its reads: more threads, fewer rounds of dependent reads each.
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint GROUP = 64u;

layout(push_constant) uniform FinishPush {
    uvec4 pairs; // (pairs, the first, the table's run-start bits (draws), the occluder directory (draws))
    uvec4 words; // (draws: the first span row, the first command's word, the first near key's word, the view-projection's word)
    uvec4 pool; // (draws: the first compacted row, how many, the word counting those taken; the frame's totals' word)
} pc;

layout(std430, set = 0, binding = 0) buffer PlanWords {
    uint words[];
} plan;

const uint JOB_WORDS = 54u;
const uint SURVIVORS = 0u;
const uint TABLE_FALLBACK = 1u;
const uint DRAWN = 2u;

// The frame's totals over its pairs, which the host reads (`GpuPlanKit::read_back`): a few
// words wherever the plan buffer lies (device-local memory costs the host a round trip over
// the bus a word), added where a pair's counter is written.
const uint TOTAL_SURVIVORS = 0u;
const uint TOTAL_DRAWN = 1u;
const uint TOTAL_OCCLUDED = 2u;
const uint TOTAL_COMPACTED = 3u;
const uint TOTAL_FALLBACKS = 4u;

void add_total(uint total, uint value) {
    if (value != 0u) {
        atomicAdd(plan.words[pc.pool.w + total], value);
    }
}

// The candidate of the pair's bit 0 (the instance, or the table row).
uint bit0;

// Whether the pair is walked (its job's word 53): nothing to finish.
bool walked(uint job);
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
// Writes the pair's commands by chunks of its survivors' triangles where it can (a table
// group with chunked runs), and returns whether it did; else the runs below are counted.
// Every thread of the workgroup calls it, with the job's words read below.
bool finish_by_chunks(uint job, uint counters, uint commands, uint capacity, bool indexed, uint bits, uint n, uint summary, uint instance_base);
// Where the pair's runs pass its commands: writes its commands over compacted copies of its
// survivors' rows where it can (a table pair), and returns whether it did. Every thread of
// the workgroup calls it: `first_mask` is its summary word (one chunk of them), `before` its
// survivors before its words, `survivors` the pair's.
bool compact_survivors(uint job, uint counters, uint commands, uint capacity, bool indexed, uint bits, uint n, uint summaries, uint first_mask, uint before, uint survivors);

shared uvec3 partial[GROUP];

// The exclusive prefix sums of `v` over the workgroup's threads; `total` gets the sums.
uvec3 scan(uvec3 v, out uvec3 total) {
    uint lid = gl_LocalInvocationID.x;
    partial[lid] = v;
    barrier();
    for (uint d = 1u; d < GROUP; d <<= 1u) {
        uvec3 add = lid >= d ? partial[lid - d] : uvec3(0u);
        barrier();
        partial[lid] += add;
        barrier();
    }
    uvec3 inclusive = partial[lid];
    total = partial[GROUP - 1u];
    barrier();
    return inclusive - v;
}

// Runs up to this many pass their starts and ends to the threads that write their counts
// through shared memory; more, through the plan buffer.
const uint SHARED_RUNS = 1024u;
shared uint run_start[SHARED_RUNS];
shared uint run_end[SHARED_RUNS];

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
    // A walked pair's one command was counted by the cull pass (shaders/pick_walk.glsl).
    if (walked(job)) {
        return;
    }
    // Every job word the pass needs, read together: the pass is a chain of reads that wait on
    // each other, and reads that do not wait together.
    uint first_instance = plan.words[job + 31u];
    uint count = plan.words[job + 32u];
    uint counters = plan.words[job + 33u];
    uint commands = plan.words[job + 34u];
    uint capacity = plan.words[job + 35u];
    bool indexed = plan.words[job + 40u] != 0u;
    uint bits = plan.words[job + 41u];
    uint summary = plan.words[job + 42u];
    // Commands count instances from this one: a table group's first row (the pick pass binds
    // the group's rows there), 0 for instances.
    uint instance_base = plan.words[job + 51u];
    // The range's end, counted from bit 0: a command never draws past it.
    uint range_end = plan.words[job + 44u] + plan.words[job + 45u];
    // The bits cover whole cull workgroups from the instance of bit 0; the range lies in them.
    bit0 = first_instance;
    // The cull pass wrote two words per 64 instances, and a summary bit per 64 instances
    // with a survivor: only those words are read (a pick's pair has a few).
    uint groups = (count + 63u) / 64u;
    uint n = 2u * groups;
    uint summaries = (groups + 31u) / 32u;
    drop_occluded(job, counters, bits, n, summary);
    if (finish_by_chunks(job, counters, commands, capacity, indexed, bits, n, summary, instance_base)) {
        return;
    }
    // A thread takes summary words lid, lid + GROUP, ...; where there is one chunk of them (a
    // word a thread), its counts below are also its chunk's.
    uint first_mask = lid < summaries ? plan.words[summary + lid] : 0u;
    uvec3 own = count_groups(bits, n, first_mask, 32u * lid);
    for (uint s = lid + GROUP; s < summaries; s += GROUP) {
        own += count_groups(bits, n, plan.words[summary + s], 32u * s);
    }
    // (runs started, runs ended, survivors) before this thread's words, and in all.
    uvec3 totals;
    uvec3 before = scan(own, totals);
    uint total_runs = totals.x;
    if (lid == 0u) {
        plan.words[counters + SURVIVORS] = totals.z;
        add_total(TOTAL_SURVIVORS, totals.z);
    }
    if (total_runs > capacity) {
        if (compact_survivors(job, counters, commands, capacity, indexed, bits, n, summaries, first_mask, before.z, totals.z)) {
            return;
        }
        if (lid == 0u) {
            plan.words[counters + DRAWN] = 0u;
            overflow(job, counters);
        }
        return;
    }
    // Command k of a run: the draw's template with the run's first instance; its instance
    // count is the run's end less its start, written once both are known. The thread that
    // finds a run's start and the one that finds its end (a run may cross words, threads and
    // chunks) both find k as the run's rank among starts or ends: the k-th start and the k-th
    // end bound the same run. A thread takes a summary word's workgroups, in order.
    bool in_shared = total_runs <= SHARED_RUNS;
    // Runs started and ended before the chunk (a run may end in a later chunk).
    uint started = 0u;
    uint ended = 0u;
    for (uint chunk = 0u; chunk < summaries; chunk += GROUP) {
        uint s = chunk + lid;
        uint mask = first_mask;
        uvec3 ranks = before;
        uvec3 chunk_totals = totals;
        if (summaries > GROUP) {
            mask = s < summaries ? plan.words[summary + s] : 0u;
            ranks = scan(count_groups(bits, n, mask, 32u * s), chunk_totals);
        }
        uint k = started + ranks.x;
        uint e = ended + ranks.y;
        for (; mask != 0u; mask &= mask - 1u) {
            uint group_word = 2u * (32u * s + uint(findLSB(mask)));
            for (uint w = group_word; w < group_word + 2u; w++) {
                for (uint starts = run_starts(bits, n, w); starts != 0u; starts &= starts - 1u) {
                    uint at = commands + 5u * k;
                    uint start = 32u * w + uint(findLSB(starts));
                    uint instance = first_instance + start;
                    uvec3 run = command_template(job, instance);
                    plan.words[at] = run.x;
                    plan.words[at + 2u] = run.y;
                    plan.words[at + 3u] = indexed ? run.z : instance - instance_base;
                    plan.words[at + 4u] = indexed ? instance - instance_base : 0u;
                    if (in_shared) {
                        run_start[k] = start;
                    }
                    k++;
                }
                for (uint ends = run_ends(bits, n, w); ends != 0u; ends &= ends - 1u) {
                    uint end = 32u * w + uint(findLSB(ends)) + 1u;
                    if (in_shared) {
                        run_end[e] = end;
                    } else {
                        plan.words[commands + 5u * e + 1u] = end;
                    }
                    e++;
                }
            }
        }
        started += chunk_totals.x;
        ended += chunk_totals.y;
    }
    if (in_shared) {
        barrier();
    } else {
        memoryBarrierBuffer();
        barrier();
    }
    for (uint k = lid; k < total_runs; k += GROUP) {
        uint at = commands + 5u * k;
        uint start = in_shared ? run_start[k] : plan.words[at + (indexed ? 4u : 3u)] - (first_instance - instance_base);
        uint end = min(in_shared ? run_end[k] : plan.words[at + 1u], range_end);
        plan.words[at + 1u] = end > start ? end - start : 0u;
    }
    if (lid == 0u) {
        plan.words[counters + DRAWN] = total_runs;
        add_total(TOTAL_DRAWN, total_runs);
    }
}
