//! Deformed draws against CPU deformation plus the ray oracle: skinned tubes bent well away
//! from their bind pose (four influences with u8 joints and float weights, eight with u16
//! joints and unorm16 weights, interleaved at the host's strides and offsets, one with unorm8
//! weights), a morphed grid and a morphed, skinned tube, at several poses; detail on deformed
//! hits where the device has it; rectangles over deformed draws against the full-size ID
//! image; hooks on deformed draws (a discard hook picked through, a world-adjust hook moving
//! the deformed mesh) against the same oracle; and refusals.

use ash::vk;
use glam::{DMat4, DVec3, Mat4, Quat, UVec2, Vec3};
use picking_vk::debug::{IdCopy, IdImage};
use picking_vk::{
    config::DetailStatus, deform::DeformPose, deform::Deformation, deform::Influences, deform::JointFormat, deform::MorphTargets, deform::Skin,
    deform::SkinInfluences, deform::VertexStream, deform::WeightFormat, draw::BufferRange, draw::MeshGeometry, hooks::DrawHooks, hooks::HookProgram,
    hooks::HookSource, PickDraw, PickError, PickQuery, PickRequest, PickerConfig, PixelRect, QueryResult, RectMode, Snap,
};
use picking_vk_context::{HostBuffer, VulkanContext};
use picking_vk_tests::harness::{look, random_pixels, Gpu};
use picking_vk_tests::oracle::{Oracle, OracleCamera};
use picking_vk_tests::results_reader::{assert_matches_cpu, frame, key_of, ResultsReader};
use picking_vk_tests::scene::{Mesh, Object, Scene};
use std::collections::BTreeMap;
use std::sync::Arc;

const W: u32 = 320;
const H: u32 = 240;
/// Height of the tubes, bones along it.
const TUBE: f32 = 2.4;

/// A closed-ended tube of radius `r` along +Y from 0 to `TUBE`, indexed.
fn tube(rings: u32, segments: u32, r: f32) -> Mesh {
    let mut positions = vec![];
    for j in 0..=rings {
        let y = TUBE * j as f32 / rings as f32;
        for i in 0..segments {
            let a = std::f32::consts::TAU * i as f32 / segments as f32;
            positions.push(Vec3::new(r * a.cos(), y, r * a.sin()));
        }
    }
    let mut indices = vec![];
    for j in 0..rings {
        for i in 0..segments {
            let (a, b) = (j * segments + i, j * segments + (i + 1) % segments);
            indices.extend([a, b + segments, b, a, a + segments, b + segments]);
        }
    }
    // Caps: a centre vertex each.
    for (ring, y) in [(0, 0.0), (rings, TUBE)] {
        let centre = positions.len() as u32;
        positions.push(Vec3::new(0.0, y, 0.0));
        for i in 0..segments {
            indices.extend([centre, ring * segments + i, ring * segments + (i + 1) % segments]);
        }
    }
    Mesh { positions, indices: Some(indices) }
}

/// The `influences` strongest of `bones` bones along the tube for a vertex at height `y`
/// (weights falling off linearly over `spread` bone lengths, normalized).
fn influences(y: f32, bones: u32, influences: usize, spread: f32) -> Vec<(u16, f32)> {
    let length = TUBE / bones as f32;
    let mut all: Vec<(u16, f32)> = (0..bones)
        .map(|k| {
            let centre = (k as f32 + 0.5) * length;
            (k as u16, (1.0 - (y - centre).abs() / (spread * length)).max(0.0))
        })
        .collect();
    all.sort_by(|a, b| b.1.total_cmp(&a.1));
    all.truncate(influences);
    let sum: f32 = all.iter().map(|w| w.1).sum();
    all.iter().map(|&(j, w)| (j, w / sum)).collect()
}

/// Joint matrices (joint world times inverse bind, in the tube's model space) for bones
/// bent by `angles` about Z and X in turn, each at its own base.
fn pose(angles: &[f32]) -> Vec<Mat4> {
    let length = TUBE / angles.len() as f32;
    let mut world = DMat4::IDENTITY;
    let mut out = vec![];
    for (k, &a) in angles.iter().enumerate() {
        let base = DMat4::from_translation(DVec3::new(0.0, if k == 0 { 0.0 } else { f64::from(length) }, 0.0));
        let axis = if k % 2 == 0 { DVec3::Z } else { DVec3::X };
        world = world * base * DMat4::from_axis_angle(axis, f64::from(a));
        let inverse_bind = DMat4::from_translation(DVec3::new(0.0, -f64::from(length) * k as f64, 0.0));
        out.push((world * inverse_bind).as_mat4());
    }
    out
}

/// How one test object stores its influences.
#[derive(Clone, Copy)]
struct SkinLayout {
    bones: u32,
    sets: usize,
    joints: JointFormat,
    weights: WeightFormat,
}

/// Quantizes a weight as the format stores it; returns the stored bytes and the value read.
fn store_weight(w: f32, format: WeightFormat) -> (Vec<u8>, f32) {
    match format {
        WeightFormat::Float32x4 => (w.to_le_bytes().to_vec(), w),
        WeightFormat::Unorm8x4 => {
            let q = (w * 255.0).round() as u8;
            (vec![q], f32::from(q) / 255.0)
        }
        WeightFormat::Unorm16x4 => {
            let q = (w * 65535.0).round() as u16;
            (q.to_le_bytes().to_vec(), f32::from(q) / 65535.0)
        }
    }
}

