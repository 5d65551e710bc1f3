#version 450
// GPU results: per point or radius query its hit (a radius query's under its snapping rule,
// as the CPU resolves it), and per rectangle entry its membership, inserted into the lookup.
// One workgroup per query of the set, then one per 128 rectangle entries.
#extension GL_GOOGLE_include_directive : require
#define PICK_RESULTS_SET 0
#define PICK_RESULTS_BINDING 1
#define PICK_RESULTS_ACCESS
#include "pick_results.glsl"

layout(local_size_x = 128) in;
// The frame's slot of the staging ring: texels and the rectangle table's counts.
layout(std430, set = 0, binding = 0) readonly buffer Staging { uint staged[]; };
// What recording wrote: a job per query (16 words), draw rows (2 words), entry keys (4 words).
layout(std430, set = 0, binding = 2) readonly buffer Upload { uint upload[]; };
layout(push_constant) uniform ResultsPush {
    uvec4 frame;    // frame (low, high), queries, entries
    uvec4 offsets;  // table counts word in the slot, draw rows word, draw rows, entry keys word
    uvec4 sizes;    // hit capacity, entry capacity, lookup mask, unused
} pc;

// The largest disc (radius 12) a workgroup holds; PickerConfig::max_radius is checked against it.
const uint MAX_DISC = 625u;
shared uint s_lo[MAX_DISC];
shared uint s_hi[MAX_DISC];
shared uint s_instance[MAX_DISC];
shared float s_depth[MAX_DISC];
// Per pixel: (priority + 32768) << 16 | squared distance to the cursor; ~0 when it hits
// nothing within the radius. Keeping the distance here spares the loops a division.
shared uint s_pd[MAX_DISC];
const uint NO_PIXEL = 0xFFFFFFFFu;
shared int s_top;
shared uint c_index[128];
shared uint c_count[128];
shared uint c_first[128];

// Where the entries, claims and members start: from the push constants, since the header is
// written by this same dispatch.
uint entries_at() { return 8u * pc.sizes.x; }
uint claims_at() { return entries_at() + 4u * pc.sizes.y; }
uint members_at() { return claims_at() + pc.sizes.z + 1u; }

uint job(uint q, uint w) { return upload[16u * q + w]; }

// (draw index, flags) of recorded draw `r`: bit 0 instanced, bits 16-31 priority + 32768.
uvec2 draw_row(uint r) {
    if (r >= pc.offsets.z) {
        return uvec2(0xFFFFFFFFu, 32768u << 16u);
    }
    uint w = pc.offsets.y + 2u * r;
    return uvec2(upload[w], upload[w + 1u]);
}
int priority_of(uvec2 row) { return int(row.y >> 16u) - 32768; }

bool nearer(float a, float b, bool reverse) { return reverse ? a > b : a < b; }

struct Job {
    uint kind, snap, id_at, draw_at, depth_at, texel;
    uvec2 region_min, region_size, cursor;
    uint radius;
    bool reverse;
    float clear_depth;
};

Job load_job(uint q) {
    Job j;
    j.kind = job(q, 0u); j.snap = job(q, 1u); j.id_at = job(q, 2u); j.draw_at = job(q, 3u); j.depth_at = job(q, 4u);
    j.texel = job(q, 5u);
    j.region_min = uvec2(job(q, 6u), job(q, 7u)); j.region_size = uvec2(job(q, 8u), job(q, 9u));
    j.cursor = uvec2(job(q, 10u), job(q, 11u)); j.radius = job(q, 12u);
    j.reverse = job(q, 13u) != 0u; j.clear_depth = uintBitsToFloat(job(q, 14u));
    return j;
}

