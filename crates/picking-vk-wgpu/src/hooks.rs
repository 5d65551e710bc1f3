//! Hooks (run-time GLSL discard and world-adjust hooks, `picking_vk::hooks`) on wgpu draws:
//! the bridge makes the program's descriptor set layout, its samplers and each draw's set
//! from the app's wgpu resources, and keeps them alive as long as anything uses them.

use crate::error::{validated, WgpuPickError};
use ash::vk;
use picking_vk::hooks::{AttributeStream, DrawHooks, HookBinding, HookProgram, HookSource};
use std::sync::Arc;
use wgpu::hal::api::Vulkan;

/// What binding `i` of a hook program's set (`layout(set = 1, binding = i)`) holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HookBindingKind {
    /// A `uniform` block: a buffer with `BufferUsages::UNIFORM`.
    Uniform,
    /// A `readonly buffer`: a buffer with `BufferUsages::STORAGE`.
    Storage,
    /// A `sampler2D`: a colour texture with `TextureUsages::TEXTURE_BINDING`, sampled with a
    /// sampler the bridge makes for the program.
    Texture {
        /// Magnification and minification filter.
        filter: wgpu::FilterMode,
        /// Addressing outside 0..1, on both axes.
        address: wgpu::AddressMode,
    },
}

/// The app's resource for one binding of a draw's set, in binding order.
#[derive(Clone, Copy, Debug)]
pub enum HookResource<'a> {
    /// For [`HookBindingKind::Uniform`] and [`HookBindingKind::Storage`]: the whole buffer.
    Buffer(&'a wgpu::Buffer),
    /// For [`HookBindingKind::Texture`]: the view the hook samples (its texture's state is
    /// made known to wgpu).
    Texture(&'a wgpu::TextureView),
}

/// The per-vertex attribute a hook program declares, from a vertex buffer:
/// `set_vertex_buffer(slot, buffer.slice(offset..))` with `array_stride`.
#[derive(Clone, Copy, Debug)]
pub struct HookAttributeSource<'a> {
    /// The buffer (`BufferUsages::VERTEX`).
    pub buffer: &'a wgpu::Buffer,
    /// Where the first vertex's attribute starts, in bytes.
    pub offset: u64,
    /// Bytes from one vertex's attribute to the next.
    pub array_stride: u64,
}

/// A hook program's Vulkan objects: destroyed when the program, every draw using it and the
/// picker it was made for are gone (the picker holds it, so after the picker).
struct ProgramObjects {
    device: ash::Device,
    // Keeps the Vulkan device alive as long as these objects, and validates the resources.
    wgpu: wgpu::Device,
    /// The same bindings as wgpu sees them: a draw's resources are checked against it.
    wgpu_layout: wgpu::BindGroupLayout,
    layout: vk::DescriptorSetLayout,
    samplers: Vec<vk::Sampler>,
    pool: vk::DescriptorPool,
    /// Held while a set is allocated from or freed into `pool`: Vulkan asks the host to
    /// synchronize a pool, and draws and slots holding sets drop on any thread.
    pool_lock: std::sync::Mutex<()>,
}

impl Drop for ProgramObjects {
    fn drop(&mut self) {
        // SAFETY: every set was freed (their guards hold this), the picker that built
        // pipelines from the layout is gone, and no pending work uses them (the slots hold
        // the guards until their picks completed).
        unsafe {
            self.device.destroy_descriptor_pool(self.pool, None);
            self.device.destroy_descriptor_set_layout(self.layout, None);
            for &s in &self.samplers {
                self.device.destroy_sampler(s, None);
            }
        }
    }
}

/// A hook program on the bridge's device (made by [`crate::WgpuPicker::hook_program`]).
#[derive(Clone)]
pub struct WgpuHookProgram {
    program: Arc<HookProgram>,
    kinds: Vec<HookBindingKind>,
    objects: Option<Arc<ProgramObjects>>,
}

impl std::fmt::Debug for WgpuHookProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WgpuHookProgram").field("program", &self.program.source().name).field("kinds", &self.kinds).finish()
    }
}

/// A draw's descriptor set, freed into its program's pool when the last user is gone, with
/// the views and buffers written into it (their Vulkan handles live as long as the set).
struct SetGuard {
    objects: Arc<ProgramObjects>,
    set: vk::DescriptorSet,
    _views: Vec<wgpu::TextureView>,
    _buffers: Vec<wgpu::Buffer>,
}

