//! Images and buffers from the host's (or the picker's own) gpu-allocator. Every allocation is
//! dedicated, so the memory the picker holds is exactly what its resources require.

use crate::error::PickError;
use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme, Allocator};
use gpu_allocator::MemoryLocation;
use std::sync::{Arc, Mutex};

/// The allocator the picker draws from.
#[derive(Clone)]
pub(crate) struct Memory {
    pub device: ash::Device,
    pub allocator: Arc<Mutex<Allocator>>,
}

/// A buffer with its memory.
pub(crate) struct GpuBuffer {
    pub buffer: vk::Buffer,
    pub allocation: Option<Allocation>,
}

/// An image with its memory and a view of it.
pub(crate) struct GpuImage {
    pub image: vk::Image,
    pub view: vk::ImageView,
    pub allocation: Option<Allocation>,
}

impl Memory {
    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Allocator>, PickError> {
        self.allocator.lock().map_err(|_| PickError::AllocatorPoisoned)
    }

    pub fn create_buffer(&self, name: &str, size: u64, usage: vk::BufferUsageFlags, location: MemoryLocation) -> Result<GpuBuffer, PickError> {
        let info = vk::BufferCreateInfo::default().size(size).usage(usage).sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid create info on a live device.
        let buffer = unsafe { self.device.create_buffer(&info, None) }?;
        let mut out = GpuBuffer { buffer, allocation: None };
        // SAFETY: `buffer` was just created on this device.
        let requirements = unsafe { self.device.get_buffer_memory_requirements(buffer) };
        let allocation = self.allocate(name, requirements, location, true, AllocationScheme::DedicatedBuffer(buffer));
        let allocation = match allocation {
            Ok(a) => a,
            Err(e) => {
                self.destroy_buffer(&mut out);
                return Err(e);
            }
        };
        // SAFETY: the allocation is fresh, large enough and unbound; the buffer is unbound.
        let bound = unsafe { self.device.bind_buffer_memory(buffer, allocation.memory(), allocation.offset()) };
        out.allocation = Some(allocation);
        if let Err(e) = bound {
            self.destroy_buffer(&mut out);
            return Err(e.into());
        }
        Ok(out)
    }

    pub fn create_image(
        &self,
        name: &str,
        format: vk::Format,
        extent: vk::Extent2D,
        usage: vk::ImageUsageFlags,
        aspect: vk::ImageAspectFlags,
    ) -> Result<GpuImage, PickError> {
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(format)
            .extent(vk::Extent3D { width: extent.width, height: extent.height, depth: 1 })
            .mip_levels(1)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        // SAFETY: valid create info on a live device.
        let image = unsafe { self.device.create_image(&info, None) }?;
        let mut out = GpuImage { image, view: vk::ImageView::null(), allocation: None };
        // SAFETY: `image` was just created on this device.
        let requirements = unsafe { self.device.get_image_memory_requirements(image) };
        let allocation = match self.allocate(name, requirements, MemoryLocation::GpuOnly, false, AllocationScheme::DedicatedImage(image)) {
            Ok(a) => a,
            Err(e) => {
                self.destroy_image(&mut out);
                return Err(e);
            }
        };
        // SAFETY: fresh allocation sized by the image's requirements; the image is unbound. The
        // memory outlives the image: both are released together in `destroy_image`.
        let bound = unsafe { self.device.bind_image_memory(image, allocation.memory(), allocation.offset()) };
        out.allocation = Some(allocation);
        if let Err(e) = bound {
            self.destroy_image(&mut out);
            return Err(e.into());
        }
        let view_info = vk::ImageViewCreateInfo::default()
            .image(image)
            .view_type(vk::ImageViewType::TYPE_2D)
            .format(format)
            .subresource_range(vk::ImageSubresourceRange { aspect_mask: aspect, base_mip_level: 0, level_count: 1, base_array_layer: 0, layer_count: 1 });
        // SAFETY: the image is live and bound to memory.
        match unsafe { self.device.create_image_view(&view_info, None) } {
            Ok(view) => out.view = view,
            Err(e) => {
                self.destroy_image(&mut out);
                return Err(e.into());
            }
        }
        Ok(out)
    }

