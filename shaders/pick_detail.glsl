// The detail pick fragment shaders' body (shaders/pick_detail.frag, and with
// PICK_PRIMITIVE_BASE shaders/pick_batched_detail.frag): the primitive index and the
// barycentric coordinates of the winning fragment, stored as raw float bits so nothing is
// lost to a normalized format. gl_PrimitiveID needs the geometryShader feature;
// gl_BaryCoordEXT needs VK_KHR_fragment_shader_barycentric.
#extension GL_EXT_fragment_shader_barycentric : require

layout(location = 0) flat in uint in_instance;
layout(location = 1) flat in uvec2 in_object_id;
layout(location = 2) flat in uint in_draw_index;
#ifdef PICK_PRIMITIVE_BASE
// The triangles the draw's command skipped: gl_PrimitiveID counts from its first.
layout(location = 3) flat in uint in_primitive_base;
#endif
layout(location = 0) out uvec2 out_object_id;
layout(location = 1) out uvec2 out_draw_instance;
layout(location = 2) out uvec4 out_detail;

void main() {
    out_object_id = in_object_id;
    out_draw_instance = uvec2(in_draw_index, in_instance);
    uint face = uint(gl_PrimitiveID);
#ifdef PICK_PRIMITIVE_BASE
    face += in_primitive_base;
#endif
    out_detail = uvec4(face, floatBitsToUint(gl_BaryCoordEXT));
}
