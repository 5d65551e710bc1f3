//! Feature negotiation, in the style of wgpu-hal: ask the physical device what it offers
//! ([`PickSupport::query`]), take the [`DeviceFeatures`] for what you want into your own
//! device creation, and hand the resulting [`PickFeatures`] to the picker. The host keeps a
//! value it got from the library, never booleans it typed.

use crate::error::{PickError, Requirement};
use crate::pass::formats_missing;
use ash::vk;
use std::ffi::CStr;

/// Optional picking capabilities, as a small set. Basic picking needs nothing beyond
/// Vulkan 1.0, so the empty set is always usable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PickFeatures(u8);

impl PickFeatures {
    /// Nothing optional.
    pub const NONE: PickFeatures = PickFeatures(0);
    /// Batched recording: runs of draws sharing buffers become one indirect draw. Needs
    /// `multiDrawIndirect` and `drawIndirectFirstInstance`.
    pub const BATCHING: PickFeatures = PickFeatures(1);
    /// The detail attachment (face, barycentrics). Needs `VK_KHR_fragment_shader_barycentric`
    /// with `fragmentShaderBarycentric`, and `geometryShader` (for `gl_PrimitiveID`).
    pub const DETAIL: PickFeatures = PickFeatures(2);
    /// Rectangle queries in [`crate::RectMode::All`] ("select through"): fragments add
    /// themselves to a table with atomics. Needs `fragmentStoresAndAtomics`.
    pub const SELECT_THROUGH: PickFeatures = PickFeatures(4);
    /// Dynamic rendering instead of render passes ([`crate::PassRendering::Dynamic`]). Needs
    /// the `dynamicRendering` feature: core in Vulkan 1.3, or `VK_KHR_dynamic_rendering` on
    /// Vulkan 1.2.
    pub const DYNAMIC_RENDERING: PickFeatures = PickFeatures(8);
    /// The host's indirect draws with a GPU draw count ([`crate::IndirectDraws::count`]):
    /// `vkCmdDraw*IndirectCount`. Needs Vulkan 1.2 and its `drawIndirectCount` feature; where
    /// the device offers `VK_KHR_draw_indirect_count`, that extension is enabled instead (it
    /// allows the commands, and has no feature structure to clash with the host's chain).
    pub const INDIRECT_COUNT: PickFeatures = PickFeatures(16);
    /// Lines wider and points larger than a pixel, as the host draws them
    /// ([`crate::RasterState::line_width`], [`crate::RasterState::point_size`]). Needs
    /// `wideLines` and `largePoints`.
    pub const WIDE_LINES: PickFeatures = PickFeatures(32);
    /// Every optional capability.
    pub const ALL: PickFeatures = PickFeatures(63);

    /// Whether every capability of `other` is in `self`.
    pub fn contains(self, other: PickFeatures) -> bool {
        self.0 & other.0 == other.0
    }

    /// The capabilities in both sets.
    pub fn intersection(self, other: PickFeatures) -> PickFeatures {
        PickFeatures(self.0 & other.0)
    }
}

impl std::ops::BitOr for PickFeatures {
    type Output = PickFeatures;
    fn bitor(self, other: PickFeatures) -> PickFeatures {
        PickFeatures(self.0 | other.0)
    }
}

const BARYCENTRIC_FEATURE: Requirement = Requirement::Feature("fragmentShaderBarycentric");
const GEOMETRY_SHADER_FEATURE: Requirement = Requirement::Feature("geometryShader (for gl_PrimitiveID)");

/// What the host's device creation must enable for the detail attachment.
pub(crate) fn detail_requirements() -> Vec<Requirement> {
    vec![Requirement::Extension(ash::khr::fragment_shader_barycentric::NAME), BARYCENTRIC_FEATURE, GEOMETRY_SHADER_FEATURE]
}
const DYNAMIC_RENDERING_FEATURE: Requirement = Requirement::Feature("dynamicRendering");

/// The major and minor version of a `VK_MAKE_API_VERSION` value (0 counts as 1.0), without
/// the patch, so versions compare by what they enable.
fn version_of(v: u32) -> u32 {
    if v == 0 {
        vk::API_VERSION_1_0
    } else {
        vk::make_api_version(0, vk::api_version_major(v), vk::api_version_minor(v), 0)
    }
}

