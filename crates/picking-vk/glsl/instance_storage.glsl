// Per-instance transforms read from the host's storage buffer (InstanceBinding::StorageBuffer):
// instance `i` is the element at word `base + i * stride` of the buffer bound whole at set
// PICK_STORAGE_SET (offsets need no descriptor alignment), a column-major mat4 or, with `rows`
// set, a row-major 3x4. Included by shaders/pick_instanced_storage.vert and by hooked
// pipelines of such draws (hook_pick.vert), which define PICK_STORAGE_SET and a push block
// `pc` with `storage` = (base word, stride in words, rows, unused).

layout(std430, set = PICK_STORAGE_SET, binding = 0) readonly buffer InstanceWords {
    float words[];
} instances;

mat4 pick_storage_instance(uint i) {
    uint at = pc.storage.x + i * pc.storage.y;
    mat4 instance;
    if (pc.storage.z != 0u) {
        vec4 r0 = vec4(instances.words[at], instances.words[at + 1u], instances.words[at + 2u], instances.words[at + 3u]);
        vec4 r1 = vec4(instances.words[at + 4u], instances.words[at + 5u], instances.words[at + 6u], instances.words[at + 7u]);
        vec4 r2 = vec4(instances.words[at + 8u], instances.words[at + 9u], instances.words[at + 10u], instances.words[at + 11u]);
        instance = transpose(mat4(r0, r1, r2, vec4(0.0, 0.0, 0.0, 1.0)));
    } else {
        for (int c = 0; c < 4; c++) {
            uint k = at + uint(4 * c);
            instance[c] = vec4(instances.words[k], instances.words[k + 1u], instances.words[k + 2u], instances.words[k + 3u]);
        }
    }
    return instance;
}
