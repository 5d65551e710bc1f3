//! Meshes on the GPU, read in place by the lit pass and by the picker: vertex and index
//! buffers per primitive, one buffer of world matrices (a slot per placed copy), the
//! textures and their descriptor sets, the lit pass's draws over runs of slots, and the
//! `PickDraw`s handed to the picker each frame. No copies: the picker reads the same buffers
//! the lit pass draws from, and masked materials are picked through a discard hook that
//! samples the lit pass's own texture set.

use ash::vk;
use glam::Mat4;
use picking_vk::{
    deform::DeformPose, deform::Deformation, deform::Influences, deform::JointFormat, deform::MorphTargets, deform::Skin, deform::VertexStream,
    deform::WeightFormat, draw::BufferRange, draw::Instances, hooks::AttributeFormat, hooks::AttributeStream, hooks::DrawHooks, hooks::HookAttribute,
    hooks::HookProgram, hooks::HookSource, hooks::Interpolation, ObjectId, PickDraw,
};
use picking_vk_context::{ContextError, DeviceImage, HostBuffer, Sampler, Texture, TextureSets, VulkanContext};
use std::collections::HashMap;
use std::sync::Arc;

use crate::gpu_primitive::{GpuPrimitive, SKIN_SET_BYTES};
use crate::material::{SamplerDesc, TextureData};

/// One lit-pass draw: a primitive over a run of world-matrix slots (one instance per slot).
#[derive(Clone, Copy, Debug)]
pub struct RenderDraw {
    pub primitive: usize,
    pub first_slot: u32,
    pub slot_count: u32,
    /// The slots' world matrices mirror (negative determinant): front faces wind the other way.
    pub mirrored: bool,
    /// For a deformed primitive (one slot): the skin whose joint matrices place it (the slot's
    /// world is then unused), and the weighted node whose morph weights it takes.
    pub skin: Option<usize>,
    pub weights: Option<usize>,
}

/// What the lit pass draws and the picker picks.
pub struct GpuScene {
    pub primitives: Vec<GpuPrimitive>,
    /// The pose buffer, in `pose.regions` regions (one per frame in flight when the scene
    /// moves): each holds one column-major `mat4` per slot (per-instance input of the lit pass,
    /// and the instance buffer of instanced pick draws), then the skins' joint matrices, then
    /// the nodes' morph weights. Vertex and storage buffer usage.
    pub worlds: HostBuffer,
    pub slot_count: u32,
    /// Where things sit in each region of `worlds`.
    pub pose: PoseLayout,
    pub render_draws: Vec<RenderDraw>,
    /// Shared, so the picker can keep a culling hierarchy over them (a shared `DrawList`).
    pub pick_draws: Arc<[PickDraw]>,
    /// A set per texture, after a first set with a white texel (untextured primitives): the
    /// lit pass and the pick hooks bind the same set.
    pub texture_sets: TextureSets,
    /// White vertex colours for as many vertices as the largest primitive without its own.
    pub white_colors: HostBuffer,
    /// Per primitive, for deformed ones: the lit pass's set 1 (pose buffer, skin, deltas).
    pub deform_sets: Vec<Option<vk::DescriptorSet>>,
    /// Billboards, drawn by the lit pass and in the pick pass as a contributor.
    pub billboards: Option<crate::billboards::Billboards>,
    /// Dropped after the sets that name them.
    _textures: Vec<Texture>,
    /// Discard hooks of masked materials, one per (cutoff, colour alpha, vertex colours).
    mask_programs: Vec<((u32, u32, bool), Arc<HookProgram>)>,
    /// Owns `deform_sets` and their layout (null without deformed primitives).
    _deform_pool: DeformPool,
}

/// What a pose region of [`GpuScene::worlds`] holds besides the world matrices: joint
/// matrices per skin and morph weights per weighted node, as counts (offsets follow).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PoseLayout {
    /// Regions (1 for a scene that does not move).
    pub regions: u32,
    /// Joints of each skin.
    pub skin_joints: Vec<u32>,
    /// Morph targets of each weighted node.
    pub weight_counts: Vec<u32>,
}

impl PoseLayout {
    /// Words of the slots' world matrices, then of each skin's palette, then of each node's
    /// weights; the region's size in words (a multiple of 16, so regions stay 64-byte apart).
    fn words(&self, slots: u32) -> (Vec<u32>, Vec<u32>, u32) {
        let mut at = slots.saturating_mul(16);
        let mut take = |words: u32| {
            let start = at;
            at = at.saturating_add(words);
            start
        };
        let palettes = self.skin_joints.iter().map(|&j| take(j.saturating_mul(16))).collect();
        let weights = self.weight_counts.iter().map(|&w| take(w)).collect();
        (palettes, weights, at.checked_next_multiple_of(16).unwrap_or(u32::MAX).max(16))
    }
}

