//! Command pools: the context's own (private, behind a lock, for `run_once`) and
//! [`CommandBuffers`], a set of primary command buffers in a pool of their own for a frame loop.

use crate::owner::DeviceOwner;
use crate::ContextError;
use ash::vk;
use std::sync::Arc;

/// A command pool of the queue family (command buffers resettable one by one), destroyed
/// with its buffers on drop.
pub(crate) struct Pool {
    owner: Arc<DeviceOwner>,
    pub(crate) pool: vk::CommandPool,
}

impl Pool {
    pub(crate) fn new(owner: &Arc<DeviceOwner>, queue_family_index: u32) -> Result<Self, ContextError> {
        let info = vk::CommandPoolCreateInfo::default().queue_family_index(queue_family_index).flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        // SAFETY: valid create info on the owner's live device.
        let pool = unsafe { owner.device.create_command_pool(&info, None) }?;
        Ok(Pool { owner: owner.clone(), pool })
    }

    /// `count` primary command buffers. The caller synchronizes access to the pool.
    pub(crate) fn allocate(&self, count: u32) -> Result<Vec<vk::CommandBuffer>, ContextError> {
        let info = vk::CommandBufferAllocateInfo::default().command_pool(self.pool).level(vk::CommandBufferLevel::PRIMARY).command_buffer_count(count);
        // SAFETY: the pool belongs to this device; the caller serializes its use.
        Ok(unsafe { self.owner.device.allocate_command_buffers(&info) }?)
    }

    pub(crate) fn device(&self) -> &ash::Device {
        &self.owner.device
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // SAFETY: holders drop a pool only after the GPU is done with its command buffers
        // (`run_once` waits; see `CommandBuffers`); destroying it frees them.
        unsafe { self.owner.device.destroy_command_pool(self.pool, None) };
    }
}

/// Primary command buffers in a command pool of their own (resettable one by one), for a frame
/// loop: typically one per frame in flight, reset and re-recorded after that frame's fence.
/// Vulkan requires the pool and its buffers to be used from one thread at a time; as nothing
/// else uses this pool, that is the thread that records these buffers. Dropping the set
/// destroys the pool and frees the buffers: drop it only after their submissions completed.
pub struct CommandBuffers {
    pool: Pool,
    buffers: Vec<vk::CommandBuffer>,
}

impl CommandBuffers {
    pub(crate) fn new(owner: &Arc<DeviceOwner>, queue_family_index: u32, count: u32) -> Result<Self, ContextError> {
        let pool = Pool::new(owner, queue_family_index)?;
        let buffers = pool.allocate(count)?;
        Ok(CommandBuffers { pool, buffers })
    }

    /// The command buffers, in allocation order.
    pub fn buffers(&self) -> &[vk::CommandBuffer] {
        &self.buffers
    }

    /// The pool itself, for an API that allocates its own one-off buffers from a caller's pool
    /// (egui-ash-renderer's texture uploads). Use it from the thread that records these buffers.
    pub fn pool(&self) -> vk::CommandPool {
        self.pool.pool
    }

    /// The device the buffers belong to.
    pub fn device(&self) -> &ash::Device {
        self.pool.device()
    }
}

impl std::ops::Index<usize> for CommandBuffers {
    type Output = vk::CommandBuffer;

    fn index(&self, i: usize) -> &vk::CommandBuffer {
        &self.buffers[i]
    }
}
