// Deformation in a pick vertex shader: morph targets, then linear blend skinning, in the
// draw's model space (see crates/picking-vk/src/draw/deform/mod.rs). Included by the offline
// deformed shaders (shaders/pick_deform.glsl) and by hooked pipelines of deformed draws
// (hook_pick.vert), which define first: SKIN_SETS (0, 1 or 2 influence sets), SKIN_FROM_STORAGE
// where joints and weights are read as storage words rather than vertex attributes,
// PICK_STORAGE_SET (the set the host's buffers are bound at, whole: offsets need no descriptor
// alignment), and a push block `pc` with the deformation's words: `bases` (joint, delta and
// weight base words, target count), `counts` (joint count, vertices per morph target),
// `stream_first` and `stream_stride` (the influence streams' first words and strides).

layout(std430, set = PICK_STORAGE_SET, binding = 0) readonly buffer JointWords { float words[]; } joint_words;
layout(std430, set = PICK_STORAGE_SET, binding = 1) readonly buffer DeltaWords { float words[]; } delta_words;
layout(std430, set = PICK_STORAGE_SET, binding = 2) readonly buffer WeightWords { float words[]; } weight_words;

#ifdef SKIN_FROM_STORAGE
// The streams' formats: joints 0 = four u8, 1 = four u16; weights 0 = four f32, 1 = four
// unorm8, 2 = four unorm16 (`JointFormat::code`, `WeightFormat::code`).
layout(constant_id = 1) const uint JOINT_FORMAT_0 = 0;
layout(constant_id = 2) const uint WEIGHT_FORMAT_0 = 0;
layout(constant_id = 3) const uint JOINT_FORMAT_1 = 0;
layout(constant_id = 4) const uint WEIGHT_FORMAT_1 = 0;
layout(std430, set = PICK_STORAGE_SET, binding = 3) readonly buffer Joints0 { uint words[]; } joints0;
layout(std430, set = PICK_STORAGE_SET, binding = 4) readonly buffer Weights0 { uint words[]; } weights0;
#if SKIN_SETS >= 2
layout(std430, set = PICK_STORAGE_SET, binding = 5) readonly buffer Joints1 { uint words[]; } joints1;
layout(std430, set = PICK_STORAGE_SET, binding = 6) readonly buffer Weights1 { uint words[]; } weights1;
#endif

uint joint_word(uint set, uint i) {
#if SKIN_SETS >= 2
    if (set == 1u) return joints1.words[i];
#endif
    return joints0.words[i];
}

uint weight_word(uint set, uint i) {
#if SKIN_SETS >= 2
    if (set == 1u) return weights1.words[i];
#endif
    return weights0.words[i];
}

// Set `set`'s four joint indices of vertex `v`, as the vertex attribute would give them
// (little-endian words; only the words of the vertex's own element are read).
uvec4 stream_joints(uint set, uint v) {
    uint at = pc.stream_first[2u * set] + v * pc.stream_stride[2u * set];
    uint w0 = joint_word(set, at);
    if ((set == 0u ? JOINT_FORMAT_0 : JOINT_FORMAT_1) == 0u) {
        return uvec4(w0 & 0xFFu, (w0 >> 8u) & 0xFFu, (w0 >> 16u) & 0xFFu, w0 >> 24u);
    }
    uint w1 = joint_word(set, at + 1u);
    return uvec4(w0 & 0xFFFFu, w0 >> 16u, w1 & 0xFFFFu, w1 >> 16u);
}

// Set `set`'s four weights of vertex `v`, as the vertex attribute would give them.
vec4 stream_weights(uint set, uint v) {
    uint at = pc.stream_first[2u * set + 1u] + v * pc.stream_stride[2u * set + 1u];
    uint format = set == 0u ? WEIGHT_FORMAT_0 : WEIGHT_FORMAT_1;
    if (format == 1u) {
        return unpackUnorm4x8(weight_word(set, at));
    }
    if (format == 2u) {
        return vec4(unpackUnorm2x16(weight_word(set, at)), unpackUnorm2x16(weight_word(set, at + 1u)));
    }
    return uintBitsToFloat(uvec4(weight_word(set, at), weight_word(set, at + 1u), weight_word(set, at + 2u), weight_word(set, at + 3u)));
}
#else
#if SKIN_SETS >= 1
layout(location = 9) in uvec4 in_joints0;
layout(location = 10) in vec4 in_weights0;
#endif
#if SKIN_SETS >= 2
layout(location = 11) in uvec4 in_joints1;
layout(location = 12) in vec4 in_weights1;
#endif
#endif
// Joint `j`'s matrix, its affine rows only (the bottom row plays no part in the point);
// indices past the joint count read the last joint.
mat4x3 joint_matrix(uint j) {
    uint at = pc.bases.x + min(j, pc.counts.x - 1u) * 16u;
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

// The vertex `vertex` at `p` (its rest position), morphed then skinned, in model space.
vec3 pick_deformed(vec3 p, uint vertex) {
    for (uint t = 0u; t < pc.bases.w; t++) {
        float w = weight_words.words[pc.bases.z + t];
        if (w != 0.0) {
            uint at = pc.bases.y + (t * pc.counts.y + vertex) * 3u;
            p += w * vec3(delta_words.words[at], delta_words.words[at + 1u], delta_words.words[at + 2u]);
        }
    }
#if SKIN_SETS >= 1
#ifdef SKIN_FROM_STORAGE
    mat4x3 skin = blend(stream_joints(0u, vertex), stream_weights(0u, vertex));
#if SKIN_SETS >= 2
    skin += blend(stream_joints(1u, vertex), stream_weights(1u, vertex));
#endif
#else
    mat4x3 skin = blend(in_joints0, in_weights0);
#if SKIN_SETS >= 2
    skin += blend(in_joints1, in_weights1);
#endif
#endif
    // The affine result, whatever the weights sum to (as the CPU's detail computes it).
    p = skin * vec4(p, 1.0);
#endif
    return p;
}
