#version 450
layout(push_constant) uniform Frame {
    mat4 view_projection;
    vec4 eye;
    vec4 light_dir;
} frame;

layout(location = 0) in vec3 in_world;
layout(location = 1) in vec3 in_normal;
layout(location = 2) flat in uint in_flags;
layout(location = 3) flat in vec4 in_base;
layout(location = 4) flat in float in_cutoff;
layout(location = 5) in vec2 in_uv;
layout(location = 6) in vec4 in_color;
// The material's base colour texture (a white texel when it has none).
layout(set = 0, binding = 0) uniform sampler2D base_colour;
layout(location = 0) out vec4 out_colour;

const uint HOVERED = 1u;
const uint SELECTED = 2u;
const uint UNLIT = 4u;
// Inside the rubber band being dragged (the picker's GPU results).
const uint BAND = 8u;

void main() {
    vec4 texel = texture(base_colour, in_uv);
    // glTF alphaMode MASK; the pick pass's discard hook makes the same comparison.
    if (in_base.a * texel.a * in_color.a < in_cutoff) {
        discard;
    }
    vec3 n = normalize(in_normal);
    vec3 v = normalize(frame.eye.xyz - in_world);
    if (dot(n, v) < 0.0) n = -n; // two-sided, as the picker is
    vec3 l = normalize(frame.light_dir.xyz);
    float diffuse = max(dot(n, l), 0.0);
    float sky = 0.5 + 0.5 * n.y;
    float rim = pow(1.0 - max(dot(n, v), 0.0), 3.0);
    vec3 base = in_base.rgb * texel.rgb * in_color.rgb;
    vec3 c = base * (0.25 + 0.25 * sky + 0.65 * diffuse) + 0.08 * rim;
    if ((in_flags & UNLIT) != 0u) c = base;
    if ((in_flags & SELECTED) != 0u) c = mix(c, vec3(1.0, 0.55, 0.1), 0.55) + 0.15 * rim;
    if ((in_flags & BAND) != 0u) c = mix(c, vec3(0.25, 0.6, 1.0), 0.45);
    if ((in_flags & HOVERED) != 0u) c = mix(c, vec3(1.0), 0.3);
    out_colour = vec4(c, 1.0);
}
