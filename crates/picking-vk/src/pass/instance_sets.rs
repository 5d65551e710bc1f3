//! Descriptor sets for the host's storage buffers: instance transforms
//! (`InstanceBinding::StorageBuffer`, binding 0) and deformations (joint matrices, morph deltas
//! and weights at bindings 0, 1, 2; influence streams read from storage at 3 to 6). One set
//! per combination of buffers and frame, binding each from offset 0 to the end of what the
//! frame's draws read. A set is written in the frame that binds it and reused only within
//! that frame: Vulkan hands a destroyed buffer's handle value out again (Mesa does so
//! routinely), so a set written for an earlier frame may name freed memory under a handle
//! that now means another buffer. Sets of frames that may still run are never rewritten; the
//! least recently used one that no running frame needs is, and more are allocated (a pool of
//! 64 at a time, up to 4096) when every set is in use: a scene of hundreds of deformed meshes,
//! each with its own buffers, is picked like one.

use crate::error::{Limit, PickError};
use crate::gpu::{Memory, Owned};
use crate::pass::compute::{destroy_pool, destroy_set_layout};
use ash::vk;
use foldhash::HashMap;

/// Sets allocated at a time.
const POOL_SETS: u32 = 64;
/// Pools at most: more combinations of storage buffers in use at once is an error.
const MAX_POOLS: usize = 64;
/// Storage buffer bindings per set.
const BINDINGS: usize = 7;

/// The buffers of a set's bindings and the bytes bound of each, from offset 0.
pub(crate) type SetBuffers = [(vk::Buffer, u64); BINDINGS];

/// A combination's buffers, without the bytes bound.
type Handles = [vk::Buffer; BINDINGS];

fn handles(buffers: &SetBuffers) -> Handles {
    buffers.map(|(b, _)| b)
}

struct Entry {
    buffers: SetBuffers,
    set: vk::DescriptorSet,
    last_used: u64,
}

