//! Opening wgpu's Vulkan device with what picking needs, through wgpu-hal's device-creation
//! callback.

use crate::error::WgpuPickError;
use ash::vk;
use picking_vk::error::Requirement;
use picking_vk::{DeviceFeatures, PickFeatures, PickSupport};
use std::sync::{Arc, Mutex};
use wgpu::hal::api::Vulkan;

/// The capabilities the bridge can add to a wgpu device. Wide lines need core features
/// wgpu-hal writes over, and dynamic rendering a chain wgpu builds itself: neither is offered,
/// nor is `GPU_DRAW_PLANNING` (a shared list's plain draws are planned on the CPU).
pub const BRIDGE_FEATURES: PickFeatures =
    PickFeatures::BATCHING.union(PickFeatures::DETAIL).union(PickFeatures::SELECT_THROUGH).union(PickFeatures::INDIRECT_COUNT);

/// A wgpu device opened by [`request_device`], with what was enabled for picking.
#[derive(Clone, Debug)]
pub struct PickingDevice {
    /// The device, for the application and for [`crate::WgpuPicker::new`].
    pub device: wgpu::Device,
    /// Its one queue: every pick is submitted here.
    pub queue: wgpu::Queue,
    /// The picking capabilities enabled on it ([`PickingDevice::features`]): private, as
    /// [`crate::WgpuPicker::new`] builds on them.
    features: PickFeatures,
    /// The core features the device was created with, so the picker can check its claim.
    pub(crate) enabled_core: vk::PhysicalDeviceFeatures,
    /// The device and queue `request_device` opened: `WgpuPicker::new` refuses a
    /// `PickingDevice` whose public ones were replaced since.
    opened: (wgpu::Device, wgpu::Queue),
}

impl PickingDevice {
    /// The picking capabilities enabled on the device.
    pub fn features(&self) -> PickFeatures {
        self.features
    }

    /// The device and queue, checked to be the ones [`request_device`] opened (and enabled
    /// `features()` on).
    pub(crate) fn checked(&self) -> Result<(&wgpu::Device, &wgpu::Queue), WgpuPickError> {
        if self.device != self.opened.0 {
            return Err(WgpuPickError::ForeignDevice("device"));
        }
        if self.queue != self.opened.1 {
            return Err(WgpuPickError::ForeignDevice("queue"));
        }
        Ok((&self.device, &self.queue))
    }
}

/// Opens `adapter`'s device as `desc` asks, adding what picking with `wanted` needs: device
/// extensions, extension feature structures and the wgpu features that enable the core
/// features (`INDIRECT_FIRST_INSTANCE` for batching, `PRIMITIVE_INDEX` for detail,
/// `MULTI_DRAW_INDIRECT_COUNT` for indirect counts). Pass [`offered`]`(adapter)` to take all
/// the device has.
///
/// Refused with [`WgpuPickError::NotVulkan`] (naming the backend) when the adapter is not
/// wgpu's Vulkan one, and with `PickError::Unsupported` naming every requirement the device
/// fails for `wanted` (capabilities outside [`BRIDGE_FEATURES`] included).
pub fn request_device(adapter: &wgpu::Adapter, desc: &wgpu::DeviceDescriptor<'_>, wanted: PickFeatures) -> Result<PickingDevice, WgpuPickError> {
    let support = support_of(adapter)?;
    let outside = wanted.difference(BRIDGE_FEATURES);
    if outside != PickFeatures::NONE {
        let mut missing =
            vec![Requirement::Feature("a capability picking-vk-wgpu cannot enable on a wgpu device (wide lines, dynamic rendering, GPU draw planning)")];
        missing.extend(support.missing(outside));
        return Err(picking_vk::PickError::Unsupported { missing }.into());
    }
    // Where the app asks wgpu for barycentrics, wgpu-hal chains the barycentric feature
    // structure (enabled) itself: a second one would break VUID-VkDeviceCreateInfo-sType-unique.
    let wgpu_chains_barycentrics = desc.required_features.intersects(wgpu::Features::SHADER_BARYCENTRICS | wgpu::Features::SHADER_PER_VERTEX);
    let chained = if wgpu_chains_barycentrics { wanted.difference(PickFeatures::DETAIL) } else { wanted };
    let picking = support.device_features(chained)?;
    if picking.chains_vulkan12() {
        // wgpu chains structures promoted to Vulkan 1.2 itself: VkPhysicalDeviceVulkan12Features
        // cannot join them, and only it would enable indirect counts on this device.
        let missing = vec![Requirement::Extension(ash::khr::draw_indirect_count::NAME)];
        return Err(picking_vk::PickError::Unsupported { missing }.into());
    }
    let mut desc = desc.clone();
    desc.required_features |= wgpu_features(wanted);
    // What picking needs of wgpu, and the adapter lacks, is a shortfall like any other.
    let lacking = wgpu_features(wanted).difference(adapter.features());
    if !lacking.is_empty() {
        let missing = vec![Requirement::Feature(
            "a wgpu feature picking needs, which the adapter lacks (INDIRECT_FIRST_INSTANCE, PRIMITIVE_INDEX, MULTI_DRAW_INDIRECT_COUNT)",
        )];
        return Err(picking_vk::PickError::Unsupported { missing }.into());
    }
    let unavailable = desc.required_features.difference(adapter.features());
    if !unavailable.is_empty() {
        return Err(WgpuPickError::CreateDevice(format!("the adapter lacks the wgpu features {unavailable:?}")));
    }
    // SAFETY: the adapter was checked to be Vulkan above; the guard is dropped before
    // `create_device_from_hal` takes the adapter again.
    let (open, enabled_core) = unsafe { open_device(adapter, &desc, picking) }?;
    if enabled_core.robust_buffer_access != vk::TRUE {
        // The bridge's safe recording leans on it: index values are read on the GPU, where
        // the picker cannot check them. wgpu enables it wherever the device offers it.
        let missing = vec![Requirement::Feature("robustBufferAccess")];
        return Err(picking_vk::PickError::Unsupported { missing }.into());
    }
    // SAFETY: `open` was created from this adapter's hal adapter, with `desc.required_features`.
    let (device, queue) = unsafe { adapter.create_device_from_hal(open, &desc) }.map_err(|e| WgpuPickError::CreateDevice(e.to_string()))?;
    let opened = (device.clone(), queue.clone());
    Ok(PickingDevice { device, queue, features: wanted, enabled_core, opened })
}

