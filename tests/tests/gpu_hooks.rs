//! Run-time GLSL hooks against CPU oracles: alpha-tested quads (a discard hook sampling the
//! host's texture through its descriptor set, with a UV attribute stream) against ray, UV,
//! texel, discard and on to the next hit; a displaced grid (a world-adjust hook) against the
//! CPU-displaced mesh; rectangles with hooks against the hooked full-size ID image; compile
//! errors with the hook's own line numbers; draws without hooks never compiling; hook sets
//! bound again after another set 1 (instance storage) or a rectangle table rebind;
//! alpha-tested instances read from a storage buffer against the oracle; and alpha-tested
//! quads as a hooked group of a shared list's GPU plan table against the unculled pass.

use ash::vk;
use glam::{DVec3, Mat4, Quat, UVec2, Vec2, Vec3};
use picking_vk::debug::{IdCopy, IdImage};
use picking_vk::{
    config::DetailStatus, draw::BufferRange, hooks::AttributeFormat, hooks::AttributeStream, hooks::DrawHooks, hooks::HookAttribute, hooks::HookProgram,
    hooks::HookSource, hooks::Interpolation, PickDraw, PickError, PickQuery, PickRequest, PickerConfig, PixelRect, QueryResult, RectMode, Viewport,
};
use picking_vk_context::{HostBuffer, TextureSets};
use picking_vk_tests::harness::{look, random_pixels, Gpu};
use picking_vk_tests::oracle::{Oracle, OracleCamera};
use picking_vk_tests::scene::{Mesh, Object, Scene};
use std::sync::Arc;

const W: u32 = 160;
const H: u32 = 120;
/// Texels per side of the alpha texture.
const TEX: u32 = 8;

/// The quad's UVs, per vertex of `Mesh::quad` (a b c, a c d).
const QUAD_UVS: [Vec2; 6] = [Vec2::new(0.0, 0.0), Vec2::new(1.0, 0.0), Vec2::new(1.0, 1.0), Vec2::new(0.0, 0.0), Vec2::new(1.0, 1.0), Vec2::new(0.0, 1.0)];

fn alpha_texels(seed: u64) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..TEX * TEX).flat_map(|_| [200, 90, 40, if rng.bool() { 255 } else { 0 }]).collect()
}

/// Whether the texel under `uv` is transparent (dropped); `None` within a hair of a texel edge.
fn transparent(alpha: &[u8], uv: Vec2) -> Option<bool> {
    let s = uv * TEX as f32;
    let near_edge = |x: f32| {
        let f = x - x.floor();
        f.min(1.0 - f) < 2e-3
    };
    if near_edge(s.x) || near_edge(s.y) {
        return None;
    }
    let (x, y) = ((s.x.floor() as u32).min(TEX - 1), (s.y.floor() as u32).min(TEX - 1));
    Some(alpha[((y * TEX + x) * 4 + 3) as usize] < 128)
}

/// The UV the oracle's hit on a quad interpolates (`Mesh::quad`'s triangles, `QUAD_UVS`).
fn quad_uv(hit: &picking_vk_tests::oracle::OracleHit) -> Vec2 {
    let b = hit.barycentrics;
    let k = [3 * hit.triangle, 3 * hit.triangle + 1, 3 * hit.triangle + 2];
    QUAD_UVS[k[0]] * b[0] as f32 + QUAD_UVS[k[1]] * b[1] as f32 + QUAD_UVS[k[2]] * b[2] as f32
}

/// The sampler the oracle's texel lookup matches: nearest texel, clamped at the edges.
fn nearest_clamped() -> vk::SamplerCreateInfo<'static> {
    vk::SamplerCreateInfo::default()
        .mag_filter(vk::Filter::NEAREST)
        .min_filter(vk::Filter::NEAREST)
        .address_mode_u(vk::SamplerAddressMode::CLAMP_TO_EDGE)
        .address_mode_v(vk::SamplerAddressMode::CLAMP_TO_EDGE)
}

fn alpha_program(set_layout: vk::DescriptorSetLayout) -> Arc<HookProgram> {
    let source = HookSource {
        name: "alpha test".into(),
        shared: "layout(set = 1, binding = 0) uniform sampler2D base_colour;\n".into(),
        discard: Some("bool pick_discard(PickFragment f) {\n    return texture(base_colour, f.attrib.xy).a < 0.5;\n}\n".into()),
        world: None,
        attribute: Some(HookAttribute { format: AttributeFormat::Float32x2, interpolation: Interpolation::Smooth }),
    };
    // SAFETY: every caller passes a `TextureSets` layout (made from HOOK_BINDINGS on the test's
    // device) that outlives its pickers.
    unsafe { HookProgram::with_host_set(source, set_layout, &TextureSets::HOOK_BINDINGS) }
}

/// Random quads facing the camera roughly, overlapping in depth.
fn quad_scene(seed: u64) -> Scene {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut scene = Scene { meshes: vec![Mesh::quad(1.0)], objects: vec![] };
    for i in 0..6 {
        let at = Vec3::new(rng.f32() * 2.4 - 1.2, rng.f32() * 1.6 - 0.8, -3.0 - rng.f32() * 4.0);
        let turn = Quat::from_euler(glam::EulerRot::XYZ, rng.f32() * 0.8 - 0.4, rng.f32() * 0.8 - 0.4, rng.f32() * 3.0);
        let size = Vec3::splat(0.8 + rng.f32() * 0.8);
        scene.objects.push(Object::new(i + 1, 0, Mat4::from_scale_rotation_translation(size, turn, at)));
    }
    scene
}

struct AlphaScene {
    draws: Vec<PickDraw>,
    _uvs: HostBuffer,
    _gs: picking_vk_tests::scene::GpuScene,
}

fn hooked_quads(gpu: &Gpu, scene: &Scene, program: &Arc<HookProgram>, set: vk::DescriptorSet) -> AlphaScene {
    let gs = scene.upload(&gpu.ctx);
    let uvs = gpu.ctx.upload(&QUAD_UVS.map(|v| v.to_array()), vk::BufferUsageFlags::VERTEX_BUFFER).unwrap();
    let stream = AttributeStream { range: BufferRange { buffer: uvs.buffer, offset: 0, size: uvs.size }, stride: 8, vertex_count: 6 };
    let draws = gs.draws.iter().map(|d| d.clone().with_hooks(DrawHooks::new(program.clone()).with_attribute(stream).with_descriptor_set(set))).collect();
    AlphaScene { draws, _uvs: uvs, _gs: gs }
}

