// Occlusion of a table pair's rows at its point's pixel, included by
// shaders/pick_cull_finish_draws.comp (which declares `plan`, `table`, `frame`, `pc`, `bit0`,
// GROUP, ROW_WORDS, KEYS_WORD and `run_word`): what crates/picking-vk/src/plan/occlusion.rs does on
// the CPU. Once a surviving row surely covers the pixel centre (a sure hit: the test of
// crates/picking-vk/src/plan/sure_hit.rs, on the row's occluder mesh and the very f32 matrix
// the pick pass draws it with), every row whose box cannot come nearer than that hit loses
// the depth test wherever it is drawn, and its survivor bit is cleared: the result is the
// same. Depths are "keys": NDC depth, negated where nearer is larger; each survivor's near
// key is the one the cull pass stored (shaders/pick_near_key.glsl). The CPU sets the job's
// occlusion words only where every draw at the pixel tests depth the same way.

#include "pick_near_key.glsl"

// The GPU's f32 error in a vertex's clip coordinate, relative to the sum of its terms'
// magnitudes: as crates/picking-vk/src/plan/sure_hit bounds it.
const double VERTEX_CLIP_ROUNDING = 16.0 * F32_EPS;
// How far snapping can move a vertex, in pixels (1/32 px per axis at 4 sub-pixel bits).
const double SNAP_PX = 0.045;
// Words of an occluder mesh's directory entry (crates/picking-vk/src/gpu_plan/occluders.rs).
const uint DIRECTORY_WORDS = 6u;
// Occluders tried per pair, nearest box first.
const uint OCCLUDER_TRIES = 4u;
// The most triangles of an occluder mesh tried whole (without chunk boxes): as
// `MAX_OCCLUDER_TRIANGLES` in crates/picking-vk/src/gpu_plan/occluders.rs.
const uint MAX_WHOLE_OCCLUDER = 4096u;

shared double reduced_key[GROUP];
shared uint reduced_row[GROUP];

// The smallest `key` of the workgroup, and the `row` that goes with it (`at_row`).
double workgroup_min(double key, uint row, out uint at_row) {
    uint lid = gl_LocalInvocationID.x;
    reduced_key[lid] = key;
    reduced_row[lid] = row;
    barrier();
    for (uint d = GROUP / 2u; d > 0u; d >>= 1u) {
        if (lid < d && reduced_key[lid + d] < reduced_key[lid]) {
            reduced_key[lid] = reduced_key[lid + d];
            reduced_row[lid] = reduced_row[lid + d];
        }
        barrier();
    }
    double smallest = reduced_key[0];
    at_row = reduced_row[0];
    barrier();
    return smallest;
}

double table_double(uint at) {
    return double(uintBitsToFloat(table.words[at]));
}

// Where the pair's rows lie in the slot's rows, less its group's first row (wrapping).
uint row_delta;

// The row's model-view-projection as the pick pass draws it (f32, from the cull pass).
dmat4 row_matrix(uint row) {
    dmat4 m;
    uint at = (row + row_delta) * ROW_WORDS;
    for (uint c = 0u; c < 4u; c++) {
        for (uint r = 0u; r < 4u; r++) {
            m[c][r] = double(uintBitsToFloat(frame.rows[at + 4u * c + r]));
        }
    }
    return m;
}

// The row's near key, as the cull pass stored it among the slot's keys (-FAR_AWAY: none).
double row_key(uint row) {
    return stored_key(frame.rows[KEYS_WORD + row + row_delta]);
}

// A vertex in window coordinates, with bounds on how far the GPU may place it from there
// (in pixels before snapping, and in NDC depth).
struct WindowVertex {
    dvec2 at;
    double z;
    double err_px;
    double err_z;
};

