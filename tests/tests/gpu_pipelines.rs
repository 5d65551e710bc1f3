//! The pipeline cache: a warm-up builds every pipeline a scene needs before the first pick,
//! the cache stays within its bound while vertex layouts come and go (destroying only
//! pipelines no running frame uses: validation would report the rest), and the host's own
//! `VkPipelineCache` is used.

use ash::vk;
use glam::{Mat4, UVec2, Vec3};
use picking_vk::draw::Culling;
use picking_vk::{DepthConvention, PickDraw, PickQuery, PickRequest, PickerConfig, PixelRect, RectMode, Snap, Viewport};
use picking_vk_tests::harness::{look, random_scene_camera, Gpu};
use picking_vk_tests::scene::{Mesh, Object, Scene, VertexLayout};

#[test]
fn warm_up_builds_every_pipeline_a_scene_needs() {
    let gpu = Gpu::new();
    let gs = Scene::random(71).upload(&gpu.ctx);
    let (view, proj) = random_scene_camera(DepthConvention::Standard, 160, 120);
    let request = PickRequest::new(Viewport::full(160, 120), view, proj);
    let mut picker = gpu.picker(PickerConfig::default());
    let built = picker.warm_up(&gs.draws, DepthConvention::Standard, Culling::NONE).unwrap();
    assert!(built >= 3, "vertex layouts x (plain, batched, rectangles): {built}");
    assert_eq!(picker.pipeline_count(), built);
    assert_eq!(picker.warm_up(&gs.draws, DepthConvention::Standard, Culling::NONE).unwrap(), 0, "a second warm-up builds nothing");
    let queries = [
        PickQuery::Point(UVec2::new(80, 60)),
        PickQuery::Radius { pixel: UVec2::new(40, 30), radius: 5, snap: Snap::Nearest },
        PickQuery::Rect { rect: PixelRect::new(UVec2::ZERO, UVec2::new(160, 120)), mode: RectMode::Visible },
        PickQuery::Rect { rect: PixelRect::new(UVec2::new(20, 20), UVec2::new(90, 70)), mode: RectMode::All },
    ];
    // SAFETY: recording outside a render pass; the draws' buffers outlive the wait.
    gpu.run(|cmd| unsafe { picker.record(cmd, 0, &request, &queries, &gs.draws) }.map(|_| ()).unwrap());
    // SAFETY: `run` waited.
    let results = unsafe { picker.take_results(0) }.unwrap().unwrap();
    assert_eq!(results.results.len(), 4);
    assert_eq!(picker.pipeline_count(), built, "the first picks built no pipeline");
    drop((picker, gs));
    gpu.assert_no_validation_messages();
}

/// A quad facing the camera at `z`, in a vertex layout of `stride` bytes (each stride is a
/// pipeline of its own).
fn quad_at_stride(id: u64, stride: u32, z: f32) -> Scene {
    let mut scene = Scene::default();
    scene.meshes.push(Mesh::quad(1.0));
    let mut obj = Object::new(id, 0, Mat4::from_translation(Vec3::new(0.0, 0.0, z)));
    obj.layout = VertexLayout::Interleaved { stride, offset: 4 };
    scene.objects.push(obj);
    scene
}

