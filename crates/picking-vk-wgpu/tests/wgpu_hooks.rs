//! Hooks on wgpu draws: alpha-tested quads whose discard hook samples the app's wgpu texture
//! through a set the bridge writes (with the cut-off in the app's uniform buffer), with UVs
//! from a wgpu vertex buffer, against the CPU ray cast that drops transparent texels and goes
//! on to the next hit. Lavapipe, validation and synchronization validation.

mod common;
use common::RecordPick;

use glam::{Mat4, Quat, UVec2, Vec2, Vec3};
use picking_vk::hooks::{AttributeFormat, HookAttribute, HookSource, Interpolation};
use picking_vk::{PickQuery, PickRequest, PickerConfig};
use picking_vk_tests::oracle::{Oracle, OracleCamera, OracleHit};
use picking_vk_tests::scene::{Mesh, Object, Scene};
use picking_vk_wgpu::{viewport, HookAttributeSource, HookBindingKind, HookResource, VertexPositions, WgpuDraw, WgpuPicker};
use std::time::Duration;
use wgpu::util::DeviceExt;

const W: u32 = 200;
const H: u32 = 150;
const TEX: u32 = 8;
/// UVs per vertex of `Mesh::quad` (a b c, a c d).
const QUAD_UVS: [Vec2; 6] = [Vec2::new(0.0, 0.0), Vec2::new(1.0, 0.0), Vec2::new(1.0, 1.0), Vec2::new(0.0, 0.0), Vec2::new(1.0, 1.0), Vec2::new(0.0, 1.0)];

/// Whether the texel under `uv` is transparent; `None` within a hair of a texel edge.
fn transparent(alpha: &[u8], uv: Vec2) -> Option<bool> {
    let s = uv * TEX as f32;
    let near_edge = |x: f32| (x - x.floor()).min(1.0 - (x - x.floor())) < 2e-3;
    if near_edge(s.x) || near_edge(s.y) {
        return None;
    }
    let (x, y) = ((s.x.floor() as u32).min(TEX - 1), (s.y.floor() as u32).min(TEX - 1));
    Some(alpha[((y * TEX + x) * 4 + 3) as usize] < 128)
}

fn quad_uv(hit: &OracleHit) -> Vec2 {
    let b = hit.barycentrics;
    (0..3).map(|k| QUAD_UVS[3 * hit.triangle + k] * b[k] as f32).sum()
}

fn bytes(floats: impl IntoIterator<Item = f32>) -> Vec<u8> {
    floats.into_iter().flat_map(f32::to_le_bytes).collect()
}

