//! Descriptor sets for the host's storage buffers: instance transforms
//! (`InstanceBinding::StorageBuffer`, binding 0) and deformations (joint matrices, morph deltas
//! and weights at bindings 0, 1, 2; influence streams read from storage at 3 to 6). One set
//! per combination of buffers, binding each from offset 0 to the end of what draws read, made
//! on first use and reused; the least recently used one that no running frame needs is
//! rewritten when all are taken.

use crate::error::PickError;
use crate::gpu::{Memory, Owned};
use ash::vk;

/// Sets kept; more storage buffers in one frame's draws is an error.
const CAPACITY: u32 = 64;
/// Storage buffer bindings per set.
const BINDINGS: usize = 7;

/// The buffers of a set's bindings and the bytes bound of each, from offset 0.
pub(crate) type SetBuffers = [(vk::Buffer, u64); BINDINGS];

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
    buffers: SetBuffers,
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
    /// Bindings 0 to 6: storage buffers the vertex stage reads.
    pub layout: Owned<vk::DescriptorSetLayout>,
}

impl InstanceSets {
    pub fn new(memory: &Memory) -> Result<Self, PickError> {
        let device = &memory.device;
        let bindings: [vk::DescriptorSetLayoutBinding; BINDINGS] = std::array::from_fn(|b| {
            vk::DescriptorSetLayoutBinding::default()
                .binding(b as u32)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::VERTEX)
        });
        // SAFETY: valid create infos on a live device; each object is owned right away.
        let layout = unsafe {
            let handle = device.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings), None)?;
            Owned::new(device, handle, destroy_set_layout)
        };
        let sizes = [vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: CAPACITY * BINDINGS as u32 }];
        // SAFETY: as above.
        let pool = unsafe {
            let handle = device.create_descriptor_pool(&vk::DescriptorPoolCreateInfo::default().max_sets(CAPACITY).pool_sizes(&sizes), None)?;
            Owned::new(device, handle, destroy_pool)
        };
        let layouts = vec![layout.handle; CAPACITY as usize];
        // SAFETY: the pool has room for these sets.
        let free = unsafe { device.allocate_descriptor_sets(&vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool.handle).set_layouts(&layouts)) }?;
        memory.name(pool.handle, "storage buffer sets");
        Ok(InstanceSets { memory: memory.clone(), entries: vec![], free, frame: 0, oldest_in_flight: 0, _pool: pool, layout })
    }

    /// The frame about to be recorded, and the oldest frame whose GPU work may still run.
    pub fn begin_frame(&mut self, frame: u64, oldest_in_flight: u64) {
        self.frame = frame;
        self.oldest_in_flight = oldest_in_flight.min(frame);
    }

    /// The same buffer at every binding (instance transforms read binding 0).
    pub fn single(buffer: vk::Buffer, bytes: u64) -> SetBuffers {
        [(buffer, bytes); BINDINGS]
    }

    fn covers(entry: &Entry, buffers: &SetBuffers) -> bool {
        entry.buffers.iter().zip(buffers).all(|(have, want)| have.0 == want.0 && have.1 >= want.1)
    }

    /// Makes sure a set binds each of `buffers`' first bytes (or more) in this frame.
    pub fn prepare(&mut self, buffers: &SetBuffers) -> Result<(), PickError> {
        let frame = self.frame;
        if let Some(e) = self.entries.iter_mut().find(|e| Self::covers(e, buffers)) {
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
                    return Err(PickError::InvalidRequest(format!("more than {CAPACITY} combinations of storage buffers are in use by frames in flight")));
                };
                self.entries.swap_remove(i).set
            }
        };
        let infos = buffers.map(|(buffer, bytes)| [vk::DescriptorBufferInfo { buffer, offset: 0, range: bytes }]);
        let writes: Vec<vk::WriteDescriptorSet> = infos
            .iter()
            .enumerate()
            .map(|(b, info)| {
                vk::WriteDescriptorSet::default().dst_set(set).dst_binding(b as u32).descriptor_type(vk::DescriptorType::STORAGE_BUFFER).buffer_info(info)
            })
            .collect();
        // SAFETY: the set is free or last used by a frame that has completed; the host's
        // buffers are live with STORAGE_BUFFER usage (the draw's contract).
        unsafe { self.memory.device.update_descriptor_sets(&writes, &[]) };
        self.entries.push(Entry { buffers: *buffers, set, last_used: frame });
        Ok(())
    }

    /// The set prepared for `buffers`.
    pub fn get(&self, buffers: &SetBuffers) -> Option<vk::DescriptorSet> {
        self.entries.iter().find(|e| Self::covers(e, buffers)).map(|e| e.set)
    }
}
