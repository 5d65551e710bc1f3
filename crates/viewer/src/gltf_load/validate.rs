//! Checks before reading: every accessor a drawn primitive reads, and the buffer views and
//! buffers behind it, are in range and of a type the viewer reads, and the geometry fits the
//! memory budget. The glTF reader indexes without checking (some cases panic inside it), so
//! nothing reaches it that these checks did not pass.

use super::{LoadOptions, SceneError};
use gltf::accessor::{DataType, Dimensions};
use gltf::json::validation::Checked;
use gltf::mesh::Semantic;

/// Checks, before the glTF crate validates the document, what its validation indexes without
/// checking: every accessor index a mesh primitive's attributes and morph targets name (an
/// index past the list panics inside the crate's own validation), and the nodes, samplers
/// and accessors skins and animations name.
pub fn references(root: &gltf::json::Root) -> Result<(), SceneError> {
    let accessors = root.accessors.len();
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, prim) in mesh.primitives.iter().enumerate() {
            let bad = |reason: String| SceneError::BadPrimitive { mesh: m, primitive: p, reason };
            let targets = prim.targets.iter().flatten().flat_map(|t| [&t.positions, &t.normals, &t.tangents]).flatten();
            let named = prim.attributes.values().chain(prim.indices.iter()).chain(targets);
            if let Some(index) = named.map(|i| i.value()).find(|&i| i >= accessors) {
                return Err(bad(format!("it names accessor {index}, but the file has {accessors}")));
            }
        }
    }
    // Skins and animations name nodes and accessors the crate looks up without checking.
    let nodes = root.nodes.len();
    for (k, skin) in root.skins.iter().enumerate() {
        let bad = |reason: String| SceneError::BadSkin { skin: k, reason };
        if let Some(j) = skin.joints.iter().map(|j| j.value()).find(|&j| j >= nodes) {
            return Err(bad(format!("joint {j} is not a node (the file has {nodes})")));
        }
        if let Some(i) = skin.inverse_bind_matrices.as_ref().map(|i| i.value()).filter(|&i| i >= accessors) {
            return Err(bad(format!("inverseBindMatrices names accessor {i}, but the file has {accessors}")));
        }
    }
    for (a, animation) in root.animations.iter().enumerate() {
        let bad = |reason: String| SceneError::BadAnimation { animation: a, reason };
        for (c, channel) in animation.channels.iter().enumerate() {
            if channel.sampler.value() >= animation.samplers.len() {
                return Err(bad(format!("channel {c} names sampler {}, but the animation has {}", channel.sampler.value(), animation.samplers.len())));
            }
            if channel.target.node.value() >= nodes {
                return Err(bad(format!("channel {c} targets node {}, but the file has {nodes}", channel.target.node.value())));
            }
            if matches!(channel.target.path, Checked::Invalid) {
                return Err(bad(format!("channel {c}: its target path is not translation, rotation, scale or weights")));
            }
        }
        for (k, sampler) in animation.samplers.iter().enumerate() {
            if let Some(i) = [sampler.input.value(), sampler.output.value()].into_iter().find(|&i| i >= accessors) {
                return Err(bad(format!("sampler {k} names accessor {i}, but the file has {accessors}")));
            }
        }
    }
    // Images the crate unwraps without checking: one in a bufferView needs its mimeType.
    for (i, image) in root.images.iter().enumerate() {
        let bad = |reason: &str| Err(SceneError::BadImage { image: i, reason: reason.into() });
        match (&image.uri, &image.buffer_view, &image.mime_type) {
            (None, None, _) => return bad("it has neither a uri nor a bufferView"),
            (Some(_), Some(_), _) => return bad("it has both a uri and a bufferView"),
            (None, Some(_), None) => return bad("an image in a bufferView needs a mimeType"),
            _ => {}
        }
    }
    for (n, node) in root.nodes.iter().enumerate() {
        if let Some(s) = node.skin.as_ref().map(|s| s.value()).filter(|&s| s >= root.skins.len()) {
            return Err(SceneError::BadNode { node: n, reason: format!("it names skin {s}, but the file has {}", root.skins.len()) });
        }
    }
    Ok(())
}

