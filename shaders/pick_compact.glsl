// Compaction of a table pair's survivors, included by shaders/pick_cull_finish_draws.comp
// after shaders/pick_chunks.glsl: where a pair's runs of consecutive surviving rows pass its
// share of the commands (a rectangle tile over thousands of strewn rows has a run per
// survivor), its survivors' rows are copied, in row order, into the slot's compacted rows,
// and the pair draws them with a command per table run they belong to (typically one per
// mesh), instances counting through the copies. Row order is kept, so depth ties resolve as
// when the group is drawn whole. The compacted rows are taken by need: a pair takes as many
// as it has survivors, from a count of those the frame's pairs took (`pc.pool.z`, zeroed by
// the CPU). A pair with more than one chunk of summary words, more table runs among its
// survivors than commands, or more survivors than the compacted rows have left, falls back
// to its group's whole rows instead: the same result.

const uint COMPACTED = 5u;
const uint NO_RUN = 0xffffffffu;
// The pair's first compacted row, counted from the slot's first compacted row.
shared uint compact_base;

// This thread's survivors (its summary word `mask`): the first's run, the last's, and how
// many times the run changes from one to the next.
uvec3 survivor_runs(uint bits, uint n, uint mask) {
    uint lid = gl_LocalInvocationID.x;
    uvec3 runs = uvec3(NO_RUN, NO_RUN, 0u);
    for (; mask != 0u; mask &= mask - 1u) {
        uint group_word = 2u * (32u * lid + uint(findLSB(mask)));
        for (uint w = group_word; w < group_word + 2u; w++) {
            for (uint b = bits_word(bits, n, w); b != 0u; b &= b - 1u) {
                uint run = row_run(bit0 + 32u * w + uint(findLSB(b)));
                runs.x = runs.x == NO_RUN ? run : runs.x;
                runs.z += runs.y != NO_RUN && run != runs.y ? 1u : 0u;
                runs.y = run;
            }
        }
    }
    return runs;
}

// Takes `survivors` compacted rows for the pair (thread 0), or none where too few are left.
void take_rows(uint survivors) {
    if (gl_LocalInvocationID.x == 0u) {
        uint seen = atomicAdd(plan.words[pc.pool.z], 0u);
        compact_base = NO_RUN;
        while (seen + survivors <= pc.pool.y) {
            uint was = atomicCompSwap(plan.words[pc.pool.z], seen, seen + survivors);
            if (was == seen) {
                compact_base = seen;
                break;
            }
            seen = was;
        }
    }
    barrier();
}

bool compact_survivors(uint job, uint counters, uint commands, uint capacity, bool indexed, uint bits, uint n, uint summaries, uint first_mask, uint before, uint survivors) {
    if (summaries > GROUP || survivors == 0u || survivors > pc.pool.y) {
        return false;
    }
    uint lid = gl_LocalInvocationID.x;
    uvec3 runs = survivor_runs(bits, n, first_mask);
    // The last run before this thread's survivors: runs rise with rows, so the largest of the
    // threads before it (stored plus one; 0: no survivor).
    run_end[lid] = runs.y == NO_RUN ? 0u : runs.y + 1u;
    barrier();
    uint last_before = 0u;
    for (uint t = 0u; t < lid; t++) {
        last_before = max(last_before, run_end[t]);
    }
    bool continues = runs.x != NO_RUN && last_before == runs.x + 1u;
    // This thread's commands: a run per change, and one for its first survivor's run unless
    // the threads before it opened it.
    uint own = runs.x == NO_RUN ? 0u : runs.z + (continues ? 0u : 1u);
    uvec3 totals;
    uint k = scan(uvec3(own, 0u, 0u), totals).x;
    uint drawn = totals.x;
    if (drawn > capacity) {
        return false;
    }
    take_rows(survivors);
    if (compact_base == NO_RUN) {
        return false;
    }
    // Each survivor's row copied at its rank; a command where its run opens, whose first
    // instance is the copy (the pick pass binds the group's rows at its window).
    uint window = plan.words[job + 52u];
    uint delta = window - plan.words[job + 51u];
    uint first_row = pc.pool.x + compact_base;
    uint rank = before;
    uint last = continues ? runs.x : NO_RUN;
    for (uint mask = first_mask; mask != 0u; mask &= mask - 1u) {
        uint group_word = 2u * (32u * lid + uint(findLSB(mask)));
        for (uint w = group_word; w < group_word + 2u; w++) {
            for (uint b = bits_word(bits, n, w); b != 0u; b &= b - 1u) {
                uint row = bit0 + 32u * w + uint(findLSB(b));
                uint to = (first_row + rank) * ROW_WORDS;
                uint from = (row + delta) * ROW_WORDS;
                for (uint r = 0u; r < ROW_WORDS; r++) {
                    frame.rows[to + r] = frame.rows[from + r];
                }
                uint run = row_run(row);
                if (run != last) {
                    uint at = commands + 5u * k;
                    uvec3 t = command_template(job, row);
                    plan.words[at] = t.x;
                    plan.words[at + 2u] = t.y;
                    plan.words[at + 3u] = indexed ? t.z : first_row + rank - window;
                    plan.words[at + 4u] = indexed ? first_row + rank - window : 0u;
                    k++;
                    last = run;
                }
                rank++;
            }
        }
    }
    memoryBarrierBuffer();
    barrier();
    // A command's instances: up to the next command's first, or the pair's last survivor.
    uint first_word = indexed ? 4u : 3u;
    for (uint c = lid; c < drawn; c += GROUP) {
        uint at = commands + 5u * c;
        uint end = c + 1u < drawn ? plan.words[at + 5u + first_word] : first_row + survivors - window;
        plan.words[at + 1u] = end - plan.words[at + first_word];
    }
    if (lid == 0u) {
        plan.words[counters + DRAWN] = drawn;
        plan.words[counters + COMPACTED] = 1u;
        add_total(TOTAL_DRAWN, drawn);
        add_total(TOTAL_COMPACTED, 1u);
    }
    return true;
}
