//! Loading glTF 2.0 (.gltf with its buffers, or .glb) into the viewer's [`Scene`]: the node
//! hierarchy flattened to world transforms, every triangle primitive with its material (and
//! the base colour textures they use), and the first camera.
//! Files are untrusted: everything is validated before it is read ([`validate`]), buffer URIs
//! stay inside the scene's folder ([`buffers`]), decoded geometry is held to a budget, and a
//! panic that still escapes the glTF crate becomes an error. Anything malformed is a
//! [`SceneError`] naming the accessor, buffer view, buffer, camera or node at fault.

mod buffers;
mod compressed;
mod extensions;
mod gpu_instancing;
mod materials;
mod parse;
mod precise;
mod primitives;
mod quantized;
pub mod reach;
mod rebase;
pub mod refine;
mod skins;
mod texture_sources;
mod validate;
mod view_checks;

use crate::scene::NodeTransform;
use crate::scene::{CameraDesc, Lens, Node, PoseFault, Scene};
use glam::DMat4;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    #[error("could not read {path}: {reason}")]
    Io { path: String, reason: String },
    #[error("not a valid glTF 2.0 file: {0}")]
    Gltf(#[from] gltf::Error),
    #[error("not a valid GLB file: {0}")]
    Glb(String),
    #[error("buffer {index}: {reason}")]
    Buffer { index: usize, reason: String },
    #[error("the scene is too large: {0}")]
    Budget(String),
    #[error("mesh {mesh} primitive {primitive}: {reason}")]
    BadPrimitive { mesh: usize, primitive: usize, reason: String },
    #[error("accessor {accessor}: {reason}")]
    BadAccessor { accessor: usize, reason: String },
    #[error("node {node}: {reason}")]
    BadNode { node: usize, reason: String },
    #[error("camera {camera}: {reason}")]
    BadCamera { camera: usize, reason: String },
    #[error("image {image}: {reason}")]
    BadImage { image: usize, reason: String },
    #[error("skin {skin}: {reason}")]
    BadSkin { skin: usize, reason: String },
    #[error("animation {animation}: {reason}")]
    BadAnimation { animation: usize, reason: String },
    #[error("asset.version {0:?}: only glTF 2.x is read")]
    Version(String),
    #[error("bufferView {view} ({extension}): {reason}")]
    CompressedView { view: usize, extension: &'static str, reason: String },
    #[error("the file requires {0}, which the viewer does not read")]
    UnreadExtension(String),
    #[error("the file has no triangle meshes to show")]
    Empty,
    #[error("the glTF reader failed on this file ({0}); it is malformed")]
    ReaderPanic(String),
}

/// What loading may read and hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadOptions {
    /// Read buffer URIs outside the scene's folder (absolute paths, `..`, `file://`).
    pub allow_external_uris: bool,
    /// Largest file, total buffer size and decoded geometry, in bytes.
    pub max_bytes: u64,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions { allow_external_uris: false, max_bytes: 1 << 30 }
    }
}

