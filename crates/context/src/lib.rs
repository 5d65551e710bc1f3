//! A small standalone Vulkan context for picking-vk's tests, tools and viewer: instance with
//! the Khronos validation layer (and synchronization validation) when asked, a messenger that
//! records every warning and error, a device with what the picker can use, and helpers to
//! upload buffers and run one-off command buffers. Engines bring their own device instead.
//!
//! The device, its allocator and the instance belong to a shared owner that the context and
//! every buffer, image and command-buffer set it made hold: whatever is dropped first, the
//! device goes last.

mod buffers;
mod commands;
mod images;
mod messages;
mod owner;
mod textures;

pub use buffers::HostBuffer;
pub use commands::CommandBuffers;
pub use images::DeviceImage;
pub use messages::ValidationLog;
pub use textures::{Sampler, Texture, TextureSets};

use ash::vk;
use commands::Pool;
use gpu_allocator::vulkan::{Allocator, AllocatorCreateDesc};
use owner::DeviceOwner;
use picking_vk::{HostDevice, PickFeatures, PickSupport};
use std::ffi::{CStr, CString};
use std::sync::{Arc, Mutex};

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";
/// The Vulkan version the context's instance asks for.
/// The Vulkan version asked for by default: 1.2, where dynamic rendering is an extension.
pub const DEFAULT_API_VERSION: u32 = vk::API_VERSION_1_2;

