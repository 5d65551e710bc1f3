//! A wgpu buffer as the picker sees it: its Vulkan handle, a byte range of it, its usage.

use crate::error::WgpuPickError;
use picking_vk::draw::BufferRange;
use wgpu::hal::api::Vulkan;

/// The Vulkan buffer behind a wgpu buffer, or an error if it was destroyed.
fn raw_buffer(buffer: &wgpu::Buffer, what: &'static str) -> Result<ash::vk::Buffer, WgpuPickError> {
    // SAFETY: the handle is only read; wgpu keeps owning (and destroying) it.
    let hal = unsafe { buffer.as_hal::<Vulkan>() };
    // SAFETY: as above.
    hal.map(|b| unsafe { b.raw_handle() }).ok_or(WgpuPickError::BufferRange { what, reason: "destroyed, or not a Vulkan buffer".into() })
}

/// `BufferUsage { what, usage: name }` unless the buffer has `usage`.
pub(crate) fn check_usage(buffer: &wgpu::Buffer, usage: wgpu::BufferUsages, what: &'static str, name: &'static str) -> Result<(), WgpuPickError> {
    if buffer.usage().contains(usage) {
        Ok(())
    } else {
        Err(WgpuPickError::BufferUsage { what, usage: name })
    }
}

/// The buffer's bytes from `offset` to its end; `offset` must lie inside the buffer (Vulkan
/// binds nothing at its end).
pub(crate) fn whole_range(buffer: &wgpu::Buffer, offset: u64, what: &'static str) -> Result<BufferRange, WgpuPickError> {
    let size = buffer
        .size()
        .checked_sub(offset)
        .filter(|&size| size > 0)
        .ok_or_else(|| WgpuPickError::BufferRange { what, reason: format!("offset {offset} lies at or past the end of its {} bytes", buffer.size()) })?;
    Ok(BufferRange { buffer: raw_buffer(buffer, what)?, offset, size })
}