/// What one physical device offers toward picking, with every unmet requirement named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PickSupport {
    basic_missing: Vec<Requirement>,
    batching_missing: Vec<Requirement>,
    detail_missing: Vec<Requirement>,
    select_through_missing: Vec<Requirement>,
    dynamic_rendering_missing: Vec<Requirement>,
    indirect_count_missing: Vec<Requirement>,
    wide_lines_missing: Vec<Requirement>,
    api_version: u32,
    /// `VK_KHR_draw_indirect_count` is offered: enabling it allows the count commands
    /// without chaining `VkPhysicalDeviceVulkan12Features`.
    draw_indirect_count_extension: bool,
}

impl PickSupport {
    /// Asks the physical device. `instance_api_version` is the `apiVersion` the host's
    /// instance was created with: Vulkan 1.1 functionality (the extension feature query,
    /// negative viewport heights) is used only when both it and the device are 1.1 or newer.
    ///
    /// # Safety
    /// `physical_device` was enumerated from `instance`, which is live and was created with
    /// `instance_api_version`.
    pub unsafe fn query(instance: &ash::Instance, instance_api_version: u32, physical_device: vk::PhysicalDevice) -> Self {
        // SAFETY: the caller guarantees the handles are valid.
        let extensions = unsafe { instance.enumerate_device_extension_properties(physical_device) }.unwrap_or_default();
        let has_extension = |name: &CStr| extensions.iter().any(|e| e.extension_name_as_c_str() == Ok(name));
        let barycentric_extension = has_extension(ash::khr::fragment_shader_barycentric::NAME);
        let dynamic_rendering_extension = has_extension(ash::khr::dynamic_rendering::NAME);
        let draw_indirect_count_extension = has_extension(ash::khr::draw_indirect_count::NAME);
        // SAFETY: as above.
        let properties = unsafe { instance.get_physical_device_properties(physical_device) };
        let mut barycentric = vk::PhysicalDeviceFragmentShaderBarycentricFeaturesKHR::default();
        // Vulkan 1.1 holds only when the instance and the device both ask for it; the
        // extension feature query needs it, and without it only basic picking and batching
        // are offered.
        let api_version = version_of(instance_api_version).min(version_of(properties.api_version));
        // Dynamic rendering is core in 1.3; on 1.2 it is an extension (whose dependencies 1.2
        // has in core). The feature structure is the same either way.
        let dynamic_rendering_known = api_version >= vk::API_VERSION_1_3 || (api_version >= vk::API_VERSION_1_2 && dynamic_rendering_extension);
        let mut dynamic_rendering = vk::PhysicalDeviceDynamicRenderingFeatures::default();
        let mut vulkan12 = vk::PhysicalDeviceVulkan12Features::default();
        let core = if api_version >= vk::API_VERSION_1_1 {
            let mut features = vk::PhysicalDeviceFeatures2::default();
            if barycentric_extension {
                features = features.push_next(&mut barycentric);
            }
            if dynamic_rendering_known {
                features = features.push_next(&mut dynamic_rendering);
            }
            if api_version >= vk::API_VERSION_1_2 {
                features = features.push_next(&mut vulkan12);
            }
            // SAFETY: valid handles; the chain holds only structures of extensions the device has.
            unsafe { instance.get_physical_device_features2(physical_device, &mut features) };
            features.features
        } else {
            // SAFETY: as above.
            unsafe { instance.get_physical_device_features(physical_device) }
        };
        let mut batching_missing = vec![];
        if core.multi_draw_indirect != vk::TRUE {
            batching_missing.push(Requirement::Feature("multiDrawIndirect"));
        }
        if core.draw_indirect_first_instance != vk::TRUE {
            batching_missing.push(Requirement::Feature("drawIndirectFirstInstance"));
        }
        let mut detail_missing = vec![];
        if !barycentric_extension {
            detail_missing.push(Requirement::Extension(ash::khr::fragment_shader_barycentric::NAME));
        }
        if barycentric.fragment_shader_barycentric != vk::TRUE {
            detail_missing.push(BARYCENTRIC_FEATURE);
        }
        if core.geometry_shader != vk::TRUE {
            detail_missing.push(GEOMETRY_SHADER_FEATURE);
        }
        // SAFETY: as above.
        let formats_basic = unsafe { formats_missing(instance, physical_device, false) };
        // SAFETY: as above.
        let formats_detail = unsafe { formats_missing(instance, physical_device, true) };
        detail_missing.extend(formats_detail.into_iter().filter(|f| !formats_basic.contains(f)));
        let mut select_through_missing = vec![];
        if core.fragment_stores_and_atomics != vk::TRUE {
            select_through_missing.push(Requirement::Feature("fragmentStoresAndAtomics"));
        }
        let mut dynamic_rendering_missing = vec![];
        if api_version < vk::API_VERSION_1_2 {
            dynamic_rendering_missing.push(Requirement::ApiVersion(1, 2));
        } else if !dynamic_rendering_known {
            dynamic_rendering_missing.push(Requirement::Extension(ash::khr::dynamic_rendering::NAME));
        }
        if dynamic_rendering.dynamic_rendering != vk::TRUE {
            dynamic_rendering_missing.push(DYNAMIC_RENDERING_FEATURE);
        }
        let mut indirect_count_missing = vec![];
        if api_version < vk::API_VERSION_1_2 {
            indirect_count_missing.push(Requirement::ApiVersion(1, 2));
        }
        if vulkan12.draw_indirect_count != vk::TRUE {
            indirect_count_missing.push(Requirement::Feature("drawIndirectCount"));
        }
        let mut wide_lines_missing = vec![];
        if core.wide_lines != vk::TRUE {
            wide_lines_missing.push(Requirement::Feature("wideLines"));
        }
        if core.large_points != vk::TRUE {
            wide_lines_missing.push(Requirement::Feature("largePoints"));
        }
        PickSupport {
            basic_missing: formats_basic,
            batching_missing,
            detail_missing,
            select_through_missing,
            dynamic_rendering_missing,
            indirect_count_missing,
            wide_lines_missing,
            api_version,
            draw_indirect_count_extension,
        }
    }

