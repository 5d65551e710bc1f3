#version 450
// GPU results: per point or radius query its hit (a radius query's under its snapping rule,
// as the CPU resolves it). Recording wrote the rest of the buffer (header, rectangles, and
// this pass's jobs and draw rows). One workgroup per query, right after the hit pass; it also
// stages the queries' texels for the CPU.
#extension GL_GOOGLE_include_directive : require
#define PICK_RESULTS_SET 0
#define PICK_RESULTS_BINDING 0
#define PICK_RESULTS_ACCESS
#include "pick_results.glsl"

layout(local_size_x = 128) in;
// The frame's staging slot after its header: the queries pass writes the texels there, laid
// out as the readback copies would (per region block: detail, ID, (draw, instance), depth).
layout(std430, set = 0, binding = 1) writeonly buffer Staging { uint staging[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Staging2 { uvec2 staging2[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Staging4 { uvec4 staging4[]; };
// The hit pass's attachments.
layout(set = 0, binding = 2) uniform usampler2D pick_ids;
layout(set = 0, binding = 3) uniform usampler2D pick_draw_instances;
layout(set = 0, binding = 4) uniform sampler2D pick_depths;
layout(set = 0, binding = 5) uniform usampler2D pick_details;
layout(push_constant) uniform ResultsPush {
    uvec4 words;   // queries, detail, jobs word, draw rows word (words after the header)
    uvec4 rows;    // draw rows, unused
} pc;

// The largest disc (radius 12) a workgroup holds; PickerConfig::max_radius is checked against it.
const uint MAX_DISC = 625u;
// Disc pixels a thread owns: pixel lid + 128 m.
const uint PER_THREAD = 5u;
// Per pixel its object (ID, instance) and depth bits; under Snap::Thin, once each pixel knows
// its object's first pixel, the same arrays hold per object (at that first pixel) its pixel
// count, and its best pixel's squared distance, depth key and index.
shared uint s_lo[MAX_DISC];
shared uint s_hi[MAX_DISC];
shared uint s_instance[MAX_DISC];
shared uint s_depth[MAX_DISC];
// Per pixel: (priority + 32768) << 16 | squared distance to the cursor, then (once the top
// priority is known) the distance alone; NO_PIXEL when it takes no part.
shared uint s_pd[MAX_DISC];
const uint NO_PIXEL = 0xFFFFFFFFu;
shared int s_top;
// Under Snap::Thin, a hash table by object over the disc's pixels: per slot the pixel that
// claimed it (+ 1) and the least pixel of that object.
const uint GROUP_SLOTS = 1024u;
shared uint g_claim[GROUP_SLOTS];
shared uint g_first[GROUP_SLOTS];
// Per thread its best candidate: (pixels, squared distance, depth key, tie-break, pixel).
shared uint c_count[128];
shared uint c_d2[128];
shared uint c_dkey[128];
shared uint c_tie[128];
shared uint c_pixel[128];

uint job(uint q, uint w) { return pick_words[pc.words.z + 16u * q + w]; }

// (draw index, flags) of recorded draw `r`: bit 0 instanced, bits 16-31 priority + 32768.
uvec2 draw_row(uint r) {
    if (r >= pc.rows.x) {
        return uvec2(0xFFFFFFFFu, 32768u << 16u);
    }
    uint w = pc.words.w + 2u * r;
    return uvec2(pick_words[w], pick_words[w + 1u]);
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

// Candidate a before candidate b: fewer pixels (0 under Snap::Nearest), nearer the cursor,
// nearer in depth, then the tie-break (Nearest: the pixel's row-major index; Thin: the
// object's first pixel), as the CPU's rule orders them.
bool less(uvec4 a, uvec4 b) {
    if (a.x != b.x) return a.x < b.x;
    if (a.y != b.y) return a.y < b.y;
    if (a.z != b.z) return a.z < b.z;
    return a.w < b.w;
}

bool same_object(uint a, uint b) { return s_lo[a] == s_lo[b] && s_hi[a] == s_hi[b] && s_instance[a] == s_instance[b]; }

uint object_slot(uint i) {
    uint h = (s_lo[i] * 0x9E3779B1u) ^ (s_hi[i] * 0x85EBCA77u) ^ (s_instance[i] * 0xC2B2AE3Du);
    return (h ^ (h >> 15u)) & (GROUP_SLOTS - 1u);
}

void resolve_radius(uint q, Job j) {
    uint lid = gl_LocalInvocationID.x;
    uint n = min(j.region_size.x * j.region_size.y, MAX_DISC);
    if (lid == 0u) s_top = -32769;
    barrier();
    uint r2 = j.radius * j.radius;
    uint own_dkey[PER_THREAD];
    uint own_first[PER_THREAD];
    // What the thread's pixels would report as a hit, kept so the winner's owner writes it
    // without reading its texels again: ID, instance, draw index, depth.
    uvec2 own_id[PER_THREAD];
    uint own_instance[PER_THREAD];
    uint own_draw[PER_THREAD];
    float own_depth[PER_THREAD];
    for (uint m = 0u; m < PER_THREAD; m++) {
        uint i = lid + 128u * m;
        if (i >= n) break;
        uvec2 id = id_of(i, j);
        uint d2 = d2_of(i, j);
        bool hit = id != uvec2(0u) && d2 <= r2;
        uvec2 draw_instance = draw_instance_of(i, j);
        float depth = depth_of(i, j);
        stage_texels(i, j, id, draw_instance, depth);
        s_lo[i] = id.x; s_hi[i] = id.y;
        s_instance[i] = draw_instance.y;
        own_dkey[m] = depth_key(depth, j.reverse);
        uvec2 row = hit ? draw_row(draw_instance.x) : uvec2(0xFFFFFFFFu, 0u);
        own_id[m] = id;
        own_instance[m] = reported_instance(row, draw_instance);
        own_draw[m] = row.x;
        own_depth[m] = depth;
        int p = hit ? priority_of(row) : -32769;
        s_pd[i] = hit ? (uint(p + 32768) << 16u) | d2 : NO_PIXEL;
        if (hit) atomicMax(s_top, p);
    }
    barrier();
    // Only the top priority's pixels take part: their words keep the distance alone.
    uint top = uint(s_top + 32768);
    for (uint m = 0u; m < PER_THREAD; m++) {
        uint i = lid + 128u * m;
        if (i >= n) break;
        s_pd[i] = (s_pd[i] != NO_PIXEL && (s_pd[i] >> 16u) == top) ? (s_pd[i] & 0xFFFFu) : NO_PIXEL;
    }
    barrier();
    bool thin = j.snap != 0u;
    uvec4 best = uvec4(NO_PIXEL);
    uint best_pixel = NO_PIXEL;
    if (!thin) {
        for (uint m = 0u; m < PER_THREAD; m++) {
            uint i = lid + 128u * m;
            if (i >= n) break;
            uvec4 c = uvec4(0u, s_pd[i], own_dkey[m], i);
            if (s_pd[i] != NO_PIXEL && less(c, best)) { best = c; best_pixel = i; }
        }
    } else {
        // Each pixel's object, named by its first pixel in row-major order: the pixels meet
        // by object in a shared hash table, which keeps each object's least pixel.
        for (uint k = lid; k < GROUP_SLOTS; k += 128u) {
            g_claim[k] = 0u;
            g_first[k] = NO_PIXEL;
        }
        barrier();
        uint own_slot[PER_THREAD];
        for (uint m = 0u; m < PER_THREAD; m++) {
            uint i = lid + 128u * m;
            own_slot[m] = NO_PIXEL;
            if (i >= n || s_pd[i] == NO_PIXEL) continue;
            // Linear probing; the table has more slots than a disc has pixels.
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
        for (uint m = 0u; m < PER_THREAD; m++) {
            own_first[m] = own_slot[m] == NO_PIXEL ? NO_PIXEL : g_first[own_slot[m]];
        }
        barrier();
        // The arrays now hold per object: pixels, best distance, best depth key, best pixel.
        for (uint m = 0u; m < PER_THREAD; m++) {
            uint i = lid + 128u * m;
            if (i >= n) break;
            s_lo[i] = 0u; s_hi[i] = NO_PIXEL; s_instance[i] = NO_PIXEL; s_depth[i] = NO_PIXEL;
        }
        barrier();
        for (uint m = 0u; m < PER_THREAD; m++) {
            uint f = own_first[m];
            if (f == NO_PIXEL) continue;
            atomicAdd(s_lo[f], 1u);
            atomicMin(s_hi[f], s_pd[lid + 128u * m]);
        }
        barrier();
        for (uint m = 0u; m < PER_THREAD; m++) {
            uint f = own_first[m];
            if (f != NO_PIXEL && s_pd[lid + 128u * m] == s_hi[f]) atomicMin(s_instance[f], own_dkey[m]);
        }
        barrier();
        for (uint m = 0u; m < PER_THREAD; m++) {
            uint f = own_first[m], i = lid + 128u * m;
            if (f != NO_PIXEL && s_pd[i] == s_hi[f] && own_dkey[m] == s_instance[f]) atomicMin(s_depth[f], i);
        }
        barrier();
        // An object is a candidate at its first pixel.
        for (uint m = 0u; m < PER_THREAD; m++) {
            uint i = lid + 128u * m;
            if (i >= n || own_first[m] != i) continue;
            uvec4 c = uvec4(s_lo[i], s_hi[i], s_instance[i], i);
            if (less(c, best)) { best = c; best_pixel = s_depth[i]; }
        }
    }
    c_count[lid] = best.x; c_d2[lid] = best.y; c_dkey[lid] = best.z; c_tie[lid] = best.w; c_pixel[lid] = best_pixel;
    barrier();
    for (uint stride = 64u; stride > 0u; stride >>= 1u) {
        if (lid < stride) {
            uvec4 a = uvec4(c_count[lid], c_d2[lid], c_dkey[lid], c_tie[lid]);
            uvec4 b = uvec4(c_count[lid + stride], c_d2[lid + stride], c_dkey[lid + stride], c_tie[lid + stride]);
            if (less(b, a)) {
                c_count[lid] = b.x; c_d2[lid] = b.y; c_dkey[lid] = b.z; c_tie[lid] = b.w; c_pixel[lid] = c_pixel[lid + stride];
            }
        }
        barrier();
    }
    uint chosen = c_pixel[0];
    uint flags = PICK_RADIUS | (thin ? PICK_THIN : 0u);
    if (chosen == NO_PIXEL) {
        if (lid == 0u) write_miss(q, flags, j);
        return;
    }
    // The chosen pixel's owner writes the hit from what it kept.
    uvec2 pixel = j.region_min + uvec2(chosen % j.region_size.x, chosen / j.region_size.x);
    for (uint m = 0u; m < PER_THREAD; m++) {
        if (lid + 128u * m == chosen) {
            write_found(q, own_id[m], own_instance[m], own_draw[m], pixel, own_depth[m], flags, j);
        }
    }
}

void main() {
    uint g = gl_WorkGroupID.x;
    if (g >= pc.words.x) {
        return;
    }
    Job j = load_job(g);
    if (j.kind == 2u) {
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
