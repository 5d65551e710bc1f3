//! Compute pipelines (the rectangle reduction, the GPU results pass) and the destructors of
//! the descriptor and pipeline objects the picker owns through [`Owned`].

use crate::error::PickError;
use crate::gpu::{Memory, Owned};
use crate::pass::pipeline::create_module;
use ash::vk;

/// # Safety
/// `handle` is an object of `device` that the GPU no longer uses (each fn: its own type).
pub(crate) unsafe fn destroy_set_layout(device: &ash::Device, handle: vk::DescriptorSetLayout) {
    // SAFETY: the caller's contract.
    unsafe { device.destroy_descriptor_set_layout(handle, None) };
}
/// # Safety
/// As [`destroy_set_layout`]; its sets are freed with it.
pub(crate) unsafe fn destroy_pool(device: &ash::Device, handle: vk::DescriptorPool) {
    // SAFETY: the caller's contract.
    unsafe { device.destroy_descriptor_pool(handle, None) };
}
/// # Safety
/// As [`destroy_set_layout`].
pub(crate) unsafe fn destroy_pipeline_layout(device: &ash::Device, handle: vk::PipelineLayout) {
    // SAFETY: the caller's contract.
    unsafe { device.destroy_pipeline_layout(handle, None) };
}
/// # Safety
/// As [`destroy_set_layout`].
pub(crate) unsafe fn destroy_pipeline(device: &ash::Device, handle: vk::Pipeline) {
    // SAFETY: the caller's contract.
    unsafe { device.destroy_pipeline(handle, None) };
}
/// # Safety
/// As [`destroy_set_layout`].
pub(crate) unsafe fn destroy_module(device: &ash::Device, handle: vk::ShaderModule) {
    // SAFETY: the caller's contract.
    unsafe { device.destroy_shader_module(handle, None) };
}

/// A compute pipeline, its layout and module, each freed on drop (in that order).
pub(crate) type ComputePipeline = (Owned<vk::Pipeline>, Owned<vk::PipelineLayout>, Owned<vk::ShaderModule>);

/// The compute pipeline of SPIR-V `code` (entry `main`) over descriptor sets of
/// `set_layouts` and `push_bytes` of push constants, named `name` for validation messages.
/// `constants` are its specialization constants 0, 1, ... (32-bit each).
pub(crate) fn compute_pipeline(
    memory: &Memory,
    set_layouts: &[vk::DescriptorSetLayout],
    push_bytes: u32,
    (code, constants): (&[u8], &[u32]),
    module_name: &str,
    name: &str,
) -> Result<ComputePipeline, PickError> {
    let device = &memory.device;
    let push = [vk::PushConstantRange::default().stage_flags(vk::ShaderStageFlags::COMPUTE).size(push_bytes)];
    // SAFETY: valid create info on a live device, owned right away.
    let layout = unsafe {
        let handle = device.create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default().set_layouts(set_layouts).push_constant_ranges(&push), None)?;
        Owned::new(device, handle, destroy_pipeline_layout)
    };
    let module = create_module(memory, code, module_name)?;
    // SAFETY: just created on this device, owned by nothing else.
    let module = unsafe { Owned::new(device, module, destroy_module) };
    let entries: Vec<vk::SpecializationMapEntry> =
        (0..constants.len() as u32).map(|k| vk::SpecializationMapEntry { constant_id: k, offset: 4 * k, size: 4 }).collect();
    let data: Vec<u8> = constants.iter().flat_map(|c| c.to_ne_bytes()).collect();
    let specialization = vk::SpecializationInfo::default().map_entries(&entries).data(&data);
    let stage = vk::PipelineShaderStageCreateInfo::default()
        .stage(vk::ShaderStageFlags::COMPUTE)
        .module(module.handle)
        .name(c"main")
        .specialization_info(&specialization);
    let info = vk::ComputePipelineCreateInfo::default().stage(stage).layout(layout.handle);
    // SAFETY: module and layout are live; the info points at locals.
    let pipelines = unsafe { device.create_compute_pipelines(memory.pipeline_cache, &[info], None) }.map_err(|(_, e)| PickError::from(e))?;
    // SAFETY: just created on this device, owned by nothing else.
    let pipeline = unsafe { Owned::new(device, pipelines.first().copied().unwrap_or_default(), destroy_pipeline) };
    memory.name(pipeline.handle, name);
    Ok((pipeline, layout, module))
}
