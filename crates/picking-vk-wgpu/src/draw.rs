//! Pick draws built from `wgpu::Buffer`s, as a wgpu render pass draws them.

use crate::buffers::{check_usage, elements_in, whole_range};
use crate::error::WgpuPickError;
use crate::hooks::{HookAttributeSource, HookResource, WgpuHookProgram};
use glam::Mat4;
use picking_vk::draw::{IndexWidth, InstanceFormat, Instances, PositionFormat, Positions, RasterState, Triangles};
use picking_vk::{ObjectId, PickDraw};
use std::ops::Range;
use std::sync::Arc;

/// Where a draw's positions are: `set_vertex_buffer(slot, buffer.slice(offset..))` with an
/// attribute `format` at `attribute_offset` in a layout of `array_stride` bytes.
#[derive(Clone, Copy, Debug)]
pub struct VertexPositions<'a> {
    /// The vertex buffer (`BufferUsages::VERTEX`).
    pub buffer: &'a wgpu::Buffer,
    /// The slice's start in the buffer, in bytes.
    pub offset: u64,
    /// `VertexBufferLayout::array_stride`.
    pub array_stride: u64,
    /// The position attribute's `offset` in the layout.
    pub attribute_offset: u64,
    /// The position attribute's format.
    pub format: wgpu::VertexFormat,
}

impl<'a> VertexPositions<'a> {
    /// Tightly packed `Float32x3` positions from the buffer's start.
    pub fn tight(buffer: &'a wgpu::Buffer) -> Self {
        VertexPositions { buffer, offset: 0, array_stride: 12, attribute_offset: 0, format: wgpu::VertexFormat::Float32x3 }
    }
}

/// Per-instance transforms: `set_vertex_buffer(slot, buffer.slice(offset..))` stepping per
/// instance, one column-major `mat4x4<f32>` (or a row-major 3x4, see [`InstanceFormat`]) every
/// `array_stride` bytes.
#[derive(Clone, Copy, Debug)]
pub struct InstanceTransforms<'a> {
    /// The instance buffer (`BufferUsages::VERTEX`).
    pub buffer: &'a wgpu::Buffer,
    /// The slice's start in the buffer, in bytes.
    pub offset: u64,
    /// Bytes from one instance to the next.
    pub array_stride: u64,
    /// How each transform is stored.
    pub format: InstanceFormat,
}

/// One pickable draw of a wgpu scene: the geometry of a `draw` or `draw_indexed` call and
/// what it stands for. Built from wgpu buffers only, so every buffer it names is wgpu's,
/// alive and of the right usage; [`crate::WgpuPicker::record`] keeps them alive until the
/// pick's GPU work completed, and makes its reads known to wgpu.
#[derive(Clone, Debug)]
pub struct WgpuDraw {
    pub(crate) draw: PickDraw,
    /// The buffers the pick reads, each with the state wgpu must put it in first.
    pub(crate) buffers: Vec<(wgpu::Buffer, wgpu::BufferUses)>,
    /// The textures its hooks sample (put in `TextureUses::RESOURCE` first).
    pub(crate) textures: Vec<wgpu::Texture>,
    /// What its hooks need alive until its picks complete (their descriptor set).
    pub(crate) keep: Vec<Arc<dyn std::any::Any + Send + Sync>>,
    /// The device its hooks' set belongs to.
    pub(crate) hook_device: Option<ash::vk::Device>,
}

impl WgpuDraw {
    /// `draw(vertices, ..)`: non-indexed triangles from `positions`.
    pub fn new(id: ObjectId, positions: VertexPositions<'_>, vertices: Range<u32>) -> Result<Self, WgpuPickError> {
        let (positions_range, format) = positions_of(&positions)?;
        let triangles = Triangles::NonIndexed { first_vertex: vertices.start, vertex_count: vertices.end.saturating_sub(vertices.start) };
        let draw = PickDraw::new(id, positions_range, triangles).with_position_format(format);
        Ok(WgpuDraw { draw, buffers: vec![(positions.buffer.clone(), wgpu::BufferUses::VERTEX)], textures: vec![], keep: vec![], hook_device: None })
    }

    /// `set_index_buffer(index_buffer.slice(index_offset..), format)` then
    /// `draw_indexed(indices, base_vertex, ..)`: indexed triangles.
    pub fn indexed(
        id: ObjectId,
        positions: VertexPositions<'_>,
        index_buffer: &wgpu::Buffer,
        index_offset: u64,
        format: wgpu::IndexFormat,
        indices: Range<u32>,
        base_vertex: i32,
    ) -> Result<Self, WgpuPickError> {
        let (positions_range, position_format) = positions_of(&positions)?;
        check_usage(index_buffer, wgpu::BufferUsages::INDEX, "index", "INDEX")?;
        let width = match format {
            wgpu::IndexFormat::Uint16 => IndexWidth::U16,
            wgpu::IndexFormat::Uint32 => IndexWidth::U32,
        };
        let range = whole_range(index_buffer, index_offset, "index")?;
        let triangles =
            Triangles::Indexed { range, width, first_index: indices.start, index_count: indices.end.saturating_sub(indices.start), vertex_offset: base_vertex };
        let draw = PickDraw::new(id, positions_range, triangles).with_position_format(position_format);
        let buffers = vec![(positions.buffer.clone(), wgpu::BufferUses::VERTEX), (index_buffer.clone(), wgpu::BufferUses::INDEX)];
        Ok(WgpuDraw { draw, buffers, textures: vec![], keep: vec![], hook_device: None })
    }

