//! The scene on the GPU: vertex/index buffers per primitive, one buffer of world matrices
//! (a slot per node, grouped per object), the draws the lit pass records, and the `PickDraw`s
//! handed to the picker each frame, built once: the picker reads the same buffers, no copies.

use crate::objects::{ObjectKind, ObjectTable};
use crate::pick_report::HitReport;
use crate::scene::{Primitive, Scene};
use crate::shapes;
use ash::vk;
use glam::{Mat4, Vec3};
use picking_vk::{BufferRange, IndexWidth, Instances, MeshGeometry, PickDraw, Positions, Triangles};
use picking_vk_context::{ContextError, HostBuffer, VulkanContext};
use std::sync::Arc;

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

    pub fn positions(&self) -> Positions {
        Positions { range: BufferRange { buffer: self.positions.buffer, offset: 0, size: self.positions.size }, stride: 12, vertex_count: self.vertex_count }
    }
}

/// One lit-pass draw: a primitive over a run of world-matrix slots.
#[derive(Clone, Copy, Debug)]
pub struct RenderDraw {
    pub primitive: usize,
    pub first_slot: u32,
    pub slot_count: u32,
}

pub struct GpuScene {
    pub primitives: Vec<GpuPrimitive>,
    pub worlds: HostBuffer,
    pub slot_count: u32,
    pub render_draws: Vec<RenderDraw>,
    /// Shared, so the picker can keep a culling hierarchy over them (`Picker::record_shared`).
    pub pick_draws: Arc<[PickDraw]>,
    /// World-matrix slot of each scene node that draws a mesh.
    pub node_slot: Vec<Option<u32>>,
    /// Marker meshes: a ball for the picked point, a thin rod for its normal.
    pub marker_ball: GpuPrimitive,
    pub marker_rod: GpuPrimitive,
}

impl GpuScene {
    pub fn new(ctx: &VulkanContext, scene: &Scene, objects: &ObjectTable) -> Result<Self, ContextError> {
        let mut primitives = vec![];
        let mut mesh_prims = vec![];
        for mesh in &scene.meshes {
            let first = primitives.len();
            for p in &mesh.primitives {
                primitives.push(GpuPrimitive::upload(ctx, p)?);
            }
            mesh_prims.push(first..primitives.len());
        }
        let mut worlds: Vec<Mat4> = vec![];
        let mut node_slot = vec![None; scene.nodes.len()];
        let mut render_draws = vec![];
        let mut pick_draws = vec![];
        let mut object_slots = vec![];
        for object in &objects.objects {
            let first_slot = worlds.len() as u32;
            let nodes: Vec<usize> = match &object.kind {
                ObjectKind::Node(n) => vec![*n],
                ObjectKind::Instanced { nodes, .. } => nodes.clone(),
            };
            for &n in &nodes {
                node_slot[n] = Some(worlds.len() as u32);
                worlds.push(scene.nodes[n].world);
            }
            object_slots.push((first_slot, nodes.len() as u32));
        }
        let worlds_buffer = ctx.upload(&worlds.iter().map(|m| m.to_cols_array()).collect::<Vec<_>>(), vk::BufferUsageFlags::VERTEX_BUFFER)?;
        for (object, &(first_slot, count)) in objects.objects.iter().zip(&object_slots) {
            let Some(mesh) = object.mesh(scene) else { continue };
            for prim in mesh_prims[mesh].clone() {
                render_draws.push(RenderDraw { primitive: prim, first_slot, slot_count: count });
                let gp = &primitives[prim];
                let draw = PickDraw::new(object.id, gp.positions(), gp.triangles()).with_geometry(gp.geometry.clone());
                let draw = match &object.kind {
                    ObjectKind::Node(n) => draw.with_model(scene.nodes[*n].world),
                    ObjectKind::Instanced { nodes, .. } => {
                        let range = BufferRange { buffer: worlds_buffer.buffer, offset: 0, size: worlds_buffer.size };
                        let transforms: Arc<[Mat4]> = nodes.iter().map(|&n| scene.nodes[n].world).collect();
                        draw.with_instances(Instances { range, stride: 64, first: first_slot, count }).with_instance_transforms(transforms)
                    }
                };
                pick_draws.push(draw);
            }
        }
        let marker_ball = GpuPrimitive::upload(ctx, &shapes::sphere(1.0, 12, 16, [1.0, 0.15, 0.1, 1.0]))?;
        let marker_rod = GpuPrimitive::upload(ctx, &shapes::cylinder(1.0, 1.0, 10, [0.1, 0.9, 1.0, 1.0]))?;
        Ok(GpuScene {
            primitives,
            slot_count: worlds.len() as u32,
            worlds: worlds_buffer,
            render_draws,
            pick_draws: pick_draws.into(),
            node_slot,
            marker_ball,
            marker_rod,
        })
    }
}

/// Per-instance flags read by the lit shader.
pub mod flags {
    pub const HOVERED: u32 = 1;
    pub const SELECTED: u32 = 2;
    pub const UNLIT: u32 = 4;
}

/// The picked point and normal drawn in the scene.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Markers {
    pub point: Vec3,
    pub normal: Option<Vec3>,
    /// World-space size of the ball (the rod is 6x as long).
    pub size: f32,
}

impl Markers {
    /// Markers at a hit, sized as `relative_size` of its distance so they read at any zoom.
    pub fn at_hit(hit: &HitReport, relative_size: f32) -> Self {
        Markers { point: hit.world.as_vec3(), normal: hit.normal().map(|n| n.as_vec3()), size: (hit.distance as f32 * relative_size).max(1e-4) }
    }

    /// World matrices of the ball and the rod.
    pub fn matrices(&self) -> [Mat4; 2] {
        let ball = Mat4::from_scale_rotation_translation(Vec3::splat(self.size), glam::Quat::IDENTITY, self.point);
        let n = self.normal.unwrap_or(Vec3::Y);
        let rod = Mat4::from_scale_rotation_translation(
            Vec3::new(self.size * 0.25, self.size * 6.0, self.size * 0.25),
            glam::Quat::from_rotation_arc(Vec3::Y, n),
            self.point,
        );
        [ball, rod]
    }
}
