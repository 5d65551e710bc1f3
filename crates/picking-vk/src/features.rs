//! What the host must enable on its device: nothing for basic picking; for the detail
//! attachment, `VK_KHR_fragment_shader_barycentric` with its feature, and `geometryShader`
//! (which `gl_PrimitiveID` in a fragment shader needs).

use ash::vk;
use std::ffi::CStr;

/// Device extensions the picker needs. Basic picking needs none.
pub fn required_device_extensions() -> &'static [&'static CStr] {
    &[]
}

/// Device extensions the detail attachment needs, to enable when [`DetailSupport::available`].
pub fn detail_device_extensions() -> &'static [&'static CStr] {
    &[ash::khr::fragment_shader_barycentric::NAME]
}

/// Whether a physical device offers the two features batched recording needs:
/// `multiDrawIndirect` and `drawIndirectFirstInstance` (see [`crate::HostDevice`]).
///
/// # Safety
/// `physical_device` was enumerated from `instance`, which is live.
pub unsafe fn batching_supported(instance: &ash::Instance, physical_device: vk::PhysicalDevice) -> bool {
    // SAFETY: the caller guarantees the handles are valid.
    let f = unsafe { instance.get_physical_device_features(physical_device) };
    f.multi_draw_indirect == vk::TRUE && f.draw_indirect_first_instance == vk::TRUE
}

/// What a physical device offers toward the detail attachment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DetailSupport {
    pub barycentric_extension: bool,
    pub fragment_shader_barycentric: bool,
    pub geometry_shader: bool,
}

impl DetailSupport {
    /// Asks the physical device (needs a Vulkan 1.1 instance).
    ///
    /// # Safety
    /// `physical_device` was enumerated from `instance`, which is live.
    pub unsafe fn query(instance: &ash::Instance, physical_device: vk::PhysicalDevice) -> Self {
        // SAFETY: the caller guarantees the handles are valid.
        let extensions = unsafe { instance.enumerate_device_extension_properties(physical_device) }.unwrap_or_default();
        let barycentric_extension = extensions.iter().any(|e| e.extension_name_as_c_str().is_ok_and(|n| n == ash::khr::fragment_shader_barycentric::NAME));
        let mut bary = vk::PhysicalDeviceFragmentShaderBarycentricFeaturesKHR::default();
        let mut features = vk::PhysicalDeviceFeatures2::default();
        if barycentric_extension {
            features = features.push_next(&mut bary);
        }
        // SAFETY: valid handles; the chain holds only structures of extensions the device has.
        unsafe { instance.get_physical_device_features2(physical_device, &mut features) };
        let geometry_shader = features.features.geometry_shader == vk::TRUE;
        DetailSupport { barycentric_extension, fragment_shader_barycentric: bary.fragment_shader_barycentric == vk::TRUE, geometry_shader }
    }

    /// Whether everything the detail attachment needs is offered.
    pub fn available(&self) -> bool {
        self.missing().is_empty()
    }

    /// Every unmet requirement, in words.
    pub fn missing(&self) -> Vec<String> {
        let mut missing = vec![];
        if !self.barycentric_extension {
            missing.push("device extension VK_KHR_fragment_shader_barycentric".to_string());
        }
        if !self.fragment_shader_barycentric {
            missing.push("feature fragmentShaderBarycentric".to_string());
        }
        if !self.geometry_shader {
            missing.push("feature geometryShader (for gl_PrimitiveID)".to_string());
        }
        missing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_lists_every_gap() {
        assert_eq!(DetailSupport::default().missing().len(), 3);
        let all = DetailSupport { barycentric_extension: true, fragment_shader_barycentric: true, geometry_shader: true };
        assert!(all.available());
        assert_eq!(DetailSupport { geometry_shader: false, ..all }.missing(), vec!["feature geometryShader (for gl_PrimitiveID)"]);
        assert!(required_device_extensions().is_empty());
    }
}
