//! GPU objects the picker creates, each freeing itself on drop: buffers and images from the
//! host's (or the picker's own) gpu-allocator, with a debug name when the host enabled
//! `VK_EXT_debug_utils`. Every allocation is dedicated, so the memory the picker holds is
//! exactly what its resources require.

use crate::error::{PickError, Requirement};
use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme, Allocator, AllocatorCreateDesc};
use gpu_allocator::MemoryLocation;
use std::ffi::CString;
use std::sync::{Arc, Mutex, MutexGuard};

/// The device and allocator every picker object is made from and freed through.
#[derive(Clone)]
pub(crate) struct Memory {
    pub device: ash::Device,
    /// The host's pipeline cache for every pipeline the picker builds (null: none).
    pub pipeline_cache: vk::PipelineCache,
    allocator: Arc<Mutex<Allocator>>,
    debug_utils: Option<ash::ext::debug_utils::Device>,
}

impl Memory {
    /// The host's allocator, or one of the picker's own.
    ///
    /// # Safety
    /// `device` was created from `physical_device` of `instance`; a shared allocator was made
    /// for this device; all of them outlive every object made from this `Memory`.
    pub unsafe fn new(
        instance: &ash::Instance,
        device: &ash::Device,
        physical_device: vk::PhysicalDevice,
        shared: Option<&Arc<Mutex<Allocator>>>,
        debug_utils: bool,
    ) -> Result<Self, PickError> {
        let allocator = match shared {
            Some(shared) => shared.clone(),
            None => Arc::new(Mutex::new(Allocator::new(&AllocatorCreateDesc {
                instance: instance.clone(),
                device: device.clone(),
                physical_device,
                debug_settings: Default::default(),
                buffer_device_address: false,
                allocation_sizes: Default::default(),
            })?)),
        };
        // Debug names only where the host says it enabled VK_EXT_debug_utils: a validation
        // layer hands out the entry point either way, and reports its use without the
        // extension.
        // SAFETY: the device belongs to the instance (the caller's contract); the name is a
        // NUL-terminated string.
        let set_name = debug_utils.then(|| unsafe { instance.get_device_proc_addr(device.handle(), c"vkSetDebugUtilsObjectNameEXT".as_ptr()) }).flatten();
        let debug_utils = set_name.map(|_| ash::ext::debug_utils::Device::new(instance, device));
        Ok(Memory { device: device.clone(), pipeline_cache: vk::PipelineCache::null(), allocator, debug_utils })
    }

    fn lock(&self) -> Result<MutexGuard<'_, Allocator>, PickError> {
        self.allocator.lock().map_err(|_| PickError::AllocatorPoisoned)
    }

    /// Names `handle` for validation messages and captures; a no-op without debug utils.
    pub fn name<H: vk::Handle>(&self, handle: H, name: &str) {
        let Some(utils) = &self.debug_utils else { return };
        let Ok(name) = CString::new(format!("picking-vk {name}")) else { return };
        let info = vk::DebugUtilsObjectNameInfoEXT::default().object_handle(handle).object_name(&name);
        // SAFETY: `handle` is a live object of this device; `info` outlives the call.
        if let Err(e) = unsafe { utils.set_debug_utils_object_name(&info) } {
            log::debug!("picking-vk: naming {name:?} failed: {e}");
        }
    }

    fn allocate(&self, name: &str, requirements: vk::MemoryRequirements, location: MemoryLocation, scheme: AllocationScheme) -> Result<Allocation, PickError> {
        let linear = matches!(scheme, AllocationScheme::DedicatedBuffer(_));
        let desc = AllocationCreateDesc { name, requirements, location, linear, allocation_scheme: scheme };
        Ok(self.lock()?.allocate(&desc)?)
    }

    fn free(&self, allocation: Allocation) {
        match self.lock() {
            Ok(mut allocator) => {
                if let Err(e) = allocator.free(allocation) {
                    log::error!("picking-vk: freeing GPU memory failed: {e}");
                }
            }
            Err(_) => log::error!("picking-vk: allocator mutex poisoned; leaking one allocation"),
        }
    }
}

/// A buffer with its dedicated memory; destroyed on drop (the GPU must be done with it).
pub(crate) struct GpuBuffer {
    memory: Memory,
    pub buffer: vk::Buffer,
    allocation: Option<Allocation>,
}

