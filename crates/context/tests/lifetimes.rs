//! The context's ownership rules on lavapipe with validation on: what the context made may
//! outlive it (the device goes last), a shared allocator outliving everything leaks the
//! device instead of freeing it under the allocator, and a panic inside `run_once` poisons
//! the command-pool lock with an error of its own. Fails (never skips) without a device.

use ash::vk;
use picking_vk_context::{ContextError, ContextOptions, VulkanContext};

fn context() -> VulkanContext {
    VulkanContext::new(&ContextOptions::default()).unwrap_or_else(|e| panic!("GPU TEST COULD NOT RUN: {e} (see README)"))
}

#[test]
fn buffers_images_and_command_buffers_outlive_the_context() {
    let ctx = context();
    let log = ctx.validation_log().expect("validation is on");
    let mut buffer = ctx.upload(&[1u32, 2, 3, 4], vk::BufferUsageFlags::VERTEX_BUFFER).unwrap();
    let image = ctx
        .create_image(vk::Format::R8G8B8A8_UNORM, vk::Extent2D { width: 4, height: 4 }, vk::ImageUsageFlags::COLOR_ATTACHMENT, vk::ImageAspectFlags::COLOR)
        .unwrap();
    let commands = ctx.command_buffers(2).unwrap();
    assert_eq!(commands.buffers().len(), 2);
    ctx.run_once(|_| ()).unwrap();
    drop(ctx);
    // SAFETY: the buffer was never used by the GPU.
    unsafe { buffer.write(4, &[7u32]) }.unwrap();
    // SAFETY: as above.
    let bytes = unsafe { buffer.read_bytes() }.unwrap();
    assert_eq!(bytes[4..8], 7u32.to_ne_bytes());
    drop((commands, image));
    drop(buffer); // the last holder: the device and the instance go now
    assert_eq!(log.take(), Vec::<String>::new(), "teardown in any order is clean");
}

#[test]
fn an_allocator_clone_outliving_the_context_leaks_the_device_rather_than_freeing_it() {
    let ctx = context();
    let log = ctx.validation_log().expect("validation is on");
    let allocator = ctx.allocator();
    drop(ctx);
    // The device still exists: the allocator can free through it.
    drop(allocator);
    assert_eq!(log.take(), Vec::<String>::new());
}

#[test]
fn a_panic_in_run_once_poisons_the_pool_lock_with_its_own_error() {
    let ctx = context();
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| ctx.run_once(|_| panic!("recording failed"))));
    assert!(panicked.is_err());
    assert!(matches!(ctx.run_once(|_| ()), Err(ContextError::LockPoisoned("command pool"))));
}