pub(crate) struct InstanceSets {
    memory: Memory,
    entries: Vec<Entry>,
    /// Per combination of buffers, the entry that binds the most of each (the one a frame's
    /// draws of that combination use). Only entries written in the current frame are used.
    current: HashMap<Handles, usize>,
    free: Vec<vk::DescriptorSet>,
    /// What the draws about to be recorded need, merged per combination by `prepare_wanted`.
    wanted: Vec<SetBuffers>,
    frame: u64,
    oldest_in_flight: u64,
    // Dropped after the sets' users (fields drop in order): each pool frees its sets.
    pools: Vec<Owned<vk::DescriptorPool>>,
    /// Bindings 0 to 6: storage buffers the vertex stage (and the GPU plan's cull pass) reads.
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
                .stage_flags(vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::COMPUTE)
        });
        // SAFETY: a valid create info on a live device; the layout is owned right away.
        let layout = unsafe {
            let handle = device.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings), None)?;
            Owned::new(device, handle, destroy_set_layout)
        };
        let mut sets = InstanceSets {
            memory: memory.clone(),
            entries: vec![],
            current: HashMap::default(),
            free: vec![],
            wanted: vec![],
            frame: 0,
            oldest_in_flight: 0,
            pools: vec![],
            layout,
        };
        sets.grow()?;
        Ok(sets)
    }

    /// Allocates another pool's worth of sets into `free`.
    fn grow(&mut self) -> Result<(), PickError> {
        let device = &self.memory.device;
        let sizes = [vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: POOL_SETS * BINDINGS as u32 }];
        // SAFETY: a valid create info on a live device; the pool is owned right away.
        let pool = unsafe {
            let handle = device.create_descriptor_pool(&vk::DescriptorPoolCreateInfo::default().max_sets(POOL_SETS).pool_sizes(&sizes), None)?;
            Owned::new(device, handle, destroy_pool)
        };
        let layouts = vec![self.layout.handle; POOL_SETS as usize];
        // SAFETY: the pool has room for these sets.
        let sets = unsafe { device.allocate_descriptor_sets(&vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool.handle).set_layouts(&layouts)) }?;
        self.memory.name(pool.handle, "storage buffer sets");
        self.free.extend(sets);
        self.pools.push(pool);
        Ok(())
    }

    /// The frame about to be recorded, and the oldest frame whose GPU work may still run.
    /// Sets written before this call are not reused, even under the same frame number: a
    /// refused recording keeps its number for the next one, and the host may have destroyed
    /// the buffers its sets name since.
    pub fn begin_frame(&mut self, frame: u64, oldest_in_flight: u64) {
        self.frame = frame;
        self.oldest_in_flight = oldest_in_flight.min(frame);
        self.current.clear();
    }

    /// The same buffer at every binding (instance transforms read binding 0).
    pub fn single(buffer: vk::Buffer, bytes: u64) -> SetBuffers {
        [(buffer, bytes); BINDINGS]
    }

    fn covers(have: &SetBuffers, want: &SetBuffers) -> bool {
        have.iter().zip(want).all(|(have, want)| have.0 == want.0 && have.1 >= want.1)
    }

    /// Notes that a draw about to be recorded reads `buffers`' first bytes.
    pub fn want(&mut self, buffers: SetBuffers) {
        self.wanted.push(buffers);
    }

    /// Drops what draws noted as wanted without preparing it (a recording that failed
    /// half-way: its draws' buffers may be gone by the next one).
    pub fn forget_wanted(&mut self) {
        self.wanted.clear();
    }

    /// Makes sure a set binds what every wanted draw reads, one set per combination of
    /// buffers: draws that read further into the same buffers (the poses of many nodes in one
    /// buffer, at rising offsets) share the set that binds the most.
    pub fn prepare_wanted(&mut self) -> Result<(), PickError> {
        let mut wanted = std::mem::take(&mut self.wanted);
        wanted.sort_unstable_by_key(handles);
        let mut result = Ok(());
        for group in wanted.chunk_by(|a, b| handles(a) == handles(b)) {
            let mut merged = group[0];
            for buffers in &group[1..] {
                merged.iter_mut().zip(buffers).for_each(|(m, b)| m.1 = m.1.max(b.1));
            }
            result = self.prepare(&merged);
            if result.is_err() {
                break;
            }
        }
        wanted.clear();
        self.wanted = wanted;
        result
    }

    /// Makes sure a set binds each of `buffers`' first bytes (or more) in this frame.
    fn prepare(&mut self, buffers: &SetBuffers) -> Result<(), PickError> {
        let frame = self.frame;
        let key = handles(buffers);
        let mut bind = *buffers;
        // Only a set written in this frame may be reused: one written before names the
        // buffers that held these handles then.
        if let Some(&i) = self.current.get(&key).filter(|&&i| self.entries[i].last_used == frame) {
            let entry = &self.entries[i];
            if Self::covers(&entry.buffers, buffers) {
                return Ok(());
            }
            // A new set binds what the one it replaces did too: this frame's draws recorded
            // before may read that far.
            bind.iter_mut().zip(&entry.buffers).for_each(|(b, have)| b.1 = b.1.max(have.1));
        }
        let slot = match self.free.pop() {
            Some(set) => {
                self.entries.push(Entry { buffers: bind, set, last_used: frame });
                self.entries.len() - 1
            }
            None => {
                // The least recently used set no running frame reads.
                let oldest = self.oldest_in_flight;
                let victim = self.entries.iter().enumerate().filter(|(_, e)| e.last_used < oldest).min_by_key(|(_, e)| e.last_used).map(|(i, _)| i);
                match victim {
                    Some(i) => {
                        let old = handles(&self.entries[i].buffers);
                        if self.current.get(&old) == Some(&i) {
                            self.current.remove(&old);
                        }
                        self.entries[i].buffers = bind;
                        self.entries[i].last_used = frame;
                        i
                    }
                    None if self.pools.len() < MAX_POOLS => {
                        self.grow()?;
                        return self.prepare(buffers);
                    }
                    None => {
                        let most = u64::from(MAX_POOLS as u32 * POOL_SETS);
                        return Err(PickError::Capacity { limit: Limit::StorageBufferSets, configured: most, asked: most + 1 });
                    }
                }
            }
        };
        let set = self.entries[slot].set;
        let infos = bind.map(|(buffer, bytes)| [vk::DescriptorBufferInfo { buffer, offset: 0, range: bytes }]);
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
        self.current.insert(key, slot);
        Ok(())
    }

    /// The set prepared for `buffers` in this frame.
    pub fn get(&self, buffers: &SetBuffers) -> Option<vk::DescriptorSet> {
        let entry = &self.entries[*self.current.get(&handles(buffers))?];
        (entry.last_used == self.frame && Self::covers(&entry.buffers, buffers)).then_some(entry.set)
    }
}