// `p` under `m` (`a`: its magnitudes) in the window of viewport `vp`; false where it may be
// clipped (behind the eye, or past the depth range by less than the error).
bool to_window(dmat4 m, dmat4 a, dvec3 p, dvec4 vp, out WindowVertex v) {
    dvec4 c = m * dvec4(p, 1.0);
    dvec4 err = (a * dvec4(abs(p), 1.0)) * VERTEX_CLIP_ROUNDING;
    double w = c.w - err.w;
    if (!(w > 0.0 && c.z - err.z > 0.0 && c.z + err.z < w)) {
        return false;
    }
    dvec3 ndc = c.xyz / c.w;
    double half_w = vp.z * 0.5;
    double half_h = vp.w * 0.5;
    v.at = dvec2(vp.x + (ndc.x + 1.0) * half_w, vp.y + (ndc.y + 1.0) * half_h);
    v.z = ndc.z;
    // d(x/w) <= (|dx| + |x/w| |dw|) / w, and likewise for y and z.
    v.err_px = (err.x + abs(ndc.x) * err.w) / w * abs(half_w) + (err.y + abs(ndc.y) * err.w) / w * abs(half_h);
    v.err_z = (err.z + abs(ndc.z) * err.w) / w;
    return !(isnan(v.err_px) || isinf(v.err_px) || isnan(v.at.x) || isnan(v.at.y) || isinf(v.at.x) || isinf(v.at.y));
}

double cross2(dvec2 a, dvec2 b) {
    return a.x * b.y - a.y * b.x;
}

// Edge function of edge (p, q) at `centre`, less how much moving p and q by up to `move_px`
// can change it (the sign of the triangle's area given by `sign`).
double edge_margin(dvec2 p, dvec2 q, dvec2 centre, double move_px, double sign) {
    double e = cross2(q - p, centre - p) * sign;
    return e - (move_px * (length(centre - p) + length(centre - q)) + 2.0 * move_px * move_px);
}

// The farthest key the pixel can end with if the triangle covers `centre` whatever the
// rounding (not culled under the job's `flags`), else FAR_AWAY.
double covered_far(WindowVertex v0, WindowVertex v1, WindowVertex v2, dvec2 centre, uint flags, bool larger) {
    double move_px = max(max(v0.err_px, v1.err_px), v2.err_px) + SNAP_PX;
    dvec2 a = v0.at;
    dvec2 b = v1.at;
    dvec2 c = v2.at;
    double area2 = cross2(b - a, c - a);
    // Vulkan's polygon area is -area2 / 2 in framebuffer coordinates.
    bool front = (-area2 > 0.0) == ((flags & 16u) == 0u);
    uint cull = (flags >> 2u) & 3u;
    if ((cull & (front ? 1u : 2u)) != 0u) {
        return FAR_AWAY;
    }
    double sign = area2 > 0.0 ? 1.0 : -1.0;
    double m0 = edge_margin(b, c, centre, move_px, sign);
    double m1 = edge_margin(c, a, centre, move_px, sign);
    double m2 = edge_margin(a, b, centre, move_px, sign);
    if (!(m0 > 0.0 && m1 > 0.0 && m2 > 0.0 && area2 != 0.0)) {
        return FAR_AWAY;
    }
    // Screen-space barycentrics: window depth is affine in window x and y.
    double depth = (cross2(c - b, centre - b) * v0.z + cross2(a - c, centre - c) * v1.z + cross2(b - a, centre - a) * v2.z) / area2;
    dvec2 slope = dvec2((v1.z - v0.z) * (c.y - a.y) - (v2.z - v0.z) * (b.y - a.y), (v2.z - v0.z) * (b.x - a.x) - (v1.z - v0.z) * (c.x - a.x)) / area2;
    double err = max(max(v0.err_z, v1.err_z), v2.err_z) + (abs(slope.x) + abs(slope.y)) * 2.0 * move_px + 4.0 * F32_EPS * max(abs(depth), 1.0);
    double far_key = (larger ? -depth : depth) + err;
    return isnan(far_key) || isinf(far_key) ? FAR_AWAY : far_key;
}