#[test]
fn alpha_tested_quads_through_wgpu_resources_match_the_ray_cast() {
    let adapter = common::adapter();
    let gpu = common::device(&adapter);
    let mut picker = WgpuPicker::new(&gpu, PickerConfig::default().with_max_queries(64)).expect("the picker");
    let mut rng = fastrand::Rng::with_seed(3);
    let texels: Vec<u8> = (0..TEX * TEX).flat_map(|_| [200, 90, 40, if rng.bool() { 255 } else { 0 }]).collect();
    let size = wgpu::Extent3d { width: TEX, height: TEX, depth_or_array_layers: 1 };
    let texture = gpu.device.create_texture_with_data(
        &gpu.queue,
        &wgpu::TextureDescriptor {
            label: Some("alpha"),
            size,
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8Unorm,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        },
        Default::default(),
        &texels,
    );
    let cut = gpu.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("cut"),
        contents: &bytes([0.5, 0.0, 0.0, 0.0]),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let source = HookSource {
        name: "alpha test".into(),
        shared: "layout(set = 1, binding = 0) uniform sampler2D base_colour;\nlayout(set = 1, binding = 1) uniform Cut { float threshold; };\n".into(),
        discard: Some("bool pick_discard(PickFragment f) {\n    return texture(base_colour, f.attrib.xy).a < threshold;\n}\n".into()),
        world: None,
        attribute: Some(HookAttribute { format: AttributeFormat::Float32x2, interpolation: Interpolation::Smooth }),
    };
    let kinds = [HookBindingKind::Texture { filter: wgpu::FilterMode::Nearest, address: wgpu::AddressMode::ClampToEdge }, HookBindingKind::Uniform];
    // SAFETY: the hook indexes no arrays out of bounds.
    let program = unsafe { picker.hook_program(source, &kinds, 8) }.expect("the program");

    // A backdrop and four alpha-tested quads in front of it, overlapping in depth.
    let quad = Mesh::quad(0.8);
    let backdrop = Mesh::quad(6.0);
    let vertices = |m: &Mesh| {
        gpu.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: &bytes(m.positions.iter().flat_map(|p| p.to_array())),
            usage: wgpu::BufferUsages::VERTEX,
        })
    };
    // The quads' positions sit in a buffer with more vertices after them than the UV buffer
    // holds: the draw may read the six both hold.
    let mut padded = quad.clone();
    padded.positions.extend((0..10).map(|i| Vec3::new(100.0 + i as f32, 0.0, 0.0)));
    let (quad_vb, backdrop_vb) = (vertices(&padded), vertices(&backdrop));
    let uvs = gpu.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("uv"),
        contents: &bytes(QUAD_UVS.iter().flat_map(|u| u.to_array())),
        usage: wgpu::BufferUsages::VERTEX,
    });
    let models: Vec<Mat4> = (0..4)
        .map(|i| {
            Mat4::from_rotation_translation(
                Quat::from_rotation_y(0.3 * i as f32 - 0.4),
                Vec3::new(-1.2 + 0.8 * i as f32, 0.3 * (i % 2) as f32, -0.4 * i as f32),
            )
        })
        .collect();
    let mut scene = Scene { meshes: vec![backdrop.clone(), quad.clone()], objects: vec![Object::new(1, 0, Mat4::from_translation(Vec3::new(0.0, 0.0, -3.0)))] };
    let mut draws =
        vec![WgpuDraw::new(picking_vk::ObjectId::new(1).unwrap(), VertexPositions::tight(&backdrop_vb), 0..6).unwrap().with_model(scene.objects[0].model)];
    for (i, model) in models.iter().enumerate() {
        let id = 10 + i as u64;
        scene.objects.push(Object::new(id, 1, *model));
        let attribute = HookAttributeSource { buffer: &uvs, offset: 0, array_stride: 8 };
        // A view of its own per draw, dropped right away: the draw's set keeps it.
        let view = texture.create_view(&Default::default());
        let resources = [HookResource::Texture(&view), HookResource::Buffer(&cut)];
        let draw = WgpuDraw::new(picking_vk::ObjectId::new(id).unwrap(), VertexPositions::tight(&quad_vb), 0..6).unwrap().with_model(*model);
        draws.push(draw.with_hooks(&program, &resources, Some(attribute)).expect("hooked"));
        drop(view);
    }
    let view_m = glam::camera::rh::view::look_at_mat4(Vec3::new(0.2, 0.4, 4.0), Vec3::new(0.0, 0.0, -0.5), Vec3::Y);
    let proj = glam::camera::rh::proj::directx::perspective(0.9, W as f32 / H as f32, 0.1, 50.0);
    let oracle = Oracle::new(&scene, OracleCamera::new(view_m, proj, [0.0, f64::from(H), f64::from(W), -f64::from(H)]));
    let (mut checked, mut on_quads, mut through) = (0, 0, 0);
    for round in 0..6 {
        let pixels: Vec<UVec2> = (0..64).map(|_| UVec2::new(rng.u32(20..W - 20), rng.u32(15..H - 15))).collect();
        let queries: Vec<PickQuery> = pixels.iter().map(|&p| PickQuery::Point(p)).collect();
        let commands = picker.record_pick(&PickRequest::new(viewport(W, H), view_m, proj), &queries, &draws).expect("recorded");
        let ticket = commands.ticket();
        commands.submit([], []).expect("submitted");
        let results = picker.wait_results(&ticket, Duration::from_secs(20)).expect("results");
        for (i, &pixel) in pixels.iter().enumerate() {
            let answer = oracle.pick_through(pixel, |hit| if hit.id >= 10 { transparent(&texels, quad_uv(hit)) } else { Some(false) });
            if answer.ambiguous {
                continue;
            }
            let expected = answer.hit.map(|h| h.id);
            let got = results.pick(i).and_then(|p| p.hit.as_ref()).map(|h| h.id.get());
            assert_eq!(got, expected, "round {round}, pixel {pixel}");
            checked += 1;
            on_quads += usize::from(expected.is_some_and(|id| id >= 10));
            // The plain ray meets a quad first, the hook let it through.
            through += usize::from(oracle.pick(pixel).hit.is_some_and(|h| h.id >= 10) && expected != oracle.pick(pixel).hit.map(|h| h.id));
        }
    }
    eprintln!("{checked} unambiguous pixels agree: {on_quads} on opaque texels, {through} through transparent ones");
    assert!(checked >= 250 && on_quads >= 40 && through >= 20, "the view must show quads and holes: {checked} {on_quads} {through}");
    common::assert_no_messages();
}

