// picking-vk GPU results: what a frame's query set found, read by the host's own shaders later
// in the same command buffer (PickerConfig::gpu_results, Picker::gpu_results(slot)).
//
// Define PICK_RESULTS_SET and PICK_RESULTS_BINDING (default 0 and 0) before including this
// file, and bind the slot's buffer there as a storage buffer. The layout is std430 and fixed:
//   words 0-1   frame number (low, high)       words 2  queries in the set
//   word 3      hit capacity (max_queries)     word  4  lookup buckets - 1 (0: no rectangles)
//   word 5      rectangle entries this frame   word  6  entry capacity (rect_entries)
//   word 7      where the entries' pixel counts start (words after the header)
//   then per query (hit capacity of them) 8 words: ID (low, high), instance, draw index,
//   pixel (x, y), depth (float bits), flags;
//   then per span (entry capacity of them; a span is one recorded draw of a rectangle)
//   6 words: ID (low, high), query, first instance (PICK_NO_INSTANCE: not instanced),
//   instances, first entry; this frame's spans ordered by their bucket,
//   pick_lookup_hash(query, id) & mask;
//   then the lookup's bucket starts (entry capacity rounded up to a power of two, plus one,
//   of them): bucket b's spans are spans starts[b] .. starts[b + 1] - 1;
//   then at word 7's offset a pixel count per entry (non-zero: the entry is in the set).
// A non-instanced object's instance is PICK_NO_INSTANCE, here and in every argument below.

#ifndef PICK_RESULTS_SET
#define PICK_RESULTS_SET 0
#endif
#ifndef PICK_RESULTS_BINDING
#define PICK_RESULTS_BINDING 0
#endif
#ifndef PICK_RESULTS_ACCESS
#define PICK_RESULTS_ACCESS readonly
#endif

const uint PICK_NO_INSTANCE = 0xFFFFFFFFu;
// Hit flags: something was hit; the query is a point; a radius query; answered under Snap::Thin.
const uint PICK_FOUND = 1u;
const uint PICK_POINT = 2u;
const uint PICK_RADIUS = 4u;
const uint PICK_THIN = 8u;

struct PickHit {
    uvec2 id;          // 0 when nothing was hit
    uint instance;     // PICK_NO_INSTANCE for a non-instanced draw
    uint draw_index;   // the draw's index in the host's list; 0xFFFFFFFF on a miss and for a contributor
    uvec2 pixel;       // the pixel hit (a radius query's nearest or snapped pixel), else the query's
    float depth;       // window depth in [0, 1]; the clear depth on a miss
    uint flags;
};

layout(std430, set = PICK_RESULTS_SET, binding = PICK_RESULTS_BINDING) PICK_RESULTS_ACCESS buffer PickResults {
    uvec2 pick_frame;
    uint pick_query_count;
    uint pick_hit_capacity;
    uint pick_lookup_mask;
    uint pick_entry_count;
    uint pick_entry_capacity;
    uint pick_counts_at;
    uint pick_words[];
};

uint pick_spans_at() { return 8u * pick_hit_capacity; }
uint pick_starts_at() { return pick_spans_at() + 6u * pick_entry_capacity; }

// Query `query`'s hit; flags 0 for a rectangle or a query past the set.
PickHit pick_hit(uint query) {
    PickHit h = PickHit(uvec2(0u), PICK_NO_INSTANCE, 0xFFFFFFFFu, uvec2(0u), 1.0, 0u);
    if (query < pick_query_count && query < pick_hit_capacity) {
        uint w = 8u * query;
        h.id = uvec2(pick_words[w], pick_words[w + 1u]);
        h.instance = pick_words[w + 2u];
        h.draw_index = pick_words[w + 3u];
        h.pixel = uvec2(pick_words[w + 4u], pick_words[w + 5u]);
        h.depth = uintBitsToFloat(pick_words[w + 6u]);
        h.flags = pick_words[w + 7u];
    }
    return h;
}

// Whether point or radius query `query` hit object `id`, instance `instance`.
bool pick_is_hit(uint query, uvec2 id, uint instance) {
    PickHit h = pick_hit(query);
    return (h.flags & PICK_FOUND) != 0u && h.id == id && h.instance == instance;
}

// Whether any point or radius query of the frame hit object `id`, instance `instance`.
bool pick_is_hovered(uvec2 id, uint instance) {
    uint n = min(pick_query_count, pick_hit_capacity);
    for (uint q = 0u; q < n; q++) {
        if (pick_is_hit(q, id, instance)) {
            return true;
        }
    }
    return false;
}

// The lookup's hash of (query, id); the low bits name the bucket.
uint pick_lookup_hash(uint query, uvec2 id) {
    uint h = query * 0x9E3779B1u;
    h = (h ^ id.x) * 0x85EBCA77u;
    h = (h ^ id.y) * 0xC2B2AE3Du;
    return h ^ (h >> 15u);
}

// Whether object `id`, instance `instance` is in rectangle query `query`'s set (its mode's:
// visible pixels, or every fragment), in this frame. Looks through the spans of the key's
// bucket (an object drawn by several draws has several spans, all there) for one of the
// object's whose entry for `instance` has pixels.
bool pick_in_rect(uint query, uvec2 id, uint instance) {
    if (pick_lookup_mask == 0u) {
        return false;
    }
    uint b = pick_starts_at() + (pick_lookup_hash(query, id) & pick_lookup_mask);
    uint end = pick_words[b + 1u];
    for (uint span = pick_words[b]; span < end; span++) {
        uint s = pick_spans_at() + 6u * span;
        uint first = pick_words[s + 3u];
        bool instanced = first != PICK_NO_INSTANCE;
        bool same = pick_words[s] == id.x && pick_words[s + 1u] == id.y && pick_words[s + 2u] == query;
        if (same && instanced == (instance != PICK_NO_INSTANCE)) {
            // The instance's entry in the span (unsigned: below `first` wraps past the end).
            uint k = instanced ? instance - first : 0u;
            if (k < pick_words[s + 4u] && pick_words[pick_counts_at + pick_words[s + 5u] + k] != 0u) {
                return true;
            }
        }
    }
    return false;
}