/// The lit pass's set layout for deformed primitives (set 1): the pose buffer, the skin
/// stream and the morph deltas as storage buffers the vertex stage reads.
pub fn deform_set_layout(device: &ash::Device) -> Result<vk::DescriptorSetLayout, ContextError> {
    let bindings: [vk::DescriptorSetLayoutBinding; 3] = std::array::from_fn(|b| {
        vk::DescriptorSetLayoutBinding::default()
            .binding(b as u32)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(1)
            .stage_flags(vk::ShaderStageFlags::VERTEX)
    });
    // SAFETY: valid create info on a live device.
    Ok(unsafe { device.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings), None) }?)
}

/// The pool and layout behind [`GpuScene::deform_sets`].
struct DeformPool {
    device: ash::Device,
    pool: vk::DescriptorPool,
    layout: vk::DescriptorSetLayout,
}

impl Drop for DeformPool {
    fn drop(&mut self) {
        // SAFETY: the scene is dropped once the GPU no longer draws it; null handles are ignored.
        unsafe {
            self.device.destroy_descriptor_pool(self.pool, None);
            self.device.destroy_descriptor_set_layout(self.layout, None);
        }
    }
}

impl GpuScene {
    /// `primitives` with `worlds` uploaded as the slot buffer and `textures` as sampled
    /// images; no draws yet, nothing deformed.
    pub fn new(ctx: &VulkanContext, primitives: Vec<GpuPrimitive>, worlds: &[Mat4], textures: &[TextureData]) -> Result<Self, ContextError> {
        Self::with_pose(ctx, primitives, worlds, textures, PoseLayout { regions: 1, ..Default::default() })
    }

