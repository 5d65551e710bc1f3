//! Feature negotiation, in the style of wgpu-hal: ask the physical device what it offers
//! ([`PickSupport::query`]), take the [`DeviceFeatures`] for what you want into your own
//! device creation, and hand the resulting [`PickFeatures`] to the picker. The host keeps a
//! value it got from the library, never booleans it typed.

mod device;

pub use device::DeviceFeatures;
pub(crate) use device::{disabled_stages, missing_core};

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
    /// Dynamic rendering instead of render passes ([`crate::config::PassRendering::Dynamic`]). Needs
    /// the `dynamicRendering` feature: core in Vulkan 1.3, or `VK_KHR_dynamic_rendering` on
    /// Vulkan 1.2.
    pub const DYNAMIC_RENDERING: PickFeatures = PickFeatures(8);
    /// The host's indirect draws with a GPU draw count ([`crate::draw::IndirectDraws::count`]):
    /// `vkCmdDraw*IndirectCount`. Needs Vulkan 1.2 and its `drawIndirectCount` feature; where
    /// the device offers `VK_KHR_draw_indirect_count`, that extension is enabled instead (it
    /// allows the commands, and has no feature structure to clash with the host's chain).
    pub const INDIRECT_COUNT: PickFeatures = PickFeatures(16);
    /// Lines wider and points larger than a pixel, as the host draws them
    /// ([`crate::draw::RasterState::line_width`], [`crate::draw::RasterState::point_size`]). Needs
    /// `wideLines` and `largePoints`.
    pub const WIDE_LINES: PickFeatures = PickFeatures(32);
    /// GPU planning of a shared list's plain draws ([`crate::config::Planner::Gpu`], and
    /// [`crate::config::Planner::Auto`]'s larger sets over larger lists): the cull
    /// pass composes each draw's model-view-projection in f64, as the CPU does, so that GPU
    /// planned draws land on exactly the pixels they would otherwise. Needs `shaderFloat64`.
    pub const GPU_DRAW_PLANNING: PickFeatures = PickFeatures(64);
    /// Every optional capability.
    pub const ALL: PickFeatures = PickFeatures(127);

    /// Whether every capability of `other` is in `self`.
    pub fn contains(self, other: PickFeatures) -> bool {
        self.0 & other.0 == other.0
    }

    /// The capabilities in both sets.
    pub fn intersection(self, other: PickFeatures) -> PickFeatures {
        PickFeatures(self.0 & other.0)
    }

    /// The capabilities in either set (`|` in constant expressions).
    pub const fn union(self, other: PickFeatures) -> PickFeatures {
        PickFeatures(self.0 | other.0)
    }

    /// The capabilities of `self` that `other` lacks.
    pub fn difference(self, other: PickFeatures) -> PickFeatures {
        PickFeatures(self.0 & !other.0)
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
    gpu_draw_planning_missing: Vec<Requirement>,
    api_version: u32,
    /// `VK_KHR_draw_indirect_count` is offered: enabling it allows the count commands
    /// without chaining `VkPhysicalDeviceVulkan12Features`.
    draw_indirect_count_extension: bool,
}

/// What a physical device reports that picking's capabilities depend on.
struct DeviceReport {
    /// The Vulkan version both the instance and the device support.
    api_version: u32,
    core: vk::PhysicalDeviceFeatures,
    barycentric_extension: bool,
    /// `fragmentShaderBarycentric`.
    barycentric: bool,
    /// Whether the dynamic rendering feature could be asked for (Vulkan 1.3, or 1.2 with the
    /// extension).
    dynamic_rendering_known: bool,
    /// `dynamicRendering`.
    dynamic_rendering: bool,
    /// `drawIndirectCount` (Vulkan 1.2).
    draw_indirect_count: bool,
    draw_indirect_count_extension: bool,
}