#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    #[error("could not load the Vulkan loader: {0}")]
    Loading(#[from] ash::LoadingError),
    #[error("Vulkan call failed: {0}")]
    Vulkan(#[from] vk::Result),
    #[error("GPU memory allocation failed: {0}")]
    Alloc(#[from] gpu_allocator::AllocationError),
    #[error("no usable Vulkan device: {0}")]
    NoDevice(String),
    #[error("validation was requested but {0} is not installed")]
    NoValidationLayer(String),
    #[error("the {0} lock was poisoned by a panic while it was held")]
    LockPoisoned(&'static str),
    #[error("invalid input: {0}")]
    Invalid(String),
}

/// What the context should set up.
#[derive(Clone, Debug)]
pub struct ContextOptions {
    /// Enable `VK_LAYER_KHRONOS_validation` and record its messages.
    pub validation: bool,
    /// With validation: turn on synchronization validation too.
    pub sync_validation: bool,
    /// Enable the detail attachment's extension and features when the device offers them.
    pub want_detail: bool,
    /// Extra instance extensions (a window surface's, for example).
    pub instance_extensions: Vec<CString>,
    /// Extra device extensions (`VK_KHR_swapchain`, for example).
    pub device_extensions: Vec<CString>,
    /// The instance's `apiVersion` (default [`DEFAULT_API_VERSION`]).
    pub api_version: u32,
    /// Enable timeline semaphores through `VkPhysicalDeviceTimelineSemaphoreFeatures` in the
    /// device's chain, as many engines do: a structure promoted to Vulkan 1.2, beside which
    /// picking's own must not bring `VkPhysicalDeviceVulkan12Features`.
    pub timeline_semaphores: bool,
    /// With validation: let the layer wrap handles in unique values of its own (the default).
    /// `false` passes the driver's handles through, so a destroyed object's handle value is
    /// handed out again as the driver does it (a test of handle reuse needs that).
    pub unique_handles: bool,
}

impl Default for ContextOptions {
    fn default() -> Self {
        ContextOptions {
            validation: true,
            sync_validation: true,
            want_detail: true,
            instance_extensions: vec![],
            device_extensions: vec![],
            api_version: DEFAULT_API_VERSION,
            timeline_semaphores: false,
            unique_handles: true,
        }
    }
}

/// Instance, device, queue and allocator, with helpers for buffers, images and command buffers.
pub struct VulkanContext {
    /// A copy of the function table; the owner keeps the instance alive.
    pub instance: ash::Instance,
    pub physical_device: vk::PhysicalDevice,
    /// A copy of the function table; the owner keeps the device alive (while this context or
    /// anything it made lives).
    pub device: ash::Device,
    pub queue_family_index: u32,
    /// Vulkan requires external synchronization of submissions: `run_once` submits under its
    /// lock, so do not submit from another thread while a `run_once` may run.
    pub queue: vk::Queue,
    /// `run_once`'s pool; the lock serializes its use and `run_once`'s submissions.
    pool: Mutex<Pool>,
    /// What the physical device offers toward picking.
    pub picking_support: PickSupport,
    /// What was enabled for picking on `device`: batching whenever offered, detail when
    /// offered and wanted.
    pub picking_features: PickFeatures,
    pub device_name: String,
    pub properties: vk::PhysicalDeviceProperties,
    /// Whether `pipelineStatisticsQuery` is enabled (wherever the device offers it): tests
    /// count the primitives a pass assembles with it.
    pub pipeline_statistics: bool,
    /// The core features the device was created with (handed to pickers, which check their
    /// features against them).
    pub enabled_core: vk::PhysicalDeviceFeatures,
    /// The instance's `apiVersion`.
    pub api_version: u32,
    /// Whether the instance enabled `VK_EXT_debug_utils` (with validation).
    pub debug_utils: bool,
    /// Whether the device enabled `VK_KHR_swapchain` (asked for in `device_extensions`).
    pub swapchain: bool,
    /// Owns the device, the allocator and the instance (dropped after the pools).
    owner: Arc<DeviceOwner>,
}

/// The instance and its debug messenger: destroyed last (by the owner, after the device).
pub(crate) struct InstanceBase {
    entry: ash::Entry,
    instance: ash::Instance,
    messenger: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    log: Option<ValidationLog>,
}

impl Drop for InstanceBase {
    fn drop(&mut self) {
        // SAFETY: the device and everything made from the instance are gone (see DeviceOwner's Drop).
        unsafe {
            if let Some((utils, messenger)) = self.messenger.take() {
                utils.destroy_debug_utils_messenger(messenger, None);
            }
            self.instance.destroy_instance(None);
        }
    }
}

impl VulkanContext {
    pub fn new(options: &ContextOptions) -> Result<Self, ContextError> {
        // SAFETY: loading the system Vulkan loader; its entry points are trusted.
        let entry = unsafe { ash::Entry::load() }?;
        let mut layers: Vec<*const i8> = vec![];
        let mut extensions: Vec<*const i8> = options.instance_extensions.iter().map(|e| e.as_ptr()).collect();
        let mut log = None;
        // VkValidationFeaturesEXT may be chained only when its extension is enabled.
        let mut has_validation_features = false;
        if options.validation {
            // SAFETY: plain enumeration on a loaded entry.
            let available = unsafe { entry.enumerate_instance_layer_properties() }?;
            if !available.iter().any(|l| l.layer_name_as_c_str() == Ok(VALIDATION_LAYER)) {
                return Err(ContextError::NoValidationLayer(VALIDATION_LAYER.to_string_lossy().into()));
            }
            layers.push(VALIDATION_LAYER.as_ptr());
            extensions.push(ash::ext::debug_utils::NAME.as_ptr());
            // SAFETY: as above.
            let layer_exts = unsafe { entry.enumerate_instance_extension_properties(Some(VALIDATION_LAYER)) }?;
            if layer_exts.iter().any(|e| e.extension_name_as_c_str() == Ok(ash::ext::validation_features::NAME)) {
                extensions.push(ash::ext::validation_features::NAME.as_ptr());
                has_validation_features = true;
            }
            log = Some(ValidationLog::default());
        }
        let app = vk::ApplicationInfo::default().application_name(c"picking-vk").api_version(options.api_version);
        let enabled_features = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION];
        let sync = if options.sync_validation { &enabled_features[..] } else { &[] };
        let disabled_features = [vk::ValidationFeatureDisableEXT::UNIQUE_HANDLES];
        let wrap = if options.unique_handles { &[][..] } else { &disabled_features[..] };
        let mut validation_features = vk::ValidationFeaturesEXT::default().enabled_validation_features(sync).disabled_validation_features(wrap);
        let mut messenger_info = messages::messenger_info();
        let mut instance_info = vk::InstanceCreateInfo::default().application_info(&app).enabled_layer_names(&layers).enabled_extension_names(&extensions);
        if let Some(log) = &log {
            messenger_info = messenger_info.user_data(log.user_data());
            // Chained so that messages during instance creation are recorded too.
            instance_info = instance_info.push_next(&mut messenger_info);
            if (options.sync_validation || !options.unique_handles) && has_validation_features {
                instance_info = instance_info.push_next(&mut validation_features);
            } else if options.sync_validation || !options.unique_handles {
                log::warn!("synchronization validation and driver handles need VK_EXT_validation_features, which the layer lacks");
            }
        }
        // SAFETY: every pointer in `instance_info` refers to locals alive for the call.
        let instance = unsafe { entry.create_instance(&instance_info, None) }?;
        let mut base = InstanceBase { entry, instance, messenger: None, log };
        if let Some(log) = &base.log {
            let debug_utils = ash::ext::debug_utils::Instance::new(&base.entry, &base.instance);
            let info = messages::messenger_info().user_data(log.user_data());
            // SAFETY: the log outlives the messenger (both owned by the context; the messenger goes first).
            let messenger = unsafe { debug_utils.create_debug_utils_messenger(&info, None) }?;
            base.messenger = Some((debug_utils, messenger));
        }
        Self::with_device(base, options)
    }

    /// The picker's view of this context's device.
    pub fn host_device(&self) -> HostDevice<'_> {
        HostDevice::new(&self.instance, self.api_version, &self.device, self.physical_device, self.queue_family_index)
            .with_allocator(self.allocator())
            .with_features(self.picking_features)
            .with_enabled_core(self.enabled_core)
            .with_debug_utils(self.debug_utils)
    }

    /// Validation messages recorded so far (warnings and errors), taken out of the log.
    pub fn take_validation_messages(&self) -> Vec<String> {
        self.owner.base().log.as_ref().map(ValidationLog::take).unwrap_or_default()
    }

    /// The validation log itself (with validation on): it stays readable after the context
    /// is dropped, so teardown can be checked too.
    pub fn validation_log(&self) -> Option<ValidationLog> {
        self.owner.base().log.clone()
    }

    /// Whether the validation layer is on.
    pub fn validation_enabled(&self) -> bool {
        self.owner.base().log.is_some()
    }

    /// Records `f` into a fresh command buffer, submits it and waits: for tests and tools, not
    /// for a per-frame path.
    pub fn run_once<R>(&self, f: impl FnOnce(vk::CommandBuffer) -> R) -> Result<R, ContextError> {
        // The pool and the queue need external synchronization: one `run_once` at a time.
        let pool = self.pool.lock().map_err(|_| ContextError::LockPoisoned("command pool"))?;
        let cmd = pool.allocate(1)?[0];
        let out = self.submit_and_wait(cmd, f);
        // SAFETY: the submission finished (or never happened); the lock is still held.
        unsafe { self.device.free_command_buffers(pool.pool, &[cmd]) };
        out
    }

    /// `count` primary command buffers in a command pool of their own, for a frame loop
    /// (one per frame in flight); see [`CommandBuffers`].
    pub fn command_buffers(&self, count: u32) -> Result<CommandBuffers, ContextError> {
        CommandBuffers::new(&self.owner, self.queue_family_index, count)
    }

    fn submit_and_wait<R>(&self, cmd: vk::CommandBuffer, f: impl FnOnce(vk::CommandBuffer) -> R) -> Result<R, ContextError> {
        let begin = vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: `cmd` is a fresh primary command buffer of this device.
        unsafe { self.device.begin_command_buffer(cmd, &begin) }?;
        let out = f(cmd);
        // SAFETY: as above.
        unsafe { self.device.end_command_buffer(cmd) }?;
        // SAFETY: plain fence creation.
        let fence = unsafe { self.device.create_fence(&vk::FenceCreateInfo::default(), None) }?;
        let cmds = [cmd];
        let submit = vk::SubmitInfo::default().command_buffers(&cmds);
        // SAFETY: `cmd` is executable; queue and fence belong to this device.
        let result = unsafe { self.device.queue_submit(self.queue, &[submit], fence).and_then(|_| self.device.wait_for_fences(&[fence], true, u64::MAX)) };
        // SAFETY: the fence is no longer in use once waited (or the submit failed).
        unsafe { self.device.destroy_fence(fence, None) };
        result?;
        Ok(out)
    }

    /// A host-visible buffer holding `data`, for tests and tools.
    pub fn upload<T: bytemuck::NoUninit>(&self, data: &[T], usage: vk::BufferUsageFlags) -> Result<HostBuffer, ContextError> {
        HostBuffer::new(&self.owner, data, usage)
    }

    /// The Vulkan loader entry points (for surface creation).
    pub fn entry(&self) -> &ash::Entry {
        &self.owner.base().entry
    }

    /// A device-local 2D image with a view.
    pub fn create_image(
        &self,
        format: vk::Format,
        extent: vk::Extent2D,
        usage: vk::ImageUsageFlags,
        aspect: vk::ImageAspectFlags,
    ) -> Result<DeviceImage, ContextError> {
        DeviceImage::new(&self.owner, format, extent, usage, aspect)
    }

    /// A zeroed host-visible buffer of `size` bytes (readback targets, per-frame data).
    pub fn host_buffer(&self, size: u64, usage: vk::BufferUsageFlags) -> Result<HostBuffer, ContextError> {
        HostBuffer::new(&self.owner, &vec![0u8; size as usize], usage)
    }

    /// The shared allocator. Drop every clone (pickers hold one) before the context: a clone
    /// still alive when the context and everything it made are gone keeps the device from
    /// being destroyed (it is leaked, and an error is logged) rather than freed under it.
    pub fn allocator(&self) -> Arc<Mutex<Allocator>> {
        Arc::clone(self.owner.allocator())
    }

    /// Waits for the device to go idle (shutdown and tests only).
    pub fn wait_idle(&self) -> Result<(), ContextError> {
        // SAFETY: plain wait on a live device.
        Ok(unsafe { self.device.device_wait_idle() }?)
    }
}

impl Drop for VulkanContext {
    fn drop(&mut self) {
        // SAFETY: a live device (the owner, a field, drops after this). Waiting lets the pools,
        // dropped next, go with none of their command buffers pending. The device itself is
        // destroyed by the owner once nothing made from it remains.
        let _ = unsafe { self.device.device_wait_idle() };
    }
}

impl VulkanContext {
    /// Picks a device (discrete first; `PICKING_VK_DEVICE` narrows by name), enables what the
    /// picker can use, and creates the queue, allocator and command pools.
    fn with_device(base: InstanceBase, options: &ContextOptions) -> Result<Self, ContextError> {
        let instance = base.instance.clone();
        // SAFETY: plain enumeration on a live instance.
        let devices = unsafe { instance.enumerate_physical_devices() }?;
        let wanted_name = std::env::var("PICKING_VK_DEVICE").ok();
        let mut candidates = vec![];
        for pd in devices {
            // SAFETY: `pd` was enumerated from `instance`.
            let props = unsafe { instance.get_physical_device_properties(pd) };
            let name = props.device_name_as_c_str().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if wanted_name.as_ref().is_some_and(|w| !name.contains(w.as_str())) {
                continue;
            }
            // SAFETY: as above.
            let families = unsafe { instance.get_physical_device_queue_family_properties(pd) };
            let Some(family) = families.iter().position(|f| f.queue_flags.contains(vk::QueueFlags::GRAPHICS)) else { continue };
            let rank = match props.device_type {
                vk::PhysicalDeviceType::DISCRETE_GPU => 0,
                vk::PhysicalDeviceType::INTEGRATED_GPU => 1,
                vk::PhysicalDeviceType::VIRTUAL_GPU => 2,
                _ => 3,
            };
            candidates.push((rank, pd, family as u32, name, props));
        }
        candidates.sort_by_key(|c| c.0);
        let Some((_, physical_device, queue_family_index, device_name, properties)) = candidates.into_iter().next() else {
            return Err(ContextError::NoDevice(match wanted_name {
                Some(w) => format!("no device named like {w:?} has a graphics queue"),
                None => "no device with a graphics queue".into(),
            }));
        };
        // SAFETY: `physical_device` was enumerated from `instance`.
        let picking_support = unsafe { PickSupport::query(&instance, options.api_version, physical_device) };
        let mut wanted = picking_support.offered();
        if !options.want_detail {
            wanted = wanted.intersection(
                PickFeatures::BATCHING
                    | PickFeatures::SELECT_THROUGH
                    | PickFeatures::DYNAMIC_RENDERING
                    | PickFeatures::INDIRECT_COUNT
                    | PickFeatures::WIDE_LINES
                    | PickFeatures::GPU_DRAW_PLANNING,
            );
        }
        let mut picking = picking_support.device_features(wanted).map_err(|e| ContextError::NoDevice(e.to_string()))?;
        let mut device_extensions: Vec<*const i8> = options.device_extensions.iter().map(|e| e.as_ptr()).collect();
        device_extensions.extend(picking.extension_names().iter().map(|e| e.as_ptr()));
        let priorities = [1.0];
        let queue_info = [vk::DeviceQueueCreateInfo::default().queue_family_index(queue_family_index).queue_priorities(&priorities)];
        let picking_features = picking.features();
        // The core features picking needs, plus pipeline statistics where offered.
        // SAFETY: `physical_device` was enumerated from `instance`.
        let pipeline_statistics = unsafe { instance.get_physical_device_features(physical_device) }.pipeline_statistics_query == vk::TRUE;
        let mut core = vk::PhysicalDeviceFeatures::default().pipeline_statistics_query(pipeline_statistics);
        picking.enable_core(&mut core);
        let mut timeline = vk::PhysicalDeviceTimelineSemaphoreFeatures::default().timeline_semaphore(true);
        if options.timeline_semaphores && options.api_version < vk::API_VERSION_1_2 {
            device_extensions.push(ash::khr::timeline_semaphore::NAME.as_ptr());
        }
        let mut host_info = vk::DeviceCreateInfo::default().queue_create_infos(&queue_info).enabled_extension_names(&device_extensions).enabled_features(&core);
        if options.timeline_semaphores {
            host_info = host_info.push_next(&mut timeline);
        }
        let device_info = picking.extension_structs(host_info);
        // SAFETY: pointers in `device_info` refer to locals alive for the call; the extensions
        // and features enabled were reported by the device.
        let device = unsafe { instance.create_device(physical_device, &device_info, None) }?;
        // SAFETY: the queue family and index 0 were requested above.
        let queue = unsafe { device.get_device_queue(queue_family_index, 0) };
        let allocator = Allocator::new(&AllocatorCreateDesc {
            instance: instance.clone(),
            device: device.clone(),
            physical_device,
            debug_settings: Default::default(),
            buffer_device_address: false,
            allocation_sizes: Default::default(),
        });
        let allocator = match allocator {
            Ok(a) => a,
            Err(e) => {
                // SAFETY: nothing was created from the device yet.
                unsafe { device.destroy_device(None) };
                return Err(e.into());
            }
        };
        // The messenger's extension, VK_EXT_debug_utils, is enabled exactly with validation.
        let debug_utils = base.log.is_some();
        // From here the owner destroys the device, the allocator and the instance.
        let owner = Arc::new(DeviceOwner::new(base, device.clone(), allocator));
        let pool = Pool::new(&owner, queue_family_index)?;
        log::info!("picking-vk context on {device_name}; picking features {picking_features:?}");
        Ok(VulkanContext {
            instance,
            physical_device,
            device,
            queue_family_index,
            queue,
            pool: Mutex::new(pool),
            picking_support,
            picking_features,
            device_name,
            properties,
            pipeline_statistics,
            enabled_core: core,
            api_version: options.api_version,
            debug_utils,
            swapchain: options.device_extensions.iter().any(|e| e.as_c_str() == ash::khr::swapchain::NAME),
            owner,
        })
    }
}