/// One interleaved buffer of (joints, weights) per set and vertex at a padded stride, after
/// `lead` unrelated bytes; the CPU copy as the GPU reads it.
fn pack_skin(mesh: &Mesh, layout: SkinLayout, lead: usize) -> (Vec<u8>, u32, Vec<u32>, Vec<SkinInfluences>) {
    let set_bytes = layout.joints.bytes() + layout.weights.bytes();
    let stride = (set_bytes * layout.sets as u32 + 4).next_multiple_of(4);
    let offsets: Vec<u32> =
        (0..layout.sets as u32 * 2).map(|k| if k % 2 == 0 { k / 2 * set_bytes } else { k / 2 * set_bytes + layout.joints.bytes() }).collect();
    let mut bytes = vec![0xAB; lead + stride as usize * mesh.positions.len()];
    let mut cpu = vec![SkinInfluences::default(); layout.sets];
    for (v, p) in mesh.positions.iter().enumerate() {
        let mut list = influences(p.y, layout.bones, 4 * layout.sets, 1.6);
        list.resize(4 * layout.sets, (0, 0.0));
        for (s, set) in cpu.iter_mut().enumerate() {
            let base = lead + v * stride as usize + s * set_bytes as usize;
            let (mut joints, mut weights) = ([0u16; 4], [0f32; 4]);
            for k in 0..4 {
                let (j, w) = list[4 * s + k];
                joints[k] = j;
                let at = base + k * (layout.joints.bytes() as usize / 4);
                match layout.joints {
                    JointFormat::U8x4 => bytes[at] = j as u8,
                    JointFormat::U16x4 => bytes[at..at + 2].copy_from_slice(&j.to_le_bytes()),
                }
                let (stored, read) = store_weight(w, layout.weights);
                let at = base + layout.joints.bytes() as usize + k * stored.len();
                bytes[at..at + stored.len()].copy_from_slice(&stored);
                weights[k] = read;
            }
            set.joints.push(joints);
            set.weights.push(weights);
        }
    }
    (bytes, stride, offsets, cpu)
}

/// What the CPU oracle does, written apart from the library: morph, then blend, in f64.
fn deform_on_cpu(mesh: &Mesh, skin: &[SkinInfluences], joints: &[Mat4], targets: &[Vec<Vec3>], weights: &[f32]) -> Vec<Vec3> {
    (0..mesh.positions.len())
        .map(|v| {
            let mut p = mesh.positions[v].as_dvec3();
            for (t, w) in targets.iter().zip(weights) {
                p += t[v].as_dvec3() * f64::from(*w);
            }
            if skin.is_empty() {
                return p.as_vec3();
            }
            let mut out = DVec3::ZERO;
            for set in skin {
                for k in 0..4 {
                    out += joints[set.joints[v][k] as usize].as_dmat4().transform_point3(p) * f64::from(set.weights[v][k]);
                }
            }
            out.as_vec3()
        })
        .collect()
}

/// A morph target per `(amplitude, frequency)`: z bumps over the grid or radial swelling.
fn morph_targets(mesh: &Mesh, waves: &[(f32, f32)]) -> Vec<Vec<Vec3>> {
    waves
        .iter()
        .map(|&(a, f)| mesh.positions.iter().map(|p| Vec3::new(0.1 * a * p.z, 0.0, a * (f * p.x).sin() * (f * 0.7 * p.y).cos() + 0.1 * a * p.x)).collect())
        .collect()
}

/// A test object: its mesh, placement, skin layout and morph targets.
struct Deformed {
    id: u64,
    mesh: Mesh,
    model: Mat4,
    skin: Option<SkinLayout>,
    targets: Vec<Vec<Vec3>>,
    /// An earlier object (same mesh, skin layout and targets) whose vertex, index, skin and
    /// delta buffers this one draws from, with its own joint matrices and morph weights (the
    /// pass binds what changes between draws, nothing else).
    shares: Option<usize>,
}

/// The buffers an object's draw names (handle, size), kept for objects that share them.
#[derive(Clone, Copy)]
struct ObjectBuffers {
    positions: (vk::Buffer, u64),
    indices: (vk::Buffer, u64),
    /// Skin influences, and the copy object 1 reads its weights from.
    skin: Option<(vk::Buffer, vk::Buffer, u64)>,
    deltas: Option<(vk::Buffer, u64)>,
}

/// The GPU side of the scene: buffers the draws name, which must outlive the picks.
struct Uploaded {
    draws: Vec<PickDraw>,
    /// Per object: CPU influences (for the oracle).
    skins: Vec<Vec<SkinInfluences>>,
    _buffers: Vec<HostBuffer>,
}

