//! The host contract as an engine meets it: its own viewport (y-flipped), its own depth
//! convention (read off the projection, a contradicting statement refused), and its own
//! draw indices and tags reported back whatever was culled; stages its device lacks refused.

use glam::{Mat4, UVec2};
use picking_vk::{DepthConvention, PickError, PickQuery, PickRequest, PickerConfig, Viewport};
use picking_vk_tests::harness::{random_pixels, random_scene_camera, Gpu};
use picking_vk_tests::scene::Scene;

const W: u32 = 160;
const H: u32 = 120;
const BATCH: usize = 64;

#[test]
fn a_y_flipped_viewport_picks_what_the_host_shows() {
    let gpu = Gpu::new();
    let mut picker = gpu.picker(PickerConfig::default().with_frames_in_flight(BATCH));
    let (mut compared, mut same, mut hits) = (0, 0, 0);
    for (seed, depth) in [(31, DepthConvention::Standard), (32, DepthConvention::Reverse)] {
        let gs = Scene::random(seed).upload(&gpu.ctx);
        let (view, proj) = random_scene_camera(depth, W, H);
        // The usual GL-style host: projection with y up, viewport flipped back with a
        // negative height. It shows exactly what the plain Vulkan setup shows.
        let y_up = Mat4::from_scale(glam::Vec3::new(1.0, -1.0, 1.0)) * proj;
        let flipped = Viewport { y: H as f32, height: -(H as f32), ..Viewport::full(W, H) };
        let pixels = random_pixels(seed, BATCH, W, H);
        let plain = PickRequest::new(Viewport::full(W, H), view, proj);
        let host = PickRequest::new(flipped, view, y_up);
        let a = gpu.pick_batch(&mut picker, &plain, &pixels, &gs.draws);
        let b = gpu.pick_batch(&mut picker, &host, &pixels, &gs.draws);
        for ((ra, rb), p) in a.iter().zip(&b).zip(&pixels) {
            compared += 1;
            hits += usize::from(ra.hit.is_some());
            if ra.id() == rb.id() {
                same += 1;
                if let (Some(ha), Some(hb)) = (&ra.hit, &rb.hit) {
                    assert!((ha.depth - hb.depth).abs() < 1e-5, "pixel {p}: depth {} vs {}", ha.depth, hb.depth);
                    assert!((ha.world - hb.world).length() < 1e-3 * ha.distance, "pixel {p}: {:?} vs {:?}", ha.world, hb.world);
                }
            }
        }
    }
    eprintln!("y-flipped viewport: {same}/{compared} pixels name the same object ({hits} hits)");
    // A mirrored pick agrees on about half the pixels; rasterization rounding may move a few edges.
    assert!(same * 100 >= compared * 98, "{same}/{compared}");
    assert!(hits * 5 > compared, "{hits} hits of {compared}: the scenes cover enough of the view");
    drop(picker);
    gpu.assert_no_validation_messages();
}

#[test]
fn the_depth_convention_is_read_off_the_projection_and_a_contradiction_is_refused() {
    let gpu = Gpu::new();
    let gs = Scene::random(33).upload(&gpu.ctx);
    let mut picker = gpu.picker(PickerConfig::default().with_frames_in_flight(2));
    let (view, reverse) = random_scene_camera(DepthConvention::Reverse, W, H);
    let pixel = UVec2::new(W / 2, H / 2);
    let request = PickRequest::new(Viewport::full(W, H), view, reverse);
    let inferred = gpu.pick(&mut picker, &request, pixel, &gs.draws);
    let stated = gpu.pick(&mut picker, &request.with_depth(DepthConvention::Reverse), pixel, &gs.draws);
    assert!(inferred.hit.is_some(), "the centre of the random scene is covered");
    assert_eq!(inferred.hit, stated.hit);
    let mut refused = None;
    gpu.run(|cmd| {
        // SAFETY: recording outside a render pass; a refused request records nothing.
        refused = Some(unsafe { picker.record(cmd, 0, &request.with_depth(DepthConvention::Standard), &[PickQuery::Point(pixel)], &gs.draws) });
    });
    match refused {
        Some(Err(PickError::InvalidInput { input: picking_vk::error::Input::Camera, reason: why })) => {
            assert!(why.contains("Standard") && why.contains("Reverse"), "{why}")
        }
        other => panic!("expected a refusal, got {:?}", other.map(|r| r.map(|_| ()))),
    }
    assert!(!picker.is_pending(0), "a refused request records nothing");
    drop(picker);
    gpu.assert_no_validation_messages();
}