/// Every capability [`request_device`] can enable on `adapter`'s device.
pub fn offered(adapter: &wgpu::Adapter) -> Result<PickFeatures, WgpuPickError> {
    let support = support_of(adapter)?;
    let mut features = support.offered().intersection(BRIDGE_FEATURES);
    if support.device_features(features).is_ok_and(|f| f.chains_vulkan12()) {
        features = features.difference(PickFeatures::INDIRECT_COUNT);
    }
    let wgpu = adapter.features();
    for (feature, needs) in [
        (PickFeatures::BATCHING, wgpu::Features::INDIRECT_FIRST_INSTANCE),
        (PickFeatures::DETAIL, wgpu::Features::PRIMITIVE_INDEX),
        (PickFeatures::INDIRECT_COUNT, wgpu::Features::MULTI_DRAW_INDIRECT_COUNT),
    ] {
        if !wgpu.contains(needs) {
            features = features.difference(feature);
        }
    }
    Ok(features)
}

/// The wgpu features under which wgpu-hal enables the core features `features` need.
fn wgpu_features(features: PickFeatures) -> wgpu::Features {
    let mut out = wgpu::Features::empty();
    if features.contains(PickFeatures::BATCHING) {
        out |= wgpu::Features::INDIRECT_FIRST_INSTANCE;
    }
    if features.contains(PickFeatures::DETAIL) {
        out |= wgpu::Features::PRIMITIVE_INDEX;
    }
    if features.contains(PickFeatures::INDIRECT_COUNT) {
        out |= wgpu::Features::MULTI_DRAW_INDIRECT_COUNT;
    }
    out
}

/// What the adapter's physical device offers toward picking, or `NotVulkan`.
fn support_of(adapter: &wgpu::Adapter) -> Result<PickSupport, WgpuPickError> {
    let not_vulkan = || WgpuPickError::NotVulkan { backend: adapter.get_info().backend.to_string() };
    if adapter.get_info().backend != wgpu::Backend::Vulkan {
        return Err(not_vulkan());
    }
    // SAFETY: the handles are only read while the guard lives.
    let hal = unsafe { adapter.as_hal::<Vulkan>() }.ok_or_else(not_vulkan)?;
    let instance = hal.shared_instance();
    // SAFETY: wgpu enumerated the physical device from this live instance, created with the
    // version it reports.
    Ok(unsafe { PickSupport::query(instance.raw_instance(), instance.instance_api_version(), hal.raw_physical_device()) })
}

/// Opens the hal device, adding picking's extensions and feature structures in wgpu-hal's
/// creation callback; returns it with the core features it was created with.
///
/// # Safety
/// `adapter` is a Vulkan adapter and `desc.required_features` are among its features.
unsafe fn open_device(
    adapter: &wgpu::Adapter,
    desc: &wgpu::DeviceDescriptor<'_>,
    mut picking: DeviceFeatures,
) -> Result<(wgpu::hal::OpenDevice<Vulkan>, vk::PhysicalDeviceFeatures), WgpuPickError> {
    // SAFETY: the caller's contract: a Vulkan adapter.
    let hal = unsafe { adapter.as_hal::<Vulkan>() }.ok_or_else(|| WgpuPickError::NotVulkan { backend: adapter.get_info().backend.to_string() })?;
    let enabled_core = Arc::new(Mutex::new(vk::PhysicalDeviceFeatures::default()));
    let core_out = Arc::clone(&enabled_core);
    let picking = &mut picking;
    let callback: Box<wgpu::hal::vulkan::CreateDeviceCallback<'_>> = Box::new(move |args| {
        // Moved in: the chain below borrows it for as long as wgpu's create info lives.
        let picking = picking;
        for name in picking.extension_names() {
            if !args.extensions.contains(name) {
                args.extensions.push(name);
            }
        }
        // The extension feature structures join wgpu's chain (only the barycentric one: no
        // Vulkan 1.2 structure and no dynamic rendering, see `request_device`).
        *args.create_info = picking.extension_structs_without_vulkan12(*args.create_info);
        *core_out.lock().unwrap_or_else(|e| e.into_inner()) = args.device_features.get_core();
    });
    // SAFETY: the callback only adds extensions the device offers (checked by PickSupport)
    // and feature structures of them; it removes nothing.
    let open = unsafe { hal.open_with_callback(desc.required_features, &desc.required_limits, &desc.memory_hints, Some(callback)) }
        .map_err(|e| WgpuPickError::CreateDevice(e.to_string()))?;
    let core = *enabled_core.lock().unwrap_or_else(|e| e.into_inner());
    Ok((open, core))
}
