//! Checking a draw against its buffers and the device before anything is recorded: counts,
//! strides and offsets, instances, hooks, indirect commands and deformations. A bad draw is a
//! [`PickError::InvalidDraw`] naming it and the cause.

use super::*;

impl PickDraw {
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
                // the vertex count leaves no index that names a vertex, as do no vertices.
                if index_count > 0 && p.vertex_count == 0 {
                    return Err(format!("{index_count} indices into a position range of no vertices"));
                }
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
        let bad = |reason: String| PickError::InvalidDraw { index, reason };
        if !self.model.is_finite() {
            return Err(bad("model matrix has a non-finite element".into()));
        }
        self.validate_raster().map_err(bad)?;
        self.validate_positions(limits).map_err(bad)?;
        self.validate_instances(limits).map_err(bad)?;
        if let Some(hooks) = &self.hooks {
            hooks.validate(self.positions.vertex_count, limits.max_stride).map_err(bad)?;
        }
        if let Some(deformation) = &self.deformation {
            if !limits.deformation {
                return Err(bad(format!("deformed draws need {} bytes of push constants (maxPushConstantsSize)", crate::draw::deform::DEFORM_PUSH_BYTES)));
            }
            if self.instances.is_some() {
                return Err(bad("deformed draws do not combine with instances yet".into()));
            }
            deformation.validate(self.positions.vertex_count, limits.max_stride, limits.max_storage_range).map_err(bad)?;
        }
        Ok(())
    }

    /// The raster state: what picking enables, finite sizes and bias, known enum values.
    fn validate_raster(&self) -> Result<(), String> {
        let r = &self.raster;
        if r.primitive_restart && r.topology.is_list() {
            return Err("primitive restart with list topologies needs primitiveTopologyListRestart, which picking does not enable".into());
        }
        let (line, point) = (r.line_width, r.point_size);
        if !(line.is_finite() && line > 0.0 && point.is_finite() && point > 0.0) {
            return Err(format!("line width {line} and point size {point} must be positive"));
        }
        if r.depth_bias.is_some_and(|b| ![b.constant, b.clamp, b.slope].iter().all(|v| v.is_finite())) {
            return Err("depth bias has a non-finite value".into());
        }
        if r.depth_bias.is_some_and(|b| b.clamp != 0.0) {
            return Err("a depth bias clamp needs depthBiasClamp, which picking does not enable".into());
        }
        let compare_known = r.depth_compare.is_none_or(|op| (vk::CompareOp::NEVER.as_raw()..=vk::CompareOp::ALWAYS.as_raw()).contains(&op.as_raw()));
        if !compare_known || !r.culling.is_none_or(|c| c.is_known()) {
            return Err(format!("unknown raster state: depth compare {:?}, culling {:?}", r.depth_compare, r.culling));
        }
        Ok(())
    }

    /// The position stream, and the elements the draw (or its indirect commands) reads.
    fn validate_positions(&self, limits: &DrawLimits) -> Result<(), String> {
        let (p, max_stride) = (&self.positions, limits.max_stride);
        let (size, component) = (self.position_format.bytes(), self.position_format.component_bytes());
        if p.stride < size || p.stride > max_stride {
            return Err(format!("position stride {} lies outside {size}..={max_stride} bytes (maxVertexInputBindingStride)", p.stride));
        }
        // Vertex attribute addresses must be multiples of their components' size.
        if !p.range.offset.is_multiple_of(u64::from(component)) || !p.stride.is_multiple_of(component) {
            return Err(format!("position offset {} and stride {} must be multiples of {component} bytes", p.range.offset, p.stride));
        }
        check_elements(p.range, p.stride, u64::from(size), 0, p.vertex_count, "position")?;
        let Some(indirect) = &self.indirect else { return self.validate_elements(p) };
        // The commands name the elements: only the index buffer binding can be checked.
        if let Triangles::Indexed { range, width, .. } = self.triangles {
            if range.buffer == vk::Buffer::null() {
                return Err("index buffer is null".into());
            }
            range.check_size("index")?;
            if range.offset % width.bytes() != 0 {
                return Err(format!("index buffer offset {} is not a multiple of {}", range.offset, width.bytes()));
            }
        }
        indirect.validate(matches!(self.triangles, Triangles::Indexed { .. }), limits)
    }

    /// The instance buffer (vertex input or storage) and the CPU transforms beside it.
    fn validate_instances(&self, limits: &DrawLimits) -> Result<(), String> {
        let Some(inst) = self.instances else {
            // A host that forgot `with_instances` would otherwise get a plain draw.
            return match &self.instance_transforms {
                Some(t) => Err(format!("{} instance_transforms but no instances (PickDraw::with_instances)", t.len())),
                None => Ok(()),
            };
        };
        let storage = self.instances_in_storage().is_some();
        let readable = self.instances_readable_as_storage().is_some();
        let size = self.instance_format.bytes();
        if readable && inst.range.offset.saturating_add(inst.range.size) > u64::from(limits.max_storage_range) {
            return Err(format!(
                "the instance storage buffer's first {} bytes exceed maxStorageBufferRange ({})",
                inst.range.offset.saturating_add(inst.range.size),
                limits.max_storage_range
            ));
        }
        // Vertex input strides are limited; a storage buffer's are not.
        let max_stride = if storage { u32::MAX } else { limits.max_stride };
        if inst.stride < size || inst.stride > max_stride {
            return Err(format!("instance stride {} lies outside {size}..={max_stride} bytes (one transform; maxVertexInputBindingStride)", inst.stride));
        }
        if !inst.range.offset.is_multiple_of(4) || !inst.stride.is_multiple_of(4) {
            return Err(format!("instance offset {} and stride {} must be multiples of 4 bytes", inst.range.offset, inst.stride));
        }
        if readable && inst.range.size == 0 {
            return Err("the instance storage range is empty".into());
        }
        if inst.first.checked_add(inst.count).is_none() {
            return Err(format!("instances {}..+{} overflow firstInstance", inst.first, inst.count));
        }
        check_elements(inst.range, inst.stride, u64::from(size), inst.first, inst.count, "instance")?;
        // One transform per instance drawn, `[i]` for instance i (buffer element first + i): a
        // longer list (a mirror of the whole buffer, say) would cull by the wrong boxes.
        if let Some(t) = self.instance_transforms.as_ref().filter(|t| t.len() != inst.count as usize) {
            return Err(format!(
                "{} CPU instance transforms for {} instances: give exactly one per instance drawn, [i] for buffer element first + i ({} + i)",
                t.len(),
                inst.count,
                inst.first
            ));
        }
        Ok(())
    }
}

