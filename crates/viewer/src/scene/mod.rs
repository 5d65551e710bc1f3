//! The viewer's CPU scene: meshes of triangle primitives (the host crate's [`Primitive`]), a
//! flattened node list with world transforms and glTF node indices, an optional camera, and
//! what poses it over time: the node hierarchy's local transforms, skins and animations
//! (see [`crate::animation`]).

mod derived;
mod extent;
mod keyframes;

pub use derived::{PrimitiveReach, SourceFaces};
use glam::{DVec3, Mat4, Vec3};
pub use keyframes::{Animation, Channel, Interpolation, NodeTransform, Property, Skin};
use picking_vk_host::{Primitive, TextureData};

/// A glTF mesh: the primitives it draws.
#[derive(Clone, Debug, Default)]
pub struct MeshAsset {
    pub name: Option<String>,
    pub primitives: Vec<Primitive>,
    /// Default morph target weights (glTF `mesh.weights`; zeros when absent).
    pub weights: Vec<f32>,
    /// Per primitive, where the loader split its triangles near the camera: each triangle's
    /// source in the file (see [`crate::gltf_load::refine`]); empty or `None` when unsplit.
    pub source_faces: Vec<Option<SourceFaces>>,
    /// The index of its first primitive in the file's mesh: 0, but for a far-off primitive
    /// the loader gave a mesh of its own (`gltf_load::rebase::split_far_primitives`).
    pub first_primitive: u32,
}

impl MeshAsset {
    /// Morph targets its primitives have (the same number in each).
    pub fn target_count(&self) -> usize {
        self.primitives.first().map_or(0, |p| p.morph_targets.len())
    }
}

/// A node of the scene, flattened: `world` is its transform at the current pose.
#[derive(Clone, Debug, Default)]
pub struct Node {
    /// Index in the glTF file's node array.
    pub gltf_index: usize,
    pub name: Option<String>,
    pub world: Mat4,
    pub mesh: Option<usize>,
    /// The parent's index in `Scene::nodes` (parents come before their children).
    pub parent: Option<usize>,
    /// The transform relative to the parent, as the file gives it (animations replace parts).
    pub local: NodeTransform,
    /// The skin (index into `Scene::skins`) that deforms this node's mesh.
    pub skin: Option<usize>,
    /// Morph weights at the current pose (empty: the mesh has no targets).
    pub weights: Vec<f32>,
    /// Morph weights when no animation sets them (the node's, else the mesh's, else zeros).
    pub default_weights: Vec<f32>,
    /// Which EXT_mesh_gpu_instancing instance of its file node (`gltf_index`, the parent) this
    /// node draws; `None` for the file's own nodes.
    pub gpu_instance: Option<u32>,
}

/// A camera-facing square drawn at a node's position through the picker's contributor seam:
/// a glTF node with `"extras": {"picking_vk_billboard": {"size": S, "color": [r, g, b, a]}}`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SceneBillboard {
    /// Index into `Scene::nodes`.
    pub node: usize,
    /// The node's world translation in the scene's frame (set by `animation::pose`): not
    /// `Node::world`'s, which carries the shift of a far-off mesh the node also draws.
    pub centre: glam::Vec3,
    pub size: f32,
    pub color: [f32; 4],
}

/// A perspective camera placed in the world.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CameraDesc {
    pub world: Mat4,
    pub lens: Lens,
    pub znear: f32,
    /// `None`: infinite far plane (perspective cameras only).
    pub zfar: Option<f32>,
}

/// How a camera projects, as glTF describes its two kinds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Lens {
    /// `yfov` in radians; `aspect`: the file's `aspectRatio` (`None`: the view's).
    Perspective { yfov: f32, aspect: Option<f32> },
    /// Half the view's width and height in the camera's units (glTF `xmag`, `ymag`): the
    /// view stretches them over whatever shape it has, as glTF's matrix does.
    Orthographic { xmag: f32, ymag: f32 },
}

impl Lens {
    pub fn is_perspective(&self) -> bool {
        matches!(self, Lens::Perspective { .. })
    }
}

