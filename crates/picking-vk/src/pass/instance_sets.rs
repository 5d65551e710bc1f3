//! Descriptor sets for instance transforms in the host's storage buffers
//! (`InstanceBinding::StorageBuffer`): one set per buffer, binding its first bytes up to the
//! end of what draws read, made on first use and reused; the least recently used one that no
//! running frame needs is rewritten when all are taken.

use crate::error::PickError;
use crate::gpu::{Memory, Owned};
use ash::vk;

/// Sets kept; more storage buffers in one frame's draws is an error.
const CAPACITY: u32 = 64;

/// # Safety
/// `handle` is an object of `device` that the GPU no longer uses.
unsafe fn destroy_set_layout(device: &ash::Device, handle: vk::DescriptorSetLayout) {
    // SAFETY: the caller's contract.
    unsafe { device.destroy_descriptor_set_layout(handle, None) };
}

/// # Safety
/// As [`destroy_set_layout`]; its sets are freed with it.
unsafe fn destroy_pool(device: &ash::Device, handle: vk::DescriptorPool) {
    // SAFETY: the caller's contract.
    unsafe { device.destroy_descriptor_pool(handle, None) };
}

struct Entry {
    buffer: vk::Buffer,
    /// Bytes bound from offset 0.
    bound: u64,
    set: vk::DescriptorSet,
    last_used: u64,
}

pub(crate) struct InstanceSets {
    memory: Memory,
    entries: Vec<Entry>,
    free: Vec<vk::DescriptorSet>,
    frame: u64,
    oldest_in_flight: u64,
    // Dropped after the sets' users (fields drop in order): the pool frees the sets.
    _pool: Owned<vk::DescriptorPool>,
    /// Binding 0: a storage buffer the vertex stage reads.
    pub layout: Owned<vk::DescriptorSetLayout>,
}

impl InstanceSets {
    pub fn new(memory: &Memory) -> Result<Self, PickError> {
        let device = &memory.device;
        let bindings = [vk::DescriptorSetLayoutBinding::default()
            .binding(0)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(1)
            .stage_flags(vk::ShaderStageFlags::VERTEX)];
        // SAFETY: valid create infos on a live device; each object is owned right away.
        let layout = unsafe {
            let handle = device.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings), None)?;
            Owned::new(device, handle, destroy_set_layout)
        };
        let sizes = [vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: CAPACITY }];
        // SAFETY: as above.
        let pool = unsafe {
            let handle = device.create_descriptor_pool(&vk::DescriptorPoolCreateInfo::default().max_sets(CAPACITY).pool_sizes(&sizes), None)?;
            Owned::new(device, handle, destroy_pool)
        };
        let layouts = vec![layout.handle; CAPACITY as usize];
        // SAFETY: the pool has room for these sets.
        let free = unsafe { device.allocate_descriptor_sets(&vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool.handle).set_layouts(&layouts)) }?;
        memory.name(pool.handle, "instance storage sets");
        Ok(InstanceSets { memory: memory.clone(), entries: vec![], free, frame: 0, oldest_in_flight: 0, _pool: pool, layout })
    }

    /// The frame about to be recorded, and the oldest frame whose GPU work may still run.
    pub fn begin_frame(&mut self, frame: u64, oldest_in_flight: u64) {
        self.frame = frame;
        self.oldest_in_flight = oldest_in_flight.min(frame);
    }

    /// Makes sure a set binds `buffer`'s first `bytes` bytes (or more) in this frame.
    pub fn prepare(&mut self, buffer: vk::Buffer, bytes: u64) -> Result<(), PickError> {
        let frame = self.frame;
        if let Some(e) = self.entries.iter_mut().find(|e| e.buffer == buffer && e.bound >= bytes) {
            e.last_used = frame;
            return Ok(());
        }
        let set = match self.free.pop() {
            Some(set) => set,
            None => {
                // The least recently used set no running frame reads.
                let oldest = self.oldest_in_flight;
                let victim = self.entries.iter().enumerate().filter(|(_, e)| e.last_used < oldest).min_by_key(|(_, e)| e.last_used).map(|(i, _)| i);
                let Some(i) = victim else {
                    return Err(PickError::InvalidRequest(format!("more than {CAPACITY} instance storage buffers are in use by frames in flight")));
                };
                self.entries.swap_remove(i).set
            }
        };
        let info = [vk::DescriptorBufferInfo { buffer, offset: 0, range: bytes }];
        let write = vk::WriteDescriptorSet::default().dst_set(set).dst_binding(0).descriptor_type(vk::DescriptorType::STORAGE_BUFFER).buffer_info(&info);
        // SAFETY: the set is free or last used by a frame that has completed; the host's
        // buffer is live with STORAGE_BUFFER usage (the draw's contract).
        unsafe { self.memory.device.update_descriptor_sets(&[write], &[]) };
        self.entries.push(Entry { buffer, bound: bytes, set, last_used: frame });
        Ok(())
    }

    /// The set prepared for `buffer` and at least `bytes` bytes.
    pub fn get(&self, buffer: vk::Buffer, bytes: u64) -> Option<vk::DescriptorSet> {
        self.entries.iter().find(|e| e.buffer == buffer && e.bound >= bytes).map(|e| e.set)
    }
}
