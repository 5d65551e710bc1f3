//! The viewer's scene on the GPU: each object of the [`ObjectTable`] gets world-matrix slots
//! (one for a node, a run for an instanced object), and the lit pass's draws and the picker's
//! draws are built over the same buffers. A moving scene (animations) has one pose region per
//! frame in flight: each frame writes its region and builds its pick draws from it, so a
//! frame never changes what another frame still reads. The GPU pieces are the host crate's.

use crate::objects::{ObjectKind, ObjectTable};
use crate::pick_report::PickReport;
use crate::scene::Scene;
use glam::{Mat4, Vec3};
use picking_vk::{deform::DeformPose, PickDraw};
use picking_vk_context::{ContextError, VulkanContext};
use picking_vk_host::gpu_scene::PoseLayout;
use picking_vk_host::{Billboard, Billboards, GpuPrimitive, GpuScene, RenderDraw};
use std::ops::Range;
use std::sync::Arc;

pub struct UploadedScene {
    pub gpu: GpuScene,
    /// World-matrix slot of each scene node that draws a mesh.
    pub node_slot: Vec<Option<u32>>,
    /// Per scene node with morph targets: its index among the pose's weighted nodes.
    weight_index: Vec<Option<usize>>,
    /// Primitives of each mesh.
    mesh_prims: Vec<Range<usize>>,
    /// The slot runs of each object, in the table's order.
    object_slots: Vec<(u32, u32)>,
}

impl UploadedScene {
    /// Uploads `scene` with `regions` pose regions (1 for a scene that does not move), posed
    /// as it is now in region 0.
    pub fn new(ctx: &VulkanContext, scene: &Scene, objects: &ObjectTable, regions: u32) -> Result<Self, ContextError> {
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
        let mut weight_index = vec![None; scene.nodes.len()];
        let mut weight_counts = vec![];
        for (n, node) in scene.nodes.iter().enumerate() {
            if node.mesh.is_some() && !node.default_weights.is_empty() {
                weight_index[n] = Some(weight_counts.len());
                weight_counts.push(node.default_weights.len() as u32);
            }
        }
        let pose = PoseLayout { regions: regions.max(1), skin_joints: scene.skins.iter().map(|s| s.joints.len() as u32).collect(), weight_counts };
        let mut gpu = GpuScene::with_pose(ctx, primitives, &worlds, &scene.textures, pose)?;
        for (object, &(first_slot, count)) in objects.objects.iter().zip(&object_slots) {
            let Some(mesh) = object.mesh(scene) else { continue };
            // Instanced objects group nodes of one handedness (see `ObjectTable::new`).
            let node = &scene.nodes[object.first_node()];
            for prim in mesh_prims[mesh].clone() {
                // Lines and points are drawn rigid (the lit pass deforms triangles only).
                let deformed = matches!(object.kind, ObjectKind::Node(_)) && gpu.primitives[prim].topology == picking_vk::draw::Topology::TriangleList;
                let skin = node.skin.filter(|_| deformed);
                let mirrored = mirrored(scene, node, skinned_by(&object.kind, node, &gpu.primitives[prim]));
                let weights = weight_index[object.first_node()].filter(|_| deformed);
                gpu.render_draws.push(RenderDraw { primitive: prim, first_slot, slot_count: count, mirrored, skin, weights });
            }
        }
        if !scene.billboards.is_empty() {
            let boards: Vec<Billboard> = scene.billboards.iter().map(|b| Billboard { centre: b.centre, size: b.size, color: b.color }).collect();
            // A place per pose region: playback moves them as it moves the nodes.
            gpu.billboards = Some(Billboards::with_regions(ctx, &boards, crate::objects::BILLBOARD_ID_BASE, regions.max(1))?);
        }
        let mut uploaded = UploadedScene { gpu, node_slot, weight_index, mesh_prims, object_slots };
        // SAFETY: nothing has been submitted with the new buffer.
        unsafe { uploaded.pose(scene, objects, 0) }?;
        Ok(uploaded)
    }

