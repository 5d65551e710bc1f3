// GPU planning: how the pick pass's vertex shader draws a walked pair (crates/picking-vk/src/
// gpu_plan, `walkable`): one command over as many instances as the pair's survivors (the
// cull pass, shaders/pick_cull.glsl, counted them), whose k-th instance is the pair's k-th
// survivor in instance order, found in the pair's survivor bits without a finishing pass.
// Job words as in crates/picking-vk/src/gpu_plan/layout.rs; the pair's bits are two words a
// cull workgroup, then a summary bit a workgroup, then a survivor count a summary word.

layout(std430, set = 2, binding = 0) readonly buffer PlanWords {
    uint words[];
} plan;

const uint WALK_JOB_WORDS = 54u;
// What `walked_instance` returns for a k past the pair's survivors (never, as counted).
const uint NO_INSTANCE = 0xFFFFFFFFu;

// The instance (as the host numbers them, the draw's first included) of pair `pair`'s k-th
// survivor, counted from 0: the counts skip whole summary words, the summary's bits whole
// workgroups, and the bits of one workgroup give the instance. At most a count per 2,048
// instances, a summary's 32 workgroups and 31 bits are read, however many survive.
uint walked_instance(uint pair, uint k) {
    uint job = pair * WALK_JOB_WORDS;
    uint bits = plan.words[job + 41u];
    uint summary = plan.words[job + 42u];
    uint summaries = (plan.words[job + 32u] / 64u + 31u) / 32u;
    // Four counts a step, read together: each step waits on its reads once.
    uint counts = summary + summaries;
    uint s = 0u;
    for (; s + 4u < summaries; s += 4u) {
        uvec4 c = uvec4(plan.words[counts + s], plan.words[counts + s + 1u], plan.words[counts + s + 2u], plan.words[counts + s + 3u]);
        uint four = c.x + c.y + c.z + c.w;
        if (k < four) {
            break;
        }
        k -= four;
    }
    for (; s + 1u < summaries; s++) {
        uint count = plan.words[counts + s];
        if (k < count) {
            break;
        }
        k -= count;
    }
    for (uint mask = plan.words[summary + s]; mask != 0u; mask &= mask - 1u) {
        uint g = 32u * s + uint(findLSB(mask));
        uint low = plan.words[bits + 2u * g];
        uint high = plan.words[bits + 2u * g + 1u];
        uint in_low = uint(bitCount(low));
        uint here = in_low + uint(bitCount(high));
        if (k < here) {
            uint word = k < in_low ? low : high;
            uint first = 64u * g + (k < in_low ? 0u : 32u);
            for (uint j = k < in_low ? k : k - in_low; j > 0u; j--) {
                word &= word - 1u;
            }
            return plan.words[job + 31u] + first + uint(findLSB(word));
        }
        k -= here;
    }
    return NO_INSTANCE;
}