/// What an attribute may be, per the glTF 2.0 specification's attribute table, and with
/// `quantized` (the file uses KHR_mesh_quantization) that extension's: positions and texture
/// coordinates also as 8- and 16-bit integers, normalized or not, normals as normalized ones.
fn allowed(semantic: &Semantic, dims: Dimensions, data: DataType, normalized: bool, quantized: bool) -> bool {
    let small = matches!(data, DataType::I8 | DataType::U8 | DataType::I16 | DataType::U16);
    match semantic {
        Semantic::Positions => dims == Dimensions::Vec3 && (data == DataType::F32 || (quantized && small)),
        Semantic::Normals => dims == Dimensions::Vec3 && (data == DataType::F32 || (quantized && normalized && matches!(data, DataType::I8 | DataType::I16))),
        Semantic::TexCoords(_) => {
            dims == Dimensions::Vec2 && (data == DataType::F32 || (normalized && matches!(data, DataType::U8 | DataType::U16)) || (quantized && small))
        }
        Semantic::Joints(_) => dims == Dimensions::Vec4 && !normalized && matches!(data, DataType::U8 | DataType::U16),
        Semantic::Weights(_) => dims == Dimensions::Vec4 && (data == DataType::F32 || (normalized && matches!(data, DataType::U8 | DataType::U16))),
        Semantic::Colors(_) => {
            matches!(dims, Dimensions::Vec3 | Dimensions::Vec4) && (data == DataType::F32 || (normalized && matches!(data, DataType::U8 | DataType::U16)))
        }
        // Attributes the viewer does not read are not checked further here.
        _ => true,
    }
}