/// `s` with control characters escaped, for messages that reach a terminal.
pub fn printable(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

/// Characters of a file's string (a URI) an error message repeats.
const SHOWN_CHARS: usize = 200;

/// [`printable`], cut to its first [`SHOWN_CHARS`] characters with its length noted where
/// cut: a message naming a megabyte-long URI need not repeat it.
pub fn printable_cut(s: &str) -> String {
    match s.char_indices().nth(SHOWN_CHARS) {
        Some((end, _)) => format!("{}… ({} bytes)", printable(&s[..end]), s.len()),
        None => printable(s),
    }
}

/// The longest name kept from a file, in bytes: names reach every pick record and the panel,
/// so a file's megabyte-long name would be copied into each of them.
pub const MAX_NAME_BYTES: usize = 1024;

/// `name` cut to [`MAX_NAME_BYTES`] at a character boundary, marked with `…` where cut.
pub fn kept_name(name: Option<&str>) -> Option<String> {
    let name = name?;
    if name.len() <= MAX_NAME_BYTES {
        return Some(name.to_owned());
    }
    let cut = (0..=MAX_NAME_BYTES).rev().find(|&i| name.is_char_boundary(i)).unwrap_or(0);
    Some(format!("{}…", &name[..cut]))
}

/// Checks a scene posed at a time as its rest pose was checked at load: an animated node,
/// camera or joint past f32's range (a spline between keys of 3e38 overshoots them) kept its
/// last good transform, which the file's pose does not give; an animated joint or morph weight
/// can carry a deformed mesh past f32's range, where the GPU would drop its triangles from the
/// picture and the picks without an error.
pub fn check_pose(scene: &Scene) -> Result<(), SceneError> {
    const PAST: &str = "past f32's range";
    match scene.pose_fault {
        Some(PoseFault::Node(node)) => return Err(SceneError::BadNode { node, reason: format!("its pose puts it {PAST}") }),
        Some(PoseFault::Camera(node)) => return Err(SceneError::BadNode { node, reason: format!("its pose puts its camera {PAST}") }),
        Some(PoseFault::Skin(skin)) => return Err(SceneError::BadSkin { skin, reason: format!("its pose puts its joint matrices {PAST}") }),
        None => {}
    }
    reach::check(scene)
}

/// Loads a .gltf or .glb file from disk (a regular file within the size budget).
pub fn load_path(path: &Path) -> Result<Scene, SceneError> {
    load_path_with(path, &LoadOptions::default())
}

/// As [`load_path`], with explicit options.
pub fn load_path_with(path: &Path, options: &LoadOptions) -> Result<Scene, SceneError> {
    let shown = printable(&path.display().to_string());
    let io = |reason: String| SceneError::Io { path: shown.clone(), reason };
    let meta = std::fs::metadata(path).map_err(|e| io(e.to_string()))?;
    if !meta.is_file() {
        return Err(io("not a regular file".into()));
    }
    if meta.len() > options.max_bytes {
        return Err(SceneError::Budget(format!("the file has {} bytes, over the limit of {} (--max-scene-bytes)", meta.len(), options.max_bytes)));
    }
    // Read at most the limit: the size is what the file said.
    let bytes = crate::capped_read::read_at_most(path, options.max_bytes).map_err(|e| io(e.to_string()))?;
    if bytes.len() as u64 > options.max_bytes {
        return Err(SceneError::Budget(format!("the file has over {} bytes, the limit (--max-scene-bytes)", options.max_bytes)));
    }
    // A bare file name's folder is the current one.
    let folder = path.parent().map(|p| if p.as_os_str().is_empty() { Path::new(".") } else { p });
    load_bytes_with(&bytes, folder, options)
}

/// Loads glTF from memory; `base` resolves relative buffer URIs (.gltf with a .bin).
pub fn load_bytes(bytes: &[u8], base: Option<&Path>) -> Result<Scene, SceneError> {
    load_bytes_with(bytes, base, &LoadOptions::default())
}

/// As [`load_bytes`], with explicit options. A panic inside the glTF crate that validation
/// did not foresee is caught and reported as [`SceneError::ReaderPanic`].
pub fn load_bytes_with(bytes: &[u8], base: Option<&Path>, options: &LoadOptions) -> Result<Scene, SceneError> {
    quiet_panics_while_loading();
    LOADING.with(|l| l.set(true));
    let result = std::panic::catch_unwind(|| load_unchecked(bytes, base, options));
    LOADING.with(|l| l.set(false));
    result.unwrap_or_else(|panic| {
        let what = panic.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| panic.downcast_ref::<String>().cloned());
        Err(SceneError::ReaderPanic(printable(&what.unwrap_or_else(|| "a panic".into()))))
    })
}

thread_local! {
    /// Set while this thread loads a file: a panic then becomes a [`SceneError`], unprinted.
    static LOADING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Installs, once, a panic hook that stays silent for a thread inside a load and defers to
/// the previous hook everywhere else (other threads' panics print as before).
fn quiet_panics_while_loading() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !LOADING.with(std::cell::Cell::get) {
                previous(info);
            }
        }));
    });
}