// Whether the triangle at `at` may come near `centre` in the window, looked at in f32 (`m`
// the row's matrix, `vp` the viewport): within a pixel of its window box, its vertices in
// front of the eye. Only those take the exact f64 test; skipping one only forgoes a proof,
// and most of a mesh's triangles lie far from a pixel.
bool may_cover(uint at, mat4 m, vec2 centre, vec4 vp) {
    // The reads before any test: they do not wait on one another.
    vec3 p[3];
    for (uint k = 0u; k < 3u; k++) {
        uint v = at + 3u * k;
        p[k] = vec3(uintBitsToFloat(table.words[v]), uintBitsToFloat(table.words[v + 1u]), uintBitsToFloat(table.words[v + 2u]));
    }
    bool in_front = true;
    vec2 lo = vec2(3.0e38);
    vec2 hi = vec2(-3.0e38);
    for (uint k = 0u; k < 3u; k++) {
        vec4 c = m * vec4(p[k], 1.0);
        in_front = in_front && c.w > 0.0;
        vec2 window = vp.xy + (c.xy / c.w + 1.0) * vp.zw * 0.5;
        lo = min(lo, window);
        hi = max(hi, window);
    }
    vec2 margin = vec2(1.0) + 1.0e-4 * max(abs(lo), abs(hi));
    return in_front && all(greaterThan(centre, lo - margin)) && all(lessThan(centre, hi + margin));
}

// Triangles a thread looks at in f32 together (`sure_far`): their reads go out before the
// first test waits on them, so the mesh costs a few waits on memory instead of one a
// triangle.
const uint TRIANGLES_AT_ONCE = 4u;

// The farthest key the triangle at `at` leaves if it covers `centre` whatever the rounding
// (`m` the row's matrix, `a` its magnitudes), else FAR_AWAY.
double sure_far_of(uint at, dmat4 m, dmat4 a, dvec2 centre, dvec4 vp, uint flags, bool larger) {
    WindowVertex v[3];
    bool seen = true;
    for (uint k = 0u; k < 3u; k++) {
        dvec3 p = dvec3(table_double(at + 3u * k), table_double(at + 3u * k + 1u), table_double(at + 3u * k + 2u));
        seen = seen && to_window(m, a, p, vp, v[k]);
    }
    // A centre outside the triangle's window box cannot be inside it.
    dvec2 lo = min(min(v[0].at, v[1].at), v[2].at);
    dvec2 hi = max(max(v[0].at, v[1].at), v[2].at);
    if (seen && all(greaterThan(centre, lo)) && all(lessThan(centre, hi))) {
        return covered_far(v[0], v[1], v[2], centre, flags, larger);
    }
    return FAR_AWAY;
}

// The triangles of occluder mesh `mesh` (from the directory at `pc.pairs.w`).
uint occluder_triangles(uint mesh) {
    return table.words[pc.pairs.w + DIRECTORY_WORDS * mesh + 1u];
}

// Row `row`'s occluder mesh `mesh` as the sure-hit tests read it: the word of its first
// triangle, its triangles, and the row's matrix in f64, its magnitudes, and in f32 for the
// first look (converted once).
struct Occluder {
    uint first;
    uint count;
    dmat4 m;
    dmat4 a;
    mat4 m32;
};

Occluder occluder(uint row, uint mesh) {
    dmat4 m = row_matrix(row);
    uint first = pc.pairs.w + table.words[pc.pairs.w + DIRECTORY_WORDS * mesh];
    return Occluder(first, occluder_triangles(mesh), m, dmat4(abs(m[0]), abs(m[1]), abs(m[2]), abs(m[3])), mat4(m));
}