/// `draws`, each drawing from the first one's buffers (the same mesh).
fn sharing_first_buffers<L: FromIterator<PickDraw>>(draws: &[PickDraw]) -> L {
    let Some(base) = draws.first() else { return std::iter::empty().collect() };
    draws
        .iter()
        .map(|d| {
            let mut d = d.clone();
            (d.positions, d.triangles) = (base.positions, base.triangles);
            d
        })
        .collect()
}

fn pick(gpu: &Gpu, picker: &mut picking_vk::Picker, pixel: UVec2, view: Mat4, proj: Mat4, draws: &[PickDraw]) -> picking_vk::PickResult {
    gpu.pick(picker, &PickRequest::new(Viewport::full(W, H), view, proj), pixel, draws)
}

#[test]
fn alpha_tested_quads_are_picked_through_their_holes_like_the_oracle() {
    let gpu = Gpu::new();
    let mut picker = gpu.picker(PickerConfig::default().with_detail(picking_vk::DetailMode::IfEnabled));
    let nearest = nearest_clamped();
    let (mut agree, mut hits, mut through) = (0, 0, 0);
    for seed in picking_vk_tests::harness::seeds(0..3) {
        let alpha = alpha_texels(seed);
        let texture = gpu.ctx.upload_texture(&alpha, TEX, TEX, vk::Format::R8G8B8A8_UNORM, &nearest).unwrap();
        let sets = gpu.ctx.texture_sets(&[&texture]).unwrap();
        let program = alpha_program(sets.layout);
        let scene = quad_scene(seed);
        let hooked = hooked_quads(&gpu, &scene, &program, sets.sets[0]);
        let (view, proj, _) = look(Vec3::new(0.2, 0.1, 1.0), Vec3::new(0.0, 0.0, -5.0), W, H);
        let oracle = Oracle::new(&scene, OracleCamera::new(view, proj, [0.0, 0.0, f64::from(W), f64::from(H)]));
        for pixel in random_pixels(seed + 40, 250, W, H) {
            let want = oracle.pick_through(pixel, |hit| transparent(&alpha, quad_uv(hit)));
            if want.ambiguous {
                continue;
            }
            let got = pick(&gpu, &mut picker, pixel, view, proj, &hooked.draws);
            assert_eq!(got.hit.as_ref().map(|h| h.id.get()), want.hit.map(|h| h.id), "seed {seed} pixel {pixel}");
            if let (Some(g), Some(w)) = (&got.hit, &want.hit) {
                assert!((g.distance - w.distance).abs() <= 1e-3 * w.distance, "seed {seed} pixel {pixel}: distance {} vs {}", g.distance, w.distance);
                hits += 1;
            }
            // The nearest surface along the ray was a hole: the pick went through it.
            let raw = oracle.pick(pixel);
            through += usize::from(!raw.ambiguous && raw.hit.map(|h| h.id) != want.hit.map(|h| h.id));
            agree += 1;
        }
        drop(hooked);
        drop(sets);
        drop(texture);
    }
    eprintln!("alpha-tested quads: {agree} unambiguous picks agree with the oracle, {hits} hits, {through} through a hole");
    assert!(agree > 500 && hits > 150 && through > 20, "{agree} / {hits} / {through}");
    assert!(picker.hook_compilations() > 0);
    drop(picker);
    gpu.assert_no_validation_messages();
}

/// z displacement of the world-adjust hook, in f64 for the oracle.
fn displacement(p: DVec3) -> f64 {
    0.6 * (p.x * 2.0).sin() * (p.y * 1.5).cos()
}

const WAVE: &str = "vec3 pick_world(PickVertex v) {\n    return v.world + vec3(0.0, 0.0, 0.6 * sin(v.world.x * 2.0) * cos(v.world.y * 1.5));\n}\n";

