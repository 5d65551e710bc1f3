//! GPU tests of the core picker on whatever Vulkan device exists (lavapipe in CI), with the
//! validation layer and synchronization validation on: any message fails the test.

use glam::{Mat4, UVec2, Vec3};
use picking_vk::error::Input;
use picking_vk::{request::Ignore, DepthConvention, ObjectId, PickError, PickFeatures, PickQuery, PickRequest, PickerConfig, Viewport};
use picking_vk_tests::harness::{look, Gpu};
use picking_vk_tests::scene::{Mesh, Object, Scene, VertexLayout};

const W: u32 = 64;
const H: u32 = 48;

fn id(raw: u64) -> ObjectId {
    ObjectId::new(raw).unwrap()
}

fn config(frames: usize) -> PickerConfig {
    PickerConfig::default().with_frames_in_flight(frames)
}

#[test]
fn single_mesh_hit_at_centre_with_analytic_distance() {
    let gpu = Gpu::new();
    // A finely tessellated unit sphere; the view centre looks at a vertex on its equator.
    let scene = Scene { meshes: vec![Mesh::sphere(48, 64)], objects: vec![Object::new(77, 0, Mat4::IDENTITY)] };
    let gs = scene.upload(&gpu.ctx);
    let (view, proj, vp) = look(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO, 65, 65);
    let mut picker = gpu.picker(config(1));
    let r = gpu.pick(&mut picker, &PickRequest::new(vp, view, proj), UVec2::new(32, 32), &gs.draws);
    let hit = r.hit.expect("the sphere is under the view centre");
    assert_eq!(hit.id, id(77));
    assert_eq!(hit.instance, None);
    assert!((hit.distance - 4.0).abs() / 4.0 < 0.01, "distance {} vs analytic 4.0", hit.distance);
    assert!((hit.world - glam::DVec3::new(0.0, 0.0, 1.0)).length() < 0.02, "world {:?}", hit.world);
    assert!(hit.depth > 0.0 && hit.depth < 1.0);
    let ray = r.ray.unwrap();
    assert!(ray.direction.dot(glam::DVec3::NEG_Z) > 0.999);
    drop((picker, gs));
    gpu.assert_no_validation_messages();
}

#[test]
fn background_miss_and_two_meshes_each_picked() {
    let gpu = Gpu::new();
    let scene = Scene {
        meshes: vec![Mesh::cuboid(Vec3::splat(0.5))],
        objects: vec![
            Object::new(1, 0, Mat4::from_translation(Vec3::new(-1.2, 0.0, 0.0))),
            Object::new(2, 0, Mat4::from_translation(Vec3::new(1.2, 0.0, 0.0))),
        ],
    };
    let gs = scene.upload(&gpu.ctx);
    let (view, proj, vp) = look(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO, W, H);
    let mut picker = gpu.picker(config(3));
    // Project the two centres to find their pixels.
    let to_pixel = |p: Vec3| {
        let c = proj * view * p.extend(1.0);
        UVec2::new(((c.x / c.w + 1.0) * 0.5 * W as f32) as u32, ((c.y / c.w + 1.0) * 0.5 * H as f32) as u32)
    };
    let pixels = [to_pixel(Vec3::new(-1.2, 0.0, 0.5)), to_pixel(Vec3::new(1.2, 0.0, 0.5)), UVec2::new(0, 0)];
    let results = gpu.pick_batch(&mut picker, &PickRequest::new(vp, view, proj), &pixels, &gs.draws);
    assert_eq!(results[0].id(), Some(id(1)));
    assert_eq!(results[1].id(), Some(id(2)));
    assert_eq!(results[2].hit, None, "corner pixel sees background");
    assert!(results[2].ray.is_some());
    assert_eq!(results.iter().map(|r| r.pixel).collect::<Vec<_>>(), pixels);
    drop((picker, gs));
    gpu.assert_no_validation_messages();
}

