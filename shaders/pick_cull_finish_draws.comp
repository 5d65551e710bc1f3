#version 450
// GPU planning of a shared list's plain draws, after shaders/pick_cull_draws.comp and a
// barrier: as shaders/pick_cull_finish.comp, where a pair's candidates are table rows (draws)
// and a run of consecutive surviving draws is one command only while their commands (count,
// first index or vertex, vertex offset) are equal: the table marks each row whose command
// differs from the row before it. A run's command is its first row's, drawing as many
// instances (rows) as the run has. On overflow the pair's fallback draws the group's run
// commands, all its rows (`TABLE_FALLBACK` becomes the range's row count, at least its runs),
// unless its survivors fit the slot's compacted rows (shaders/pick_compact.glsl).
// Before the runs are counted, a point's pair drops the rows that lie behind a sure hit
// (shaders/pick_occlusion.glsl), where the CPU allowed it; a pair whose group has chunked
// runs then draws its survivors by chunks where it can (shaders/pick_chunks.glsl).
#extension GL_GOOGLE_include_directive : require

#include "pick_cull_finish.glsl"

// The table (`pc.pairs.z` is the word of its run-start bits, `pc.pairs.w` its occluder
// meshes' directory).
#include "pick_table.glsl"

// The slot's rows as the cull pass wrote them (`DrawRow`: the model-view-projection first),
// each group at its window; then a span row per command of the frame, which
// shaders/pick_chunks.glsl writes; then the compacted rows shaders/pick_compact.glsl writes;
// then a near key per row (`gpu_plan::RowsLayout`).
layout(std430, set = 1, binding = 1) buffer FrameRows {
    uint rows[];
} frame;

const uint ROW_WORDS = 20u;
// The slot's first span row (after `gpu_plan_rows` rows), the plan buffer's first command
// word, the word of the first near key, and the word of the frame's view-projection: fixed by
// the configuration, pushed rather than specialized (lavapipe would compile the pass once per
// configuration).
#define SPAN_ROWS pc.words.x
#define FIRST_COMMAND_WORD pc.words.y
#define KEYS_WORD pc.words.z
#define VIEW_PROJECTION_WORD pc.words.w
const uint OCCLUDED = 4u;

#include "pick_occlusion.glsl"
#include "pick_screen_bounds.glsl"
#include "pick_chunks.glsl"
#include "pick_compact.glsl"

// A table's pairs are never walked (their job's word 53 is 0): no read for it.
bool walked(uint job) {
    return false;
}

uint template_starts(uint w) {
    // Bit 0 is a table row of a whole 64-row cull workgroup: a word's rows are a bit word's.
    return table.words[pc.pairs.z + bit0 / 32u + w];
}

uvec3 command_template(uint job, uint candidate) {
    uint at = run_word(job, candidate);
    bool indexed = plan.words[job + 40u] != 0u;
    return uvec3(table.words[at], table.words[at + 2u], indexed ? table.words[at + 3u] : 0u);
}

void overflow(uint job, uint counters) {
    plan.words[counters + TABLE_FALLBACK] = plan.words[job + 45u];
    add_total(TOTAL_FALLBACKS, uint(plan.words[job + 45u] != 0u));
}
