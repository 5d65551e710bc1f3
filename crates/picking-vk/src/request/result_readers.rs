//! Which of the host's passes read a frame's GPU results.

use super::host_writes::{barrier_side_fault, SHADER_STAGES};
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
        let reads = A::SHADER_READ
            | A::UNIFORM_READ
            | A::INDIRECT_COMMAND_READ
            | A::VERTEX_ATTRIBUTE_READ
            | A::INDEX_READ
            | A::TRANSFER_READ
            | A::HOST_READ
            | A::MEMORY_READ;
        let needs = [
            (A::SHADER_READ, SHADER_STAGES | S::ALL_GRAPHICS),
            (A::UNIFORM_READ, SHADER_STAGES | S::ALL_GRAPHICS),
            (A::INDIRECT_COMMAND_READ, S::DRAW_INDIRECT | S::ALL_GRAPHICS),
            (A::VERTEX_ATTRIBUTE_READ, S::VERTEX_INPUT | S::ALL_GRAPHICS),
            (A::INDEX_READ, S::VERTEX_INPUT | S::ALL_GRAPHICS),
            (A::TRANSFER_READ, S::TRANSFER),
            (A::HOST_READ, S::HOST),
        ];
        let why = barrier_side_fault(self.stages, self.access, (reads, "a read of a buffer"), &needs, "reads");
        why.map_or(Ok(()), |why| Err(PickError::InvalidInput { input: Input::ResultReaders, reason: format!("{self:?}: {why}") }))
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
