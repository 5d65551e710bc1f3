// Shared by shaders/pick_cull.comp (instances) and shaders/pick_cull_draws.comp (the draws of
// a shared list): the plan buffer, a pair's job words, a candidate's screen bounds, and the
// rounds that test a candidate against every pair of its dispatch and write the survivor bits.
// Job words as in crates/picking-vk/src/gpu_plan/layout.rs.


layout(std430, set = 0, binding = 0) buffer PlanWords {
    uint words[];
} plan;

const uint JOB_WORDS = 54u;
// The frame's totals (crates/picking-vk/src/gpu_plan/layout.rs, `total`).
const uint TOTAL_SURVIVORS = 0u;
const uint TOTAL_DRAWN = 1u;

// Pairs tested per round: their survivor bits fit `survived`.
const uint ROUND = 16u;
// This workgroup's survivor bits for the round's pairs: for pair q of the round, instance k
// of the workgroup is bit k % 32 of word 2q + k / 32.
shared uint survived[2u * ROUND];

// The candidate's bounding sphere (local centre, radius) and the matrix it is drawn with,
// where it has one (`has_sphere`: a table row with an occluder mesh).
vec4 cull_sphere;
mat4 cull_mvp;
bool has_sphere = false;

#ifdef CULL_NEAR_KEYS
// How the pairs with occlusion that keep the candidate order depth (their job's occlusion
// flags): bit 0 set by one where nearer is smaller, bit 1 by one where it is larger. The
// candidate's near key is wanted where one does.
uint near_key_ways = 0u;
#endif

#include "pick_screen_bounds.glsl"

// Whether the candidate's sphere (`has_sphere`) may reach the pixel centres `region` padded
// by `pad` (in the window of `viewport`): false only when all of it lies beyond one side
// plane of the region's sub-frustum (x >= lo w, x <= hi w, and likewise y, in clip space).
// That holds whatever the sign of w: a covered pixel's fragment has w > 0 and x / w within
// each side.
bool sphere_meets_frustum(vec4 region, float pad, vec4 viewport) {
    if (!has_sphere) {
        return true;
    }
    vec2 a = (region.xy - vec2(pad) - viewport.xy) / viewport.zw * 2.0 - 1.0;
    vec2 b = (region.zw + vec2(pad) - viewport.xy) / viewport.zw * 2.0 - 1.0;
    vec2 lo = min(a, b);
    vec2 hi = max(a, b);
    // Clip x, y and w as affine functions of the local point.
    vec4 rx = vec4(cull_mvp[0][0], cull_mvp[1][0], cull_mvp[2][0], cull_mvp[3][0]);
    vec4 ry = vec4(cull_mvp[0][1], cull_mvp[1][1], cull_mvp[2][1], cull_mvp[3][1]);
    vec4 rw = vec4(cull_mvp[0][3], cull_mvp[1][3], cull_mvp[2][3], cull_mvp[3][3]);
    vec4 planes[4] = vec4[4](rx - lo.x * rw, hi.x * rw - rx, ry - lo.y * rw, hi.y * rw - ry);
    // The magnitudes of each plane's terms as the vertex shader computes them (clip x or y,
    // and w times the bound, each rounded on its own): the rounding scales with these, not
    // with the plane, whose terms may cancel.
    vec4 terms[4] = vec4[4](abs(rx) + abs(lo.x) * abs(rw), abs(rx) + abs(hi.x) * abs(rw), abs(ry) + abs(lo.y) * abs(rw), abs(ry) + abs(hi.y) * abs(rw));
    vec3 c = cull_sphere.xyz;
    float r = cull_sphere.w;
    for (uint k = 0u; k < 4u; k++) {
        vec4 p = planes[k];
        // The plane's largest value over the sphere, and a bound on its f32 rounding.
        float reach = dot(p.xyz, c) + r * length(p.xyz) + p.w;
        float slack = 1.0e-5 * (dot(terms[k].xyz, abs(c) + vec3(r)) + terms[k].w);
        if (reach < -slack) {
            return false;
        }
    }
    return true;
}

#ifdef CULL_WALKS
// A walked pair (its job's word 53 names the frame's totals; shaders/pick_walk.glsl): adds
// the `n` survivors of its cull workgroup `own` to the count of their summary word (after
// the pair's summary words), to the instance count of the pair's one command, and to the
// frame's totals (survivors, and a command where the pair's first survivors arrive).
void count_walked(uint job, uint summary, uint own, uint n) {
    uint totals = plan.words[job + 53u];
    if (totals == 0u) {
        return;
    }
    uint groups = plan.words[job + 32u] / 64u;
    atomicAdd(plan.words[summary + (groups + 31u) / 32u + own / 32u], n);
    uint before = atomicAdd(plan.words[plan.words[job + 34u] + 1u], n);
    atomicAdd(plan.words[totals + TOTAL_SURVIVORS], n);
    if (before == 0u) {
        atomicAdd(plan.words[totals + TOTAL_DRAWN], 1u);
    }
}
#endif

// Tests candidate `i` (counted as the pairs' bits count it; `rect` and `keep` from
// `screen_bounds`, `keep` also for none) of cull workgroup `group` against every pair of the
// dispatch (`first_pair`, `pairs`), in rounds of ROUND pairs, and writes this workgroup's
// survivor bits of each pair whose bits cover it, and its summary bit where it has a survivor.
void test_pairs(uint group, uint i, vec4 rect, bool keep, uint first_pair, uint pairs) {
    uint lid = gl_LocalInvocationID.x;
    for (uint first = 0u; first < pairs; first += ROUND) {
        uint round_pairs = min(ROUND, pairs - first);
        if (lid < 2u * ROUND) {
            survived[lid] = 0u;
        }
        barrier();
        for (uint q = 0u; q < round_pairs; q++) {
            uint job = (first_pair + first + q) * JOB_WORDS;
            uint start = 64u * plan.words[job + 43u] + plan.words[job + 44u];
            // The region's first and last pixel centres.
            vec4 region = job_vec4(job + 22u);
            bool meets = bounds_meet_region(rect, keep, region);
            meets = meets && sphere_meets_frustum(region, job_float(job + 26u), job_vec4(job + 27u));
            if (i >= start && i - start < plan.words[job + 45u] && meets) {
                atomicOr(survived[2u * q + (lid >> 5u)], 1u << (lid & 31u));
#ifdef CULL_NEAR_KEYS
                uint flags = plan.words[job + 47u];
                if ((flags & 1u) != 0u) {
                    near_key_ways |= 1u << ((flags >> 1u) & 1u);
                }
#endif
            }
        }
        barrier();
        // Thread 2q + h writes word h of pair q's bits for this workgroup, where its bits
        // cover it (no other workgroup writes that word), and marks the pair's summary.
        uint q = lid >> 1u;
        if (q < round_pairs) {
            uint job = (first_pair + first + q) * JOB_WORDS;
            uint own = group - plan.words[job + 43u];
            if (group >= plan.words[job + 43u] && own < plan.words[job + 32u] / 64u) {
                plan.words[plan.words[job + 41u] + 2u * own + (lid & 1u)] = survived[lid];
                if ((lid & 1u) == 0u && (survived[lid] | survived[lid + 1u]) != 0u) {
                    uint summary = plan.words[job + 42u];
                    atomicOr(plan.words[summary + own / 32u], 1u << (own % 32u));
#ifdef CULL_WALKS
                    count_walked(job, summary, own, bitCount(survived[lid]) + bitCount(survived[lid + 1u]));
#endif
                }
            }
        }
        barrier();
    }
}
