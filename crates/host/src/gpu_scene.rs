//! Meshes on the GPU, read in place by the lit pass and by the picker: vertex and index
//! buffers per primitive, one buffer of world matrices (a slot per placed copy), the
//! textures and their descriptor sets, the lit pass's draws over runs of slots, and the
//! `PickDraw`s handed to the picker each frame. No copies: the picker reads the same buffers
//! the lit pass draws from, and masked materials are picked through a discard hook that
//! samples the lit pass's own texture set.

use ash::vk;
use glam::Mat4;
use picking_vk::{
    AttributeFormat, AttributeStream, BufferRange, DrawHooks, HookAttribute, HookProgram, HookSource, IndexWidth, Instances, Interpolation, MeshGeometry,
    ObjectId, PickDraw, Positions, RasterState, Triangles,
};
use picking_vk_context::{ContextError, HostBuffer, Texture, TextureSets, VulkanContext};
use std::sync::Arc;

use crate::material::{SamplerDesc, TextureData};
use crate::mesh::Primitive;

/// One primitive's buffers (tight `vec3` positions and normals, `vec2` UVs (zeros when it has
/// none), optional u32 indices), its material, and its CPU geometry for detail picking.
pub struct GpuPrimitive {
    pub positions: HostBuffer,
    pub normals: HostBuffer,
    pub uvs: HostBuffer,
    pub indices: Option<HostBuffer>,
    /// Indices (indexed) or vertices (non-indexed) to draw.
    pub count: u32,
    pub vertex_count: u32,
    pub color: [f32; 4],
    /// Index into the scene's textures (`None`: untextured).
    pub texture: Option<usize>,
    pub alpha_cutoff: Option<f32>,
    pub single_sided: bool,
    pub geometry: Arc<MeshGeometry>,
}

