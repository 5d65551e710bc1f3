#version 450
// GPU results: per point or radius query its hit (a radius query's under its snapping rule,
// as the CPU resolves it). Recording wrote what the CPU knows into the slot's upload buffer
// (the header, the rectangles' spans and lookup, and this pass's jobs and draw rows); this
// pass carries it over: one workgroup per query, right after the hit pass (a rectangle's
// writes its empty hit; the first the header), then workgroups that copy the spans and
// lookup. It also stages the point and radius queries' texels for the CPU.
#extension GL_GOOGLE_include_directive : require
#define PICK_RESULTS_SET 0
#define PICK_RESULTS_BINDING 0
#define PICK_RESULTS_ACCESS
#include "pick_results.glsl"

// The workgroup's size, set at creation from the configured radius and the device's limits
// (a multiple of 64, at least 128): one thread per disc pixel where the device allows it, so a
// thread reads its texels once and the rounds below are few barriers apart.
layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint GROUP = 128u;

// The frame's staging slot after its header: the queries pass writes the texels there, laid
// out as the readback copies would (per region block: detail, ID, (draw, instance), depth).
layout(std430, set = 0, binding = 1) writeonly buffer Staging { uint staging[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Staging2 { uvec2 staging2[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Staging4 { uvec4 staging4[]; };
// The slot's upload buffer: the results buffer's layout, header included, as recording
// wrote it.
layout(std430, set = 0, binding = 2) readonly buffer Upload { uint up[]; };
// The hit pass's attachments.
layout(set = 0, binding = 3) uniform usampler2D pick_ids;
layout(set = 0, binding = 4) uniform usampler2D pick_draw_instances;
layout(set = 0, binding = 5) uniform sampler2D pick_depths;
layout(set = 0, binding = 6) uniform usampler2D pick_details;
layout(push_constant) uniform ResultsPush {
    uvec4 words;   // queries, detail, jobs word, draw rows word (words after the header)
    uvec4 rows;    // draw rows, table groups after them, unused
} pc;

// The largest disc (radius 12) a workgroup holds; PickerConfig::max_radius is checked against it.
const uint MAX_DISC = 625u;
// Disc pixels a thread owns: pixel lid + GROUP m.
const uint PER_THREAD = (MAX_DISC + GROUP - 1u) / GROUP;
const uint NO_PIXEL = 0xFFFFFFFFu;
// Per pixel its object (ID, instance as drawn), for Snap::Thin's grouping.
shared uint s_lo[MAX_DISC];
shared uint s_hi[MAX_DISC];
shared uint s_instance[MAX_DISC];
// Under Snap::Thin, per object at its first pixel (row-major): its pixels, and its best
// pixel's squared distance, depth key and index.
shared uint o_count[MAX_DISC];
shared uint o_d2[MAX_DISC];
shared uint o_dkey[MAX_DISC];
shared uint o_pixel[MAX_DISC];
// Under Snap::Thin, a hash table by object over the disc's pixels: per slot the pixel that
// claimed it (+ 1) and the least pixel of that object.
const uint GROUP_SLOTS = 1024u;
shared uint g_claim[GROUP_SLOTS];
shared uint g_first[GROUP_SLOTS];
// The winner, found in rounds of atomicMin, each key among those that tied on the ones
// before: a pixel's rank (priority, then distance), an object's rank (Thin: pixels, then
// distance), the depth key, the tie-break.
shared uint w_rank;
shared uint w_object;
shared uint w_dkey;
shared uint w_tie;

// Word `w` after the header of the upload (as `pick_words` counts the results').
uint upload(uint w) { return up[8u + w]; }

uint job(uint q, uint w) { return upload(pc.words.z + 16u * q + w); }

// The snapshot index of a GPU plan table's row 0 (crates/picking-vk/src/handoff.rs): a
// table row's draw is found in the table groups listed after the rows.
const uint TABLE_ROW_BASE = 1u << 30u;

// (draw index, flags) of recorded draw `r`: bit 0 instanced, bits 16-31 priority + 32768. For
// a table row, of its draw: its group's first draw index plus the row's place in the group
// (whose draws are consecutive in the host's list and share their flags); each group lists
// its first row, its rows, its first draw index and its flags.
uvec2 draw_row(uint r) {
    if (r >= TABLE_ROW_BASE) {
        uint row = r - TABLE_ROW_BASE;
        uint at = pc.words.w + 2u * pc.rows.x;
        for (uint g = 0u; g < pc.rows.y; g++) {
            uint w = at + 4u * g;
            if (row - upload(w) < upload(w + 1u)) {
                return uvec2(upload(w + 2u) + (row - upload(w)), upload(w + 3u));
            }
        }
    }
    if (r >= pc.rows.x) {
        return uvec2(0xFFFFFFFFu, 32768u << 16u);
    }
    uint w = pc.words.w + 2u * r;
    return uvec2(upload(w), upload(w + 1u));
}
int priority_of(uvec2 row) { return int(row.y >> 16u) - 32768; }

// A query's job: its kind (0 rectangle, 1 point, 2 radius) and rule, where its region lies
// in the attachments, the region in the view (first pixel, size), the cursor, the radius,
// whether depth is reversed, and the clear depth.
struct Job {
    uint kind, snap;
    uvec2 origin, region_min, region_size, cursor;
    uint radius;
    bool reverse;
    float clear_depth;
    // The region's block in the staging slot: first word, pixels; the region's first pixel there.
    uint block, block_pixels, block_first;
};

Job load_job(uint q) {
    Job j;
    j.kind = job(q, 0u); j.snap = job(q, 1u);
    j.origin = uvec2(job(q, 2u), job(q, 3u));
    j.region_min = uvec2(job(q, 4u), job(q, 5u)); j.region_size = uvec2(job(q, 6u), job(q, 7u));
    j.cursor = uvec2(job(q, 8u), job(q, 9u)); j.radius = job(q, 10u);
    j.reverse = job(q, 11u) != 0u; j.clear_depth = uintBitsToFloat(job(q, 12u));
    j.block = job(q, 13u); j.block_pixels = job(q, 14u); j.block_first = job(q, 15u);
    return j;
}

// Pixel i of the region (row-major), where the attachments hold it.
ivec2 texel_of(uint i, Job j) { return ivec2(j.origin + uvec2(i % j.region_size.x, i / j.region_size.x)); }
uvec2 id_of(uint i, Job j) { return texelFetch(pick_ids, texel_of(i, j), 0).xy; }
// (recorded draw, instance)
uvec2 draw_instance_of(uint i, Job j) { return texelFetch(pick_draw_instances, texel_of(i, j), 0).xy; }
float depth_of(uint i, Job j) { return texelFetch(pick_depths, texel_of(i, j), 0).x; }

// Stages pixel i of the region (its ID, (draw, instance) and depth as read) for the CPU, in
// whole-texel stores: the slot lies in host memory, and neighbouring threads' texels then
// leave as one contiguous write.
void stage_texels(uint i, Job j, uvec2 id, uvec2 draw_instance, float depth) {
    uint n = j.block_pixels;
    uint p = j.block_first + i;
    // In words; every block starts 16-byte aligned.
    uint at = j.block;
    if (pc.words.y != 0u) {
        staging4[at / 4u + p] = texelFetch(pick_details, texel_of(i, j), 0);
        at += 4u * n;
    }
    staging2[at / 2u + p] = id;
    at += 2u * n;
    staging2[at / 2u + p] = draw_instance;
    at += 2u * n;
    staging[at + p] = floatBitsToUint(depth);
}

// Query q's hit: nothing at the cursor.
void write_miss(uint q, uint flags, Job j) {
    uint w = 8u * q;
    pick_words[w] = 0u; pick_words[w + 1u] = 0u;
    pick_words[w + 2u] = PICK_NO_INSTANCE; pick_words[w + 3u] = 0xFFFFFFFFu;
    pick_words[w + 4u] = j.cursor.x; pick_words[w + 5u] = j.cursor.y;
    pick_words[w + 6u] = floatBitsToUint(j.clear_depth); pick_words[w + 7u] = flags;
}

// Query q's hit: object `id`, its instance as reported, draw index, pixel and depth as read.
void write_found(uint q, uvec2 id, uint instance, uint draw_index, uvec2 pixel, float depth, uint flags, Job j) {
    uint w = 8u * q;
    // As the CPU reports it: within [0, 1], the clear depth for NaN.
    depth = isnan(depth) ? j.clear_depth : clamp(depth, 0.0, 1.0);
    pick_words[w] = id.x; pick_words[w + 1u] = id.y;
    pick_words[w + 2u] = instance;
    pick_words[w + 3u] = draw_index;
    pick_words[w + 4u] = pixel.x; pick_words[w + 5u] = pixel.y;
    pick_words[w + 6u] = floatBitsToUint(depth); pick_words[w + 7u] = flags | PICK_FOUND;
}

// A hit's instance as reported: PICK_NO_INSTANCE for a draw that is not instanced.
uint reported_instance(uvec2 row, uvec2 draw_instance) { return (row.y & 1u) != 0u ? draw_instance.y : PICK_NO_INSTANCE; }

uint d2_of(uint i, Job j) {
    ivec2 p = ivec2(j.region_min + uvec2(i % j.region_size.x, i / j.region_size.x)) - ivec2(j.cursor);
    return uint(p.x * p.x + p.y * p.y);
}

// A depth as an unsigned key that orders as the depth does, smaller = nearer under either
// convention (the float's bits made monotonic, then inverted for reverse depth).
uint depth_key(float d, bool reverse) {
    uint b = floatBitsToUint(d);
    uint k = (b & 0x80000000u) != 0u ? ~b : (b | 0x80000000u);
    return reverse ? ~k : k;
}

bool same_object(uint a, uint b) { return s_lo[a] == s_lo[b] && s_hi[a] == s_hi[b] && s_instance[a] == s_instance[b]; }

uint object_slot(uint i) {
    uint h = (s_lo[i] * 0x9E3779B1u) ^ (s_hi[i] * 0x85EBCA77u) ^ (s_instance[i] * 0xC2B2AE3Du);
    return (h ^ (h >> 15u)) & (GROUP_SLOTS - 1u);
}

// A pixel's rank, smaller first: the higher pick priority, then the nearer to the cursor.
uint pixel_rank(int priority, uint d2) { return (uint(32767 - priority) << 16u) | d2; }

// Under Snap::Thin: groups the top priority's pixels by object and returns the pixel that
// answers: the best pixel of the object with the fewest pixels, then the nearest to the
// cursor, then the nearest in depth, then the one whose first pixel (row-major) comes first,
// as the CPU's rule orders them. `rank`, `dkey`: per owned pixel its rank (NO_PIXEL outside
// the top priority) and depth key.
uint resolve_thin(uint rank[PER_THREAD], uint dkey[PER_THREAD]) {
    uint lid = gl_LocalInvocationID.x;
    uint own_slot[PER_THREAD];
    // Each pixel's object, named by its first pixel: the pixels meet by object in a shared
    // hash table (linear probing; it has more slots than a disc has pixels).
    for (uint m = 0u; m < PER_THREAD; m++) {
        uint i = lid + GROUP * m;
        own_slot[m] = NO_PIXEL;
        if (rank[m] == NO_PIXEL) continue;
        uint h = object_slot(i);
        for (uint probe = 0u; probe < GROUP_SLOTS; probe++) {
            uint c = atomicCompSwap(g_claim[h], 0u, i + 1u);
            if (c == 0u || same_object(c - 1u, i)) break;
            h = (h + 1u) & (GROUP_SLOTS - 1u);
        }
        atomicMin(g_first[h], i);
        own_slot[m] = h;
    }
    barrier();
    uint first[PER_THREAD];
    for (uint m = 0u; m < PER_THREAD; m++) {
        first[m] = own_slot[m] == NO_PIXEL ? NO_PIXEL : g_first[own_slot[m]];
        if (first[m] == NO_PIXEL) continue;
        atomicAdd(o_count[first[m]], 1u);
        atomicMin(o_d2[first[m]], rank[m] & 0xFFFFu);
    }
    barrier();
    // Per object its best pixel: nearest the cursor, then in depth, then the least index.
    for (uint m = 0u; m < PER_THREAD; m++) {
        uint f = first[m];
        if (f != NO_PIXEL && (rank[m] & 0xFFFFu) == o_d2[f]) atomicMin(o_dkey[f], dkey[m]);
    }
    barrier();
    for (uint m = 0u; m < PER_THREAD; m++) {
        uint f = first[m];
        if (f != NO_PIXEL && (rank[m] & 0xFFFFu) == o_d2[f] && dkey[m] == o_dkey[f]) atomicMin(o_pixel[f], lid + GROUP * m);
    }
    barrier();
    // The objects, each at its first pixel: fewest pixels and nearest, then depth, then the
    // least first pixel.
    uint object[PER_THREAD];
    for (uint m = 0u; m < PER_THREAD; m++) {
        uint i = lid + GROUP * m;
        object[m] = first[m] == i ? (o_count[i] << 16u) | o_d2[i] : NO_PIXEL;
        if (object[m] != NO_PIXEL) atomicMin(w_object, object[m]);
    }
    barrier();
    for (uint m = 0u; m < PER_THREAD; m++) {
        uint i = lid + GROUP * m;
        if (object[m] != NO_PIXEL && object[m] == w_object) atomicMin(w_dkey, o_dkey[i]);
    }
    barrier();
    for (uint m = 0u; m < PER_THREAD; m++) {
        uint i = lid + GROUP * m;
        if (object[m] != NO_PIXEL && object[m] == w_object && o_dkey[i] == w_dkey) atomicMin(w_tie, i);
    }
    barrier();
    return o_pixel[w_tie];
}

void resolve_radius(uint q, Job j) {
    uint lid = gl_LocalInvocationID.x;
    uint n = min(j.region_size.x * j.region_size.y, MAX_DISC);
    bool thin = j.snap != 0u;
    if (lid == 0u) {
        w_rank = NO_PIXEL; w_object = NO_PIXEL; w_dkey = NO_PIXEL; w_tie = NO_PIXEL;
    }
    if (thin) {
        for (uint k = lid; k < GROUP_SLOTS; k += GROUP) {
            g_claim[k] = 0u;
            g_first[k] = NO_PIXEL;
        }
    }
    uint r2 = j.radius * j.radius;
    uint rank[PER_THREAD];
    uint dkey[PER_THREAD];
    // What the thread's pixels would report as a hit, kept so the winner's owner writes it
    // without reading its texels again: ID, instance, draw index, depth.
    uvec2 own_id[PER_THREAD];
    uint own_instance[PER_THREAD];
    uint own_draw[PER_THREAD];
    float own_depth[PER_THREAD];
    for (uint m = 0u; m < PER_THREAD; m++) {
        uint i = lid + GROUP * m;
        rank[m] = NO_PIXEL;
        if (i >= n) continue;
        uvec2 id = id_of(i, j);
        uvec2 draw_instance = draw_instance_of(i, j);
        float depth = depth_of(i, j);
        stage_texels(i, j, id, draw_instance, depth);
        uint d2 = d2_of(i, j);
        bool hit = id != uvec2(0u) && d2 <= r2;
        uvec2 row = hit ? draw_row(draw_instance.x) : uvec2(0xFFFFFFFFu, 0u);
        own_id[m] = id;
        own_instance[m] = reported_instance(row, draw_instance);
        own_draw[m] = row.x;
        own_depth[m] = depth;
        dkey[m] = depth_key(depth, j.reverse);
        rank[m] = hit ? pixel_rank(priority_of(row), d2) : NO_PIXEL;
        if (thin) {
            s_lo[i] = id.x; s_hi[i] = id.y; s_instance[i] = draw_instance.y;
            o_count[i] = 0u; o_d2[i] = NO_PIXEL; o_dkey[i] = NO_PIXEL; o_pixel[i] = NO_PIXEL;
        }
    }
    barrier();
    for (uint m = 0u; m < PER_THREAD; m++) {
        if (rank[m] != NO_PIXEL) atomicMin(w_rank, rank[m]);
    }
    barrier();
    uint top = w_rank;
    uint flags = PICK_RADIUS | (thin ? PICK_THIN : 0u);
    // The same for every thread: nothing in the disc.
    if (top == NO_PIXEL) {
        if (lid == 0u) write_miss(q, flags, j);
        return;
    }
    uint chosen;
    if (thin) {
        // Only the top priority's pixels take part.
        for (uint m = 0u; m < PER_THREAD; m++) {
            if ((rank[m] >> 16u) != (top >> 16u)) rank[m] = NO_PIXEL;
        }
        chosen = resolve_thin(rank, dkey);
    } else {
        // The nearest pixel of the top priority, then the nearest in depth, then the least index.
        for (uint m = 0u; m < PER_THREAD; m++) {
            if (rank[m] == top) atomicMin(w_dkey, dkey[m]);
        }
        barrier();
        for (uint m = 0u; m < PER_THREAD; m++) {
            if (rank[m] == top && dkey[m] == w_dkey) atomicMin(w_tie, lid + GROUP * m);
        }
        barrier();
        chosen = w_tie;
    }
    // The chosen pixel's owner writes the hit from what it kept.
    uvec2 pixel = j.region_min + uvec2(chosen % j.region_size.x, chosen / j.region_size.x);
    for (uint m = 0u; m < PER_THREAD; m++) {
        if (lid + GROUP * m == chosen) {
            write_found(q, own_id[m], own_instance[m], own_draw[m], pixel, own_depth[m], flags, j);
        }
    }
}

// Workgroup `c` of those past the queries: its share of the rectangles' spans and the
// lookup's bucket starts (as many as the upload's header says this frame has).
void copy_rect_lookup(uint c) {
    uint mask = up[4];
    if (mask == 0u) {
        return;
    }
    uint spans_at = 8u * up[3];
    uint starts_at = spans_at + 6u * up[6];
    // The last bucket's end: every span (never past the capacity).
    uint spans = min(upload(starts_at + mask + 1u), up[6]);
    uint stride = (gl_NumWorkGroups.x - pc.words.x) * GROUP;
    for (uint i = c * GROUP + gl_LocalInvocationID.x; i < 6u * spans; i += stride) {
        pick_words[spans_at + i] = upload(spans_at + i);
    }
    for (uint i = c * GROUP + gl_LocalInvocationID.x; i < mask + 2u; i += stride) {
        pick_words[starts_at + i] = upload(starts_at + i);
    }
}

void main() {
    uint g = gl_WorkGroupID.x;
    if (g >= pc.words.x) {
        copy_rect_lookup(g - pc.words.x);
        return;
    }
    if (g == 0u && gl_LocalInvocationID.x == 0u) {
        pick_frame = uvec2(up[0], up[1]);
        pick_query_count = up[2];
        pick_hit_capacity = up[3];
        pick_lookup_mask = up[4];
        pick_entry_count = up[5];
        pick_entry_capacity = up[6];
        pick_counts_at = up[7];
    }
    Job j = load_job(g);
    if (j.kind == 0u && gl_LocalInvocationID.x == 0u) {
        // A rectangle has no hit.
        write_miss(g, 0u, j);
    } else if (j.kind == 2u) {
        resolve_radius(g, j);
    } else if (j.kind == 1u && gl_LocalInvocationID.x == 0u) {
        // A point stages and reads its one texel.
        uvec2 id = id_of(0u, j);
        uvec2 draw_instance = draw_instance_of(0u, j);
        float depth = depth_of(0u, j);
        stage_texels(0u, j, id, draw_instance, depth);
        if (id == uvec2(0u)) {
            write_miss(g, PICK_POINT, j);
        } else {
            uvec2 row = draw_row(draw_instance.x);
            write_found(g, id, reported_instance(row, draw_instance), row.x, j.cursor, depth, PICK_POINT, j);
        }
    }
}