    /// Every optional capability the device offers.
    pub fn offered(&self) -> PickFeatures {
        let mut offered = PickFeatures::NONE;
        if self.batching_missing.is_empty() {
            offered = offered | PickFeatures::BATCHING;
        }
        if self.detail_missing.is_empty() {
            offered = offered | PickFeatures::DETAIL;
        }
        if self.select_through_missing.is_empty() {
            offered = offered | PickFeatures::SELECT_THROUGH;
        }
        if self.dynamic_rendering_missing.is_empty() {
            offered = offered | PickFeatures::DYNAMIC_RENDERING;
        }
        if self.indirect_count_missing.is_empty() {
            offered = offered | PickFeatures::INDIRECT_COUNT;
        }
        if self.wide_lines_missing.is_empty() {
            offered = offered | PickFeatures::WIDE_LINES;
        }
        if self.basic_missing.is_empty() {
            offered
        } else {
            PickFeatures::NONE
        }
    }

    /// Every requirement the device fails for picking with `wanted` (basic picking included).
    pub fn missing(&self, wanted: PickFeatures) -> Vec<Requirement> {
        let mut missing = self.basic_missing.clone();
        if wanted.contains(PickFeatures::BATCHING) {
            missing.extend_from_slice(&self.batching_missing);
        }
        if wanted.contains(PickFeatures::DETAIL) {
            missing.extend_from_slice(&self.detail_missing);
        }
        if wanted.contains(PickFeatures::SELECT_THROUGH) {
            missing.extend_from_slice(&self.select_through_missing);
        }
        if wanted.contains(PickFeatures::DYNAMIC_RENDERING) {
            missing.extend_from_slice(&self.dynamic_rendering_missing);
        }
        if wanted.contains(PickFeatures::INDIRECT_COUNT) {
            missing.extend_from_slice(&self.indirect_count_missing);
        }
        if wanted.contains(PickFeatures::WIDE_LINES) {
            missing.extend_from_slice(&self.wide_lines_missing);
        }
        missing
    }

    /// What to enable at device creation for `wanted`, or [`PickError::Unsupported`] naming
    /// every requirement the device fails. Pass `support.offered()` to take all it has.
    pub fn device_features(&self, wanted: PickFeatures) -> Result<DeviceFeatures, PickError> {
        let missing = self.missing(wanted);
        if !missing.is_empty() {
            return Err(PickError::Unsupported { missing });
        }
        Ok(DeviceFeatures::new(wanted, self.dynamic_rendering_core(), self.draw_indirect_count_extension))
    }

    /// Whether dynamic rendering is core (Vulkan 1.3) rather than `VK_KHR_dynamic_rendering`.
    pub(crate) fn dynamic_rendering_core(&self) -> bool {
        self.api_version >= vk::API_VERSION_1_3
    }

