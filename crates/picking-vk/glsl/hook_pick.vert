// Pick vertex shader of hooked draws: the world position is computed, handed to the
// world-adjust hook (PICK_WORLD_HOOK), and projected. Variant defines: PICK_INSTANCED_MAT4,
// PICK_INSTANCED_ROWS or PICK_BATCHED (the draw's model, ID and snapshot index from a batch row,
// as shaders/pick_batched.vert reads them; with PICK_RECT_ENTRIES, in a rectangle pass, a GPU
// plan table group's), PICK_INSTANCED_STORAGE (instance transforms from
// storage, by instance_storage.glsl) or PICK_DEFORM (the vertex morphed and skinned first, by
// deform.glsl); the included parts are inserted before, with their defines. PICK_ATTRIBUTE
// with PICK_ATTRIBUTE_FLAT.

// The draw's point size (RasterState::point_size), for point lists; ignored otherwise.
layout(constant_id = 0) const float PICK_POINT_SIZE = 1.0;
layout(location = 0) in vec3 in_position;
#if defined(PICK_INSTANCED_MAT4)
layout(location = 1) in vec4 in_instance_0;
layout(location = 2) in vec4 in_instance_1;
layout(location = 3) in vec4 in_instance_2;
layout(location = 4) in vec4 in_instance_3;
#elif defined(PICK_INSTANCED_ROWS)
layout(location = 1) in vec4 in_instance_0;
layout(location = 2) in vec4 in_instance_1;
layout(location = 3) in vec4 in_instance_2;
#elif defined(PICK_BATCHED)
layout(location = 1) in vec4 in_row_0;
layout(location = 2) in vec4 in_row_1;
layout(location = 3) in vec4 in_row_2;
layout(location = 4) in vec4 in_row_3;
layout(location = 5) in uvec2 in_row_id;
layout(location = 6) in uint in_row_draw;
#ifdef PICK_PRIMITIVE_BASE
// The triangles the row's command skips (a GPU-planned span of chunks; 0 elsewhere): the
// detail fragment stage adds them to gl_PrimitiveID.
layout(location = 7) in uint in_row_base;
layout(location = 5) flat out uint out_primitive_base;
#endif
#endif
#ifdef PICK_ATTRIBUTE
layout(location = 8) in vec4 in_attribute;
#endif
layout(location = 0) flat out uint out_instance;
layout(location = 1) flat out uvec2 out_object_id;
layout(location = 2) flat out uint out_draw_index;
// The world position and attribute go on only to a discard hook (every output is consumed).
#ifdef PICK_DISCARD_HOOK
layout(location = 3) out vec3 out_world;
#if defined(PICK_ATTRIBUTE) && defined(PICK_ATTRIBUTE_FLAT)
layout(location = 4) flat out vec4 out_attribute;
#elif defined(PICK_ATTRIBUTE)
layout(location = 4) out vec4 out_attribute;
#endif
#endif

// @HOOKS@

void main() {
    mat4 object = pc.model;
    uvec2 id = pc.object_id;
    uint draw_index = pc.draw_index;
    uint instance = uint(gl_InstanceIndex) - pc.first_instance;
#if defined(PICK_BATCHED)
    object = mat4(in_row_0, in_row_1, in_row_2, in_row_3);
    id = in_row_id;
#ifdef PICK_RECT_ENTRIES
    // A rectangle pass's table group: the row's entry is its snapshot index offset by the
    // pushed draw index.
    draw_index = pc.draw_index + in_row_draw;
#else
    draw_index = in_row_draw;
#endif
    instance = 0u;
#ifdef PICK_PRIMITIVE_BASE
    out_primitive_base = in_row_base;
#endif
#elif defined(PICK_INSTANCED_MAT4)
    object = object * mat4(in_instance_0, in_instance_1, in_instance_2, in_instance_3);
#elif defined(PICK_INSTANCED_ROWS)
    // mat4() takes columns: built from the rows it is the transpose of the instance matrix.
    object = object * transpose(mat4(in_instance_0, in_instance_1, in_instance_2, vec4(0.0, 0.0, 0.0, 1.0)));
#elif defined(PICK_INSTANCED_STORAGE)
    object = object * pick_storage_instance(uint(gl_InstanceIndex));
#endif
    vec3 local = in_position;
#ifdef PICK_DEFORM
    local = pick_deformed(local, uint(gl_VertexIndex));
#endif
    vec4 w = object * vec4(local, 1.0);
    vec4 attrib = vec4(0.0, 0.0, 0.0, 1.0);
#ifdef PICK_ATTRIBUTE
    attrib = in_attribute;
#endif
    vec3 world = w.xyz / w.w;
#ifdef PICK_WORLD_HOOK
    world = pick_world(PickVertex(local, world, mat3(object), instance, attrib));
#endif
    gl_Position = pc.view_projection * vec4(world, 1.0);
    gl_PointSize = PICK_POINT_SIZE;
#ifdef PICK_DISCARD_HOOK
    out_world = world;
#ifdef PICK_ATTRIBUTE
    out_attribute = attrib;
#endif
#endif
    out_instance = instance;
    out_object_id = id;
    out_draw_index = draw_index;
}