#[test]
fn world_adjust_hook_matches_the_cpu_displaced_grid() {
    let gpu = Gpu::new();
    let mut picker = gpu.picker(PickerConfig::default().with_detail(picking_vk::DetailMode::IfEnabled));
    let detail = *picker.detail_status() == DetailStatus::Active;
    let program = HookProgram::new(HookSource { name: "wave".into(), world: Some(WAVE.into()), ..Default::default() });
    // A displaced grid, an instanced pair of displaced grids, and a flat plate among them.
    // Cells of about ten pixels: the oracle holds pixels within one of a triangle's edges
    // ambiguous.
    let grid_mesh = Mesh::grid(6, 1.5);
    let mut scene = Scene { meshes: vec![grid_mesh.clone(), Mesh::quad(1.0)], objects: vec![] };
    scene.objects.push(Object::new(1, 0, Mat4::from_translation(Vec3::new(-0.6, 0.0, -5.0))));
    let mut pair = Object::new(2, 0, Mat4::from_translation(Vec3::new(0.8, 0.3, -6.0)));
    pair.instances = Some(vec![
        Mat4::from_translation(Vec3::new(0.0, -0.9, 0.0)),
        Mat4::from_scale_rotation_translation(Vec3::splat(0.6), Quat::from_rotation_z(0.5), Vec3::new(0.4, 1.0, 0.3)),
    ]);
    scene.objects.push(pair);
    scene.objects.push(Object::new(3, 1, Mat4::from_translation(Vec3::new(0.0, -0.2, -5.1)) * Mat4::from_scale(Vec3::new(1.4, 0.5, 1.0))));
    let gs = scene.upload(&gpu.ctx);
    let draws: Vec<PickDraw> =
        gs.draws.iter().enumerate().map(|(i, d)| if i < 2 { d.clone().with_hooks(DrawHooks::new(program.clone())) } else { d.clone() }).collect();
    // The oracle's scene: each displaced (object, instance) as world-space geometry.
    let mut oracle_scene = Scene { meshes: vec![], objects: vec![] };
    let mut keys = vec![];
    for obj in &scene.objects {
        let instances: Vec<Option<usize>> = match &obj.instances {
            Some(list) => (0..list.len()).map(Some).collect(),
            None => vec![None],
        };
        for inst in instances {
            let world = obj.world(inst).as_dmat4();
            let mesh = &scene.meshes[obj.mesh];
            let moved = obj.mesh == 0;
            let positions = mesh
                .positions
                .iter()
                .map(|p| {
                    let w = world.transform_point3(p.as_dvec3());
                    (if moved { w + DVec3::Z * displacement(w) } else { w }).as_vec3()
                })
                .collect();
            oracle_scene.meshes.push(Mesh { positions, indices: mesh.indices.clone() });
            oracle_scene.objects.push(Object::new(obj.id, oracle_scene.meshes.len() - 1, Mat4::IDENTITY));
            keys.push((obj.id, inst.map(|i| i as u32)));
        }
    }
    let (view, proj, vp) = look(Vec3::new(0.3, 0.4, -1.5), Vec3::new(0.0, 0.0, -5.5), W, H);
    let oracle = Oracle::new(&oracle_scene, OracleCamera::new(view, proj, [0.0, 0.0, f64::from(W), f64::from(H)]));
    let flat = Oracle::new(&scene, OracleCamera::new(view, proj, [0.0, 0.0, f64::from(W), f64::from(H)]));
    let (mut agree, mut hits, mut moved) = (0, 0, 0);
    // Pixels the hooked draws cover (the full-size ID image runs the hooks too), and some others.
    let mut pixels: Vec<UVec2> = gpu.covered_pixels(&PickRequest::new(vp, view, proj), &draws, 5).into_iter().take(500).collect();
    pixels.extend(random_pixels(77, 100, W, H));
    for pixel in pixels {
        let want = oracle.pick(pixel);
        if want.ambiguous {
            continue;
        }
        let got = pick(&gpu, &mut picker, pixel, view, proj, &draws);
        let want_key = want.hit.map(|h| keys[h.object]);
        assert_eq!(got.hit.as_ref().map(|h| (h.id.get(), h.instance)), want_key, "pixel {pixel}");
        if let (Some(g), Some(w)) = (&got.hit, &want.hit) {
            assert!((g.distance - w.distance).abs() <= 1e-3 * w.distance, "pixel {pixel}: distance {} vs {}", g.distance, w.distance);
            hits += 1;
            if let Some(d) = g.detail.as_ref().filter(|_| detail && w.object < 3) {
                // Face and world point of the displaced surface; no normals for moved geometry.
                assert_eq!(d.face as usize, w.triangle, "pixel {pixel}: face");
                let s = d.surface.expect("registered geometry");
                assert!((s.world_point - w.point).length() <= 1e-4 * 8.0, "pixel {pixel}: world point {:?} vs {:?}", s.world_point, w.point);
                assert!(s.face_normal_world.is_none() && s.normal_world.is_none());
            }
        }
        let rest = flat.pick(pixel);
        moved += usize::from(!rest.ambiguous && rest.hit.map(|h| h.id) != want.hit.map(|h| h.id));
        agree += 1;
    }
    eprintln!("displaced grids: {agree} unambiguous picks agree with the CPU-displaced oracle, {hits} hits, {moved} differ from the rest pose");
    assert!(agree > 300 && hits > 200 && moved > 15, "{agree} / {hits} / {moved}");
    drop(picker);
    drop(gs);
    gpu.assert_no_validation_messages();
}

#[test]
fn rectangles_with_hooks_count_what_the_hooked_id_image_shows() {
    let gpu = Gpu::new();
    let nearest = vk::SamplerCreateInfo::default().mag_filter(vk::Filter::NEAREST).min_filter(vk::Filter::NEAREST);
    let alpha = alpha_texels(9);
    let texture = gpu.ctx.upload_texture(&alpha, TEX, TEX, vk::Format::R8G8B8A8_UNORM, &nearest).unwrap();
    let sets = gpu.ctx.texture_sets(&[&texture]).unwrap();
    let program = alpha_program(sets.layout);
    let scene = quad_scene(9);
    let mut hooked = hooked_quads(&gpu, &scene, &program, sets.sets[0]);
    // Hooked and plain draws alternate: the rectangle pass binds its table set with one layout,
    // then the other, and the hook set after it must be bound again each time (it once stayed
    // stale, and validation caught the draw).
    for i in (1..hooked.draws.len()).step_by(2) {
        hooked.draws[i] = hooked._gs.draws[i].clone();
    }
    let (view, proj, vp) = look(Vec3::new(0.2, 0.1, 1.0), Vec3::new(0.0, 0.0, -5.0), W, H);
    let request = PickRequest::new(vp, view, proj);
    // SAFETY: the context's handles outlive the image.
    let mut image = unsafe { IdImage::new(gpu.ctx.host_device(), W, H) }.unwrap();
    // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
    gpu.run(|cmd| unsafe { image.record(cmd, &request, &hooked.draws, None, IdCopy::Whole) }.map(|_| ()).unwrap());
    // SAFETY: `run` waited.
    let texels = unsafe { image.read() }.unwrap();
    let rect = PixelRect::new(UVec2::new(12, 10), UVec2::new(150, 112));
    let mut counts = std::collections::BTreeMap::<u64, u64>::new();
    for y in rect.min.y..rect.max.y {
        for x in rect.min.x..rect.max.x {
            if let Some(id) = picking_vk::ObjectId::from_words(texels[(y * W + x) as usize].id) {
                *counts.entry(id.get()).or_default() += 1;
            }
        }
    }
    let mut picker = gpu.picker(PickerConfig::default().with_rect_tile(64, 48));
    let mut queries = vec![PickQuery::Rect { rect, mode: RectMode::Visible }];
    let select_through = gpu.ctx.picking_features.contains(picking_vk::PickFeatures::SELECT_THROUGH);
    if select_through {
        queries.push(PickQuery::Rect { rect, mode: RectMode::All });
    }
    // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
    gpu.run(|cmd| unsafe { picker.record(cmd, 0, &request, &queries, &hooked.draws) }.map(|_| ()).unwrap());
    // SAFETY: `run` waited.
    let results = unsafe { picker.take_results(0) }.unwrap().unwrap();
    let QueryResult::Rect(visible) = &results.results[0] else { panic!("a rectangle result") };
    let got: std::collections::BTreeMap<u64, u64> = visible.objects.iter().map(|o| (o.id.get(), o.pixels)).collect();
    assert_eq!(got, counts, "per-object pixel counts of the hooked rectangle pass and the hooked ID image");
    assert!(counts.len() >= 3, "{counts:?}");
    if select_through {
        let QueryResult::Rect(all) = &results.results[1] else { panic!("a rectangle result") };
        for id in counts.keys() {
            assert!(all.objects.iter().any(|o| o.id.get() == *id), "select-through finds every visible object");
        }
    }
    drop((picker, image, hooked, sets, texture));
    gpu.assert_no_validation_messages();
}

