// Viewer: highlights read from the picker's GPU results in the frame that asked (set 2),
// for the slot's object (in_pick_key: ID low, high, instance; ID 0 for markers). The frame's
// light_dir.w holds the mode bits: 1 hover from the results, 2 the band's live set, whose
// query index is bits 8 and up.
#define PICK_RESULTS_SET 2
#define PICK_RESULTS_BINDING 0
#include "pick_results.glsl"

const uint TINT_HOVERED = 1u;
const uint TINT_BAND = 8u;

uint pick_tint(uint flags, uvec4 key, uint mode) {
    if (key.xy == uvec2(0u)) {
        return flags;
    }
    if ((mode & 1u) != 0u && pick_is_hovered(key.xy, key.z)) {
        flags |= TINT_HOVERED;
    }
    if ((mode & 2u) != 0u && pick_in_rect(mode >> 8u, key.xy, key.z)) {
        flags |= TINT_BAND;
    }
    return flags;
}
