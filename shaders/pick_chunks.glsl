// Chunk culling of a table pair's surviving rows, included by
// shaders/pick_cull_finish_draws.comp after shaders/pick_occlusion.glsl: what
// crates/picking-vk/src/plan/chunks.rs does on the CPU. A run of a large mesh
// (crates/picking-vk/src/gpu_plan/chunk_boxes.rs) has a box per 64 triangles of its own index
// order; each surviving row draws only the spans of consecutive chunks whose boxes, under the
// row's matrix, meet the pair's region, a command a span, rows in order and each row's
// chunks in order (so every depth tie resolves as when drawn whole). Rows of runs without
// chunks take a command each, whole. A pair with more survivors than the workgroup has
// threads, more chunks than the bits below hold, or more spans than its commands, is finished
// by runs instead: the same result.

// Bit 5 of the job's occlusion flags: the pair's group has chunked runs; bit 6: its rows are
// hooked (they hold the model: a box goes through it, then the frame's f32 view-projection,
// as shaders/pick_cull_draws.comp tests the rows).
const uint CHUNKED = 32u;
const uint HOOKED = 64u;
// The most chunks a pair tests: a bit each in `run_start`, reused.
const uint MAX_CHUNKS = 32u * SHARED_RUNS;
// Per listed row, the word of its first chunk box: read once by the row's thread, so that a
// chunk's thread reads its box and its row's matrix without first waiting on the table.
shared uint row_boxes[GROUP];

// Lists the pair's survivors in row order in `survivor_rows` (thread k takes a block of
// consecutive cull workgroups), and returns how many there are (none listed where they pass
// SURVIVOR_LIST).
uint list_in_order(uint bits, uint n, uint summary) {
    uint lid = gl_LocalInvocationID.x;
    uint groups = n / 2u;
    uint per = (groups + GROUP - 1u) / GROUP;
    uint first = min(groups, lid * per);
    uint last = min(groups, first + per);
    uint own = 0u;
    for (uint g = first; g < last; g++) {
        if (has_survivor(summary, g)) {
            own += bitCount(bits_word(bits, n, 2u * g)) + bitCount(bits_word(bits, n, 2u * g + 1u));
        }
    }
    uvec3 totals;
    uint at = scan(uvec3(own, 0u, 0u), totals).x;
    if (totals.x <= SURVIVOR_LIST) {
        for (uint g = first; g < last && own > 0u; g++) {
            for (uint w = 2u * g; w < 2u * g + 2u && has_survivor(summary, g); w++) {
                for (uint b = bits_word(bits, n, w); b != 0u; b &= b - 1u) {
                    survivor_rows[at] = bit0 + 32u * w + uint(findLSB(b));
                    at++;
                }
            }
        }
    }
    barrier();
    return totals.x;
}

// The chunks of listed row `j`'s run (0: none, drawn whole), and the word of its first box.
uint row_chunks(uint job, uint j, out uint boxes) {
    uint row = survivor_rows[j];
    uint chunked = table.words[run_word(job, row) + 12u];
    boxes = plan.words[job + 50u] + chunked - 1u;
    return chunked == 0u ? 0u : (command_template(job, row).x + CHUNK_ELEMENTS - 1u) / CHUNK_ELEMENTS;
}