#[test]
fn the_cache_stays_bounded_while_layouts_come_and_go() {
    let gpu = Gpu::new();
    let (view, proj, vp) = look(Vec3::new(0.0, 0.0, 3.0), Vec3::ZERO, 64, 64);
    let scenes: Vec<_> = (0..8u32).map(|k| quad_at_stride(100 + u64::from(k), 16 + 4 * k, -0.1 * k as f32).upload(&gpu.ctx)).collect();
    let mut picker = gpu.picker(PickerConfig::default().with_frames_in_flight(2).with_max_pipelines(2).with_batch_rows(0).with_rect_entries(0));
    let request = PickRequest::new(vp, view, proj);
    let centre = [PickQuery::Point(UVec2::new(32, 32))];
    let cmds = gpu.ctx.command_buffers(2).unwrap();
    let fences: Vec<vk::Fence> = (0..2)
        // SAFETY: plain fence creation on the live device.
        .map(|_| unsafe { gpu.ctx.device.create_fence(&vk::FenceCreateInfo::default().flags(vk::FenceCreateFlags::SIGNALED), None) }.unwrap())
        .collect();
    let mut most = 0;
    for frame in 0..24usize {
        let slot = frame % 2;
        let gs = &scenes[frame % scenes.len()];
        let d = &gpu.ctx.device;
        // SAFETY: the usual frame loop: wait on the slot's fence, take its result, reset,
        // record, submit; the scenes' buffers outlive every frame.
        unsafe {
            d.wait_for_fences(&[fences[slot]], true, u64::MAX).unwrap();
            if let Some(results) = picker.take_results(slot).unwrap() {
                let expected = scenes[(frame - 2) % scenes.len()].draws[0].id;
                assert_eq!(results.pick(0).expect("a point's pick").id(), Some(expected), "frame {} picked its own quad", frame - 2);
            }
            d.reset_fences(&[fences[slot]]).unwrap();
            d.reset_command_buffer(cmds[slot], vk::CommandBufferResetFlags::empty()).unwrap();
            d.begin_command_buffer(cmds[slot], &vk::CommandBufferBeginInfo::default()).unwrap();
            picker.record(cmds[slot], slot, &request, &centre, &gs.draws).unwrap();
            d.end_command_buffer(cmds[slot]).unwrap();
            let submit = vk::SubmitInfo::default().command_buffers(std::slice::from_ref(&cmds[slot]));
            d.queue_submit(gpu.ctx.queue, &[submit], fences[slot]).unwrap();
        }
        most = most.max(picker.pipeline_count());
    }
    // The limit, plus the newest pipeline of a frame still running on the other slot.
    assert!(most <= 3, "at most 2 kept (+1 in flight), saw {most}");
    // SAFETY: waiting for everything submitted before destroying what it uses.
    unsafe {
        gpu.ctx.device.device_wait_idle().unwrap();
        for f in fences {
            gpu.ctx.device.destroy_fence(f, None);
        }
    }
    drop((picker, cmds, scenes));
    gpu.assert_no_validation_messages();
}

#[test]
fn the_hosts_pipeline_cache_is_used() {
    let gpu = Gpu::new();
    let gs = Scene::random(72).upload(&gpu.ctx);
    let d = &gpu.ctx.device;
    // SAFETY: plain pipeline cache creation on the live device.
    let cache = unsafe { d.create_pipeline_cache(&vk::PipelineCacheCreateInfo::default(), None) }.unwrap();
    // SAFETY: as above.
    let empty = unsafe { d.get_pipeline_cache_data(cache) }.unwrap().len();
    // SAFETY: the context's handles and the cache outlive the picker.
    let mut picker =
        unsafe { picking_vk::Picker::new(gpu.ctx.host_device().with_pipeline_cache(cache), PickerConfig::default().with_rendering(gpu.rendering)) }.unwrap();
    let draws: &[PickDraw] = &gs.draws;
    assert!(picker.warm_up(draws, DepthConvention::Reverse, Culling::NONE).unwrap() > 0);
    let (view, proj) = random_scene_camera(DepthConvention::Reverse, 160, 120);
    let request = PickRequest::new(Viewport::full(160, 120), view, proj);
    let covered = gpu.covered_pixels(&request, draws, 3);
    assert!(gpu.pick(&mut picker, &request, covered[0], draws).hit.is_some(), "picks through the host's cache work");
    // SAFETY: as above; nothing else uses the cache now.
    let filled = unsafe { d.get_pipeline_cache_data(cache) }.unwrap().len();
    eprintln!("pipeline cache data: {empty} -> {filled} bytes on {}", gpu.ctx.device_name);
    // Drivers that keep pipelines in the cache (NVIDIA does; lavapipe keeps only the header)
    // show the picker's pipelines went through it; validation checks the handle everywhere.
    if !gpu.ctx.device_name.starts_with("llvmpipe") {
        assert!(filled > empty, "the pipelines went through the host's cache: {empty} -> {filled} bytes");
    }
    drop(picker);
    // SAFETY: the picker that used it is gone.
    unsafe { d.destroy_pipeline_cache(cache, None) };
    drop(gs);
    gpu.assert_no_validation_messages();
}