    /// Whether the device accepts a negative viewport height (Vulkan 1.1).
    pub(crate) fn negative_viewport_height(&self) -> bool {
        self.api_version >= vk::API_VERSION_1_1
    }
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
    fn new(features: PickFeatures, dynamic_rendering_core: bool, draw_indirect_count_extension: bool) -> Self {
        let mut core = vk::PhysicalDeviceFeatures::default();
        let mut barycentric = vk::PhysicalDeviceFragmentShaderBarycentricFeaturesKHR::default();
        if features.contains(PickFeatures::BATCHING) {
            core.multi_draw_indirect = vk::TRUE;
            core.draw_indirect_first_instance = vk::TRUE;
        }
        if features.contains(PickFeatures::DETAIL) {
            core.geometry_shader = vk::TRUE;
            barycentric.fragment_shader_barycentric = vk::TRUE;
        }
        if features.contains(PickFeatures::SELECT_THROUGH) {
            core.fragment_stores_and_atomics = vk::TRUE;
        }
        if features.contains(PickFeatures::WIDE_LINES) {
            core.wide_lines = vk::TRUE;
            core.large_points = vk::TRUE;
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
        let ours = self.core;
        features.multi_draw_indirect |= ours.multi_draw_indirect;
        features.draw_indirect_first_instance |= ours.draw_indirect_first_instance;
        features.geometry_shader |= ours.geometry_shader;
        features.fragment_stores_and_atomics |= ours.fragment_stores_and_atomics;
        features.wide_lines |= ours.wide_lines;
        features.large_points |= ours.large_points;
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
        let c = &self.core;
        let needs_core =
            [c.multi_draw_indirect, c.draw_indirect_first_instance, c.geometry_shader, c.fragment_stores_and_atomics, c.wide_lines, c.large_points]
                .contains(&vk::TRUE);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn support(batching: bool, detail: bool) -> PickSupport {
        PickSupport {
            basic_missing: vec![],
            batching_missing: if batching { vec![] } else { vec![Requirement::Feature("multiDrawIndirect")] },
            detail_missing: if detail { vec![] } else { vec![Requirement::Extension(ash::khr::fragment_shader_barycentric::NAME)] },
            select_through_missing: vec![],
            dynamic_rendering_missing: vec![Requirement::ApiVersion(1, 2)],
            indirect_count_missing: vec![Requirement::Feature("drawIndirectCount")],
            wide_lines_missing: vec![Requirement::Feature("wideLines")],
            api_version: vk::API_VERSION_1_1,
            draw_indirect_count_extension: false,
        }
    }

    #[test]
    fn missing_names_every_gap_of_what_is_wanted() {
        let s = support(true, false);
        assert_eq!(s.offered(), PickFeatures::BATCHING | PickFeatures::SELECT_THROUGH);
        assert!(s.missing(PickFeatures::BATCHING).is_empty());
        assert_eq!(
            s.missing(PickFeatures::ALL),
            vec![
                Requirement::Extension(ash::khr::fragment_shader_barycentric::NAME),
                Requirement::ApiVersion(1, 2),
                Requirement::Feature("drawIndirectCount"),
                Requirement::Feature("wideLines")
            ]
        );
        let err = s.device_features(PickFeatures::DETAIL).unwrap_err();
        assert_eq!(err.to_string(), "unsupported: device extension VK_KHR_fragment_shader_barycentric");
    }

    #[test]
    fn device_features_chain_exactly_what_is_wanted() {
        let s = support(true, true);
        let mut none = s.device_features(PickFeatures::NONE).unwrap();
        assert!(none.extension_names().is_empty());
        let info = none.add_to_device_create(vk::DeviceCreateInfo::default());
        assert!(info.p_next.is_null() && info.p_enabled_features.is_null(), "nothing is added for basic picking");

        let everything = PickFeatures::BATCHING | PickFeatures::DETAIL | PickFeatures::SELECT_THROUGH;
        let mut all = s.device_features(everything).unwrap();
        assert_eq!(all.extension_names(), &[ash::khr::fragment_shader_barycentric::NAME]);
        let info = all.add_to_device_create(vk::DeviceCreateInfo::default());
        assert!(!info.p_next.is_null(), "the barycentric structure is chained");
        // SAFETY: the builder pointed it at `all.core`, alive here.
        let core = unsafe { *info.p_enabled_features };
        assert_eq!((core.geometry_shader, core.multi_draw_indirect), (vk::TRUE, vk::TRUE));
        assert_eq!(all.features(), everything);
        // A host's own core features: it enables ours in them, and they are left in place.
        let mut host = vk::PhysicalDeviceFeatures { sampler_anisotropy: vk::TRUE, ..Default::default() };
        all.enable_core(&mut host);
        assert_eq!((host.sampler_anisotropy, host.geometry_shader), (vk::TRUE, vk::TRUE));
        let info = all.add_to_device_create(vk::DeviceCreateInfo::default().enabled_features(&host));
        assert!(std::ptr::eq(info.p_enabled_features, &host));
        // Chaining again (a retried device creation) starts a fresh chain.
        let mut other = vk::PhysicalDeviceVulkan11Features::default();
        let info = all.extension_structs(vk::DeviceCreateInfo::default().push_next(&mut other));
        // SAFETY: the head of the chain is `all.barycentric`, alive here.
        let head = unsafe { &*(info.p_next as *const vk::PhysicalDeviceFragmentShaderBarycentricFeaturesKHR) };
        assert!(std::ptr::eq(head.p_next as *const vk::PhysicalDeviceVulkan11Features, &other), "no stale link from the earlier chain");
    }

    #[test]
    fn dynamic_rendering_is_an_extension_before_vulkan_1_3() {
        for (api_version, extensions) in [(vk::API_VERSION_1_2, vec![ash::khr::dynamic_rendering::NAME]), (vk::API_VERSION_1_3, vec![])] {
            let s = PickSupport { dynamic_rendering_missing: vec![], api_version, ..support(true, true) };
            assert!(s.offered().contains(PickFeatures::DYNAMIC_RENDERING));
            let mut wanted = s.device_features(PickFeatures::DYNAMIC_RENDERING).unwrap();
            assert_eq!(wanted.extension_names(), extensions.as_slice());
            let info = wanted.add_to_device_create(vk::DeviceCreateInfo::default());
            // SAFETY: the head of the chain is `wanted.dynamic_rendering`, alive here.
            let head = unsafe { &*(info.p_next as *const vk::PhysicalDeviceDynamicRenderingFeatures) };
            assert_eq!((head.s_type, head.dynamic_rendering), (vk::StructureType::PHYSICAL_DEVICE_DYNAMIC_RENDERING_FEATURES, vk::TRUE));
            assert!(info.p_enabled_features.is_null(), "no core feature is needed");
        }
        let old = support(true, true);
        assert!(!old.offered().contains(PickFeatures::DYNAMIC_RENDERING));
        assert_eq!(old.device_features(PickFeatures::DYNAMIC_RENDERING).unwrap_err().to_string(), "unsupported: Vulkan 1.2");
    }

    #[test]
    fn the_draw_count_needs_no_vulkan12_structure_where_the_extension_exists() {
        // A host chain with a structure promoted to 1.2: VkPhysicalDeviceVulkan12Features may
        // not join it (VUID-VkDeviceCreateInfo-pNext-02830).
        for (extension, chained) in [(true, false), (false, true)] {
            let s = PickSupport {
                indirect_count_missing: vec![],
                api_version: vk::API_VERSION_1_2,
                draw_indirect_count_extension: extension,
                ..support(true, true)
            };
            let mut wanted = s.device_features(PickFeatures::INDIRECT_COUNT).unwrap();
            assert_eq!(wanted.chains_vulkan12(), chained);
            assert_eq!(wanted.extension_names().contains(&ash::khr::draw_indirect_count::NAME), extension);
            let mut timeline = vk::PhysicalDeviceTimelineSemaphoreFeatures::default().timeline_semaphore(true);
            let info = wanted.add_to_device_create(vk::DeviceCreateInfo::default().push_next(&mut timeline));
            // SAFETY: the head of the chain is ours or the host's structure, both alive here.
            let head = unsafe { &*(info.p_next as *const vk::BaseOutStructure) };
            let head_is_vulkan12 = head.s_type == vk::StructureType::PHYSICAL_DEVICE_VULKAN_1_2_FEATURES;
            assert_eq!(head_is_vulkan12, chained);
            let mut host12 = vk::PhysicalDeviceVulkan12Features::default();
            wanted.enable_vulkan12(&mut host12);
            assert_eq!(host12.draw_indirect_count == vk::TRUE, chained);
            let info = wanted.extension_structs_without_vulkan12(vk::DeviceCreateInfo::default());
            assert!(info.p_next.is_null(), "nothing else is chained for the draw count");
        }
    }

    #[test]
    fn feature_sets() {
        assert!(PickFeatures::ALL.contains(PickFeatures::DETAIL));
        assert!(!PickFeatures::BATCHING.contains(PickFeatures::DETAIL));
        assert_eq!(
            PickFeatures::BATCHING
                | PickFeatures::DETAIL
                | PickFeatures::SELECT_THROUGH
                | PickFeatures::DYNAMIC_RENDERING
                | PickFeatures::INDIRECT_COUNT
                | PickFeatures::WIDE_LINES,
            PickFeatures::ALL
        );
        assert_eq!(PickFeatures::ALL.intersection(PickFeatures::DETAIL), PickFeatures::DETAIL);
        assert!(PickFeatures::default().contains(PickFeatures::NONE));
    }
}
