//! A wgpu buffer as the picker sees it: its Vulkan handle, a byte range of it, its usage.

use crate::error::WgpuPickError;
use picking_vk::draw::BufferRange;
use wgpu::hal::api::Vulkan;

/// The Vulkan buffer behind a wgpu buffer, or an error if it was destroyed. The handle is
/// read under wgpu's guard; its users hold the buffer's clone (or, in a pick, the caller's
/// contract) so it lives while they name it.
fn raw_buffer(buffer: &wgpu::Buffer, what: &'static str) -> Result<ash::vk::Buffer, WgpuPickError> {
    with_raw_buffer(buffer, what, |raw| raw)
}

/// Runs `f` with the Vulkan buffer behind `buffer` while wgpu's guard of it lives: no
/// `destroy()` on another thread can free the handle until `f` returns. An error if it was
/// destroyed before.
pub(crate) fn with_raw_buffer<R>(buffer: &wgpu::Buffer, what: &'static str, f: impl FnOnce(ash::vk::Buffer) -> R) -> Result<R, WgpuPickError> {
    // SAFETY: the handle is only used while the guard lives; wgpu keeps owning it.
    let hal = unsafe { buffer.as_hal::<Vulkan>() }.ok_or(WgpuPickError::BufferRange { what, reason: "destroyed, or not a Vulkan buffer".into() })?;
    // SAFETY: as above.
    Ok(f(unsafe { hal.raw_handle() }))
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

/// How many elements of `element` bytes, `stride` bytes apart, fit in `bytes` (the first at 0).
pub(crate) fn elements_in(bytes: u64, element: u64, stride: u32) -> u32 {
    let count = match bytes.checked_sub(element) {
        Some(rest) if stride > 0 => rest / u64::from(stride) + 1,
        Some(_) => 1,
        None => 0,
    };
    u32::try_from(count).unwrap_or(u32::MAX)
}
