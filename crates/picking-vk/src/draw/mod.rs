//! What the host tells the picker about each draw: its own buffers, never a copy, and
//! optionally CPU geometry and bounds.

pub(crate) mod bounds;
pub(crate) mod contributor;
pub(crate) mod deform;
pub(crate) mod formats;
pub(crate) mod geometry;
pub(crate) mod hooks;
pub(crate) mod indirect;
pub(crate) mod raster;

pub use bounds::Aabb;
pub use contributor::{ContributorContext, ContributorHit, ContributorTarget, PickContributor, CONTRIBUTOR_GLSL};
pub use deform::{DeformPose, Deformation, Influences, JointFormat, MorphTargets, Skin, SkinInfluences, VertexStream, WeightFormat};
pub use formats::{InstanceBinding, InstanceFormat, PositionFormat};
pub use geometry::MeshGeometry;
pub use hooks::{AttributeFormat, AttributeStream, DrawHooks, HookAttribute, HookProgram, HookSource, Interpolation, HOOK_SET};
pub(crate) use indirect::DrawLimits;
pub use indirect::IndirectDraws;
pub use raster::{DepthBias, PrimitiveKind, RasterState, Topology};

use crate::error::PickError;
use crate::id::ObjectId;
use ash::vk;
use glam::Mat4;
use std::sync::Arc;

/// A byte range of a host-owned buffer. `size` lets the picker check counts against it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferRange {
    /// The host's buffer.
    pub buffer: vk::Buffer,
    /// Where the range starts, in bytes.
    pub offset: vk::DeviceSize,
    /// How many bytes from `offset` the picker may read.
    pub size: vk::DeviceSize,
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
    /// Bytes from one matrix to the next (at least 64).
    pub stride: u32,
    /// First element read (`firstInstance`).
    pub first: u32,
    /// Instances drawn.
    pub count: u32,
}

/// One pickable draw of the host's scene for one frame.
#[derive(Clone, Debug)]
pub struct PickDraw {
    /// The object this draw belongs to. Several draws may share an ID (a mesh with several
    /// primitives is one object); instances are told apart by their index, not by the ID.
    pub id: ObjectId,
    /// The host's own value for this draw (its index in the host's list, a submesh key...),
    /// reported back in [`crate::PickHit::tag`] whatever was culled. 0 unless set.
    pub tag: u64,
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
    /// CPU copy of the per-instance transforms (`[i]` for instance `i` of the draw), for
    /// world-space detail results and per-instance culling of instanced draws.
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
    /// Run-time GLSL the pick pass runs for this draw (see [`HookProgram`]).
    pub hooks: Option<DrawHooks>,
    /// The host's indirect commands, when it draws this indirectly (see [`IndirectDraws`]).
    pub indirect: Option<IndirectDraws>,
    /// Skinning and morph targets the pick pass applies (see [`Deformation`]).
    pub deformation: Option<Deformation>,
}

