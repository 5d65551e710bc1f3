#version 450
// GPU planning of a shared list's plain draws (crates/picking-vk/src/gpu_plan/table.rs): a
// dispatch per group of the list's table (consecutive draws that share their bindings), a
// thread per table row (a draw). Each thread composes its draw's model-view-projection in
// f64 exactly as the CPU does (`CameraSnapshot::model_view_projection`: the view-projection
// times the model, each column a sum taken left to right, rounded once to f32), writes it with
// the draw's ID and snapshot index as the row the batched vertex shader reads, then tests the
// draw's box under that matrix against every pair of the group, as shaders/pick_cull.comp
// does for instances. Where a pair with occlusion keeps the row, it also stores the row's
// near key (shaders/pick_near_key.glsl) among the slot's keys, after its rows.
// shaders/pick_cull_finish_draws.comp turns the bits into commands.
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 64) in;

layout(push_constant) uniform CullDrawsPush {
    uvec4 pairs; // (first pair of this group, pairs, first workgroup, the view-projection's word)
    uvec4 rows;  // (the group's first row, its rows, the snapshot index of row 0, its window)
    uvec4 kind;  // (hooked, the word of the first near key, unused...)
} pc;

// The slot's rows, as the batched vertex shader reads them (`DrawRow`: model-view-projection,
// or a hooked group's model; ID; snapshot index; primitive base, 0 here): the frame's groups
// each at their window. Then the span rows (shaders/pick_chunks.glsl), then a near key per
// row, from word KEYS_WORD (`gpu_plan::RowsLayout`).
layout(std430, set = 1, binding = 1) writeonly buffer FrameRows {
    uint rows[];
} frame;

const uint ROW_WORDS = 20u;
#define KEYS_WORD pc.kind.y

#define CULL_NEAR_KEYS
#include "pick_cull.glsl"
#include "pick_table.glsl"
#include "pick_near_key.glsl"

float table_float(uint at) {
    return uintBitsToFloat(table.words[at]);
}

// The draw's model-view-projection, composed in f64 exactly as the CPU does
// (`CameraSnapshot::model_view_projection`).
mat4 compose(dmat4 vp, mat4 model) {
    mat4 mvp;
    for (uint c = 0u; c < 4u; c++) {
        dvec4 m = dvec4(model[c]);
        // `precise` keeps each product and sum rounded on its own (no fused multiply-add),
        // as the CPU computes them. Per component: lavapipe (Mesa 25.0) miscompiles a
        // `precise dvec4` sum.
        for (uint r = 0u; r < 4u; r++) {
            precise double sum = vp[0][r] * m.x;
            sum = sum + vp[1][r] * m.y;
            sum = sum + vp[2][r] * m.z;
            sum = sum + vp[3][r] * m.w;
            mvp[c][r] = float(sum);
        }
    }
    return mvp;
}

void main() {
    uint group = pc.pairs.z + gl_WorkGroupID.x;
    uint i = 64u * group + gl_LocalInvocationID.x;
    bool mine = i >= pc.rows.x && i - pc.rows.x < pc.rows.y;
    bool keep = false;
    vec4 rect = vec4(3.0e38, 3.0e38, -3.0e38, -3.0e38);
    // The row's matrix, box and words in the slot's rows, for its near key.
    mat4 mvp = mat4(0.0);
    // A hooked group's rows carry the model: hooked shaders work in world space (the vertex
    // goes through the model, then the f32 view-projection, as the CPU's batched rows do).
    bool hooked = pc.kind.x != 0u;
    vec3 lo = vec3(0.0);
    vec3 hi = vec3(0.0);
    uint row = 0u;
    if (mine) {
        uint at = i * TABLE_ROW_WORDS;
        mat4 model;
        for (uint c = 0u; c < 4u; c++) {
            model[c] = vec4(table_float(at + 3u * c), table_float(at + 3u * c + 1u), table_float(at + 3u * c + 2u), c == 3u ? 1.0 : 0.0);
        }
        dmat4 vp = view_projection(pc.pairs.w);
        // A row the request's ignore rules leave out (its bit after the view-projection) is
        // drawn nowhere: its matrix puts every vertex behind the eye (w = -1, clipped), or a
        // hooked row's ID is 0 (its fragments are discarded), and it survives no pair.
        bool ignored = (plan.words[pc.pairs.w + 32u + i / 32u] & (1u << (i % 32u))) != 0u;
        mvp[3][3] = -1.0;
        if (hooked) {
            mvp = mat4(vp);
        } else if (!ignored) {
            mvp = compose(vp, model);
        }
        mat4 drawn = hooked ? model : mvp;
        // The group's rows lie at its window in the slot's rows.
        row = (pc.rows.w + i - pc.rows.x) * ROW_WORDS;
        for (uint c = 0u; c < 4u; c++) {
            for (uint r = 0u; r < 4u; r++) {
                frame.rows[row + 4u * c + r] = floatBitsToUint(drawn[c][r]);
            }
        }
        bool no_id = hooked && ignored;
        frame.rows[row + 16u] = no_id ? 0u : table.words[at + 12u];
        frame.rows[row + 17u] = no_id ? 0u : table.words[at + 13u];
        frame.rows[row + 18u] = pc.rows.z + i;
        frame.rows[row + 19u] = 0u;
        if (pc.pairs.y > 0u && !ignored) {
            uint job = pc.pairs.x * JOB_WORDS;
            uint run = run_word(job, i);
            lo = vec3(table_float(run + 5u), table_float(run + 6u), table_float(run + 7u));
            hi = vec3(table_float(run + 8u), table_float(run + 9u), table_float(run + 10u));
            // A hooked row's box goes through the model first, rounded, as its vertices do.
            rect = screen_bounds(job, mvp, lo, hi, hooked ? model : mat4(1.0), keep);
            // A row with an occluder mesh is tested by its sphere too (the directory's entry).
            uint mesh = table.words[run + 11u];
            if (mesh != 0u) {
                uint entry = plan.words[job + 50u] + 6u * (mesh - 1u) + 2u;
                cull_sphere = vec4(table_float(entry), table_float(entry + 1u), table_float(entry + 2u), table_float(entry + 3u));
                cull_mvp = mvp;
                has_sphere = true;
            }
        }
    }
    test_pairs(group, i, rect, keep, pc.pairs.x, pc.pairs.y);
    // The row's near key, among the keys, where a pair with occlusion keeps it: computed
    // here once, by a thread per row, rather than by each pair's one finishing workgroup
    // (none where those pairs order depth both ways, which one frame's camera never does,
    // nor for a hooked row, which the CPU gives no occlusion).
    if (mine) {
        uint key = 0xFF800000u;
        if (!hooked && (near_key_ways == 1u || near_key_ways == 2u)) {
            key = key_word(box_near_key(dmat4(mvp), dvec3(lo), dvec3(hi), near_key_ways == 2u));
        }
        frame.rows[KEYS_WORD + row / ROW_WORDS] = key;
    }
}