/// Validates the accessors drawn primitives read; returns the bytes the loader will allocate
/// for them (as it stores them: f32 vectors, u32 indices, and the three vertices a triangle
/// gets when flat normals are made for a primitive without NORMAL).
pub fn primitives(document: &gltf::Document, buffer_lengths: &[usize], options: &LoadOptions) -> Result<u64, SceneError> {
    let json = document.as_json();
    let quantized = json.extensions_used.iter().any(|e| e == super::quantized::EXTENSION);
    let mut allocated = 0u64;
    for (mesh_index, mesh) in json.meshes.iter().enumerate() {
        for (p, prim) in mesh.primitives.iter().enumerate() {
            let bad = |reason: String| SceneError::BadPrimitive { mesh: mesh_index, primitive: p, reason };
            let read = |what: &str, index: usize, check: &dyn Fn(Dimensions, DataType, bool) -> bool| {
                accessor(document, index, buffer_lengths, what, check).map_err(bad)
            };
            let (mut positions, mut normals, mut uvs, mut colors, mut skin_sets) = (None, false, false, false, 0u64);
            for (semantic, index) in &prim.attributes {
                let Checked::Valid(semantic) = semantic else { continue };
                // The viewer reads two sets of skin influences (eight per vertex).
                if !matches!(
                    semantic,
                    Semantic::Positions | Semantic::Normals | Semantic::TexCoords(_) | Semantic::Colors(0) | Semantic::Joints(0..=1) | Semantic::Weights(0..=1)
                ) {
                    continue;
                }
                let count = read(&format!("{semantic:?}"), index.value(), &|d, t, n| allowed(semantic, d, t, n, quantized))?;
                match semantic {
                    Semantic::Positions => positions = Some(count),
                    Semantic::Normals => normals = true,
                    Semantic::Colors(_) => colors = true,
                    Semantic::Joints(_) => skin_sets += 1,
                    _ => uvs |= matches!(semantic, Semantic::TexCoords(_)),
                }
                let bytes = match semantic {
                    Semantic::TexCoords(_) | Semantic::Joints(_) => 8,
                    Semantic::Weights(_) | Semantic::Colors(_) => 16,
                    _ => 12,
                };
                allocated = allocated.saturating_add(count.saturating_mul(bytes));
            }
            let Some(vertices) = positions else {
                continue; // reported when the primitive is read
            };
            // Every target holds a delta per vertex, zeros where it has no POSITION (a target
            // whose count differs is read whole before it is refused).
            let targets = prim.targets.as_ref().map_or(0, |t| t.len() as u64);
            for (t, target) in prim.targets.iter().flatten().enumerate() {
                let mut count = vertices;
                if let Some(index) = &target.positions {
                    // KHR_mesh_quantization: offsets also as 8- and 16-bit signed integers.
                    let offsets = |d, t, _| d == Dimensions::Vec3 && (t == DataType::F32 || (quantized && matches!(t, DataType::I8 | DataType::I16)));
                    count = count.max(read(&format!("morph target {t} POSITION"), index.value(), &offsets)?);
                }
                allocated = allocated.saturating_add(count.saturating_mul(12));
            }
            let mut elements = vertices;
            if let Some(indices) = &prim.indices {
                elements = read("indices", indices.value(), &|d, t, normalized| {
                    d == Dimensions::Scalar && !normalized && matches!(t, DataType::U8 | DataType::U16 | DataType::U32)
                })?;
                allocated = allocated.saturating_add(elements.saturating_mul(4));
            }
            // Strips and fans become lists (3 corners a triangle), a loop a closed strip.
            let mode = match prim.mode {
                Checked::Valid(mode) => mode,
                Checked::Invalid => gltf::mesh::Mode::Triangles,
            };
            let corners = match mode {
                gltf::mesh::Mode::TriangleStrip | gltf::mesh::Mode::TriangleFan => elements.saturating_sub(2).saturating_mul(3),
                gltf::mesh::Mode::LineLoop => elements.saturating_add(1),
                _ => elements,
            };
            // A non-indexed list with vertices past its last whole primitive gets an index
            // list that leaves them out (`primitives`).
            let leftover = !elements.is_multiple_of(super::primitives::vertices_a_primitive(mode) as u64);
            if corners != elements || (prim.indices.is_none() && (mode == gltf::mesh::Mode::LineLoop || leftover)) {
                allocated = allocated.saturating_add(corners.saturating_mul(4));
            }
            // Without NORMAL a triangle gets its own three vertices, each with every
            // attribute, target delta and skin influence of its corner.
            let triangles = matches!(mode, gltf::mesh::Mode::Triangles | gltf::mesh::Mode::TriangleStrip | gltf::mesh::Mode::TriangleFan);
            if !normals && triangles {
                let per_corner = 24 + if uvs { 8 } else { 0 } + if colors { 16 } else { 0 } + 12 * targets + 24 * skin_sets;
                allocated = allocated.saturating_add(corners.saturating_mul(per_corner));
            } else if !normals {
                allocated = allocated.saturating_add(vertices.saturating_mul(12));
            }
        }
    }
    if allocated > options.max_bytes {
        return Err(SceneError::Budget(format!("its geometry takes {allocated} bytes once read, over the limit of {} (--max-scene-bytes)", options.max_bytes)));
    }
    Ok(allocated)
}

/// Takes `bytes` that reading `what` allocates from what is left of the budget, or refuses
/// the file naming it: data read after the geometry (instances, skins, animations) is held to
/// the same limit, so a small file cannot declare an accessor whose reading aborts the process.
pub fn charge(budget: &mut u64, bytes: u64, what: &dyn Fn() -> String) -> Result<(), SceneError> {
    if bytes > *budget {
        return Err(SceneError::Budget(format!("{}: {bytes} bytes once read, over what is left of the limit ({budget} bytes, --max-scene-bytes)", what())));
    }
    *budget -= bytes;
    Ok(())
}

/// What the viewer holds for each primitive beyond its geometry (its GPU buffers, pick and
/// lit draw state, CPU bookkeeping), measured on lavapipe at 8 to 10 KiB, and for each node
/// and each primitive a node draws: counted against the budget with the geometry, so a small
/// file naming one triangle a million times is refused rather than taking gigabytes.
pub const BYTES_PER_PRIMITIVE: u64 = 8 << 10;
pub const BYTES_PER_NODE: u64 = 256;
pub const BYTES_PER_DRAW: u64 = 768;

