//! GPU results for WGSL: the picker's per-slot results buffers as `wgpu::Buffer`s the app
//! binds, and the WGSL that reads them.

use crate::error::WgpuPickError;
use picking_vk::Picker;
use wgpu::hal::api::Vulkan;

/// The WGSL include that reads a slot's GPU results (`pick_hit(query)`,
/// `pick_is_hit(query, id, instance)`, `pick_is_hovered(id, instance)`,
/// `pick_in_rect(query, id, instance)`, IDs as `vec2<u32>(low, high)`), with the placeholders
/// `PICK_RESULTS_GROUP` and `PICK_RESULTS_BINDING` for where the app binds the buffer: see
/// [`gpu_results_wgsl`].
pub const GPU_RESULTS_WGSL: &str = include_str!("../wgsl/pick_results.wgsl");

/// [`GPU_RESULTS_WGSL`] with the results buffer at `@group(group) @binding(binding)`, to put
/// in front of (or beside) the app's shader source.
pub fn gpu_results_wgsl(group: u32, binding: u32) -> String {
    GPU_RESULTS_WGSL.replace("PICK_RESULTS_GROUP", &group.to_string()).replace("PICK_RESULTS_BINDING", &binding.to_string())
}

/// Each slot's results buffer as a wgpu buffer of `STORAGE` and `COPY_SRC` usage (for apps
/// that bind it, or copy it out) that wgpu neither owns nor destroys (empty without
/// `PickerConfig::gpu_results`). wgpu requires a buffer it is handed to be initialized, and
/// the picker's first write to a slot's is its first pick: each is filled with zeros (no
/// queries) first, by raw commands of a submission waited for here, so that no wgpu command
/// (and no app) ever writes it.
pub(crate) fn wrap_results(device: &wgpu::Device, queue: &wgpu::Queue, picker: &Picker) -> Result<Vec<wgpu::Buffer>, WgpuPickError> {
    // Refused only for a picker without `gpu_results` (slot 0 always exists).
    if picker.gpu_results(0).is_err() {
        return Ok(vec![]);
    }
    let infos = (0..picker.frames_in_flight()).map(|slot| picker.gpu_results(slot)).collect::<Result<Vec<_>, _>>()?;
    let raw_device = {
        // SAFETY: the device's functions are cloned while the guard lives.
        let hal = unsafe { device.as_hal::<Vulkan>() }.ok_or_else(WgpuPickError::not_vulkan)?;
        hal.raw_device().clone()
    };
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("picking-vk GPU results fill") });
    let fill = |hal: Option<&mut wgpu::hal::vulkan::CommandEncoder>| {
        // SAFETY: the handle is used only while the encoder is open, for commands of its own.
        let cmd = unsafe { hal.ok_or_else(WgpuPickError::not_vulkan)?.raw_handle() };
        for info in &infos {
            // SAFETY: the command buffer is the open encoder's, of this device; the picker's
            // live buffer, with TRANSFER_DST usage and `info.range` bytes (a multiple of 4),
            // which no other work uses yet.
            unsafe { raw_device.cmd_fill_buffer(cmd, info.buffer, 0, info.range, 0) };
        }
        Ok::<_, WgpuPickError>(())
    };
    // SAFETY: the closure records only through the raw handle, while the encoder is untouched.
    unsafe { encoder.as_hal_mut::<Vulkan, _, _>(fill) }?;
    queue.submit([encoder.finish()]);
    // The picker's own writes (raw commands too) must follow the fill: it is waited for
    // here, once.
    device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| WgpuPickError::Poll(e.to_string()))?;
    infos
        .iter()
        .map(|info| {
            // SAFETY: the buffer is the picker's, of this device, with STORAGE_BUFFER and
            // TRANSFER_SRC usage and `info.range` bytes; wgpu never destroys it (externally
            // owned) and the bridge destroys the wgpu buffer before the picker goes
            // (`WgpuPicker`'s `Drop`). It is initialized: filled above, the fill waited for.
            // WGSL's bounds checks keep reads in range.
            let hal = unsafe { wgpu::hal::vulkan::Buffer::from_raw_externally_owned(info.buffer, Box::new(|| {})) };
            let desc = wgpu::BufferDescriptor {
                label: Some("picking-vk GPU results"),
                size: info.range,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            };
            // SAFETY: as above: created from this device, respecting `desc`, not of zero size.
            Ok(unsafe { device.create_buffer_from_hal::<Vulkan>(hal, &desc) })
        })
        .collect()
}
