// A candidate's box projected to the pixels it may cover, padded: how the cull pass tests
// table rows and instances (shaders/pick_cull.glsl) and the finishing pass tests a table
// row's chunks (shaders/pick_cull_finish_draws.comp). Included after the plan buffer is
// declared; job words as in crates/picking-vk/src/gpu_plan/layout.rs.

float job_float(uint at) {
    return uintBitsToFloat(plan.words[at]);
}

vec3 job_vec3(uint at) {
    return vec3(job_float(at), job_float(at + 1u), job_float(at + 2u));
}

vec4 job_vec4(uint at) {
    return vec4(job_float(at), job_float(at + 1u), job_float(at + 2u), job_float(at + 3u));
}

// The pixel positions of the corners of the box `screen_bounds` last projected (unpadded),
// for `hull_meets_region`.
vec2 screen_corners[8];

// The pixel rectangle a candidate's box (`lo`, `hi`) under `instance` then `mvp` can cover
// (min, max), or none (`keep`: a corner at or behind the eye plane, a projective instance
// transform) when only that it may cover anything is known. The box's corners go through the
// instance transform first, as the vertex shader's positions do; their axis-aligned hull is
// grown by the float rounding of that step, then projected and padded (`job`: the draw's
// viewport and padding).
vec4 screen_bounds(uint job, mat4 mvp, vec3 lo, vec3 hi, mat4 instance, out bool keep) {
    keep = true;
    vec3 wlo = vec3(3.0e38);
    vec3 whi = vec3(-3.0e38);
    for (uint k = 0u; k < 8u; k++) {
        vec3 corner = vec3((k & 1u) != 0u ? hi.x : lo.x, (k & 2u) != 0u ? hi.y : lo.y, (k & 4u) != 0u ? hi.z : lo.z);
        vec4 p = instance * vec4(corner, 1.0);
        // A projective instance transform: its box is not the hull of the corners' images.
        if (p.w != 1.0) {
            return vec4(0.0);
        }
        wlo = min(wlo, p.xyz);
        whi = max(whi, p.xyz);
    }
    float rounding = 4.0e-7 * max(max(abs(wlo.x), abs(whi.x)), max(max(abs(wlo.y), abs(whi.y)), max(abs(wlo.z), abs(whi.z))));
    wlo -= vec3(rounding);
    whi += vec3(rounding);
    vec2 nlo = vec2(3.0e38);
    vec2 nhi = vec2(-3.0e38);
    for (uint k = 0u; k < 8u; k++) {
        vec3 corner = vec3((k & 1u) != 0u ? whi.x : wlo.x, (k & 2u) != 0u ? whi.y : wlo.y, (k & 4u) != 0u ? whi.z : wlo.z);
        vec4 clip = mvp * vec4(corner, 1.0);
        // Also keeps a NaN: the comparison fails.
        if (!(clip.w > 1.0e-6)) {
            return vec4(0.0);
        }
        vec2 ndc = clip.xy / clip.w;
        nlo = min(nlo, ndc);
        nhi = max(nhi, ndc);
        screen_corners[k] = ndc;
    }
    vec4 viewport = job_vec4(job + 27u);
    for (uint k = 0u; k < 8u; k++) {
        screen_corners[k] = viewport.xy + (screen_corners[k] * 0.5 + 0.5) * viewport.zw;
    }
    vec2 a = viewport.xy + (nlo * 0.5 + 0.5) * viewport.zw;
    vec2 b = viewport.xy + (nhi * 0.5 + 0.5) * viewport.zw;
    float pad = job_float(job + 26u);
    keep = false;
    return vec4(min(a, b) - vec2(pad), max(a, b) + vec2(pad));
}

// Whether pixel bounds from `screen_bounds` (`keep`: any pixel) meet `region`, the first and
// last pixel centres of a pair's region.
bool bounds_meet_region(vec4 rect, bool keep, vec4 region) {
    return keep || (all(lessThanEqual(rect.xy, region.zw)) && all(greaterThanEqual(rect.zw, region.xy)));
}

// Whether the projected box of the last `screen_bounds` (that did not keep) may reach a pixel
// centre of `region` (first and last centres) padded by `pad`: false where an edge of the
// box's outline separates them. The outline is the convex hull of the 8 projected corners and
// its edges are among the 12 projected box edges, so their normals with the rectangle's
// (`bounds_meet_region`) are every axis that can separate the two. The pad covers the
// vertices' own rounding as it does for the rectangle (its reach along an axis n is pad
// (|n.x| + |n.y|)), and 1e-5 of the extent a bound on the rounding of these dot products.
bool hull_meets_region(vec4 region, float pad) {
    vec2 centre = 0.5 * (region.xy + region.zw);
    vec2 half_size = 0.5 * (region.zw - region.xy);
    float size = max(abs(half_size.x), abs(half_size.y));
    for (uint k = 0u; k < 8u; k++) {
        size = max(size, max(abs(screen_corners[k].x - centre.x), abs(screen_corners[k].y - centre.y)));
    }
    for (uint e = 0u; e < 12u; e++) {
        // Edge e joins corner a and corner a + axis, a without the axis's bit.
        uint bit = 1u << (e / 4u);
        uint low = e % 4u;
        uint a = bit == 1u ? low << 1u : (bit == 2u ? (low & 1u) | ((low & 2u) << 1u) : low);
        vec2 d = screen_corners[a + bit] - screen_corners[a];
        vec2 n = vec2(-d.y, d.x);
        float lo = 3.0e38;
        float hi = -3.0e38;
        for (uint k = 0u; k < 8u; k++) {
            float t = dot(n, screen_corners[k] - centre);
            lo = min(lo, t);
            hi = max(hi, t);
        }
        float reach = dot(abs(n), abs(half_size)) + (pad + 1.0e-5 * size) * (abs(n.x) + abs(n.y));
        if (lo > reach || hi < -reach) {
            return false;
        }
    }
    return true;
}
