//! The hit pass's attachments: R32G32_UINT object ID, R32G32_UINT (draw, instance),
//! optionally R32G32B32A32_UINT detail, and D32_SFLOAT depth. One sample.

use crate::error::Requirement;
use crate::pass::rendering::{AttachmentShape, Dependency, PassShape, ATTACHMENT_STAGES};
use ash::vk;

pub(crate) const ID_FORMAT: vk::Format = vk::Format::R32G32_UINT;
pub(crate) const DRAW_INSTANCE_FORMAT: vk::Format = vk::Format::R32G32_UINT;
pub(crate) const DETAIL_FORMAT: vk::Format = vk::Format::R32G32B32A32_UINT;
pub(crate) const DEPTH_FORMAT: vk::Format = vk::Format::D32_SFLOAT;

/// Which attachments a pass has, and who reads them after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PassLayout {
    pub detail: bool,
    /// The GPU results' compute pass samples the ID, (draw, instance) and depth attachments
    /// after the pass, beside the readback copies: they are made SAMPLED and left in GENERAL.
    pub sampled: bool,
}

impl PassLayout {
    pub fn color_formats(&self) -> &'static [vk::Format] {
        if self.detail {
            &[ID_FORMAT, DRAW_INSTANCE_FORMAT, DETAIL_FORMAT]
        } else {
            &[ID_FORMAT, DRAW_INSTANCE_FORMAT]
        }
    }

    /// Clear values: colours to 0 (nothing), depth to `clear_depth` (the far end).
    pub fn clear_values(&self, clear_depth: f32) -> [vk::ClearValue; 4] {
        let zero = vk::ClearValue { color: vk::ClearColorValue { uint32: [0; 4] } };
        let depth = vk::ClearValue { depth_stencil: vk::ClearDepthStencilValue { depth: clear_depth, stencil: 0 } };
        if self.detail {
            [zero, zero, zero, depth]
        } else {
            [zero, zero, depth, zero]
        }
    }

    pub fn attachment_count(&self) -> usize {
        self.color_formats().len() + 1
    }

    /// The layout every attachment is in after the pass, for the readback copies.
    pub fn after_pass(&self) -> vk::ImageLayout {
        if self.sampled {
            vk::ImageLayout::GENERAL
        } else {
            vk::ImageLayout::TRANSFER_SRC_OPTIMAL
        }
    }
}

/// The formats the GPU results' compute pass samples (ID and (draw, instance), depth, and with
/// `detail` the detail attachment) that the device cannot sample.
///
/// # Safety
/// `physical_device` was enumerated from `instance`, which is live.
pub(crate) unsafe fn sampled_formats_missing(instance: &ash::Instance, physical_device: vk::PhysicalDevice, detail: bool) -> Vec<Requirement> {
    let features = vk::FormatFeatureFlags::SAMPLED_IMAGE;
    let mut missing: Vec<Requirement> = vec![];
    let formats: &[vk::Format] = if detail { &[ID_FORMAT, DEPTH_FORMAT, DETAIL_FORMAT] } else { &[ID_FORMAT, DEPTH_FORMAT] };
    for &format in formats {
        // SAFETY: the caller guarantees `physical_device` belongs to `instance`.
        let props = unsafe { instance.get_physical_device_format_properties(physical_device, format) };
        if !props.optimal_tiling_features.contains(features) {
            missing.push(Requirement::Format { format, features });
        }
    }
    missing
}

/// Formats the device cannot use as the pass needs them, for a pass with or without detail.
///
/// # Safety
/// `physical_device` was enumerated from `instance`, which is live.
pub(crate) unsafe fn formats_missing(instance: &ash::Instance, physical_device: vk::PhysicalDevice, detail: bool) -> Vec<Requirement> {
    let color = vk::FormatFeatureFlags::COLOR_ATTACHMENT | vk::FormatFeatureFlags::TRANSFER_SRC;
    let depth = vk::FormatFeatureFlags::DEPTH_STENCIL_ATTACHMENT | vk::FormatFeatureFlags::TRANSFER_SRC;
    let wanted = PassLayout { detail, sampled: false }.color_formats().iter().map(|&f| (f, color)).chain([(DEPTH_FORMAT, depth)]);
    let mut missing: Vec<Requirement> = vec![];
    for (format, features) in wanted {
        // SAFETY: the caller guarantees `physical_device` belongs to `instance`.
        let props = unsafe { instance.get_physical_device_format_properties(physical_device, format) };
        let requirement = Requirement::Format { format, features };
        if !props.optimal_tiling_features.contains(features) && !missing.contains(&requirement) {
            missing.push(requirement);
        }
    }
    missing
}

/// The hit pass: every attachment kept and left ready for the readback copy (with
/// `layout.sampled`, in GENERAL for the GPU results' pass too). The dependencies are the same
/// in every configuration: render passes are compatible only when they are, and a host's
/// contributor pipelines must work with every picker's pass and the debug ID image's (the GPU
/// results' pass chains its own barrier to the copy's).
pub(crate) fn hit_shape(layout: PassLayout) -> PassShape {
    let kept = |format| AttachmentShape { format, store: true, final_layout: layout.after_pass() };
    let attachment_writes = vk::AccessFlags::COLOR_ATTACHMENT_WRITE | vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_WRITE;
    PassShape {
        name: "render pass",
        colors: layout.color_formats().iter().map(|&f| kept(f)).collect(),
        depth: kept(DEPTH_FORMAT),
        // The previous frame's readback copy must finish reading before this pass clears the
        // same attachments (write-after-read: an execution dependency suffices; the GPU
        // results' reads reach here through the slot's first barrier, which waits for compute
        // and ends at transfers).
        before: Dependency {
            src_stages: vk::PipelineStageFlags::TRANSFER,
            src_access: vk::AccessFlags::empty(),
            dst_stages: ATTACHMENT_STAGES,
            dst_access: attachment_writes | vk::AccessFlags::DEPTH_STENCIL_ATTACHMENT_READ,
        },
        // This pass's writes must land before the readback copy reads them.
        after: Dependency {
            src_stages: ATTACHMENT_STAGES,
            src_access: attachment_writes,
            dst_stages: vk::PipelineStageFlags::TRANSFER,
            dst_access: vk::AccessFlags::TRANSFER_READ,
        },
    }
}
