#version 450
// A host's GPU-driven instances (crates/host/src/instance_motion.rs): each frame this pass
// writes every instance's transform, its base transform moved along a sway that depends on
// the time and the instance. Nothing on the CPU knows the result.
layout(local_size_x = 64) in;

layout(std430, set = 0, binding = 0) readonly buffer Base {
    mat4 base[];
};
layout(std430, set = 0, binding = 1) writeonly buffer Transforms {
    mat4 transforms[];
};
layout(push_constant) uniform Motion {
    uint count;
    float time;
    float amplitude;
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.count) {
        return;
    }
    float fi = float(i);
    mat4 m = base[i];
    m[3].xyz += pc.amplitude * vec3(sin(pc.time + fi * 0.37), cos(pc.time * 1.3 + fi * 0.11), sin(pc.time * 0.7 + fi * 0.23));
    transforms[i] = m;
}