    /// Draws `instances` of the transforms (the `instances` range of `draw_indexed`): instance
    /// `i` of the results is element `instances.start + i`. Each instance is placed by
    /// `model * transform`.
    pub fn with_instances(mut self, transforms: InstanceTransforms<'_>, instances: Range<u32>) -> Result<Self, WgpuPickError> {
        check_usage(transforms.buffer, wgpu::BufferUsages::VERTEX, "instance", "VERTEX")?;
        let stride = u32::try_from(transforms.array_stride)
            .map_err(|_| WgpuPickError::BufferRange { what: "instance", reason: format!("array stride {} is too large", transforms.array_stride) })?;
        let range = whole_range(transforms.buffer, transforms.offset, "instance")?;
        let count = instances.end.saturating_sub(instances.start);
        self.draw = self.draw.with_instances(Instances { range, stride, first: instances.start, count }).with_instance_format(transforms.format);
        self.buffers.push((transforms.buffer.clone(), wgpu::BufferUses::VERTEX));
        Ok(self)
    }

    /// Runs `program`'s hooks on this draw (crate feature `hooks`: without it the picker
    /// refuses hooked draws with `PickError::HookCompile`). `resources` fill the program's
    /// bindings in order; `attribute` is the per-vertex attribute it declares, laid out like
    /// the positions (one element per vertex the draw reads). The draw's descriptor set is
    /// made here and freed when the last clone of the draw and the last pick using it are gone.
    pub fn with_hooks(
        mut self,
        program: &WgpuHookProgram,
        resources: &[HookResource<'_>],
        attribute: Option<HookAttributeSource<'_>>,
    ) -> Result<Self, WgpuPickError> {
        let built = program.draw_hooks(resources, attribute)?;
        // The draw may read only the vertices both streams hold.
        if let Some(stream) = &built.hooks.attribute {
            self.draw.positions.vertex_count = self.draw.positions.vertex_count.min(stream.vertex_count);
        }
        self.draw = self.draw.with_hooks(built.hooks);
        self.buffers.extend(built.buffers);
        self.textures.extend(built.textures);
        self.keep.extend(built.keep);
        self.hook_device = built.device;
        Ok(self)
    }

    /// The object-to-world transform (the draw's `model` uniform).
    pub fn with_model(mut self, model: Mat4) -> Self {
        self.draw = self.draw.with_model(model);
        self
    }

    /// Culling, winding, topology and depth bias as the app's pipeline draws it.
    pub fn with_raster(mut self, raster: RasterState) -> Self {
        self.draw = self.draw.with_raster(raster);
        self
    }

    /// The draw's pick priority (see `PickDraw::with_priority`).
    pub fn with_priority(mut self, priority: i16) -> Self {
        self.draw = self.draw.with_priority(priority);
        self
    }

    /// A value of the app's own, returned with every hit on this draw.
    pub fn with_tag(mut self, tag: u64) -> Self {
        self.draw = self.draw.with_tag(tag);
        self
    }

    /// Whether the draw takes part in the pick (`false`: it neither hits nor occludes).
    pub fn with_pickable(mut self, pickable: bool) -> Self {
        self.draw = self.draw.with_pickable(pickable);
        self
    }

    /// The draw's local bounds (the box around what it draws, before `model`): without them
    /// the picker cannot cull the draw, nor its instances (see `PickDraw::with_bounds`).
    pub fn with_bounds(mut self, bounds: picking_vk::draw::Aabb) -> Self {
        self.draw = self.draw.with_bounds(bounds);
        self
    }

    /// The mesh on the CPU too (`PickDraw::with_geometry`): bounds when none were given, and
    /// detail's surface (points, normals, UVs) where detail is active.
    pub fn with_geometry(mut self, geometry: Arc<picking_vk::draw::MeshGeometry>) -> Self {
        self.draw = self.draw.with_geometry(geometry);
        self
    }

    /// The instances' transforms on the CPU too, for culling (with bounds) and world positions
    /// of hits.
    pub fn with_instance_transforms(mut self, transforms: Arc<[Mat4]>) -> Self {
        self.draw = self.draw.with_instance_transforms(transforms);
        self
    }

    /// The picker's description of the draw (raw Vulkan handles of the wgpu buffers).
    pub fn pick_draw(&self) -> &PickDraw {
        &self.draw
    }
}

/// The picker's positions for a wgpu vertex layout: the range starts at the first vertex's
/// position, and holds every vertex whose position lies inside the buffer.
fn positions_of(p: &VertexPositions<'_>) -> Result<(Positions, PositionFormat), WgpuPickError> {
    check_usage(p.buffer, wgpu::BufferUsages::VERTEX, "vertex", "VERTEX")?;
    let format = match p.format {
        wgpu::VertexFormat::Float32x3 => PositionFormat::Float32x3,
        wgpu::VertexFormat::Float16x4 => PositionFormat::Float16x4,
        wgpu::VertexFormat::Snorm16x4 => PositionFormat::Snorm16x4,
        wgpu::VertexFormat::Unorm16x4 => PositionFormat::Unorm16x4,
        wgpu::VertexFormat::Snorm8x4 => PositionFormat::Snorm8x4,
        wgpu::VertexFormat::Unorm8x4 => PositionFormat::Unorm8x4,
        other => return Err(WgpuPickError::PositionFormat(other)),
    };
    let bad = |reason: String| WgpuPickError::BufferRange { what: "vertex", reason };
    let stride = u32::try_from(p.array_stride).map_err(|_| bad(format!("array stride {} is too large", p.array_stride)))?;
    let start = p.offset.checked_add(p.attribute_offset).ok_or_else(|| bad("offset past 2^64".into()))?;
    let range = whole_range(p.buffer, start, "vertex")?;
    let vertex_count = elements_in(range.size, p.format.size(), stride);
    Ok((Positions { range, stride, vertex_count }, format))
}