#[test]
fn nearer_of_two_overlapping_meshes_wins_in_either_draw_order() {
    let gpu = Gpu::new();
    let near = Object::new(10, 0, Mat4::from_translation(Vec3::new(0.0, 0.0, 1.0)));
    let far = Object::new(20, 0, Mat4::from_translation(Vec3::new(0.0, 0.0, -1.0)));
    for (objects, depth) in [
        (vec![near.clone(), far.clone()], DepthConvention::Standard),
        (vec![far.clone(), near.clone()], DepthConvention::Standard),
        (vec![far, near], DepthConvention::Reverse),
    ] {
        let scene = Scene { meshes: vec![Mesh::quad(2.0)], objects };
        let gs = scene.upload(&gpu.ctx);
        let (view, mut proj, vp) = look(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO, W, H);
        if depth == DepthConvention::Reverse {
            proj = glam::camera::rh::proj::vulkan::perspective_infinite_reverse(0.9, W as f32 / H as f32, 0.1);
        }
        let mut picker = gpu.picker(config(1));
        let r = gpu.pick(&mut picker, &PickRequest::new(vp, view, proj), UVec2::new(W / 2, H / 2), &gs.draws);
        let hit = r.hit.unwrap();
        assert_eq!(hit.id, id(10), "{depth:?}");
        assert!((hit.world.z - 1.0).abs() < 1e-3, "{depth:?}: world {:?}", hit.world);
        assert!((hit.distance - 4.0).abs() < 0.04, "{depth:?}: distance {}", hit.distance);
    }
    gpu.assert_no_validation_messages();
}

fn instanced_field() -> Scene {
    // 4 x 3 instances of a small box, spaced 1.0 apart, under one object ID with a model offset.
    let instances =
        (0..12).map(|i| Mat4::from_translation(Vec3::new((i % 4) as f32 - 1.5, (i / 4) as f32 - 1.0, 0.0)) * Mat4::from_scale(Vec3::splat(0.35))).collect();
    let mut field = Object::new(u64::MAX - 5, 0, Mat4::from_translation(Vec3::new(0.0, 0.0, -0.5)));
    field.instances = Some(instances);
    let backdrop = Object::new(999, 1, Mat4::from_translation(Vec3::new(0.0, 0.0, -3.0)));
    Scene { meshes: vec![Mesh::cuboid(Vec3::ONE), Mesh::quad(20.0)], objects: vec![field, backdrop] }
}

fn instance_pixel(i: usize, view: Mat4, proj: Mat4) -> UVec2 {
    let p = Vec3::new((i % 4) as f32 - 1.5, (i / 4) as f32 - 1.0, -0.5 + 0.35);
    let c = proj * view * p.extend(1.0);
    UVec2::new(((c.x / c.w + 1.0) * 0.5 * 160.0) as u32, ((c.y / c.w + 1.0) * 0.5 * 120.0) as u32)
}

#[test]
fn instanced_mesh_returns_each_instance() {
    let gpu = Gpu::new();
    let gs = instanced_field().upload(&gpu.ctx);
    let (view, proj, vp) = look(Vec3::new(0.0, 0.0, 6.0), Vec3::ZERO, 160, 120);
    let mut picker = gpu.picker(config(12));
    let pixels: Vec<_> = (0..12).map(|i| instance_pixel(i, view, proj)).collect();
    let results = gpu.pick_batch(&mut picker, &PickRequest::new(vp, view, proj), &pixels, &gs.draws);
    for (i, r) in results.iter().enumerate() {
        let hit = r.hit.as_ref().unwrap_or_else(|| panic!("instance {i} missed"));
        assert_eq!((hit.id, hit.instance), (id(u64::MAX - 5), Some(i as u32)), "instance {i}");
    }
    drop((picker, gs));
    gpu.assert_no_validation_messages();
}

