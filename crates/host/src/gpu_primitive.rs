//! One primitive on the GPU: its vertex, index and deformation buffers, its material, its
//! CPU geometry for detail picking, and the `PickDraw` and raster state the picker reads it
//! with (masked materials through a discard hook on the lit pass's own texture set).

use ash::vk;
use picking_vk::{
    draw::BufferRange, draw::IndexWidth, draw::MeshGeometry, draw::Positions, draw::RasterState, draw::Topology, draw::Triangles, ObjectId, PickDraw,
};
use picking_vk_context::{ContextError, HostBuffer, VulkanContext};
use std::sync::Arc;

use crate::mesh::Primitive;

/// One primitive's buffers (tight `vec3` positions and normals, `vec2` UVs (zeros when it has
/// none), `vec4` vertex colours where it has them, optional u32 indices), its material, and its
/// CPU geometry for detail picking.
pub struct GpuPrimitive {
    pub positions: HostBuffer,
    pub normals: HostBuffer,
    pub uvs: HostBuffer,
    /// `None`: the lit pass binds [`GpuScene::white_colors`] instead.
    pub colors: Option<HostBuffer>,
    /// A masked primitive with vertex colours: per vertex its UV and colour alpha (`u, v, a,
    /// 0`), the attribute of its pick discard hook.
    pub mask_attribute: Option<HostBuffer>,
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
    /// Skin influences, per vertex and set: four u16 joints, then four f32 weights (24 bytes a
    /// set), read as vertex attributes by the picker and as words by the lit pass.
    pub skin: Option<HostBuffer>,
    /// Sets of four influences in `skin` (0 to 2).
    pub skin_sets: u32,
    /// Morph target deltas, three f32 per vertex, target after target.
    pub morph: Option<HostBuffer>,
    pub target_count: u32,
    pub topology: Topology,
}

/// Bytes of one set of skin influences in [`GpuPrimitive::skin`].
pub const SKIN_SET_BYTES: u32 = 24;

impl GpuPrimitive {
    /// Uploads `p`, refused where its attributes do not all hold a value per vertex or an
    /// index names no vertex (the lit pass would read past its buffers).
    pub fn upload(ctx: &VulkanContext, p: &Primitive) -> Result<Self, ContextError> {
        check(p)?;
        let usage = vk::BufferUsageFlags::VERTEX_BUFFER;
        let positions = ctx.upload(&p.positions, usage)?;
        let normals = ctx.upload(&p.normals, usage)?;
        let uvs = match &p.uvs {
            Some(uvs) => ctx.upload(uvs, usage)?,
            None => ctx.upload(&vec![[0f32; 2]; p.positions.len().max(1)], usage)?,
        };
        let colors = p.colors.as_ref().map(|c| ctx.upload(&c.iter().map(|c| c.to_array()).collect::<Vec<_>>(), usage)).transpose()?;
        let mask_attribute = match (&p.colors, p.alpha_cutoff) {
            (Some(colors), Some(_)) => {
                let uv = |v: usize| p.uvs.as_ref().and_then(|uvs| uvs.get(v)).map_or([0.0; 2], |uv| uv.to_array());
                let words: Vec<[f32; 4]> = colors.iter().enumerate().map(|(v, c)| [uv(v)[0], uv(v)[1], c.w, 0.0]).collect();
                Some(ctx.upload(&words, usage)?)
            }
            _ => None,
        };
        let indices = p.indices.as_ref().map(|ix| ctx.upload(ix, vk::BufferUsageFlags::INDEX_BUFFER)).transpose()?;
        let geometry = Arc::new(MeshGeometry {
            positions: p.positions.clone(),
            normals: Some(p.normals.clone()),
            uvs: p.uvs.clone(),
            indices: p.indices.clone(),
            skin: p.skin.clone(),
            morph_targets: p.morph_targets.clone(),
        });
        let deform_usage = vk::BufferUsageFlags::VERTEX_BUFFER | vk::BufferUsageFlags::STORAGE_BUFFER;
        let skin = (!p.skin.is_empty())
            .then(|| {
                let words: Vec<u32> = (0..p.positions.len())
                    .flat_map(|v| {
                        p.skin.iter().flat_map(move |set| {
                            let j = set.joints[v];
                            let w = set.weights[v];
                            [u32::from(j[0]) | u32::from(j[1]) << 16, u32::from(j[2]) | u32::from(j[3]) << 16].into_iter().chain(w.map(f32::to_bits))
                        })
                    })
                    .collect();
                ctx.upload(&words, deform_usage)
            })
            .transpose()?;
        let morph = (!p.morph_targets.is_empty())
            .then(|| ctx.upload(&p.morph_targets.iter().flatten().flat_map(|d| d.to_array()).collect::<Vec<f32>>(), vk::BufferUsageFlags::STORAGE_BUFFER))
            .transpose()?;
        Ok(GpuPrimitive {
            positions,
            normals,
            uvs,
            colors,
            mask_attribute,
            indices,
            count: p.indices.as_ref().map_or(p.positions.len(), Vec::len) as u32,
            vertex_count: p.positions.len() as u32,
            color: p.color,
            texture: p.texture,
            alpha_cutoff: p.alpha_cutoff,
            single_sided: p.single_sided,
            geometry,
            skin,
            skin_sets: p.skin.len() as u32,
            morph,
            target_count: p.morph_targets.len() as u32,
            topology: p.topology,
        })
    }

