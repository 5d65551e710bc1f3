//! Highlights from the picker's GPU results, in the frame that asked: the lit pass's set 2
//! binds a slot's results buffer, its vertex shaders call the picker's GLSL include for each
//! slot's object (`viewer_pick_tint.glsl`). Without results bound, a zeroed buffer (no
//! queries) stands in, so the pipelines always have their set.

use ash::vk;
use picking_vk_context::{ContextError, HostBuffer, VulkanContext};

/// What the lit pass reads the picker's results for, this frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PickTint {
    /// The set of the slot's results (from [`PickSets::set`]); null: none this frame.
    pub set: vk::DescriptorSet,
    /// Tint what the frame's point and radius queries hit.
    pub hover: bool,
    /// Tint the live set of this rectangle query (its index in the frame's set).
    pub band_query: Option<u32>,
}

impl PickTint {
    /// The mode bits the vertex shaders read (the frame's `light_dir.w`).
    pub(crate) fn mode(&self) -> u32 {
        if self.set == vk::DescriptorSet::null() {
            return 0;
        }
        u32::from(self.hover) | self.band_query.map_or(0, |q| 2 | (q << 8))
    }
}

/// Set 2's layout (the results, a storage buffer for the vertex stage) and the stand-in set.
pub(crate) struct TintKit {
    device: ash::Device,
    pub layout: vk::DescriptorSetLayout,
    pool: vk::DescriptorPool,
    pub empty_set: vk::DescriptorSet,
    _empty: HostBuffer,
}

/// The layout of set 2.
fn set_layout(device: &ash::Device) -> Result<vk::DescriptorSetLayout, ContextError> {
    let bindings = [vk::DescriptorSetLayoutBinding::default()
        .binding(0)
        .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
        .descriptor_count(1)
        .stage_flags(vk::ShaderStageFlags::VERTEX)];
    // SAFETY: the create info points at `bindings`, alive for the call.
    Ok(unsafe { device.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings), None) }?)
}

/// A pool of `count` sets of `layout`, each bound to one of `buffers`.
fn sets_for(
    device: &ash::Device,
    layout: vk::DescriptorSetLayout,
    buffers: &[vk::DescriptorBufferInfo],
) -> Result<(vk::DescriptorPool, Vec<vk::DescriptorSet>), ContextError> {
    let count = buffers.len() as u32;
    let sizes = [vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: count.max(1) }];
    // SAFETY: valid create info on a live device.
    let pool = unsafe { device.create_descriptor_pool(&vk::DescriptorPoolCreateInfo::default().max_sets(count.max(1)).pool_sizes(&sizes), None) }?;
    let layouts = vec![layout; buffers.len()];
    // SAFETY: the pool has room for these sets.
    let sets = match unsafe { device.allocate_descriptor_sets(&vk::DescriptorSetAllocateInfo::default().descriptor_pool(pool).set_layouts(&layouts)) } {
        Ok(sets) => sets,
        Err(e) => {
            // SAFETY: nothing uses the fresh pool.
            unsafe { device.destroy_descriptor_pool(pool, None) };
            return Err(e.into());
        }
    };
    for (set, info) in sets.iter().zip(buffers) {
        let info = [*info];
        let write = vk::WriteDescriptorSet::default().dst_set(*set).dst_binding(0).descriptor_type(vk::DescriptorType::STORAGE_BUFFER).buffer_info(&info);
        // SAFETY: the set and buffer are live; nothing uses the set yet.
        unsafe { device.update_descriptor_sets(&[write], &[]) };
    }
    Ok((pool, sets))
}

impl TintKit {
    pub fn new(ctx: &VulkanContext) -> Result<Self, ContextError> {
        let device = &ctx.device;
        // A results header with no queries and no lookup: nothing is ever tinted.
        let empty = ctx.upload(&[0u32; 8], vk::BufferUsageFlags::STORAGE_BUFFER)?;
        let layout = set_layout(device)?;
        let info = vk::DescriptorBufferInfo { buffer: empty.buffer, offset: 0, range: vk::WHOLE_SIZE };
        let (pool, sets) = match sets_for(device, layout, &[info]) {
            Ok(made) => made,
            Err(e) => {
                // SAFETY: nothing uses the fresh layout.
                unsafe { device.destroy_descriptor_set_layout(layout, None) };
                return Err(e);
            }
        };
        Ok(TintKit { device: device.clone(), layout, pool, empty_set: sets[0], _empty: empty })
    }
}

impl Drop for TintKit {
    fn drop(&mut self) {
        // SAFETY: the lit pass that owns the kit is dropped after the GPU is done with it.
        unsafe {
            self.device.destroy_descriptor_pool(self.pool, None);
            self.device.destroy_descriptor_set_layout(self.layout, None);
        }
    }
}

/// A set 2 per frame slot of the picker's results ([`picking_vk::Picker::gpu_results`]).
pub struct PickSets {
    device: ash::Device,
    pool: vk::DescriptorPool,
    sets: Vec<vk::DescriptorSet>,
}

impl PickSets {
    /// Sets of `layout` (the lit pass's [`tint_layout`](crate::LitPass::tint_layout)) over
    /// `buffers`, one per slot.
    pub fn new(ctx: &VulkanContext, layout: vk::DescriptorSetLayout, buffers: &[vk::DescriptorBufferInfo]) -> Result<Self, ContextError> {
        let (pool, sets) = sets_for(&ctx.device, layout, buffers)?;
        Ok(PickSets { device: ctx.device.clone(), pool, sets })
    }

    /// Slot `slot`'s set (null past the slots).
    pub fn set(&self, slot: usize) -> vk::DescriptorSet {
        self.sets.get(slot).copied().unwrap_or_default()
    }
}

impl Drop for PickSets {
    fn drop(&mut self) {
        // SAFETY: owners drop the sets after the GPU is done with them.
        unsafe { self.device.destroy_descriptor_pool(self.pool, None) };
    }
}
