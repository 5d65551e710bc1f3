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

/// Each slot's results buffer as a wgpu buffer of `STORAGE` usage (and `COPY_SRC`, for apps
/// that read it back, and `COPY_DST`, for its clear) that wgpu neither owns nor
/// destroys (empty without `PickerConfig::gpu_results`), cleared to zeros (no queries) by a
/// submission of its own: wgpu requires a buffer it is handed to be initialized, and the
/// picker's first write to a slot's is its first pick.
pub(crate) fn wrap_results(device: &wgpu::Device, queue: &wgpu::Queue, picker: &Picker) -> Result<Vec<wgpu::Buffer>, WgpuPickError> {
    // Refused only for a picker without `gpu_results` (slot 0 always exists).
    if picker.gpu_results(0).is_err() {
        return Ok(vec![]);
    }
    let buffers = (0..picker.frames_in_flight())
        .map(|slot| {
            let info = picker.gpu_results(slot)?;
            // SAFETY: the buffer is the picker's, of this device, with STORAGE_BUFFER,
            // TRANSFER_DST and TRANSFER_SRC usage and `info.range` bytes; wgpu never destroys it (externally
            // owned) and the bridge destroys the wgpu buffer before the picker goes
            // (`WgpuPicker`'s `Drop`). wgpu treats it as initialized: it is cleared below,
            // before any use of wgpu's, and WGSL's bounds checks keep reads in range.
            let hal = unsafe { wgpu::hal::vulkan::Buffer::from_raw_externally_owned(info.buffer, Box::new(|| {})) };
            let desc = wgpu::BufferDescriptor {
                label: Some("picking-vk GPU results"),
                size: info.range,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            };
            // SAFETY: as above: created from this device, respecting `desc`, not of zero size.
            Ok(unsafe { device.create_buffer_from_hal::<Vulkan>(hal, &desc) })
        })
        .collect::<Result<Vec<_>, WgpuPickError>>()?;
    crate::error::validated(device, "clearing the GPU results", || {
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("picking-vk GPU results clear") });
        for buffer in &buffers {
            encoder.clear_buffer(buffer, 0, None);
        }
        queue.submit([encoder.finish()]);
    })?;
    // The picker's own writes (raw commands wgpu does not see) must follow the clear: it is
    // waited for here, once.
    device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| WgpuPickError::Poll(e.to_string()))?;
    Ok(buffers)
}
