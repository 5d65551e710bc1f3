// picking-vk GPU results for WGSL: what a frame's query set found, read by the app's own
// shaders later in the same submission (WgpuPicker::gpu_results). The WGSL twin of the
// library's GLSL include, over the same buffer (fixed layout, 4-byte words):
//   words 0-1   frame number (low, high)       word 2  queries in the set
//   word 3      hit capacity (max_queries)     word 4  lookup buckets - 1 (0: no rectangles)
//   word 5      rectangle entries this frame   word 6  entry capacity (rect_entries)
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
// IDs are vec2<u32>(low, high). A non-instanced object's instance is PICK_NO_INSTANCE.

const PICK_NO_INSTANCE: u32 = 0xFFFFFFFFu;
// Hit flags: something was hit; the query is a point; a radius query; answered under Snap::Thin.
const PICK_FOUND: u32 = 1u;
const PICK_POINT: u32 = 2u;
const PICK_RADIUS: u32 = 4u;
const PICK_THIN: u32 = 8u;

struct PickHit {
    id: vec2<u32>,      // 0 when nothing was hit
    instance: u32,      // PICK_NO_INSTANCE for a non-instanced draw
    draw_index: u32,    // the draw's index in the list recorded
    pixel: vec2<u32>,   // the pixel hit (a radius query's chosen pixel), else the query's
    depth: f32,         // window depth in [0, 1]; the clear depth on a miss
    flags: u32,
};

struct PickResults {
    frame: vec2<u32>,
    query_count: u32,
    hit_capacity: u32,
    lookup_mask: u32,
    entry_count: u32,
    entry_capacity: u32,
    counts_at: u32,
    words: array<u32>,
};

@group(PICK_RESULTS_GROUP) @binding(PICK_RESULTS_BINDING) var<storage, read> pick_results: PickResults;

fn pick_spans_at() -> u32 { return 8u * pick_results.hit_capacity; }
fn pick_starts_at() -> u32 { return pick_spans_at() + 6u * pick_results.entry_capacity; }

// Query `query`'s hit; flags 0 for a rectangle or a query past the set.
fn pick_hit(query: u32) -> PickHit {
    var h = PickHit(vec2<u32>(0u), PICK_NO_INSTANCE, 0xFFFFFFFFu, vec2<u32>(0u), 1.0, 0u);
    if query < pick_results.query_count && query < pick_results.hit_capacity {
        let w = 8u * query;
        h.id = vec2<u32>(pick_results.words[w], pick_results.words[w + 1u]);
        h.instance = pick_results.words[w + 2u];
        h.draw_index = pick_results.words[w + 3u];
        h.pixel = vec2<u32>(pick_results.words[w + 4u], pick_results.words[w + 5u]);
        h.depth = bitcast<f32>(pick_results.words[w + 6u]);
        h.flags = pick_results.words[w + 7u];
    }
    return h;
}

// Whether point or radius query `query` hit object `id`, instance `instance`.
fn pick_is_hit(query: u32, id: vec2<u32>, instance: u32) -> bool {
    let h = pick_hit(query);
    return (h.flags & PICK_FOUND) != 0u && all(h.id == id) && h.instance == instance;
}

// Whether any point or radius query of the frame hit object `id`, instance `instance`.
fn pick_is_hovered(id: vec2<u32>, instance: u32) -> bool {
    let n = min(pick_results.query_count, pick_results.hit_capacity);
    for (var q = 0u; q < n; q++) {
        if pick_is_hit(q, id, instance) {
            return true;
        }
    }
    return false;
}

// The lookup's hash of (query, id); the low bits name the bucket.
fn pick_lookup_hash(query: u32, id: vec2<u32>) -> u32 {
    var h = query * 0x9E3779B1u;
    h = (h ^ id.x) * 0x85EBCA77u;
    h = (h ^ id.y) * 0xC2B2AE3Du;
    return h ^ (h >> 15u);
}

// Whether object `id`, instance `instance` is in rectangle query `query`'s set (its mode's:
// visible pixels, or every fragment), in this frame. Looks through the spans of the key's
// bucket (an object drawn by several draws has several spans, all there) for one of the
// object's whose entry for `instance` has pixels.
fn pick_in_rect(query: u32, id: vec2<u32>, instance: u32) -> bool {
    let mask = pick_results.lookup_mask;
    if mask == 0u {
        return false;
    }
    let b = pick_starts_at() + (pick_lookup_hash(query, id) & mask);
    let end = pick_results.words[b + 1u];
    for (var span = pick_results.words[b]; span < end; span++) {
        let s = pick_spans_at() + 6u * span;
        let first = pick_results.words[s + 3u];
        let instanced = first != PICK_NO_INSTANCE;
        let same = pick_results.words[s] == id.x && pick_results.words[s + 1u] == id.y && pick_results.words[s + 2u] == query;
        if same && instanced == (instance != PICK_NO_INSTANCE) {
            // The instance's entry in the span (unsigned: below `first` wraps past the end).
            let k = select(0u, instance - first, instanced);
            if k < pick_results.words[s + 4u] && pick_results.words[pick_results.counts_at + pick_results.words[s + 5u] + k] != 0u {
                return true;
            }
        }
    }
    return false;
}