/// Checks that elements `first..first + count` of `element_size` bytes at `stride` fit in `range`.
fn check_elements(range: BufferRange, stride: u32, element_size: u64, first: u32, count: u32, what: &str) -> Result<(), String> {
    if range.buffer == vk::Buffer::null() {
        return Err(format!("{what} buffer is null"));
    }
    range.check_size(what)?;
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
        let d = tri_draw().with_instance_transforms(vec![Mat4::IDENTITY].into());
        assert!(d.validate(0, &DrawLimits::stride(2048)).is_err(), "instance transforms without instances");
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
        let exact: Arc<[Mat4]> = vec![Mat4::IDENTITY; 4].into();
        d.clone().with_instance_transforms(exact).validate(0, &DrawLimits::stride(2048)).unwrap();
        // A mirror of a whole buffer drawn from `first = 3`: the boxes would be off by three.
        let whole: Arc<[Mat4]> = vec![Mat4::IDENTITY; 7].into();
        let from_three = tri_draw().with_instances(Instances { range: buffer(64 * 7), stride: 64, first: 3, count: 4 }).with_instance_transforms(whole);
        assert!(from_three.validate(0, &DrawLimits::stride(2048)).is_err(), "more CPU transforms than instances");
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
        // A storage buffer of instances binds a descriptor range, which may not be empty.
        let empty =
            tri_draw().with_instances(Instances { range: buffer(0), stride: 64, first: 0, count: 0 }).with_instance_binding(InstanceBinding::StorageBuffer);
        assert!(empty.validate(0, &DrawLimits::stride(2048)).is_err());
        // Vertex attributes the planner may read as storage: a vertex stride, and a storage
        // range within the device's.
        let both = tri_draw()
            .with_instances(Instances { range: buffer(256), stride: 64, first: 0, count: 4 })
            .with_instance_binding(InstanceBinding::VertexAndStorageBuffer);
        both.validate(0, &DrawLimits::stride(2048)).unwrap();
        assert!(both.validate(0, &DrawLimits::stride(32)).is_err(), "a vertex binding's stride limit");
        let small = DrawLimits { max_storage_range: 128, ..DrawLimits::stride(2048) };
        assert!(both.validate(0, &small).is_err(), "the storage range limit");
    }

    #[test]
    fn whole_size_ranges_are_refused_by_name() {
        let limits = DrawLimits::stride(2048);
        let whole = BufferRange { buffer: vk::Buffer::from_raw(1), offset: 0, size: vk::WHOLE_SIZE };
        let mut d = tri_draw();
        d.positions.range = whole;
        let err = d.validate(0, &limits).unwrap_err().to_string();
        assert!(err.contains("WHOLE_SIZE"), "{err}");
        let instanced = tri_draw().with_instances(Instances { range: whole, stride: 64, first: 0, count: 1 });
        assert!(instanced.validate(0, &limits).is_err(), "instances in a WHOLE_SIZE range");
        let storage = instanced.clone().with_instance_binding(InstanceBinding::StorageBuffer);
        assert!(storage.validate(0, &limits).is_err(), "a WHOLE_SIZE storage descriptor range");
        let indirect = IndirectDraws { commands: whole, stride: 16, max_draw_count: 1, count: None };
        assert!(tri_draw().with_indirect(indirect).validate(0, &limits).is_err(), "indirect commands in a WHOLE_SIZE range");
        let wraps = BufferRange { buffer: vk::Buffer::from_raw(1), offset: u64::MAX - 4, size: 36 };
        let mut d = tri_draw();
        d.positions.range = wraps;
        assert!(d.validate(0, &limits).is_err(), "a range ending past 2^64");
    }

    #[test]
    fn raster_state_the_pipeline_cannot_take_is_refused() {
        let limits = DrawLimits::stride(2048);
        let with = |raster: RasterState| tri_draw().with_raster(raster).validate(0, &limits);
        with(RasterState::default().with_depth_bias(crate::draw::DepthBias { constant: 1.0, clamp: 0.0, slope: 1.0 })).unwrap();
        assert!(
            with(RasterState::default().with_depth_bias(crate::draw::DepthBias { constant: 1.0, clamp: 0.5, slope: 1.0 })).is_err(),
            "a clamp needs depthBiasClamp"
        );
        assert!(with(RasterState::default().with_depth_compare(vk::CompareOp::from_raw(8))).is_err());
        assert!(with(RasterState::default().with_culling(vk::CullModeFlags::from_raw(4), vk::FrontFace::CLOCKWISE)).is_err());
        assert!(with(RasterState::default().with_culling(vk::CullModeFlags::BACK, vk::FrontFace::from_raw(2))).is_err());
        with(RasterState::default().with_culling(vk::CullModeFlags::FRONT_AND_BACK, vk::FrontFace::CLOCKWISE)).unwrap();
    }

    #[test]
    fn indirect_draws_need_their_buffers_and_the_device_count_limit() {
        let commands = IndirectDraws { commands: buffer(20 * 8), stride: 20, max_draw_count: 8, count: None };
        let indexed = |indirect: IndirectDraws, index_buffer: vk::Buffer| {
            let mut d = tri_draw().with_indirect(indirect);
            d.triangles = Triangles::Indexed {
                range: BufferRange { buffer: index_buffer, offset: 0, size: 12 },
                width: IndexWidth::U32,
                first_index: 0,
                index_count: 3,
                vertex_offset: 0,
            };
            d
        };
        let limits = DrawLimits::stride(2048);
        indexed(commands, vk::Buffer::from_raw(2)).validate(0, &limits).unwrap();
        assert!(indexed(commands, vk::Buffer::null()).validate(0, &limits).is_err(), "a null index buffer");
        let null_commands = IndirectDraws { commands: BufferRange { buffer: vk::Buffer::null(), ..commands.commands }, ..commands };
        assert!(indexed(null_commands, vk::Buffer::from_raw(2)).validate(0, &limits).is_err());
        let null_count = IndirectDraws { count: Some(BufferRange { buffer: vk::Buffer::null(), offset: 0, size: 4 }), ..commands };
        assert!(indexed(null_count, vk::Buffer::from_raw(2)).validate(0, &limits).is_err());
        let few = DrawLimits { max_draw_indirect_count: 4, ..limits };
        assert!(indexed(commands, vk::Buffer::from_raw(2)).validate(0, &few).is_err(), "8 commands past maxDrawIndirectCount 4");
    }
}
