//! Which draws can be drawn by parts: chunks of a mesh's triangles in its own index order,
//! each bounded by a box from the registered geometry. The CPU planner cuts them per ray
//! (`plan::chunks`); a shared list's GPU plan table keeps their boxes for the GPU to cut
//! (`gpu_plan::chunk_boxes`).

use super::{PickDraw, PositionFormat, Topology};

/// Triangles per chunk.
pub(crate) const CHUNK_TRIANGLES: u32 = 64;
/// Draws of fewer chunks are drawn whole (testing would cost more than it saves).
pub(crate) const MIN_CHUNKS: u32 = 4;

/// Whether a draw can be drawn by parts: a non-instanced triangle list whose positions the
/// registered geometry mirrors (three f32s), drawn by the picker's own commands with its
/// vertices where the geometry says (no world-adjust hook, no deformation), under an affine
/// model.
pub(crate) fn chunkable(draw: &PickDraw) -> bool {
    draw.geometry.is_some()
        && draw.instances.is_none()
        && draw.indirect.is_none()
        && draw.hooks.as_ref().is_none_or(|h| !h.program.adjusts_world())
        && draw.deformation.is_none()
        && draw.raster.topology == Topology::TriangleList
        && draw.position_format == PositionFormat::Float32x3
        && draw.triangles.element_count() / 3 >= MIN_CHUNKS * CHUNK_TRIANGLES
        && draw.model.row(3) == glam::Vec4::W
}