/// Uploads the objects' buffers and their draws; `from_storage`: the skins allow reading
/// their influence streams as storage words (`Skin::streams_in_storage`).
fn upload(ctx: &VulkanContext, objects: &[Deformed], poses: &[Vec<Mat4>], morph_weights: &[Vec<f32>], with_pose: bool, from_storage: bool) -> Uploaded {
    let mut buffers = vec![];
    let mut draws = vec![];
    let mut skins = vec![];
    // One storage buffer for every object's joint matrices and morph weights, each at a
    // 4-byte-aligned offset that no descriptor alignment would allow (some 16-byte aligned).
    let mut pose_words: Vec<f32> = vec![0.0];
    let mut pose_at = vec![];
    for (o, (pose, weights)) in poses.iter().zip(morph_weights).enumerate() {
        // Odd objects' joint matrices 16-byte aligned (as engines usually keep them), even ones not.
        while o % 2 == 1 && !pose_words.len().is_multiple_of(4) {
            pose_words.push(0.0);
        }
        let joints = pose_words.len();
        pose_words.extend(pose.iter().flat_map(|m| m.to_cols_array()));
        let w = pose_words.len();
        pose_words.extend(weights);
        pose_words.push(0.0);
        pose_at.push((joints, w));
    }
    let pose_buffer = ctx.upload(&pose_words, vk::BufferUsageFlags::STORAGE_BUFFER).unwrap();
    let mut object_buffers: Vec<ObjectBuffers> = vec![];
    for (o, obj) in objects.iter().enumerate() {
        let shared = obj.shares.map(|s| object_buffers[s]);
        let indices = obj.mesh.indices.clone().unwrap();
        let mut own = |b: HostBuffer| {
            let handle = (b.buffer, b.size);
            buffers.push(b);
            handle
        };
        let vb = shared.map_or_else(|| own(ctx.upload(&obj.mesh.positions, vk::BufferUsageFlags::VERTEX_BUFFER).unwrap()), |b| b.positions);
        let ib = shared.map_or_else(|| own(ctx.upload(&indices, vk::BufferUsageFlags::INDEX_BUFFER).unwrap()), |b| b.indices);
        let n = obj.mesh.positions.len() as u32;
        let positions = picking_vk::draw::Positions { range: BufferRange { buffer: vb.0, offset: 0, size: vb.1 }, stride: 12, vertex_count: n };
        let triangles = picking_vk::draw::Triangles::Indexed {
            range: BufferRange { buffer: ib.0, offset: 0, size: ib.1 },
            width: picking_vk::draw::IndexWidth::U32,
            first_index: 0,
            index_count: indices.len() as u32,
            vertex_offset: 0,
        };
        let (joints_at, weights_at) = pose_at[o];
        let mut deformation = Deformation::default();
        let mut cpu_skin = vec![];
        let (mut skin_buffers, mut delta_buffer) = (None, None);
        if let Some(layout) = obj.skin {
            // Object 6's streams start 2 bytes past a word: read as vertex attributes even
            // where storage reads are allowed.
            let lead = if obj.id == 6 { 14 } else { 12 };
            let (bytes, stride, offsets, cpu) = pack_skin(&obj.mesh, layout, lead);
            // Object 1 reads its weights from a second copy of the buffer: separate vertex
            // bindings (the others interleave joints and weights in one).
            let (sb, wb, size) = shared.and_then(|b| b.skin).unwrap_or_else(|| {
                let usage = vk::BufferUsageFlags::VERTEX_BUFFER | vk::BufferUsageFlags::STORAGE_BUFFER;
                let sb = own(ctx.upload(&bytes, usage).unwrap());
                let wb = own(ctx.upload(&bytes, usage).unwrap());
                (sb.0, wb.0, sb.1)
            });
            skin_buffers = Some((sb, wb, size));
            let stream = |k: usize| {
                let offset = (lead as u32 + offsets[k]) as u64;
                let buffer = if obj.id == 1 && k % 2 == 1 { wb } else { sb };
                VertexStream { range: BufferRange { buffer, offset, size: size - offset }, stride }
            };
            let set = |s: usize| Influences { joints: stream(2 * s), joint_format: layout.joints, weights: stream(2 * s + 1), weight_format: layout.weights };
            deformation.skin = Some(Skin {
                influences: set(0),
                more_influences: (layout.sets > 1).then(|| set(1)),
                matrices: BufferRange { buffer: pose_buffer.buffer, offset: joints_at as u64 * 4, size: layout.bones as u64 * 64 },
                joint_count: layout.bones,
                streams_in_storage: from_storage,
            });
            cpu_skin = cpu;
        }
        if !obj.targets.is_empty() {
            // Deltas after 5 unrelated words.
            let mut words = vec![f32::NAN; 5];
            words.extend(obj.targets.iter().flat_map(|t| t.iter().flat_map(|d| d.to_array())));
            let db = shared.and_then(|b| b.deltas).unwrap_or_else(|| own(ctx.upload(&words, vk::BufferUsageFlags::STORAGE_BUFFER).unwrap()));
            delta_buffer = Some(db);
            deformation.morph = Some(MorphTargets {
                deltas: BufferRange { buffer: db.0, offset: 20, size: db.1 - 20 },
                target_count: obj.targets.len() as u32,
                weights: BufferRange { buffer: pose_buffer.buffer, offset: weights_at as u64 * 4, size: obj.targets.len() as u64 * 4 },
            });
        }
        if with_pose {
            deformation.pose = Some(Arc::new(DeformPose { joint_matrices: poses[o].clone(), morph_weights: morph_weights[o].clone() }));
        }
        let geometry = MeshGeometry {
            positions: obj.mesh.positions.clone(),
            normals: None,
            uvs: None,
            indices: Some(indices),
            skin: cpu_skin.clone(),
            morph_targets: obj.targets.clone(),
        };
        geometry.validate().unwrap();
        draws.push(
            PickDraw::new(picking_vk::ObjectId::new(obj.id).unwrap(), positions, triangles)
                .with_model(obj.model)
                .with_geometry(Arc::new(geometry))
                .with_deformation(deformation),
        );
        skins.push(cpu_skin);
        object_buffers.push(ObjectBuffers { positions: vb, indices: ib, skin: skin_buffers, deltas: delta_buffer });
    }
    buffers.push(pose_buffer);
    Uploaded { draws, skins, _buffers: buffers }
}

