//! Proves the net works: the validation layer and synchronization validation must catch
//! deliberate mistakes, or the zero-message checks in the other tests would mean nothing.

use ash::vk;
use picking_vk_tests::harness::Gpu;

#[test]
fn validation_layer_reports_api_misuse() {
    let gpu = Gpu::new();
    // A zero-sized buffer is invalid usage (VUID-VkBufferCreateInfo-size-00912).
    let info = vk::BufferCreateInfo::default().size(0).usage(vk::BufferUsageFlags::TRANSFER_DST);
    // SAFETY: deliberately invalid create info; the layer reports it, the driver tolerates it.
    if let Ok(b) = unsafe { gpu.ctx.device.create_buffer(&info, None) } {
        // SAFETY: the buffer was just created and never used.
        unsafe { gpu.ctx.device.destroy_buffer(b, None) };
    }
    let messages = gpu.ctx.take_validation_messages();
    assert!(messages.iter().any(|m| m.contains("00912")), "expected a size-00912 error, got {messages:?}");
}

#[test]
fn synchronization_validation_reports_a_hazard() {
    let gpu = Gpu::new();
    let a = gpu.ctx.upload(&[0u32; 64], vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST).unwrap();
    let b = gpu.ctx.upload(&[0u32; 64], vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST).unwrap();
    let region = vk::BufferCopy { src_offset: 0, dst_offset: 0, size: 256 };
    // SAFETY: `cmd` is recording outside a render pass; both buffers outlive the wait.
    gpu.run(|cmd| unsafe {
        // Two writes to `b` with no barrier between them: WRITE_AFTER_WRITE.
        gpu.ctx.device.cmd_copy_buffer(cmd, a.buffer, b.buffer, &[region]);
        gpu.ctx.device.cmd_copy_buffer(cmd, a.buffer, b.buffer, &[region]);
    });
    let messages = gpu.ctx.take_validation_messages();
    assert!(messages.iter().any(|m| m.contains("SYNC-HAZARD-WRITE-AFTER-WRITE")), "expected a sync hazard, got {messages:?}");
}
