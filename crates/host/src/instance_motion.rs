//! GPU-driven instances: a compute pass the host records each frame that writes its
//! instances' transforms (the base transforms moved along a sway that depends on the time),
//! as GPU particles or GPU animation would. The CPU never sees the result: draws read the
//! transforms buffer as a storage buffer (`InstanceBinding::StorageBuffer`) or as vertex
//! attributes, and a pick that reads them names the pass's writes with
//! `PickRequest::with_host_writes(COMPUTE_SHADER, SHADER_WRITE)`.

use crate::storage_compute::StorageCompute;
use ash::vk;
use glam::Mat4;
use picking_vk_context::{ContextError, HostBuffer, VulkanContext};

const SPIRV: &[u8] = include_bytes!("../spirv/instance_motion.comp.spv");

pub struct InstanceMotion {
    pass: StorageCompute,
    _base: HostBuffer,
    /// Column-major `mat4`s, 64 bytes apart (storage and vertex buffer usage).
    pub transforms: HostBuffer,
    count: u32,
    /// How far instances sway from their base, in their parent's units.
    pub amplitude: f32,
}

impl InstanceMotion {
    /// The pass over `base` (uploaded once), swaying `amplitude` from it.
    pub fn new(ctx: &VulkanContext, base: &[Mat4], amplitude: f32) -> Result<Self, ContextError> {
        // The whole buffers are bound as storage buffers and a workgroup moves 64 instances:
        // both within the device's limits.
        let limits = &ctx.properties.limits;
        let bytes = std::mem::size_of_val(base) as u64;
        let groups = (base.len() as u64).div_ceil(64);
        if bytes > u64::from(limits.max_storage_buffer_range) || groups > u64::from(limits.max_compute_work_group_count[0]) {
            return Err(ContextError::Invalid(format!(
                "{} instances: {bytes} bytes and {groups} workgroups, past maxStorageBufferRange {} or maxComputeWorkGroupCount {}",
                base.len(),
                limits.max_storage_buffer_range,
                limits.max_compute_work_group_count[0]
            )));
        }
        let storage = vk::BufferUsageFlags::STORAGE_BUFFER;
        let base_buffer = ctx.upload(base, storage)?;
        let transforms = ctx.upload(base, storage | vk::BufferUsageFlags::VERTEX_BUFFER)?;
        // SAFETY: the crate's compiled motion shader: two storage buffers, 12 push bytes.
        let pass = unsafe { StorageCompute::new(&ctx.device, SPIRV, 2, 12) }?;
        let whole = |buffer| vk::DescriptorBufferInfo { buffer, offset: 0, range: vk::WHOLE_SIZE };
        // SAFETY: both buffers are live storage buffers owned with the pass; nothing uses its
        // set yet.
        unsafe { pass.write(&[whole(base_buffer.buffer), whole(transforms.buffer)]) };
        Ok(InstanceMotion { pass, _base: base_buffer, transforms, count: base.len() as u32, amplitude })
    }

    /// How many instances the pass writes.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Records the pass for `time`.
    ///
    /// # Safety
    /// `cmd` is a command buffer of this device, recording outside a render pass, and every
    /// earlier read of the transforms is ordered before it (the picker's barrier after a pick
    /// that named the writes does so); `self` is not dropped until `cmd` completes.
    pub unsafe fn record(&self, cmd: vk::CommandBuffer, time: f32) {
        let mut push = [0u8; 12];
        push[..4].copy_from_slice(&self.count.to_ne_bytes());
        push[4..8].copy_from_slice(&time.to_ne_bytes());
        push[8..].copy_from_slice(&self.amplitude.to_ne_bytes());
        // SAFETY: the caller's contract; the set holds this pass's buffers.
        unsafe { self.pass.dispatch(cmd, &push, self.count.div_ceil(64)) };
    }
}