fn objects() -> Vec<Deformed> {
    let t = tube(10, 8, 0.35);
    let g = Mesh::grid(5, 0.8);
    let four = SkinLayout { bones: 6, sets: 1, joints: JointFormat::U8x4, weights: WeightFormat::Float32x4 };
    let eight = SkinLayout { bones: 10, sets: 2, joints: JointFormat::U16x4, weights: WeightFormat::Unorm16x4 };
    let bytes = SkinLayout { bones: 5, sets: 1, joints: JointFormat::U16x4, weights: WeightFormat::Unorm8x4 };
    vec![
        Deformed { id: 1, mesh: t.clone(), model: Mat4::from_translation(Vec3::new(-1.4, -1.2, -6.0)), skin: Some(four), targets: vec![], shares: None },
        Deformed {
            id: 2,
            mesh: t.clone(),
            model: Mat4::from_rotation_translation(Quat::from_rotation_y(0.7), Vec3::new(0.0, -1.3, -6.5)),
            skin: Some(eight),
            targets: vec![],
            shares: None,
        },
        Deformed {
            id: 3,
            mesh: g.clone(),
            model: Mat4::from_translation(Vec3::new(1.3, 0.6, -6.2)),
            skin: None,
            targets: morph_targets(&g, &[(0.6, 3.0), (0.4, 5.0)]),
            shares: None,
        },
        Deformed {
            id: 4,
            mesh: t.clone(),
            model: Mat4::from_translation(Vec3::new(1.4, -1.4, -5.8)),
            skin: Some(bytes),
            targets: morph_targets(&t, &[(0.5, 6.0)]),
            shares: None,
        },
        // Two more of object 4 in their own poses: one drawn from its buffers, one from its
        // own (laid out 2 bytes off a word).
        Deformed {
            id: 5,
            mesh: t.clone(),
            model: Mat4::from_rotation_translation(Quat::from_rotation_z(-0.5), Vec3::new(-2.3, 0.2, -7.0)),
            skin: Some(bytes),
            targets: morph_targets(&t, &[(0.5, 6.0)]),
            shares: Some(3),
        },
        Deformed {
            id: 6,
            mesh: t.clone(),
            model: Mat4::from_rotation_translation(Quat::from_rotation_z(1.2), Vec3::new(0.6, 0.4, -7.4)),
            skin: Some(bytes),
            targets: morph_targets(&t, &[(0.5, 6.0)]),
            shares: None,
        },
    ]
}

/// Random poses well away from the bind pose (bones bent up to 0.45 rad each) and morph
/// weights, per object.
fn random_pose(objects: &[Deformed], seed: u64) -> (Vec<Vec<Mat4>>, Vec<Vec<f32>>) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let poses = objects.iter().map(|o| pose(&(0..o.skin.map_or(1, |s| s.bones)).map(|_| (rng.f32() - 0.5) * 0.9).collect::<Vec<_>>())).collect();
    let weights = objects.iter().map(|o| o.targets.iter().map(|_| rng.f32() * 1.6 - 0.4).collect()).collect();
    (poses, weights)
}

fn pick_points(gpu: &Gpu, picker: &mut picking_vk::Picker, request: &PickRequest<'_>, pixels: &[UVec2], draws: &[PickDraw]) -> Vec<picking_vk::PickResult> {
    let mut out = vec![];
    for chunk in pixels.chunks(64) {
        let queries: Vec<PickQuery> = chunk.iter().map(|&p| PickQuery::Point(p)).collect();
        // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
        gpu.run(|cmd| unsafe { picker.record(cmd, 0, request, &queries, draws) }.map(|_| ()).expect("record"));
        // SAFETY: `run` waited for the frame.
        let results = unsafe { picker.take_results(0) }.expect("resolve").expect("pending");
        out.extend(results.results.into_iter().map(|r| match r {
            QueryResult::Point(p) => p,
            _ => panic!("point queries give points"),
        }));
    }
    out
}

