//! Host-visible buffers for tests and tools: geometry uploaded once, no staging copy.

use crate::ContextError;
use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme, Allocator};
use gpu_allocator::MemoryLocation;
use std::sync::{Arc, Mutex};

/// A buffer in host-visible memory, freed on drop.
pub struct HostBuffer {
    device: ash::Device,
    allocator: Arc<Mutex<Allocator>>,
    pub buffer: vk::Buffer,
    pub size: u64,
    allocation: Option<Allocation>,
}

impl HostBuffer {
    pub(crate) fn new<T: Copy>(device: &ash::Device, allocator: &Arc<Mutex<Allocator>>, data: &[T], usage: vk::BufferUsageFlags) -> Result<Self, ContextError> {
        let size = (std::mem::size_of_val(data) as u64).max(4);
        let info = vk::BufferCreateInfo::default().size(size).usage(usage).sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid create info on a live device.
        let buffer = unsafe { device.create_buffer(&info, None) }?;
        let mut out = HostBuffer { device: device.clone(), allocator: allocator.clone(), buffer, size, allocation: None };
        // SAFETY: `buffer` is live.
        let requirements = unsafe { device.get_buffer_memory_requirements(buffer) };
        let desc = AllocationCreateDesc {
            name: "picking-vk-context buffer",
            requirements,
            location: MemoryLocation::CpuToGpu,
            linear: true,
            allocation_scheme: AllocationScheme::GpuAllocatorManaged,
        };
        let mut allocation = allocator.lock().map_err(|_| ContextError::NoDevice("allocator mutex poisoned".into()))?.allocate(&desc)?;
        let bytes = std::mem::size_of_val(data);
        let mapped = allocation.mapped_slice_mut().ok_or(ContextError::Vulkan(vk::Result::ERROR_MEMORY_MAP_FAILED))?;
        // SAFETY: `data` is `bytes` long and `T: Copy` (plain data); `mapped` holds at least `size` >= `bytes`.
        let src = unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, bytes) };
        mapped[..bytes].copy_from_slice(src);
        // SAFETY: fresh allocation sized for this buffer; the buffer is unbound.
        let bound = unsafe { device.bind_buffer_memory(buffer, allocation.memory(), allocation.offset()) };
        out.allocation = Some(allocation);
        bound?;
        // CpuToGpu memory may not be coherent: flush what was written.
        let alloc = out.allocation.as_ref().expect("just stored");
        if !alloc.memory_properties().contains(vk::MemoryPropertyFlags::HOST_COHERENT) {
            // SAFETY: the memory is mapped; WHOLE_SIZE from the memory's start covers this block.
            let range = vk::MappedMemoryRange::default().memory(unsafe { alloc.memory() }).offset(0).size(vk::WHOLE_SIZE);
            // SAFETY: as above.
            unsafe { device.flush_mapped_memory_ranges(&[range]) }?;
        }
        Ok(out)
    }
}

impl HostBuffer {
    /// Writes `data` at byte `offset`. The GPU must not be reading that range right now
    /// (per-frame buffers are rewritten only after their frame's fence).
    pub fn write<T: Copy>(&mut self, offset: u64, data: &[T]) -> Result<(), ContextError> {
        let bytes = std::mem::size_of_val(data);
        let alloc = self.allocation.as_mut().ok_or(ContextError::Vulkan(vk::Result::ERROR_MEMORY_MAP_FAILED))?;
        let mapped = alloc.mapped_slice_mut().ok_or(ContextError::Vulkan(vk::Result::ERROR_MEMORY_MAP_FAILED))?;
        let start = offset as usize;
        let end = start.checked_add(bytes).filter(|&e| e <= self.size as usize).ok_or(ContextError::Vulkan(vk::Result::ERROR_OUT_OF_HOST_MEMORY))?;
        // SAFETY: `data` is `bytes` long and plain `Copy` data.
        let src = unsafe { std::slice::from_raw_parts(data.as_ptr() as *const u8, bytes) };
        mapped[start..end].copy_from_slice(src);
        if !alloc.memory_properties().contains(vk::MemoryPropertyFlags::HOST_COHERENT) {
            // SAFETY: the memory is mapped; WHOLE_SIZE from 0 covers the block.
            let range = vk::MappedMemoryRange::default().memory(unsafe { alloc.memory() }).offset(0).size(vk::WHOLE_SIZE);
            // SAFETY: as above.
            unsafe { self.device.flush_mapped_memory_ranges(&[range]) }?;
        }
        Ok(())
    }
}

impl HostBuffer {
    /// The buffer's bytes as the GPU last wrote them. The writing work must have completed.
    pub fn read_bytes(&self) -> Result<Vec<u8>, ContextError> {
        let alloc = self.allocation.as_ref().ok_or(ContextError::Vulkan(vk::Result::ERROR_MEMORY_MAP_FAILED))?;
        if !alloc.memory_properties().contains(vk::MemoryPropertyFlags::HOST_COHERENT) {
            // SAFETY: the memory is mapped; WHOLE_SIZE from 0 covers the block.
            let range = vk::MappedMemoryRange::default().memory(unsafe { alloc.memory() }).offset(0).size(vk::WHOLE_SIZE);
            // SAFETY: as above.
            unsafe { self.device.invalidate_mapped_memory_ranges(&[range]) }?;
        }
        let mapped = alloc.mapped_slice().ok_or(ContextError::Vulkan(vk::Result::ERROR_MEMORY_MAP_FAILED))?;
        Ok(mapped[..self.size as usize].to_vec())
    }
}

impl Drop for HostBuffer {
    fn drop(&mut self) {
        // SAFETY: users drop buffers only after the GPU is done with them.
        unsafe { self.device.destroy_buffer(self.buffer, None) };
        if let (Some(a), Ok(mut alloc)) = (self.allocation.take(), self.allocator.lock()) {
            let _ = alloc.free(a);
        }
    }
}
