//! What the host tells the picker about each draw: its own buffers, never a copy, and
//! optionally CPU geometry and bounds. A [`PickDraw`] is built with [`PickDraw::new`] from
//! [`Positions`] and [`Triangles`] (each a [`BufferRange`] of a host buffer) and `with_*`
//! setters; [`DrawList`] hands a frame's draws (or a shared list) to the picker. Hooks,
//! deformation and contributors have their own modules ([`crate::hooks`], [`crate::deform`],
//! [`crate::contributor`]).

pub(crate) mod bounds;
pub(crate) mod chunking;
pub(crate) mod contributor;
pub(crate) mod deform;
pub(crate) mod formats;
pub(crate) mod geometry;
pub(crate) mod hooks;
pub(crate) mod indirect;
mod list;
pub(crate) mod raster;
mod validate;

pub use bounds::Aabb;
pub(crate) use contributor::{ContributorContext, ContributorHit, ContributorTarget, PickContributor};
pub(crate) use deform::{DeformPose, Deformation};
pub use formats::{InstanceBinding, InstanceFormat, PositionFormat};
pub use geometry::MeshGeometry;
pub(crate) use hooks::DrawHooks;
pub(crate) use indirect::DrawLimits;
pub use indirect::IndirectDraws;
pub use list::DrawList;
pub use raster::{Culling, DepthBias, PrimitiveKind, RasterState, Topology};

use crate::error::PickError;
use crate::id::ObjectId;
use ash::vk;
use glam::Mat4;
use std::sync::Arc;

/// A byte range of a host-owned buffer. `size` lets the picker check counts against it, so
/// it is a number of bytes the host states: `vk::WHOLE_SIZE` is refused (it would make every
/// check pass and bind an invalid storage range). The host guarantees the range lies inside
/// its buffer (`offset + size` at most the buffer's size): Vulkan cannot be asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferRange {
    /// The host's buffer.
    pub buffer: vk::Buffer,
    /// Where the range starts, in bytes.
    pub offset: vk::DeviceSize,
    /// How many bytes from `offset` the picker may read; never `vk::WHOLE_SIZE`.
    pub size: vk::DeviceSize,
}

impl BufferRange {
    /// Refuses a size the picker cannot check against: `vk::WHOLE_SIZE`, or an end past u64.
    pub(crate) fn check_size(&self, what: &str) -> Result<(), String> {
        if self.size == vk::WHOLE_SIZE {
            return Err(format!("the {what} range's size is vk::WHOLE_SIZE: state the bytes the range holds"));
        }
        if self.offset.checked_add(self.size).is_none() {
            return Err(format!("the {what} range {}+{} ends past 2^64", self.offset, self.size));
        }
        Ok(())
    }
}

/// Vertex positions at `stride` bytes, tight or interleaved: three `f32`s unless
/// [`PickDraw::position_format`] says otherwise.
/// The buffer needs `VERTEX_BUFFER` usage. The range starts at the first vertex's position,
/// so an interleaved layout gives its attribute offset in `range.offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Positions {
    /// Starts at the first vertex's position.
    pub range: BufferRange,
    /// Bytes from one vertex to the next.
    pub stride: u32,
    /// How many vertices the range holds; draws may not reach past it.
    pub vertex_count: u32,
}

/// Index width of an index buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexWidth {
    /// `VK_INDEX_TYPE_UINT16`.
    U16,
    /// `VK_INDEX_TYPE_UINT32`.
    U32,
}

impl IndexWidth {
    /// Bytes per index.
    pub fn bytes(self) -> u64 {
        match self {
            IndexWidth::U16 => 2,
            IndexWidth::U32 => 4,
        }
    }
    pub(crate) fn vk(self) -> vk::IndexType {
        match self {
            IndexWidth::U16 => vk::IndexType::UINT16,
            IndexWidth::U32 => vk::IndexType::UINT32,
        }
    }
}