/// The bytes the scene's structure takes once loaded, by [`BYTES_PER_PRIMITIVE`],
/// [`BYTES_PER_NODE`] and [`BYTES_PER_DRAW`]; refused with the geometry's `geometry` bytes
/// when the two exceed the budget.
pub fn structure(document: &gltf::Document, geometry: u64, options: &LoadOptions) -> Result<u64, SceneError> {
    let json = document.as_json();
    let primitives_of = |m: usize| json.meshes.get(m).map_or(0, |mesh| mesh.primitives.len() as u64);
    let primitives: u64 = (0..json.meshes.len()).map(primitives_of).sum();
    let draws: u64 = json.nodes.iter().filter_map(|n| n.mesh.as_ref()).map(|m| primitives_of(m.value())).sum();
    let nodes = json.nodes.len() as u64;
    // A node keeps its mesh's morph weights twice (current and default), 4 bytes each.
    let weights: u64 = json.nodes.iter().filter_map(|n| n.mesh.as_ref()).map(|m| targets_of(json, m.value()).saturating_mul(8)).sum();
    let bytes = primitives
        .saturating_mul(BYTES_PER_PRIMITIVE)
        .saturating_add(nodes.saturating_mul(BYTES_PER_NODE))
        .saturating_add(draws.saturating_mul(BYTES_PER_DRAW))
        .saturating_add(weights);
    if bytes.saturating_add(geometry) > options.max_bytes {
        return Err(SceneError::Budget(format!(
            "its {primitives} primitives, {nodes} nodes and {draws} node draws take about {bytes} bytes once loaded ({geometry} more for geometry), over the limit of {} (--max-scene-bytes)",
            options.max_bytes
        )));
    }
    Ok(bytes)
}

/// The morph targets of mesh `m` (its primitives' most): as many weights as its nodes hold.
pub fn targets_of(json: &gltf::json::Root, m: usize) -> u64 {
    json.meshes.get(m).and_then(|mesh| mesh.primitives.iter().map(|p| p.targets.as_ref().map_or(0, Vec::len) as u64).max()).unwrap_or(0)
}

/// Checks one accessor: in range, of an allowed type, inside its buffer view (stride
/// included) and its buffer view inside its buffer. Returns its element count.
pub fn accessor(
    document: &gltf::Document,
    index: usize,
    buffer_lengths: &[usize],
    what: &str,
    allowed: &dyn Fn(Dimensions, DataType, bool) -> bool,
) -> Result<u64, String> {
    let json = document.as_json();
    let a = json.accessors.get(index).ok_or_else(|| format!("{what} names accessor {index}, but the file has {}", json.accessors.len()))?;
    let (Checked::Valid(component), Checked::Valid(dims)) = (&a.component_type, &a.type_) else {
        return Err(format!("accessor {index} ({what}) has an unknown component type or type"));
    };
    let (data, dims) = (component.0, *dims);
    if a.normalized && matches!(data, DataType::F32 | DataType::U32) {
        return Err(format!("accessor {index} ({what}) is normalized {data:?}; glTF normalizes only 8- and 16-bit integers"));
    }
    if !allowed(dims, data, a.normalized) {
        return Err(format!("accessor {index} ({what}) is {dims:?} of {data:?}{}, which {what} may not be", if a.normalized { " normalized" } else { "" }));
    }
    let element = (data.size() * dims.multiplicity()) as u64;
    let count = a.count.0;
    if count == 0 {
        return Err(format!("accessor {index} ({what}) has count 0; glTF requires at least 1"));
    }
    count.checked_mul(element).ok_or_else(|| format!("accessor {index} ({what}): count {count} overflows"))?;
    if let Some(sparse) = &a.sparse {
        sparse_in_range(json, index, what, sparse, count, element, data.size() as u64, buffer_lengths)?;
        if a.buffer_view.is_none() {
            return Ok(count); // zeros, then the sparse values
        }
    }
    let Some(view_index) = &a.buffer_view else {
        return Err(format!("accessor {index} ({what}) has no bufferView and no sparse data"));
    };
    let view_index = view_index.value();
    let view = json
        .buffer_views
        .get(view_index)
        .ok_or_else(|| format!("accessor {index} ({what}) names bufferView {view_index}, but the file has {}", json.buffer_views.len()))?;
    let stride = view.byte_stride.map_or(element, |s| s.0 as u64);
    if stride < element || stride > 252 || stride % data.size() as u64 != 0 {
        return Err(format!("bufferView {view_index}: byteStride {stride} does not fit accessor {index}'s {element}-byte elements"));
    }
    let offset = a.byte_offset.map_or(0, |o| o.0);
    if offset % data.size() as u64 != 0 {
        return Err(format!("accessor {index} ({what}): byteOffset {offset} is not a multiple of its component size"));
    }
    let needed = (count - 1).saturating_mul(stride).saturating_add(offset).saturating_add(element);
    if needed > view.byte_length.0 {
        return Err(format!("accessor {index} ({what}) needs {needed} bytes of bufferView {view_index}, which has {}", view.byte_length.0));
    }
    // The accessor's elements start at a multiple of their component size in the buffer,
    // not only in the view (glTF; a float read off its alignment is garbage to the reader).
    let view_offset = view.byte_offset.map_or(0, |o| o.0);
    if view_offset.checked_add(offset).is_none_or(|start| start % data.size() as u64 != 0) {
        return Err(format!("accessor {index} ({what}) starts at byte {view_offset} + {offset} of its buffer, not a multiple of its component size"));
    }
    view_in_buffer(view_index, view, buffer_lengths)?;
    Ok(count)
}

