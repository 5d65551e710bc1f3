//! The host's GPU writes to buffers a pick reads, recorded before the pick in the same queue
//! (a culling dispatch that writes indirect commands and counts, a copy into the instance
//! buffer, a compute skinning pass): the picker records the barrier that makes them visible
//! to the pass, and the one that orders the host's later writes after the pass's reads.

use crate::error::{Input, PickError};
use ash::vk;

/// The stages at which the pick reads the host's buffers (compute: the GPU plan's cull pass
/// reads storage-buffer instances).
const PASS_READ_STAGES: vk::PipelineStageFlags = vk::PipelineStageFlags::from_raw(
    vk::PipelineStageFlags::DRAW_INDIRECT.as_raw()
        | vk::PipelineStageFlags::COMPUTE_SHADER.as_raw()
        | vk::PipelineStageFlags::VERTEX_INPUT.as_raw()
        | vk::PipelineStageFlags::VERTEX_SHADER.as_raw()
        | vk::PipelineStageFlags::FRAGMENT_SHADER.as_raw(),
);
/// How it reads them: indirect commands and counts, indices, vertex and instance attributes,
/// storage (instances, joints, morphs) and the hooks' uniform and sampled resources.
const PASS_READ_ACCESS: vk::AccessFlags = vk::AccessFlags::from_raw(
    vk::AccessFlags::INDIRECT_COMMAND_READ.as_raw()
        | vk::AccessFlags::INDEX_READ.as_raw()
        | vk::AccessFlags::VERTEX_ATTRIBUTE_READ.as_raw()
        | vk::AccessFlags::UNIFORM_READ.as_raw()
        | vk::AccessFlags::SHADER_READ.as_raw(),
);

/// The shader stages.
pub(crate) const SHADER_STAGES: vk::PipelineStageFlags = vk::PipelineStageFlags::from_raw(
    vk::PipelineStageFlags::VERTEX_SHADER.as_raw()
        | vk::PipelineStageFlags::TESSELLATION_CONTROL_SHADER.as_raw()
        | vk::PipelineStageFlags::TESSELLATION_EVALUATION_SHADER.as_raw()
        | vk::PipelineStageFlags::GEOMETRY_SHADER.as_raw()
        | vk::PipelineStageFlags::FRAGMENT_SHADER.as_raw()
        | vk::PipelineStageFlags::COMPUTE_SHADER.as_raw(),
);

/// Why `stages` and `access` can be no side of a barrier, if they cannot: no stage, an access
/// outside `allowed` (the mask, and how the reason names it), or an access of `needs` none of
/// whose stages is in `stages` (`ALL_COMMANDS` counts for every stage but the host). `verb`
/// says what the stages do: "reads" or "writes".
pub(crate) fn barrier_side_fault(
    stages: vk::PipelineStageFlags,
    access: vk::AccessFlags,
    (allowed, what): (vk::AccessFlags, &str),
    needs: &[(vk::AccessFlags, vk::PipelineStageFlags)],
    verb: &str,
) -> Option<String> {
    use vk::PipelineStageFlags as S;
    if stages.is_empty() {
        return Some("no stage".into());
    }
    // Vulkan 1.0's stages (TOP_OF_PIPE to ALL_COMMANDS); those of extensions (mesh shading,
    // ray tracing) take features and structures this barrier does not know.
    let core = S::from_raw((S::ALL_COMMANDS.as_raw() << 1) - 1);
    if !core.contains(stages) {
        return Some(format!("{:?} is not a Vulkan 1.0 pipeline stage", stages & !core));
    }
    if !allowed.contains(access) {
        return Some(format!("{:?} is not {what}", access & !allowed));
    }
    let performed = |by: S| stages.intersects(if by == S::HOST { by } else { by | S::ALL_COMMANDS });
    let (missing, _) = needs.iter().find(|&&(a, by)| access.contains(a) && !performed(by))?;
    Some(format!("none of the stages {verb} {missing:?}"))
}

/// The host's writes, earlier in the same queue, to what the pick reads: the stages that wrote
/// and their write accesses ([`crate::PickRequest::with_host_writes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostWrites {
    /// The stages whose writes the pick must see (and that later writes of the host's run in).
    pub stages: vk::PipelineStageFlags,
    /// Their write accesses.
    pub access: vk::AccessFlags,
}