    fn allocate(
        &self,
        name: &str,
        requirements: vk::MemoryRequirements,
        location: MemoryLocation,
        linear: bool,
        scheme: AllocationScheme,
    ) -> Result<Allocation, PickError> {
        let desc = AllocationCreateDesc { name, requirements, location, linear, allocation_scheme: scheme };
        Ok(self.lock()?.allocate(&desc)?)
    }

    fn free(&self, allocation: Option<Allocation>) {
        if let Some(a) = allocation {
            match self.lock() {
                Ok(mut alloc) => {
                    if let Err(e) = alloc.free(a) {
                        log::error!("picking-vk: freeing GPU memory failed: {e}");
                    }
                }
                Err(_) => log::error!("picking-vk: allocator mutex poisoned; leaking one allocation"),
            }
        }
    }

    /// Destroys the buffer and frees its memory. The GPU must be done with it.
    pub fn destroy_buffer(&self, b: &mut GpuBuffer) {
        // SAFETY: the caller guarantees the GPU no longer uses the buffer; null is ignored.
        unsafe { self.device.destroy_buffer(b.buffer, None) };
        b.buffer = vk::Buffer::null();
        self.free(b.allocation.take());
    }

    /// Destroys the view and image and frees the memory. The GPU must be done with them.
    pub fn destroy_image(&self, i: &mut GpuImage) {
        // SAFETY: the caller guarantees the GPU no longer uses them; null handles are ignored.
        unsafe {
            self.device.destroy_image_view(i.view, None);
            self.device.destroy_image(i.image, None);
        }
        i.view = vk::ImageView::null();
        i.image = vk::Image::null();
        self.free(i.allocation.take());
    }
}

impl GpuBuffer {
    pub fn bytes(&self) -> u64 {
        self.allocation.as_ref().map_or(0, |a| a.size())
    }

    /// A memory barrier over `offset..offset + size` of this buffer.
    pub fn barrier(&self, src: vk::AccessFlags, dst: vk::AccessFlags, offset: u64, size: u64) -> vk::BufferMemoryBarrier<'static> {
        vk::BufferMemoryBarrier::default()
            .src_access_mask(src)
            .dst_access_mask(dst)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .buffer(self.buffer)
            .offset(offset)
            .size(size)
    }

    /// The mapped bytes as the GPU last wrote them (non-coherent memory is invalidated first).
    ///
    /// # Safety
    /// The GPU work that last wrote the buffer has completed and the copy made it host-visible.
    pub unsafe fn host_bytes(&self, device: &ash::Device) -> Result<&[u8], PickError> {
        let allocation = self.allocation.as_ref().ok_or(PickError::Vulkan(vk::Result::ERROR_MEMORY_MAP_FAILED))?;
        if !allocation.memory_properties().contains(vk::MemoryPropertyFlags::HOST_COHERENT) {
            // SAFETY: the allocation is mapped and dedicated, so the whole memory object (from
            // offset 0, WHOLE_SIZE: always atom-aligned) is this buffer's.
            let range = vk::MappedMemoryRange::default().memory(unsafe { allocation.memory() }).offset(0).size(vk::WHOLE_SIZE);
            // SAFETY: as above; the caller guarantees the GPU is done writing.
            unsafe { device.invalidate_mapped_memory_ranges(&[range]) }?;
        }
        allocation.mapped_slice().ok_or(PickError::Vulkan(vk::Result::ERROR_MEMORY_MAP_FAILED))
    }
}

/// The native-endian `u32` at byte `at`.
pub(crate) fn word_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

impl GpuImage {
    pub fn bytes(&self) -> u64 {
        self.allocation.as_ref().map_or(0, |a| a.size())
    }
}