/// Which vertices (or indices) of the position buffer a draw reads; how they form triangles
/// is [`PickDraw::raster`]'s topology.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Triangles {
    /// `vkCmdDraw(vertex_count, .., first_vertex, ..)`.
    NonIndexed {
        /// First vertex read.
        first_vertex: u32,
        /// Vertices read (three per triangle for lists).
        vertex_count: u32,
    },
    /// `vkCmdDrawIndexed(index_count, .., first_index, vertex_offset, ..)`. The index buffer
    /// needs `INDEX_BUFFER` usage; `range.offset` must be a multiple of the index width.
    Indexed {
        /// The index buffer range bound (offset as in `vkCmdBindIndexBuffer`).
        range: BufferRange,
        /// Index type.
        width: IndexWidth,
        /// First index read, counted from `range.offset`.
        first_index: u32,
        /// Indices read (three per triangle for lists).
        index_count: u32,
        /// Added to every index before reading the vertex.
        vertex_offset: i32,
    },
}

impl Triangles {
    /// What a command over these triangles draws besides its instances: count, first index
    /// or vertex, vertex offset (0 without indices).
    pub(crate) fn template(&self) -> (u32, u32, i32) {
        match *self {
            Triangles::NonIndexed { first_vertex, vertex_count } => (vertex_count, first_vertex, 0),
            Triangles::Indexed { first_index, index_count, vertex_offset, .. } => (index_count, first_index, vertex_offset),
        }
    }

    /// Number of vertices (or indices) the draw consumes.
    pub fn element_count(&self) -> u32 {
        match *self {
            Triangles::NonIndexed { vertex_count, .. } => vertex_count,
            Triangles::Indexed { index_count, .. } => index_count,
        }
    }
}

/// Per-instance transforms: one column-major `mat4` of `f32` (64 bytes; or a row-major 3x4,
/// see [`PickDraw::instance_format`]) per instance at `stride` bytes, in a buffer with
/// `VERTEX_BUFFER` usage. Instance `i` of the draw reads element
/// `first + i` and is reported as instance `i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instances {
    /// The buffer of per-instance matrices.
    pub range: BufferRange,
    /// Bytes from one matrix to the next (at least the format's size: 64 for `Mat4`, 48 for
    /// `Rows3x4`).
    pub stride: u32,
    /// First element read (`firstInstance`).
    pub first: u32,
    /// Instances drawn.
    pub count: u32,
}

/// One pickable draw of the host's scene for one frame.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct PickDraw {
    /// The object this draw belongs to. Several draws may share an ID (a mesh with several
    /// primitives is one object); instances are told apart by their index, not by the ID.
    pub id: ObjectId,
    /// The host's own value for this draw (its index in the host's list, a submesh key...),
    /// reported back in [`crate::PickHit::tag`] whatever was culled. 0 unless set.
    pub tag: u64,
    /// How a radius query ranks this draw's hits: in the query's disc, only hits of the
    /// highest priority found there take part, under either [`Snap`](crate::Snap) rule
    /// (gizmos, lines and points above surfaces). 0 unless set, and 0 for contributors'
    /// hits; point and rectangle queries ignore it.
    pub priority: i16,
    /// Where the vertex positions are.
    pub positions: Positions,
    /// Which triangles the draw covers.
    pub triangles: Triangles,
    /// Object to world.
    pub model: Mat4,
    /// Per-instance transforms, for instanced draws.
    pub instances: Option<Instances>,
    /// `false` keeps the draw out of the pick pass (it neither hits nor occludes).
    pub pickable: bool,
    /// CPU copy of the geometry, for detail results (points, normals, UVs). Shared, not copied.
    pub geometry: Option<Arc<MeshGeometry>>,
    /// CPU copy of the per-instance transforms, for world-space detail results and
    /// per-instance culling of instanced draws: exactly [`Instances::count`] of them, `[i]` for
    /// instance `i` of the draw (buffer element `first + i`). Any other length is refused, and
    /// so are transforms on a draw without `instances`.
    pub instance_transforms: Option<Arc<[Mat4]>>,
    /// Conservative local-space bounds of the draw's triangles (of each instance, before its
    /// transform), for pick-ray culling. Draws without bounds are always drawn.
    pub bounds: Option<Aabb>,
    /// How the host rasterizes the draw: culling, depth test and bias, topology.
    pub raster: RasterState,
    /// How each position is stored (three `f32`s by default).
    pub position_format: PositionFormat,
    /// How each instance's transform is stored (a column-major `mat4` by default).
    pub instance_format: InstanceFormat,
    /// Where the transforms are read from (vertex attributes by default).
    pub instance_binding: InstanceBinding,
    /// Run-time GLSL the pick pass runs for this draw (see [`HookProgram`](crate::hooks::HookProgram)).
    pub hooks: Option<DrawHooks>,
    /// The host's indirect commands, when it draws this indirectly (see [`IndirectDraws`]).
    pub indirect: Option<IndirectDraws>,
    /// Skinning and morph targets the pick pass applies (see [`Deformation`]).
    pub deformation: Option<Deformation>,
}

