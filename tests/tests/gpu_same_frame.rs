//! The same-frame CPU path: the pick submitted early with the host's fence or timeline value,
//! its results taken later in the same frame by `Picker::wait_results`. The results equal
//! the ring path's for the same frame; a signal that never comes (a dropped submission)
//! times out as a recoverable error that leaves the frame pending; a lost device reads
//! nothing.

use ash::vk;
use glam::UVec2;
use picking_vk::{DepthConvention, FrameResults, HostSignal, PickError, PickQuery, PickRequest, Picker, PickerConfig, PixelRect, RectMode, Snap, Viewport};
use picking_vk_tests::harness::{random_pixels, random_scene_camera, Gpu};
use picking_vk_tests::scene::Scene;
use std::time::Duration;

const W: u32 = 160;
const H: u32 = 120;

/// Points, a thin-snapping radius query and a rectangle over a random scene.
fn queries(seed: u64) -> Vec<PickQuery> {
    let mut set: Vec<PickQuery> = random_pixels(seed, 6, W, H).into_iter().map(PickQuery::Point).collect();
    set.push(PickQuery::Radius { pixel: UVec2::new(W / 2, H / 2), radius: 6, snap: Snap::Thin });
    set.push(PickQuery::Rect { rect: PixelRect::new(UVec2::new(20, 10), UVec2::new(120, 100)), mode: RectMode::Visible });
    set
}

/// Records the set into slot 0 of a command buffer of its own, and leaves submitting it to
/// the caller.
fn record_alone(
    gpu: &Gpu,
    picker: &mut Picker,
    request: &PickRequest<'_>,
    set: &[PickQuery],
    draws: &[picking_vk::PickDraw],
) -> picking_vk_context::CommandBuffers {
    let cmds = gpu.ctx.command_buffers(1).unwrap();
    let cmd = cmds.buffers()[0];
    // SAFETY: a fresh primary command buffer of this device.
    unsafe {
        gpu.ctx.device.begin_command_buffer(cmd, &vk::CommandBufferBeginInfo::default()).unwrap();
        picker.record(cmd, 0, request, set, draws).expect("record");
        gpu.ctx.device.end_command_buffer(cmd).unwrap();
    }
    cmds
}

/// Records the set into slot 0 of a command buffer of its own and submits it, signalling
/// `fence` (and, with `timeline`, the semaphore's value), without waiting.
fn submit_early(
    gpu: &Gpu,
    picker: &mut Picker,
    request: &PickRequest<'_>,
    set: &[PickQuery],
    draws: &[picking_vk::PickDraw],
    fence: vk::Fence,
    timeline: Option<(vk::Semaphore, u64)>,
) -> picking_vk_context::CommandBuffers {
    let cmds = record_alone(gpu, picker, request, set, draws);
    let cmd = cmds.buffers()[0];
    // SAFETY: an executable command buffer of this device whose draws' buffers outlive the
    // wait the test does before dropping them; the queue is used by this test alone.
    unsafe {
        let (command_buffers, semaphores, values) = ([cmd], timeline.map(|t| [t.0]).unwrap_or_default(), timeline.map(|t| [t.1]).unwrap_or_default());
        let mut values_info = vk::TimelineSemaphoreSubmitInfo::default().signal_semaphore_values(&values);
        let mut submit = vk::SubmitInfo::default().command_buffers(&command_buffers);
        if timeline.is_some() {
            submit = submit.signal_semaphores(&semaphores).push_next(&mut values_info);
        }
        gpu.ctx.device.queue_submit(gpu.ctx.queue, &[submit], fence).unwrap();
    }
    cmds
}

fn fence(gpu: &Gpu) -> vk::Fence {
    // SAFETY: plain fence creation on a live device.
    unsafe { gpu.ctx.device.create_fence(&vk::FenceCreateInfo::default(), None) }.unwrap()
}

fn timeline_semaphore(gpu: &Gpu) -> vk::Semaphore {
    let mut kind = vk::SemaphoreTypeCreateInfo::default().semaphore_type(vk::SemaphoreType::TIMELINE);
    // SAFETY: the context enabled timeline semaphores.
    unsafe { gpu.ctx.device.create_semaphore(&vk::SemaphoreCreateInfo::default().push_next(&mut kind), None) }.unwrap()
}

/// The ring path's results for the same frame: a fresh picker, submitted and waited for.
fn ring_results(gpu: &Gpu, request: &PickRequest<'_>, set: &[PickQuery], draws: &[picking_vk::PickDraw]) -> FrameResults {
    let mut picker = gpu.picker(PickerConfig::default());
    gpu.run_queries(&mut picker, request, set, draws)
}