#[test]
fn hook_compile_errors_name_the_hook_and_line() {
    let gpu = Gpu::new();
    let mut picker = gpu.picker(PickerConfig::default());
    let scene = quad_scene(1);
    let gs = scene.upload(&gpu.ctx);
    let (view, proj, vp) = look(Vec3::new(0.2, 0.1, 1.0), Vec3::new(0.0, 0.0, -5.0), W, H);
    let pixel = UVec2::new(80, 60);
    let request = PickRequest::new(vp, view, proj);
    let cases = [
        (
            HookSource {
                name: "broken discard".into(),
                discard: Some("bool pick_discard(PickFragment f) {\n    return f.nonsense > 0.0;\n}\n".into()),
                ..Default::default()
            },
            "discard hook, line 2",
        ),
        (
            HookSource {
                name: "broken world".into(),
                world: Some("\n\nvec3 pick_world(PickVertex v) { return v.world * undefined_thing; }\n".into()),
                ..Default::default()
            },
            "world hook, line 3",
        ),
    ];
    for (source, line) in cases {
        let name = source.name.clone();
        let draws: Vec<PickDraw> = gs.draws.iter().map(|d| d.clone().with_hooks(DrawHooks::new(HookProgram::new(source.clone())))).collect();
        let mut outcome = None;
        // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
        gpu.run(|cmd| outcome = Some(unsafe { picker.record(cmd, 0, &request, &[PickQuery::Point(pixel)], &draws) }));
        match outcome.unwrap() {
            Err(PickError::HookCompile { program, message }) => {
                assert_eq!(program, name);
                assert!(message.contains(line), "{message}");
            }
            other => panic!("expected a compile error, got {other:?}"),
        }
    }
    // Nothing was recorded: the slot is free, and a pick without hooks works.
    let ok = gpu.pick(&mut picker, &request, pixel, &gs.draws);
    assert!(ok.hit.is_some());
    drop(picker);
    drop(gs);
    gpu.assert_no_validation_messages();
}

#[test]
fn draws_without_hooks_never_compile_and_hooks_compile_once() {
    let gpu = Gpu::new();
    let mut picker = gpu.picker(PickerConfig::default());
    let scene = quad_scene(2);
    let gs = scene.upload(&gpu.ctx);
    let (view, proj, _) = look(Vec3::new(0.2, 0.1, 1.0), Vec3::new(0.0, 0.0, -5.0), W, H);
    for pixel in random_pixels(3, 20, W, H) {
        pick(&gpu, &mut picker, pixel, view, proj, &gs.draws);
    }
    assert_eq!(picker.hook_compilations(), 0, "draws without hooks use the precompiled SPIR-V");
    let program = HookProgram::new(HookSource { name: "wave".into(), world: Some(WAVE.into()), ..Default::default() });
    let hooked: Vec<PickDraw> = gs.draws.iter().map(|d| d.clone().with_hooks(DrawHooks::new(program.clone()))).collect();
    let built = picker.warm_up(&hooked, picking_vk::DepthConvention::Standard, picking_vk::draw::Culling::NONE).unwrap();
    let compiled = picker.hook_compilations();
    assert!(built > 0 && compiled >= 2, "warm-up compiles the hook ahead of the first pick: {built} pipelines, {compiled} stages");
    for pixel in random_pixels(4, 20, W, H) {
        pick(&gpu, &mut picker, pixel, view, proj, &hooked);
    }
    assert_eq!(picker.hook_compilations(), compiled, "later picks reuse the compiled hook");
    drop(picker);
    drop(gs);
    gpu.assert_no_validation_messages();
}

#[test]
fn hook_inputs_the_program_does_not_match_are_refused() {
    let gpu = Gpu::new();
    let mut picker = gpu.picker(PickerConfig::default());
    let gs = quad_scene(3).upload(&gpu.ctx);
    let (view, proj, vp) = look(Vec3::new(0.2, 0.1, 1.0), Vec3::new(0.0, 0.0, -5.0), W, H);
    let pixel = UVec2::new(80, 60);
    let request = PickRequest::new(vp, view, proj);
    let wants_uv = HookProgram::new(HookSource {
        name: "uv".into(),
        discard: Some("bool pick_discard(PickFragment f) { return f.attrib.x > 0.5; }".into()),
        attribute: Some(HookAttribute { format: AttributeFormat::Float32x2, interpolation: Interpolation::Flat }),
        ..Default::default()
    });
    let empty = HookProgram::new(HookSource { name: "empty".into(), ..Default::default() });
    for (hooks, why) in [(DrawHooks::new(wants_uv), "gives no stream"), (DrawHooks::new(empty), "neither a discard nor a world hook")] {
        let draws: Vec<PickDraw> = gs.draws.iter().map(|d| d.clone().with_hooks(hooks.clone())).collect();
        let mut outcome = None;
        // SAFETY: recording outside a render pass; nothing is recorded on error.
        gpu.run(|cmd| outcome = Some(unsafe { picker.record(cmd, 0, &request, &[PickQuery::Point(pixel)], &draws) }.map(|_| ())));
        match outcome.unwrap() {
            Err(PickError::InvalidDraw { reason, .. }) => assert!(reason.contains(why), "{reason}"),
            other => panic!("expected InvalidDraw ({why}), got {other:?}"),
        }
    }
    assert_eq!(picker.hook_compilations(), 0, "refused before any compilation");
    drop(picker);
    drop(gs);
    gpu.assert_no_validation_messages();
}