#[test]
fn hits_report_the_hosts_draw_index_and_tag_whatever_was_culled() {
    let gpu = Gpu::new();
    let mut gs = Scene::random(34).upload(&gpu.ctx);
    for (i, draw) in gs.draws.iter_mut().enumerate() {
        draw.tag = 1000 + 7 * i as u64;
    }
    let (view, proj) = random_scene_camera(DepthConvention::Standard, W, H);
    let pixels = random_pixels(34, BATCH, W, H);
    let request = PickRequest::new(Viewport::full(W, H), view, proj);
    let mut culled = gpu.picker(PickerConfig::default().with_frames_in_flight(BATCH).with_culling(true));
    let mut hits = 0;
    let mut culled_draws = 0;
    for r in gpu.pick_batch(&mut culled, &request, &pixels, &gs.draws) {
        culled_draws += r.stats.pass.draws_culled;
        let Some(hit) = r.hit else { continue };
        hits += 1;
        let draw = &gs.draws[hit.draw_index as usize];
        assert_eq!((draw.id, draw.tag), (hit.id, hit.tag), "the hit names the host's own draw");
    }
    assert!(hits > 10 && culled_draws > 0, "{hits} hits, {culled_draws} draws culled");
    drop(culled);
    gpu.assert_no_validation_messages();
}

/// Finding 5 of the soundness review: a host whose device chain holds a structure promoted to
/// Vulkan 1.2 (timeline semaphores, as engines commonly chain) gets picking's features, the
/// indirect count among them, chained beside it; the device is created and picks under
/// validation without VUID-VkDeviceCreateInfo-pNext-02830.
#[test]
fn picking_features_chain_beside_a_hosts_promoted_vulkan12_structure() {
    let gpu = Gpu::with_options(|o| o.timeline_semaphores = true);
    assert!(gpu.ctx.picking_support.offered().contains(picking_vk::PickFeatures::INDIRECT_COUNT), "the device offers the indirect count");
    assert!(gpu.ctx.picking_features.contains(picking_vk::PickFeatures::INDIRECT_COUNT), "enabled: {:?}", gpu.ctx.picking_features);
    let mut picker = gpu.picker(PickerConfig::default());
    let gs = Scene::random(35).upload(&gpu.ctx);
    let (view, proj) = random_scene_camera(DepthConvention::Standard, W, H);
    let request = PickRequest::new(Viewport::full(W, H), view, proj);
    let hits = random_pixels(35, 32, W, H).into_iter().filter(|&p| gpu.pick(&mut picker, &request, p, &gs.draws).hit.is_some()).count();
    assert!(hits > 0, "the device picks");
    drop((picker, gs));
    gpu.assert_no_validation_messages();
}

