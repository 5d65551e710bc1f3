//! How the viewer turns scene nodes into pickable objects, and pick IDs back into nodes.
//! Each mesh node is its own object (all its primitives share the ID), except that nodes
//! sharing one mesh many times become a single instanced object whose instance index names
//! the node, as an engine would batch them. Only nodes that do not mirror (a positive
//! determinant) are batched, so an instanced object's front faces all wind one way.

use crate::scene::Scene;
use picking_vk::ObjectId;
use std::collections::HashMap;

/// Meshes used by at least this many nodes are drawn instanced.
pub const INSTANCING_THRESHOLD: usize = 8;

/// Instanced objects get IDs above this, so they never collide with node IDs.
const INSTANCED_ID_BASE: u64 = 1 << 40;
/// Billboard `i` (of `Scene::billboards`) is ID `BILLBOARD_ID_BASE + i`, drawn by the
/// billboard contributor.
pub const BILLBOARD_ID_BASE: u64 = 1 << 41;
/// A node the loader made, drawn on its own, is ID `LOADER_NODE_ID_BASE` + its index in
/// `Scene::nodes`: its file node's ID is not its alone. Such nodes are an EXT_mesh_gpu_instancing
/// instance, and the part of a far-flung mesh that one of its primitives became
/// (`gltf_load::rebase::split_far_primitives`): each part is its own object.
const LOADER_NODE_ID_BASE: u64 = 1 << 42;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ObjectKind {
    /// One node (index into `Scene::nodes`).
    Node(usize),
    /// Several nodes drawing `mesh`; instance `i` is `nodes[i]`.
    Instanced { mesh: usize, nodes: Vec<usize> },
}

#[derive(Clone, Debug)]
pub struct SceneObject {
    pub id: ObjectId,
    pub kind: ObjectKind,
}

impl SceneObject {
    pub fn mesh(&self, scene: &Scene) -> Option<usize> {
        match &self.kind {
            ObjectKind::Node(n) => scene.nodes[*n].mesh,
            ObjectKind::Instanced { mesh, .. } => Some(*mesh),
        }
    }

    /// The scene node of an instance (or the node itself).
    pub fn node(&self, instance: Option<u32>) -> Option<usize> {
        match (&self.kind, instance) {
            (ObjectKind::Node(n), _) => Some(*n),
            (ObjectKind::Instanced { nodes, .. }, Some(i)) => nodes.get(i as usize).copied(),
            (ObjectKind::Instanced { .. }, None) => None,
        }
    }

    /// The object's node, or its first instance's.
    pub fn first_node(&self) -> usize {
        match &self.kind {
            ObjectKind::Node(n) => *n,
            ObjectKind::Instanced { nodes, .. } => nodes.first().copied().unwrap_or_default(),
        }
    }

    pub fn node_count(&self) -> usize {
        match &self.kind {
            ObjectKind::Node(_) => 1,
            ObjectKind::Instanced { nodes, .. } => nodes.len(),
        }
    }
}

/// All objects of a scene and the way back from an ID.
#[derive(Clone, Debug, Default)]
pub struct ObjectTable {
    pub objects: Vec<SceneObject>,
    by_id: HashMap<ObjectId, usize>,
}

impl ObjectTable {
    pub fn new(scene: &Scene) -> Self {
        let mut uses: HashMap<usize, Vec<usize>> = HashMap::new();
        for (i, node) in scene.nodes.iter().enumerate() {
            // Skinned and morphed nodes have a pose of their own: never batched.
            let deformed = node.skin.is_some() || !node.default_weights.is_empty();
            if let Some(m) = node.mesh.filter(|_| node.world.determinant() > 0.0 && !deformed) {
                uses.entry(m).or_default().push(i);
            }
        }
        let mut objects = vec![];
        // File node IDs given out: a second node of one glTF node is one the loader made.
        let mut file_ids = std::collections::HashSet::new();
        let mut grouped: Vec<usize> = uses.iter().filter(|(_, n)| n.len() >= INSTANCING_THRESHOLD).map(|(m, _)| *m).collect();
        grouped.sort_unstable();
        for (i, node) in scene.nodes.iter().enumerate() {
            let Some(m) = node.mesh else { continue };
            let deformed = node.skin.is_some() || !node.default_weights.is_empty();
            if grouped.binary_search(&m).is_err() || node.world.determinant() <= 0.0 || deformed {
                // glTF node index + 1: IDs are stable across runs and never 0.
                let file_id = node.gltf_index as u64 + 1;
                let id = match node.gpu_instance {
                    None if file_ids.insert(file_id) => file_id,
                    _ => LOADER_NODE_ID_BASE + i as u64,
                };
                let id = ObjectId::new(id).unwrap_or_else(|_| unreachable!("index + 1 > 0, and the base > 0"));
                objects.push(SceneObject { id, kind: ObjectKind::Node(i) });
            }
        }
        for m in grouped {
            let id = ObjectId::new(INSTANCED_ID_BASE + m as u64).unwrap_or_else(|_| unreachable!("base > 0"));
            objects.push(SceneObject { id, kind: ObjectKind::Instanced { mesh: m, nodes: uses[&m].clone() } });
        }
        let by_id = objects.iter().enumerate().map(|(i, o)| (o.id, i)).collect();
        ObjectTable { objects, by_id }
    }

    pub fn get(&self, id: ObjectId) -> Option<&SceneObject> {
        self.by_id.get(&id).map(|&i| &self.objects[i])
    }
}