/// Finding 1 of the soundness review: hook declarations the host set's layout does not hold
/// are refused before a pipeline is built from them (building one is invalid Vulkan usage,
/// which the validation layer would report), through the safe `warm_up` as through `record`.
#[test]
fn hook_declarations_outside_the_host_set_are_refused_before_any_pipeline() {
    let gpu = Gpu::new();
    let mut picker = gpu.picker(PickerConfig::default());
    let texture = gpu.ctx.upload_texture(&alpha_texels(5), TEX, TEX, vk::Format::R8G8B8A8_UNORM, &nearest_clamped()).unwrap();
    let sets = gpu.ctx.texture_sets(&[&texture]).unwrap();
    let scene = quad_scene(5);
    let with_shared = |name: &str, shared: &str| {
        let source = HookSource {
            name: name.into(),
            shared: shared.into(),
            discard: Some("bool pick_discard(PickFragment f) {\n    return texture(tex, f.attrib.xy).a < 0.5;\n}\n".into()),
            world: None,
            attribute: Some(HookAttribute { format: AttributeFormat::Float32x2, interpolation: Interpolation::Smooth }),
        };
        // SAFETY: the layout was made from HOOK_BINDINGS on this device and outlives the picker.
        unsafe { HookProgram::with_host_set(source, sets.layout, &TextureSets::HOOK_BINDINGS) }
    };
    let cases = [
        (with_shared("binding 1", "layout(set = 1, binding = 1) uniform sampler2D tex;\n"), "has no binding 1"),
        (with_shared("input", "layout(set = 1, binding = 0) uniform sampler2D tex;\nlayout(location = 9) in vec4 extra;\n"), "stage input at location 9"),
        (with_shared("set 2", "layout(set = 2, binding = 0) uniform sampler2D tex;\n"), "sets 0 and 2 are the picker's"),
    ];
    for (program, says) in cases {
        let name = program.source().name.clone();
        let hooked = hooked_quads(&gpu, &scene, &program, sets.sets[0]);
        match picker.warm_up(&hooked.draws, picking_vk::DepthConvention::Standard, picking_vk::draw::Culling::NONE) {
            Err(PickError::HookCompile { program, message }) => {
                assert_eq!(program, name);
                assert!(message.contains(says), "{name}: {message}");
            }
            other => panic!("{name}: expected HookCompile, got {other:?}"),
        }
    }
    assert_eq!(picker.pipeline_count(), 0, "no pipeline was built from a refused program");
    drop(picker);
    drop(sets);
    drop(texture);
    gpu.assert_no_validation_messages();
}

#[test]
fn hooked_draws_that_share_buffers_batch_and_pick_as_one_by_one() {
    let gpu = Gpu::new();
    assert!(gpu.ctx.picking_features.contains(picking_vk::PickFeatures::BATCHING), "lavapipe has multiDrawIndirect");
    let nearest = vk::SamplerCreateInfo::default().mag_filter(vk::Filter::NEAREST).min_filter(vk::Filter::NEAREST);
    let texture = gpu.ctx.upload_texture(&alpha_texels(5), TEX, TEX, vk::Format::R8G8B8A8_UNORM, &nearest).unwrap();
    let sets = gpu.ctx.texture_sets(&[&texture]).unwrap();
    let program = alpha_program(sets.layout);
    let scene = quad_scene(5);
    let hooked = hooked_quads(&gpu, &scene, &program, sets.sets[0]);
    // Every quad draws from the first one's buffers (the same mesh): one run of rows.
    let shared: Vec<PickDraw> = sharing_first_buffers(&hooked.draws);
    let (view, proj, vp) = look(Vec3::new(0.2, 0.1, 1.0), Vec3::new(0.0, 0.0, -5.0), W, H);
    let request = PickRequest::new(vp, view, proj);
    let covered = gpu.covered_pixels(&request, &shared, 2);
    let mut batched = gpu.picker(PickerConfig::default().with_frames_in_flight(32));
    let mut single = gpu.picker(PickerConfig::default().with_frames_in_flight(32).with_batch_rows(0));
    assert!(batched.batching_active() && !single.batching_active());
    let mut hits = 0;
    for chunk in covered.iter().take(96).copied().collect::<Vec<_>>().chunks(32) {
        let a = gpu.pick_batch(&mut batched, &request, chunk, &shared);
        let b = gpu.pick_batch(&mut single, &request, chunk, &shared);
        for ((x, y), p) in a.iter().zip(&b).zip(chunk) {
            let key = |r: &picking_vk::PickResult| r.hit.as_ref().map(|h| (h.id, h.draw_index, h.depth));
            assert_eq!(key(x), key(y), "pixel {p}");
            hits += usize::from(x.hit.is_some());
        }
    }
    assert!(hits > 60, "{hits}");
    drop((batched, single, hooked, sets, texture));
    gpu.assert_no_validation_messages();
}

