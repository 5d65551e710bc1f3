// A shared list's GPU plan table as the table's cull and finishing passes read it
// (crates/picking-vk/src/gpu_plan/table_words.rs lays it out), included after the plan
// buffer is declared. The static words: rows of 15 (the model's first three rows, column by
// column; the ID, 2 words; the row's run), a bit per row that starts a run, runs of 13 (the
// command drawing all the run's rows, 5 words; the rows' local box, min 3 and max 3; their
// occluder mesh, index + 1; their chunk boxes, the first one's word from the occluder
// directory's, plus 1), then the occluder meshes' directory (per mesh 6 words, its sphere
// from the third) and triangles, then the chunk boxes (6 words each).
layout(std430, set = 1, binding = 0) readonly buffer TableWords {
    uint words[];
} table;

const uint TABLE_ROW_WORDS = 15u;
const uint RUN_WORDS = 13u;

// The frame's view-projection, written in f64 into the plan buffer from word `at` while
// recording.
dmat4 view_projection(uint at) {
    dmat4 vp;
    for (uint c = 0u; c < 4u; c++) {
        for (uint r = 0u; r < 4u; r++) {
            uint w = at + 8u * c + 2u * r;
            vp[c][r] = packDouble2x32(uvec2(plan.words[w], plan.words[w + 1u]));
        }
    }
    return vp;
}

// Table row `row`'s run (the row's last word).
uint row_run(uint row) {
    return table.words[TABLE_ROW_WORDS * row + 14u];
}

// The word of row `row`'s run: the runs follow the rows and their run-start bits (a table
// pair's job counts the table's rows).
uint run_word(uint job, uint row) {
    uint rows = plan.words[job + 46u];
    return TABLE_ROW_WORDS * rows + (rows + 31u) / 32u + RUN_WORDS * row_run(row);
}