impl Drop for SetGuard {
    fn drop(&mut self) {
        let _pool = self.objects.pool_lock.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: the set came from this pool (created with FREE_DESCRIPTOR_SET), which the
        // lock above is held for; the last draw and slot holding it are gone, so no pending
        // work reads it.
        if let Err(e) = unsafe { self.objects.device.free_descriptor_sets(self.objects.pool, &[self.set]) } {
            log::warn!("picking-vk-wgpu: freeing a hook set: {e}");
        }
    }
}

/// What [`WgpuHookProgram::draw_hooks`] hands a draw: the picker's hooks, and what the pick
/// must keep alive and make known to wgpu.
pub(crate) struct BuiltHooks {
    pub hooks: DrawHooks,
    pub buffers: Vec<(wgpu::Buffer, wgpu::BufferUses)>,
    pub textures: Vec<wgpu::Texture>,
    pub keep: Option<Arc<dyn std::any::Any + Send + Sync>>,
    /// The device the set belongs to (none without a set).
    pub device: Option<vk::Device>,
}

impl WgpuHookProgram {
    /// Makes the program's set layout (one binding per kind, visible to vertex and fragment
    /// stages, textures with immutable samplers) and a pool for `max_draws` sets.
    pub(crate) fn new(device: &wgpu::Device, source: HookSource, kinds: &[HookBindingKind], max_draws: u32) -> Result<Self, WgpuPickError> {
        if kinds.is_empty() {
            return Ok(WgpuHookProgram { program: HookProgram::new(source), kinds: vec![], objects: None });
        }
        // Validated first: a layout past the device's limits (more textures a stage than it
        // allows) is refused here, before any Vulkan object is made, not by wgpu's handler.
        let wgpu_layout = crate::error::validated(device, "the hooks' bind group layout", || wgpu_layout(device, kinds))?;
        // SAFETY: the handles are read while the guard lives; the function table is cloned.
        let hal = unsafe { device.as_hal::<Vulkan>() }.ok_or_else(WgpuPickError::not_vulkan)?;
        let raw = hal.raw_device().clone();
        let mut objects = ProgramObjects {
            device: raw.clone(),
            wgpu: device.clone(),
            wgpu_layout,
            layout: vk::DescriptorSetLayout::null(),
            samplers: vec![],
            pool: vk::DescriptorPool::null(),
            pool_lock: std::sync::Mutex::new(()),
        };
        let stages = vk::ShaderStageFlags::VERTEX | vk::ShaderStageFlags::FRAGMENT;
        let mut bindings = vec![];
        for (i, kind) in kinds.iter().enumerate() {
            let descriptor_type = match kind {
                HookBindingKind::Uniform => vk::DescriptorType::UNIFORM_BUFFER,
                HookBindingKind::Storage => vk::DescriptorType::STORAGE_BUFFER,
                HookBindingKind::Texture { filter, address } => {
                    let filter = if *filter == wgpu::FilterMode::Linear { vk::Filter::LINEAR } else { vk::Filter::NEAREST };
                    let address = match address {
                        wgpu::AddressMode::Repeat => vk::SamplerAddressMode::REPEAT,
                        wgpu::AddressMode::MirrorRepeat => vk::SamplerAddressMode::MIRRORED_REPEAT,
                        _ => vk::SamplerAddressMode::CLAMP_TO_EDGE,
                    };
                    let info = vk::SamplerCreateInfo::default()
                        .mag_filter(filter)
                        .min_filter(filter)
                        .address_mode_u(address)
                        .address_mode_v(address)
                        .address_mode_w(address)
                        .max_lod(vk::LOD_CLAMP_NONE);
                    // SAFETY: a valid create info on wgpu's live device; owned by `objects` at once.
                    objects.samplers.push(unsafe { raw.create_sampler(&info, None) }.map_err(picking_vk::PickError::Vulkan)?);
                    vk::DescriptorType::COMBINED_IMAGE_SAMPLER
                }
            };
            bindings.push(HookBinding { binding: i as u32, descriptor_type, count: 1, stages });
        }
        let mut samplers = objects.samplers.iter();
        let vk_bindings: Vec<_> = bindings
            .iter()
            .map(|b| {
                let binding =
                    vk::DescriptorSetLayoutBinding::default().binding(b.binding).descriptor_type(b.descriptor_type).descriptor_count(1).stage_flags(b.stages);
                match b.descriptor_type {
                    vk::DescriptorType::COMBINED_IMAGE_SAMPLER => {
                        binding.immutable_samplers(std::slice::from_ref(samplers.next().expect("a sampler per texture")))
                    }
                    _ => binding,
                }
            })
            .collect();
        // SAFETY: as above; the immutable samplers live as long as the layout.
        objects.layout = unsafe { raw.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(&vk_bindings), None) }
            .map_err(picking_vk::PickError::Vulkan)?;
        let sets = max_draws.max(1);
        let sizes: Vec<_> = bindings.iter().map(|b| vk::DescriptorPoolSize { ty: b.descriptor_type, descriptor_count: sets }).collect();
        let info = vk::DescriptorPoolCreateInfo::default().flags(vk::DescriptorPoolCreateFlags::FREE_DESCRIPTOR_SET).max_sets(sets).pool_sizes(&sizes);
        // SAFETY: as above.
        objects.pool = unsafe { raw.create_descriptor_pool(&info, None) }.map_err(picking_vk::PickError::Vulkan)?;
        // SAFETY: the layout is this device's, made from exactly `bindings`, without flags,
        // and it lives as long as `objects`, which the picker this program is for holds.
        let program = unsafe { HookProgram::with_host_set(source, objects.layout, &bindings) };
        Ok(WgpuHookProgram { program, kinds: kinds.to_vec(), objects: Some(Arc::new(objects)) })
    }

    /// The picker's program (its source, whether it adjusts positions).
    pub fn program(&self) -> &Arc<HookProgram> {
        &self.program
    }

    /// The objects the picker must keep alive.
    pub(crate) fn keep_alive(&self) -> Option<Arc<dyn std::any::Any + Send + Sync>> {
        self.objects.clone().map(|o| o as Arc<dyn std::any::Any + Send + Sync>)
    }

    /// A draw's hooks: its set, written with `resources`, and its attribute stream (holding
    /// every element that lies inside its buffer).
    pub(crate) fn draw_hooks(&self, resources: &[HookResource<'_>], attribute: Option<HookAttributeSource<'_>>) -> Result<BuiltHooks, WgpuPickError> {
        let bad = |reason: String| WgpuPickError::BufferRange { what: "hook resource", reason };
        if resources.len() != self.kinds.len() {
            return Err(bad(format!("{} resources for a program of {} bindings", resources.len(), self.kinds.len())));
        }
        let mut hooks = DrawHooks::new(Arc::clone(&self.program));
        let (mut buffers, mut textures) = (vec![], vec![]);
        if let Some(a) = attribute {
            let range = crate::buffers::whole_range(a.buffer, a.offset, "hook attribute")?;
            crate::buffers::check_usage(a.buffer, wgpu::BufferUsages::VERTEX, "hook attribute", "VERTEX")?;
            let stride = u32::try_from(a.array_stride).map_err(|_| bad(format!("array stride {} is too large", a.array_stride)))?;
            let declared = self.program.source().attribute.ok_or_else(|| bad("an attribute stream for a program that declares no attribute".into()))?;
            let vertex_count = crate::buffers::elements_in(range.size, u64::from(declared.format.bytes()), stride);
            hooks = hooks.with_attribute(AttributeStream { range, stride, vertex_count });
            buffers.push((a.buffer.clone(), wgpu::BufferUses::VERTEX));
        }
        let Some(objects) = &self.objects else {
            return Ok(BuiltHooks { hooks, buffers, textures, keep: None, device: None });
        };
        check_resources(objects, resources)?;
        // Usage, device and liveness were checked by `check_resources`; each resource's
        // handle is read and written into the set while its `as_hal` guard holds wgpu's
        // lock, so no `destroy()` frees a buffer or view in between. A view's guard does not
        // cover its texture's image: the texture is checked to live after its view is written.
        for (kind, resource) in self.kinds.iter().zip(resources) {
            match (kind, resource) {
                (HookBindingKind::Uniform | HookBindingKind::Storage, HookResource::Buffer(b)) => {
                    let state = if *kind == HookBindingKind::Uniform { wgpu::BufferUses::UNIFORM } else { wgpu::BufferUses::STORAGE_READ_ONLY };
                    // A buffer of no bytes binds nothing.
                    crate::buffers::whole_range(b, 0, "hook")?;
                    buffers.push(((*b).clone(), state));
                }
                (HookBindingKind::Texture { .. }, HookResource::Texture(view)) => textures.push(view.texture().clone()),
                _ => return Err(bad(format!("a resource of the wrong kind for a {kind:?} binding"))),
            }
        }
        let pool = objects.pool_lock.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: the pool is this program's, with room for its draws; the lock is held.
        let set = unsafe {
            objects.device.allocate_descriptor_sets(&vk::DescriptorSetAllocateInfo::default().descriptor_pool(objects.pool).set_layouts(&[objects.layout]))
        };
        drop(pool);
        let set = set.map_err(|e| bad(format!("no descriptor set left in the program's pool ({e}): make the program for more draws")))?[0];
        let views = resources.iter().filter_map(|r| if let HookResource::Texture(v) = r { Some((*v).clone()) } else { None }).collect();
        let set_buffers = buffers.iter().map(|(b, _): &(wgpu::Buffer, _)| b.clone()).collect();
        // Frees the set if a write below fails.
        let guard = SetGuard { objects: Arc::clone(objects), set, _views: views, _buffers: set_buffers };
        for (n, (kind, resource)) in self.kinds.iter().zip(resources).enumerate() {
            let write = vk::WriteDescriptorSet::default().dst_set(set).dst_binding(n as u32);
            match resource {
                HookResource::Buffer(b) => {
                    let ty = if *kind == HookBindingKind::Uniform { vk::DescriptorType::UNIFORM_BUFFER } else { vk::DescriptorType::STORAGE_BUFFER };
                    crate::buffers::with_raw_buffer(b, "hook", |raw| {
                        let info = [vk::DescriptorBufferInfo { buffer: raw, offset: 0, range: b.size() }];
                        // SAFETY: the set is new and unused; the buffer is live (its guard is
                        // held) and of the kind the binding declares.
                        unsafe { objects.device.update_descriptor_sets(&[write.descriptor_type(ty).buffer_info(&info)], &[]) };
                    })?;
                }
                HookResource::Texture(view) => {
                    // SAFETY: the view is only read while its guard lives.
                    let hal = unsafe { view.as_hal::<Vulkan>() }.ok_or_else(|| bad("a destroyed texture view".into()))?;
                    // SAFETY: as above.
                    let image_view = unsafe { hal.raw_handle() };
                    let info = [vk::DescriptorImageInfo { sampler: vk::Sampler::null(), image_view, image_layout: vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL }];
                    // SAFETY: the set is new and unused; the view is live (`hal` holds its
                    // guard) and of the kind the binding declares.
                    unsafe {
                        objects.device.update_descriptor_sets(&[write.descriptor_type(vk::DescriptorType::COMBINED_IMAGE_SAMPLER).image_info(&info)], &[])
                    };
                    drop(hal);
                    // A texture destroyed since `check_resources` leaves the set unused: the
                    // guard frees it. (Checked with the view's guard dropped: wgpu takes one
                    // guard a thread.)
                    // SAFETY: only whether the texture lives is read.
                    if unsafe { view.texture().as_hal::<Vulkan>() }.is_none() {
                        return Err(bad("a destroyed texture".into()));
                    }
                }
            }
        }
        hooks = hooks.with_descriptor_set(set);
        Ok(BuiltHooks { hooks, buffers, textures, keep: Some(Arc::new(guard)), device: Some(objects.device.handle()) })
    }
}

