//! [`DeviceFeatures`]: what the host adds to its `vkCreateDevice` for a set of
//! [`PickFeatures`], and how it is chained.

use super::PickFeatures;
use crate::error::Requirement;
use ash::vk;
use std::ffi::CStr;

/// A core feature (`VkPhysicalDeviceFeatures` member) a picking capability needs.
struct CoreNeed {
    feature: PickFeatures,
    name: &'static str,
    field: fn(&mut vk::PhysicalDeviceFeatures) -> &mut vk::Bool32,
}

/// Every core feature each capability needs: what [`DeviceFeatures::enable_core`] sets, and
/// what [`missing_core`] checks against a device's offer or a host's enabled set.
const CORE_NEEDS: [CoreNeed; 7] = [
    CoreNeed { feature: PickFeatures::BATCHING, name: "multiDrawIndirect", field: |f| &mut f.multi_draw_indirect },
    CoreNeed { feature: PickFeatures::BATCHING, name: "drawIndirectFirstInstance", field: |f| &mut f.draw_indirect_first_instance },
    CoreNeed { feature: PickFeatures::DETAIL, name: "geometryShader (for gl_PrimitiveID)", field: |f| &mut f.geometry_shader },
    CoreNeed { feature: PickFeatures::SELECT_THROUGH, name: "fragmentStoresAndAtomics", field: |f| &mut f.fragment_stores_and_atomics },
    CoreNeed { feature: PickFeatures::WIDE_LINES, name: "wideLines", field: |f| &mut f.wide_lines },
    CoreNeed { feature: PickFeatures::WIDE_LINES, name: "largePoints", field: |f| &mut f.large_points },
    CoreNeed { feature: PickFeatures::GPU_DRAW_PLANNING, name: "shaderFloat64", field: |f| &mut f.shader_float64 },
];

/// The core features `features` need that `enabled` (what the host created its device with)
/// lacks, each as [`Requirement::Feature`] naming the member.
pub(crate) fn missing_core(features: PickFeatures, enabled: &vk::PhysicalDeviceFeatures) -> Vec<Requirement> {
    let mut enabled = *enabled;
    CORE_NEEDS.iter().filter(|n| features.contains(n.feature) && *(n.field)(&mut enabled) != vk::TRUE).map(|n| Requirement::Feature(n.name)).collect()
}

/// The shader stages a device created with `enabled` lacks (geometry, tessellation): a
/// barrier naming one is invalid, so the host's writes and result readers may not.
pub(crate) fn disabled_stages(enabled: &vk::PhysicalDeviceFeatures) -> vk::PipelineStageFlags {
    use vk::PipelineStageFlags as S;
    let geometry = if enabled.geometry_shader == vk::TRUE { S::empty() } else { S::GEOMETRY_SHADER };
    let tessellation = if enabled.tessellation_shader == vk::TRUE { S::empty() } else { S::TESSELLATION_CONTROL_SHADER | S::TESSELLATION_EVALUATION_SHADER };
    geometry | tessellation
}

/// The extensions and feature structures to add to the host's `vkCreateDevice` for a set of
/// [`PickFeatures`]. Nothing is added for basic picking.
#[derive(Clone, Debug)]
pub struct DeviceFeatures {
    features: PickFeatures,
    core: vk::PhysicalDeviceFeatures,
    barycentric: vk::PhysicalDeviceFragmentShaderBarycentricFeaturesKHR<'static>,
    dynamic_rendering: vk::PhysicalDeviceDynamicRenderingFeatures<'static>,
    vulkan12: vk::PhysicalDeviceVulkan12Features<'static>,
    /// The device lacks `VK_KHR_draw_indirect_count`: `drawIndirectCount` is enabled through
    /// `VkPhysicalDeviceVulkan12Features`.
    vulkan12_needed: bool,
    extensions: Vec<&'static CStr>,
}