/// Checks that buffer view `view_index` lies inside its buffer.
fn view_in_buffer(view_index: usize, view: &gltf::json::buffer::View, buffer_lengths: &[usize]) -> Result<(), String> {
    let buffer = view.buffer.value();
    let view_end = view.byte_offset.map_or(0, |o| o.0).checked_add(view.byte_length.0).ok_or_else(|| format!("bufferView {view_index} overflows"))?;
    let held = buffer_lengths.get(buffer).ok_or_else(|| format!("bufferView {view_index} names buffer {buffer}, but the file has {}", buffer_lengths.len()))?;
    if view_end > *held as u64 {
        return Err(format!("bufferView {view_index} ends at byte {view_end} of buffer {buffer}, which holds {held}"));
    }
    Ok(())
}

/// Checks a sparse accessor's substitutions before the glTF reader walks them: at least one
/// and at most the accessor's count, u8/u16/u32 indices and the values tightly packed inside
/// their views (no byteStride, as glTF requires), aligned in their buffers, and the views
/// inside their buffers.
#[allow(clippy::too_many_arguments)]
fn sparse_in_range(
    json: &gltf::json::Root,
    index: usize,
    what: &str,
    sparse: &gltf::json::accessor::sparse::Sparse,
    count: u64,
    element: u64,
    component: u64,
    buffer_lengths: &[usize],
) -> Result<(), String> {
    let n = sparse.count.0;
    if n == 0 || n > count {
        return Err(format!("accessor {index} ({what}): its sparse count {n} must lie between 1 and its count {count}"));
    }
    let index_size = match &sparse.indices.component_type {
        Checked::Valid(kind) if matches!(kind.0, DataType::U8 | DataType::U16 | DataType::U32) => kind.0.size() as u64,
        _ => return Err(format!("accessor {index} ({what}): sparse indices must be u8, u16 or u32")),
    };
    let parts = [
        ("indices", sparse.indices.buffer_view.value(), sparse.indices.byte_offset.0, index_size, index_size),
        ("values", sparse.values.buffer_view.value(), sparse.values.byte_offset.0, element, component),
    ];
    for (part, view_index, offset, size, align) in parts {
        let view = json
            .buffer_views
            .get(view_index)
            .ok_or_else(|| format!("accessor {index} ({what}): sparse {part} name bufferView {view_index}, which the file lacks"))?;
        if view.byte_stride.is_some() {
            return Err(format!("accessor {index} ({what}): bufferView {view_index} of its sparse {part} has a byteStride, which glTF forbids there"));
        }
        let needed = n.checked_mul(size).and_then(|b| b.checked_add(offset)).ok_or_else(|| format!("accessor {index} ({what}): sparse {part} overflow"))?;
        if needed > view.byte_length.0 {
            return Err(format!(
                "accessor {index} ({what}): its sparse {part} need {needed} bytes of bufferView {view_index}, which has {}",
                view.byte_length.0
            ));
        }
        let view_offset = view.byte_offset.map_or(0, |o| o.0);
        if view_offset.checked_add(offset).is_none_or(|start| start % align != 0) {
            return Err(format!("accessor {index} ({what}): its sparse {part} start at byte {view_offset} + {offset}, not a multiple of their component size"));
        }
        view_in_buffer(view_index, view, buffer_lengths)?;
    }
    Ok(())
}

