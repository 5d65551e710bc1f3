// Push constants shared by every pick shader stage. Layout mirrors `PickPush` in
// crates/picking-vk/src/pipeline.rs (80 bytes, within the 128 bytes every device offers).
layout(push_constant) uniform PickPush {
    mat4 model_view_projection; // projection * view * model, composed on the CPU in f64
    uvec2 object_id;            // 64-bit object ID as (low, high) words
    uint draw_index;            // index of the draw in this frame's snapshot
    uint first_instance;        // host's firstInstance, so instances are numbered from 0
} pc;