fn load_unchecked(bytes: &[u8], base: Option<&Path>, options: &LoadOptions) -> Result<Scene, SceneError> {
    // The container is split here, not by the glTF crate, which refuses chunks of unknown
    // types that glTF says to ignore.
    let (json, blob) = buffers::split_glb(bytes)?;
    parse::arrays_fit(json, options.max_bytes)?;
    let mut root = parse::parse(json, options.max_bytes)?;
    extensions::refuse_unread(&root)?;
    validate::references(&root)?;
    let compression = compressed::Compression::scan(json, &root.extensions_required, options.max_bytes)?;
    // EXT_mesh_gpu_instancing is read here (`gpu_instancing`), from the JSON the glTF crate
    // drops it from; a file must declare it to use it.
    let instancing = [&root.extensions_used, &root.extensions_required].iter().any(|list| list.iter().any(|e| e == gpu_instancing::EXTENSION));
    texture_sources::choose(json, &mut root)?;
    extensions::take_read(&mut root);
    let instanced = if instancing { gpu_instancing::accessors_of_nodes(json)? } else { vec![] };
    // glTF reads an extension only where the file declares it; say so where one is left unread.
    if !instancing && json.windows(gpu_instancing::EXTENSION.len()).any(|w| w == gpu_instancing::EXTENSION.as_bytes()) {
        log::warn!("the file names {} without declaring it in extensionsUsed: its nodes draw their meshes once, at the node", gpu_instancing::EXTENSION);
    }
    let precise = precise::node_transforms(json).map_err(|e| SceneError::Gltf(gltf::Error::Deserialize(e)))?;
    // Buffers are read, and compressed geometry decoded into plain accessors, before the glTF
    // crate validates the document (it refuses accessors whose data a Draco stream holds).
    let mut files = vec![];
    let mut buffers = buffers::load(&root, blob.map(<[u8]>::to_vec), base, options, &compression.fallback_buffers, &mut files)?;
    compression.decode(&mut root, &mut buffers, options.max_bytes)?;
    let document = gltf::Document::from_json(root)?;
    // glTF 1.0 is another format: a file that says so (or needs a later 2.x) is not read as 2.0.
    let asset = &document.as_json().asset;
    if asset.version.split('.').next() != Some("2") || asset.min_version.as_deref().is_some_and(|m| m != "2.0") {
        return Err(SceneError::Version(printable(asset.min_version.as_deref().unwrap_or(&asset.version))));
    }
    let lengths: Vec<usize> = buffers.iter().map(Vec::len).collect();
    let geometry = validate::primitives(&document, &lengths, options)?;
    let structure = validate::structure(&document, geometry, options)?;
    validate::sparse_indices(&document, &buffers)?;
    let mut budget = options.max_bytes.saturating_sub(geometry).saturating_sub(structure);
    let instances = gpu_instancing::read(&document, &instanced, &buffers, &mut budget)?;
    let textures = materials::load_textures(&document, &buffers, base, options, &mut budget)?;
    for camera in document.cameras() {
        view_checks::camera(&document, &camera)?;
    }
    let mut scene = Scene::default();
    for mesh in document.meshes() {
        scene.meshes.push(primitives::load_mesh(&mesh, &buffers, &textures)?);
    }
    scene.textures = textures.data;
    files.extend(textures.files);
    scene.files = files;
    let (worlds, camera) = walk_nodes(&document, &precise, &instances, &mut scene)?;
    let mut node_of = vec![None; document.nodes().len()];
    // The file's nodes, not the instances the loader made for them.
    for (i, node) in scene.nodes.iter().enumerate().filter(|(_, n)| n.gpu_instance.is_none()) {
        node_of[node.gltf_index] = Some(i);
    }
    skins::load_skins(&document, &buffers, &mut scene, &node_of, &mut budget)?;
    skins::load_animations(&document, &buffers, &mut scene, &node_of, &mut budget)?;
    let mut worlds = worlds;
    rebase::split_far_primitives(&mut scene, &mut worlds);
    rebase::place(&mut scene, &worlds, camera);
    crate::animation::pose(&mut scene, None);
    view_checks::check_camera(&scene)?;
    view_checks::check_framing(&scene)?;
    scene.deformed_reach = reach::measure(&scene);
    check_pose(&scene)?;
    // A file without meshes (or whose primitives are all too short to draw anything: strips
    // of two vertices) is refused; a default scene that draws none of them is shown (empty),
    // as glTF allows.
    if !scene.meshes.iter().flat_map(|m| &m.primitives).any(draws_something) {
        return Err(SceneError::Empty);
    }
    Ok(scene)
}

/// Whether `p` has a whole triangle, segment or point to draw.
fn draws_something(p: &picking_vk_host::Primitive) -> bool {
    use picking_vk::draw::Topology;
    let elements = p.indices.as_ref().map_or(p.positions.len(), Vec::len);
    match p.topology {
        Topology::TriangleList => elements >= 3,
        Topology::LineList | Topology::LineStrip => elements >= 2,
        _ => elements >= 1,
    }
}

/// The largest billboard side the viewer draws, in scene units.
const MAX_BILLBOARD_SIZE: f64 = 1.0e6;