impl GpuBuffer {
    /// A buffer of `size` bytes; host-visible locations come back persistently mapped.
    pub fn new(memory: &Memory, name: &str, size: u64, usage: vk::BufferUsageFlags, location: MemoryLocation) -> Result<Self, PickError> {
        let info = vk::BufferCreateInfo::default().size(size).usage(usage).sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: valid create info on a live device.
        let buffer = unsafe { memory.device.create_buffer(&info, None) }?;
        // From here on, `Drop` releases whatever was made.
        let mut out = GpuBuffer { memory: memory.clone(), buffer, allocation: None };
        // SAFETY: `buffer` was just created on this device.
        let requirements = unsafe { memory.device.get_buffer_memory_requirements(buffer) };
        let allocation = out.allocation.insert(memory.allocate(name, requirements, location, AllocationScheme::DedicatedBuffer(buffer))?);
        // SAFETY: the allocation is fresh, large enough and unbound; the buffer is unbound.
        unsafe { memory.device.bind_buffer_memory(buffer, allocation.memory(), allocation.offset()) }?;
        if location != MemoryLocation::GpuOnly && allocation.mapped_ptr().is_none() {
            return Err(not_mapped());
        }
        memory.name(buffer, name);
        Ok(out)
    }

    pub fn bytes(&self) -> u64 {
        self.allocation.as_ref().map_or(0, Allocation::size)
    }

