//! The host contract: the device the host hands in ([`HostDevice`]), what it enabled for
//! picking ([`features`]), and how the picker is set up ([`config`]).

pub(crate) mod config;
pub(crate) mod features;

use crate::draw::DrawLimits;
use ash::vk;
use features::PickFeatures;
use gpu_allocator::vulkan::Allocator;
use std::sync::{Arc, Mutex};

/// The host's Vulkan objects the picker works with.
#[derive(Clone)]
#[non_exhaustive]
pub struct HostDevice<'a> {
    /// The host's instance.
    pub instance: &'a ash::Instance,
    /// The `apiVersion` the instance was created with (`VkApplicationInfo::apiVersion`).
    pub instance_api_version: u32,
    /// The host's device, created from `physical_device`.
    pub device: &'a ash::Device,
    /// The physical device `device` was created from.
    pub physical_device: vk::PhysicalDevice,
    /// Family of the queue the host submits pick command buffers to; it must support graphics
    /// and compute (and timestamps where `PickerConfig::timestamps` asks).
    pub queue_family_index: u32,
    /// The host's allocator to share; `None` makes the picker create its own.
    pub allocator: Option<Arc<Mutex<Allocator>>>,
    /// What the host enabled for picking at device creation: the
    /// [`crate::DeviceFeatures::features`] it added to `vkCreateDevice`.
    pub features: PickFeatures,
    /// The core features the host created its device with (`VkDeviceCreateInfo::
    /// pEnabledFeatures`, or `VkPhysicalDeviceFeatures2::features` in its chain). When given,
    /// [`crate::Picker::new`] refuses [`HostDevice::features`] whose core features it lacks
    /// (a forgotten [`crate::DeviceFeatures::enable_core`]); when `None`, the claim is the
    /// host's, under `Picker::new`'s contract.
    pub enabled_core: Option<vk::PhysicalDeviceFeatures>,
    /// The host's `VkPipelineCache`, used for every pipeline the picker builds (null: none).
    /// The host keeps it alive as long as the picker, and must not use it from another
    /// thread while calling the picker (Vulkan's external synchronization of the cache).
    pub pipeline_cache: vk::PipelineCache,
    /// Whether the host's instance enabled `VK_EXT_debug_utils`: the picker then names its
    /// objects for validation messages and captures. Off by default: a validation layer
    /// offers the entry point even where the extension is off, and calling it there is an
    /// error.
    pub debug_utils: bool,
}

impl<'a> HostDevice<'a> {
    /// The host's device, with no optional picking features and the picker's own allocator.
    /// `instance_api_version` is the `apiVersion` the instance was created with.
    pub fn new(
        instance: &'a ash::Instance,
        instance_api_version: u32,
        device: &'a ash::Device,
        physical_device: vk::PhysicalDevice,
        queue_family_index: u32,
    ) -> Self {
        HostDevice {
            instance,
            instance_api_version,
            device,
            physical_device,
            queue_family_index,
            allocator: None,
            features: PickFeatures::NONE,
            enabled_core: None,
            pipeline_cache: vk::PipelineCache::null(),
            debug_utils: false,
        }
    }

    /// Shares the host's allocator (created for this same device).
    pub fn with_allocator(mut self, allocator: Arc<Mutex<Allocator>>) -> Self {
        self.allocator = Some(allocator);
        self
    }

    /// Builds the picker's pipelines through the host's `VkPipelineCache` (see
    /// [`HostDevice::pipeline_cache`]).
    pub fn with_pipeline_cache(mut self, cache: vk::PipelineCache) -> Self {
        self.pipeline_cache = cache;
        self
    }

    /// The shader stages the device was created without (geometry, tessellation), where the
    /// host said which core features it enabled; none known otherwise.
    pub(crate) fn disabled_stages(&self) -> vk::PipelineStageFlags {
        self.enabled_core.as_ref().map_or(vk::PipelineStageFlags::empty(), crate::host::features::disabled_stages)
    }

    /// What draws may do on this device with the features the host enabled.
    pub(crate) fn draw_limits(&self, limits: &vk::PhysicalDeviceLimits) -> DrawLimits {
        DrawLimits {
            max_stride: limits.max_vertex_input_binding_stride,
            multi_draw_indirect: self.features.contains(PickFeatures::BATCHING),
            indirect_count: self.features.contains(PickFeatures::INDIRECT_COUNT),
            max_storage_range: limits.max_storage_buffer_range,
            max_draw_indirect_count: limits.max_draw_indirect_count,
            deformation: limits.max_push_constants_size >= crate::draw::deform::DEFORM_PUSH_BYTES,
            wide_lines: self.features.contains(PickFeatures::WIDE_LINES),
        }
    }

    /// Sets [`HostDevice::debug_utils`]: the instance enabled `VK_EXT_debug_utils`.
    pub fn with_debug_utils(mut self, enabled: bool) -> Self {
        self.debug_utils = enabled;
        self
    }

    /// The features the host enabled through [`crate::DeviceFeatures`].
    pub fn with_features(mut self, features: PickFeatures) -> Self {
        self.features = features;
        self
    }

    /// Sets [`HostDevice::enabled_core`]: the core features the device was created with.
    pub fn with_enabled_core(mut self, enabled: vk::PhysicalDeviceFeatures) -> Self {
        self.enabled_core = Some(enabled);
        self
    }
}
