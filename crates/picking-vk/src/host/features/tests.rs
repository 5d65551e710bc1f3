//! Unit tests of feature negotiation: what is missing, what is chained, and the sets.

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
        gpu_draw_planning_missing: vec![Requirement::Feature("shaderFloat64")],
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
            Requirement::Feature("wideLines"),
            Requirement::Feature("shaderFloat64")
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
        let s =
            PickSupport { indirect_count_missing: vec![], api_version: vk::API_VERSION_1_2, draw_indirect_count_extension: extension, ..support(true, true) };
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
            | PickFeatures::WIDE_LINES
            | PickFeatures::GPU_DRAW_PLANNING,
        PickFeatures::ALL
    );
    assert_eq!(PickFeatures::ALL.intersection(PickFeatures::DETAIL), PickFeatures::DETAIL);
    assert!(PickFeatures::default().contains(PickFeatures::NONE));
}

#[test]
fn core_features_the_host_did_not_enable_are_named() {
    let none = vk::PhysicalDeviceFeatures::default();
    let names = |features, enabled: &vk::PhysicalDeviceFeatures| device::missing_core(features, enabled).iter().map(ToString::to_string).collect::<Vec<_>>();
    assert!(names(PickFeatures::NONE, &none).is_empty());
    assert_eq!(names(PickFeatures::BATCHING, &none), ["feature multiDrawIndirect", "feature drawIndirectFirstInstance"]);
    assert_eq!(
        names(PickFeatures::DETAIL | PickFeatures::WIDE_LINES, &none),
        ["feature geometryShader (for gl_PrimitiveID)", "feature wideLines", "feature largePoints"]
    );
    // What DeviceFeatures::enable_core sets is exactly what is checked.
    for features in [PickFeatures::BATCHING, PickFeatures::SELECT_THROUGH, PickFeatures::ALL] {
        let mut core = vk::PhysicalDeviceFeatures::default();
        DeviceFeatures::new(features, true, true).enable_core(&mut core);
        assert!(names(features, &core).is_empty(), "{features:?}");
    }
    let partly = vk::PhysicalDeviceFeatures { multi_draw_indirect: vk::TRUE, ..Default::default() };
    assert_eq!(names(PickFeatures::BATCHING, &partly), ["feature drawIndirectFirstInstance"]);
}