/// Finding 3 of the soundness review: a host that writes the buffers a pick reads earlier in
/// the same command buffer (here `vkCmdUpdateBuffer` into the vertex buffer, as a GPU-driven
/// host's culling or skinning would) and again after it. Without `with_host_writes`,
/// synchronization validation reports the hazard the host left unordered; with it, the
/// picker's barriers order both writes, the pass sees the written vertices, and nothing is
/// reported.
#[test]
fn host_writes_before_and_after_a_pick_are_ordered_by_the_pickers_barriers() {
    use ash::vk;
    let gpu = Gpu::new();
    let mut picker = gpu.picker(PickerConfig::default());
    // Two triangles covering the view at z = -2 (the buffer starts zeroed: nothing to hit).
    let quad: [[f32; 3]; 6] = [[-5.0, -5.0, -2.0], [5.0, -5.0, -2.0], [5.0, 5.0, -2.0], [-5.0, -5.0, -2.0], [5.0, 5.0, -2.0], [-5.0, 5.0, -2.0]];
    let bytes: Vec<u8> = quad.iter().flatten().flat_map(|f| f.to_ne_bytes()).collect();
    let vb = gpu.ctx.host_buffer(bytes.len() as u64, vk::BufferUsageFlags::VERTEX_BUFFER | vk::BufferUsageFlags::TRANSFER_DST).expect("buffer");
    let positions =
        picking_vk::draw::Positions { range: picking_vk::draw::BufferRange { buffer: vb.buffer, offset: 0, size: vb.size }, stride: 12, vertex_count: 6 };
    let draw = picking_vk::PickDraw::new(
        picking_vk::ObjectId::new(9).unwrap(),
        positions,
        picking_vk::draw::Triangles::NonIndexed { first_vertex: 0, vertex_count: 6 },
    );
    let draws = [draw];
    let (view, proj, _) = picking_vk_tests::harness::look(glam::Vec3::new(0.0, 0.0, 1.0), glam::Vec3::new(0.0, 0.0, -2.0), W, H);
    let plain = PickRequest::new(Viewport::full(W, H), view, proj);
    let centre = [PickQuery::Point(UVec2::new(W / 2, H / 2))];
    let device = gpu.ctx.device.clone();
    for ordered in [false, true] {
        let request = if ordered { plain.with_host_writes(vk::PipelineStageFlags::TRANSFER, vk::AccessFlags::TRANSFER_WRITE) } else { plain };
        gpu.run(|cmd| {
            // SAFETY: `cmd` is recording outside a render pass; the buffer has TRANSFER_DST
            // and outlives the wait; the pick's contract as in the other tests.
            unsafe {
                device.cmd_update_buffer(cmd, vb.buffer, 0, &bytes);
                picker.record(cmd, 0, &request, &centre, &draws).expect("record");
                // The host's next write to the same buffer (say, next frame's skinning).
                device.cmd_update_buffer(cmd, vb.buffer, 0, &bytes);
            }
        });
        // SAFETY: `run` waited for the frame.
        let result = unsafe { picker.take_results(0) }.expect("resolve").expect("pending").pick(0).expect("a point's pick").clone();
        assert_eq!(result.hit.map(|h| h.id.get()), Some(9), "ordered {ordered}: the pass reads the written vertices");
        let messages = gpu.ctx.take_validation_messages();
        if ordered {
            assert!(messages.is_empty(), "with host writes stated: {}", messages.join("\n"));
        } else {
            let says = |what: &str| messages.iter().any(|m| m.contains(what));
            // (The write after the pick is a transfer: the picker's own barrier before its
            // copies already orders transfers after the pass, so only the earlier one shows.)
            assert!(says("READ-AFTER-WRITE") || says("READ_AFTER_WRITE"), "the unordered write before the pick is a hazard: {messages:?}");
        }
    }
    drop(picker);
    drop(vb);
    gpu.assert_no_validation_messages();
}

/// A host-visible storage buffer made by hand, so that its handle can be destroyed while its
/// memory (and what was written there) stays.
struct RawBuffer {
    buffer: ash::vk::Buffer,
    memory: ash::vk::DeviceMemory,
}

impl RawBuffer {
    fn new(gpu: &Gpu, words: &[f32]) -> RawBuffer {
        use ash::vk;
        let d = &gpu.ctx.device;
        let size = std::mem::size_of_val(words) as u64;
        // SAFETY: valid create and allocate infos on the test's live device; the memory is
        // host-visible and coherent, mapped for the copy only.
        unsafe {
            let buffer = d.create_buffer(&vk::BufferCreateInfo::default().size(size).usage(vk::BufferUsageFlags::STORAGE_BUFFER), None).unwrap();
            let needs = d.get_buffer_memory_requirements(buffer);
            let props = gpu.ctx.instance.get_physical_device_memory_properties(gpu.ctx.physical_device);
            let wanted = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
            let kind = (0..props.memory_type_count)
                .find(|&i| needs.memory_type_bits & (1 << i) != 0 && props.memory_types[i as usize].property_flags.contains(wanted))
                .expect("a host-visible memory type");
            let memory = d.allocate_memory(&vk::MemoryAllocateInfo::default().allocation_size(needs.size).memory_type_index(kind), None).unwrap();
            d.bind_buffer_memory(buffer, memory, 0).unwrap();
            let at = d.map_memory(memory, 0, size, vk::MemoryMapFlags::empty()).unwrap();
            std::ptr::copy_nonoverlapping(words.as_ptr(), at.cast::<f32>(), words.len());
            d.unmap_memory(memory);
            RawBuffer { buffer, memory }
        }
    }