#[test]
fn skinned_and_morphed_draws_pick_like_cpu_deformation_and_the_ray_oracle() {
    let gpu = Gpu::new();
    let mut picker = gpu.picker(PickerConfig::default().with_max_queries(64).with_detail(picking_vk::DetailMode::IfEnabled));
    let detail = *picker.detail_status() == DetailStatus::Active;
    let objects = objects();
    let (view, proj, vp) = look(Vec3::new(0.2, 0.3, -1.0), Vec3::new(0.0, -0.3, -6.0), W, H);
    let camera = OracleCamera::new(view, proj, [0.0, 0.0, f64::from(W), f64::from(H)]);
    // Influences read as vertex attributes, then as storage words (but object 6's).
    for (name, from_storage) in [("attributes", false), ("storage", true)] {
        let (mut agree, mut hits, mut moved, mut detailed, mut shared) = (0, 0, 0, 0, 0);
        for seed in 1..=4u64 {
            let (poses, weights) = random_pose(&objects, seed);
            let up = upload(&gpu.ctx, &objects, &poses, &weights, true, from_storage);
            // The oracle's scene: each object deformed on the CPU, placed by its model matrix.
            let mut posed = Scene { meshes: vec![], objects: vec![] };
            let mut rest = Scene { meshes: vec![], objects: vec![] };
            for (o, obj) in objects.iter().enumerate() {
                let positions = deform_on_cpu(&obj.mesh, &up.skins[o], &poses[o], &obj.targets, &weights[o]);
                posed.meshes.push(Mesh { positions, indices: obj.mesh.indices.clone() });
                posed.objects.push(Object::new(obj.id, o, obj.model));
                rest.meshes.push(obj.mesh.clone());
                rest.objects.push(Object::new(obj.id, o, obj.model));
            }
            let oracle = Oracle::new(&posed, camera);
            let rest_oracle = Oracle::new(&rest, camera);
            let request = PickRequest::new(vp, view, proj);
            let mut pixels: Vec<UVec2> = gpu.covered_pixels(&request, &up.draws, seed).into_iter().take(300).collect();
            pixels.extend(random_pixels(seed + 50, 40, W, H));
            let results = pick_points(&gpu, &mut picker, &request, &pixels, &up.draws);
            for (pixel, got) in pixels.iter().zip(&results) {
                let want = oracle.pick(*pixel);
                if want.ambiguous {
                    continue;
                }
                let at = format!("{name}, pose {seed}, pixel {pixel}");
                assert_eq!(got.hit.as_ref().map(|h| h.id.get()), want.hit.map(|h| h.id), "{at}");
                if let (Some(g), Some(w)) = (&got.hit, &want.hit) {
                    assert!((g.distance - w.distance).abs() <= 1e-3 * w.distance, "{at}: distance {} vs {}", g.distance, w.distance);
                    hits += 1;
                    shared += usize::from(objects[w.object].shares.is_some());
                    if let Some(d) = g.detail.as_ref().filter(|_| detail) {
                        // The deformed triangle, exactly; the world point on it.
                        assert_eq!(d.face as usize, w.triangle, "{at}: face");
                        let s = d.surface.expect("registered geometry and pose");
                        assert!((s.world_point - w.point).length() <= 1e-4 * 6.0, "{at}: {:?} vs {:?}", s.world_point, w.point);
                        let n = s.face_normal_world.expect("face normal of the deformed triangle");
                        let t = posed.meshes[w.object].triangle(w.triangle).map(|p| obj_world(&objects[w.object]).transform_point3(p.as_dvec3()));
                        assert!(n.dot(t[1] - t[0]).abs() < 1e-4 && n.dot(t[2] - t[0]).abs() < 1e-4, "{at}: the normal is the deformed face's");
                        detailed += 1;
                    }
                }
                let before = rest_oracle.pick(*pixel);
                moved += usize::from(!before.ambiguous && before.hit.map(|h| h.id) != want.hit.map(|h| h.id));
                agree += 1;
            }
        }
        eprintln!(
            "deformed, {name}: {agree} unambiguous picks agree with CPU deformation + ray oracle, {hits} hits ({shared} on objects drawn from shared buffers), {moved} differ from the rest pose, {detailed} with detail checked"
        );
        assert!(agree > 500 && hits > 400 && moved > 40 && shared > 40, "{name}: {agree} / {hits} / {moved} / {shared}");
        assert!(!detail || detailed > 300, "{name}: detail checked on {detailed} hits");
    }
    drop(picker);
    gpu.assert_no_validation_messages();
}

/// Stripes of the discard hook: world points whose `fract(z * STRIPES)` is below one half are
/// holes.
const STRIPES: f64 = 8.0;
/// How far the world-adjust hook lifts its draw.
const LIFT: f32 = 0.25;