void write_hit(uint q, uint texel, uvec2 pixel, uint flags, Job j) {
    uint w = 8u * q;
    uvec2 id = uvec2(0u);
    if (texel != 0xFFFFFFFFu) {
        id = uvec2(staged[j.id_at + 2u * texel], staged[j.id_at + 2u * texel + 1u]);
    }
    if (id == uvec2(0u)) {
        pick_words[w] = 0u; pick_words[w + 1u] = 0u;
        pick_words[w + 2u] = PICK_NO_INSTANCE; pick_words[w + 3u] = 0xFFFFFFFFu;
        pick_words[w + 4u] = j.cursor.x; pick_words[w + 5u] = j.cursor.y;
        pick_words[w + 6u] = floatBitsToUint(j.clear_depth); pick_words[w + 7u] = flags;
        return;
    }
    uvec2 row = draw_row(staged[j.draw_at + 2u * texel]);
    float depth = uintBitsToFloat(staged[j.depth_at + texel]);
    // As the CPU reports it: within [0, 1], the clear depth for NaN.
    depth = isnan(depth) ? j.clear_depth : clamp(depth, 0.0, 1.0);
    pick_words[w] = id.x; pick_words[w + 1u] = id.y;
    pick_words[w + 2u] = (row.y & 1u) != 0u ? staged[j.draw_at + 2u * texel + 1u] : PICK_NO_INSTANCE;
    pick_words[w + 3u] = row.x;
    pick_words[w + 4u] = pixel.x; pick_words[w + 5u] = pixel.y;
    pick_words[w + 6u] = floatBitsToUint(depth); pick_words[w + 7u] = flags | PICK_FOUND;
}

uint d2_of(uint i, Job j) {
    ivec2 p = ivec2(j.region_min + uvec2(i % j.region_size.x, i / j.region_size.x)) - ivec2(j.cursor);
    return uint(p.x * p.x + p.y * p.y);
}

// Whether pixel a comes before pixel b among one object's pixels (or under Snap::Nearest):
// nearer the cursor, then nearer in depth, then first in row-major order.
bool before(uint a, uint b, bool reverse) {
    uint da = s_pd[a] & 0xFFFFu, db = s_pd[b] & 0xFFFFu;
    if (da != db) return da < db;
    if (nearer(s_depth[a], s_depth[b], reverse)) return true;
    if (nearer(s_depth[b], s_depth[a], reverse)) return false;
    return a < b;
}
bool same_object(uint a, uint b) { return s_lo[a] == s_lo[b] && s_hi[a] == s_hi[b] && s_instance[a] == s_instance[b]; }

// Under Snap::Thin, whether object (count a, pixel a, first a) wins over b: fewer pixels,
// then its pixel before b's, then the object met first in row-major order.
bool fewer(uint ca, uint pa, uint fa, uint cb, uint pb, uint fb, bool reverse) {
    if (ca != cb) return ca < cb;
    uint da = s_pd[pa] & 0xFFFFu, db = s_pd[pb] & 0xFFFFu;
    if (da != db) return da < db;
    if (nearer(s_depth[pa], s_depth[pb], reverse)) return true;
    if (nearer(s_depth[pb], s_depth[pa], reverse)) return false;
    return fa < fb;
}