    /// Writes `scene`'s current pose into pose region `region` and builds the pick draws that
    /// read it.
    ///
    /// # Safety
    /// No submitted work that reads region `region` is still running.
    pub unsafe fn pose(&mut self, scene: &Scene, objects: &ObjectTable, region: u32) -> Result<(), ContextError> {
        let mut worlds = vec![Mat4::IDENTITY; self.gpu.slot_count as usize];
        for (n, slot) in self.node_slot.iter().enumerate() {
            if let Some(s) = slot {
                worlds[*s as usize] = scene.nodes[n].world;
            }
        }
        let palettes: Vec<&[Mat4]> = scene.skins.iter().map(|s| s.palette.as_slice()).collect();
        let weighted: Vec<&[f32]> = scene.nodes.iter().zip(&self.weight_index).filter(|(_, k)| k.is_some()).map(|(n, _)| n.weights.as_slice()).collect();
        // SAFETY: the caller's contract.
        unsafe { self.gpu.write_pose(region, &worlds, &palettes, &weighted) }?;
        if let Some(billboards) = self.gpu.billboards.as_mut() {
            let centres: Vec<Vec3> = scene.billboards.iter().map(|b| b.centre).collect();
            // SAFETY: as above.
            unsafe { billboards.place(region, &centres) }?;
        }
        let mut pick_draws = vec![];
        let mut windings = vec![];
        let mut poses = PoseCache::default();
        for (object, &(first_slot, count)) in objects.objects.iter().zip(&self.object_slots) {
            let Some(mesh) = object.mesh(scene) else { continue };
            let node_index = object.first_node();
            let node = &scene.nodes[node_index];
            for prim in self.mesh_prims[mesh].clone() {
                let mirrored = mirrored(scene, node, skinned_by(&object.kind, node, &self.gpu.primitives[prim]));
                windings.push(mirrored);
                // The tag names the primitive within its mesh (for the panel's UV and texel).
                let draw = self.gpu.pick_draw(prim, object.id, mirrored).with_tag((prim - self.mesh_prims[mesh].start) as u64);
                let draw = match &object.kind {
                    ObjectKind::Node(n) => self.deformed(scene, *n, prim, region, draw, &mut poses),
                    ObjectKind::Instanced { nodes, .. } => {
                        let transforms: Arc<[Mat4]> = nodes.iter().map(|&n| scene.nodes[n].world).collect();
                        draw.with_instances(self.gpu.instances(region, first_slot, count)).with_instance_transforms(transforms)
                    }
                };
                pick_draws.push(draw);
            }
        }
        self.gpu.pick_draws = pick_draws.into();
        // The lit pass winds as the pick does in this pose (a skin's joints may all come to
        // mirror mid-animation); its draws follow the same objects and primitives.
        for (draw, mirrored) in self.gpu.render_draws.iter_mut().zip(windings) {
            draw.mirrored = mirrored;
        }
        Ok(())
    }

    /// Node `n`'s pick draw of primitive `prim`: placed by its world, or by its skin's joint
    /// matrices (glTF ignores a skinned node's own transform), morphed by its weights.
    fn deformed(&self, scene: &Scene, n: usize, prim: usize, region: u32, draw: PickDraw, poses: &mut PoseCache) -> PickDraw {
        let node = &scene.nodes[n];
        if self.gpu.primitives[prim].topology != picking_vk::draw::Topology::TriangleList {
            return draw.with_model(node.world);
        }
        let skin = skinned_by(&ObjectKind::Node(n), node, &self.gpu.primitives[prim]);
        let weights = self.weight_index[n];
        // One CPU pose per skin and morphed node, shared by its draws: a skin of many joints
        // is copied once, not once per primitive of every node it moves.
        let pose = poses
            .entry((skin, weights.map(|_| n)))
            .or_insert_with(|| {
                let joint_matrices = skin.and_then(|s| scene.skins.get(s)).map(|s| s.palette.clone()).unwrap_or_default();
                Arc::new(DeformPose { joint_matrices, morph_weights: weights.map(|_| node.weights.clone()).unwrap_or_default() })
            })
            .clone();
        match self.gpu.deformation(prim, region, skin, weights, pose) {
            Some(d) => {
                let model = if d.skin.is_some() { Mat4::IDENTITY } else { node.world };
                draw.with_model(model).with_deformation(d)
            }
            None => draw.with_model(node.world),
        }
    }

    /// Each world-matrix slot's pick key, `[ID low, ID high, instance, 0]` (instance
    /// `0xFFFFFFFF` for an object drawn on its own): what the picker's GPU results name, for
    /// the lit pass's highlights.
    pub fn pick_keys(&self, objects: &ObjectTable) -> Vec<[u32; 4]> {
        let mut keys = vec![[0u32; 4]; self.gpu.slot_count as usize];
        for (object, &(first, count)) in objects.objects.iter().zip(&self.object_slots) {
            let [lo, hi] = object.id.to_words();
            for i in 0..count {
                let instance = match object.kind {
                    ObjectKind::Node(_) => u32::MAX,
                    ObjectKind::Instanced { .. } => i,
                };
                if let Some(key) = keys.get_mut((first + i) as usize) {
                    *key = [lo, hi, instance, 0];
                }
            }
        }
        keys
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

/// The skin that places `prim` as `node` draws it: its node's, for a node drawn on its own
/// whose triangles carry skin influences (lines, points and instanced nodes are drawn rigid).
fn skinned_by(kind: &ObjectKind, node: &crate::scene::Node, prim: &GpuPrimitive) -> Option<usize> {
    let deformable = matches!(kind, ObjectKind::Node(_)) && prim.topology == picking_vk::draw::Topology::TriangleList && prim.skin.is_some();
    node.skin.filter(|_| deformable)
}

/// CPU poses by (skin, morphed node).
type PoseCache = std::collections::HashMap<(Option<usize>, Option<usize>), Arc<DeformPose>>;

/// Whether a node's triangles wind clockwise: glTF makes it the sign of the determinant of
/// the transform that places them. A skinned primitive (`skin`) is placed by its joints, its
/// node's own transform ignored (as glTF specifies), so it is mirrored only when every joint
/// matrix of the pose mirrors.
fn mirrored(scene: &Scene, node: &crate::scene::Node, skin: Option<usize>) -> bool {
    match skin.and_then(|s| scene.skins.get(s)) {
        Some(skin) => !skin.palette.is_empty() && skin.palette.iter().all(|m| m.determinant() < 0.0),
        None => node.world.determinant() < 0.0,
    }
}