/// Checks every sparse accessor's indices, as glTF requires them: strictly increasing and
/// below the accessor's count (the glTF reader assumes both, and otherwise substitutes the
/// wrong elements or drops some). Indices whose bytes lie outside their buffer are left to
/// the range checks of the accessors that are read.
pub fn sparse_indices(document: &gltf::Document, buffers: &[Vec<u8>]) -> Result<(), SceneError> {
    // Accessors whose substitutions read the same indices for the same count are checked
    // once: 100,000 of them over one view of 25 million indices would read it 100,000 times.
    let mut checked = std::collections::HashSet::new();
    // Index ranges that differ only by a few bytes' offset escape that: reading is held to
    // twice the buffers' bytes (a file's own indices are read once, or twice where two
    // accessors share a view), so a million accessors over one view cannot read it a
    // million times.
    let total: u64 = buffers.iter().map(|b| b.len() as u64).sum();
    let most = total.saturating_mul(2).saturating_add(1 << 20);
    let mut left = most;
    for a in document.as_json().accessors.iter().enumerate().filter_map(|(i, a)| Some((i, a, a.sparse.as_ref()?))) {
        let (index, accessor, sparse) = a;
        let key = (
            sparse.indices.buffer_view.value(),
            sparse.indices.byte_offset.0,
            sparse.count.0,
            format!("{:?}", sparse.indices.component_type),
            accessor.count.0,
        );
        if !checked.insert(key) {
            continue;
        }
        let bad = |reason: String| SceneError::BadAccessor { accessor: index, reason };
        let size = match &sparse.indices.component_type {
            Checked::Valid(kind) => kind.0.size(),
            Checked::Invalid => continue,
        };
        let Some(view) = document.as_json().buffer_views.get(sparse.indices.buffer_view.value()) else { continue };
        let start = view.byte_offset.map_or(0, |o| o.0).saturating_add(sparse.indices.byte_offset.0);
        let bytes = usize::try_from(start).ok().and_then(|s| {
            let end = s.checked_add(size.checked_mul(usize::try_from(sparse.count.0).ok()?)?)?;
            buffers.get(view.buffer.value())?.get(s..end)
        });
        let Some(bytes) = bytes else { continue };
        left = left.checked_sub(bytes.len() as u64).ok_or_else(|| {
            SceneError::Budget(format!(
                "its sparse accessors' indices take over {most} bytes of reading (twice its buffers' bytes, and 1 MiB): accessor {index} passes it"
            ))
        })?;
        let mut previous: Option<u64> = None;
        for chunk in bytes.chunks_exact(size) {
            let i = chunk.iter().rev().fold(0u64, |v, &b| (v << 8) | u64::from(b));
            if i >= accessor.count.0 {
                return Err(bad(format!("sparse index {i} is past its {} elements", accessor.count.0)));
            }
            if previous.is_some_and(|p| i <= p) {
                return Err(bad(format!("sparse indices must increase strictly; {i} follows {}", previous.unwrap_or(0))));
            }
            previous = Some(i);
        }
    }
    Ok(())
}