    /// Destroys the buffer; its memory stays until `free`.
    fn destroy_buffer(&mut self, gpu: &Gpu) {
        // SAFETY: no pending GPU work uses the buffer (every pick was waited for).
        unsafe { gpu.ctx.device.destroy_buffer(self.buffer, None) };
        self.buffer = ash::vk::Buffer::null();
    }

    fn free(mut self, gpu: &Gpu) {
        self.destroy_buffer(gpu);
        // SAFETY: as above; the buffer bound to it is gone.
        unsafe { gpu.ctx.device.free_memory(self.memory, None) };
    }
}

/// What the scenario of [`recreated_under_a_freed_handle`] asks its picker to do.
enum Use {
    /// Say what `draw` shows at this pixel.
    Pick(UVec2),
    /// The last use of the buffer before it is destroyed (after picks that read it), with
    /// the pixel where the instance stands.
    Last(UVec2),
}

/// Finding 2 of the soundness review: Vulkan hands a destroyed buffer's handle value out again
/// (Mesa does; the validation layer's own unique handles are turned off here so the driver's
/// show). An instance buffer destroyed and created again under the same handle, in other
/// memory, must be read anew: a descriptor set written for the old buffer is not reused (it
/// would read the old memory, where the instance still stands on the left). `user` picks (and
/// makes the last use before the destroy) with the instance in a storage buffer.
fn recreated_under_a_freed_handle(gpu: &Gpu, user: &mut dyn FnMut(Use, &PickRequest, &picking_vk::PickDraw) -> Option<u64>) {
    use ash::vk::Handle;
    use glam::Vec3;
    use picking_vk_tests::scene::{Mesh, Object};
    let mut scene = Scene { meshes: vec![Mesh::quad(0.4)], objects: vec![] };
    let mut object = Object::new(5, 0, Mat4::from_translation(Vec3::new(0.0, 0.0, -4.0)));
    object.instances = Some(vec![Mat4::IDENTITY]);
    scene.objects.push(object);
    let gs = scene.upload(&gpu.ctx);
    let base = gs.draws[0].clone();
    let inst = base.instances.expect("instanced");
    let (view, proj, vp) = picking_vk_tests::harness::look(Vec3::new(0.0, 0.0, 1.0), Vec3::new(0.0, 0.0, -4.0), W, H);
    let pixel_of = |p: Vec3| {
        let clip = proj * view * p.extend(1.0);
        UVec2::new(((clip.x / clip.w * 0.5 + 0.5) * W as f32) as u32, ((clip.y / clip.w * 0.5 + 0.5) * H as f32) as u32)
    };
    let (left, right) = (pixel_of(Vec3::new(-1.0, 0.0, -4.0)), pixel_of(Vec3::new(1.0, 0.0, -4.0)));
    let stand = |x: f32| Mat4::from_translation(Vec3::new(x, 0.0, 0.0)).to_cols_array().to_vec();
    // The CPU copy of the transform (what culling reads) says where the buffer puts it.
    let draw_of = |b: &RawBuffer, x: f32| {
        base.clone()
            .with_instance_binding(picking_vk::draw::InstanceBinding::StorageBuffer)
            .with_instances(picking_vk::draw::Instances { range: picking_vk::draw::BufferRange { buffer: b.buffer, offset: 0, size: 64 }, stride: 64, ..inst })
            .with_instance_transforms(vec![Mat4::from_translation(Vec3::new(x, 0.0, 0.0))].into())
    };
    let request = PickRequest::new(vp, view, proj);
    let mut first = RawBuffer::new(gpu, &stand(-1.0));
    let old_handle = first.buffer.as_raw();
    let draw = draw_of(&first, -1.0);
    assert_eq!((user(Use::Pick(left), &request, &draw), user(Use::Pick(right), &request, &draw)), (Some(5), None), "the instance stands on the left");
    user(Use::Last(left), &request, &draw);
    first.destroy_buffer(gpu);
    // New buffers until the driver hands the old handle out again; the old memory stays.
    let mut spares = vec![];
    let second = loop {
        let b = RawBuffer::new(gpu, &stand(1.0));
        if b.buffer.as_raw() == old_handle {
            break b;
        }
        assert!(spares.len() < 32, "the driver never handed handle {old_handle:#x} out again");
        spares.push(b);
    };
    let draw = draw_of(&second, 1.0);
    // Right first: the first recording after the last use is the one that could take its sets.
    assert_eq!(
        (user(Use::Pick(right), &request, &draw), user(Use::Pick(left), &request, &draw)),
        (Some(5), None),
        "the recreated buffer's instance stands on the right"
    );
    for b in spares.into_iter().chain([first, second]) {
        b.free(gpu);
    }
    drop(gs);
}

