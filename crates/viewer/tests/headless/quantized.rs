//! KHR_mesh_quantization: quantized meshes pick like their float twins.

use super::*;

/// One mesh of a quantized test file: its vertices stored as `component` (glTF's code),
/// normalized or not, and how the float twin reads them back.
struct QuantizedMesh {
    name: &'static str,
    component: u32,
    normalized: bool,
    /// The stored integer of a coordinate in -1..1, and the value it stands for.
    quantize: fn(f64) -> i64,
    value: fn(i64) -> f32,
    /// The node's matrix (it undoes an offset quantization, as gltfpack writes it).
    node: Mat4,
}

/// A wavy 9x9 grid, three times: positions as normalized i16, as u16 counts of 1/1000 offset
/// by the node's matrix, and as normalized i8 with a morph target of normalized i16 offsets;
/// normals as normalized i8 and UVs as raw u8 (KHR_mesh_quantization's types, as gltfpack
/// writes them). With `quantized` false, the same values as f32: the float twin.
fn quantized_grid_file(quantized: bool, declared: bool) -> Value {
    let meshes = [
        QuantizedMesh {
            name: "I16",
            component: 5122,
            normalized: true,
            quantize: |x| (x * 32767.0).round() as i64,
            value: |q| (q as f32 / 32767.0).max(-1.0),
            node: Mat4::from_translation(Vec3::new(-2.3, 0.0, 0.0)),
        },
        QuantizedMesh {
            name: "U16",
            component: 5123,
            normalized: false,
            quantize: |x| ((x + 1.0) * 1000.0).round() as i64,
            value: |q| q as f32,
            node: Mat4::from_translation(Vec3::splat(-1.0)) * Mat4::from_scale(Vec3::splat(0.001)),
        },
        QuantizedMesh {
            name: "I8",
            component: 5120,
            normalized: true,
            quantize: |x| (x * 127.0).round() as i64,
            value: |q| (q as f32 / 127.0).max(-1.0),
            node: Mat4::from_translation(Vec3::new(2.3, 0.0, 0.0)),
        },
    ];
    let n = 9usize;
    let grid: Vec<[f64; 3]> = (0..n * n)
        .map(|k| {
            let (x, y) = (-1.0 + 2.0 * (k % n) as f64 / (n - 1) as f64, -1.0 + 2.0 * (k / n) as f64 / (n - 1) as f64);
            [x * 0.9, y * 0.9, 0.4 * (2.0 * x).sin() * (1.5 * y).cos()]
        })
        .collect();
    let mut indices: Vec<u16> = vec![];
    for j in 0..n - 1 {
        for i in 0..n - 1 {
            let k = (j * n + i) as u16;
            indices.extend([k, k + 1, k + n as u16 + 1, k, k + n as u16 + 1, k + n as u16]);
        }
    }
    let mut bin: Vec<u8> = vec![];
    let (mut views, mut accessors) = (vec![], vec![]);
    // Each accessor in its own view, 4-byte aligned, elements padded to 4 bytes as glTF asks.
    let mut add = |bytes: Vec<u8>, stride: Option<usize>, accessor: Value, target: u32| {
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        let mut view = json!({"buffer": 0, "byteOffset": bin.len(), "byteLength": bytes.len(), "target": target});
        if let Some(s) = stride {
            view["byteStride"] = json!(s);
        }
        bin.extend(bytes);
        views.push(view);
        let mut accessor = accessor;
        accessor["bufferView"] = json!(views.len() - 1);
        accessors.push(accessor);
        accessors.len() - 1
    };
    let index_bytes: Vec<u8> = indices.iter().flat_map(|i| i.to_le_bytes()).collect();
    let index_accessor = add(index_bytes, None, json!({"componentType": 5123, "count": indices.len(), "type": "SCALAR"}), 34963);
    // Vectors of 8- or 16-bit components (or f32), padded to 4-byte elements.
    let vectors = |values: &[Vec<i64>], component: u32, floats: Option<&[Vec<f32>]>| -> (Vec<u8>, usize) {
        let size = match (floats, component) {
            (Some(_), _) => 4,
            (None, 5120 | 5121) => 1,
            (None, _) => 2,
        };
        let dims = values[0].len();
        let stride = (size * dims).div_ceil(4) * 4;
        let mut out = vec![];
        for (k, v) in values.iter().enumerate() {
            let start = out.len();
            for (c, &q) in v.iter().enumerate() {
                match (floats, size) {
                    (Some(f), _) => out.extend(f[k][c].to_le_bytes()),
                    (None, 1) => out.push(q as u8),
                    (None, _) => out.extend((q as u16).to_le_bytes()),
                }
            }
            out.resize(start + stride, 0);
        }
        (out, stride)
    };
    // An attribute of stored integers `q` (component type `component`), each standing for
    // `value(q)`: as stored in the quantized file, as those f32 values in the twin; `bounds`:
    // with min and max (positions need them).
    let mut attribute = |q: &[Vec<i64>], component: u32, normalized: bool, value: &dyn Fn(i64) -> f32, bounds: bool| {
        let twin: Vec<Vec<f32>> = q.iter().map(|v| v.iter().map(|&c| value(c)).collect()).collect();
        let (bytes, stride) = vectors(q, component, (!quantized).then_some(&twin[..]));
        let dims = q[0].len();
        let mut accessor = json!({"componentType": if quantized { component } else { 5126 }, "count": q.len(), "type": format!("VEC{dims}")});
        if quantized && normalized {
            accessor["normalized"] = json!(true);
        }
        if bounds {
            let column = |c: usize| -> (Value, Value) {
                if quantized {
                    (json!(q.iter().map(|v| v[c]).min()), json!(q.iter().map(|v| v[c]).max()))
                } else {
                    (json!(twin.iter().map(|v| v[c]).fold(f32::MAX, f32::min)), json!(twin.iter().map(|v| v[c]).fold(f32::MIN, f32::max)))
                }
            };
            let (lo, hi): (Vec<Value>, Vec<Value>) = (0..dims).map(column).unzip();
            (accessor["min"], accessor["max"]) = (json!(lo), json!(hi));
        }
        add(bytes, Some(stride), accessor, 34962)
    };
    let mut mesh_json = vec![];
    let mut nodes = vec![];
    for (m, mesh) in meshes.iter().enumerate() {
        let q: Vec<Vec<i64>> = grid.iter().map(|p| p.iter().map(|&c| (mesh.quantize)(c)).collect()).collect();
        let position = attribute(&q, mesh.component, mesh.normalized, &mesh.value, true);
        // Normals as normalized i8 (the grid's, roughly: the loader renormalizes them).
        let nq: Vec<Vec<i64>> = grid.iter().map(|p| vec![(-0.3 * p[0] * 127.0) as i64, (0.2 * p[1] * 127.0) as i64, 120]).collect();
        let normal = attribute(&nq, 5120, true, &|c| (c as f32 / 127.0).max(-1.0), false);
        // UVs as raw u8 grid steps (0..8).
        let uq: Vec<Vec<i64>> = (0..n * n).map(|k| vec![(k % n) as i64, (k / n) as i64]).collect();
        let uv = attribute(&uq, 5121, false, &|c| c as f32, false);
        let mut primitive = json!({"attributes": {"POSITION": position, "NORMAL": normal, "TEXCOORD_0": uv}, "indices": index_accessor});
        let mut mesh_value = json!({"name": mesh.name, "primitives": []});
        if m == 2 {
            // A morph target of normalized i16 offsets, at weight 0.5.
            let dq: Vec<Vec<i64>> = grid.iter().map(|p| vec![0, (0.3 * (3.0 * p[0]).cos() * 32767.0) as i64, (0.25 * p[1] * 32767.0) as i64]).collect();
            let offsets = attribute(&dq, 5122, true, &|c| (c as f32 / 32767.0).max(-1.0), false);
            primitive["targets"] = json!([{"POSITION": offsets}]);
            mesh_value["weights"] = json!([0.5]);
        }
        mesh_value["primitives"] = json!([primitive]);
        mesh_json.push(mesh_value);
        nodes.push(json!({"name": mesh.name, "mesh": m, "matrix": mesh.node.to_cols_array()}));
    }
    nodes.push(json!({"name": "Camera", "camera": 0, "translation": [0.0, 0.0, 5.0]}));
    let mut doc = json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0, 1, 2, 3]}],
        "nodes": nodes,
        "meshes": mesh_json,
        "cameras": [{"type": "perspective", "perspective": {"yfov": 0.9, "znear": 0.1, "zfar": 50.0}}],
        "accessors": accessors,
        "bufferViews": views,
        "buffers": [{"byteLength": bin.len(), "uri": if quantized { "quantized.bin" } else { "twin.bin" }}],
    });
    if quantized && declared {
        doc["extensionsUsed"] = json!(["KHR_mesh_quantization"]);
        doc["extensionsRequired"] = json!(["KHR_mesh_quantization"]);
    }
    let bin_path = tmp(if quantized { "quantized.bin" } else { "twin.bin" });
    std::fs::write(bin_path, &bin).unwrap();
    doc
}