/// A node's billboard, from its extras (`picking_vk_billboard`: `size`, optional `color`).
fn billboard_of(node: &gltf::Node, index: usize) -> Result<Option<crate::scene::SceneBillboard>, String> {
    let Some(raw) = node.extras() else { return Ok(None) };
    let Ok(extras) = serde_json::from_str::<serde_json::Value>(raw.get()) else { return Ok(None) };
    let Some(b) = extras.get("picking_vk_billboard") else { return Ok(None) };
    // Past a million units a camera-facing square's f32 corners no longer close over it.
    let size = b.get("size").and_then(serde_json::Value::as_f64).filter(|s| s.is_finite() && *s > 0.0 && *s <= MAX_BILLBOARD_SIZE);
    let Some(size) = size.map(|s| s as f32) else {
        let given = b.get("size").map_or("none".to_string(), |v| printable(&v.to_string()));
        return Err(format!("its billboard size must be a number above 0 and at most {MAX_BILLBOARD_SIZE}, not {given}"));
    };
    let mut color = [1.0f32; 4];
    if let Some(c) = b.get("color").and_then(serde_json::Value::as_array) {
        for (k, v) in c.iter().take(4).enumerate() {
            color[k] = v.as_f64().filter(|x| x.is_finite()).ok_or("its billboard colour must be numbers")? as f32;
        }
    }
    Ok(Some(crate::scene::SceneBillboard { node: index, centre: glam::Vec3::ZERO, size, color }))
}

