// The pick pass's output contract for contributors (picking_vk::CONTRIBUTOR_GLSL): include it
// in the fragment shader of a contributor's pick pipeline, with PICK_DETAIL defined when
// ContributorContext::detail is true (the pass then has a third colour attachment).
//
// Each fragment writes the object ID (64 bits as (low, high); never 0, inside the
// contributor's ID range), the draw index the picker handed to PickContributor::record
// (ContributorContext::draw_index), and an instance number of the contributor's own, which
// results report as the hit's instance. Depth is the fragment's own, tested against the
// pass's depth buffer with ContributorContext::depth_compare, so contributors and meshes
// depth-sort together. Detail gets a sentinel: contributor hits carry no triangle detail.
layout(location = 0) out uvec2 pick_out_id;
layout(location = 1) out uvec2 pick_out_draw_instance;
#ifdef PICK_DETAIL
layout(location = 2) out uvec4 pick_out_detail;
#endif

void pick_write(uvec2 id, uint draw_index, uint instance) {
    pick_out_id = id;
    pick_out_draw_instance = uvec2(draw_index, instance);
#ifdef PICK_DETAIL
    pick_out_detail = uvec4(0xFFFFFFFFu, 0u, 0u, 0u);
#endif
}

// `base + offset` as a 64-bit ID in (low, high) words.
uvec2 pick_id_add(uvec2 base, uint offset) {
    uint carry;
    uint low = uaddCarry(base.x, offset, carry);
    return uvec2(low, base.y + carry);
}