/// The wgpu bind group layout of `kinds`: what a draw's resources are validated against.
fn wgpu_layout(device: &wgpu::Device, kinds: &[HookBindingKind]) -> wgpu::BindGroupLayout {
    let entries: Vec<_> = kinds
        .iter()
        .enumerate()
        .map(|(i, kind)| wgpu::BindGroupLayoutEntry {
            binding: i as u32,
            visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
            ty: match kind {
                HookBindingKind::Uniform => {
                    wgpu::BindingType::Buffer { ty: wgpu::BufferBindingType::Uniform, has_dynamic_offset: false, min_binding_size: None }
                }
                HookBindingKind::Storage => {
                    wgpu::BindingType::Buffer { ty: wgpu::BufferBindingType::Storage { read_only: true }, has_dynamic_offset: false, min_binding_size: None }
                }
                HookBindingKind::Texture { .. } => wgpu::BindingType::Texture {
                    sample_type: wgpu::TextureSampleType::Float { filterable: true },
                    view_dimension: wgpu::TextureViewDimension::D2,
                    multisampled: false,
                },
            },
            count: None,
        })
        .collect();
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some("picking-vk hook resources"), entries: &entries })
}

/// Has wgpu validate `resources` as a bind group of the program's layout on its device:
/// every one of that device, alive, of the usage, sample type and dimension its binding
/// needs. Nothing is written into a Vulkan set before this passes.
fn check_resources(objects: &ProgramObjects, resources: &[HookResource<'_>]) -> Result<(), WgpuPickError> {
    let entries: Vec<_> = resources
        .iter()
        .enumerate()
        .map(|(i, r)| wgpu::BindGroupEntry {
            binding: i as u32,
            resource: match r {
                HookResource::Buffer(b) => b.as_entire_binding(),
                HookResource::Texture(view) => wgpu::BindingResource::TextureView(view),
            },
        })
        .collect();
    let layout = &objects.wgpu_layout;
    validated(&objects.wgpu, "the hook resources", || {
        drop(objects.wgpu.create_bind_group(&wgpu::BindGroupDescriptor { label: None, layout, entries: &entries }))
    })
}
