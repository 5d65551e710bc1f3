// Sure hits on a large occluder mesh by its chunks, included by shaders/pick_occlusion.glsl
// after `sure_far`: a mesh with chunk boxes (crates/picking-vk/src/gpu_plan/chunk_boxes.rs)
// has its triangles tested only in the chunks whose box, under the row's f32 matrix, comes
// within a pixel of the centre: a few of a mesh's hundreds. Skipping a chunk only forgoes a
// proof, as `may_cover` skipping a triangle does, so neither test needs to be conservative.
// Chunk c holds the occluder's triangles 64 c to 64 c + 63: both follow the mesh's index
// order.

// Chunks tested per occluder tried, the first in index order of those met; a pixel's ray
// meets a few (the near side and the far). Those past them are not tested (forgoing their
// proofs).
const uint OCCLUDER_CHUNKS = 32u;
// Words of a try's bits, a bit per chunk: the most chunks of a chunked occluder
// (`MAX_CHUNKED_OCCLUDER_TRIANGLES` in crates/picking-vk/src/gpu_plan/occluders.rs, 64
// triangles a chunk).
const uint CHUNK_BIT_WORDS = 32u;
// Triangles of a chunk, and its elements (indices or vertices).
const uint CHUNK_TRIANGLES = 64u;
const uint CHUNK_ELEMENTS = 3u * CHUNK_TRIANGLES;
// Words of a chunk's box: min 3, max 3.
const uint CHUNK_WORDS = 6u;
// Per try, a bit per chunk whose box may hold the sure hit: set in any order, the same bits.
shared uint occluder_chunk_bits[OCCLUDER_TRIES * CHUNK_BIT_WORDS];

// Whether occluder mesh `mesh` is tried by its chunks: past MAX_WHOLE_OCCLUDER triangles.
bool tried_by_chunks(uint mesh) {
    return occluder_triangles(mesh) > MAX_WHOLE_OCCLUDER;
}

// Whether a chunk's box (its words at `at`: min 3, max 3) under `m` may come within a pixel
// of `centre`: its window box does, or a corner lies at or behind the eye plane.
bool box_may_cover(uint at, mat4 m, vec2 centre, vec4 vp) {
    vec3 lo = vec3(uintBitsToFloat(table.words[at]), uintBitsToFloat(table.words[at + 1u]), uintBitsToFloat(table.words[at + 2u]));
    vec3 hi = vec3(uintBitsToFloat(table.words[at + 3u]), uintBitsToFloat(table.words[at + 4u]), uintBitsToFloat(table.words[at + 5u]));
    vec2 wlo = vec2(3.0e38);
    vec2 whi = vec2(-3.0e38);
    for (uint k = 0u; k < 8u; k++) {
        vec4 c = m * vec4((k & 1u) != 0u ? hi.x : lo.x, (k & 2u) != 0u ? hi.y : lo.y, (k & 4u) != 0u ? hi.z : lo.z, 1.0);
        if (!(c.w > 0.0)) {
            return true;
        }
        vec2 window = vp.xy + (c.xy / c.w + 1.0) * vp.zw * 0.5;
        wlo = min(wlo, window);
        whi = max(whi, window);
    }
    vec2 margin = vec2(1.0) + 1.0e-4 * max(abs(wlo), abs(whi));
    return all(greaterThan(centre, wlo - margin)) && all(lessThan(centre, whi + margin));
}

// The word of the first chunk box of tried row `row`'s mesh, and its chunks (0: none).
uint occluder_boxes(uint job, uint row, out uint boxes) {
    uint run = run_word(job, row);
    uint chunked = table.words[run + 12u];
    boxes = plan.words[job + 50u] + chunked - 1u;
    return chunked == 0u ? 0u : (table.words[run] + CHUNK_ELEMENTS - 1u) / CHUNK_ELEMENTS;
}

// Lists, for each of the `tries` rows `chosen` whose mesh passes MAX_WHOLE_OCCLUDER
// triangles and has chunk boxes, the chunks that may hold its sure hit, a thread per chunk.
// (Smaller meshes are tried whole: on an H100, listing the chunks of 960-triangle meshes
// first made no difference.) Every thread of the workgroup calls it.
void list_occluder_chunks(uint job, uint chosen[OCCLUDER_TRIES], uint tries, vec2 centre, vec4 vp) {
    uint lid = gl_LocalInvocationID.x;
    for (uint w = lid; w < OCCLUDER_TRIES * CHUNK_BIT_WORDS; w += GROUP) {
        occluder_chunk_bits[w] = 0u;
    }
    barrier();
    for (uint t = 0u; t < tries; t++) {
        uint mesh = table.words[run_word(job, chosen[t]) + 11u] - 1u;
        uint boxes;
        uint chunks = tried_by_chunks(mesh) ? occluder_boxes(job, chosen[t], boxes) : 0u;
        mat4 m = mat4(row_matrix(chosen[t]));
        for (uint c = lid; c < min(chunks, 32u * CHUNK_BIT_WORDS); c += GROUP) {
            if (box_may_cover(boxes + CHUNK_WORDS * c, m, centre, vp)) {
                atomicOr(occluder_chunk_bits[t * CHUNK_BIT_WORDS + c / 32u], 1u << (c % 32u));
            }
        }
    }
    barrier();
}

// The chunk of try `t`'s `n`-th set bit (counted from 0, in index order; `n` is less than
// the bits set).
uint nth_chunk(uint t, uint n) {
    for (uint w = 0u; w < CHUNK_BIT_WORDS; w++) {
        uint bits = occluder_chunk_bits[t * CHUNK_BIT_WORDS + w];
        uint here = uint(bitCount(bits));
        if (n < here) {
            for (uint k = 0u; k < n; k++) {
                bits &= bits - 1u;
            }
            return 32u * w + uint(findLSB(bits));
        }
        n -= here;
    }
    return 0u;
}

// As `sure_far`, for tried row `t` (`row`, its mesh `mesh`) whose chunks
// `list_occluder_chunks` marked: a thread per triangle of the first OCCLUDER_CHUNKS marked,
// in index order (so the proof, and what it drops, never depends on the atomics' order).
double sure_far_by_chunks(uint t, uint row, uint mesh, dvec2 centre, dvec4 vp, uint flags, bool larger) {
    Occluder o = occluder(row, mesh);
    vec2 centre32 = vec2(centre);
    vec4 vp32 = vec4(vp);
    double best = FAR_AWAY;
    uint listed = 0u;
    for (uint w = 0u; w < CHUNK_BIT_WORDS; w++) {
        listed += uint(bitCount(occluder_chunk_bits[t * CHUNK_BIT_WORDS + w]));
    }
    for (uint i = gl_LocalInvocationID.x; i < min(listed, OCCLUDER_CHUNKS) * CHUNK_TRIANGLES; i += GROUP) {
        uint triangle = CHUNK_TRIANGLES * nth_chunk(t, i / CHUNK_TRIANGLES) + i % CHUNK_TRIANGLES;
        if (triangle < o.count && may_cover(o.first + 9u * triangle, o.m32, centre32, vp32)) {
            best = min(best, sure_far_of(o.first + 9u * triangle, o.m, o.a, centre, vp, flags, larger));
        }
    }
    return best;
}