#[test]
fn discard_hooks_see_the_host_pixel_id_and_instance_in_every_pass() {
    let gpu = Gpu::new();
    // Instanced quads side by side: the hook drops the left half of the host's framebuffer
    // and every odd instance, wherever the pass draws the pixel (a query cell, a tile).
    let mut scene = Scene { meshes: vec![Mesh::quad(1.0)], objects: vec![] };
    let mut obj = Object::new(7, 0, Mat4::from_translation(Vec3::new(0.0, 0.0, -6.0)));
    obj.instances = Some((0..6).map(|i| Mat4::from_translation(Vec3::new(i as f32 * 1.1 - 2.75, 0.0, 0.0)) * Mat4::from_scale(Vec3::splat(0.5))).collect());
    scene.objects.push(obj);
    let gs = scene.upload(&gpu.ctx);
    let program = HookProgram::new(HookSource {
        name: "inputs".into(),
        discard: Some(format!("bool pick_discard(PickFragment f) {{\n    return f.pixel.x < {}.0 || (f.instance & 1u) == 1u || f.id.x != 7u;\n}}\n", W / 2)),
        ..Default::default()
    });
    let draws: Vec<PickDraw> = gs.draws.iter().map(|d| d.clone().with_hooks(DrawHooks::new(program.clone()))).collect();
    let (view, proj, vp) = look(Vec3::new(0.0, 0.0, 0.0), Vec3::new(0.0, 0.0, -6.0), W, H);
    let request = PickRequest::new(vp, view, proj);
    let plain = gpu.covered_pixels(&request, &gs.draws, 1);
    let mut picker = gpu.picker(PickerConfig::default().with_rect_tile(48, 40));
    // Point queries in a set: each lands in its own cell of the target, away from its pixel.
    let pixels: Vec<UVec2> = plain.iter().take(16).copied().collect();
    let queries: Vec<PickQuery> = pixels.iter().map(|&p| PickQuery::Point(p)).collect();
    // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
    gpu.run(|cmd| unsafe { picker.record(cmd, 0, &request, &queries, &draws) }.map(|_| ()).unwrap());
    // SAFETY: `run` waited.
    let results = unsafe { picker.take_results(0) }.unwrap().unwrap().results;
    let (mut kept, mut dropped) = (0, 0);
    for (r, p) in results.iter().zip(&pixels) {
        let QueryResult::Point(r) = r else { panic!("a point result") };
        match r.hit.as_ref().and_then(|h| h.instance) {
            Some(i) => {
                assert!(p.x >= W / 2 && i % 2 == 0, "pixel {p}: instance {i} should have been dropped");
                kept += 1;
            }
            None => dropped += 1,
        }
    }
    assert!(kept > 0 && dropped > 0, "{kept} kept, {dropped} dropped");
    // A rectangle over the whole view, in tiles: only even instances on the right half.
    let rect = [PickQuery::Rect { rect: PixelRect::new(UVec2::ZERO, UVec2::new(W, H)), mode: RectMode::Visible }];
    // SAFETY: as above.
    gpu.run(|cmd| unsafe { picker.record(cmd, 0, &request, &rect, &draws) }.map(|_| ()).unwrap());
    // SAFETY: `run` waited.
    let results = unsafe { picker.take_results(0) }.unwrap().unwrap().results;
    let QueryResult::Rect(visible) = &results[0] else { panic!("a rectangle result") };
    assert!(!visible.objects.is_empty());
    for o in &visible.objects {
        assert!(o.instance.is_some_and(|i| i % 2 == 0), "{o:?}");
        assert!(o.pixel.x >= W / 2, "{o:?}");
    }
    drop((picker, gs));
    gpu.assert_no_validation_messages();
}

#[test]
fn hooked_draws_around_an_instance_storage_draw_bind_their_set_again() {
    // The hook set and the instance storage set are both set 1: a hooked draw after the
    // storage draw must bind its set again, though the one before bound the same set.
    let gpu = Gpu::new();
    let nearest = vk::SamplerCreateInfo::default().mag_filter(vk::Filter::NEAREST).min_filter(vk::Filter::NEAREST);
    let texture = gpu.ctx.upload_texture(&alpha_texels(3), TEX, TEX, vk::Format::R8G8B8A8_UNORM, &nearest).unwrap();
    let sets = gpu.ctx.texture_sets(&[&texture]).unwrap();
    let program = alpha_program(sets.layout);
    let mut scene = quad_scene(3);
    scene.meshes.push(Mesh::sphere(4, 6));
    let mut spheres = Object::new(50, 1, Mat4::IDENTITY);
    spheres.instances =
        Some((0..4).map(|i| Mat4::from_scale_rotation_translation(Vec3::splat(0.2), Quat::IDENTITY, Vec3::new(i as f32 * 0.5 - 0.75, 0.0, -8.0))).collect());
    scene.objects.push(spheres);
    let hooked = hooked_quads(&gpu, &scene, &program, sets.sets[0]);
    let plain_instanced = hooked._gs.draws.last().unwrap().clone();
    let inst = plain_instanced.instances.expect("instanced");
    let storage = gpu.ctx.upload(&inst_matrices(&scene), vk::BufferUsageFlags::STORAGE_BUFFER).unwrap();
    let stored = plain_instanced
        .with_instance_binding(picking_vk::draw::InstanceBinding::StorageBuffer)
        .with_instance_format(picking_vk::draw::InstanceFormat::Mat4)
        .with_instances(picking_vk::draw::Instances { range: BufferRange { buffer: storage.buffer, offset: 0, size: storage.size }, stride: 64, ..inst });
    // Hooked quads, the storage draw, then the other hooked quads, every one drawn at every pixel.
    let quads = &hooked.draws[..hooked.draws.len() - 1];
    let mut draws: Vec<PickDraw> = quads[..2].to_vec();
    draws.push(stored);
    draws.extend_from_slice(&quads[2..]);
    let (view, proj, vp) = look(Vec3::new(0.2, 0.1, 1.0), Vec3::new(0.0, 0.0, -5.0), W, H);
    let pixels = random_pixels(11, 16, W, H);
    let request = PickRequest::new(vp, view, proj);
    // Drawn one by one, and batched into indirect draws.
    let key = |r: &picking_vk::PickResult| r.hit.as_ref().map(|h| (h.id, h.instance, h.depth));
    let mut answers = vec![];
    for rows in [0, 256] {
        let mut picker = gpu.picker(PickerConfig::default().with_frames_in_flight(16).with_culling(false).with_batch_rows(rows));
        answers.push(gpu.pick_batch(&mut picker, &request, &pixels, &draws).iter().map(key).collect::<Vec<_>>());
    }
    assert!(answers[0].iter().filter(|a| a.is_some()).count() >= 4, "{:?}", answers[0]);
    assert_eq!(answers[0], answers[1]);
    drop((storage, hooked, sets, texture));
    gpu.assert_no_validation_messages();
}

