//! What the viewer says about a pick, for the panel and the headless JSON: the picker's
//! result with the scene's names and glTF node indices attached.

use crate::gltf_load::refine::SourceFaces;
use crate::objects::ObjectTable;
use crate::scene::Scene;
use crate::surface::{self, TexelReport};
use glam::{DVec3, Vec2};
use picking_vk::{results::HitDetail, PickResult};
use picking_vk_host::Markers;
use serde_json::{json, Value};

#[derive(Clone, Debug, PartialEq)]
pub struct PickReport {
    pub x: u32,
    pub y: u32,
    pub hit: Option<HitReport>,
    /// Why there is no result (for example a pixel off the view).
    pub error: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct HitReport {
    pub id: u64,
    /// Index into `Scene::nodes`.
    pub scene_node: Option<usize>,
    /// The glTF node index.
    pub node: Option<usize>,
    pub node_name: Option<String>,
    pub instance: Option<u32>,
    /// The EXT_mesh_gpu_instancing instance of the glTF node, when it is instanced so.
    pub gpu_instance: Option<u32>,
    /// The hit primitive's index in the node's glTF mesh (`None` for a billboard).
    pub mesh_primitive: Option<u32>,
    pub depth: f32,
    /// In the file's world coordinates (the scene's origin added back, in f64).
    pub world: DVec3,
    pub distance: f64,
    pub detail: Option<HitDetail>,
    /// The texture coordinate at the hit (from detail, else a CPU ray cast on the hit's
    /// primitive), when it has UVs.
    pub uv: Option<Vec2>,
    /// The base colour texel that UV reads, when the primitive is textured.
    pub texel: Option<TexelReport>,
    /// The billboard's index, when the billboard contributor drew the hit.
    pub billboard: Option<u64>,
}

impl HitReport {
    /// World normal at the hit: interpolated vertex normal, else the face normal.
    pub fn normal(&self) -> Option<DVec3> {
        let s = self.detail?.surface?;
        s.normal_world.or(s.face_normal_world)
    }

    /// Markers at the hit (in the scene's frame, relative to `origin`), sized as
    /// `relative_size` of its distance so they read at any zoom.
    pub fn markers(&self, relative_size: f32, origin: DVec3) -> Markers {
        let point = (self.world - origin).as_vec3();
        Markers { point, normal: self.normal().map(|n| n.as_vec3()), size: (self.distance as f32 * relative_size).max(1e-4) }
    }
}

/// Names the file's triangle (or segment) in place of the loader's piece of it (see
/// [`crate::gltf_load::refine`]): face, barycentrics and vertices.
fn to_source_face(d: &mut HitDetail, faces: &SourceFaces) {
    // Points are never split; a segment's weights are (1 - t, t, 0), mapped alike.
    if d.primitive == picking_vk::draw::PrimitiveKind::Point {
        return;
    }
    let Some((face, barycentrics, vertices)) = faces.source_of(d.face, d.barycentrics) else { return };
    if let Some((_, gpu, _)) = faces.source_of(d.face, d.gpu_barycentrics) {
        d.gpu_barycentrics = gpu;
    }
    (d.face, d.barycentrics) = (face, barycentrics);
    d.vertices = Some(vertices);
}

impl PickReport {
    pub fn new(result: &PickResult, scene: &Scene, objects: &ObjectTable) -> Self {
        let hit = result.hit.as_ref().map(|h| {
            // A billboard hit names the billboard's node.
            let billboard = h.contributor.and_then(|c| scene.billboards.get(c.local as usize));
            let scene_node = objects.get(h.id).and_then(|o| o.node(h.instance)).or(billboard.map(|b| b.node));
            let node = scene_node.and_then(|n| scene.nodes.get(n));
            // (A billboard's node may draw a mesh too, but the hit is not on it.)
            let mesh = node.filter(|_| billboard.is_none()).and_then(|n| n.mesh).and_then(|m| scene.meshes.get(m));
            // The draw's tag is its primitive's index within the mesh (see `scene_upload`).
            let (uv, texel) = scene_node.map_or((None, None), |n| surface::lookup(scene, n, h.tag as usize, h.detail.as_ref(), result.ray));
            HitReport {
                id: h.id.get(),
                scene_node,
                node: node.map(|n| n.gltf_index),
                node_name: node.and_then(|n| n.name.clone()),
                instance: h.instance,
                gpu_instance: node.and_then(|n| n.gpu_instance),
                mesh_primitive: mesh.map(|m| m.first_primitive + h.tag as u32),
                depth: h.depth,
                world: h.world + scene.origin,
                distance: h.distance,
                // The surface point, like the hit point, in the file's coordinates, on the
                // file's own triangle where the loader split it.
                detail: h.detail.map(|mut d| {
                    if let Some(surface) = d.surface.as_mut() {
                        surface.world_point += scene.origin;
                    }
                    if let Some(faces) = mesh.and_then(|m| m.source_faces.get(h.tag as usize)).and_then(Option::as_ref) {
                        to_source_face(&mut d, faces);
                    }
                    d
                }),
                uv,
                texel,
                billboard: h.contributor.filter(|_| billboard.is_some()).map(|c| c.local),
            }
        });
        PickReport { x: result.pixel.x, y: result.pixel.y, hit, error: None }
    }

    pub fn refused(x: u32, y: u32, why: String) -> Self {
        PickReport { x, y, hit: None, error: Some(why) }
    }

    /// The JSON record: always x, y, hit, id, node, node_name, instance, mesh_primitive, depth, world,
    /// distance; with detail on, face, bary, normal and uv too.
    pub fn to_json(&self, detail_active: bool) -> Value {
        let h = self.hit.as_ref();
        let mut v = json!({
            "x": self.x,
            "y": self.y,
            "hit": h.is_some(),
            "id": h.map(|h| h.id),
            "node": h.and_then(|h| h.node),
            "node_name": h.and_then(|h| h.node_name.clone()),
            "instance": h.and_then(|h| h.instance),
            "mesh_primitive": h.and_then(|h| h.mesh_primitive),
            "depth": h.map(|h| h.depth),
            "world": h.map(|h| h.world.to_array()),
            "distance": h.map(|h| h.distance),
        });
        if let Some(b) = h.and_then(|h| h.billboard) {
            v["billboard"] = json!(b);
        }
        if let Some(k) = h.and_then(|h| h.gpu_instance) {
            v["gpu_instance"] = json!(k);
        }
        if detail_active {
            let d = h.and_then(|h| h.detail);
            v["face"] = json!(d.map(|d| d.face));
            // What `face` counts; for a segment, `bary` is (1 - t, t, 0).
            v["primitive"] = json!(d.map(|d| match d.primitive {
                picking_vk::draw::PrimitiveKind::Triangle => "triangle",
                picking_vk::draw::PrimitiveKind::Segment => "segment",
                picking_vk::draw::PrimitiveKind::Point => "point",
            }));
            v["bary"] = json!(d.map(|d| d.barycentrics));
            v["normal"] = json!(h.and_then(HitReport::normal).map(|n| n.to_array()));
        }
        // The UV (from detail, or the CPU's ray on the hit's primitive) and the texel it reads.
        if let Some(uv) = h.and_then(|h| h.uv) {
            v["uv"] = json!(uv.to_array());
        } else if detail_active {
            v["uv"] = Value::Null;
        }
        if let Some(t) = h.and_then(|h| h.texel) {
            v["texel"] = json!({ "texture": t.texture, "xy": t.xy, "rgba": t.rgba });
        }
        if let Some(e) = &self.error {
            v["error"] = json!(e);
        }
        v
    }
}
