// Body of the deformed pick vertex shaders (pick_skinned.vert: four influences,
// pick_skinned8.vert: eight, pick_morphed.vert: none), which define SKIN_SETS first, and
// PICK_BATCHED for their batched forms (the *_batched.vert files).
// Morph targets, then linear blend skinning, in the draw's model space: see
// crates/picking-vk/src/draw/deform.rs. The host's buffers are bound whole at set 1 (offsets
// need no descriptor alignment). One draw at a time, the draw's data is the push block (as
// pick_push.glsl, the rectangle words, then the deformation's words); batched, it is the
// draw's row of the batch buffer (`DrawRow` in crates/picking-vk/src/record/batch.rs), read
// as per-instance attributes: the indirect command's firstInstance selects the row.

#ifdef PICK_BATCHED
layout(location = 1) in vec4 in_mvp_col0; // projection * view * model, composed on the CPU in f64
layout(location = 2) in vec4 in_mvp_col1;
layout(location = 3) in vec4 in_mvp_col2;
layout(location = 4) in vec4 in_mvp_col3;
layout(location = 5) in uvec2 in_object_id;
layout(location = 6) in uint in_draw_index;
layout(location = 7) in uvec4 in_bases; // as `bases` below
layout(location = 8) in uvec4 in_counts; // as `counts` below
#else
layout(push_constant) uniform DeformPush {
    mat4 model_view_projection; // as pick_push.glsl
    uvec2 object_id;
    uint draw_index;
    uint first_instance;
    // (joint base word, delta base word, weight base word, target count)
    layout(offset = 112) uvec4 bases;
    // (joint count, vertices per morph target, unused, unused)
    uvec4 counts;
} pc;
#endif

// The draw's deformation words (from the push block or the row), set first thing in main().
uvec4 bases;
uvec4 counts;

layout(std430, set = 1, binding = 0) readonly buffer JointWords { float words[]; } joint_words;
layout(std430, set = 1, binding = 1) readonly buffer DeltaWords { float words[]; } delta_words;
layout(std430, set = 1, binding = 2) readonly buffer WeightWords { float words[]; } weight_words;

// The draw's point size (RasterState::point_size), for point lists; ignored otherwise.
layout(constant_id = 0) const float PICK_POINT_SIZE = 1.0;
layout(location = 0) in vec3 in_position;
#if SKIN_SETS >= 1
layout(location = 9) in uvec4 in_joints0;
layout(location = 10) in vec4 in_weights0;
#endif
#if SKIN_SETS >= 2
layout(location = 11) in uvec4 in_joints1;
layout(location = 12) in vec4 in_weights1;
#endif
layout(location = 0) flat out uint out_instance;
layout(location = 1) flat out uvec2 out_object_id;
layout(location = 2) flat out uint out_draw_index;

// Joint `j`'s matrix, its affine rows only (the bottom row plays no part in the point);
// indices past the joint count read the last joint.
mat4x3 joint_matrix(uint j) {
    uint at = bases.x + min(j, counts.x - 1u) * 16u;
    mat4x3 m;
    for (int c = 0; c < 4; c++) {
        uint k = at + uint(4 * c);
        m[c] = vec3(joint_words.words[k], joint_words.words[k + 1u], joint_words.words[k + 2u]);
    }
    return m;
}

// The weighted sum of four joints' matrices; joints of weight 0 are not read.
mat4x3 blend(uvec4 joints, vec4 weights) {
    mat4x3 m = mat4x3(0.0);
    for (int k = 0; k < 4; k++) {
        if (weights[k] != 0.0) {
            m += weights[k] * joint_matrix(joints[k]);
        }
    }
    return m;
}

void main() {
#ifdef PICK_BATCHED
    bases = in_bases;
    counts = in_counts;
#else
    bases = pc.bases;
    counts = pc.counts;
#endif
    vec3 p = in_position;
    uint vertex = uint(gl_VertexIndex);
    for (uint t = 0u; t < bases.w; t++) {
        float w = weight_words.words[bases.z + t];
        if (w != 0.0) {
            uint at = bases.y + (t * counts.y + vertex) * 3u;
            p += w * vec3(delta_words.words[at], delta_words.words[at + 1u], delta_words.words[at + 2u]);
        }
    }
#if SKIN_SETS >= 1
    mat4x3 skin = blend(in_joints0, in_weights0);
#if SKIN_SETS >= 2
    skin += blend(in_joints1, in_weights1);
#endif
    // The affine result, whatever the weights sum to (as the CPU's detail computes it).
    p = skin * vec4(p, 1.0);
#endif
    gl_PointSize = PICK_POINT_SIZE;
#ifdef PICK_BATCHED
    gl_Position = mat4(in_mvp_col0, in_mvp_col1, in_mvp_col2, in_mvp_col3) * vec4(p, 1.0);
    out_instance = 0u;
    out_object_id = in_object_id;
    out_draw_index = in_draw_index;
#else
    gl_Position = pc.model_view_projection * vec4(p, 1.0);
    out_instance = uint(gl_InstanceIndex) - pc.first_instance;
    out_object_id = pc.object_id;
    out_draw_index = pc.draw_index;
#endif
}
