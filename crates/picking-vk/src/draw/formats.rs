//! How the host stores a draw's vertex positions and per-instance transforms.

use ash::vk;

/// How a vertex's position is stored. Quantized positions (glTF `KHR_mesh_quantization`) are
/// read as the normalized values of their format; fold the dequantizing transform into
/// [`crate::PickDraw::model`], and give [`crate::PickDraw::bounds`] and CPU geometry in the
/// normalized space. Four-component formats read three (the fourth is the padding glTF aligns
/// to).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PositionFormat {
    /// Three `f32`s (12 bytes).
    #[default]
    Float32x3,
    /// Four `f16`s (8 bytes).
    Float16x4,
    /// Four `i16`s read as -1..1 (8 bytes).
    Snorm16x4,
    /// Four `u16`s read as 0..1 (8 bytes).
    Unorm16x4,
    /// Four `i8`s read as -1..1 (4 bytes).
    Snorm8x4,
    /// Four `u8`s read as 0..1 (4 bytes).
    Unorm8x4,
}

impl PositionFormat {
    pub(crate) fn vk(self) -> vk::Format {
        match self {
            PositionFormat::Float32x3 => vk::Format::R32G32B32_SFLOAT,
            PositionFormat::Float16x4 => vk::Format::R16G16B16A16_SFLOAT,
            PositionFormat::Snorm16x4 => vk::Format::R16G16B16A16_SNORM,
            PositionFormat::Unorm16x4 => vk::Format::R16G16B16A16_UNORM,
            PositionFormat::Snorm8x4 => vk::Format::R8G8B8A8_SNORM,
            PositionFormat::Unorm8x4 => vk::Format::R8G8B8A8_UNORM,
        }
    }

    /// Bytes of one position.
    pub fn bytes(self) -> u32 {
        match self {
            PositionFormat::Float32x3 => 12,
            PositionFormat::Float16x4 | PositionFormat::Snorm16x4 | PositionFormat::Unorm16x4 => 8,
            PositionFormat::Snorm8x4 | PositionFormat::Unorm8x4 => 4,
        }
    }

    /// Bytes of one component (attribute addresses are aligned to it).
    pub(crate) fn component_bytes(self) -> u32 {
        match self {
            PositionFormat::Float32x3 => 4,
            PositionFormat::Float16x4 | PositionFormat::Snorm16x4 | PositionFormat::Unorm16x4 => 2,
            PositionFormat::Snorm8x4 | PositionFormat::Unorm8x4 => 1,
        }
    }
}

/// How a per-instance transform is stored in [`crate::draw::Instances`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum InstanceFormat {
    /// A column-major `mat4` of `f32` (64 bytes).
    #[default]
    Mat4,
    /// A row-major 3x4 matrix of `f32`: three rows of four, the affine part (48 bytes), as
    /// engines that pack instances store them.
    Rows3x4,
}

impl InstanceFormat {
    /// Bytes of one transform.
    pub fn bytes(self) -> u32 {
        match self {
            InstanceFormat::Mat4 => 64,
            InstanceFormat::Rows3x4 => 48,
        }
    }
}

/// Where an instanced draw's transforms are read from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum InstanceBinding {
    /// Per-instance vertex attributes of a buffer with `VERTEX_BUFFER` usage.
    #[default]
    VertexBuffer,
    /// A buffer with `STORAGE_BUFFER` usage that the vertex shader indexes by instance, for
    /// engines that keep instance data in storage buffers. The picker binds the buffer's
    /// first `range.offset + range.size` bytes (within `maxStorageBufferRange`) in a
    /// descriptor set of its own (up to 4,096 such sets in flight); the offset needs no
    /// descriptor alignment.
    StorageBuffer,
    /// Per-instance vertex attributes, as `VertexBuffer`, of a buffer that also has
    /// `STORAGE_BUFFER` usage (as every buffer a compute pass writes has): the GPU planner
    /// ([`crate::config::Planner`]) may then read the transforms as a storage buffer to cull
    /// the instances, bound as `StorageBuffer` describes. The pick draws them as
    /// `VertexBuffer`.
    VertexAndStorageBuffer,
}