/// Alpha-tested quads instanced 20 times, their transforms read from a storage buffer (as 3x4
/// rows, after unrelated words) by the hooked pipeline: picked through their holes like the
/// oracle, and like the same draw reading its instances as vertex attributes; between them an
/// unhooked storage draw and a hooked plain one, so set 1 and set 2 change hands; rectangles
/// count what the hooked ID image shows.
#[test]
fn alpha_tested_instances_from_a_storage_buffer_pick_like_the_oracle() {
    let gpu = Gpu::new();
    let nearest = nearest_clamped();
    let alpha = alpha_texels(5);
    let texture = gpu.ctx.upload_texture(&alpha, TEX, TEX, vk::Format::R8G8B8A8_UNORM, &nearest).unwrap();
    let sets = gpu.ctx.texture_sets(&[&texture]).unwrap();
    let program = alpha_program(sets.layout);
    let mut rng = fastrand::Rng::with_seed(12);
    let mut scene = Scene { meshes: vec![Mesh::quad(1.0), Mesh::sphere(4, 6)], objects: vec![] };
    let mut field = Object::new(1, 0, Mat4::from_translation(Vec3::new(0.0, 0.0, -5.0)));
    field.instances = Some(
        (0..20)
            .map(|_| {
                let at = Vec3::new(rng.f32() * 2.4 - 1.2, rng.f32() * 1.6 - 0.8, -rng.f32() * 3.0);
                let turn = Quat::from_euler(glam::EulerRot::XYZ, rng.f32() * 0.8 - 0.4, rng.f32() * 0.8 - 0.4, rng.f32() * 3.0);
                Mat4::from_scale_rotation_translation(Vec3::splat(1.0 + rng.f32() * 0.8), turn, at)
            })
            .collect(),
    );
    scene.objects.push(field);
    let mut balls = Object::new(2, 1, Mat4::IDENTITY);
    balls.instances =
        Some((0..3).map(|i| Mat4::from_scale_rotation_translation(Vec3::splat(0.3), Quat::IDENTITY, Vec3::new(i as f32 * 0.9 - 0.9, 0.5, -9.0))).collect());
    scene.objects.push(balls);
    scene.objects.push(Object::new(3, 0, Mat4::from_scale_rotation_translation(Vec3::splat(3.0), Quat::IDENTITY, Vec3::new(0.0, 0.0, -10.0))));
    let hooked = hooked_quads(&gpu, &scene, &program, sets.sets[0]);
    // Each instanced draw's transforms as 3x4 rows in one storage buffer, the quads' after 7
    // unrelated words.
    let rows = |m: &Mat4| (0..3).flat_map(|r| m.row(r).to_array()).collect::<Vec<f32>>();
    let mut words = vec![f32::NAN; 7];
    let quads_at = words.len();
    words.extend(scene.objects[0].instances.as_ref().unwrap().iter().flat_map(rows));
    let balls_at = words.len();
    words.extend(scene.objects[1].instances.as_ref().unwrap().iter().flat_map(rows));
    let storage = gpu.ctx.upload(&words, vk::BufferUsageFlags::STORAGE_BUFFER).unwrap();
    let stored = |d: &PickDraw, at: usize| {
        let inst = d.instances.expect("instanced");
        let range = BufferRange { buffer: storage.buffer, offset: at as u64 * 4, size: (words.len() - at) as u64 * 4 };
        d.clone()
            .with_instance_binding(picking_vk::draw::InstanceBinding::StorageBuffer)
            .with_instance_format(picking_vk::draw::InstanceFormat::Rows3x4)
            .with_instances(picking_vk::draw::Instances { range, stride: 48, ..inst })
    };
    let as_attributes = hooked.draws.clone();
    // The plain quad, the unhooked balls from storage, then the hooked field from storage.
    let plain_balls = stored(&hooked._gs.draws[1], balls_at);
    let from_storage = vec![hooked.draws[2].clone(), plain_balls, stored(&hooked.draws[0], quads_at)];
    let as_attributes = vec![as_attributes[2].clone(), hooked._gs.draws[1].clone(), as_attributes[0].clone()];
    let (view, proj, vp) = look(Vec3::new(0.2, 0.1, 1.0), Vec3::new(0.0, 0.0, -5.0), W, H);
    let oracle = Oracle::new(&scene, OracleCamera::new(view, proj, [0.0, 0.0, f64::from(W), f64::from(H)]));
    let mut picker = gpu.picker(PickerConfig::default().with_max_queries(64));
    let pixels = random_pixels(13, 640, W, H);
    let queries: Vec<PickQuery> = pixels.iter().map(|&p| PickQuery::Point(p)).collect();
    let request = PickRequest::new(vp, view, proj);
    let mut answers = vec![];
    for draws in [&as_attributes, &from_storage] {
        let mut got = vec![];
        for chunk in queries.chunks(64) {
            // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
            gpu.run(|cmd| unsafe { picker.record(cmd, 0, &request, chunk, draws) }.map(|_| ()).unwrap());
            // SAFETY: `run` waited.
            let results = unsafe { picker.take_results(0) }.unwrap().unwrap();
            got.extend(results.results.into_iter().map(|r| match r {
                QueryResult::Point(p) => p.hit.map(|h| (h.id.get(), h.instance, h.distance)),
                _ => panic!("a point"),
            }));
        }
        answers.push(got);
    }
    let (mut agree, mut through, mut instanced) = (0, 0, 0);
    for (k, pixel) in pixels.iter().enumerate() {
        let got = answers[1][k];
        let want = oracle.pick_through(*pixel, |hit| if hit.id == 2 { Some(false) } else { transparent(&alpha, quad_uv(hit)) });
        if want.ambiguous {
            continue;
        }
        assert_eq!(got.map(|g| (g.0, g.1)), want.hit.map(|h| (h.id, h.instance)), "pixel {pixel}");
        assert_eq!(answers[0][k].map(|a| (a.0, a.1)), got.map(|g| (g.0, g.1)), "pixel {pixel}: instances as attributes");
        if let (Some(g), Some(w)) = (got, want.hit) {
            assert!((g.2 - w.distance).abs() <= 1e-3 * w.distance, "pixel {pixel}: distance {} vs {}", g.2, w.distance);
            instanced += usize::from(g.0 == 1);
        }
        let raw = oracle.pick(*pixel);
        through += usize::from(!raw.ambiguous && raw.hit.map(|h| (h.id, h.instance)) != want.hit.map(|h| (h.id, h.instance)));
        agree += 1;
    }
    eprintln!(
        "alpha-tested instances from storage: {agree} unambiguous picks agree with the oracle, {instanced} on the field's instances, {through} through a hole"
    );
    assert!(agree > 400 && instanced > 60 && through > 30, "{agree} / {instanced} / {through}");
    // A rectangle over the storage draws, against the hooked ID image.
    // SAFETY: the context's handles outlive the image.
    let mut image = unsafe { IdImage::new(gpu.ctx.host_device(), W, H) }.unwrap();
    // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
    gpu.run(|cmd| unsafe { image.record(cmd, &request, &from_storage, None, IdCopy::Whole) }.map(|_| ()).unwrap());
    // SAFETY: `run` waited.
    let texels = unsafe { image.read() }.unwrap();
    let rect = PixelRect { min: UVec2::new(10, 8), max: UVec2::new(150, 112) };
    let mut want: std::collections::BTreeMap<(u64, u32), u64> = Default::default();
    for y in rect.min.y..rect.max.y {
        for x in rect.min.x..rect.max.x {
            let t = texels[(y * W + x) as usize];
            if let Some(id) = picking_vk::ObjectId::from_words(t.id) {
                *want.entry((id.get(), t.draw_instance[1])).or_default() += 1;
            }
        }
    }
    let query = [PickQuery::Rect { rect, mode: RectMode::Visible }];
    // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
    gpu.run(|cmd| unsafe { picker.record(cmd, 0, &request, &query, &from_storage) }.map(|_| ()).unwrap());
    // SAFETY: `run` waited.
    let results = unsafe { picker.take_results(0) }.unwrap().unwrap();
    let QueryResult::Rect(r) = &results.results[0] else { panic!("a rectangle") };
    let got: std::collections::BTreeMap<(u64, u32), u64> = r.objects.iter().map(|o| ((o.id.get(), o.instance.unwrap_or(0)), o.pixels)).collect();
    assert!(want.keys().filter(|k| k.0 == 1).count() > 6, "most of the field shows: {want:?}");
    assert_eq!(got, want);
    drop((picker, image, storage, hooked, sets, texture));
    gpu.assert_no_validation_messages();
}

