//! What the viewer says about a rectangle query (box selection): each object and instance
//! found, named by the scene (glTF node and name), with its pixel count, nearest depth and a
//! representative pixel. Shared by the window's selection panel and the headless JSON.

use crate::objects::ObjectTable;
use crate::scene::Scene;
use picking_vk::{results::RectResult, RectMode};
use serde_json::{json, Value};

/// One object (and instance) of a rectangle query.
#[derive(Clone, Debug, PartialEq)]
pub struct RectEntry {
    pub id: u64,
    /// Index into `Scene::nodes`.
    pub scene_node: Option<usize>,
    /// The glTF node index.
    pub node: Option<usize>,
    pub node_name: Option<String>,
    pub instance: Option<u32>,
    /// The EXT_mesh_gpu_instancing instance of the glTF node, when it is instanced so.
    pub gpu_instance: Option<u32>,
    /// Pixels where it is nearest (`Visible`), or fragments it produced (`All`).
    pub pixels: u64,
    pub depth: f32,
    pub pixel: [u32; 2],
}

/// A rectangle query's answer, named by the scene.
#[derive(Clone, Debug, PartialEq)]
pub struct RectReport {
    /// Half-open: `[x0, y0, x1, y1]`, clipped to the view.
    pub rect: [u32; 4],
    pub mode: RectMode,
    pub objects: Vec<RectEntry>,
}

pub fn mode_name(mode: RectMode) -> &'static str {
    match mode {
        RectMode::Visible => "visible",
        RectMode::All => "all",
    }
}

impl RectReport {
    pub fn new(result: &RectResult, scene: &Scene, objects: &ObjectTable) -> Self {
        let entries = result
            .objects
            .iter()
            .map(|o| {
                let scene_node = objects.get(o.id).and_then(|s| s.node(o.instance));
                let node = scene_node.and_then(|n| scene.nodes.get(n));
                RectEntry {
                    id: o.id.get(),
                    scene_node,
                    node: node.map(|n| n.gltf_index),
                    node_name: node.and_then(|n| n.name.clone()),
                    instance: o.instance,
                    gpu_instance: node.and_then(|n| n.gpu_instance),
                    pixels: o.pixels,
                    depth: o.depth,
                    pixel: o.pixel.to_array(),
                }
            })
            .collect();
        let r = result.rect;
        RectReport { rect: [r.min.x, r.min.y, r.max.x, r.max.y], mode: result.mode, objects: entries }
    }

    /// `{"rect": [...], "mode": ..., "objects": [{"id", "node", "node_name", "instance",
    /// "pixels", "depth", "pixel": [x, y]}, ...]}`, and `gpu_instance` for an object that is
    /// an EXT_mesh_gpu_instancing instance.
    pub fn to_json(&self) -> Value {
        let objects: Vec<Value> = self
            .objects
            .iter()
            .map(|o| {
                let mut v = json!({
                    "id": o.id,
                    "node": o.node,
                    "node_name": o.node_name,
                    "instance": o.instance,
                    "pixels": o.pixels,
                    "depth": o.depth,
                    "pixel": o.pixel,
                });
                if let Some(k) = o.gpu_instance {
                    v["gpu_instance"] = json!(k);
                }
                v
            })
            .collect();
        json!({ "rect": self.rect, "mode": mode_name(self.mode), "objects": objects })
    }
}