#[test]
fn an_instance_buffer_recreated_under_a_freed_handle_is_read_anew() {
    // The CPU planner: with the GPU planner's pipeline and buffers also made, lavapipe handed
    // the freed handle out again within 512 buffers in only 5 of 8 runs (the pass under test,
    // the instance sets, is the same with every planner).
    let gpu = Gpu::with_options(|o| o.unique_handles = false);
    let mut picker = gpu.picker(PickerConfig::default().with_planner(picking_vk::config::Planner::Cpu));
    recreated_under_a_freed_handle(&gpu, &mut |use_, request, draw| match use_ {
        Use::Pick(pixel) => gpu.pick(&mut picker, request, pixel, std::slice::from_ref(draw)).hit.map(|h| h.id.get()),
        Use::Last(_) => None,
    });
    drop(picker);
    gpu.assert_no_validation_messages();
}

/// The same where the buffer's last use was a recording refused after it had written its
/// storage buffer sets (a rectangle past `rect_entries`, after a point over the instance): the
/// next recording keeps the refused one's frame number and must not take its sets for its own.
#[test]
fn a_refused_recording_leaves_no_set_for_the_next_to_reuse() {
    let gpu = Gpu::with_options(|o| o.unique_handles = false);
    let config = PickerConfig::default().with_planner(picking_vk::config::Planner::Cpu).with_rect_entries(1);
    let mut picker = gpu.picker(config);
    let view = picking_vk::PixelRect::new(UVec2::ZERO, UVec2::new(W, H));
    recreated_under_a_freed_handle(&gpu, &mut |use_, request, draw| match use_ {
        Use::Pick(pixel) => gpu.pick(&mut picker, request, pixel, std::slice::from_ref(draw)).hit.map(|h| h.id.get()),
        Use::Last(left) => {
            // Two draws of the instance: two rectangle entries where the table holds one.
            let queries = [PickQuery::Point(left), PickQuery::Rect { rect: view, mode: picking_vk::RectMode::Visible }];
            let mut outcome = Ok(());
            // SAFETY: recording outside a render pass; a refused set records nothing.
            gpu.run(|cmd| outcome = unsafe { picker.record(cmd, 0, request, &queries, &[draw.clone(), draw.clone()]) }.map(|_| ()));
            assert!(matches!(outcome, Err(PickError::Capacity { limit: picking_vk::error::Limit::RectEntries, .. })), "{outcome:?}");
            None
        }
    });
    drop(picker);
    gpu.assert_no_validation_messages();
}

/// The same through the debug ID image, whose recordings each begin a frame of its sets.
#[test]
fn an_id_image_reads_a_buffer_recreated_under_a_freed_handle_anew() {
    let gpu = Gpu::with_options(|o| o.unique_handles = false);
    // SAFETY: the context's handles outlive the image.
    let mut image = unsafe { picking_vk::debug::IdImage::new(gpu.ctx.host_device(), W, H) }.unwrap();
    recreated_under_a_freed_handle(&gpu, &mut |use_, request, draw| match use_ {
        Use::Pick(pixel) => {
            let copy = picking_vk::debug::IdCopy::Pixel(pixel);
            // SAFETY: recording outside a render pass; `run` waits, so the image's previous
            // recording completed and the buffers outlive this one.
            gpu.run(|cmd| unsafe { image.record(cmd, request, std::slice::from_ref(draw), None, copy) }.map(|_| ()).unwrap());
            // SAFETY: `run` waited.
            let texels = unsafe { image.read_pixel() }.unwrap();
            picking_vk::ObjectId::from_words(texels.id).map(|id| id.get())
        }
        Use::Last(_) => None,
    });
    drop(image);
    gpu.assert_no_validation_messages();
}