impl DeviceFeatures {
    /// `dynamic_rendering_core`: the device and instance are Vulkan 1.3, so dynamic rendering
    /// needs no extension. `draw_indirect_count_extension`: the device offers
    /// `VK_KHR_draw_indirect_count`, which then stands for the `drawIndirectCount` feature.
    pub(super) fn new(features: PickFeatures, dynamic_rendering_core: bool, draw_indirect_count_extension: bool) -> Self {
        let mut core = vk::PhysicalDeviceFeatures::default();
        for need in CORE_NEEDS.iter().filter(|n| features.contains(n.feature)) {
            *(need.field)(&mut core) = vk::TRUE;
        }
        let mut barycentric = vk::PhysicalDeviceFragmentShaderBarycentricFeaturesKHR::default();
        if features.contains(PickFeatures::DETAIL) {
            barycentric.fragment_shader_barycentric = vk::TRUE;
        }
        let mut extensions = vec![];
        if features.contains(PickFeatures::DETAIL) {
            extensions.push(ash::khr::fragment_shader_barycentric::NAME);
        }
        let dynamic_rendering = vk::PhysicalDeviceDynamicRenderingFeatures::default().dynamic_rendering(features.contains(PickFeatures::DYNAMIC_RENDERING));
        if features.contains(PickFeatures::DYNAMIC_RENDERING) && !dynamic_rendering_core {
            extensions.push(ash::khr::dynamic_rendering::NAME);
        }
        // VkPhysicalDeviceVulkan12Features may not stand beside any structure promoted to 1.2
        // (VUID-VkDeviceCreateInfo-pNext-02830), which hosts commonly chain (timeline
        // semaphores, buffer device address): the extension needs no structure at all.
        let count_by_extension = features.contains(PickFeatures::INDIRECT_COUNT) && draw_indirect_count_extension;
        if count_by_extension {
            extensions.push(ash::khr::draw_indirect_count::NAME);
        }
        let vulkan12_needed = features.contains(PickFeatures::INDIRECT_COUNT) && !count_by_extension;
        let vulkan12 = vk::PhysicalDeviceVulkan12Features::default().draw_indirect_count(vulkan12_needed);
        DeviceFeatures { features, core, barycentric, dynamic_rendering, vulkan12, vulkan12_needed, extensions }
    }

    /// What the host passes on in [`crate::HostDevice::with_features`] once the device exists.
    pub fn features(&self) -> PickFeatures {
        self.features
    }

    /// Device extensions to add to the host's list.
    pub fn extension_names(&self) -> &[&'static CStr] {
        &self.extensions
    }

    /// Sets the core features picking needs in the host's own feature structure (for hosts
    /// that chain `VkPhysicalDeviceFeatures2` rather than setting `pEnabledFeatures`).
    pub fn enable_core(&self, features: &mut vk::PhysicalDeviceFeatures) {
        let mut ours = self.core;
        for need in &CORE_NEEDS {
            *(need.field)(features) |= *(need.field)(&mut ours);
        }
    }

    /// Whether [`DeviceFeatures::add_to_device_create`] and [`DeviceFeatures::extension_structs`]
    /// chain a `VkPhysicalDeviceVulkan12Features` (only for [`PickFeatures::INDIRECT_COUNT`] on
    /// a device without `VK_KHR_draw_indirect_count`). Vulkan forbids that structure beside any
    /// structure promoted to 1.2: a host whose chain holds one (timeline semaphores, buffer
    /// device address, descriptor indexing) chains `VkPhysicalDeviceVulkan12Features` itself,
    /// calls [`DeviceFeatures::enable_vulkan12`] on it, and chains only
    /// [`DeviceFeatures::extension_structs_without_vulkan12`].
    pub fn chains_vulkan12(&self) -> bool {
        self.vulkan12_needed
    }

    /// Sets the Vulkan 1.2 features picking needs in the host's own
    /// `VkPhysicalDeviceVulkan12Features` (see [`DeviceFeatures::chains_vulkan12`]).
    pub fn enable_vulkan12(&self, features: &mut vk::PhysicalDeviceVulkan12Features<'_>) {
        features.draw_indirect_count |= self.vulkan12.draw_indirect_count;
    }