impl PickDraw {
    /// A pickable, non-instanced draw with an identity model matrix.
    pub fn new(id: ObjectId, positions: Positions, triangles: Triangles) -> Self {
        PickDraw {
            id,
            tag: 0,
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

    /// The local bounds culling may use: none when a world-adjust hook or a deformation may
    /// move the surface out of them.
    pub(crate) fn culling_bounds(&self) -> Option<Aabb> {
        let deformation_kept = self.deformation.as_ref().is_none_or(|d| d.bounds_cover_deformation);
        self.bounds.filter(|_| deformation_kept && self.hooks.as_ref().is_none_or(DrawHooks::keeps_bounds))
    }

    /// Number of instances the draw renders (1 when not instanced).
    pub fn instance_count(&self) -> u32 {
        self.instances.map_or(1, |i| i.count)
    }

    /// Checks the elements a direct draw reads against the position and index buffers.
    fn validate_elements(&self, p: &Positions) -> Result<(), String> {
        match self.triangles {
            Triangles::NonIndexed { first_vertex, vertex_count } => {
                if !raster::primitive_count(self.raster.topology, vertex_count).1 {
                    return Err(format!("vertex count {vertex_count} is not a whole number of {:?} primitives", self.raster.topology));
                }
                if u64::from(first_vertex) + u64::from(vertex_count) > u64::from(p.vertex_count) {
                    return Err(format!(
                        "vertices {first_vertex}..{} exceed the {} vertices of the position buffer",
                        u64::from(first_vertex) + u64::from(vertex_count),
                        p.vertex_count
                    ));
                }
            }
            Triangles::Indexed { range, width, first_index, index_count, vertex_offset } => {
                if !raster::primitive_count(self.raster.topology, index_count).1 {
                    return Err(format!("index count {index_count} is not a whole number of {:?} primitives", self.raster.topology));
                }
                if range.offset % width.bytes() != 0 {
                    return Err(format!("index buffer offset {} is not a multiple of {}", range.offset, width.bytes()));
                }
                let w = width.bytes() as u32;
                check_elements(range, w, u64::from(w), first_index, index_count, "index")?;
                // A negative offset is legal (indices may be stored above it); one at or past
                // the vertex count leaves no index that names a vertex.
                if i64::from(vertex_offset) >= i64::from(p.vertex_count) {
                    return Err(format!("vertex offset {vertex_offset} lies past the {} vertices", p.vertex_count));
                }
            }
        }
        Ok(())
    }

    /// Checks everything that can be checked without reading GPU memory, against the
    /// device's largest vertex binding stride, in O(1): it runs for every draw of every
    /// frame. (CPU instance transforms that are not finite are not refused: culling then keeps
    /// every instance of the draw.) Index values themselves cannot be checked: the
    /// host guarantees that every index plus `vertex_offset` names one of the positions.
    pub(crate) fn validate(&self, index: usize, limits: &DrawLimits) -> Result<(), PickError> {
        let max_stride = limits.max_stride;
        let bad = |reason: String| PickError::InvalidDraw { index, reason };
        if !self.model.is_finite() {
            return Err(bad("model matrix has a non-finite element".into()));
        }
        if self.raster.primitive_restart && self.raster.topology.is_list() {
            return Err(bad("primitive restart with list topologies needs primitiveTopologyListRestart, which picking does not enable".into()));
        }
        let (line, point) = (self.raster.line_width, self.raster.point_size);
        if !(line.is_finite() && line > 0.0 && point.is_finite() && point > 0.0) {
            return Err(bad(format!("line width {line} and point size {point} must be positive")));
        }
        if self.raster.depth_bias.is_some_and(|b| ![b.constant, b.clamp, b.slope].iter().all(|v| v.is_finite())) {
            return Err(bad("depth bias has a non-finite value".into()));
        }
        let p = &self.positions;
        let (size, component) = (self.position_format.bytes(), self.position_format.component_bytes());
        if p.stride < size || p.stride > max_stride {
            return Err(bad(format!("position stride {} lies outside {size}..={max_stride} bytes (maxVertexInputBindingStride)", p.stride)));
        }
        // Vertex attribute addresses must be multiples of their components' size.
        if !p.range.offset.is_multiple_of(u64::from(component)) || !p.stride.is_multiple_of(component) {
            return Err(bad(format!("position offset {} and stride {} must be multiples of {component} bytes", p.range.offset, p.stride)));
        }
        check_elements(p.range, p.stride, u64::from(size), 0, p.vertex_count, "position").map_err(bad)?;
        if let Some(indirect) = &self.indirect {
            // The commands name the elements: only the index buffer binding can be checked.
            if let Triangles::Indexed { range, width, .. } = self.triangles {
                if range.offset % width.bytes() != 0 {
                    return Err(bad(format!("index buffer offset {} is not a multiple of {}", range.offset, width.bytes())));
                }
            }
            indirect.validate(matches!(self.triangles, Triangles::Indexed { .. }), limits).map_err(bad)?;
        } else {
            self.validate_elements(p).map_err(bad)?;
        }
        let storage = self.instances.is_some() && self.instance_binding == InstanceBinding::StorageBuffer;
        if storage && self.hooks.is_some() {
            return Err(bad("instance transforms in a storage buffer do not combine with hooks yet".into()));
        }
        if let Some(inst) = self.instances {
            let size = self.instance_format.bytes();
            if storage && inst.range.offset.saturating_add(inst.range.size) > u64::from(limits.max_storage_range) {
                return Err(bad(format!(
                    "the instance storage buffer's first {} bytes exceed maxStorageBufferRange ({})",
                    inst.range.offset.saturating_add(inst.range.size),
                    limits.max_storage_range
                )));
            }
            // Vertex input strides are limited; a storage buffer's are not.
            let max_stride = if storage { u32::MAX } else { max_stride };
            if inst.stride < size || inst.stride > max_stride {
                return Err(bad(format!(
                    "instance stride {} lies outside {size}..={max_stride} bytes (one transform; maxVertexInputBindingStride)",
                    inst.stride
                )));
            }
            if !inst.range.offset.is_multiple_of(4) || !inst.stride.is_multiple_of(4) {
                return Err(bad(format!("instance offset {} and stride {} must be multiples of 4 bytes", inst.range.offset, inst.stride)));
            }
            if inst.first.checked_add(inst.count).is_none() {
                return Err(bad(format!("instances {}..+{} overflow firstInstance", inst.first, inst.count)));
            }
            check_elements(inst.range, inst.stride, u64::from(size), inst.first, inst.count, "instance").map_err(bad)?;
            if let Some(t) = self.instance_transforms.as_ref().filter(|t| t.len() < inst.count as usize) {
                return Err(bad(format!("{} CPU instance transforms for {} instances", t.len(), inst.count)));
            }
        }
        if let Some(hooks) = &self.hooks {
            hooks.validate(self.positions.vertex_count, max_stride).map_err(bad)?;
        }
        if let Some(deformation) = &self.deformation {
            if !limits.deformation {
                return Err(bad(format!("deformed draws need {} bytes of push constants (maxPushConstantsSize)", crate::draw::deform::DEFORM_PUSH_BYTES)));
            }
            if self.instances.is_some() || self.hooks.is_some() {
                return Err(bad("deformed draws do not combine with instances or hooks yet".into()));
            }
            deformation.validate(self.positions.vertex_count, max_stride, limits.max_storage_range).map_err(bad)?;
        }
        Ok(())
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
            range: BufferRange { buffer: self.vertices.buffer, offset: self.vertices.offset + offset, size },
            stride: self.stride,
            vertex_count: u32::try_from(vertex_count).unwrap_or(u32::MAX),
        };
        let triangles = Triangles::Indexed { range: self.indices, width: self.index_width, first_index, index_count, vertex_offset };
        PickDraw::new(id, positions, triangles)
    }
}

/// Checks that elements `first..first + count` of `element_size` bytes at `stride` fit in `range`.
fn check_elements(range: BufferRange, stride: u32, element_size: u64, first: u32, count: u32, what: &str) -> Result<(), String> {
    if range.buffer == vk::Buffer::null() {
        return Err(format!("{what} buffer is null"));
    }
    if count == 0 {
        return Ok(());
    }
    let last = u64::from(first) + u64::from(count) - 1;
    let end = last * u64::from(stride) + element_size;
    if end > range.size {
        return Err(format!("{what} elements {first}..{} need {end} bytes but the buffer range holds {}", last + 1, range.size));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ash::vk::Handle;

    fn buffer(size: u64) -> BufferRange {
        BufferRange { buffer: vk::Buffer::from_raw(1), offset: 0, size }
    }

    fn tri_draw() -> PickDraw {
        let positions = Positions { range: buffer(36), stride: 12, vertex_count: 3 };
        PickDraw::new(ObjectId::new(7).unwrap(), positions, Triangles::NonIndexed { first_vertex: 0, vertex_count: 3 })
    }

    #[test]
    fn a_consistent_draw_passes() {
        tri_draw().validate(0, &DrawLimits::stride(2048)).unwrap();
    }

    #[test]
    fn counts_past_the_buffer_are_refused() {
        let mut d = tri_draw();
        d.positions.vertex_count = 4; // 48 bytes wanted, 36 held
        assert!(matches!(d.validate(3, &DrawLimits::stride(2048)), Err(PickError::InvalidDraw { index: 3, .. })));
        let mut d = tri_draw();
        d.triangles = Triangles::NonIndexed { first_vertex: 1, vertex_count: 3 };
        assert!(d.validate(0, &DrawLimits::stride(2048)).is_err());
        let mut d = tri_draw();
        d.triangles = Triangles::Indexed { range: buffer(12), width: IndexWidth::U32, first_index: 1, index_count: 3, vertex_offset: 0 };
        assert!(d.validate(0, &DrawLimits::stride(2048)).is_err(), "indices 1..4 need 16 bytes");
    }

    #[test]
    fn non_finite_model_and_bad_strides_are_refused() {
        let d = tri_draw().with_model(Mat4::from_translation(glam::Vec3::new(f32::NAN, 0.0, 0.0)));
        assert!(d.validate(0, &DrawLimits::stride(2048)).is_err());
        let mut d = tri_draw();
        d.positions.stride = 8;
        assert!(d.validate(0, &DrawLimits::stride(2048)).is_err());
        let d = tri_draw().with_instances(Instances { range: buffer(128), stride: 64, first: 1, count: 2 });
        assert!(d.validate(0, &DrawLimits::stride(2048)).is_err(), "instances 1..3 need 192 bytes");
    }

    #[test]
    fn an_indexed_mesh_draw_covers_its_interleaved_vertices() {
        // 10 vertices of 32 bytes, the position 12 bytes in.
        let mesh = IndexedMesh { vertices: buffer(320), stride: 32, position_offset: 12, indices: buffer(60), index_width: IndexWidth::U16 };
        let d = mesh.draw(ObjectId::new(3).unwrap(), 6, 9, 2).with_tag(77);
        assert_eq!((d.positions.range.offset, d.positions.range.size, d.positions.vertex_count), (12, 308, 10));
        assert_eq!(d.tag, 77);
        d.validate(0, &DrawLimits::stride(2048)).unwrap();
        assert!(mesh.draw(ObjectId::new(3).unwrap(), 27, 6, 0).validate(0, &DrawLimits::stride(2048)).is_err(), "indices 27..33 need 66 bytes");
    }

    #[test]
    fn instance_counts_offsets_and_strides_are_checked() {
        let inst = Instances { range: buffer(64 * 4), stride: 64, first: 0, count: 4 };
        let d = tri_draw().with_instances(inst);
        d.validate(0, &DrawLimits::stride(2048)).unwrap();
        let short: Arc<[Mat4]> = vec![Mat4::IDENTITY; 3].into();
        assert!(d.clone().with_instance_transforms(short).validate(0, &DrawLimits::stride(2048)).is_err(), "fewer CPU transforms than instances");
        let overflow = tri_draw().with_instances(Instances { first: u32::MAX, count: 2, ..inst });
        assert!(overflow.validate(0, &DrawLimits::stride(2048)).is_err());
        assert!(d.validate(0, &DrawLimits::stride(63)).is_err(), "stride past the device limit");
        let mut misaligned = tri_draw();
        misaligned.positions.range.offset = 2;
        assert!(misaligned.validate(0, &DrawLimits::stride(2048)).is_err(), "positions must be 4-byte aligned");
        // A negative vertex offset is legal; one past the vertices is not.
        let mut d = tri_draw();
        d.triangles = Triangles::Indexed { range: buffer(12), width: IndexWidth::U32, first_index: 0, index_count: 3, vertex_offset: -2 };
        d.validate(0, &DrawLimits::stride(2048)).unwrap();
        d.triangles = Triangles::Indexed { range: buffer(12), width: IndexWidth::U32, first_index: 0, index_count: 3, vertex_offset: 3 };
        assert!(d.validate(0, &DrawLimits::stride(2048)).is_err());
    }
}