/// A host that states picking features but forgot the core features they need at device
/// creation (`DeviceFeatures::enable_core` not called) is told so by `Picker::new`, when it
/// hands the picker what it enabled; nothing is created.
#[test]
fn core_features_the_host_forgot_to_enable_are_refused_by_name() {
    let gpu = Gpu::new();
    assert!(gpu.ctx.picking_features.contains(picking_vk::PickFeatures::BATCHING), "the test device enables batching");
    let forgot = gpu.ctx.host_device().with_enabled_core(ash::vk::PhysicalDeviceFeatures::default());
    // SAFETY: the context's handles belong together; the call fails before creating anything.
    match unsafe { picking_vk::Picker::new(forgot, PickerConfig::default()) } {
        Err(PickError::Unsupported { missing }) => {
            let names: Vec<String> = missing.iter().map(ToString::to_string).collect();
            assert!(names.contains(&"feature multiDrawIndirect".to_string()) && names.contains(&"feature drawIndirectFirstInstance".to_string()), "{names:?}");
        }
        Ok(_) => panic!("a picker was made for features the device was not created with"),
        Err(e) => panic!("expected Unsupported, got {e}"),
    }
    // What the context enabled passes (every GPU test's picker is made this way).
    drop(gpu.picker(PickerConfig::default()));
    gpu.assert_no_validation_messages();
}

/// Host writes and result readers in a shader stage the device was created without
/// (tessellation here, which the test device does not enable) are refused by name, where the
/// host said which core features it enabled: a barrier naming the stage would be invalid.
#[test]
fn stages_the_device_was_created_without_are_refused() {
    use ash::vk::{AccessFlags as A, PipelineStageFlags as S};
    let gpu = Gpu::new();
    assert_eq!(gpu.ctx.enabled_core.tessellation_shader, ash::vk::FALSE, "the test device leaves tessellation off");
    let mut picker = gpu.picker(PickerConfig::default().with_gpu_results(true));
    let gs = Scene::random(5).upload(&gpu.ctx);
    let (view, proj) = random_scene_camera(DepthConvention::Standard, W, H);
    let base = PickRequest::new(Viewport::full(W, H), view, proj);
    let readers = picking_vk::gpu_results::ResultReaders { stages: S::TESSELLATION_EVALUATION_SHADER, access: A::SHADER_READ };
    let cases = [
        (base.with_host_writes(S::TESSELLATION_EVALUATION_SHADER, A::SHADER_WRITE), picking_vk::error::Input::HostWrites),
        (base.with_result_readers(readers), picking_vk::error::Input::ResultReaders),
    ];
    for (request, input) in cases {
        let mut outcome = None;
        // SAFETY: recording outside a render pass; a refused record records nothing.
        gpu.run(|cmd| outcome = Some(unsafe { picker.record(cmd, 0, &request, &[PickQuery::Point(UVec2::new(5, 5))], &gs.draws) }.map(|_| ())));
        match outcome {
            Some(Err(PickError::InvalidInput { input: i, reason })) if i == input => assert!(reason.contains("created without"), "{reason}"),
            other => panic!("{input:?}: expected InvalidInput, got {other:?}"),
        }
        assert!(!picker.is_pending(0));
    }
    // The debug ID image checks the same.
    // SAFETY: the context's handles outlive the image.
    let mut image = unsafe { picking_vk::debug::IdImage::new(gpu.ctx.host_device(), W, H) }.expect("id image");
    let request = base.with_host_writes(S::TESSELLATION_EVALUATION_SHADER, A::SHADER_WRITE);
    let mut outcome = None;
    // SAFETY: recording outside a render pass; a refused record records nothing.
    gpu.run(|cmd| outcome = Some(unsafe { image.record(cmd, &request, &gs.draws, None, picking_vk::debug::IdCopy::Nothing) }.map(|_| ())));
    assert!(matches!(outcome, Some(Err(PickError::InvalidInput { input: picking_vk::error::Input::HostWrites, .. }))), "{outcome:?}");
    drop(image);
    // A stage the device has passes.
    let request = base.with_host_writes(S::COMPUTE_SHADER, A::SHADER_WRITE);
    // SAFETY: as above; `run` waits for the frame before the draws go.
    gpu.run(|cmd| unsafe { picker.record(cmd, 0, &request, &[PickQuery::Point(UVec2::new(5, 5))], &gs.draws) }.map(|_| ()).expect("record"));
    // SAFETY: `run` waited for the frame.
    unsafe { picker.take_results(0) }.expect("resolve").expect("pending");
    drop((picker, gs));
    gpu.assert_no_validation_messages();
}

