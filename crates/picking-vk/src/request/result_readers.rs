//! Which of the host's passes read a frame's GPU results.

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
