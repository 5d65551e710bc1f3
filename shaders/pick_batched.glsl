// The batched vertex shaders' body (shaders/pick_batched.vert, shaders/pick_batched_detail.vert,
// shaders/pick_batched_rect.vert): each draw's data is a row of a buffer, read as
// per-instance attributes. Layout mirrors `DrawRow` in crates/picking-vk/src/record/batch.rs
// (80 bytes).

// The draw's point size (RasterState::point_size), for point lists; ignored otherwise.
layout(constant_id = 0) const float PICK_POINT_SIZE = 1.0;
layout(location = 0) in vec3 in_position;
layout(location = 1) in vec4 in_mvp_col0; // projection * view * model, composed on the CPU in f64
layout(location = 2) in vec4 in_mvp_col1;
layout(location = 3) in vec4 in_mvp_col2;
layout(location = 4) in vec4 in_mvp_col3;
layout(location = 5) in uvec2 in_object_id; // 64-bit object ID as (low, high) words
layout(location = 6) in uint in_draw_index; // index of the draw in this frame's snapshot
layout(location = 0) flat out uint out_instance;
layout(location = 1) flat out uvec2 out_object_id;
layout(location = 2) flat out uint out_draw_index;
#ifdef PICK_PRIMITIVE_BASE
// The row's last word: the triangles its command skips (a GPU-planned span of chunks, drawn
// from a span row; 0 elsewhere), which shaders/pick_batched_detail.frag adds to
// gl_PrimitiveID, which counts from the command's first triangle.
layout(location = 7) in uint in_primitive_base;
layout(location = 3) flat out uint out_primitive_base;
#endif

void main() {
    gl_Position = mat4(in_mvp_col0, in_mvp_col1, in_mvp_col2, in_mvp_col3) * vec4(in_position, 1.0);
    gl_PointSize = PICK_POINT_SIZE;
    out_object_id = in_object_id;
    out_instance = 0u;
#ifdef PICK_PRIMITIVE_BASE
    out_primitive_base = in_primitive_base;
#endif
#ifdef PICK_RECT_ENTRIES
    // A row's rectangle table entry: its snapshot index (the table's row 0 at a fixed base,
    // plus the row) offset by the pushed draw index, which maps the group's rows onto its
    // entries.
    out_draw_index = pc.draw_index + in_draw_index;
#else
    out_draw_index = in_draw_index;
#endif
}
