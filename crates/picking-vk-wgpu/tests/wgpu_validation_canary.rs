//! Proves the net of the wgpu tests works: the layer's log must catch a deliberate misuse and
//! a synchronization hazard on wgpu's device, or their zero-message checks would mean nothing.
//! (A process of its own: these messages must not reach the other tests' checks.)

mod common;

use ash::vk;
use wgpu::hal::api::Vulkan;

#[test]
fn the_layer_reports_misuse_and_hazards_on_wgpus_device() {
    let adapter = common::adapter();
    let gpu = common::device(&adapter);
    let buffer = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: 256,
        usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    // SAFETY: the handles are read while the guards live.
    let raw = unsafe { buffer.as_hal::<Vulkan>() }.map(|b| unsafe { b.raw_handle() }).expect("a Vulkan buffer");
    {
        // SAFETY: as above.
        let hal = unsafe { gpu.device.as_hal::<Vulkan>() }.expect("a Vulkan device");
        let device = hal.raw_device();
        // A zero-sized buffer is invalid usage (VUID-VkBufferCreateInfo-size-00912).
        let info = vk::BufferCreateInfo::default().size(0).usage(vk::BufferUsageFlags::TRANSFER_DST);
        // SAFETY: deliberately invalid create info; the layer reports it, the driver tolerates it.
        if let Ok(b) = unsafe { device.create_buffer(&info, None) } {
            // SAFETY: just created, never used.
            unsafe { device.destroy_buffer(b, None) };
        }
    }
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    // SAFETY: raw commands only, on the raw handle, while the encoder is not touched.
    unsafe {
        encoder.as_hal_mut::<Vulkan, _, _>(|hal| {
            let hal = hal.expect("a Vulkan encoder");
            let device = gpu.device.as_hal::<Vulkan>().expect("a Vulkan device");
            let region = vk::BufferCopy { src_offset: 0, dst_offset: 128, size: 128 };
            // Two writes to the same bytes with no barrier between them: WRITE_AFTER_WRITE.
            device.raw_device().cmd_copy_buffer(hal.raw_handle(), raw, raw, &[region]);
            device.raw_device().cmd_copy_buffer(hal.raw_handle(), raw, raw, &[region]);
        })
    };
    gpu.queue.submit([encoder.finish()]);
    gpu.device.poll(wgpu::PollType::wait_indefinitely()).expect("idle");
    let messages = common::layer_messages();
    assert!(messages.contains("00912"), "expected a size-00912 error, got {messages:?}");
    assert!(messages.contains("SYNC-HAZARD-WRITE-AFTER-WRITE"), "expected a sync hazard, got {messages:?}");
}
