//! Shader modules, the pipeline layout and the cache of pick pipelines, keyed by vertex layout.

use super::pipeline_key::{Flavour, PickPush, PipelineKey, PipelineLimits, DEFORM_PUSH_SIZE, RECT_PUSH_SIZE, STORAGE_PUSH_SIZE};
use crate::draw::hooks::DrawHooks;
use crate::error::{PickError, Requirement};
use crate::gpu::Memory;
use crate::pass::hook_glsl::{FragmentVariant, VertexVariant};
use crate::pass::hooked::HookedShaders;
use crate::pass::rendering::PipelineTarget;
use crate::pass::spirv;
use ash::vk;

/// Owns shader modules, the layout and every pipeline built for one pass.
pub(crate) struct Pipelines {
    memory: Memory,
    target: PipelineTarget,
    flavour: Flavour,
    color_attachments: u32,
    vert: vk::ShaderModule,
    vert_instanced: vk::ShaderModule,
    vert_instanced_rows: vk::ShaderModule,
    vert_batched: vk::ShaderModule,
    vert_instanced_storage: vk::ShaderModule,
    /// Deformed draws: no, four and eight influences as vertex attributes; then four and
    /// eight read from storage.
    vert_deformed: [vk::ShaderModule; 5],
    frag: vk::ShaderModule,
    /// The detail pass's fragment shader for batched draws, whose rows carry a primitive base
    /// (a GPU-planned span's first triangle); null in the other passes.
    frag_batched: vk::ShaderModule,
    pub layout: vk::PipelineLayout,
    /// For instance transforms in a storage buffer: set 0 as `layout`'s (an empty one in the
    /// hit pass, `empty_set`), set 1 the instance buffer's, `STORAGE_PUSH_SIZE` bytes.
    storage_layout: vk::PipelineLayout,
    /// For deformed draws: as `storage_layout` with `DEFORM_PUSH_SIZE` bytes (null where the
    /// device offers less).
    deform_layout: vk::PipelineLayout,
    /// `storage_layout`'s sets, which `walk_layout` starts with.
    storage_sets: [vk::DescriptorSetLayout; 2],
    /// For walked pairs of the GPU plan (`gpu_plan::walkable`): as `storage_layout`, and the
    /// plan buffer's set at set 2, with their vertex shader; null until
    /// [`Pipelines::enable_walk`].
    walk_layout: vk::PipelineLayout,
    vert_walked: vk::ShaderModule,
    empty_set: vk::DescriptorSetLayout,
    /// Shaders and layouts of hooked pipelines, per hook program.
    hooked: HookedShaders,
    /// Few keys ever exist (one per vertex layout in use): a list beats hashing. With the
    /// frame each was last used in.
    cache: Vec<(PipelineKey, vk::Pipeline, u64)>,
    /// The frame being recorded, and the oldest frame that may still be running on the GPU:
    /// pipelines last used before it may be destroyed.
    frame: u64,
    oldest_in_flight: u64,
    /// The most pipelines kept: past it, the least recently used that no running frame uses
    /// is destroyed (`usize::MAX`: never).
    max: usize,
    limits: PipelineLimits,
}