void resolve_radius(uint q, Job j) {
    uint lid = gl_LocalInvocationID.x;
    uint n = min(j.region_size.x * j.region_size.y, MAX_DISC);
    if (lid == 0u) s_top = -32769;
    barrier();
    uint r2 = j.radius * j.radius;
    for (uint i = lid; i < n; i += 128u) {
        uvec2 id = uvec2(staged[j.id_at + 2u * i], staged[j.id_at + 2u * i + 1u]);
        uint d2 = d2_of(i, j);
        bool hit = id != uvec2(0u) && d2 <= r2;
        s_lo[i] = id.x; s_hi[i] = id.y;
        s_instance[i] = staged[j.draw_at + 2u * i + 1u];
        s_depth[i] = uintBitsToFloat(staged[j.depth_at + i]);
        int p = hit ? priority_of(draw_row(staged[j.draw_at + 2u * i])) : -32769;
        s_pd[i] = hit ? (uint(p + 32768) << 16u) | d2 : NO_PIXEL;
        if (hit) atomicMax(s_top, p);
    }
    barrier();
    // The top priority's pixels: their words share the high half.
    uint top = uint(s_top + 32768);
    bool reverse = j.reverse;
    uint best = 0xFFFFFFFFu, best_count = 0u, best_first = 0u;
    bool thin = j.snap != 0u;
    for (uint i = lid; i < n; i += 128u) {
        if (s_pd[i] == NO_PIXEL || (s_pd[i] >> 16u) != top) continue;
        uint count = 0u, first = i;
        if (thin) {
            bool rep = true;
            for (uint k = 0u; k < n; k++) {
                if (s_pd[k] == NO_PIXEL || (s_pd[k] >> 16u) != top || !same_object(i, k)) continue;
                count++;
                first = min(first, k);
                if (k != i && before(k, i, reverse)) rep = false;
            }
            if (!rep) continue;
        }
        bool wins = best == 0xFFFFFFFFu || (thin ? fewer(count, i, first, best_count, best, best_first, reverse) : before(i, best, reverse));
        if (wins) { best = i; best_count = count; best_first = first; }
    }
    c_index[lid] = best; c_count[lid] = best_count; c_first[lid] = best_first;
    barrier();
    if (lid != 0u) return;
    for (uint t = 1u; t < 128u; t++) {
        uint i = c_index[t];
        if (i == 0xFFFFFFFFu) continue;
        bool wins = best == 0xFFFFFFFFu || (thin ? fewer(c_count[t], i, c_first[t], best_count, best, best_first, reverse) : before(i, best, reverse));
        if (wins) { best = i; best_count = c_count[t]; best_first = c_first[t]; }
    }
    uint flags = PICK_RADIUS | (thin ? PICK_THIN : 0u);
    uvec2 pixel = best == 0xFFFFFFFFu ? j.cursor : j.region_min + uvec2(best % j.region_size.x, best / j.region_size.x);
    write_hit(q, best, pixel, flags, j);
}

void insert_entry(uint e) {
    uint k = pc.offsets.w + 4u * e;
    uvec4 key = uvec4(upload[k], upload[k + 1u], upload[k + 2u], upload[k + 3u]);
    uint at = entries_at() + 4u * e;
    pick_words[at] = key.x; pick_words[at + 1u] = key.y; pick_words[at + 2u] = key.z; pick_words[at + 3u] = key.w;
    uint slot = pick_lookup_hash(key.w, key.xy, key.z) & pc.sizes.z;
    for (uint probe = 0u; probe <= pc.sizes.z; probe++) {
        uint claim = atomicCompSwap(pick_words[claims_at() + slot], 0u, e + 1u);
        if (claim == 0u) break;
        uint o = pc.offsets.w + 4u * (claim - 1u);
        if (upload[o] == key.x && upload[o + 1u] == key.y && upload[o + 2u] == key.z && upload[o + 3u] == key.w) break;
        slot = (slot + 1u) & pc.sizes.z;
    }
    if (staged[pc.offsets.x + e] != 0u) {
        atomicOr(pick_words[members_at() + slot], 1u);
    }
}

void main() {
    uint g = gl_WorkGroupID.x;
    uint lid = gl_LocalInvocationID.x;
    if (g == 0u && lid == 0u) {
        pick_frame = pc.frame.xy;
        pick_query_count = pc.frame.z;
        pick_hit_capacity = pc.sizes.x;
        pick_lookup_mask = pc.sizes.z;
        pick_entry_count = pc.frame.w;
        pick_entry_capacity = pc.sizes.y;
        pick_reserved = 0u;
    }
    if (g < pc.frame.z) {
        Job j = load_job(g);
        if (j.kind == 2u) {
            resolve_radius(g, j);
        } else if (lid == 0u) {
            // A point reads its texel; a rectangle's hit stays empty.
            uint texel = j.kind == 1u ? j.texel : 0xFFFFFFFFu;
            uint flags = j.kind == 1u ? PICK_POINT : 0u;
            write_hit(g, texel, j.cursor, flags, j);
        }
        return;
    }
    uint e = (g - pc.frame.z) * 128u + lid;
    if (e < pc.frame.w) {
        insert_entry(e);
    }
}