    /// Whether host writes reach the device without a flush.
    pub fn is_coherent(&self) -> bool {
        self.allocation.as_ref().is_some_and(|a| a.memory_properties().contains(vk::MemoryPropertyFlags::HOST_COHERENT))
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

    /// The mapped bytes, for writing data the GPU will read. Host-visible buffers only.
    pub fn mapped_mut(&mut self) -> Option<&mut [u8]> {
        self.allocation.as_mut()?.mapped_slice_mut()
    }

    /// Makes host writes through [`GpuBuffer::mapped_mut`] visible to the device (a no-op on
    /// coherent memory).
    pub fn flush(&self) -> Result<(), PickError> {
        let Some(allocation) = self.allocation.as_ref().filter(|_| !self.is_coherent()) else { return Ok(()) };
        // SAFETY: the allocation is mapped and dedicated, so the whole memory object (from
        // offset 0, WHOLE_SIZE: always atom-aligned) is this buffer's.
        let range = vk::MappedMemoryRange::default().memory(unsafe { allocation.memory() }).offset(0).size(vk::WHOLE_SIZE);
        // SAFETY: as above.
        Ok(unsafe { self.memory.device.flush_mapped_memory_ranges(&[range]) }?)
    }

    /// Copies `out.len()` bytes from `offset` out of the mapped memory, invalidating
    /// `offset..offset + invalidate` first where memory is not coherent. No reference to the
    /// rest of the mapping is formed, so the GPU may be writing other parts meanwhile.
    ///
    /// # Safety
    /// The GPU work that last wrote those bytes has completed and made them host-visible;
    /// `offset` and `invalidate` are multiples of the non-coherent atom size (or `invalidate`
    /// reaches the end of the buffer).
    pub unsafe fn read_range(&self, offset: u64, invalidate: u64, out: &mut [u8]) -> Result<(), PickError> {
        let allocation = self.allocation.as_ref().ok_or_else(not_mapped)?;
        let end =
            offset.checked_add(out.len() as u64).filter(|&e| e <= allocation.size()).ok_or(PickError::Internal("a read past the end of a staging buffer"))?;
        let ptr = allocation.mapped_ptr().ok_or_else(not_mapped)?;
        if !self.is_coherent() {
            let size = invalidate.max(end - offset).min(allocation.size() - offset);
            // SAFETY: the allocation is dedicated and mapped; the caller keeps the range
            // atom-aligned.
            let range = vk::MappedMemoryRange::default().memory(unsafe { allocation.memory() }).offset(offset).size(size);
            // SAFETY: as above; the caller guarantees the GPU is done writing these bytes.
            unsafe { self.memory.device.invalidate_mapped_memory_ranges(&[range]) }?;
        }
        // SAFETY: `offset..end` lies inside the mapping (checked above) and the GPU no longer
        // writes it (the caller's contract); `out` is a distinct, writable Rust buffer.
        unsafe { std::ptr::copy_nonoverlapping(ptr.as_ptr().cast::<u8>().add(offset as usize), out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    /// The mapped bytes as the GPU last wrote them (non-coherent memory is invalidated first).
    ///
    /// # Safety
    /// The GPU work that last wrote the buffer has completed and the copy made it host-visible.
    pub unsafe fn host_bytes(&self) -> Result<&[u8], PickError> {
        let allocation = self.allocation.as_ref().ok_or_else(not_mapped)?;
        if !self.is_coherent() {
            // SAFETY: the allocation is mapped and dedicated, so the whole memory object (from
            // offset 0, WHOLE_SIZE: always atom-aligned) is this buffer's.
            let range = vk::MappedMemoryRange::default().memory(unsafe { allocation.memory() }).offset(0).size(vk::WHOLE_SIZE);
            // SAFETY: as above; the caller guarantees the GPU is done writing.
            unsafe { self.memory.device.invalidate_mapped_memory_ranges(&[range]) }?;
        }
        allocation.mapped_slice().ok_or_else(not_mapped)
    }
}

impl Drop for GpuBuffer {
    fn drop(&mut self) {
        // SAFETY: the owner's contract says the GPU no longer uses the buffer.
        unsafe { self.memory.device.destroy_buffer(self.buffer, None) };
        if let Some(allocation) = self.allocation.take() {
            self.memory.free(allocation);
        }
    }
}

/// Host-visible buffers are checked to be mapped when created; reading one that is not (a
/// device-local buffer) is this error.
fn not_mapped() -> PickError {
    PickError::Unsupported { missing: vec![Requirement::Memory("host-visible, persistently mapped memory for the picker's buffers")] }
}

/// The native-endian `u32` at byte `at`.
pub(crate) fn word_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

/// A 2D image with its dedicated memory and a view; destroyed on drop.
pub(crate) struct GpuImage {
    memory: Memory,
    pub image: vk::Image,
    pub view: vk::ImageView,
    allocation: Option<Allocation>,
}

impl GpuImage {
    pub fn new(
        memory: &Memory,
        name: &str,
        format: vk::Format,
        extent: vk::Extent2D,
        usage: vk::ImageUsageFlags,
        aspect: vk::ImageAspectFlags,
    ) -> Result<Self, PickError> {
        // SAFETY: a plain image create info on a live device.
        let image = unsafe { memory.device.create_image(&image_info(format, extent, usage), None) }?;
        // From here on, `Drop` releases whatever was made.
        let mut out = GpuImage { memory: memory.clone(), image, view: vk::ImageView::null(), allocation: None };
        // SAFETY: `image` was just created on this device.
        let requirements = unsafe { memory.device.get_image_memory_requirements(image) };
        let allocation = out.allocation.insert(memory.allocate(name, requirements, MemoryLocation::GpuOnly, AllocationScheme::DedicatedImage(image))?);
        // SAFETY: fresh allocation sized by the image's requirements; the image is unbound.
        unsafe { memory.device.bind_image_memory(image, allocation.memory(), allocation.offset()) }?;
        let view_info = vk::ImageViewCreateInfo::default()
            .image(image)
            .view_type(vk::ImageViewType::TYPE_2D)
            .format(format)
            .subresource_range(vk::ImageSubresourceRange { aspect_mask: aspect, base_mip_level: 0, level_count: 1, base_array_layer: 0, layer_count: 1 });
        // SAFETY: the image is live and bound to memory.
        out.view = unsafe { memory.device.create_image_view(&view_info, None) }?;
        memory.name(image, name);
        memory.name(out.view, name);
        Ok(out)
    }

    pub fn bytes(&self) -> u64 {
        self.allocation.as_ref().map_or(0, Allocation::size)
    }
}

impl Drop for GpuImage {
    fn drop(&mut self) {
        // SAFETY: the owner's contract says the GPU no longer uses them; null is ignored.
        unsafe {
            self.memory.device.destroy_image_view(self.view, None);
            self.memory.device.destroy_image(self.image, None);
        }
        if let Some(allocation) = self.allocation.take() {
            self.memory.free(allocation);
        }
    }
}

/// The create info of a single-sample, optimal-tiling 2D image.
pub(crate) fn image_info(format: vk::Format, extent: vk::Extent2D, usage: vk::ImageUsageFlags) -> vk::ImageCreateInfo<'static> {
    vk::ImageCreateInfo::default()
        .image_type(vk::ImageType::TYPE_2D)
        .format(format)
        .extent(vk::Extent3D { width: extent.width, height: extent.height, depth: 1 })
        .mip_levels(1)
        .array_layers(1)
        .samples(vk::SampleCountFlags::TYPE_1)
        .tiling(vk::ImageTiling::OPTIMAL)
        .usage(usage)
        .sharing_mode(vk::SharingMode::EXCLUSIVE)
        .initial_layout(vk::ImageLayout::UNDEFINED)
}

/// A Vulkan object destroyed on drop by `destroy` (render passes, framebuffers, query pools...).
pub(crate) struct Owned<H: Copy> {
    device: ash::Device,
    pub handle: H,
    destroy: unsafe fn(&ash::Device, H),
}

impl<H: Copy> Owned<H> {
    /// # Safety
    /// `handle` is a live object of `device` that nothing else destroys, and `destroy` is its
    /// destructor.
    pub unsafe fn new(device: &ash::Device, handle: H, destroy: unsafe fn(&ash::Device, H)) -> Self {
        Owned { device: device.clone(), handle, destroy }
    }
}

impl<H: Copy> Drop for Owned<H> {
    fn drop(&mut self) {
        // SAFETY: `new`'s contract; the owner's contract says the GPU no longer uses it.
        unsafe { (self.destroy)(&self.device, self.handle) };
    }
}