    /// Whether the primitive is skinned or morphed.
    pub fn deformable(&self) -> bool {
        self.skin.is_some() || self.morph.is_some()
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
    /// culls as the lit pass does (see [`RenderDraw::mirrored`]); a masked primitive with a
    /// texture or vertex colours gets [`GpuScene::pick_draw`]'s discard hook on top of this.
    pub fn pick_draw(&self, id: ObjectId, mirrored: bool) -> PickDraw {
        let draw = PickDraw::new(id, self.positions(), self.triangles()).with_geometry(self.geometry.clone()).with_raster(self.raster(mirrored));
        // A mask its colour alone fails hides the whole primitive.
        draw.with_pickable(!(self.masked_by_hook().is_none() && self.alpha_cutoff.is_some_and(|c| self.color[3] < c)))
    }

    /// For a masked primitive whose alpha varies over it (a texture, vertex colours): the
    /// cutoff, and whether its vertex colours take part.
    pub(crate) fn masked_by_hook(&self) -> Option<(f32, bool)> {
        let cutoff = self.alpha_cutoff?;
        (self.texture.is_some() || self.mask_attribute.is_some()).then_some((cutoff, self.mask_attribute.is_some()))
    }

    /// Culling and winding as the lit pass draws the primitive: glTF's counter-clockwise front
    /// faces stay counter-clockwise on screen (the viewer's projection keeps the image
    /// upright), and turn clockwise under a mirroring (negative determinant) world matrix.
    pub fn raster(&self, mirrored: bool) -> RasterState {
        if self.topology != Topology::TriangleList {
            return RasterState::default().with_topology(self.topology, false).with_thickness(1.0, crate::mesh::POINT_SIZE);
        }
        if !self.single_sided {
            return RasterState::default();
        }
        let front_face = if mirrored { vk::FrontFace::CLOCKWISE } else { vk::FrontFace::COUNTER_CLOCKWISE };
        RasterState::default().with_culling(vk::CullModeFlags::BACK, front_face)
    }
}

/// What [`GpuPrimitive::upload`] refuses: attributes of other lengths than the positions, and
/// indices past them.
fn check(p: &Primitive) -> Result<(), ContextError> {
    let n = p.positions.len();
    let lengths = [("normals", Some(p.normals.len())), ("uvs", p.uvs.as_ref().map(Vec::len)), ("colours", p.colors.as_ref().map(Vec::len))];
    let skins = p.skin.iter().flat_map(|s| [("skin joints", Some(s.joints.len())), ("skin weights", Some(s.weights.len()))]);
    let targets = p.morph_targets.iter().map(|t| ("morph deltas", Some(t.len())));
    if let Some((what, len)) = lengths.into_iter().chain(skins).chain(targets).find_map(|(w, l)| l.filter(|&l| l != n).map(|l| (w, l))) {
        return Err(ContextError::Invalid(format!("{len} {what} for {n} positions")));
    }
    if let Some(i) = p.indices.iter().flatten().find(|&&i| i as usize >= n) {
        return Err(ContextError::Invalid(format!("index {i} names no vertex of {n}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn attributes_of_other_lengths_and_indices_past_the_vertices_are_refused() {
        let good = crate::shapes::sphere(1.0, 4, 6, [1.0; 4]);
        assert!(check(&good).is_ok());
        let mut short = good.clone();
        short.normals.pop();
        assert!(check(&short).unwrap_err().to_string().contains("normals"));
        let mut past = good.clone();
        let n = past.positions.len() as u32;
        past.indices = Some(vec![0, 1, n]);
        assert!(check(&past).unwrap_err().to_string().contains(&format!("index {n}")));
        let mut targets = good;
        targets.morph_targets = vec![vec![glam::Vec3::ZERO; 2]];
        assert!(check(&targets).unwrap_err().to_string().contains("morph deltas"));
    }
}