// The listed row whose slots hold flat slot `f`: the last whose first slot (`run_end`) is at
// most `f` (every listed row has one at least).
uint row_of_chunk(uint f, uint listed) {
    uint lo = 0u;
    uint hi = listed;
    while (hi - lo > 1u) {
        uint mid = (lo + hi) / 2u;
        if (run_end[mid] <= f) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// The flat slot after listed row `j`'s last (`total` slots in all).
uint row_end(uint j, uint listed, uint total) {
    return j + 1u < listed ? run_end[j + 1u] : total;
}

// Whether flat slot `f` is drawn (its bit: a chunk that meets the pair's region, or the one
// slot of a row without chunks).
bool chunk_meets(uint f) {
    return (run_start[f / 32u] & (1u << (f % 32u))) != 0u;
}

// Whether a span of drawn slots starts at flat slot `f`: drawn, and the slot before is not,
// or is another row's.
bool span_starts(uint f, uint listed) {
    return chunk_meets(f) && (f == 0u || !chunk_meets(f - 1u) || run_end[row_of_chunk(f, listed)] == f);
}

// Writes a command at word `at` drawing `count` elements from element `first` of the run's
// template `t`, for table row `instance` (counted from the group's first row).
void write_command(uint at, uvec3 t, uint first, uint count, uint instance, bool indexed) {
    plan.words[at] = count;
    plan.words[at + 1u] = 1u;
    plan.words[at + 2u] = t.y + first;
    plan.words[at + 3u] = indexed ? t.z : instance;
    plan.words[at + 4u] = indexed ? instance : 0u;
}

// The instance a span of `row` (counted from the group's first row) from chunk `start` on is
// drawn as, with its command at word `at`: the row itself from the first chunk; past it, the
// command's span row (after the slot's `gpu_plan_rows` rows, a row per command of the frame),
// a copy of the row whose last word is the span's first triangle. gl_PrimitiveID counts from
// a command's first triangle; shaders/pick_batched_detail.frag adds that word back, so that
// detail faces count from the draw's first, as when it is drawn whole. A command past the
// span rows draws its span from the row's first chunk (`start` becomes 0): more triangles,
// the same result.
uint span_instance(uint job, uint row, uint instance_base, inout uint start, uint at) {
    uint span = SPAN_ROWS + (at - FIRST_COMMAND_WORD) / 5u;
    if (span >= pc.pool.x) {
        start = 0u;
    }
    if (start == 0u) {
        return row - instance_base;
    }
    uint from = (row + row_delta) * ROW_WORDS;
    for (uint w = 0u; w < ROW_WORDS - 1u; w++) {
        frame.rows[span * ROW_WORDS + w] = frame.rows[from + w];
    }
    frame.rows[span * ROW_WORDS + ROW_WORDS - 1u] = start * (CHUNK_ELEMENTS / 3u);
    // The pick pass binds the group's rows at its window: instances count from there.
    return span - plan.words[job + 52u];
}

// Writes the command at word `at` of the span that starts at flat slot `f` (`total` slots):
// its row's chunks from there while they are drawn, or a row without chunks whole.
void write_span(uint job, uint f, uint total, uint listed, uint at, bool indexed, uint instance_base) {
    uint j = row_of_chunk(f, listed);
    uint first = run_end[j];
    uint end = row_end(j, listed, total);
    uint row = survivor_rows[j];
    uvec3 t = command_template(job, row);
    if (end - first == 1u) {
        write_command(at, t, 0u, t.x, row - instance_base, indexed);
        return;
    }
    uint last = f + 1u;
    while (last < end && chunk_meets(last)) {
        last++;
    }
    uint start = f - first;
    uint instance = span_instance(job, row, instance_base, start, at);
    write_command(at, t, start * CHUNK_ELEMENTS, min((last - first) * CHUNK_ELEMENTS, t.x) - start * CHUNK_ELEMENTS, instance, indexed);
}

// A thread a listed row: a pair with more survivors than the workgroup has threads is
// finished by runs (each scan below is a round of barriers, which lavapipe compiles slowly
// in loops).
bool finish_by_chunks(uint job, uint counters, uint commands, uint capacity, bool indexed, uint bits, uint n, uint summary, uint instance_base) {
    if ((plan.words[job + 47u] & CHUNKED) == 0u) {
        return false;
    }
    uint listed = list_in_order(bits, n, summary);
    if (listed > GROUP) {
        return false;
    }
    uint lid = gl_LocalInvocationID.x;
    row_delta = plan.words[job + 52u] - plan.words[job + 51u];
    // This thread's row's slots (its chunks; a row without chunks has one, drawn whole) and
    // its first flat slot (also in `run_end`), and the slots in all. Rows of chunks have at
    // least four (`MIN_CHUNKS`): one slot is a row without.
    uint boxes;
    uint chunks = lid < listed ? max(row_chunks(job, lid, boxes), 1u) : 0u;
    uvec3 totals;
    uint from = scan(uvec3(chunks, 0u, 0u), totals).x;
    uint total = totals.x;
    if (total > MAX_CHUNKS) {
        return false;
    }
    if (lid < listed) {
        run_end[lid] = from;
        row_boxes[lid] = boxes;
    }
    for (uint w = lid; w < (total + 31u) / 32u; w += GROUP) {
        run_start[w] = 0u;
    }
    barrier();
    // A thread per slot: a chunk's box under its row's matrix against the pair's region.
    vec4 region = job_vec4(job + 22u);
    bool small_region = max(region.z - region.x, region.w - region.y) <= 8.0;
    bool hooked = (plan.words[job + 47u] & HOOKED) != 0u;
    mat4 vp = hooked ? mat4(view_projection(VIEW_PROJECTION_WORD)) : mat4(1.0);
    // A point's proven hit also drops the chunks that lie wholly beyond it, as
    // shaders/pick_occlusion.glsl drops rows (hooked rows have no occlusion).
    bool behind_bound = !hooked && occlusion_bound < FAR_AWAY;
    bool larger = (plan.words[job + 47u] & 2u) != 0u;
    double rounding = double(uintBitsToFloat(plan.words[job + 48u]));
    for (uint f = lid; f < total; f += GROUP) {
        uint j = row_of_chunk(f, listed);
        bool whole = row_end(j, listed, total) - run_end[j] == 1u;
        bool meets = whole;
        if (!whole) {
            uint at = row_boxes[j] + CHUNK_WORDS * (f - run_end[j]);
            vec3 lo = vec3(uintBitsToFloat(table.words[at]), uintBitsToFloat(table.words[at + 1u]), uintBitsToFloat(table.words[at + 2u]));
            vec3 hi = vec3(uintBitsToFloat(table.words[at + 3u]), uintBitsToFloat(table.words[at + 4u]), uintBitsToFloat(table.words[at + 5u]));
            bool keep;
            mat4 row = mat4(row_matrix(survivor_rows[j]));
            vec4 rect = hooked ? screen_bounds(job, vp, lo, hi, row, keep) : screen_bounds(job, row, lo, hi, mat4(1.0), keep);
            // The outline only for a small region (a point's, a small radius disc's): over a
            // rectangle's tiles it cost more than it saved (an H100, run W).
            meets = bounds_meet_region(rect, keep, region) && (keep || !small_region || hull_meets_region(region, job_float(job + 26u)));
            // As a row is dropped: where its near key less the rounding lies beyond the bound.
            meets = meets && !(behind_bound && box_beyond(dmat4(row), dvec3(lo), dvec3(hi), larger, occlusion_bound + rounding));
        }
        if (meets) {
            atomicOr(run_start[f / 32u], 1u << (f % 32u));
        }
    }
    barrier();
    // The spans, a command each in slot order (rows in order, each row's spans in order): a
    // thread takes a block of consecutive slots. Finished by runs where they pass the pair's
    // commands.
    uint per = (total + GROUP - 1u) / GROUP;
    uint first = min(total, lid * per);
    uint last = min(total, first + per);
    uint spans = 0u;
    for (uint f = first; f < last; f++) {
        spans += span_starts(f, listed) ? 1u : 0u;
    }
    uint at = commands + 5u * scan(uvec3(spans, 0u, 0u), totals).x;
    if (totals.x > capacity) {
        return false;
    }
    for (uint f = first; f < last && spans > 0u; f++) {
        if (span_starts(f, listed)) {
            write_span(job, f, total, listed, at, indexed, instance_base);
            at += 5u;
        }
    }
    if (lid == 0u) {
        plan.words[counters + SURVIVORS] = listed;
        plan.words[counters + DRAWN] = totals.x;
        add_total(TOTAL_SURVIVORS, listed);
        add_total(TOTAL_DRAWN, totals.x);
    }
    return true;
}
