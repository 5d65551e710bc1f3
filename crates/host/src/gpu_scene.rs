//! Meshes on the GPU, read in place by the lit pass and by the picker: vertex and index
//! buffers per primitive, one buffer of world matrices (a slot per placed copy), the lit
//! pass's draws over runs of slots, and the `PickDraw`s handed to the picker each frame. No
//! copies: the picker reads the same buffers the lit pass draws from.

use ash::vk;
use glam::Mat4;
use picking_vk::{BufferRange, IndexWidth, Instances, MeshGeometry, ObjectId, PickDraw, Positions, Triangles};
use picking_vk_context::{ContextError, HostBuffer, VulkanContext};
use std::sync::Arc;

use crate::mesh::Primitive;

/// One primitive's buffers (tight `vec3` positions and normals, optional u32 indices), its
/// colour, and its CPU geometry for detail picking.
pub struct GpuPrimitive {
    pub positions: HostBuffer,
    pub normals: HostBuffer,
    pub indices: Option<HostBuffer>,
    /// Indices (indexed) or vertices (non-indexed) to draw.
    pub count: u32,
    pub vertex_count: u32,
    pub color: [f32; 4],
    pub geometry: Arc<MeshGeometry>,
}

impl GpuPrimitive {
    pub fn upload(ctx: &VulkanContext, p: &Primitive) -> Result<Self, ContextError> {
        let usage = vk::BufferUsageFlags::VERTEX_BUFFER;
        let positions = ctx.upload(&p.positions, usage)?;
        let normals = ctx.upload(&p.normals, usage)?;
        let indices = p.indices.as_ref().map(|ix| ctx.upload(ix, vk::BufferUsageFlags::INDEX_BUFFER)).transpose()?;
        let geometry =
            Arc::new(MeshGeometry { positions: p.positions.clone(), normals: Some(p.normals.clone()), uvs: p.uvs.clone(), indices: p.indices.clone() });
        Ok(GpuPrimitive {
            positions,
            normals,
            indices,
            count: p.indices.as_ref().map_or(p.positions.len(), Vec::len) as u32,
            vertex_count: p.positions.len() as u32,
            color: p.color,
            geometry,
        })
    }

    /// The triangles, as the picker reads them.
    pub fn triangles(&self) -> Triangles {
        match &self.indices {
            Some(ib) => Triangles::Indexed {
                range: BufferRange { buffer: ib.buffer, offset: 0, size: ib.size },
                width: IndexWidth::U32,
                first_index: 0,
                index_count: self.count,
                vertex_offset: 0,
            },
            None => Triangles::NonIndexed { first_vertex: 0, vertex_count: self.count },
        }
    }

    /// The positions, as the picker reads them.
    pub fn positions(&self) -> Positions {
        Positions { range: BufferRange { buffer: self.positions.buffer, offset: 0, size: self.positions.size }, stride: 12, vertex_count: self.vertex_count }
    }

    /// A pick draw of this primitive as object `id`, with its CPU geometry registered (for
    /// detail results and culling bounds); the caller adds the model matrix or instances.
    pub fn pick_draw(&self, id: ObjectId) -> PickDraw {
        PickDraw::new(id, self.positions(), self.triangles()).with_geometry(self.geometry.clone())
    }
}

/// One lit-pass draw: a primitive over a run of world-matrix slots (one instance per slot).
#[derive(Clone, Copy, Debug)]
pub struct RenderDraw {
    pub primitive: usize,
    pub first_slot: u32,
    pub slot_count: u32,
}

/// What the lit pass draws and the picker picks.
pub struct GpuScene {
    pub primitives: Vec<GpuPrimitive>,
    /// One column-major `mat4` per slot: per-instance input of the lit pass, and the instance
    /// buffer of instanced pick draws.
    pub worlds: HostBuffer,
    pub slot_count: u32,
    pub render_draws: Vec<RenderDraw>,
    /// Shared, so the picker can keep a culling hierarchy over them (`Picker::record_shared`).
    pub pick_draws: Arc<[PickDraw]>,
}

impl GpuScene {
    /// `primitives` with `worlds` uploaded as the slot buffer; no draws yet.
    pub fn new(ctx: &VulkanContext, primitives: Vec<GpuPrimitive>, worlds: &[Mat4]) -> Result<Self, ContextError> {
        let columns: Vec<[f32; 16]> = worlds.iter().map(Mat4::to_cols_array).collect();
        let worlds_buffer = ctx.upload(&columns, vk::BufferUsageFlags::VERTEX_BUFFER)?;
        Ok(GpuScene { primitives, worlds: worlds_buffer, slot_count: worlds.len() as u32, render_draws: vec![], pick_draws: Arc::new([]) })
    }

    /// Slots `first..first + count` of the world buffer as a pick draw's instances.
    pub fn instances(&self, first: u32, count: u32) -> Instances {
        Instances { range: BufferRange { buffer: self.worlds.buffer, offset: 0, size: self.worlds.size }, stride: 64, first, count }
    }
}
