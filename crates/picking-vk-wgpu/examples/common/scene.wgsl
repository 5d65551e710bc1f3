// The example app's own pipeline: flat-shaded meshes, instanced through a per-instance
// matrix, tinted where the picker says the cursor, the selection or the rubber band is.

struct Camera {
    view_proj: mat4x4<f32>,
};

struct Object {
    model: mat4x4<f32>,
    color: vec4<f32>,
    // x: 0 nothing hovered, 1 the whole object, 2 + i instance i. y: whole object selected,
    // z: instance mask of the selection, w: 1 whole object in the band.
    hover_select: vec4<u32>,
    // x: instance mask of the band.
    band: vec4<u32>,
};

@group(0) @binding(0) var<uniform> camera: Camera;
@group(1) @binding(0) var<uniform> object: Object;

struct VsOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) @interpolate(flat) state: u32,
};

fn has_instance(mask: u32, instance: u32) -> bool {
    return instance < 32u && ((mask >> instance) & 1u) == 1u;
}

@vertex
fn vs(
    @location(0) position: vec3<f32>,
    @location(1) c0: vec4<f32>,
    @location(2) c1: vec4<f32>,
    @location(3) c2: vec4<f32>,
    @location(4) c3: vec4<f32>,
    @builtin(instance_index) instance: u32,
) -> VsOut {
    let world = object.model * mat4x4<f32>(c0, c1, c2, c3) * vec4<f32>(position, 1.0);
    let hs = object.hover_select;
    var state = 0u;
    if hs.x == 1u || hs.x == instance + 2u {
        state |= 1u;
    }
    if hs.y == 1u || has_instance(hs.z, instance) {
        state |= 2u;
    }
    if hs.w == 1u || has_instance(object.band.x, instance) {
        state |= 4u;
    }
    var out: VsOut;
    out.clip = camera.view_proj * world;
    out.world = world.xyz;
    out.state = state;
    return out;
}

@fragment
fn fs(in: VsOut) -> @location(0) vec4<f32> {
    let n = normalize(cross(dpdx(in.world), dpdy(in.world)));
    let light = 0.35 + 0.65 * abs(dot(n, normalize(vec3<f32>(0.4, 0.8, 0.3))));
    var color = object.color.rgb * light;
    if (in.state & 4u) != 0u {
        color = mix(color, vec3<f32>(0.2, 0.45, 1.0), 0.55);
    }
    if (in.state & 2u) != 0u {
        color = mix(color, vec3<f32>(1.0, 0.5, 0.1), 0.6);
    }
    if (in.state & 1u) != 0u {
        color = mix(color, vec3<f32>(1.0, 1.0, 0.3), 0.5);
    }
    return vec4<f32>(color, 1.0);
}