/// The instance matrices of the scene's instanced object, as the storage buffer holds them.
fn inst_matrices(scene: &Scene) -> Vec<f32> {
    scene.objects.iter().filter_map(|o| o.instances.as_ref()).flatten().flat_map(|m| m.to_cols_array()).collect()
}

/// Alpha-tested quads (texture, descriptor set and UV stream: one hook program) that share
/// their buffers, as a shared list: one group of the GPU plan's table, hooked. Points and
/// rectangles in both modes pick through the texture's holes as the unculled pass does.
#[test]
fn alpha_tested_quads_in_a_shared_lists_table_pick_as_unculled() {
    let gpu = Gpu::new();
    let nearest = vk::SamplerCreateInfo::default().mag_filter(vk::Filter::NEAREST).min_filter(vk::Filter::NEAREST);
    let texture = gpu.ctx.upload_texture(&alpha_texels(9), TEX, TEX, vk::Format::R8G8B8A8_UNORM, &nearest).unwrap();
    let sets = gpu.ctx.texture_sets(&[&texture]).unwrap();
    let program = alpha_program(sets.layout);
    let mut rng = fastrand::Rng::with_seed(9);
    let mut scene = Scene { meshes: vec![Mesh::quad(1.0)], objects: vec![] };
    for i in 0..24 {
        let at = Vec3::new(rng.f32() * 2.4 - 1.2, rng.f32() * 1.6 - 0.8, -3.0 - rng.f32() * 4.0);
        let turn = Quat::from_euler(glam::EulerRot::XYZ, rng.f32() * 0.8 - 0.4, rng.f32() * 0.8 - 0.4, rng.f32() * 3.0);
        scene.objects.push(Object::new(i + 1, 0, Mat4::from_scale_rotation_translation(Vec3::splat(0.5 + rng.f32() * 0.5), turn, at)));
    }
    let hooked = hooked_quads(&gpu, &scene, &program, sets.sets[0]);
    let shared: Arc<[PickDraw]> = sharing_first_buffers(&hooked.draws);
    let (view, proj, vp) = look(Vec3::new(0.2, 0.1, 1.0), Vec3::new(0.0, 0.0, -5.0), W, H);
    let request = PickRequest::new(vp, view, proj);
    let mut queries: Vec<PickQuery> = gpu.covered_pixels(&request, &shared, 4).into_iter().take(14).map(PickQuery::Point).collect();
    let rect = PixelRect::new(UVec2::new(20, 10), UVec2::new(140, 110));
    queries.extend([PickQuery::Rect { rect, mode: RectMode::Visible }, PickQuery::Rect { rect, mode: RectMode::All }]);
    let config = PickerConfig::default().with_max_queries(16).with_rect_tile(40, 32);
    let answers = |picker: &mut picking_vk::Picker| {
        // The shared list (`&Arc`): the table plans with it.
        let results = gpu.run_queries(picker, &request, &queries, &shared);
        let keys: Vec<String> = results
            .results
            .iter()
            .map(|r| match r {
                QueryResult::Rect(rect) => format!("{:?}", rect.objects),
                other => format!("{:?}", other.pick().and_then(|p| p.hit.as_ref()).map(|h| (h.id, h.draw_index, h.depth))),
            })
            .collect();
        (keys, results.stats.gpu_plan)
    };
    let mut gpu_planned = gpu.picker(config.with_planner(picking_vk::config::Planner::Gpu));
    let (want, _) = answers(&mut gpu.picker(config.with_culling(false)));
    let (got, stats) = answers(&mut gpu_planned);
    assert_eq!(got, want, "GPU-planned against unculled");
    assert!(want.iter().filter(|a| a.starts_with("Some")).count() >= 8, "the quads are hit: {want:?}");
    let stats = stats.expect("the hooked group planned on the GPU");
    assert!(stats.ranges >= 14 && stats.survivors < stats.instances_tested, "{stats:?}");
    drop((gpu_planned, hooked, sets, texture));
    gpu.assert_no_validation_messages();
}
