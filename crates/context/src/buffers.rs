//! Host-visible buffers for tests and tools: geometry uploaded once, no staging copy.

use crate::owner::DeviceOwner;
use crate::ContextError;
use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;
use std::sync::Arc;

/// A buffer in host-visible memory, freed on drop. It keeps the device alive.
pub struct HostBuffer {
    owner: Arc<DeviceOwner>,
    pub buffer: vk::Buffer,
    pub size: u64,
    allocation: Option<Allocation>,
}

impl HostBuffer {
    pub(crate) fn new<T: bytemuck::NoUninit>(owner: &Arc<DeviceOwner>, data: &[T], usage: vk::BufferUsageFlags) -> Result<Self, ContextError> {
        let device = &owner.device;
        let size = (std::mem::size_of_val(data) as u64).max(4);
        let info = vk::BufferCreateInfo::default().size(size).usage(usage).sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid create info on a live device.
        let buffer = unsafe { device.create_buffer(&info, None) }?;
        let mut out = HostBuffer { owner: owner.clone(), buffer, size, allocation: None };
        // SAFETY: `buffer` is live.
        let requirements = unsafe { device.get_buffer_memory_requirements(buffer) };
        let desc = AllocationCreateDesc {
            name: "picking-vk-context buffer",
            requirements,
            location: MemoryLocation::CpuToGpu,
            linear: true,
            allocation_scheme: AllocationScheme::GpuAllocatorManaged,
        };
        // Owned by `out` from here: an error below frees it with the buffer (no leak).
        let allocation = out.allocation.insert(owner.lock_allocator()?.allocate(&desc)?);
        // Sub-allocations share memory objects, so a flush or invalidate would reach other
        // buffers' bytes: only coherent memory (all that gpu-allocator's CpuToGpu gives) is used.
        if !allocation.memory_properties().contains(vk::MemoryPropertyFlags::HOST_COHERENT) {
            return Err(ContextError::NoDevice("host-visible buffers need host-coherent memory".into()));
        }
        let bytes = std::mem::size_of_val(data);
        let mapped = allocation.mapped_slice_mut().ok_or(ContextError::Vulkan(vk::Result::ERROR_MEMORY_MAP_FAILED))?;
        // `T: NoUninit`: its bytes are all initialized (no padding), so they may be read.
        let src: &[u8] = bytemuck::cast_slice(data);
        mapped[..bytes].copy_from_slice(src);
        // SAFETY: fresh allocation sized for this buffer; the buffer is unbound.
        unsafe { device.bind_buffer_memory(buffer, allocation.memory(), allocation.offset()) }?;
        Ok(out)
    }

    /// Writes `data` at byte `offset` (coherent memory: visible to the next submission).
    ///
    /// # Safety
    /// The GPU does not access this buffer while the write runs: every submission that uses
    /// it has completed (its fence signalled, or its queue idled), or none was made. A
    /// per-frame buffer is rewritten only after its frame's fence.
    pub unsafe fn write<T: bytemuck::NoUninit>(&mut self, offset: u64, data: &[T]) -> Result<(), ContextError> {
        let bytes = std::mem::size_of_val(data);
        let size = self.size as usize;
        let alloc = self.allocation.as_mut().ok_or(ContextError::Vulkan(vk::Result::ERROR_MEMORY_MAP_FAILED))?;
        let mapped = alloc.mapped_slice_mut().ok_or(ContextError::Vulkan(vk::Result::ERROR_MEMORY_MAP_FAILED))?;
        let start = offset as usize;
        let end = start.checked_add(bytes).filter(|&e| e <= size).ok_or(ContextError::Vulkan(vk::Result::ERROR_OUT_OF_HOST_MEMORY))?;
        let src: &[u8] = bytemuck::cast_slice(data);
        mapped[start..end].copy_from_slice(src);
        Ok(())
    }

    /// The buffer's bytes as the GPU last wrote them.
    ///
    /// # Safety
    /// The GPU work that wrote them has completed (its fence signalled, or its queue idled)
    /// and made its writes available to the host (a barrier to `HOST_READ` after the copy),
    /// and no GPU work writes this buffer while the read runs.
    pub unsafe fn read_bytes(&self) -> Result<Vec<u8>, ContextError> {
        let alloc = self.allocation.as_ref().ok_or(ContextError::Vulkan(vk::Result::ERROR_MEMORY_MAP_FAILED))?;
        let mapped = alloc.mapped_slice().ok_or(ContextError::Vulkan(vk::Result::ERROR_MEMORY_MAP_FAILED))?;
        Ok(mapped[..self.size as usize].to_vec())
    }
}

impl Drop for HostBuffer {
    fn drop(&mut self) {
        // SAFETY: users drop buffers only after the GPU is done with them; the owner keeps the
        // device alive until then.
        unsafe { self.owner.device.destroy_buffer(self.buffer, None) };
        if let (Some(a), Ok(mut alloc)) = (self.allocation.take(), self.owner.lock_allocator()) {
            let _ = alloc.free(a);
        }
    }
}