    /// As [`GpuScene::new`], with `pose.regions` pose regions (each starting as `worlds`,
    /// palettes identity, weights zero) and the lit pass's sets for deformed primitives.
    pub fn with_pose(
        ctx: &VulkanContext,
        primitives: Vec<GpuPrimitive>,
        worlds: &[Mat4],
        textures: &[TextureData],
        pose: PoseLayout,
    ) -> Result<Self, ContextError> {
        let slots = worlds.len() as u32;
        let (palettes, _, region_words) = pose.words(slots);
        // Deformed draws bind the pose buffer from its start as one storage range, through the
        // last region's joint matrices and weights: it must fit the device's largest range.
        let bytes = u64::from(region_words) * u64::from(pose.regions.max(1)) * 4;
        let limit = u64::from(ctx.properties.limits.max_storage_buffer_range);
        if primitives.iter().any(GpuPrimitive::deformable) && bytes > limit {
            let joints: u64 = pose.skin_joints.iter().map(|&j| u64::from(j)).sum();
            return Err(ContextError::Invalid(format!(
                "the scene's pose ({slots} node matrices, {joints} joint matrices and the morph weights; frames in flight: {}) takes {bytes} bytes, over this device's largest storage buffer range ({limit})",
                pose.regions.max(1)
            )));
        }
        let mut region = vec![0f32; region_words as usize];
        for (slot, m) in worlds.iter().enumerate() {
            region[slot * 16..slot * 16 + 16].copy_from_slice(&m.to_cols_array());
        }
        for (&at, &joints) in palettes.iter().zip(&pose.skin_joints) {
            for j in 0..joints {
                let w = (at + j * 16) as usize;
                region[w..w + 16].copy_from_slice(&Mat4::IDENTITY.to_cols_array());
            }
        }
        let all: Vec<f32> = (0..pose.regions.max(1)).flat_map(|_| region.iter().copied()).collect();
        let worlds_buffer = ctx.upload(&all, vk::BufferUsageFlags::VERTEX_BUFFER | vk::BufferUsageFlags::STORAGE_BUFFER)?;
        let white = TextureData { rgba: vec![255; 4].into(), width: 1, height: 1, sampler: SamplerDesc::default() };
        // Textures of one image (the loader shares its texels) upload it once, and textures
        // that sample alike share a sampler: a file naming one large image from many textures
        // must not take its memory (or the device's samplers) many times over.
        let mut images: HashMap<(usize, u32, u32), Arc<DeviceImage>> = HashMap::new();
        let mut samplers: Vec<(SamplerDesc, Arc<Sampler>)> = vec![];
        let mut uploaded: Vec<Texture> = vec![];
        for t in std::iter::once(&white).chain(textures) {
            let sampler = match samplers.iter().find(|(desc, _)| *desc == t.sampler) {
                Some((_, s)) => s.clone(),
                None => {
                    let s = ctx.sampler(&t.sampler.create_info())?;
                    samplers.push((t.sampler, s.clone()));
                    s
                }
            };
            let key = (Arc::as_ptr(&t.rgba) as *const u8 as usize, t.width, t.height);
            let image = match images.get(&key) {
                Some(image) => image.clone(),
                None => {
                    let image = ctx.upload_image(&t.rgba, t.width, t.height, vk::Format::R8G8B8A8_SRGB)?;
                    images.insert(key, image.clone());
                    image
                }
            };
            uploaded.push(Texture { image, sampler });
        }
        let texture_sets = ctx.texture_sets(&uploaded.iter().collect::<Vec<_>>())?;
        let mut deform_pool = DeformPool { device: ctx.device.clone(), pool: vk::DescriptorPool::null(), layout: vk::DescriptorSetLayout::null() };
        let mut deform_sets = vec![None; primitives.len()];
        let deformed: Vec<usize> = (0..primitives.len()).filter(|&i| primitives[i].deformable()).collect();
        if !deformed.is_empty() {
            deform_pool.layout = deform_set_layout(&ctx.device)?;
            let count = deformed.len() as u32;
            let sizes = [vk::DescriptorPoolSize { ty: vk::DescriptorType::STORAGE_BUFFER, descriptor_count: 3 * count }];
            // SAFETY: valid create info on a live device; owned by `deform_pool` right away.
            deform_pool.pool = unsafe { ctx.device.create_descriptor_pool(&vk::DescriptorPoolCreateInfo::default().max_sets(count).pool_sizes(&sizes), None) }?;
            let layouts = vec![deform_pool.layout; deformed.len()];
            // SAFETY: the pool has room for these sets.
            let sets = unsafe {
                ctx.device.allocate_descriptor_sets(&vk::DescriptorSetAllocateInfo::default().descriptor_pool(deform_pool.pool).set_layouts(&layouts))
            }?;
            for (&i, set) in deformed.iter().zip(sets) {
                let p = &primitives[i];
                let whole = |b: &HostBuffer| [vk::DescriptorBufferInfo { buffer: b.buffer, offset: 0, range: vk::WHOLE_SIZE }];
                let infos = [whole(&worlds_buffer), whole(p.skin.as_ref().unwrap_or(&worlds_buffer)), whole(p.morph.as_ref().unwrap_or(&worlds_buffer))];
                let writes: Vec<vk::WriteDescriptorSet> = infos
                    .iter()
                    .enumerate()
                    .map(|(b, info)| {
                        vk::WriteDescriptorSet::default()
                            .dst_set(set)
                            .dst_binding(b as u32)
                            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                            .buffer_info(info)
                    })
                    .collect();
                // SAFETY: fresh sets; the buffers are live with storage usage.
                unsafe { ctx.device.update_descriptor_sets(&writes, &[]) };
                deform_sets[i] = Some(set);
            }
        }
        let uncoloured = primitives.iter().filter(|p| p.colors.is_none()).map(|p| p.vertex_count as usize).max().unwrap_or(0);
        let white_colors = ctx.upload(&vec![[1f32; 4]; uncoloured.max(1)], vk::BufferUsageFlags::VERTEX_BUFFER)?;
        Ok(GpuScene {
            primitives,
            worlds: worlds_buffer,
            slot_count: slots,
            pose,
            render_draws: vec![],
            pick_draws: Arc::new([]),
            texture_sets,
            white_colors,
            deform_sets,
            billboards: None,
            _textures: uploaded,
            mask_programs: vec![],
            _deform_pool: deform_pool,
        })
    }

    /// The pick pass's contributors (the billboards), for `PickRequest::with_contributors`.
    pub fn contributors(&self) -> Vec<&dyn picking_vk::contributor::PickContributor> {
        self.billboards.iter().map(|b| b as &dyn picking_vk::contributor::PickContributor).collect()
    }

    /// Bytes of one pose region.
    pub fn region_bytes(&self) -> u64 {
        u64::from(self.pose.words(self.slot_count).2) * 4
    }

    /// Word offset (in the whole buffer) of skin `s`'s joint matrices in `region`.
    pub fn palette_word(&self, region: u32, skin: usize) -> u32 {
        let (palettes, _, size) = self.pose.words(self.slot_count);
        region.saturating_mul(size).saturating_add(palettes.get(skin).copied().unwrap_or(0))
    }