    /// As [`DeviceFeatures::extension_structs`], never chaining
    /// `VkPhysicalDeviceVulkan12Features` (for hosts that chain their own and called
    /// [`DeviceFeatures::enable_vulkan12`] on it).
    pub fn extension_structs_without_vulkan12<'a>(&'a mut self, info: vk::DeviceCreateInfo<'a>) -> vk::DeviceCreateInfo<'a> {
        let DeviceFeatures { features, barycentric, dynamic_rendering, .. } = self;
        chain_extensions(*features, barycentric, dynamic_rendering, None, info)
    }

    /// Chains what picking needs into the host's device create info: the extension feature
    /// structure and, when the host set no `pEnabledFeatures`, the core features picking needs
    /// (none for basic picking). A host with core features of its own calls
    /// [`DeviceFeatures::enable_core`] on its `VkPhysicalDeviceFeatures` first (this call
    /// leaves a host's `pEnabledFeatures` as it is); a host that chains
    /// `VkPhysicalDeviceFeatures2` calls `enable_core` on its `features` member and chains
    /// only [`DeviceFeatures::extension_structs`]. Extension names are the host's to add,
    /// from [`DeviceFeatures::extension_names`].
    pub fn add_to_device_create<'a>(&'a mut self, info: vk::DeviceCreateInfo<'a>) -> vk::DeviceCreateInfo<'a> {
        let needs_core = CORE_NEEDS.iter().any(|n| self.features.contains(n.feature));
        let DeviceFeatures { features, core, barycentric, dynamic_rendering, vulkan12, vulkan12_needed, .. } = self;
        let info = if info.p_enabled_features.is_null() && needs_core { info.enabled_features(core) } else { info };
        chain_extensions(*features, barycentric, dynamic_rendering, vulkan12_needed.then_some(vulkan12), info)
    }

    /// Chains only the extension feature structures (none for basic picking or batching). A
    /// host that chains `VkPhysicalDeviceVulkan13Features` itself sets `dynamicRendering`
    /// there instead of using this for [`PickFeatures::DYNAMIC_RENDERING`]: Vulkan forbids
    /// both in one chain. See [`DeviceFeatures::chains_vulkan12`] for `...Vulkan12Features`.
    pub fn extension_structs<'a>(&'a mut self, info: vk::DeviceCreateInfo<'a>) -> vk::DeviceCreateInfo<'a> {
        let DeviceFeatures { features, barycentric, dynamic_rendering, vulkan12, vulkan12_needed, .. } = self;
        chain_extensions(*features, barycentric, dynamic_rendering, vulkan12_needed.then_some(vulkan12), info)
    }
}

/// Pushes the feature structures of the wanted extensions. Each one's own `pNext` is cleared
/// first: `push_next` follows it, and after an earlier call it would still point into that
/// call's chain.
fn chain_extensions<'a>(
    features: PickFeatures,
    barycentric: &'a mut vk::PhysicalDeviceFragmentShaderBarycentricFeaturesKHR<'static>,
    dynamic_rendering: &'a mut vk::PhysicalDeviceDynamicRenderingFeatures<'static>,
    vulkan12: Option<&'a mut vk::PhysicalDeviceVulkan12Features<'static>>,
    mut info: vk::DeviceCreateInfo<'a>,
) -> vk::DeviceCreateInfo<'a> {
    if features.contains(PickFeatures::DETAIL) {
        barycentric.p_next = std::ptr::null_mut();
        info = info.push_next(barycentric);
    }
    if features.contains(PickFeatures::DYNAMIC_RENDERING) {
        dynamic_rendering.p_next = std::ptr::null_mut();
        info = info.push_next(dynamic_rendering);
    }
    if let Some(vulkan12) = vulkan12 {
        vulkan12.p_next = std::ptr::null_mut();
        info = info.push_next(vulkan12);
    }
    info
}