/// How many pixels beyond its vertices a draw's primitives reach: a point sprite of size `s`
/// covers pixel centres up to `s / 2` away on each axis (its corners `s / 2 * sqrt(2)`), a
/// line of width `w` up to `w / 2` aside and about a pixel past its ends; triangles none.
pub(crate) fn reach_px(draw: &PickDraw) -> f32 {
    let size = match draw.raster.topology.primitive() {
        PrimitiveKind::Triangle => return 0.0,
        PrimitiveKind::Segment => draw.raster.line_width,
        PrimitiveKind::Point => draw.raster.point_size,
    };
    size * 0.5 * std::f32::consts::SQRT_2 + 1.0
}

impl PickDraw {
    /// A pickable, non-instanced draw with an identity model matrix.
    pub fn new(id: ObjectId, positions: Positions, triangles: Triangles) -> Self {
        PickDraw {
            id,
            tag: 0,
            priority: 0,
            positions,
            triangles,
            model: Mat4::IDENTITY,
            instances: None,
            pickable: true,
            geometry: None,
            instance_transforms: None,
            bounds: None,
            raster: RasterState::default(),
            position_format: PositionFormat::Float32x3,
            instance_format: InstanceFormat::Mat4,
            instance_binding: InstanceBinding::VertexBuffer,
            hooks: None,
            indirect: None,
            deformation: None,
        }
    }

    /// Sets [`PickDraw::deformation`].
    pub fn with_deformation(mut self, deformation: Deformation) -> Self {
        self.deformation = Some(deformation);
        self
    }

    /// Sets [`PickDraw::indirect`].
    pub fn with_indirect(mut self, indirect: IndirectDraws) -> Self {
        self.indirect = Some(indirect);
        self
    }

    /// Sets [`PickDraw::hooks`].
    pub fn with_hooks(mut self, hooks: DrawHooks) -> Self {
        self.hooks = Some(hooks);
        self
    }

    /// Sets [`PickDraw::instance_format`].
    pub fn with_instance_format(mut self, format: InstanceFormat) -> Self {
        self.instance_format = format;
        self
    }

    /// Sets [`PickDraw::instance_binding`].
    pub fn with_instance_binding(mut self, binding: InstanceBinding) -> Self {
        self.instance_binding = binding;
        self
    }

    /// Sets [`PickDraw::position_format`] (quantized or half-float positions).
    pub fn with_position_format(mut self, format: PositionFormat) -> Self {
        self.position_format = format;
        self
    }

    /// Sets [`PickDraw::raster`]: the host's culling, depth test and bias, and topology.
    pub fn with_raster(mut self, raster: RasterState) -> Self {
        self.raster = raster;
        self
    }

    /// Sets [`PickDraw::priority`].
    pub fn with_priority(mut self, priority: i16) -> Self {
        self.priority = priority;
        self
    }

    /// Sets [`PickDraw::tag`].
    pub fn with_tag(mut self, tag: u64) -> Self {
        self.tag = tag;
        self
    }

    /// Sets the model (object-to-world) matrix.
    pub fn with_model(mut self, model: Mat4) -> Self {
        self.model = model;
        self
    }

    /// Makes the draw instanced.
    pub fn with_instances(mut self, instances: Instances) -> Self {
        self.instances = Some(instances);
        self
    }

    /// Registers the CPU geometry (checked once with [`MeshGeometry::validate`] by the host).
    /// Unless bounds were given, they are derived here, once, not per frame, from the
    /// vertices this draw's `triangles` read: a draw in a buffer shared with other meshes is
    /// bounded by its own range only.
    pub fn with_geometry(mut self, geometry: Arc<MeshGeometry>) -> Self {
        if self.bounds.is_none() {
            self.bounds = geometry.bounds_of(&self.triangles);
        }
        self.geometry = Some(geometry);
        self
    }

