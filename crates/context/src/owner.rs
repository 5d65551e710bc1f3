//! The owner of the device, its allocator and the instance: destroyed when the last holder
//! lets go. The context, and every `HostBuffer`, `DeviceImage` and `CommandBuffers` it made,
//! hold it, so none of them can outlive the device, in whatever order they are dropped.

use crate::{ContextError, InstanceBase};
use gpu_allocator::vulkan::Allocator;
use std::mem::ManuallyDrop;
use std::sync::{Arc, Mutex, MutexGuard};

pub(crate) struct DeviceOwner {
    pub(crate) device: ash::Device,
    /// Dropped in `Drop`, before the device.
    allocator: ManuallyDrop<Arc<Mutex<Allocator>>>,
    /// Dropped in `Drop`, after the device.
    base: ManuallyDrop<InstanceBase>,
}

impl DeviceOwner {
    /// Takes over `device` (made from `base`'s instance) and `allocator` (made on `device`).
    pub(crate) fn new(base: InstanceBase, device: ash::Device, allocator: Allocator) -> Self {
        DeviceOwner { device, allocator: ManuallyDrop::new(Arc::new(Mutex::new(allocator))), base: ManuallyDrop::new(base) }
    }

    pub(crate) fn allocator(&self) -> &Arc<Mutex<Allocator>> {
        &self.allocator
    }

    pub(crate) fn lock_allocator(&self) -> Result<MutexGuard<'_, Allocator>, ContextError> {
        self.allocator.lock().map_err(|_| ContextError::LockPoisoned("allocator"))
    }

    pub(crate) fn base(&self) -> &InstanceBase {
        &self.base
    }
}

impl Drop for DeviceOwner {
    fn drop(&mut self) {
        // SAFETY: a live device. Nothing of this crate can still use it (they all hold this
        // owner); waiting covers work that others submitted with its handles.
        let _ = unsafe { self.device.device_wait_idle() };
        // SAFETY: `Drop` runs once and the field is not used after this.
        let allocator = unsafe { ManuallyDrop::take(&mut self.allocator) };
        match Arc::into_inner(allocator) {
            Some(allocator) => {
                drop(allocator);
                // SAFETY: the allocator (and its memory) is gone, and every object this crate
                // made from the device was destroyed by its holder before this owner dropped.
                // The instance outlives the device; it goes right after.
                unsafe {
                    self.device.destroy_device(None);
                    ManuallyDrop::drop(&mut self.base);
                }
            }
            None => {
                // A clone of the allocator (a picker's, from `allocator()` or `host_device()`)
                // outlives the context: it frees its memory through this device later, so the
                // device and the instance stay alive (leaked) rather than be destroyed under it.
                log::error!("picking-vk-context: the allocator is still shared at teardown (a picker outlives the context?); leaking the device");
            }
        }
    }
}
