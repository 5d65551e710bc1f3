//! Device-local images with a view, for the viewer's render targets and tools.

use crate::owner::DeviceOwner;
use crate::ContextError;
use ash::vk;
use gpu_allocator::vulkan::{Allocation, AllocationCreateDesc, AllocationScheme};
use gpu_allocator::MemoryLocation;
use std::sync::Arc;

/// A 2D image, its memory and a view, freed on drop. It keeps the device alive.
pub struct DeviceImage {
    owner: Arc<DeviceOwner>,
    pub image: vk::Image,
    pub view: vk::ImageView,
    pub format: vk::Format,
    pub extent: vk::Extent2D,
    allocation: Option<Allocation>,
}

impl DeviceImage {
    pub(crate) fn new(
        owner: &Arc<DeviceOwner>,
        format: vk::Format,
        extent: vk::Extent2D,
        usage: vk::ImageUsageFlags,
        aspect: vk::ImageAspectFlags,
    ) -> Result<Self, ContextError> {
        let device = &owner.device;
        let info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(format)
            .extent(vk::Extent3D { width: extent.width, height: extent.height, depth: 1 })
            .mip_levels(1)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(usage)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        // SAFETY: valid create info on a live device.
        let image = unsafe { device.create_image(&info, None) }?;
        let mut out = DeviceImage { owner: owner.clone(), image, view: vk::ImageView::null(), format, extent, allocation: None };
        // SAFETY: `image` is live.
        let requirements = unsafe { device.get_image_memory_requirements(image) };
        let desc = AllocationCreateDesc {
            name: "picking-vk-context image",
            requirements,
            location: MemoryLocation::GpuOnly,
            linear: false,
            allocation_scheme: AllocationScheme::DedicatedImage(image),
        };
        let allocation = owner.lock_allocator()?.allocate(&desc)?;
        // SAFETY: fresh dedicated allocation for this unbound image.
        let bound = unsafe { device.bind_image_memory(image, allocation.memory(), allocation.offset()) };
        out.allocation = Some(allocation);
        bound?;
        let view_info = vk::ImageViewCreateInfo::default()
            .image(image)
            .view_type(vk::ImageViewType::TYPE_2D)
            .format(format)
            .subresource_range(vk::ImageSubresourceRange { aspect_mask: aspect, base_mip_level: 0, level_count: 1, base_array_layer: 0, layer_count: 1 });
        // SAFETY: the image is live and bound.
        out.view = unsafe { device.create_image_view(&view_info, None) }?;
        Ok(out)
    }
}

impl Drop for DeviceImage {
    fn drop(&mut self) {
        // SAFETY: users drop images only after the GPU is done with them; null is ignored; the
        // owner keeps the device alive until then.
        unsafe {
            self.owner.device.destroy_image_view(self.view, None);
            self.owner.device.destroy_image(self.image, None);
        }
        if let (Some(a), Ok(mut alloc)) = (self.allocation.take(), self.owner.lock_allocator()) {
            let _ = alloc.free(a);
        }
    }
}