impl GpuPrimitive {
    pub fn upload(ctx: &VulkanContext, p: &Primitive) -> Result<Self, ContextError> {
        let usage = vk::BufferUsageFlags::VERTEX_BUFFER;
        let positions = ctx.upload(&p.positions, usage)?;
        let normals = ctx.upload(&p.normals, usage)?;
        let uvs = match &p.uvs {
            Some(uvs) => ctx.upload(uvs, usage)?,
            None => ctx.upload(&vec![[0f32; 2]; p.positions.len().max(1)], usage)?,
        };
        let indices = p.indices.as_ref().map(|ix| ctx.upload(ix, vk::BufferUsageFlags::INDEX_BUFFER)).transpose()?;
        let geometry = Arc::new(MeshGeometry {
            positions: p.positions.clone(),
            normals: Some(p.normals.clone()),
            uvs: p.uvs.clone(),
            indices: p.indices.clone(),
            ..Default::default()
        });
        Ok(GpuPrimitive {
            positions,
            normals,
            uvs,
            indices,
            count: p.indices.as_ref().map_or(p.positions.len(), Vec::len) as u32,
            vertex_count: p.positions.len() as u32,
            color: p.color,
            texture: p.texture,
            alpha_cutoff: p.alpha_cutoff,
            single_sided: p.single_sided,
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
    /// detail results and culling bounds); the caller adds the model matrix or instances. It
    /// culls as the lit pass does (see [`RenderDraw::mirrored`]); a masked, textured primitive
    /// gets [`GpuScene::pick_draw`]'s discard hook instead of this.
    pub fn pick_draw(&self, id: ObjectId, mirrored: bool) -> PickDraw {
        let draw = PickDraw::new(id, self.positions(), self.triangles()).with_geometry(self.geometry.clone()).with_raster(self.raster(mirrored));
        // A mask its colour alone fails hides the whole primitive.
        draw.with_pickable(!(self.texture.is_none() && self.alpha_cutoff.is_some_and(|c| self.color[3] < c)))
    }

    /// Culling and winding as the lit pass draws the primitive: glTF's counter-clockwise front
    /// faces stay counter-clockwise on screen (the viewer's projection keeps the image
    /// upright), and turn clockwise under a mirroring (negative determinant) world matrix.
    pub fn raster(&self, mirrored: bool) -> RasterState {
        if !self.single_sided {
            return RasterState::default();
        }
        let front_face = if mirrored { vk::FrontFace::CLOCKWISE } else { vk::FrontFace::COUNTER_CLOCKWISE };
        RasterState { cull_mode: vk::CullModeFlags::BACK, front_face, ..RasterState::default() }
    }
}

/// One lit-pass draw: a primitive over a run of world-matrix slots (one instance per slot).
#[derive(Clone, Copy, Debug)]
pub struct RenderDraw {
    pub primitive: usize,
    pub first_slot: u32,
    pub slot_count: u32,
    /// The slots' world matrices mirror (negative determinant): front faces wind the other way.
    pub mirrored: bool,
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
    /// A set per texture, after a first set with a white texel (untextured primitives): the
    /// lit pass and the pick hooks bind the same set.
    pub texture_sets: TextureSets,
    /// Dropped after the sets that name them.
    _textures: Vec<Texture>,
    /// Discard hooks of masked materials, one per (cutoff, colour alpha).
    mask_programs: Vec<((u32, u32), Arc<HookProgram>)>,
}

impl GpuScene {
    /// `primitives` with `worlds` uploaded as the slot buffer and `textures` as sampled
    /// images; no draws yet.
    pub fn new(ctx: &VulkanContext, primitives: Vec<GpuPrimitive>, worlds: &[Mat4], textures: &[TextureData]) -> Result<Self, ContextError> {
        let columns: Vec<[f32; 16]> = worlds.iter().map(Mat4::to_cols_array).collect();
        let worlds_buffer = ctx.upload(&columns, vk::BufferUsageFlags::VERTEX_BUFFER)?;
        let white = TextureData { rgba: vec![255; 4], width: 1, height: 1, sampler: SamplerDesc::default() };
        let mut uploaded = vec![];
        for t in std::iter::once(&white).chain(textures) {
            uploaded.push(ctx.upload_texture(&t.rgba, t.width, t.height, vk::Format::R8G8B8A8_SRGB, &t.sampler.create_info())?);
        }
        let texture_sets = ctx.texture_sets(&uploaded.iter().collect::<Vec<_>>())?;
        Ok(GpuScene {
            primitives,
            worlds: worlds_buffer,
            slot_count: worlds.len() as u32,
            render_draws: vec![],
            pick_draws: Arc::new([]),
            texture_sets,
            _textures: uploaded,
            mask_programs: vec![],
        })
    }

    /// The descriptor set the lit pass samples primitive `p`'s base colour through.
    pub fn texture_set(&self, p: &GpuPrimitive) -> vk::DescriptorSet {
        self.texture_sets.sets[p.texture.map_or(0, |t| t + 1).min(self.texture_sets.sets.len() - 1)]
    }

    /// The pick draw of primitive `index` as object `id` ([`GpuPrimitive::pick_draw`]): a
    /// masked, textured primitive gets a discard hook that samples its texture through the
    /// lit pass's set with its UVs and compares with the same cutoff.
    pub fn pick_draw(&mut self, index: usize, id: ObjectId, mirrored: bool) -> PickDraw {
        let p = &self.primitives[index];
        let draw = p.pick_draw(id, mirrored);
        let (Some(cutoff), Some(_)) = (p.alpha_cutoff, p.texture) else { return draw };
        let key = (cutoff.to_bits(), p.color[3].to_bits());
        let program = match self.mask_programs.iter().find(|(k, _)| *k == key) {
            Some((_, program)) => program.clone(),
            None => {
                let program = HookProgram::new(HookSource {
                    name: format!("alpha mask {cutoff}"),
                    shared: "layout(set = 1, binding = 0) uniform sampler2D base_colour;\n".into(),
                    discard: Some(format!(
                        "bool pick_discard(PickFragment f) {{\n    return {:?} * texture(base_colour, f.attrib.xy).a < {:?};\n}}\n",
                        p.color[3], cutoff
                    )),
                    world: None,
                    attribute: Some(HookAttribute { format: AttributeFormat::Float32x2, interpolation: Interpolation::Smooth }),
                    set_layout: self.texture_sets.layout,
                });
                self.mask_programs.push((key, program.clone()));
                program
            }
        };
        let p = &self.primitives[index];
        let uvs = AttributeStream { range: BufferRange { buffer: p.uvs.buffer, offset: 0, size: p.uvs.size }, stride: 8, vertex_count: p.vertex_count };
        let set = self.texture_set(p);
        draw.with_hooks(DrawHooks::new(program).with_attribute(uvs).with_descriptor_set(set))
    }

    /// Slots `first..first + count` of the world buffer as a pick draw's instances.
    pub fn instances(&self, first: u32, count: u32) -> Instances {
        Instances { range: BufferRange { buffer: self.worlds.buffer, offset: 0, size: self.worlds.size }, stride: 64, first, count }
    }
}