/// Resources that do not fit the program are refused before any Vulkan set is written: the
/// wrong number or kind, a usage missing, another device's; and a draw whose hooks are
/// another picker's device's is refused at record.
#[test]
fn hook_resources_that_do_not_fit_are_refused() {
    let adapter = common::adapter();
    let gpu = common::device(&adapter);
    let mut picker = WgpuPicker::new(&gpu, PickerConfig::default()).expect("the picker");
    let source = || HookSource {
        name: "cut".into(),
        shared: "layout(set = 1, binding = 0) uniform Cut { float threshold; };\n".into(),
        discard: Some("bool pick_discard(PickFragment f) {\n    return threshold > 2.0;\n}\n".into()),
        ..Default::default()
    };
    // SAFETY: the hook indexes no arrays out of bounds.
    let program = unsafe { picker.hook_program(source(), &[HookBindingKind::Uniform], 4) }.expect("the program");
    // More textures a stage than the device allows: refused by wgpu's validation, not its
    // panicking default handler, and before any Vulkan object is made.
    let textures = gpu.device.limits().max_sampled_textures_per_shader_stage as usize + 1;
    let texture = HookBindingKind::Texture { filter: wgpu::FilterMode::Linear, address: wgpu::AddressMode::ClampToEdge };
    // SAFETY: the hook indexes no arrays out of bounds.
    let err = unsafe { picker.hook_program(source(), &vec![texture; textures], 4) }.expect_err("refused");
    assert!(matches!(err, picking_vk_wgpu::WgpuPickError::Wgpu(_)), "{err}");
    let positions = gpu.device.create_buffer(&wgpu::BufferDescriptor { label: None, size: 36, usage: wgpu::BufferUsages::VERTEX, mapped_at_creation: false });
    let draw = || WgpuDraw::new(picking_vk::ObjectId::new(5).unwrap(), VertexPositions::tight(&positions), 0..3).unwrap();
    let uniform = gpu.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: &bytes([0.5, 0.0, 0.0, 0.0]),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let storage = gpu.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: &bytes([0.5, 0.0, 0.0, 0.0]),
        usage: wgpu::BufferUsages::STORAGE,
    });
    assert!(draw().with_hooks(&program, &[], None).is_err(), "too few resources");
    assert!(draw().with_hooks(&program, &[HookResource::Buffer(&uniform), HookResource::Buffer(&uniform)], None).is_err(), "too many");
    let err = draw().with_hooks(&program, &[HookResource::Buffer(&storage)], None).expect_err("no UNIFORM usage");
    assert!(matches!(&err, picking_vk_wgpu::WgpuPickError::Wgpu(m) if m.contains("UNIFORM")), "{err}");
    let other = common::device(&adapter);
    let foreign = other.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: &bytes([0.5, 0.0, 0.0, 0.0]),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let err = draw().with_hooks(&program, &[HookResource::Buffer(&foreign)], None).expect_err("another device's buffer");
    assert!(matches!(err, picking_vk_wgpu::WgpuPickError::Wgpu(_)), "{err}");
    // A program of another device's picker, with that device's buffers: fine to build, refused
    // by this picker.
    let mut other_picker = WgpuPicker::new(&other, PickerConfig::default()).expect("the other picker");
    // SAFETY: the hook indexes no arrays out of bounds.
    let other_program = unsafe { other_picker.hook_program(source(), &[HookBindingKind::Uniform], 4) }.expect("the program");
    let other_positions =
        other.device.create_buffer(&wgpu::BufferDescriptor { label: None, size: 36, usage: wgpu::BufferUsages::VERTEX, mapped_at_creation: false });
    let alien = WgpuDraw::new(picking_vk::ObjectId::new(6).unwrap(), VertexPositions::tight(&other_positions), 0..3).unwrap();
    let alien = alien.with_hooks(&other_program, &[HookResource::Buffer(&foreign)], None).expect("fits its own device");
    let request = PickRequest::new(viewport(W, H), Mat4::IDENTITY, Mat4::IDENTITY);
    let err = picker.record_pick(&request, &[PickQuery::Point(UVec2::new(3, 3))], &[alien]).err().expect("refused");
    assert!(matches!(err, picking_vk_wgpu::WgpuPickError::Wgpu(_)), "{err}");
    // And a draw that fits is picked.
    let good = draw().with_hooks(&program, &[HookResource::Buffer(&uniform)], None).expect("fits");
    let commands = picker.record_pick(&request, &[PickQuery::Point(UVec2::new(3, 3))], &[good]).expect("recorded");
    let ticket = commands.ticket();
    commands.submit([], []).expect("submitted");
    picker.wait_results(&ticket, Duration::from_secs(20)).expect("results");
    common::assert_no_messages();
}