/// A configuration whose buffers the picker binds as one storage buffer, past the device's
/// `maxStorageBufferRange` (lavapipe: 2^27 bytes; the rectangle table, and a slot's GPU plan
/// table rows where the device allows more rows than it can bind), is refused when the picker is made, naming
/// the limit, before those buffers are allocated: binding them would break Vulkan's rules.
#[test]
fn buffers_past_the_storage_buffer_range_are_refused_at_creation() {
    let gpu = Gpu::new();
    // SAFETY: the physical device belongs to the live instance.
    let range = unsafe { gpu.ctx.instance.get_physical_device_properties(gpu.ctx.physical_device) }.limits.max_storage_buffer_range;
    let past = |bytes_each: u32| u32::try_from(u64::from(range) / u64::from(bytes_each) + 1).ok();
    let limit_named = |r: Result<picking_vk::Picker, PickError>| match r {
        Err(PickError::Unsupported { missing }) => missing.iter().any(|m| m.to_string().contains("maxStorageBufferRange")),
        _ => false,
    };
    // The rectangle table: 12 bytes an entry.
    let entries = past(12).expect("a 32-bit entry count past the range");
    // SAFETY: the context's handles outlive the picker (none is made).
    let refused = unsafe { picking_vk::Picker::new(gpu.ctx.host_device(), PickerConfig::default().with_rect_entries(entries)) };
    assert!(limit_named(refused), "{entries} rectangle entries");
    // A slot's table rows: 164 bytes a row (the row, its compacted copy and its near key).
    let rows = past(164).expect("a 32-bit row count past the range");
    if rows <= 1 << 22 {
        let config = PickerConfig::default().with_planner(picking_vk::config::Planner::Gpu).with_gpu_plan_rows(rows);
        // SAFETY: as above.
        let refused = unsafe { picking_vk::Picker::new(gpu.ctx.host_device(), config) };
        assert!(limit_named(refused), "{rows} table rows");
    }
    // The default table fits, and the picker is made.
    let fits = gpu.picker(PickerConfig::default());
    drop(fits);
    gpu.assert_no_validation_messages();
}

/// An ID image past the device's image and framebuffer limits, or of no pixels, is refused
/// by `IdImage::new` and by `attachment_bytes_for` (which asks the driver about an image it
/// never binds), naming why; a size within them is measured.
#[test]
fn id_images_past_the_device_limits_are_refused() {
    let gpu = Gpu::new();
    // SAFETY: the physical device belongs to the live instance.
    let limits = unsafe { gpu.ctx.instance.get_physical_device_properties(gpu.ctx.physical_device) }.limits;
    let past = limits.max_image_dimension2_d.min(limits.max_framebuffer_width).min(limits.max_framebuffer_height) + 1;
    let limit_named = |e: PickError| matches!(&e, PickError::Unsupported { missing } if missing.iter().any(|m| m.to_string().contains("maxFramebufferWidth")));
    for (w, h) in [(past, 1), (1, past)] {
        // SAFETY: the context's device and physical device belong to its live instance.
        let bytes = unsafe { picking_vk::debug::IdImage::attachment_bytes_for(gpu.ctx.host_device(), w, h) };
        assert!(bytes.is_err_and(limit_named), "attachment bytes of {w}x{h}");
        // SAFETY: as above; nothing is made.
        let image = unsafe { picking_vk::debug::IdImage::new(gpu.ctx.host_device(), w, h) };
        assert!(image.is_err_and(limit_named), "an ID image of {w}x{h}");
    }
    // SAFETY: as above.
    let empty = unsafe { picking_vk::debug::IdImage::attachment_bytes_for(gpu.ctx.host_device(), 0, 4) };
    assert!(matches!(empty, Err(PickError::InvalidInput { .. })), "{empty:?}");
    // SAFETY: as above.
    let bytes = unsafe { picking_vk::debug::IdImage::attachment_bytes_for(gpu.ctx.host_device(), 64, 32) }.unwrap();
    assert!(bytes >= 64 * 32 * 20, "{bytes} bytes for 64x32 texels of 20 bytes");
    gpu.assert_no_validation_messages();
}