#[test]
fn ids_near_u64_max_survive() {
    let gpu = Gpu::new();
    let ids = [u64::MAX, u64::MAX - 1, 1 << 63, (1 << 32) + 1, 0xFFFF_FFFF];
    let objects = ids.iter().enumerate().map(|(k, &raw)| Object::new(raw, 0, Mat4::from_translation(Vec3::new(k as f32 * 1.0 - 2.0, 0.0, 0.0)))).collect();
    let gs = Scene { meshes: vec![Mesh::cuboid(Vec3::splat(0.4))], objects }.upload(&gpu.ctx);
    let (view, proj, vp) = look(Vec3::new(0.0, 0.0, 6.0), Vec3::ZERO, 160, 120);
    let mut picker = gpu.picker(config(ids.len()));
    let pixels: Vec<_> = (0..ids.len())
        .map(|k| {
            let c = proj * view * Vec3::new(k as f32 - 2.0, 0.0, 0.4).extend(1.0);
            UVec2::new(((c.x / c.w + 1.0) * 80.0) as u32, ((c.y / c.w + 1.0) * 60.0) as u32)
        })
        .collect();
    let got: Vec<u64> = gpu.pick_batch(&mut picker, &PickRequest::new(vp, view, proj), &pixels, &gs.draws).iter().map(|r| r.id().unwrap().get()).collect();
    assert_eq!(got, ids);
    drop((picker, gs));
    gpu.assert_no_validation_messages();
}

#[test]
fn filter_and_ignore_select_the_surface_behind() {
    let gpu = Gpu::new();
    let gs = instanced_field().upload(&gpu.ctx);
    let (view, proj, vp) = look(Vec3::new(0.0, 0.0, 6.0), Vec3::ZERO, 160, 120);
    let mut picker = gpu.picker(config(1));
    let field = id(u64::MAX - 5);
    let backdrop = id(999);
    let request = PickRequest::new(vp, view, proj);
    let at = |i: usize| instance_pixel(i, view, proj);
    let pick = |picker: &mut picking_vk::Picker, r: PickRequest<'_>, i: usize| {
        let hit = gpu.pick(picker, &r, at(i), &gs.draws).hit.unwrap();
        (hit.id, hit.instance)
    };
    assert_eq!(pick(&mut picker, request, 5), (field, Some(5)));
    let only_backdrop = |o: ObjectId| o == backdrop;
    assert_eq!(pick(&mut picker, request.with_filter(&only_backdrop), 5), (backdrop, None), "filter");
    let whole = [Ignore::Object(field)];
    assert_eq!(pick(&mut picker, request.with_ignore(&whole), 5), (backdrop, None), "ignore whole object");
    let one = [Ignore::instance(field, 5)];
    assert_eq!(pick(&mut picker, request.with_ignore(&one), 5), (backdrop, None), "ignore one instance");
    assert_eq!(pick(&mut picker, request.with_ignore(&one), 4), (field, Some(4)), "neighbour still picks");
    assert_eq!(pick(&mut picker, request.with_ignore(&one), 6), (field, Some(6)), "neighbour still picks");
    let range = [Ignore::Instances { id: field, start: 2, count: 7 }];
    for i in 0..12 {
        let expect = if (2..9).contains(&i) { (backdrop, None) } else { (field, Some(i as u32)) };
        assert_eq!(pick(&mut picker, request.with_ignore(&range), i), expect, "range, instance {i}");
    }
    // Non-pickable draws neither hit nor occlude.
    let mut draws = gs.draws.clone();
    draws[0].pickable = false;
    assert_eq!(gpu.pick(&mut picker, &request, at(3), &draws).id(), Some(backdrop));
    drop((picker, gs));
    gpu.assert_no_validation_messages();
}