    /// Sets conservative local-space bounds for culling.
    pub fn with_bounds(mut self, bounds: Aabb) -> Self {
        self.bounds = Some(bounds);
        self
    }

    /// Registers the CPU copy of the per-instance transforms.
    pub fn with_instance_transforms(mut self, transforms: Arc<[Mat4]>) -> Self {
        self.instance_transforms = Some(transforms);
        self
    }

    /// Sets [`PickDraw::pickable`].
    pub fn with_pickable(mut self, pickable: bool) -> Self {
        self.pickable = pickable;
        self
    }

    /// The draw's instances, when their transforms are read from a storage buffer.
    pub(crate) fn instances_in_storage(&self) -> Option<Instances> {
        self.instances.filter(|_| self.instance_binding == InstanceBinding::StorageBuffer)
    }

    /// The instances when their buffer may be read as a storage buffer (drawn from it, or
    /// from vertex attributes of a buffer the host says has both usages): what the GPU
    /// planner culls.
    pub(crate) fn instances_readable_as_storage(&self) -> Option<Instances> {
        self.instances.filter(|_| matches!(self.instance_binding, InstanceBinding::StorageBuffer | InstanceBinding::VertexAndStorageBuffer))
    }

    /// The instances when the pick reads them as per-instance vertex attributes.
    pub(crate) fn instances_in_vertex_buffer(&self) -> Option<Instances> {
        self.instances.filter(|_| matches!(self.instance_binding, InstanceBinding::VertexBuffer | InstanceBinding::VertexAndStorageBuffer))
    }

    /// The local bounds culling may use: none when a world-adjust hook or a deformation may
    /// move the surface out of them.
    pub(crate) fn culling_bounds(&self) -> Option<Aabb> {
        let deformation_kept = self.deformation.as_ref().is_none_or(|d| d.bounds_cover_deformation);
        self.bounds.filter(|b| b.is_cullable() && deformation_kept && self.hooks.as_ref().is_none_or(DrawHooks::keeps_bounds))
    }

    /// Whether the draw's registered geometry can prove a sure hit (an occluder): read as three
    /// f32s, a triangle list, and no hook (a hook may discard the fragment).
    pub(crate) fn proves_hits(&self) -> bool {
        self.geometry.is_some() && self.hooks.is_none() && self.position_format == PositionFormat::Float32x3 && self.raster.topology == Topology::TriangleList
    }

    /// Number of instances the draw renders (1 when not instanced).
    pub fn instance_count(&self) -> u32 {
        self.instances.map_or(1, |i| i.count)
    }
}

/// A mesh as engines commonly store it: one interleaved vertex buffer with the position at
/// `position_offset` in each vertex, and one index buffer. [`IndexedMesh::draw`] describes one
/// submesh's indexed draw in a single call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexedMesh {
    /// The whole vertex buffer (or the range the host binds).
    pub vertices: BufferRange,
    /// Bytes per vertex.
    pub stride: u32,
    /// Byte offset of the three `f32` position components within a vertex.
    pub position_offset: u32,
    /// The whole index buffer (or the range the host binds).
    pub indices: BufferRange,
    /// Index type.
    pub index_width: IndexWidth,
}

impl IndexedMesh {
    /// The pickable draw `vkCmdDrawIndexed(index_count, 1, first_index, vertex_offset, 0)`
    /// of this mesh, for object `id`.
    pub fn draw(&self, id: ObjectId, first_index: u32, index_count: u32, vertex_offset: i32) -> PickDraw {
        let offset = u64::from(self.position_offset);
        let size = self.vertices.size.saturating_sub(offset);
        let vertex_count = if size < 12 || self.stride == 0 { 0 } else { (size - 12) / u64::from(self.stride) + 1 };
        let positions = Positions {
            range: BufferRange { buffer: self.vertices.buffer, offset: self.vertices.offset.saturating_add(offset), size },
            stride: self.stride,
            vertex_count: u32::try_from(vertex_count).unwrap_or(u32::MAX),
        };
        let triangles = Triangles::Indexed { range: self.indices, width: self.index_width, first_index, index_count, vertex_offset };
        PickDraw::new(id, positions, triangles)
    }
}