    /// Word offset (in the whole buffer) of weighted node `k`'s morph weights in `region`.
    pub fn weights_word(&self, region: u32, k: usize) -> u32 {
        let (_, weights, size) = self.pose.words(self.slot_count);
        region.saturating_mul(size).saturating_add(weights.get(k).copied().unwrap_or(0))
    }

    /// Writes one pose region: the slots' world matrices, each skin's joint matrices and each
    /// weighted node's morph weights (in the layout's order; missing values stay as they are).
    ///
    /// # Safety
    /// No submitted work that reads this region is still running.
    pub unsafe fn write_pose(&mut self, region: u32, worlds: &[Mat4], palettes: &[&[Mat4]], weights: &[&[f32]]) -> Result<(), ContextError> {
        let (palette_at, weight_at, size) = self.pose.words(self.slot_count);
        // A region past those made would wrap (in u32) into one that may be in use.
        if region >= self.pose.regions.max(1) {
            return Err(ContextError::Invalid(format!("pose region {region} of {}", self.pose.regions.max(1))));
        }
        let base = u64::from(region) * u64::from(size) * 4;
        let columns: Vec<[f32; 16]> = worlds.iter().take(self.slot_count as usize).map(Mat4::to_cols_array).collect();
        // SAFETY: the caller's contract; every write lies in the region.
        unsafe {
            self.worlds.write(base, &columns)?;
            for ((&at, palette), &joints) in palette_at.iter().zip(palettes).zip(&self.pose.skin_joints) {
                let columns: Vec<[f32; 16]> = palette.iter().take(joints as usize).map(Mat4::to_cols_array).collect();
                self.worlds.write(base + u64::from(at) * 4, &columns)?;
            }
            for ((&at, w), &count) in weight_at.iter().zip(weights).zip(&self.pose.weight_counts) {
                self.worlds.write(base + u64::from(at) * 4, &w[..w.len().min(count as usize)])?;
            }
        }
        Ok(())
    }

    /// The descriptor set the lit pass samples primitive `p`'s base colour through.
    pub fn texture_set(&self, p: &GpuPrimitive) -> vk::DescriptorSet {
        self.texture_sets.sets[p.texture.map_or(0, |t| t + 1).min(self.texture_sets.sets.len() - 1)]
    }

    /// The pick draw of primitive `index` as object `id` ([`GpuPrimitive::pick_draw`]): a
    /// masked primitive with a texture or vertex colours gets a discard hook that samples its
    /// texture through the lit pass's set with its UVs, times its vertex alpha where it has
    /// colours, and compares with the same cutoff as the lit pass.
    pub fn pick_draw(&mut self, index: usize, id: ObjectId, mirrored: bool) -> PickDraw {
        let p = &self.primitives[index];
        let draw = p.pick_draw(id, mirrored);
        let Some((cutoff, coloured)) = p.masked_by_hook() else { return draw };
        let key = (cutoff.to_bits(), p.color[3].to_bits(), coloured);
        let program = match self.mask_programs.iter().find(|(k, _)| *k == key) {
            Some((_, program)) => program.clone(),
            None => {
                // The lit pass's product, in its order: colour alpha, texel alpha, vertex alpha.
                let vertex_alpha = if coloured { " * f.attrib.z" } else { "" };
                let format = if coloured { AttributeFormat::Float32x4 } else { AttributeFormat::Float32x2 };
                let source = HookSource {
                    name: format!("alpha mask {cutoff}"),
                    shared: "layout(set = 1, binding = 0) uniform sampler2D base_colour;\n".into(),
                    discard: Some(format!(
                        "bool pick_discard(PickFragment f) {{\n    return {:?} * texture(base_colour, f.attrib.xy).a{vertex_alpha} < {:?};\n}}\n",
                        p.color[3], cutoff
                    )),
                    world: None,
                    attribute: Some(HookAttribute { format, interpolation: Interpolation::Smooth }),
                };
                // SAFETY: the texture sets' layout was created from HOOK_BINDINGS on the
                // picker's device, and lives as long as this scene, which outlives its picks.
                let program = unsafe { HookProgram::with_host_set(source, self.texture_sets.layout, &TextureSets::HOOK_BINDINGS) };
                self.mask_programs.push((key, program.clone()));
                program
            }
        };
        let p = &self.primitives[index];
        let (buffer, stride) = match &p.mask_attribute {
            Some(b) => (b, 16),
            None => (&p.uvs, 8),
        };
        let stream = AttributeStream { range: BufferRange { buffer: buffer.buffer, offset: 0, size: buffer.size }, stride, vertex_count: p.vertex_count };
        let set = self.texture_set(p);
        draw.with_hooks(DrawHooks::new(program).with_attribute(stream).with_descriptor_set(set))
    }