#[test]
fn border_pixels_hit_and_outside_pixels_are_refused() {
    let gpu = Gpu::new();
    // A quad much larger than the view covers every pixel; the view is a sub-rectangle of a
    // larger framebuffer (a side panel to its left, a toolbar above).
    let gs = Scene { meshes: vec![Mesh::quad(50.0)], objects: vec![Object::new(5, 0, Mat4::IDENTITY)] }.upload(&gpu.ctx);
    let (view, proj, _) = look(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO, W, H);
    let vp = Viewport { x: 30.0, y: 12.0, width: W as f32, height: H as f32, min_depth: 0.0, max_depth: 1.0 };
    let (x0, y0, x1, y1) = (30, 12, 30 + W - 1, 12 + H - 1);
    let border = [(x0, y0), (x1, y0), (x0, y1), (x1, y1), (x0, (y0 + y1) / 2), (x1, (y0 + y1) / 2), ((x0 + x1) / 2, y0), ((x0 + x1) / 2, y1)];
    let mut picker = gpu.picker(config(border.len()));
    let request = PickRequest::new(vp, view, proj);
    let pixels: Vec<_> = border.iter().map(|&(x, y)| UVec2::new(x, y)).collect();
    let results = gpu.pick_batch(&mut picker, &request, &pixels, &gs.draws);
    for (r, &(x, y)) in results.iter().zip(&border) {
        assert_eq!(r.id(), Some(id(5)), "border pixel ({x}, {y})");
        // The world point lies on the quad (z = 0) along that pixel's own ray.
        let hit = r.hit.as_ref().unwrap();
        assert!(hit.world.z.abs() < 1e-3, "({x}, {y}): {:?}", hit.world);
    }
    for (x, y) in [(x0 - 1, y0), (x1 + 1, y0), (x0, y0 - 1), (x0, y1 + 1), (0, 0)] {
        // SAFETY: recording outside a render pass; buffers outlive the wait.
        let err = gpu.ctx.run_once(|cmd| unsafe { picker.record(cmd, 0, &request, &[PickQuery::Point(UVec2::new(x, y))], &gs.draws) }).unwrap();
        assert!(matches!(err, Err(PickError::OutsideView { .. })), "({x}, {y}): {err:?}");
    }
    assert!(!picker.is_pending(0), "a refused request leaves nothing pending");
    drop((picker, gs));
    gpu.assert_no_validation_messages();
}

#[test]
fn mutating_the_scene_after_recording_does_not_remap_a_pending_result() {
    let gpu = Gpu::new();
    let gs = instanced_field().upload(&gpu.ctx);
    let (view, proj, vp) = look(Vec3::new(0.0, 0.0, 6.0), Vec3::ZERO, 160, 120);
    let mut picker = gpu.picker(config(2));
    let mut draws = gs.draws.clone();
    let request = PickRequest::new(vp, view, proj);
    let queries = [PickQuery::Point(instance_pixel(7, view, proj))];
    gpu.run(|cmd| {
        // SAFETY: recording outside a render pass; buffers outlive the wait.
        unsafe { picker.record(cmd, 0, &request, &queries, &draws) }.unwrap();
        // The host now reorders, renumbers and removes objects and records the next frame
        // before the first one resolved.
        draws.reverse();
        draws[1].id = id(4242);
        draws.remove(0);
        // SAFETY: as above.
        unsafe { picker.record(cmd, 1, &request, &queries, &draws) }.unwrap();
    });
    // SAFETY: `run` waited for completion.
    let first = unsafe { picker.take_results(0) }.unwrap().unwrap().pick(0).unwrap().clone();
    // SAFETY: as above.
    let second = unsafe { picker.take_results(1) }.unwrap().unwrap().pick(0).unwrap().clone();
    let hit = first.hit.unwrap();
    assert_eq!((hit.id, hit.instance), (id(u64::MAX - 5), Some(7)));
    assert_eq!(second.id(), Some(id(4242)), "the next frame sees the new scene");
    assert_eq!(second.frame, first.frame + 1);
    drop((picker, gs));
    gpu.assert_no_validation_messages();
}

