#version 450
// Viewer billboards in the lit pass: flat colour, every other billboard a shade darker.
layout(location = 0) flat in uint in_instance;
layout(location = 1) flat in vec4 in_color;
layout(location = 0) out vec4 out_color;

void main() {
    if (in_color.a <= 0.0) {
        discard;
    }
    out_color = vec4(in_color.rgb * (1.0 - 0.15 * float(in_instance % 2u)), in_color.a);
}