/// Hooks on deformed draws, in the order the pass meets them: a discard hook on objects 1, 3
/// and 5 (stripes of holes across world z, so a ray meets a tube's front and back walls in
/// different ones), a world-adjust hook (a lift) on object 4, none on 2 and 6, so hooked
/// layouts (deformation at set 2) and plain deformed ones (set 1) alternate. Picks agree with
/// the CPU-deformed scene with object 4 lifted and the stripes cut out, through the holes onto
/// what lies behind; rectangles count what the hooked ID image shows.
#[test]
fn hooks_on_deformed_draws_pick_through_holes_and_at_the_adjusted_world() {
    let gpu = Gpu::new();
    let mut picker = gpu.picker(PickerConfig::default().with_max_queries(64).with_detail(picking_vk::DetailMode::IfEnabled));
    let detail = *picker.detail_status() == DetailStatus::Active;
    let objects = objects();
    let stripes = HookProgram::new(HookSource {
        name: "stripes".into(),
        discard: Some(format!("bool pick_discard(PickFragment f) {{\n    return fract(f.world.z * {STRIPES:.1}) < 0.5;\n}}\n")),
        ..Default::default()
    });
    let lift = HookProgram::new(HookSource {
        name: "lift".into(),
        world: Some(format!("vec3 pick_world(PickVertex v) {{\n    return v.world + vec3(0.0, {LIFT:.2}, 0.0);\n}}\n")),
        ..Default::default()
    });
    let striped = |o: usize| o.is_multiple_of(2);
    let (view, proj, vp) = look(Vec3::new(0.2, 0.3, -1.0), Vec3::new(0.0, -0.3, -6.0), W, H);
    let camera = OracleCamera::new(view, proj, [0.0, 0.0, f64::from(W), f64::from(H)]);
    let request = PickRequest::new(vp, view, proj);
    // SAFETY: the context's handles outlive the image.
    let mut image = unsafe { IdImage::new(gpu.ctx.host_device(), W, H) }.unwrap();
    // The same draws through GPU results, read by a host pass in the same command buffer.
    let mut with_results = gpu.picker(PickerConfig::default().with_gpu_results(true).with_max_queries(8));
    let mut reader = ResultsReader::new(&gpu.ctx, 64);
    let keys: Vec<[u32; 3]> = objects.iter().map(|o| key_of(picking_vk::ObjectId::new(o.id).unwrap(), None)).collect();
    let mut gpu_results_found = 0;
    for (name, from_storage) in [("attributes", false), ("storage", true)] {
        let (mut agree, mut through, mut lifted, mut unhooked, mut detailed) = (0, 0, 0, 0, 0);
        for seed in 1..=3u64 {
            let (poses, weights) = random_pose(&objects, seed);
            let mut up = upload(&gpu.ctx, &objects, &poses, &weights, true, from_storage);
            for (o, draw) in up.draws.iter_mut().enumerate() {
                let program = match o {
                    3 => &lift,
                    _ if striped(o) => &stripes,
                    _ => continue,
                };
                *draw = draw.clone().with_hooks(DrawHooks::new(program.clone()));
            }
            let mut posed = Scene { meshes: vec![], objects: vec![] };
            for (o, obj) in objects.iter().enumerate() {
                let positions = deform_on_cpu(&obj.mesh, &up.skins[o], &poses[o], &obj.targets, &weights[o]);
                posed.meshes.push(Mesh { positions, indices: obj.mesh.indices.clone() });
                let model = if o == 3 { Mat4::from_translation(Vec3::Y * LIFT) * obj.model } else { obj.model };
                posed.objects.push(Object::new(obj.id, o, model));
            }
            let oracle = Oracle::new(&posed, camera);
            let plain = Oracle::new(&posed, camera);
            let hole = |h: &picking_vk_tests::oracle::OracleHit| {
                if !striped(h.object) {
                    return Some(false);
                }
                let f = (h.point.z * STRIPES).rem_euclid(1.0);
                // Too near a stripe's edge to tell what the GPU's interpolated world gives.
                ([0.0, 0.5, 1.0].iter().all(|e| (f - e).abs() > 2e-3)).then_some(f < 0.5)
            };
            let mut pixels: Vec<UVec2> = gpu.covered_pixels(&request, &up.draws, seed).into_iter().take(300).collect();
            pixels.extend(random_pixels(seed + 70, 40, W, H));
            let results = pick_points(&gpu, &mut picker, &request, &pixels, &up.draws);
            for (pixel, got) in pixels.iter().zip(&results) {
                let want = oracle.pick_through(*pixel, hole);
                if want.ambiguous {
                    continue;
                }
                let at = format!("{name}, pose {seed}, pixel {pixel}");
                assert_eq!(got.hit.as_ref().map(|h| h.id.get()), want.hit.map(|h| h.id), "{at}");
                if let (Some(g), Some(w)) = (&got.hit, &want.hit) {
                    assert!((g.distance - w.distance).abs() <= 1e-3 * w.distance, "{at}: distance {} vs {}", g.distance, w.distance);
                    lifted += usize::from(w.object == 3);
                    unhooked += usize::from(!striped(w.object) && w.object != 3);
                    if let Some(d) = g.detail.as_ref().filter(|_| detail) {
                        // The face the ray meets on the deformed mesh; the world point on it
                        // (for the lifted mesh, from depth: the CPU pose does not know the lift).
                        assert_eq!(d.face as usize, w.triangle, "{at}: face");
                        let s = d.surface.expect("registered geometry");
                        assert!((s.world_point - w.point).length() <= 1e-3 * w.distance, "{at}: {:?} vs {:?}", s.world_point, w.point);
                        assert_eq!(s.face_normal_world.is_some(), w.object != 3, "{at}: normals but where a world-adjust hook moved the mesh");
                        detailed += 1;
                    }
                }
                let first = plain.pick(*pixel);
                // Through a hole: onto the tube's far wall, another object or nothing.
                let deeper = |f: &picking_vk_tests::oracle::OracleHit| want.hit.is_none_or(|w| w.distance > f.distance + 1e-3);
                through += usize::from(!first.ambiguous && first.hit.is_some_and(|h| striped(h.object) && deeper(&h)));
                agree += 1;
            }
            // Rectangles over the same draws, against the hooked ID image.
            let rect = PixelRect { min: UVec2::new(20, 16), max: UVec2::new(300, 224) };
            // GPU results of hooked, skinned and morphed draws say what the CPU results say.
            let set = [
                PickQuery::Point(pixels[0]),
                PickQuery::Point(pixels[1]),
                PickQuery::Radius { pixel: pixels[2], radius: 8, snap: Snap::Thin },
                PickQuery::Radius { pixel: pixels[3], radius: 5, snap: Snap::Nearest },
                PickQuery::Rect { rect, mode: RectMode::Visible },
            ];
            let (seen, cpu) = frame(&gpu, &mut with_results, &mut reader, &request, &set, &up.draws, &keys);
            gpu_results_found += assert_matches_cpu(&seen, &cpu, &keys, &format!("{name}, pose {seed}, GPU results")).1;
            let want = id_image_counts(&gpu, &mut image, &request, &up.draws, rect);
            let got = rect_counts(&gpu, &mut picker, &request, &up.draws, rect);
            assert_eq!(want.len(), objects.len(), "every object shows: {want:?}");
            assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>(), "{name}, pose {seed}");
            for (o, obj) in objects.iter().enumerate() {
                let (g, w) = (got[&obj.id], want[&obj.id]);
                // A fragment on a stripe's edge can go either way: the tile's shifted viewport
                // rounds the interpolated world point another way than the full view does.
                let slack = if striped(o) { 2 + w / 500 } else { 0 };
                assert!(g.abs_diff(w) <= slack, "{name}, pose {seed}, object {}: {g} pixels, the ID image {w}", obj.id);
            }
        }
        eprintln!(
            "hooked deformed, {name}: {agree} unambiguous picks agree with the oracle, {through} through a hole onto what lies behind it, {lifted} on the lifted object, {unhooked} on unhooked ones, {detailed} with detail checked"
        );
        assert!(agree > 400 && through > 20 && lifted > 60 && unhooked > 60, "{name}: {agree} / {through} / {lifted} / {unhooked}");
        assert!(!detail || detailed > 300, "{name}: detail checked on {detailed} hits");
    }
    assert!(gpu_results_found >= 12, "GPU results found {gpu_results_found} hits on the hooked, deformed draws");
    drop((picker, image, with_results, reader));
    gpu.assert_no_validation_messages();
}