// This thread's share of a sure hit of row `row`'s occluder mesh `mesh`, tried whole: the
// farthest key the nearest of its triangles leaves, or FAR_AWAY.
double sure_far(uint row, uint mesh, dvec2 centre, dvec4 vp, uint flags, bool larger) {
    Occluder o = occluder(row, mesh);
    // The f32 look's inputs, converted once.
    vec2 centre32 = vec2(centre);
    vec4 vp32 = vec4(vp);
    double best = FAR_AWAY;
    for (uint base = gl_LocalInvocationID.x; base < o.count; base += TRIANGLES_AT_ONCE * GROUP) {
        bool near[TRIANGLES_AT_ONCE];
        for (uint u = 0u; u < TRIANGLES_AT_ONCE; u++) {
            // Past the mesh's end, its last triangle is read (and not tested).
            uint t = base + u * GROUP;
            near[u] = may_cover(o.first + 9u * min(t, o.count - 1u), o.m32, centre32, vp32) && t < o.count;
        }
        for (uint u = 0u; u < TRIANGLES_AT_ONCE; u++) {
            if (near[u]) {
                best = min(best, sure_far_of(o.first + 9u * (base + u * GROUP), o.m, o.a, centre, vp, flags, larger));
            }
        }
    }
    return best;
}

#include "pick_occluder_chunks.glsl"

// Whether cull workgroup `g` of the pair has a survivor (its summary bit; `summary` the
// summary's first word).
bool has_survivor(uint summary, uint g) {
    return (plan.words[summary + g / 32u] & (1u << (g % 32u))) != 0u;
}

// The occlusion lists a pair's survivors in shared memory, spread over the threads: they
// cluster in a few bit words (neighbouring rows), and a thread that walked a word's
// survivors one by one would wait on memory for each. A pair with more survivors than the
// list holds skips the occlusion: its rows are drawn, and the result is the same.
const uint SURVIVOR_LIST = 1024u;
shared uint survivor_rows[SURVIVOR_LIST];

// Lists the pair's survivors (`bits` and `n` its bit words, `summary` its first summary
// word) in `survivor_rows`, in no particular order, and returns how many there are (none
// listed where they pass SURVIVOR_LIST). Every thread of the workgroup calls it.
uint list_survivors(uint bits, uint n, uint summary) {
    uint lid = gl_LocalInvocationID.x;
    // Thread k takes cull workgroups k, k + GROUP, ... (their two bit words each).
    uint own = 0u;
    for (uint g = lid; 2u * g < n; g += GROUP) {
        if (has_survivor(summary, g)) {
            own += bitCount(bits_word(bits, n, 2u * g)) + bitCount(bits_word(bits, n, 2u * g + 1u));
        }
    }
    uvec3 totals;
    uint at = scan(uvec3(own, 0u, 0u), totals).x;
    if (totals.x <= SURVIVOR_LIST) {
        for (uint g = lid; 2u * g < n && own > 0u; g += GROUP) {
            if (has_survivor(summary, g)) {
                for (uint w = 2u * g; w < 2u * g + 2u; w++) {
                    for (uint b = bits_word(bits, n, w); b != 0u; b &= b - 1u) {
                        survivor_rows[at] = bit0 + 32u * w + uint(findLSB(b));
                        at++;
                    }
                }
            }
        }
    }
    barrier();
    return totals.x;
}

// The depth a point's pair proved hit (its bound, the D32 rounding added), FAR_AWAY where
// none: what lies wholly beyond it cannot be seen at the pixel. Set by `drop_occluded` for
// shaders/pick_chunks.glsl, which drops the chunks beyond it as this drops rows.
double occlusion_bound = FAR_AWAY;