#[test]
fn same_frame_results_on_a_fence_or_a_timeline_value_equal_the_ring_paths() {
    let gpu = Gpu::with_options(|o| o.timeline_semaphores = true);
    for seed in [61, 62] {
        let gs = Scene::random(seed).upload(&gpu.ctx);
        let (view, proj) = random_scene_camera(DepthConvention::Standard, W, H);
        let request = PickRequest::new(Viewport::full(W, H), view, proj);
        let set = queries(seed);
        let want = ring_results(&gpu, &request, &set, &gs.draws);
        assert!(want.results.iter().filter_map(|r| r.pick()).any(|p| p.hit.is_some()), "seed {seed}: something is hit");
        for use_timeline in [false, true] {
            let mut picker = gpu.picker(PickerConfig::default());
            let (f, semaphore) = (fence(&gpu), timeline_semaphore(&gpu));
            let value = 7 + seed;
            let cmds = submit_early(&gpu, &mut picker, &request, &set, &gs.draws, f, use_timeline.then_some((semaphore, value)));
            let signal = if use_timeline { HostSignal::Timeline { semaphore, value } } else { HostSignal::Fence(f) };
            // SAFETY: the submission above signals both when the pick's work is done.
            let got = unsafe { picker.wait_results(0, signal, Duration::from_secs(10)) }.expect("same-frame results").expect("pending");
            assert_eq!(got.results, want.results, "seed {seed} timeline {use_timeline}: the same results as the ring path");
            // SAFETY: the fence was waited on (or is signaled now); nothing uses it any more.
            unsafe {
                gpu.ctx.device.wait_for_fences(&[f], true, u64::MAX).unwrap();
                gpu.ctx.device.destroy_fence(f, None);
                gpu.ctx.device.destroy_semaphore(semaphore, None);
            }
            drop(cmds);
            // SAFETY: nothing is pending any more: no wait, no read.
            assert!(unsafe { picker.wait_results(0, HostSignal::Fence(vk::Fence::null()), Duration::ZERO) }.unwrap().is_none(), "taken once");
        }
        drop(gs);
    }
    gpu.assert_no_validation_messages();
}

#[test]
fn a_signal_that_never_comes_times_out_and_leaves_the_frame_pending() {
    let gpu = Gpu::with_options(|o| o.timeline_semaphores = true);
    let gs = Scene::random(63).upload(&gpu.ctx);
    let (view, proj) = random_scene_camera(DepthConvention::Standard, W, H);
    let request = PickRequest::new(Viewport::full(W, H), view, proj);
    let set = queries(63);
    let mut picker = gpu.picker(PickerConfig::default());
    // The early submission is dropped: recorded, never submitted.
    let cmds = record_alone(&gpu, &mut picker, &request, &set, &gs.draws);
    let cmd = cmds.buffers()[0];
    let (f, semaphore) = (fence(&gpu), timeline_semaphore(&gpu));
    for signal in [HostSignal::Fence(f), HostSignal::Timeline { semaphore, value: 1 }] {
        let started = std::time::Instant::now();
        // SAFETY: neither signal ever comes, so nothing is read.
        let err = unsafe { picker.wait_results(0, signal, Duration::from_millis(30)) }.unwrap_err();
        assert!(matches!(err, PickError::TimedOut { slot: 0, timeout, .. } if timeout == Duration::from_millis(30)), "{err}");
        assert!(err.is_recoverable(), "{err}");
        assert!(started.elapsed() < Duration::from_secs(5), "the wait is bounded");
    }
    // Still pending: a new record into the slot is refused until it is cancelled.
    // SAFETY: refused before anything is recorded.
    let again = unsafe { picker.record(cmd, 0, &request, &set, &gs.draws) };
    assert!(matches!(again, Err(PickError::SlotPending { slot: 0, .. })), "{again:?}");
    assert!(picker.cancel(0).unwrap());
    // SAFETY: nothing pending: no wait, no read.
    assert!(unsafe { picker.wait_results(0, HostSignal::Fence(f), Duration::from_secs(1)) }.unwrap().is_none());
    // A lost device reads nothing, whatever the signal says.
    let fresh = record_alone(&gpu, &mut picker, &request, &set, &gs.draws);
    picker.mark_device_lost();
    // SAFETY: with the device lost nothing is waited for or read.
    let lost = unsafe { picker.wait_results(0, HostSignal::Fence(f), Duration::from_secs(1)) };
    assert!(matches!(lost, Err(PickError::DeviceLost)), "{lost:?}");
    // SAFETY: nothing was submitted; the handles are unused.
    unsafe {
        gpu.ctx.device.destroy_fence(f, None);
        gpu.ctx.device.destroy_semaphore(semaphore, None);
    }
    drop((cmds, fresh, picker, gs));
    gpu.assert_no_validation_messages();
}