#[test]
fn several_frames_in_flight_each_return_their_own_result() {
    use ash::vk;
    let gpu = Gpu::new();
    let gs = instanced_field().upload(&gpu.ctx);
    let (view, proj, vp) = look(Vec3::new(0.0, 0.0, 6.0), Vec3::ZERO, 160, 120);
    let frames = 3;
    let mut picker = gpu.picker(config(frames));
    let d = &gpu.ctx.device;
    let request = PickRequest::new(vp, view, proj);
    let cmds = gpu.ctx.command_buffers(frames as u32).unwrap();
    // SAFETY: test-local fences, destroyed below after the device idles.
    let fences: Vec<vk::Fence> = (0..frames).map(|_| unsafe { d.create_fence(&vk::FenceCreateInfo::default(), None) }.unwrap()).collect();
    // Two rounds over the slots, as a host's frame loop would: each frame's result is taken
    // when that slot comes round again, after waiting on its fence.
    let mut seen = vec![];
    for frame in 0..2 * frames {
        let slot = frame % frames;
        if frame >= frames {
            // SAFETY: the fence belongs to this slot's last submission; waiting on it, then
            // taking, is the host's normal frame loop.
            unsafe { d.wait_for_fences(&[fences[slot]], true, u64::MAX) }.unwrap();
            // SAFETY: the wait above: the slot's frame completed.
            let r = unsafe { picker.take_results(slot) }.unwrap().expect("signalled fence resolves");
            seen.push(r.pick(0).unwrap().clone());
            // SAFETY: the fence is signalled and no longer waited on.
            unsafe { d.reset_fences(&[fences[slot]]) }.unwrap();
        }
        let instance = (frame * 5) % 12;
        // SAFETY: the slot's command buffer is idle (its fence was waited or never used);
        // everything recorded outlives the submission.
        unsafe {
            d.begin_command_buffer(cmds[slot], &vk::CommandBufferBeginInfo::default()).unwrap();
            picker.record(cmds[slot], slot, &request, &[PickQuery::Point(instance_pixel(instance, view, proj))], &gs.draws).unwrap();
            d.end_command_buffer(cmds[slot]).unwrap();
            let submit = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&cmds[slot]));
            d.queue_submit(gpu.ctx.queue, &[submit], fences[slot]).unwrap();
        }
    }
    // SAFETY: live fences of this device.
    unsafe { d.wait_for_fences(&fences, true, u64::MAX) }.unwrap();
    // SAFETY: every fence signalled, so every slot's frame completed.
    let remaining: Vec<_> = (0..frames).map(|slot| unsafe { picker.take_results(slot) }.unwrap().unwrap().pick(0).unwrap().clone()).collect();
    seen.extend(remaining);
    for (frame, r) in seen.iter().enumerate() {
        let instance = (frame * 5) % 12;
        assert_eq!(r.frame, frame as u64);
        assert_eq!(r.hit.as_ref().unwrap().instance, Some(instance as u32), "frame {frame}");
    }
    gpu.ctx.wait_idle().unwrap();
    // SAFETY: the device is idle.
    unsafe {
        for f in fences {
            d.destroy_fence(f, None);
        }
    }
    drop((picker, gs, cmds));
    gpu.assert_no_validation_messages();
}

