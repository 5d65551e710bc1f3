#version 450
// GPU planning, after shaders/pick_cull.comp and a barrier: a workgroup per pair puts the
// commands its survivors claimed in instance order (so the pick draws them in the order the
// host's draw would: depth ties resolve as without culling) and writes the pair's draw count;
// when the survivors overflowed the pair's share of the commands, the draw count is 0 and the
// fallback command draws the whole range, in order. Job and counter words as in
// crates/picking-vk/src/gpu_plan/layout.rs.

layout(local_size_x = 64) in;
const uint GROUP = 64u;
// Claimed commands sorted in shared memory (8 KiB); more are sorted in the plan buffer.
const uint SORT_CAPACITY = 2048u;

layout(push_constant) uniform FinishPush {
    uvec4 pairs; // (pairs, unused, unused, unused)
} pc;

layout(std430, set = 0, binding = 0) buffer PlanWords {
    uint words[];
} plan;

const uint JOB_WORDS = 48u;
const uint CLAIMED = 0u;
const uint DRAWN = 2u;

shared uint keys[SORT_CAPACITY];

// Orders keys[a] <= keys[b].
void order_shared(uint a, uint b) {
    uint x = keys[a];
    uint y = keys[b];
    if (x > y) {
        keys[a] = y;
        keys[b] = x;
    }
}

// Orders the instance words of commands a <= b in the buffer (b past `count` holds +infinity:
// nothing to do).
void order_buffer(uint words_at, uint count, uint a, uint b) {
    if (b >= count) {
        return;
    }
    uint x = plan.words[words_at + 5u * a];
    uint y = plan.words[words_at + 5u * b];
    if (x > y) {
        plan.words[words_at + 5u * a] = y;
        plan.words[words_at + 5u * b] = x;
    }
}

// Sorts the `count` claimed commands' instance words (`words_at`, 5 words apart) ascending:
// a bitonic network of ascending comparisons over the next power of two (a flip, then
// half-cleaners).
void sort_commands(uint words_at, uint count) {
    uint n = 1u;
    while (n < count) {
        n <<= 1u;
    }
    bool in_shared = n <= SORT_CAPACITY;
    uint lid = gl_LocalInvocationID.x;
    if (in_shared) {
        for (uint i = lid; i < n; i += GROUP) {
            keys[i] = i < count ? plan.words[words_at + 5u * i] : 0xFFFFFFFFu;
        }
        barrier();
    }
    for (uint size = 2u; size <= n; size <<= 1u) {
        for (uint step = size >> 1u; step > 0u; step >>= 1u) {
            for (uint i = lid; i < n / 2u; i += GROUP) {
                uint block = i / step;
                uint offset = i % step;
                uint a = block * 2u * step + offset;
                // The first step of each size flips (compares mirrored positions).
                uint b = step == size >> 1u ? a + 2u * (step - offset) - 1u : a + step;
                if (in_shared) {
                    order_shared(a, b);
                } else {
                    order_buffer(words_at, count, a, b);
                }
            }
            memoryBarrierBuffer();
            barrier();
        }
    }
    if (in_shared) {
        for (uint i = lid; i < count; i += GROUP) {
            plan.words[words_at + 5u * i] = keys[i];
        }
    }
}

void main() {
    uint pair = gl_WorkGroupID.x;
    if (pair >= pc.pairs.x) {
        return;
    }
    uint job = pair * JOB_WORDS;
    uint counters = plan.words[job + 33u];
    uint claimed = plan.words[counters + CLAIMED];
    if (claimed > plan.words[job + 35u]) {
        if (gl_LocalInvocationID.x == 0u) {
            plan.words[counters + DRAWN] = 0u;
            plan.words[plan.words[job + 36u] + 1u] = plan.words[job + 32u];
        }
        return;
    }
    // The instance word: the fifth of an indexed command, the fourth of another.
    uint field = plan.words[job + 40u] != 0u ? 4u : 3u;
    sort_commands(plan.words[job + 34u] + field, claimed);
    if (gl_LocalInvocationID.x == 0u) {
        plan.words[counters + DRAWN] = claimed;
    }
}