// The pair's survivors (listed) are looked at twice, a thread per survivor: choosing
// occluders, then dropping. A survivor's near key is a read: the cull pass stored it.
void drop_occluded(uint job, uint counters, uint bits, uint n, uint summary) {
    uint flags = plan.words[job + 47u];
    if ((flags & 1u) == 0u) {
        return;
    }
    bool larger = (flags & 2u) != 0u;
    row_delta = plan.words[job + 52u] - plan.words[job + 51u];
    double rounding = double(uintBitsToFloat(plan.words[job + 48u]));
    double bound = double(uintBitsToFloat(plan.words[job + 49u]));
    dvec2 centre = dvec2(uintBitsToFloat(plan.words[job + 22u]), uintBitsToFloat(plan.words[job + 23u]));
    dvec4 vp = dvec4(uintBitsToFloat(plan.words[job + 27u]), uintBitsToFloat(plan.words[job + 28u]), uintBitsToFloat(plan.words[job + 29u]), uintBitsToFloat(plan.words[job + 30u]));
    uint lid = gl_LocalInvocationID.x;
    // This thread's nearest occluders among its survivors: rows with an occluder mesh and a
    // bounded box, nearest first.
    double keys[OCCLUDER_TRIES];
    uint candidates[OCCLUDER_TRIES];
    for (uint k = 0u; k < OCCLUDER_TRIES; k++) {
        keys[k] = FAR_AWAY;
        candidates[k] = 0u;
    }
    uint listed = list_survivors(bits, n, summary);
    if (listed > SURVIVOR_LIST) {
        return;
    }
    for (uint j = lid; j < listed; j += GROUP) {
        uint row = survivor_rows[j];
        uint mesh = table.words[run_word(job, row) + 11u];
        double key = row_key(row);
        if (mesh == 0u || key == -FAR_AWAY || !(key - rounding < keys[OCCLUDER_TRIES - 1u])) {
            continue;
        }
        uint k = OCCLUDER_TRIES - 1u;
        for (; k > 0u && keys[k - 1u] > key - rounding; k--) {
            keys[k] = keys[k - 1u];
            candidates[k] = candidates[k - 1u];
        }
        keys[k] = key - rounding;
        candidates[k] = row;
    }
    // The workgroup's nearest occluders, nearest first, while their boxes may lie nearer
    // than the bound. They are tried together, in one reduction: trying them one by one,
    // each against the bound the ones before proved, drops no more (an occluder whose box
    // lies beyond a proven hit cannot prove a nearer one), and waits on a reduction each.
    uint head = 0u;
    uint chosen[OCCLUDER_TRIES];
    uint tries = 0u;
    for (; tries < OCCLUDER_TRIES; tries++) {
        double near = workgroup_min(head < OCCLUDER_TRIES ? keys[head] : FAR_AWAY, head < OCCLUDER_TRIES ? candidates[head] : 0u, chosen[tries]);
        if (!(near < FAR_AWAY) || near >= bound) {
            break;
        }
        if (head < OCCLUDER_TRIES && keys[head] == near && candidates[head] == chosen[tries]) {
            head++;
        }
    }
    list_occluder_chunks(job, chosen, tries, vec2(centre), vec4(vp));
    double nearest_far = FAR_AWAY;
    for (uint t = 0u; t < tries; t++) {
        uint mesh = table.words[run_word(job, chosen[t]) + 11u] - 1u;
        // None of its chunks is marked where the table's chunk boxes ran out: its proof is
        // forgone.
        if (tried_by_chunks(mesh)) {
            nearest_far = min(nearest_far, sure_far_by_chunks(t, chosen[t], mesh, centre, vp, flags, larger));
        } else {
            nearest_far = min(nearest_far, sure_far(chosen[t], mesh, centre, vp, flags, larger));
        }
    }
    if (tries > 0u) {
        uint unused;
        // The D32 depth buffer's rounding added.
        bound = min(bound, workgroup_min(nearest_far, 0u, unused) + rounding);
    }
    // No bound (+inf, or none proved): nothing to drop.
    if (!(bound < FAR_AWAY)) {
        return;
    }
    occlusion_bound = bound;
    uint dropped = 0u;
    for (uint j = lid; j < listed; j += GROUP) {
        uint row = survivor_rows[j];
        double key = row_key(row);
        if (key != -FAR_AWAY && key - rounding > bound) {
            // Threads of one bit word clear their bits together.
            uint c = row - bit0;
            atomicAnd(plan.words[bits + c / 32u], ~(1u << (c % 32u)));
            dropped++;
        }
    }
    if (dropped > 0u) {
        atomicAdd(plan.words[counters + OCCLUDED], dropped);
        add_total(TOTAL_OCCLUDED, dropped);
    }
    memoryBarrierBuffer();
    barrier();
}
