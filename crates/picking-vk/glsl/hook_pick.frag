// Pick fragment shader of hooked draws: the discard hook (PICK_DISCARD_HOOK) runs first, then
// the pass's own outputs, by flavour: PICK_HIT (ID and draw/instance), PICK_HIT_DETAIL (and
// primitive and barycentrics), PICK_RECT_VISIBLE (table entry and depth bits), PICK_RECT_ALL
// (table atomics, rect_table.glsl inserted after the hooks, which so cannot name the table). As shaders/pick*.frag, which draws
// without hooks use.
#ifdef PICK_HIT_DETAIL
#extension GL_EXT_fragment_shader_barycentric : require
#endif

layout(location = 0) flat in uint in_instance;
layout(location = 1) flat in uvec2 in_object_id;
layout(location = 2) flat in uint in_draw_index;
#ifdef PICK_PRIMITIVE_BASE
// After a batched vertex stage in the detail pass: the triangles the draw's command skipped.
layout(location = 5) flat in uint in_primitive_base;
#endif
#ifdef PICK_DISCARD_HOOK
layout(location = 3) in vec3 in_world;
#if defined(PICK_ATTRIBUTE) && defined(PICK_ATTRIBUTE_FLAT)
layout(location = 4) flat in vec4 in_attribute;
#elif defined(PICK_ATTRIBUTE)
layout(location = 4) in vec4 in_attribute;
#endif
#endif

#if defined(PICK_HIT) || defined(PICK_HIT_DETAIL)
layout(location = 0) out uvec2 out_object_id;
layout(location = 1) out uvec2 out_draw_instance;
#endif
#ifdef PICK_HIT_DETAIL
layout(location = 2) out uvec4 out_detail;
#endif
#ifdef PICK_RECT_VISIBLE
layout(location = 0) out uvec2 out_entry_depth;
#endif

// @HOOKS@

void main() {
#ifdef PICK_DISCARD_HOOK
    vec4 attrib = vec4(0.0, 0.0, 0.0, 1.0);
#ifdef PICK_ATTRIBUTE
    attrib = in_attribute;
#endif
    if (pick_discard(PickFragment(in_world, gl_FragCoord.xy - pc.pixel_shift, in_object_id, in_instance, attrib))) {
        discard;
    }
#endif
#if defined(PICK_HIT) || defined(PICK_HIT_DETAIL)
    out_object_id = in_object_id;
    out_draw_instance = uvec2(in_draw_index, in_instance);
#endif
#ifdef PICK_HIT_DETAIL
    uint face = uint(gl_PrimitiveID);
#ifdef PICK_PRIMITIVE_BASE
    face += in_primitive_base;
#endif
    out_detail = uvec4(face, floatBitsToUint(gl_BaryCoordEXT));
#endif
#if defined(PICK_RECT_VISIBLE) || defined(PICK_RECT_ALL)
    // ID 0 is never drawn; reading the ID keeps the vertex stage's outputs all consumed.
    if (in_object_id == uvec2(0u)) {
        discard;
    }
#endif
#ifdef PICK_RECT_VISIBLE
    out_entry_depth = uvec2(in_draw_index + in_instance + 1u, floatBitsToUint(gl_FragCoord.z));
#endif
#ifdef PICK_RECT_ALL
    uint depth = floatBitsToUint(gl_FragCoord.z);
    uint key = pc.rect_tile.y != 0u ? ~depth : depth;
    uvec2 p = uvec2(gl_FragCoord.xy) + pc.rect_origin.xy;
    table_add(in_draw_index + in_instance, pc.rect_tile.z, key, p.y * pc.rect_tile.x + p.x);
#endif
}