fn obj_world(obj: &Deformed) -> DMat4 {
    obj.model.as_dmat4()
}

/// Per object, the pixels of `rect` the full-size ID image gives it.
fn id_image_counts(gpu: &Gpu, image: &mut IdImage, request: &PickRequest<'_>, draws: &[PickDraw], rect: PixelRect) -> BTreeMap<u64, u64> {
    // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
    gpu.run(|cmd| unsafe { image.record(cmd, request, draws, None, IdCopy::Whole) }.map(|_| ()).unwrap());
    // SAFETY: `run` waited.
    let texels = unsafe { image.read() }.unwrap();
    let mut counts = BTreeMap::new();
    for y in rect.min.y..rect.max.y {
        for x in rect.min.x..rect.max.x {
            if let Some(id) = picking_vk::ObjectId::from_words(texels[(y * W + x) as usize].id) {
                *counts.entry(id.get()).or_default() += 1;
            }
        }
    }
    counts
}

/// Per object, the pixels a `Visible` rectangle query over `rect` counts.
fn rect_counts(gpu: &Gpu, picker: &mut picking_vk::Picker, request: &PickRequest<'_>, draws: &[PickDraw], rect: PixelRect) -> BTreeMap<u64, u64> {
    let query = [PickQuery::Rect { rect, mode: RectMode::Visible }];
    // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
    gpu.run(|cmd| unsafe { picker.record(cmd, 0, request, &query, draws) }.map(|_| ()).unwrap());
    // SAFETY: `run` waited.
    let results = unsafe { picker.take_results(0) }.unwrap().unwrap();
    let QueryResult::Rect(r) = &results.results[0] else { panic!("a rectangle") };
    r.objects.iter().map(|o| (o.id.get(), o.pixels)).collect()
}

#[test]
fn rectangles_over_deformed_draws_count_what_the_id_image_shows() {
    let gpu = Gpu::new();
    let mut picker = gpu.picker(PickerConfig::default());
    let objects = objects();
    let (poses, weights) = random_pose(&objects, 9);
    let up = upload(&gpu.ctx, &objects, &poses, &weights, false, true);
    let (view, proj, vp) = look(Vec3::new(0.2, 0.3, -1.0), Vec3::new(0.0, -0.3, -6.0), W, H);
    let request = PickRequest::new(vp, view, proj);
    // SAFETY: the context's handles outlive the image.
    let mut image = unsafe { IdImage::new(gpu.ctx.host_device(), W, H) }.unwrap();
    let rect = PixelRect { min: UVec2::new(20, 16), max: UVec2::new(300, 224) };
    let want = id_image_counts(&gpu, &mut image, &request, &up.draws, rect);
    assert_eq!(rect_counts(&gpu, &mut picker, &request, &up.draws, rect), want);
    assert_eq!(want.len(), objects.len(), "every deformed object shows: {want:?}");
    drop((picker, image));
    gpu.assert_no_validation_messages();
}