#[test]
fn quantized_meshes_pick_like_their_float_twins() {
    // KHR_mesh_quantization (gltfpack's output): the loader dequantizes as glTF says, so every
    // pick (node, depth, world point, UV) equals the float twin's, whose f32 values the test
    // computes itself; the morphed mesh reads its quantized offsets too.
    let quantized = tmp("quantized.gltf");
    std::fs::write(&quantized, quantized_grid_file(true, true).to_string()).unwrap();
    let twin = tmp("twin.gltf");
    std::fs::write(&twin, quantized_grid_file(false, true).to_string()).unwrap();
    let (w, h) = (96, 48);
    let pixels: Vec<UVec2> = (0..h / 3).flat_map(|j| (0..w / 3).map(move |i| UVec2::new(3 * i + 1, 3 * j + 1))).collect();
    let got = headless_picks(Some(&quantized), &pixels, w, h, &[]);
    let want = headless_picks(Some(&twin), &pixels, w, h, &[]);
    let mut per_mesh = std::collections::BTreeMap::new();
    for (g, t) in got.iter().zip(&want) {
        assert_eq!((&g["hit"], &g["node_name"], &g["depth"]), (&t["hit"], &t["node_name"], &t["depth"]), "{g} vs {t}");
        if g["hit"] == json!(true) {
            for field in ["world", "uv"] {
                let (a, b) = (g[field].as_array().unwrap(), t[field].as_array().unwrap());
                assert!(a.iter().zip(b).all(|(x, y)| (x.as_f64().unwrap() - y.as_f64().unwrap()).abs() < 1e-6), "{field}: {g} vs {t}");
            }
            *per_mesh.entry(g["node_name"].as_str().unwrap().to_owned()).or_insert(0) += 1;
        }
    }
    assert!(["I16", "U16", "I8"].iter().all(|m| per_mesh.get(*m).copied().unwrap_or(0) > 20), "every mesh is picked: {per_mesh:?}");
    // The same file without the extension declared: its integer positions are refused by name.
    let undeclared = tmp("undeclared.gltf");
    std::fs::write(&undeclared, quantized_grid_file(true, false).to_string()).unwrap();
    let err = viewer::gltf_load::load_path(&undeclared).map(|_| ()).expect_err("refused").to_string();
    assert!(err.contains("POSITION") || err.contains("Positions"), "{err}");
}