    /// Slots `first..first + count` of pose region `region` as a pick draw's instances.
    pub fn instances(&self, region: u32, first: u32, count: u32) -> Instances {
        let offset = u64::from(region) * self.region_bytes();
        Instances { range: BufferRange { buffer: self.worlds.buffer, offset, size: self.region_bytes() }, stride: 64, first, count }
    }

    /// The picker's deformation of primitive `index` in pose region `region`: its skin (the
    /// joint matrices of skin `skin`) and morph targets (the weights of weighted node
    /// `weights`), reading the buffers the lit pass reads; `pose` is the CPU copy for detail.
    pub fn deformation(&self, index: usize, region: u32, skin: Option<usize>, weights: Option<usize>, pose: Arc<DeformPose>) -> Option<Deformation> {
        let p = &self.primitives[index];
        let range = |b: &HostBuffer, offset: u64| BufferRange { buffer: b.buffer, offset, size: b.size - offset };
        let skin = match (p.skin.as_ref(), skin) {
            (Some(buffer), Some(s)) => {
                let stride = SKIN_SET_BYTES * p.skin_sets;
                let set = |k: u32| Influences {
                    joints: VertexStream { range: range(buffer, u64::from(k * SKIN_SET_BYTES)), stride },
                    joint_format: JointFormat::U16x4,
                    weights: VertexStream { range: range(buffer, u64::from(k * SKIN_SET_BYTES + 8)), stride },
                    weight_format: WeightFormat::Float32x4,
                };
                let joints = self.pose.skin_joints.get(s).copied().unwrap_or(0);
                let offset = u64::from(self.palette_word(region, s)) * 4;
                Some(Skin {
                    influences: set(0),
                    more_influences: (p.skin_sets > 1).then(|| set(1)),
                    matrices: BufferRange { buffer: self.worlds.buffer, offset, size: u64::from(joints) * 64 },
                    joint_count: joints,
                    // The influence buffer has storage usage too (see `GpuPrimitive::upload`).
                    streams_in_storage: true,
                })
            }
            _ => None,
        };
        let morph = match (p.morph.as_ref(), weights) {
            (Some(buffer), Some(k)) => Some(MorphTargets {
                deltas: range(buffer, 0),
                target_count: p.target_count,
                weights: BufferRange { buffer: self.worlds.buffer, offset: u64::from(self.weights_word(region, k)) * 4, size: u64::from(p.target_count) * 4 },
            }),
            _ => None,
        };
        (skin.is_some() || morph.is_some()).then_some(Deformation { skin, morph, pose: Some(pose), bounds_cover_deformation: false })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use picking_vk_context::ContextOptions;

    /// A pose past the device's largest storage range (lavapipe's and the Vulkan minimum:
    /// 128 MiB) is refused by name before anything is allocated for it; one that fits loads.
    #[test]
    fn a_pose_past_the_largest_storage_range_is_refused_at_upload() {
        let ctx = VulkanContext::new(&ContextOptions::default()).expect("a Vulkan device");
        let limit = u64::from(ctx.properties.limits.max_storage_buffer_range);
        let mut morphed = crate::shapes::cuboid(glam::Vec3::ONE, [1.0; 4]);
        morphed.morph_targets = vec![vec![glam::Vec3::Y; morphed.positions.len()]];
        let scene = |weights: u64| {
            let primitive = GpuPrimitive::upload(&ctx, &morphed).unwrap();
            let pose = PoseLayout { regions: 2, skin_joints: vec![], weight_counts: vec![weights as u32] };
            GpuScene::with_pose(&ctx, vec![primitive], &[Mat4::IDENTITY], &[], pose)
        };
        match scene(limit / 4) {
            Err(ContextError::Invalid(reason)) => assert!(reason.contains("largest storage buffer range"), "{reason}"),
            Err(other) => panic!("refused for another reason: {other}"),
            Ok(_) => panic!("a pose of 2 x {limit} bytes was accepted"),
        }
        assert!(scene(1).is_ok());
        assert!(ctx.validation_enabled(), "validation layer must be on for GPU tests");
        let messages = ctx.take_validation_messages();
        assert!(messages.is_empty(), "validation: {messages:?}");
    }
}