/// 160 morphed meshes, each with its own vertex, index and delta buffers (160 combinations of
/// storage buffers, more than one pool of descriptor sets holds), and their weights at rising
/// offsets of one pose buffer, all in one rectangle: each shows, counted as the ID image
/// counts it, in two frames running.
#[test]
fn many_deformed_meshes_with_their_own_buffers_are_picked_in_one_frame() {
    let gpu = Gpu::new();
    let mut picker = gpu.picker(PickerConfig::default());
    let g = Mesh::grid(2, 0.12);
    let objects: Vec<Deformed> = (0..160)
        .map(|i| Deformed {
            id: 1 + i as u64,
            mesh: g.clone(),
            model: Mat4::from_translation(Vec3::new(-2.4 + 0.32 * (i % 16) as f32, -1.7 + 0.32 * (i / 16) as f32, -6.0)),
            skin: None,
            targets: morph_targets(&g, &[(0.05, 3.0)]),
            shares: None,
        })
        .collect();
    let (view, proj, vp) = look(Vec3::new(0.0, 0.0, 0.0), Vec3::new(0.0, -0.3, -6.0), W, H);
    let request = PickRequest::new(vp, view, proj);
    let rect = PixelRect { min: UVec2::new(20, 16), max: UVec2::new(300, 224) };
    // SAFETY: the context's handles outlive the image.
    let mut image = unsafe { IdImage::new(gpu.ctx.host_device(), W, H) }.unwrap();
    for seed in [4, 5] {
        let (poses, weights) = random_pose(&objects, seed);
        let up = upload(&gpu.ctx, &objects, &poses, &weights, false, false);
        let want = id_image_counts(&gpu, &mut image, &request, &up.draws, rect);
        assert!(want.len() > 100, "the rectangle covers most meshes: {}", want.len());
        assert_eq!(rect_counts(&gpu, &mut picker, &request, &up.draws, rect), want, "seed {seed}");
    }
    drop((picker, image));
    gpu.assert_no_validation_messages();
}

#[test]
fn deformations_that_do_not_fit_are_refused() {
    let gpu = Gpu::new();
    let mut picker = gpu.picker(PickerConfig::default());
    let objects = objects();
    let (poses, weights) = random_pose(&objects, 3);
    let up = upload(&gpu.ctx, &objects, &poses, &weights, true, false);
    let (view, proj, vp) = look(Vec3::new(0.2, 0.3, -1.0), Vec3::new(0.0, -0.3, -6.0), W, H);
    let pixel = UVec2::new(80, 60);
    let request = PickRequest::new(vp, view, proj);
    let mut refused = |draw: PickDraw, expect: &str| {
        let mut draws = up.draws.clone();
        draws[0] = draw;
        let mut err = None;
        // SAFETY: recording outside a render pass; an error records nothing.
        gpu.run(|cmd| err = unsafe { picker.record(cmd, 0, &request, &[PickQuery::Point(pixel)], &draws) }.err());
        match err {
            Some(PickError::InvalidDraw { index: 0, reason }) => assert!(reason.contains(expect), "{reason:?} should mention {expect:?}"),
            other => panic!("expected InvalidDraw mentioning {expect:?}, got {other:?}"),
        }
    };
    let base = up.draws[0].clone();
    let with = |f: &dyn Fn(&mut Deformation)| {
        let mut d = base.clone();
        f(d.deformation.as_mut().unwrap());
        d
    };
    refused(with(&|d| d.skin.as_mut().unwrap().joint_count = 7), "joint matrices need");
    refused(with(&|d| d.skin.as_mut().unwrap().joint_count = 0), "at least one joint");
    refused(with(&|d| d.skin.as_mut().unwrap().influences.weights.range.size = 40), "weights_0");
    refused(with(&|d| d.skin.as_mut().unwrap().influences.joints.stride = 2), "joints_0 stride");
    refused(with(&|d| d.skin.as_mut().unwrap().matrices.offset += 2), "not a multiple of 4");
    refused(
        with(&|d| {
            let skin = d.skin.as_mut().unwrap();
            skin.streams_in_storage = true;
            skin.influences.weights.range.size = 1 << 40;
        }),
        "maxStorageBufferRange",
    );
    refused(with(&|d| d.pose = Some(Arc::new(DeformPose { joint_matrices: vec![Mat4::IDENTITY], morph_weights: vec![] }))), "CPU pose has 1 joint");
    refused(with(&|d| *d = Deformation::default()), "neither a skin nor morph");
    refused(base.clone().with_instances(picking_vk::draw::Instances { range: up.draws[0].positions.range, stride: 64, first: 0, count: 1 }), "with instances");
    // A picker still picks after refusals.
    let ok = gpu.pick(&mut picker, &request, pixel, &up.draws);
    assert!(ok.ray.is_some());
    drop(picker);
    gpu.assert_no_validation_messages();
}
