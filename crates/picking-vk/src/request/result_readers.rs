//! Which of the host's passes read a frame's GPU results.

use crate::error::{Input, PickError};
use ash::vk;

/// The host's passes that read the GPU results: the picker's barrier after its compute pass
/// makes the results visible to these stages and accesses, and orders the next frame's writes
/// after them. Default: vertex, fragment and compute shader reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResultReaders {
    /// The stages of the host's passes that read the results.
    pub stages: vk::PipelineStageFlags,
    /// How they read them (`SHADER_READ` for storage buffer reads).
    pub access: vk::AccessFlags,
}

impl Default for ResultReaders {
    fn default() -> Self {
        ResultReaders {
            stages: vk::PipelineStageFlags::VERTEX_SHADER | vk::PipelineStageFlags::FRAGMENT_SHADER | vk::PipelineStageFlags::COMPUTE_SHADER,
            access: vk::AccessFlags::SHADER_READ,
        }
    }
}

impl ResultReaders {
    /// Refuses masks no barrier can carry: no stage, an access that is not a read, or a read
    /// none of the stages performs (which Vulkan's barrier rules forbid).
    pub(crate) fn check(&self) -> Result<(), PickError> {
        use vk::{AccessFlags as A, PipelineStageFlags as S};
        let bad = |why: String| Err(PickError::InvalidInput { input: Input::ResultReaders, reason: format!("{self:?}: {why}") });
        if self.stages.is_empty() {
            return bad("no stage".into());
        }
        let reads = A::SHADER_READ
            | A::UNIFORM_READ
            | A::INDIRECT_COMMAND_READ
            | A::VERTEX_ATTRIBUTE_READ
            | A::INDEX_READ
            | A::TRANSFER_READ
            | A::HOST_READ
            | A::MEMORY_READ;
        if !reads.contains(self.access) {
            return bad(format!("{:?} is not a read of a buffer", self.access & !reads));
        }
        let shaders =
            S::VERTEX_SHADER | S::TESSELLATION_CONTROL_SHADER | S::TESSELLATION_EVALUATION_SHADER | S::GEOMETRY_SHADER | S::FRAGMENT_SHADER | S::COMPUTE_SHADER;
        let any = |stages: S| self.stages.intersects(stages | S::ALL_COMMANDS);
        let needs = [
            (A::SHADER_READ, any(shaders | S::ALL_GRAPHICS)),
            (A::UNIFORM_READ, any(shaders | S::ALL_GRAPHICS)),
            (A::INDIRECT_COMMAND_READ, any(S::DRAW_INDIRECT | S::ALL_GRAPHICS)),
            (A::VERTEX_ATTRIBUTE_READ, any(S::VERTEX_INPUT | S::ALL_GRAPHICS)),
            (A::INDEX_READ, any(S::VERTEX_INPUT | S::ALL_GRAPHICS)),
            (A::TRANSFER_READ, any(S::TRANSFER)),
            (A::HOST_READ, self.stages.contains(S::HOST)),
        ];
        match needs.iter().find(|(access, ok)| self.access.contains(*access) && !ok) {
            Some((access, _)) => bad(format!("none of the stages reads {access:?}")),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_no_barrier_can_carry_are_refused() {
        use vk::{AccessFlags as A, PipelineStageFlags as S};
        assert!(ResultReaders::default().check().is_ok());
        let ok = [
            (S::FRAGMENT_SHADER, A::SHADER_READ),
            (S::DRAW_INDIRECT, A::INDIRECT_COMMAND_READ),
            (S::TRANSFER, A::TRANSFER_READ),
            (S::ALL_COMMANDS, A::MEMORY_READ),
        ];
        for (stages, access) in ok {
            assert!(ResultReaders { stages, access }.check().is_ok(), "{stages:?} {access:?}");
        }
        let refused = [(S::empty(), A::SHADER_READ), (S::TRANSFER, A::SHADER_READ), (S::FRAGMENT_SHADER, A::SHADER_WRITE), (S::VERTEX_SHADER, A::HOST_READ)];
        for (stages, access) in refused {
            let outcome = ResultReaders { stages, access }.check();
            assert!(matches!(outcome, Err(PickError::InvalidInput { input: Input::ResultReaders, .. })), "{stages:?} {access:?}: {outcome:?}");
        }
    }
}
