// The rectangle table, three arrays of `capacity` words: fragment or pixel counts, nearest
// depth keys (depth bits, inverted for reverse-Z so that atomicMin finds the nearest) and
// first pixels (row-major index in the rectangle: every tile of a rectangle adds to the same
// entries). Mirrors crates/picking-vk/src/pass/rect.rs. Included by shaders/pick_rect_all.frag
// and, at run time, by hooked rectangle pipelines (glsl/hook_pick.frag).
layout(std430, set = 0, binding = 0) buffer RectTable {
    uint words[];
} table;

void table_add(uint entry, uint capacity, uint depth_key, uint pixel) {
    if (entry >= capacity) {
        return;
    }
    atomicAdd(table.words[entry], 1u);
    atomicMin(table.words[capacity + entry], depth_key);
    atomicMin(table.words[2u * capacity + entry], pixel);
}