#[test]
fn bad_input_is_refused_and_records_nothing() {
    let gpu = Gpu::new();
    let scene = Scene { meshes: vec![Mesh::cuboid(Vec3::splat(0.5))], objects: vec![Object::new(3, 0, Mat4::IDENTITY)] };
    let gs = scene.upload(&gpu.ctx);
    let (view, proj, vp) = look(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO, W, H);
    let mut picker = gpu.picker(config(2));
    let good = PickRequest::new(vp, view, proj);
    let centre = [PickQuery::Point(UVec2::new(W / 2, H / 2))];
    assert!(matches!(ObjectId::new(0), Err(PickError::ZeroId)));

    let mut nan_model = gs.draws.clone();
    nan_model[0].model = Mat4::from_cols_array(&[f32::NAN; 16]);
    let mut too_many = gs.draws.clone();
    if let picking_vk::draw::Triangles::Indexed { index_count, .. } = &mut too_many[0].triangles {
        *index_count += 3;
    }
    let nan_view = PickRequest::new(vp, Mat4::from_cols_array(&[f32::NAN; 16]), proj);
    let singular = PickRequest::new(vp, Mat4::ZERO, proj);
    let empty_view = PickRequest::new(Viewport::full(0, 0), view, proj);
    let one = [PickQuery::Point(UVec2::new(1, 1))];
    let origin = [PickQuery::Point(UVec2::new(0, 0))];
    let outcomes = gpu
        .ctx
        .run_once(|cmd| {
            // SAFETY: recording outside a render pass; buffers outlive the wait.
            unsafe {
                let errors = [
                    picker.record(cmd, 0, &good, &centre, &nan_model).err(),
                    picker.record(cmd, 0, &good, &centre, &too_many).err(),
                    picker.record(cmd, 0, &nan_view, &one, &gs.draws).err(),
                    picker.record(cmd, 0, &singular, &one, &gs.draws).err(),
                    picker.record(cmd, 0, &empty_view, &origin, &gs.draws).err(),
                    picker.record(cmd, 5, &good, &centre, &gs.draws).err(),
                ];
                // The command buffer is still usable after the refusals.
                picker.record(cmd, 1, &good, &centre, &gs.draws).unwrap();
                errors
            }
        })
        .unwrap();
    let messages: Vec<String> = outcomes.iter().map(|e| e.as_ref().map(ToString::to_string).unwrap_or_default()).collect();
    assert!(matches!(outcomes[0], Some(PickError::InvalidDraw { index: 0, .. })), "{messages:?}");
    assert!(matches!(outcomes[1], Some(PickError::InvalidDraw { index: 0, .. })), "{messages:?}");
    assert!(matches!(outcomes[2], Some(PickError::InvalidInput { input: Input::Camera, .. })), "{messages:?}");
    assert!(matches!(outcomes[3], Some(PickError::InvalidInput { input: Input::Camera, .. })), "{messages:?}");
    assert!(matches!(outcomes[4], Some(PickError::InvalidInput { input: Input::Viewport, .. })), "{messages:?}");
    assert!(matches!(outcomes[5], Some(PickError::InvalidSlot { slot: 5, frames_in_flight: 2 })), "{messages:?}");
    assert!(!picker.is_pending(0));
    // SAFETY: `run_once` waited.
    assert_eq!(unsafe { picker.take_results(1) }.unwrap().unwrap().pick(0).unwrap().id(), Some(id(3)));
    eprintln!("refusals: {messages:#?}");
    drop((picker, gs));
    gpu.assert_no_validation_messages();
}

#[test]
fn interleaved_positions_and_u16_indices_pick_like_tight_ones() {
    let gpu = Gpu::new();
    let mut a = Object::new(1, 0, Mat4::from_translation(Vec3::new(-1.0, 0.0, 0.0)));
    a.layout = VertexLayout::Interleaved { stride: 28, offset: 16 };
    a.index_width = picking_vk::draw::IndexWidth::U16;
    let b = Object::new(2, 0, Mat4::from_translation(Vec3::new(1.0, 0.0, 0.0)));
    let gs = Scene { meshes: vec![Mesh::sphere(10, 14)], objects: vec![a, b] }.upload(&gpu.ctx);
    let (view, proj, vp) = look(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO, 160, 120);
    let mut picker = gpu.picker(config(2));
    let pixel = |x: f32| {
        let c = proj * view * Vec3::new(x, 0.0, 0.9).extend(1.0);
        UVec2::new(((c.x / c.w + 1.0) * 80.0) as u32, 60)
    };
    let r = gpu.pick_batch(&mut picker, &PickRequest::new(vp, view, proj), &[pixel(-1.0), pixel(1.0)], &gs.draws);
    assert_eq!(r[0].id(), Some(id(1)));
    assert_eq!(r[1].id(), Some(id(2)));
    // Mirror images: same distance.
    let (d0, d1) = (r[0].hit.as_ref().unwrap().distance, r[1].hit.as_ref().unwrap().distance);
    assert!((d0 - d1).abs() < 0.02, "{d0} vs {d1}");
    drop((picker, gs));
    gpu.assert_no_validation_messages();
}