/// Flattens the default scene's node trees into world transforms, composed in f64 from
/// `precise`, the nodes' transforms as the file writes them (returned per node, with the
/// first camera's), and pushes the scene's nodes, with a child node per instance of a node
/// that `instances` gives (EXT_mesh_gpu_instancing). glTF nodes have at most one parent and
/// no cycles; a file that breaks this is refused with the node named.
fn walk_nodes(
    document: &gltf::Document,
    precise: &[Result<NodeTransform, String>],
    instances: &[Option<Vec<NodeTransform>>],
    scene: &mut Scene,
) -> Result<(Vec<DMat4>, Option<DMat4>), SceneError> {
    let count = document.nodes().len();
    let mut parent: Vec<Option<usize>> = vec![None; count];
    for node in document.nodes() {
        for child in node.children() {
            if let Some(first) = parent[child.index()].replace(node.index()) {
                let reason = format!("it is a child of both node {first} and node {}; a glTF node has at most one parent", node.index());
                return Err(SceneError::BadNode { node: child.index(), reason });
            }
        }
    }
    // Every chain of parents ends, also among nodes no scene reaches (glTF's nodes are a
    // forest): 0 not seen, 1 on the chain being followed, 2 known to end.
    let mut state = vec![0u8; count];
    let mut chain = vec![];
    for start in 0..count {
        let mut at = Some(start);
        while let Some(n) = at.filter(|&n| state[n] != 2) {
            if state[n] == 1 {
                return Err(SceneError::BadNode { node: n, reason: "the node hierarchy has a cycle through it".into() });
            }
            state[n] = 1;
            chain.push(n);
            at = parent[n];
        }
        chain.drain(..).for_each(|n| state[n] = 2);
    }
    let root_scene = document.default_scene().or_else(|| document.scenes().next());
    let roots: Vec<gltf::Node> = match &root_scene {
        Some(s) => s.nodes().collect(),
        None => document.nodes().filter(|n| parent[n.index()].is_none()).collect(),
    };
    let roots_listed: Vec<usize> = roots.iter().map(gltf::Node::index).collect();
    // Iterative walk with a depth bound: a malicious file cannot overflow the stack.
    let mut stack: Vec<(gltf::Node, DMat4, usize, Option<usize>)> = roots.into_iter().rev().map(|n| (n, DMat4::IDENTITY, 0, None)).collect();
    let mut visited = vec![false; count];
    let mut worlds = vec![];
    let mut camera = None;
    while let Some((node, parent_world, depth, scene_parent)) = stack.pop() {
        let bad = |reason: String| Err(SceneError::BadNode { node: node.index(), reason });
        if std::mem::replace(&mut visited[node.index()], true) {
            let root_and_child = parent[node.index()].filter(|_| roots_listed.contains(&node.index()));
            return match (depth, root_and_child) {
                (0, None) => bad("the scene lists it twice".into()),
                (0, Some(p)) => bad(format!("it is a scene root and also a child of node {p}")),
                (_, Some(p)) => bad(format!("the node hierarchy has a cycle through it (a scene root and also a child of node {p})")),
                (_, None) => bad("the node hierarchy has a cycle through it".into()),
            };
        }
        if depth > 256 {
            return bad("it is nested deeper than 256 levels".into());
        }
        let transform = match precise.get(node.index()) {
            Some(Ok(transform)) => *transform,
            Some(Err(reason)) => return bad(reason.clone()),
            None => return bad("the file's nodes could not be read twice alike".into()),
        };
        let world = parent_world * transform.matrix();
        // What is drawn is in f32: a world finite in f64 alone (a scale of 1e40) is refused too.
        let drawable = |world: &DMat4| world.is_finite() && world.as_mat4().is_finite();
        if !drawable(&world) {
            return bad("its transform is not finite".into());
        }
        let index = scene.nodes.len();
        // The view is the first perspective camera's, else the first orthographic one's.
        let lens = node.camera().map(|cam| match cam.projection() {
            gltf::camera::Projection::Perspective(p) => (Lens::Perspective { yfov: p.yfov(), aspect: p.aspect_ratio() }, p.znear(), p.zfar()),
            gltf::camera::Projection::Orthographic(o) => (Lens::Orthographic { xmag: o.xmag(), ymag: o.ymag() }, o.znear(), Some(o.zfar())),
        });
        let preferred = |lens: &Lens| scene.camera.as_ref().is_none_or(|c| !c.lens.is_perspective() && lens.is_perspective());
        if let Some((lens, znear, zfar)) = lens.filter(|(lens, ..)| preferred(lens)) {
            // Placed by `rebase::place`.
            let Some(frame) = crate::camera::camera_frame(&world) else {
                return bad("its camera's transform has no view direction (a zero scale, or two axes parallel)".into());
            };
            scene.camera = Some(CameraDesc { world: glam::Mat4::IDENTITY, lens, znear, zfar });
            camera = Some(frame);
            scene.camera_node = Some(index);
        }
        if let Some(b) = billboard_of(&node, index).map_err(|reason| SceneError::BadNode { node: node.index(), reason })? {
            scene.billboards.push(b);
        }
        let mesh = node.mesh().map(|m| m.index());
        let targets = mesh.map_or(0, |m| scene.meshes[m].target_count());
        let mut weights = match node.weights() {
            Some(w) if w.len() == targets && w.iter().all(|x| x.is_finite()) => w.to_vec(),
            Some(w) if w.len() == targets && targets > 0 => return bad("a morph weight is not finite".into()),
            Some(w) if targets > 0 => return bad(format!("it has {} morph weights for {targets} targets", w.len())),
            _ => mesh.map(|m| scene.meshes[m].weights.clone()).unwrap_or_default(),
        };
        weights.resize(targets, 0.0);
        let instanced = instances.get(node.index()).and_then(Option::as_ref).filter(|_| mesh.is_some());
        if instanced.is_some() && node.skin().is_some() {
            return bad(format!("it is skinned and instanced ({}); the viewer does not read the two together", gpu_instancing::EXTENSION));
        }
        let name = kept_name(node.name());
        scene.nodes.push(Node {
            gltf_index: node.index(),
            name: name.clone(),
            world: glam::Mat4::IDENTITY,
            // An instanced node draws its mesh only at its instances.
            mesh: mesh.filter(|_| instanced.is_none()),
            parent: scene_parent,
            local: transform,
            skin: node.skin().map(|s| s.index()),
            weights: weights.clone(),
            default_weights: weights.clone(),
            gpu_instance: None,
        });
        worlds.push(world);
        for (k, local) in instanced.into_iter().flatten().enumerate() {
            let instance_world = world * local.matrix();
            if !drawable(&instance_world) {
                return bad(format!("the transform of its instance {k} is not finite"));
            }
            let (weights, name) = (weights.clone(), name.clone());
            let gpu_instance = Some(k as u32);
            scene.nodes.push(Node {
                gltf_index: node.index(),
                name,
                mesh,
                parent: Some(index),
                local: *local,
                default_weights: weights.clone(),
                weights,
                gpu_instance,
                ..Default::default()
            });
            worlds.push(instance_world);
        }
        for child in node.children().collect::<Vec<_>>().into_iter().rev() {
            stack.push((child, world, depth + 1, Some(index)));
        }
    }
    Ok((worlds, camera))
}