pub(super) fn words(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

pub(crate) fn create_module(memory: &Memory, bytes: &[u8], name: &str) -> Result<vk::ShaderModule, PickError> {
    let code = words(bytes);
    let info = vk::ShaderModuleCreateInfo::default().code(&code);
    // SAFETY: `info` points at valid SPIR-V words that outlive the call.
    let module = unsafe { memory.device.create_shader_module(&info, None) }?;
    memory.name(module, name);
    Ok(module)
}

impl Pipelines {
    /// Creates the shader modules and layout for pipelines of `target`; the rectangle
    /// flavours take the table's descriptor set layout.
    pub fn new(
        memory: &Memory,
        target: PipelineTarget,
        flavour: Flavour,
        set_layout: Option<vk::DescriptorSetLayout>,
        instance_set_layout: vk::DescriptorSetLayout,
        limits: PipelineLimits,
    ) -> Result<Self, PickError> {
        let max_push_constants = limits.max_push_constants;
        let fragment = match flavour {
            Flavour::Hit { detail: true } => FragmentVariant::HitDetail,
            Flavour::Hit { detail: false } => FragmentVariant::Hit,
            Flavour::RectVisible => FragmentVariant::RectVisible,
            Flavour::RectAll => FragmentVariant::RectAll,
        };
        let mut this = Pipelines {
            hooked: HookedShaders::new(memory, fragment, set_layout, instance_set_layout, max_push_constants),
            memory: memory.clone(),
            target,
            flavour,
            color_attachments: match flavour {
                Flavour::Hit { detail: true } => 3,
                Flavour::Hit { detail: false } => 2,
                Flavour::RectVisible | Flavour::RectAll => 1,
            },
            vert: vk::ShaderModule::null(),
            vert_instanced: vk::ShaderModule::null(),
            vert_instanced_rows: vk::ShaderModule::null(),
            vert_batched: vk::ShaderModule::null(),
            vert_instanced_storage: vk::ShaderModule::null(),
            vert_deformed: [vk::ShaderModule::null(); 5],
            frag: vk::ShaderModule::null(),
            frag_batched: vk::ShaderModule::null(),
            layout: vk::PipelineLayout::null(),
            storage_layout: vk::PipelineLayout::null(),
            deform_layout: vk::PipelineLayout::null(),
            storage_sets: [vk::DescriptorSetLayout::null(); 2],
            walk_layout: vk::PipelineLayout::null(),
            vert_walked: vk::ShaderModule::null(),
            empty_set: vk::DescriptorSetLayout::null(),
            cache: Vec::new(),
            frame: 0,
            oldest_in_flight: 0,
            max: usize::MAX,
            limits,
        };
        // Filled one by one: if a later step fails, `Drop` frees what was made (null is ignored).
        this.create_modules(memory)?;
        this.create_layouts(memory, set_layout, instance_set_layout)?;
        Ok(this)
    }

    /// The precompiled shader modules of the flavour.
    fn create_modules(&mut self, memory: &Memory) -> Result<(), PickError> {
        self.vert = create_module(memory, spirv::PICK_VERT, "pick.vert")?;
        self.vert_instanced = create_module(memory, spirv::PICK_INSTANCED_VERT, "pick_instanced.vert")?;
        self.vert_instanced_rows = create_module(memory, spirv::PICK_INSTANCED_ROWS_VERT, "pick_instanced_rows.vert")?;
        // The rectangle passes draw only table groups batched, their rows numbered as entries.
        self.vert_batched = match self.flavour {
            Flavour::Hit { detail: true } => create_module(memory, spirv::PICK_BATCHED_DETAIL_VERT, "pick_batched_detail.vert")?,
            Flavour::Hit { detail: false } => create_module(memory, spirv::PICK_BATCHED_VERT, "pick_batched.vert")?,
            Flavour::RectVisible | Flavour::RectAll => create_module(memory, spirv::PICK_BATCHED_RECT_VERT, "pick_batched_rect.vert")?,
        };
        self.vert_instanced_storage = create_module(memory, spirv::PICK_INSTANCED_STORAGE_VERT, "pick_instanced_storage.vert")?;
        self.vert_deformed[0] = create_module(memory, spirv::PICK_MORPHED_VERT, "pick_morphed.vert")?;
        self.vert_deformed[1] = create_module(memory, spirv::PICK_SKINNED_VERT, "pick_skinned.vert")?;
        self.vert_deformed[2] = create_module(memory, spirv::PICK_SKINNED8_VERT, "pick_skinned8.vert")?;
        self.vert_deformed[3] = create_module(memory, spirv::PICK_SKINNED_STORAGE_VERT, "pick_skinned_storage.vert")?;
        self.vert_deformed[4] = create_module(memory, spirv::PICK_SKINNED8_STORAGE_VERT, "pick_skinned8_storage.vert")?;
        self.frag = match self.flavour {
            Flavour::Hit { detail: true } => create_module(memory, spirv::PICK_DETAIL_FRAG, "pick_detail.frag"),
            Flavour::Hit { detail: false } => create_module(memory, spirv::PICK_FRAG, "pick.frag"),
            Flavour::RectVisible => create_module(memory, spirv::PICK_RECT_FRAG, "pick_rect.frag"),
            Flavour::RectAll => create_module(memory, spirv::PICK_RECT_ALL_FRAG, "pick_rect_all.frag"),
        }?;
        if self.flavour == (Flavour::Hit { detail: true }) {
            self.frag_batched = create_module(memory, spirv::PICK_BATCHED_DETAIL_FRAG, "pick_batched_detail.frag")?;
        }
        Ok(())
    }

    /// The plain, storage and (where the push constants allow) deformed pipeline layouts.
    fn create_layouts(
        &mut self,
        memory: &Memory,
        set_layout: Option<vk::DescriptorSetLayout>,
        instance_set_layout: vk::DescriptorSetLayout,
    ) -> Result<(), PickError> {
        let push_size = if matches!(self.flavour, Flavour::Hit { .. }) { PickPush::SIZE } else { RECT_PUSH_SIZE };
        let ranges = [vk::PushConstantRange::default().stage_flags(vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT).size(push_size)];
        let set_layouts: Vec<vk::DescriptorSetLayout> = set_layout.into_iter().collect();
        let info = vk::PipelineLayoutCreateInfo::default().push_constant_ranges(&ranges).set_layouts(&set_layouts);
        // SAFETY: valid create info on a live device.
        self.layout = unsafe { memory.device.create_pipeline_layout(&info, None) }?;
        memory.name(self.layout, "pipeline layout");
        let set0 = match set_layout {
            Some(layout) => layout,
            None => {
                // SAFETY: an empty set layout on a live device; destroyed in `Drop`.
                self.empty_set = unsafe { memory.device.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default(), None) }?;
                self.empty_set
            }
        };
        let storage_sets = [set0, instance_set_layout];
        self.storage_sets = storage_sets;
        let storage_ranges =
            [vk::PushConstantRange::default().stage_flags(vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT).size(STORAGE_PUSH_SIZE)];
        let info = vk::PipelineLayoutCreateInfo::default().push_constant_ranges(&storage_ranges).set_layouts(&storage_sets);
        // SAFETY: valid create info on a live device; the set layouts are live.
        self.storage_layout = unsafe { memory.device.create_pipeline_layout(&info, None) }?;
        if self.limits.max_push_constants >= DEFORM_PUSH_SIZE {
            let deform_ranges =
                [vk::PushConstantRange::default().stage_flags(vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT).size(DEFORM_PUSH_SIZE)];
            let info = vk::PipelineLayoutCreateInfo::default().push_constant_ranges(&deform_ranges).set_layouts(&storage_sets);
            // SAFETY: as above; the push range is within the device's limit.
            self.deform_layout = unsafe { memory.device.create_pipeline_layout(&info, None) }?;
        }
        Ok(())
    }

    /// Lets walked pairs of the GPU plan be drawn: their vertex shader and a layout that
    /// binds the plan buffer's set (`plan_set_layout`) at set 2.
    pub fn enable_walk(&mut self, plan_set_layout: vk::DescriptorSetLayout) -> Result<(), PickError> {
        if self.walk_layout != vk::PipelineLayout::null() {
            return Ok(());
        }
        self.vert_walked = create_module(&self.memory, spirv::PICK_INSTANCED_STORAGE_WALKED_VERT, "pick_instanced_storage_walked.vert")?;
        let sets = [self.storage_sets[0], self.storage_sets[1], plan_set_layout];
        let ranges = [vk::PushConstantRange::default().stage_flags(vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT).size(STORAGE_PUSH_SIZE)];
        let info = vk::PipelineLayoutCreateInfo::default().push_constant_ranges(&ranges).set_layouts(&sets);
        // SAFETY: valid create info on a live device; the set layouts are live.
        self.walk_layout = unsafe { self.memory.device.create_pipeline_layout(&info, None) }?;
        Ok(())
    }

    /// Keeps at most `max` pipelines (see [`Pipelines::begin_frame`]).
    pub fn set_limit(&mut self, max: usize) {
        self.max = max.max(1);
    }

    /// The frame about to be recorded, and the oldest frame whose GPU work may still run.
    pub fn begin_frame(&mut self, frame: u64, oldest_in_flight: u64) {
        self.frame = frame;
        self.oldest_in_flight = oldest_in_flight.min(frame);
    }

    /// How many pipelines are built.
    pub fn len(&self) -> usize {
        self.cache.len()
    }

    /// Hook stages compiled so far.
    pub fn hook_compilations(&self) -> u32 {
        self.hooked.compilations
    }

    /// The pipeline for `key`, built on first use (marked used in this frame); `hooks` are
    /// the draw's, which hooked keys need.
    pub fn get(&mut self, key: PipelineKey, hooks: Option<&DrawHooks>) -> Result<vk::Pipeline, PickError> {
        let frame = self.frame;
        if let Some(entry) = self.cache.iter_mut().find(|(k, _, _)| *k == key) {
            entry.2 = frame;
            return Ok(entry.1);
        }
        let pipeline = self.build(key, hooks)?;
        self.evict_one();
        self.cache.push((key, pipeline, frame));
        Ok(pipeline)
    }

    /// At the limit, destroys the least recently used pipeline no running frame can use.
    fn evict_one(&mut self) {
        if self.cache.len() < self.max {
            return;
        }
        let oldest = self.oldest_in_flight;
        let victim = self.cache.iter().enumerate().filter(|(_, e)| e.2 < oldest).min_by_key(|(_, e)| e.2).map(|(i, _)| i);
        if let Some(i) = victim {
            let (_, pipeline, _) = self.cache.swap_remove(i);
            // SAFETY: last used by a frame older than every frame that may still run, so no
            // pending command buffer of the host's uses it.
            unsafe { self.memory.device.destroy_pipeline(pipeline, None) };
        }
    }

    /// The pipeline for `key` and its layout, if it was already built.
    pub fn cached(&self, key: PipelineKey) -> Option<(vk::Pipeline, vk::PipelineLayout)> {
        let pipeline = self.cache.iter().find(|(k, _, _)| *k == key).map(|(_, p, _)| *p)?;
        match key.hook {
            Some(h) => Some((pipeline, self.hooked.layout(h.program, key.deform.is_some() || key.instance_storage)?)),
            None if key.deform.is_some() => Some((pipeline, self.deform_layout)),
            None if key.walk => Some((pipeline, self.walk_layout)),
            None if key.instance_storage => Some((pipeline, self.storage_layout)),
            None => Some((pipeline, self.layout)),
        }
    }

    /// The vertex and fragment modules and the layout a pipeline of `key` is built from.
    fn shaders_for(&mut self, key: &PipelineKey, hooks: Option<&DrawHooks>) -> Result<(vk::ShaderModule, vk::ShaderModule, vk::PipelineLayout), PickError> {
        Ok(match (key.hook, hooks) {
            (Some(_), Some(hooks)) => {
                let variant = match (key.instance_stride, key.deform) {
                    (_, Some(d)) => VertexVariant::Deformed(d),
                    (Some(_), None) if key.instance_storage => VertexVariant::InstancedStorage,
                    (Some(_), None) if key.instance_rows => VertexVariant::InstancedRows,
                    (Some(_), None) => VertexVariant::InstancedMat4,
                    (None, None) if key.batched => VertexVariant::Batched {
                        rect: matches!(self.flavour, Flavour::RectVisible | Flavour::RectAll),
                        primitive_base: self.primitive_base(key),
                    },
                    (None, None) => VertexVariant::Plain,
                };
                self.hooked.prepare(hooks, variant)?
            }
            (Some(_), None) => return Err(PickError::Internal("a hooked pipeline was asked for without the draw's hooks")),
            (None, _) if key.deform.is_some() => {
                if self.deform_layout == vk::PipelineLayout::null() {
                    let needed = format!("{DEFORM_PUSH_SIZE} bytes of push constants for deformed draws");
                    return Err(PickError::Unsupported { missing: vec![Requirement::Limit { name: "maxPushConstantsSize", needed }] });
                }
                let module = key.deform.map_or(0, |d| d.shader_variant());
                (self.vert_deformed[module], self.frag, self.deform_layout)
            }
            (None, _) if key.walk && self.walk_layout == vk::PipelineLayout::null() => {
                return Err(PickError::Internal("a walked pipeline was asked for before Pipelines::enable_walk"))
            }
            (None, _) if key.walk => (self.vert_walked, self.frag, self.walk_layout),
            (None, _) if key.instance_storage => (self.vert_instanced_storage, self.frag, self.storage_layout),
            (None, _) => {
                let (vert, frag) = match (key.instance_stride, key.batched) {
                    (Some(_), _) if key.instance_rows => (self.vert_instanced_rows, self.frag),
                    (Some(_), _) => (self.vert_instanced, self.frag),
                    (None, true) if self.primitive_base(key) => (self.vert_batched, self.frag_batched),
                    (None, true) => (self.vert_batched, self.frag),
                    (None, false) => (self.vert, self.frag),
                };
                (vert, frag, self.layout)
            }
        })
    }

    /// Whether a pipeline of `key` reads its rows' primitive base: batched draws in the
    /// detail pass, hooked or not.
    fn primitive_base(&self, key: &PipelineKey) -> bool {
        self.flavour == (Flavour::Hit { detail: true }) && key.batched && key.instance_stride.is_none()
    }

    fn build(&mut self, key: PipelineKey, hooks: Option<&DrawHooks>) -> Result<vk::Pipeline, PickError> {
        let entry = c"main";
        let (vert, frag, layout) = self.shaders_for(&key, hooks)?;
        let raster = key.raster.state();
        let (line_width, point_size) = self.limits.thickness(raster.line_width, raster.point_size);
        // Every vertex shader writes gl_PointSize from constant 0 (used by point lists only);
        // deformed ones reading influences from storage decode them by constants 1 to 4.
        let mut constants = [0u8; 20];
        constants[..4].copy_from_slice(&point_size.to_ne_bytes());
        let codes = key.deform.map_or([0; 4], |d| d.format_codes());
        for (bytes, code) in constants[4..].chunks_exact_mut(4).zip(codes) {
            bytes.copy_from_slice(&code.to_ne_bytes());
        }
        let entries: [vk::SpecializationMapEntry; 5] =
            std::array::from_fn(|k| vk::SpecializationMapEntry { constant_id: k as u32, offset: 4 * k as u32, size: 4 });
        let specialization = vk::SpecializationInfo::default().map_entries(&entries).data(&constants);
        let stages = [
            vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::VERTEX).module(vert).name(entry).specialization_info(&specialization),
            vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::FRAGMENT).module(frag).name(entry),
        ];
        let (bindings, attributes) = super::vertex_input::vertex_input(&key, hooks, self.primitive_base(&key));
        let vertex_input = vk::PipelineVertexInputStateCreateInfo::default().vertex_binding_descriptions(&bindings).vertex_attribute_descriptions(&attributes);
        let input_assembly =
            vk::PipelineInputAssemblyStateCreateInfo::default().topology(raster.topology.vk()).primitive_restart_enable(raster.primitive_restart);
        let viewport = vk::PipelineViewportStateCreateInfo::default().viewport_count(1).scissor_count(1);
        // The host's culling and depth bias (by default both faces pick, as a ray cast would).
        let bias = raster.depth_bias.unwrap_or_default();
        let rasterization = vk::PipelineRasterizationStateCreateInfo::default()
            .polygon_mode(vk::PolygonMode::FILL)
            // A key always carries the culling it was resolved to.
            .cull_mode(raster.culling.unwrap_or_default().mode)
            .front_face(raster.culling.unwrap_or_default().front_face)
            .depth_bias_enable(raster.depth_bias.is_some())
            .depth_bias_constant_factor(bias.constant)
            .depth_bias_clamp(bias.clamp)
            .depth_bias_slope_factor(bias.slope)
            .line_width(line_width);
        let multisample = vk::PipelineMultisampleStateCreateInfo::default().rasterization_samples(vk::SampleCountFlags::TYPE_1);
        let compare = raster.depth_compare.unwrap_or(key.depth.nearer_wins());
        // Select-through sees every surface: no depth test, nothing written but the table.
        let through = self.flavour == Flavour::RectAll;
        let depth = vk::PipelineDepthStencilStateCreateInfo::default().depth_test_enable(!through).depth_write_enable(!through).depth_compare_op(compare);
        let mask = if through { vk::ColorComponentFlags::empty() } else { vk::ColorComponentFlags::RGBA };
        let blend_attachments = vec![vk::PipelineColorBlendAttachmentState::default().color_write_mask(mask); self.color_attachments as usize];
        let blend = vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend_attachments);
        let dynamic_states = [vk::DynamicState::VIEWPORT, vk::DynamicState::SCISSOR];
        let dynamic = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic_states);
        let info = vk::GraphicsPipelineCreateInfo::default()
            .stages(&stages)
            .vertex_input_state(&vertex_input)
            .input_assembly_state(&input_assembly)
            .viewport_state(&viewport)
            .rasterization_state(&rasterization)
            .multisample_state(&multisample)
            .depth_stencil_state(&depth)
            .color_blend_state(&blend)
            .dynamic_state(&dynamic)
            .layout(layout);
        let mut formats = vk::PipelineRenderingCreateInfo::default();
        let info = match &self.target {
            PipelineTarget::RenderPass(pass) => info.render_pass(*pass).subpass(0),
            PipelineTarget::Formats { colors, depth } => {
                formats = formats.color_attachment_formats(colors).depth_attachment_format(*depth);
                info.push_next(&mut formats)
            }
        };
        // SAFETY: every pointer in `info` refers to locals (or `self.target`) alive for the
        // call; modules, layout and render pass are live objects of this device.
        let result = unsafe { self.memory.device.create_graphics_pipelines(self.memory.pipeline_cache, &[info], None) };
        match result {
            Ok(pipelines) => {
                let pipeline = pipelines.first().copied().unwrap_or_default();
                self.memory.name(pipeline, &format!("pipeline {key:?}"));
                Ok(pipeline)
            }
            Err((_, err)) => Err(err.into()),
        }
    }
}

impl Drop for Pipelines {
    fn drop(&mut self) {
        // SAFETY: the owner guarantees the GPU no longer uses these objects; null handles are ignored.
        unsafe {
            for (_, p, _) in self.cache.drain(..) {
                self.memory.device.destroy_pipeline(p, None);
            }
            self.memory.device.destroy_pipeline_layout(self.layout, None);
            self.memory.device.destroy_pipeline_layout(self.storage_layout, None);
            self.memory.device.destroy_pipeline_layout(self.deform_layout, None);
            self.memory.device.destroy_pipeline_layout(self.walk_layout, None);
            self.memory.device.destroy_descriptor_set_layout(self.empty_set, None);
            for m in [
                self.vert,
                self.vert_instanced,
                self.vert_instanced_rows,
                self.vert_batched,
                self.vert_instanced_storage,
                self.vert_walked,
                self.frag,
                self.frag_batched,
            ]
            .into_iter()
            .chain(self.vert_deformed)
            {
                self.memory.device.destroy_shader_module(m, None);
            }
        }
    }
}