#[test]
fn pick_memory_does_not_grow_with_the_view() {
    let gpu = Gpu::new();
    let gs = Scene { meshes: vec![Mesh::quad(50.0)], objects: vec![Object::new(9, 0, Mat4::IDENTITY)] }.upload(&gpu.ctx);
    let mut picker = gpu.picker(config(3));
    let before = picker.memory();
    let mut hits = vec![];
    for (w, h) in [(1, 1), (1920, 1080), (3840, 2160)] {
        let (view, proj, vp) = look(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO, w, h);
        let r = gpu.pick(&mut picker, &PickRequest::new(vp, view, proj), UVec2::new(w - 1, h - 1), &gs.draws);
        hits.push(r.id());
        assert_eq!(picker.memory(), before, "memory after a {w}x{h} pick");
    }
    assert_eq!(hits, vec![Some(id(9)); 3]);
    // SAFETY: the context outlives the image.
    let full = unsafe { picking_vk::debug::IdImage::new(gpu.ctx.host_device(), 3840, 2160) }.unwrap();
    eprintln!(
        "pick memory: attachments {} B + staging {} B = {} B at 1x1, 1920x1080 and 3840x2160 (3 frames in flight), GPU planner {} B; a full-size 3840x2160 ID target needs {} B",
        before.attachments,
        before.staging,
        before.total(),
        before.planner,
        full.attachment_bytes()
    );
    // The GPU planner's buffers are sized by its own configuration (checked in gpu_planning.rs).
    assert!(before.total() - before.planner < full.attachment_bytes() / 100);
    drop((picker, gs, full));
    gpu.assert_no_validation_messages();
}

#[test]
fn detail_gate_matches_the_device() {
    let gpu = Gpu::new();
    let picker = gpu.picker(config(1).with_detail(picking_vk::DetailMode::IfEnabled));
    let support = &gpu.ctx.picking_support;
    let enabled = gpu.ctx.picking_features.contains(PickFeatures::DETAIL);
    match picker.detail_status() {
        picking_vk::config::DetailStatus::Active => {
            assert!(support.offered().contains(PickFeatures::DETAIL) && enabled);
        }
        picking_vk::config::DetailStatus::Unavailable { missing } => {
            assert!(!enabled, "the context enabled nothing it lacked");
            assert_eq!(missing, &support.missing(PickFeatures::DETAIL), "the picker names every gap");
            assert!(!missing.is_empty());
            let words: Vec<String> = missing.iter().map(ToString::to_string).collect();
            eprintln!("detail picking inactive on {}: {}", gpu.ctx.device_name, words.join("; "));
        }
        other => panic!("unexpected {other:?}"),
    }
    let basic = gpu.picker(config(1));
    assert_eq!(basic.detail_status(), &picking_vk::config::DetailStatus::NotRequested);
    assert!(basic.memory().attachments <= picker.memory().attachments);
    drop((picker, basic));
    gpu.assert_no_validation_messages();
}

#[test]
fn a_host_claim_the_device_cannot_meet_is_a_typed_error() {
    let gpu = Gpu::new();
    let support = &gpu.ctx.picking_support;
    let detail_offered = support.offered().contains(PickFeatures::DETAIL);
    // Claiming every feature: fine where the device offers them all, else refused by name.
    let all = gpu.ctx.host_device().with_features(PickFeatures::ALL);
    // SAFETY: the context's handles belong together; a refused picker creates nothing.
    let claimed = unsafe { picking_vk::Picker::new(all, config(1)) };
    // Requiring detail from a host that did not enable it is refused as well.
    let plain = gpu.ctx.host_device().with_features(PickFeatures::NONE);
    // SAFETY: as above.
    let required = unsafe { picking_vk::Picker::new(plain, config(1).with_detail(picking_vk::DetailMode::Required)) };
    match (detail_offered, claimed) {
        (true, Ok(picker)) => drop(picker),
        (false, Err(PickError::Unsupported { missing })) => {
            // What the device lacks, then the core features it offers but the context did not
            // enable (it enables what it uses).
            let mut expected = support.missing(PickFeatures::ALL);
            let core = &gpu.ctx.enabled_core;
            let needs = [
                ("multiDrawIndirect", core.multi_draw_indirect),
                ("drawIndirectFirstInstance", core.draw_indirect_first_instance),
                ("geometryShader (for gl_PrimitiveID)", core.geometry_shader),
                ("fragmentStoresAndAtomics", core.fragment_stores_and_atomics),
                ("wideLines", core.wide_lines),
                ("largePoints", core.large_points),
            ];
            for (name, _) in needs.iter().filter(|(_, on)| *on != ash::vk::TRUE) {
                if !expected.contains(&picking_vk::error::Requirement::Feature(name)) {
                    expected.push(picking_vk::error::Requirement::Feature(name));
                }
            }
            assert_eq!(missing, expected, "every unmet requirement is named");
            assert!(missing.contains(&picking_vk::error::Requirement::Extension(ash::khr::fragment_shader_barycentric::NAME)), "{missing:?}");
        }
        (offered, other) => panic!("detail offered {offered}: unexpected {:?}", other.map(|_| ())),
    }
    match required {
        Err(PickError::Unsupported { missing }) => {
            assert!(missing.contains(&picking_vk::error::Requirement::Feature("fragmentShaderBarycentric")), "{missing:?}")
        }
        other => panic!("expected a refusal, got {:?}", other.map(|_| ())),
    }
    gpu.assert_no_validation_messages();
}