impl DeviceReport {
    /// # Safety
    /// As [`PickSupport::query`].
    unsafe fn read(instance: &ash::Instance, instance_api_version: u32, physical_device: vk::PhysicalDevice) -> Self {
        // SAFETY: the caller guarantees the handles are valid.
        let extensions = unsafe { instance.enumerate_device_extension_properties(physical_device) }.unwrap_or_default();
        let has_extension = |name: &CStr| extensions.iter().any(|e| e.extension_name_as_c_str() == Ok(name));
        let barycentric_extension = has_extension(ash::khr::fragment_shader_barycentric::NAME);
        let dynamic_rendering_extension = has_extension(ash::khr::dynamic_rendering::NAME);
        // SAFETY: as above.
        let properties = unsafe { instance.get_physical_device_properties(physical_device) };
        // Vulkan 1.1 holds only when the instance and the device both ask for it; the
        // extension feature query needs it, and without it only basic picking and batching
        // are offered.
        let api_version = version_of(instance_api_version).min(version_of(properties.api_version));
        // Dynamic rendering is core in 1.3; on 1.2 it is an extension (whose dependencies 1.2
        // has in core). The feature structure is the same either way.
        let dynamic_rendering_known = api_version >= vk::API_VERSION_1_3 || (api_version >= vk::API_VERSION_1_2 && dynamic_rendering_extension);
        let mut barycentric = vk::PhysicalDeviceFragmentShaderBarycentricFeaturesKHR::default();
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
        DeviceReport {
            api_version,
            core,
            barycentric_extension,
            barycentric: barycentric.fragment_shader_barycentric == vk::TRUE,
            dynamic_rendering_known,
            dynamic_rendering: dynamic_rendering.dynamic_rendering == vk::TRUE,
            draw_indirect_count: vulkan12.draw_indirect_count == vk::TRUE,
            draw_indirect_count_extension: has_extension(ash::khr::draw_indirect_count::NAME),
        }
    }
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
        // SAFETY: the caller's contract.
        let device = unsafe { DeviceReport::read(instance, instance_api_version, physical_device) };
        // SAFETY: as above.
        let formats_basic = unsafe { formats_missing(instance, physical_device, false) };
        // SAFETY: as above.
        let formats_detail = unsafe { formats_missing(instance, physical_device, true) };
        PickSupport::assess(&device, formats_basic, formats_detail)
    }

    /// What is missing for each capability, from what the device reported and the formats
    /// it lacks for basic and for detail picking.
    fn assess(d: &DeviceReport, formats_basic: Vec<Requirement>, formats_detail: Vec<Requirement>) -> Self {
        let need = |list: &mut Vec<Requirement>, ok: bool, what: Requirement| {
            if !ok {
                list.push(what);
            }
        };
        let core = |features| missing_core(features, &d.core);
        let mut detail_missing = vec![];
        need(&mut detail_missing, d.barycentric_extension, Requirement::Extension(ash::khr::fragment_shader_barycentric::NAME));
        need(&mut detail_missing, d.barycentric, BARYCENTRIC_FEATURE);
        detail_missing.extend(core(PickFeatures::DETAIL));
        detail_missing.extend(formats_detail.into_iter().filter(|f| !formats_basic.contains(f)));
        let mut dynamic_rendering_missing = vec![];
        if d.api_version < vk::API_VERSION_1_2 {
            dynamic_rendering_missing.push(Requirement::ApiVersion(1, 2));
        } else if !d.dynamic_rendering_known {
            dynamic_rendering_missing.push(Requirement::Extension(ash::khr::dynamic_rendering::NAME));
        }
        need(&mut dynamic_rendering_missing, d.dynamic_rendering, DYNAMIC_RENDERING_FEATURE);
        let mut indirect_count_missing = vec![];
        need(&mut indirect_count_missing, d.api_version >= vk::API_VERSION_1_2, Requirement::ApiVersion(1, 2));
        need(&mut indirect_count_missing, d.draw_indirect_count, Requirement::Feature("drawIndirectCount"));
        PickSupport {
            basic_missing: formats_basic,
            batching_missing: core(PickFeatures::BATCHING),
            detail_missing,
            select_through_missing: core(PickFeatures::SELECT_THROUGH),
            dynamic_rendering_missing,
            indirect_count_missing,
            wide_lines_missing: core(PickFeatures::WIDE_LINES),
            gpu_draw_planning_missing: core(PickFeatures::GPU_DRAW_PLANNING),
            api_version: d.api_version,
            draw_indirect_count_extension: d.draw_indirect_count_extension,
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
        if self.gpu_draw_planning_missing.is_empty() {
            offered = offered | PickFeatures::GPU_DRAW_PLANNING;
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
        if wanted.contains(PickFeatures::GPU_DRAW_PLANNING) {
            missing.extend_from_slice(&self.gpu_draw_planning_missing);
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

    /// Whether `vkWaitSemaphores` is core (Vulkan 1.2).
    pub(crate) fn core_timeline_wait(&self) -> bool {
        self.api_version >= vk::API_VERSION_1_2
    }

    /// Whether the device accepts a negative viewport height (Vulkan 1.1).
    pub(crate) fn negative_viewport_height(&self) -> bool {
        self.api_version >= vk::API_VERSION_1_1
    }
}

#[cfg(test)]
mod tests;