impl std::fmt::Display for Lens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Lens::Perspective { yfov, .. } => write!(f, "yfov {yfov}"),
            Lens::Orthographic { xmag, ymag } => write!(f, "xmag {xmag}, ymag {ymag}"),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Scene {
    pub meshes: Vec<MeshAsset>,
    /// World transforms relative to `origin`.
    pub nodes: Vec<Node>,
    /// Placed relative to `origin`.
    pub camera: Option<CameraDesc>,
    /// Base colour textures, which primitives name by index.
    pub textures: Vec<TextureData>,
    /// Where the scene's frame sits in the file's world (f64): zero for scenes near the
    /// origin, the scene's centre for far-off ones (georeferenced data at 1e5 to 1e6), so
    /// that everything rendered and picked stays in small f32 coordinates. Reported points
    /// add it back.
    pub origin: DVec3,
    /// Per mesh: the shift its positions were re-centred by (zero near the origin).
    pub mesh_shift: Vec<DVec3>,
    pub skins: Vec<Skin>,
    pub animations: Vec<Animation>,
    /// Per mesh, per primitive: what bounds its deformed vertices (for the meshes a skin or
    /// morph targets deform), measured at load so that every pose is checked cheaply.
    pub deformed_reach: Vec<Vec<PrimitiveReach>>,
    /// The first camera's node (index into `nodes`), posed with the rest.
    pub camera_node: Option<usize>,
    pub billboards: Vec<SceneBillboard>,
    /// The real paths of the files the scene's buffers and images were read from (outputs
    /// must not overwrite them).
    pub files: Vec<std::path::PathBuf>,
    /// What the last pose ([`crate::animation::pose`]) could not place within f32's range:
    /// it kept the last good transform there, which the file's pose does not give.
    pub pose_fault: Option<PoseFault>,
}

/// A part of a pose past f32's range, by the file's index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoseFault {
    /// A node that draws (a mesh or a billboard).
    Node(usize),
    /// The camera's node.
    Camera(usize),
    /// A skin's joint matrices.
    Skin(usize),
}

impl Scene {
    /// The nodes that draw each mesh, in node order.
    pub fn mesh_users(&self) -> Vec<Vec<usize>> {
        self.nodes_by(self.meshes.len(), |n| n.mesh)
    }

    /// The nodes each skin deforms, in node order.
    pub fn skin_users(&self) -> Vec<Vec<usize>> {
        self.nodes_by(self.skins.len(), |n| n.skin)
    }

    /// The nodes grouped by `key` (`groups` groups; keys past them are left out), in one walk.
    fn nodes_by(&self, groups: usize, key: impl Fn(&Node) -> Option<usize>) -> Vec<Vec<usize>> {
        let mut users = vec![vec![]; groups];
        for (n, node) in self.nodes.iter().enumerate() {
            if let Some(list) = key(node).and_then(|k| users.get_mut(k)) {
                list.push(n);
            }
        }
        users
    }

    /// World-space bounds of every mesh node: of each vertex transformed by its node's world.
    pub fn bounds(&self) -> (Vec3, Vec3) {
        let mut lo = Vec3::splat(f32::INFINITY);
        let mut hi = Vec3::splat(f32::NEG_INFINITY);
        // Shared by every tree search: past it, boxes that hold the points (`extent`).
        let mut leaves = extent::FRAMING_LEAVES;
        for (mesh, users) in self.meshes.iter().zip(self.mesh_users()) {
            let worlds = users.iter().map(|&n| &self.nodes[n].world);
            let points = mesh.primitives.iter().map(|p| p.positions.len()).sum();
            if extent::worth_a_tree(points, users.len()) {
                let Some(tree) = extent::PointTree::new(mesh.primitives.iter().flat_map(|p| p.positions.iter().copied()).collect()) else { continue };
                for world in worlds {
                    let (l, h) = tree.bounds(world, &mut leaves);
                    (lo, hi) = (lo.min(l), hi.max(h));
                }
                continue;
            }
            for world in worlds {
                for p in mesh.primitives.iter().flat_map(|p| &p.positions) {
                    let w = world.transform_point3(*p);
                    lo = lo.min(w);
                    hi = hi.max(w);
                }
            }
        }
        if lo.x > hi.x {
            (Vec3::splat(-1.0), Vec3::splat(1.0))
        } else {
            (lo, hi)
        }
    }

    /// Whether anything moves over time.
    pub fn animated(&self) -> bool {
        self.animations.iter().any(|a| !a.channels.is_empty())
    }

    pub fn node_name(&self, node: usize) -> Option<&str> {
        self.nodes.get(node).and_then(|n| n.name.as_deref())
    }
}