#[test]
fn one_pick_per_slot_an_aborted_frame_is_caught_by_its_stamp_and_cancel_frees_a_slot() {
    let gpu = Gpu::new();
    let scene = Scene { meshes: vec![Mesh::quad(2.0)], objects: vec![Object::new(5, 0, Mat4::IDENTITY)] };
    let gs = scene.upload(&gpu.ctx);
    let (view, proj, vp) = look(Vec3::new(0.0, 0.0, 5.0), Vec3::ZERO, W, H);
    let request = PickRequest::new(vp, view, proj);
    let centre = UVec2::new(W / 2, H / 2);
    let mut picker = gpu.picker(config(1));
    // Frame 0 completes normally.
    assert_eq!(gpu.pick(&mut picker, &request, centre, &gs.draws).id(), Some(id(5)));

    // Frame 1 is recorded, then a second record into the same slot (hover and click in one
    // command buffer) is refused: it would rewrite what frame 1's GPU work reads.
    let cmds = gpu.ctx.command_buffers(1).unwrap();
    let d = &gpu.ctx.device;
    // SAFETY: a fresh command buffer of this device, never submitted: the frame is aborted.
    unsafe { d.begin_command_buffer(cmds[0], &ash::vk::CommandBufferBeginInfo::default()) }.unwrap();
    // SAFETY: `cmds[0]` is recording outside a render pass; the draws outlive it.
    let ticket = unsafe { picker.record(cmds[0], 0, &request, &[PickQuery::Point(centre)], &gs.draws) }.unwrap();
    assert_eq!(ticket.frame, 1);
    // SAFETY: as above.
    let again = unsafe { picker.record(cmds[0], 0, &request, &[PickQuery::Point(centre)], &gs.draws) };
    assert!(matches!(again, Err(PickError::SlotPending { slot: 0, frame: 1 })), "{again:?}");
    // SAFETY: as above.
    unsafe { d.end_command_buffer(cmds[0]) }.unwrap();

    // The host drops the command buffer and takes the slot's result anyway: the texels carry
    // frame 0's stamp, so nothing is reported from them and the slot is free again.
    // SAFETY: the command buffer will never be submitted.
    let stale = unsafe { picker.take_results(0) };
    assert!(matches!(stale, Err(PickError::StaleResult { slot: 0, expected: 1, found: Some(0) })), "{stale:?}");
    assert!(!picker.is_pending(0));

    // An aborted frame can also be cancelled explicitly.
    // SAFETY: as above.
    unsafe {
        d.reset_command_buffer(cmds[0], ash::vk::CommandBufferResetFlags::empty()).unwrap();
        d.begin_command_buffer(cmds[0], &ash::vk::CommandBufferBeginInfo::default()).unwrap();
        picker.record(cmds[0], 0, &request, &[PickQuery::Point(centre)], &gs.draws).unwrap();
        d.end_command_buffer(cmds[0]).unwrap();
    }
    assert!(picker.cancel(0).unwrap());
    assert!(!picker.cancel(0).unwrap(), "nothing left to cancel");
    assert!(matches!(picker.cancel(3), Err(PickError::InvalidSlot { slot: 3, .. })));

    // The next frame completes and resolves with its own stamp.
    let r = gpu.pick(&mut picker, &request, centre, &gs.draws);
    assert_eq!((r.id(), r.frame), (Some(id(5)), 3));
    drop((picker, gs, cmds));
    gpu.assert_no_validation_messages();
}
