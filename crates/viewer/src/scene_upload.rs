//! The viewer's scene on the GPU: each object of the [`ObjectTable`] gets world-matrix slots
//! (one for a node, a run for an instanced object), and the lit pass's draws and the picker's
//! draws are built once over the same buffers. The GPU pieces are the host crate's.

use crate::objects::{ObjectKind, ObjectTable};
use crate::pick_report::PickReport;
use crate::scene::Scene;
use glam::Mat4;
use picking_vk_context::{ContextError, VulkanContext};
use picking_vk_host::{GpuPrimitive, GpuScene, RenderDraw};
use std::sync::Arc;

pub struct UploadedScene {
    pub gpu: GpuScene,
    /// World-matrix slot of each scene node that draws a mesh.
    pub node_slot: Vec<Option<u32>>,
}

impl UploadedScene {
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
        let mut gpu = GpuScene::new(ctx, primitives, &worlds, &scene.textures)?;
        let mut pick_draws = vec![];
        for (object, &(first_slot, count)) in objects.objects.iter().zip(&object_slots) {
            let Some(mesh) = object.mesh(scene) else { continue };
            // Instanced objects group nodes of one handedness (see `ObjectTable::new`).
            let mirrored = scene.nodes[object.first_node()].world.determinant() < 0.0;
            for prim in mesh_prims[mesh].clone() {
                gpu.render_draws.push(RenderDraw { primitive: prim, first_slot, slot_count: count, mirrored });
                // The tag names the primitive within its mesh (for the panel's UV and texel).
                let draw = gpu.pick_draw(prim, object.id, mirrored).with_tag((prim - mesh_prims[mesh].start) as u64);
                let draw = match &object.kind {
                    ObjectKind::Node(n) => draw.with_model(scene.nodes[*n].world),
                    ObjectKind::Instanced { nodes, .. } => {
                        let transforms: Arc<[Mat4]> = nodes.iter().map(|&n| scene.nodes[n].world).collect();
                        draw.with_instances(gpu.instances(first_slot, count)).with_instance_transforms(transforms)
                    }
                };
                pick_draws.push(draw);
            }
        }
        gpu.pick_draws = pick_draws.into();
        Ok(UploadedScene { gpu, node_slot })
    }

    /// The world-matrix slot of a reported hit's node (what the lit pass highlights).
    pub fn slot_of(&self, report: Option<&PickReport>) -> Option<u32> {
        self.slot_of_node(report.and_then(|r| r.hit.as_ref()).and_then(|h| h.scene_node))
    }

    /// The world-matrix slot of a scene node (an index into `Scene::nodes`), if it draws.
    pub fn slot_of_node(&self, scene_node: Option<usize>) -> Option<u32> {
        scene_node.and_then(|n| self.node_slot.get(n).copied().flatten())
    }
}