impl HostWrites {
    /// Refuses what no barrier can carry: no stage, an access that is not a write, or a write
    /// none of the stages performs.
    pub(crate) fn check(&self) -> Result<(), PickError> {
        use vk::{AccessFlags as A, PipelineStageFlags as S};
        let writes = A::SHADER_WRITE | A::COLOR_ATTACHMENT_WRITE | A::DEPTH_STENCIL_ATTACHMENT_WRITE | A::TRANSFER_WRITE | A::HOST_WRITE | A::MEMORY_WRITE;
        let needs = [
            (A::SHADER_WRITE, SHADER_STAGES | S::ALL_GRAPHICS),
            (A::COLOR_ATTACHMENT_WRITE, S::COLOR_ATTACHMENT_OUTPUT | S::ALL_GRAPHICS),
            (A::DEPTH_STENCIL_ATTACHMENT_WRITE, S::EARLY_FRAGMENT_TESTS | S::LATE_FRAGMENT_TESTS | S::ALL_GRAPHICS),
            (A::TRANSFER_WRITE, S::TRANSFER),
            (A::HOST_WRITE, S::HOST),
        ];
        let why = barrier_side_fault(self.stages, self.access, (writes, "a write access"), &needs, "writes");
        why.map_or(Ok(()), |why| Err(PickError::InvalidInput { input: Input::HostWrites, reason: format!("{self:?}: {why}") }))
    }

    /// Records the barrier from the host's writes to the pass's reads.
    ///
    /// # Safety
    /// `cmd` is recording, outside any render pass, on the picker's device.
    pub(crate) unsafe fn record_before(&self, device: &ash::Device, cmd: vk::CommandBuffer) {
        let barrier = vk::MemoryBarrier::default().src_access_mask(self.access).dst_access_mask(PASS_READ_ACCESS);
        // SAFETY: the caller's contract; `check` made the masks agree with the stages.
        unsafe { device.cmd_pipeline_barrier(cmd, self.stages, PASS_READ_STAGES, vk::DependencyFlags::empty(), &[barrier], &[], &[]) };
    }

    /// Records the dependency from the pass's reads to the host's later writes at the same
    /// stages (write after read needs ordering only, no memory barrier).
    ///
    /// # Safety
    /// As [`HostWrites::record_before`].
    pub(crate) unsafe fn record_after(&self, device: &ash::Device, cmd: vk::CommandBuffer) {
        // The host stage cannot wait on a barrier; its writes are ordered by the host's fence.
        let later = self.stages & !vk::PipelineStageFlags::HOST;
        if later.is_empty() {
            return;
        }
        // SAFETY: the caller's contract.
        unsafe { device.cmd_pipeline_barrier(cmd, PASS_READ_STAGES, later, vk::DependencyFlags::empty(), &[], &[], &[]) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vk::{AccessFlags as A, PipelineStageFlags as S};

    #[test]
    fn masks_that_no_barrier_carries_are_refused() {
        let w = |stages, access| HostWrites { stages, access }.check().map_err(|e| e.to_string());
        assert!(w(S::COMPUTE_SHADER, A::SHADER_WRITE).is_ok());
        assert!(w(S::TRANSFER | S::COMPUTE_SHADER, A::TRANSFER_WRITE | A::SHADER_WRITE).is_ok());
        assert!(w(S::ALL_COMMANDS, A::MEMORY_WRITE | A::TRANSFER_WRITE).is_ok());
        assert!(w(S::HOST, A::HOST_WRITE).is_ok());
        assert!(w(S::empty(), A::SHADER_WRITE).unwrap_err().contains("no stage"));
        assert!(w(S::COMPUTE_SHADER, A::SHADER_READ).unwrap_err().contains("not a write access"));
        assert!(w(S::COMPUTE_SHADER, A::TRANSFER_WRITE).unwrap_err().contains("none of the stages writes TRANSFER_WRITE"));
        assert!(w(S::TRANSFER, A::HOST_WRITE).unwrap_err().contains("HOST_WRITE"));
        let mesh_shader = S::from_raw(0x0010_0000);
        assert!(w(S::COMPUTE_SHADER | mesh_shader, A::SHADER_WRITE).unwrap_err().contains("not a Vulkan 1.0 pipeline stage"));
    }
}
