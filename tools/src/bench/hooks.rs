//! Hooked draws against plain ones, side by side in the same frames: the scene's pick
//! (culling, shared list) with no hooks, with a discard hook that fetches a texture (through
//! the host's descriptor set, with the mesh's UVs), and with a world-adjust hook (a wave; its
//! bounds padded so culling still applies). GPU time from timestamp queries, CPU time of
//! recording (the three in rotating order, so none always pays for cold caches); and the
//! first pick that records hooked draws, which compiles the hook.

use crate::gpu_timing::{camera, time_variants};
use crate::scenes::BenchScene;
use ash::vk;
use glam::{UVec2, Vec3};
use picking_vk::{
    draw::Aabb, draw::BufferRange, hooks::AttributeFormat, hooks::AttributeStream, hooks::DrawHooks, hooks::HookAttribute, hooks::HookProgram,
    hooks::HookSource, hooks::Interpolation, PickDraw, PickQuery, PickRequest, Picker, PickerConfig, Viewport,
};
use picking_vk_context::{TextureSets, VulkanContext};
use picking_vk_host::SamplerDesc;
use std::sync::Arc;
use std::time::Instant;

pub const VARIANTS: [&str; 3] = ["no hooks", "discard + texture fetch", "world adjust"];

pub struct HookTimings {
    /// Median GPU milliseconds per variant.
    pub gpu_ms: [f64; 3],
    /// Median CPU microseconds of recording a pick per variant (hooks compiled).
    pub cpu_us: [f64; 3],
    /// CPU milliseconds of the first pick that records each hook's draws (compilation
    /// included); NaN if no pick did.
    pub first_pick_ms: [f64; 2],
}

/// How far the wave moves a vertex; bounds are padded by it.
const WAVE: f32 = 0.05;

pub fn measure(ctx: &VulkanContext, scene: &BenchScene, (w, h): (u32, u32), warmup: usize, frames: usize, seed: u64) -> Result<HookTimings, String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let cam = camera(w, h);
    // A 64x64 texture of opaque texels with a few holes: the hook fetches and compares.
    let rgba: Vec<u8> = (0..64 * 64).flat_map(|i: u32| [200, 150, 100, if i.is_multiple_of(29) { 0 } else { 255 }]).collect();
    let texture = ctx.upload_texture(&rgba, 64, 64, vk::Format::R8G8B8A8_UNORM, &SamplerDesc::default().create_info()).map_err(|x| e(&x))?;
    let sets = ctx.texture_sets(&[&texture]).map_err(|x| e(&x))?;
    let source = HookSource {
        name: "bench discard".into(),
        shared: "layout(set = 1, binding = 0) uniform sampler2D tex;\n".into(),
        discard: Some("bool pick_discard(PickFragment f) { return texture(tex, f.attrib.xy).a < 0.5; }\n".into()),
        attribute: Some(HookAttribute { format: AttributeFormat::Float32x2, interpolation: Interpolation::Smooth }),
        ..Default::default()
    };
    // SAFETY: the texture sets' layout was made from HOOK_BINDINGS on this device and outlives
    // the pickers measured here.
    let discard = unsafe { HookProgram::with_host_set(source, sets.layout, &TextureSets::HOOK_BINDINGS) };
    let world = HookProgram::new(HookSource {
        name: "bench wave".into(),
        world: Some(format!("vec3 pick_world(PickVertex v) {{ return v.world + v.basis * (v.local * {WAVE:?} * sin(v.world.x * 3.0)); }}\n")),
        ..Default::default()
    });
    let prim = &scene.gpu.primitives[0];
    let uvs = AttributeStream { range: BufferRange { buffer: prim.uvs.buffer, offset: 0, size: prim.uvs.size }, stride: 8, vertex_count: prim.vertex_count };
    let plain: Arc<[PickDraw]> = scene.gpu.pick_draws.clone();
    let with_discard: Arc<[PickDraw]> =
        plain.iter().map(|d| d.clone().with_hooks(DrawHooks::new(discard.clone()).with_attribute(uvs).with_descriptor_set(sets.sets[0]))).collect();
    let with_world: Arc<[PickDraw]> = plain
        .iter()
        .map(|d| {
            // The wave moves a vertex by at most WAVE times its distance from the centre.
            let padded = d.bounds.map(|b| Aabb { min: b.min * (1.0 + WAVE) - Vec3::splat(WAVE), max: b.max * (1.0 + WAVE) + Vec3::splat(WAVE) });
            let mut hooks = DrawHooks::new(world.clone());
            hooks.bounds_cover_adjustment = padded.is_some();
            let mut draw = d.clone().with_hooks(hooks);
            draw.bounds = padded;
            draw
        })
        .collect();
    let lists = [plain, with_discard, with_world];
    let mut pickers = vec![];
    for _ in 0..3 {
        // SAFETY: the context's handles belong together and outlive the picker.
        pickers.push(unsafe { Picker::new(ctx.host_device(), PickerConfig::default().with_frames_in_flight(1)) }.map_err(|x| e(&x))?);
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    let pixels: Vec<UVec2> = (0..warmup + frames).map(|_| UVec2::new(rng.u32(..w), rng.u32(..h))).collect();
    let mut first_pick_ms = [f64::NAN; 2];
    let times = time_variants(ctx, &mut pickers, warmup, frames, |frame, k, picker, cmd| {
        let request = PickRequest::new(Viewport::full(w, h), cam.view, cam.projection);
        let compiled = picker.hook_compilations();
        let t = Instant::now();
        // SAFETY: `cmd` is recording outside a render pass; the scene's buffers, the texture
        // and its set outlive the frame.
        unsafe { picker.record(cmd, 0, &request, &[PickQuery::Point(pixels[frame])], &lists[k]) }.map_err(|x| e(&x))?;
        let us = t.elapsed().as_secs_f64() * 1e6;
        if k > 0 && picker.hook_compilations() > compiled && first_pick_ms[k - 1].is_nan() {
            first_pick_ms[k - 1] = us / 1e3;
            // Compilation is not a frame's cost: keep it out of the medians.
            return Ok(f64::NAN);
        }
        Ok(us)
    })?;
    drop(pickers);
    drop((sets, texture));
    Ok(HookTimings { gpu_ms: std::array::from_fn(|k| times.gpu_ms[k]), cpu_us: std::array::from_fn(|k| times.cpu_us[k]), first_pick_ms })
}
