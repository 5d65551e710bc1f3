//! A corpus of hostile and malformed glTF files, generated here from one valid file by class
//! (stride, component types, indices out of range, sparse bombs, URIs that leave the folder,
//! devices and FIFOs, cameras, hierarchies, truncated GLBs, control characters) and by random
//! byte damage. Every case must end in a clear error (or load, where the file is valid): no
//! panic, no hang, bounded memory, exit code 1 from the viewer.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use viewer::gltf_load::{load_path, load_path_with, LoadOptions};

fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("picking-vk-hostile-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One triangle: 3 positions (36 bytes) then 3 u16 indices (6 bytes, padded to 8).
fn triangle_bin() -> Vec<u8> {
    let mut bin = vec![];
    for p in [[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]] {
        for c in p {
            bin.extend(c.to_le_bytes());
        }
    }
    for i in [0u16, 1, 2, 0] {
        bin.extend(i.to_le_bytes());
    }
    bin
}

/// A valid glTF: one camera, one triangle mesh without normals, its buffer in `tri.bin`.
fn valid() -> Value {
    json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0, 1]}],
        "nodes": [{"mesh": 0, "name": "Tri"}, {"camera": 0, "translation": [0.3, 0.3, 3.0]}],
        "cameras": [{"type": "perspective", "perspective": {"yfov": 0.8, "znear": 0.1, "zfar": 100.0}}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0]},
            {"bufferView": 1, "componentType": 5123, "count": 3, "type": "SCALAR"}
        ],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 36},
            {"buffer": 0, "byteOffset": 36, "byteLength": 6}
        ],
        "buffers": [{"byteLength": 44, "uri": "tri.bin"}]
    })
}

/// Writes `doc` (and the triangle's buffer) into a fresh folder; returns the .gltf path.
fn write_case(name: &str, doc: &Value) -> PathBuf {
    let dir = folder(name);
    std::fs::write(dir.join("tri.bin"), triangle_bin()).unwrap();
    let path = dir.join("scene.gltf");
    std::fs::write(&path, serde_json::to_vec(doc).unwrap()).unwrap();
    path
}

/// A PNG of `w` x `h` opaque texels.
fn png_bytes(w: u32, h: u32) -> Vec<u8> {
    let mut out = vec![];
    image::RgbaImage::from_pixel(w, h, image::Rgba([200, 100, 50, 255])).write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png).unwrap();
    out
}

/// The valid file with its triangle given a material of `fields`.
fn material(fields: Value) -> Value {
    mutated(|d| {
        d["materials"] = json!([fields]);
        d["meshes"][0]["primitives"][0]["material"] = json!(0);
    })
}

/// The valid file with its triangle textured by `image` (an image object), and a third
/// buffer view past the buffer's end for image views to name.
fn textured(image: Value) -> Value {
    mutated(|d| {
        d["images"] = json!([image]);
        d["textures"] = json!([{"source": 0}]);
        d["materials"] = json!([{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}]);
        d["meshes"][0]["primitives"][0]["material"] = json!(0);
        d["bufferViews"].as_array_mut().unwrap().push(json!({"buffer": 0, "byteOffset": 40, "byteLength": 4000}));
    })
}

/// The valid file with node 0 skinned by `skin`.
fn skinned(skin: Value) -> Value {
    mutated(|d| {
        d["skins"] = json!([skin]);
        d["nodes"][0]["skin"] = json!(0);
    })
}

/// The valid file with one animation channel: sampler `input` and `output` accessors,
/// target node and path. Accessor 2 reads three of the positions' floats as key times (0, 1,
/// 0: not increasing); accessor 3 reads three others (0, 0, 0).
fn animated(input: usize, output: usize, node: usize, path: &str) -> Value {
    mutated(|d| {
        let accessors = d["accessors"].as_array_mut().unwrap();
        accessors.push(json!({"bufferView": 0, "byteOffset": 8, "componentType": 5126, "count": 3, "type": "SCALAR", "min": [0], "max": [1]}));
        accessors.push(json!({"bufferView": 0, "componentType": 5126, "count": 3, "type": "SCALAR", "min": [0], "max": [0]}));
        d["animations"] = json!([{
            "samplers": [{"input": if path == "rotation" { 3 } else { input }, "output": output}],
            "channels": [{"sampler": 0, "target": {"node": node, "path": path}}]
        }]);
    })
}

/// Adds `bytes` as a buffer of their own (a data URI), with a view and an accessor of
/// `count` elements of `ty` and component type `component` over them; returns the accessor's
/// index. `bounds`: its min and max.
fn add_accessor(d: &mut Value, bytes: &[u8], component: u32, count: usize, ty: &str, bounds: Option<(Value, Value)>) -> usize {
    let uri = format!("data:application/octet-stream;base64,{}", base64_engine::encode(bytes));
    let buffers = d["buffers"].as_array_mut().unwrap();
    buffers.push(json!({"byteLength": bytes.len(), "uri": uri}));
    let buffer = buffers.len() - 1;
    let views = d["bufferViews"].as_array_mut().unwrap();
    views.push(json!({"buffer": buffer, "byteLength": bytes.len()}));
    let view = views.len() - 1;
    let mut accessor = json!({"bufferView": view, "componentType": component, "count": count, "type": ty});
    if let Some((min, max)) = bounds {
        (accessor["min"], accessor["max"]) = (min, max);
    }
    let accessors = d["accessors"].as_array_mut().unwrap();
    accessors.push(accessor);
    accessors.len() - 1
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The valid file with node 0's translation animated over key times `times` (values 0), by
/// `channels` channels.
fn translated_at(times: &[f32], channels: usize) -> Value {
    mutated(|d| {
        let input = add_accessor(d, &f32_bytes(times), 5126, times.len(), "SCALAR", Some((json!([times[0]]), json!([times[times.len() - 1]]))));
        let output = add_accessor(d, &f32_bytes(&vec![0.0; 3 * times.len()]), 5126, times.len(), "VEC3", None);
        let channel = json!({"sampler": 0, "target": {"node": 0, "path": "translation"}});
        d["animations"] = json!([{"samplers": [{"input": input, "output": output}], "channels": vec![channel; channels]}]);
    })
}

fn mutated(f: impl FnOnce(&mut Value)) -> Value {
    let mut doc = valid();
    f(&mut doc);
    doc
}

/// The valid file with node 0 instanced (EXT_mesh_gpu_instancing) by the attributes
/// `attributes` returns, after adding their accessors.
fn instanced(attributes: impl FnOnce(&mut Value) -> Value) -> Value {
    mutated(|d| {
        let attributes = attributes(d);
        d["nodes"][0]["extensions"] = json!({"EXT_mesh_gpu_instancing": {"attributes": attributes}});
        d["extensionsUsed"] = json!(["EXT_mesh_gpu_instancing"]);
    })
}

/// The valid file with node 0's translation animated by `keys` key times and values, each
/// a sparse accessor with no buffer view: a few bytes of JSON that read as `keys` zeros.
fn sparse_animation(keys: u64) -> Value {
    mutated(|d| {
        let sparse = json!({"count": 1, "indices": {"bufferView": 1, "componentType": 5123}, "values": {"bufferView": 0}});
        let accessors = d["accessors"].as_array_mut().unwrap();
        accessors.push(json!({"componentType": 5126, "count": keys, "type": "SCALAR", "min": [0.0], "max": [1.0], "sparse": sparse}));
        accessors.push(json!({"componentType": 5126, "count": keys, "type": "VEC3", "sparse": sparse}));
        let channel = json!({"sampler": 0, "target": {"node": 0, "path": "translation"}});
        d["animations"] = json!([{"samplers": [{"input": 2, "output": 3}], "channels": [channel]}]);
    })
}

/// Every class of hostile file, with a word its error message must contain.
fn corpus() -> Vec<(&'static str, Value, &'static str)> {
    let sparse = |count: u64| {
        mutated(|d| {
            d["accessors"][0] = json!({"componentType": 5126, "count": count, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0],
                "sparse": {"count": 1, "indices": {"bufferView": 1, "componentType": 5123}, "values": {"bufferView": 0}}});
        })
    };
    // The positions substituted at `indices` (u16s in a second buffer) by the first ones.
    let sparse_indices = |indices: &[u16]| {
        let bytes: Vec<u8> = indices.iter().flat_map(|i| i.to_le_bytes()).collect();
        let (count, length) = (indices.len(), bytes.len());
        mutated(|d| {
            d["buffers"]
                .as_array_mut()
                .unwrap()
                .push(json!({"byteLength": length, "uri": format!("data:application/octet-stream;base64,{}", base64_engine::encode(&bytes))}));
            d["bufferViews"].as_array_mut().unwrap().push(json!({"buffer": 1, "byteLength": length}));
            d["accessors"][0]["sparse"] = json!({"count": count, "indices": {"bufferView": 2, "componentType": 5123}, "values": {"bufferView": 0}});
        })
    };
    vec![
        ("stride below the element", mutated(|d| d["bufferViews"][0]["byteStride"] = json!(8)), "byteStride"),
        ("float indices", mutated(|d| d["accessors"][1]["componentType"] = json!(5126)), "indices"),
        ("short indices", mutated(|d| d["accessors"][1]["componentType"] = json!(5122)), "indices"),
        (
            "u32 texcoords",
            mutated(|d| {
                d["accessors"].as_array_mut().unwrap().push(json!({"bufferView": 0, "componentType": 5125, "count": 3, "type": "VEC2"}));
                d["meshes"][0]["primitives"][0]["attributes"]["TEXCOORD_0"] = json!(2);
            }),
            "TexCoords",
        ),
        (
            "two-component colours",
            mutated(|d| {
                d["accessors"].as_array_mut().unwrap().push(json!({"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC2"}));
                d["meshes"][0]["primitives"][0]["attributes"]["COLOR_0"] = json!(2);
            }),
            "which Colors(0) may not be",
        ),
        (
            "unnormalized byte colours",
            mutated(|d| {
                d["accessors"].as_array_mut().unwrap().push(json!({"bufferView": 0, "componentType": 5121, "count": 3, "type": "VEC4"}));
                d["meshes"][0]["primitives"][0]["attributes"]["COLOR_0"] = json!(2);
            }),
            "which Colors(0) may not be",
        ),
        ("a field of view f32 cannot aim", mutated(|d| d["cameras"][0]["perspective"]["yfov"] = json!(1e-10)), "below 1e-6 radians"),
        ("position accessor past the list", mutated(|d| d["meshes"][0]["primitives"][0]["attributes"]["POSITION"] = json!(999)), "999"),
        ("non-UTF-8 percent URI", mutated(|d| d["buffers"][0]["uri"] = json!("%FF%FE.bin")), "UTF-8"),
        ("sparse 2^31 bomb", sparse(1 << 31), "over the limit"),
        ("sparse key times bomb", sparse_animation(1 << 40), "key times"),
        (
            "only a strip of two vertices",
            mutated(|d| {
                d["meshes"][0]["primitives"][0]["mode"] = json!(5);
                d["accessors"][1]["count"] = json!(2);
            }),
            "no triangle meshes",
        ),
        (
            "sparse count past the accessor's",
            mutated(|d| d["accessors"][0]["sparse"] = json!({"count": 4, "indices": {"bufferView": 1, "componentType": 5123}, "values": {"bufferView": 0}})),
            "sparse count 4",
        ),
        (
            "sparse values past their view",
            mutated(|d| {
                d["accessors"][0]["sparse"] =
                    json!({"count": 1, "indices": {"bufferView": 1, "componentType": 5123}, "values": {"bufferView": 0, "byteOffset": 28}})
            }),
            "sparse values need",
        ),
        (
            "sparse float indices",
            mutated(|d| d["accessors"][0]["sparse"] = json!({"count": 1, "indices": {"bufferView": 0, "componentType": 5126}, "values": {"bufferView": 0}})),
            "glTF",
        ),
        ("parent directory URI", mutated(|d| d["buffers"][0]["uri"] = json!("../../../../../../etc/passwd")), "scene's folder"),
        ("absolute URI", mutated(|d| d["buffers"][0]["uri"] = json!("/etc/passwd")), "absolute"),
        ("file URI", mutated(|d| d["buffers"][0]["uri"] = json!("file:///etc/passwd")), "absolute"),
        ("device URI", mutated(|d| d["buffers"][0]["uri"] = json!("/dev/zero")), "absolute"),
        ("index accessor past its view", mutated(|d| d["accessors"][1]["count"] = json!(30)), "bufferView 1"),
        ("index past the vertices", mutated(|d| d["accessors"][0]["count"] = json!(2)), "past its 2 vertices"),
        ("yfov zero", mutated(|d| d["cameras"][0]["perspective"]["yfov"] = json!(0.0)), "yfov"),
        ("znear negative", mutated(|d| d["cameras"][0]["perspective"]["znear"] = json!(-1.0)), "znear"),
        ("zfar below znear", mutated(|d| d["cameras"][0]["perspective"]["zfar"] = json!(0.05)), "zfar"),
        ("aspect zero", mutated(|d| d["cameras"][0]["perspective"]["aspectRatio"] = json!(0.0)), "aspectRatio"),
        ("glTF 1.0", mutated(|d| d["asset"]["version"] = json!("1.0")), "only glTF 2.x"),
        ("needs glTF 2.1", mutated(|d| d["asset"]["minVersion"] = json!("2.1")), "only glTF 2.x"),
        ("denormal yfov", mutated(|d| d["cameras"][0]["perspective"]["yfov"] = json!(1e-40)), "below 1e-6 radians"),
        ("a horizontal field of 1e-8 radians", mutated(|d| d["cameras"][0]["perspective"]["aspectRatio"] = json!(1e-8)), "horizontal field"),
        ("znear of 1e-38", mutated(|d| d["cameras"][0]["perspective"]["znear"] = json!(1e-38)), "cannot use"),
        (
            // Depths of about 1e-31: normal floats, but the rasterizer's depth slopes are not.
            "znear 1e-30 and zfar 1e30",
            mutated(|d| {
                d["cameras"][0]["perspective"]["znear"] = json!(1e-30);
                d["cameras"][0]["perspective"]["zfar"] = json!(1e30);
            }),
            "cannot use",
        ),
        ("camera of zero scale", mutated(|d| d["nodes"][1]["scale"] = json!([0.0, 0.0, 0.0])), "no view direction"),
        (
            // Decomposes to no rotation: which way is up is anyone's guess (an x axis of zero
            // scale likewise).
            "camera with parallel x and y axes",
            mutated(|d| d["nodes"][1] = json!({"camera": 0, "matrix": [0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0.3, 0.3, 3, 1]})),
            "two axes parallel",
        ),
        ("camera of zero x scale", mutated(|d| d["nodes"][1]["scale"] = json!([0.0, 1.0, 1.0])), "no view direction"),
        ("floats off their alignment in the buffer", mutated(|d| d["bufferViews"][0]["byteOffset"] = json!(2)), "not a multiple of its component size"),
        ("normalized float positions", mutated(|d| d["accessors"][0]["normalized"] = json!(true)), "normalized F32"),
        ("normalized indices", mutated(|d| d["accessors"][1]["normalized"] = json!(true)), "normalized"),
        (
            "a matrix beside a translation",
            mutated(|d| {
                d["nodes"][0]["matrix"] = json!([2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1]);
                d["nodes"][0]["translation"] = json!([1, 0, 0]);
            }),
            "both a matrix",
        ),
        ("a projective node matrix", mutated(|d| d["nodes"][0]["matrix"] = json!([1, 0, 0, 0.5, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1])), "affine"),
        (
            "transform finite in f64 only",
            mutated(|d| {
                d["nodes"] = json!([{"children": [1], "scale": [1e20, 1e20, 1e20]}, {"mesh": 0, "scale": [1e20, 1e20, 1e20]}, {"camera": 0, "translation": [0.3, 0.3, 3.0]}]);
                d["scenes"][0]["nodes"] = json!([0, 2]);
            }),
            "not finite",
        ),
        ("accessor names a missing view", mutated(|d| d["accessors"][0]["bufferView"] = json!(99)), "glTF"),
        ("view past its buffer", mutated(|d| d["bufferViews"][0]["byteLength"] = json!(400)), "buffer 0"),
        ("buffer longer than its file", mutated(|d| d["buffers"][0]["byteLength"] = json!(4000)), "holds 44"),
        (
            "two parents",
            mutated(|d| {
                d["nodes"] = json!([{"children": [2]}, {"children": [2]}, {"mesh": 0}]);
                d["scenes"][0]["nodes"] = json!([0, 1]);
            }),
            "at most one parent",
        ),
        (
            "cycle",
            mutated(|d| {
                d["nodes"] = json!([{"children": [1], "mesh": 0}, {"children": [0]}]);
                d["scenes"][0]["nodes"] = json!([0]);
            }),
            "cycle",
        ),
        (
            "a cycle no scene reaches",
            mutated(|d| {
                d["nodes"].as_array_mut().unwrap().extend([json!({"children": [3]}), json!({"children": [2]})]);
            }),
            "cycle",
        ),
        (
            "too deep",
            mutated(|d| {
                let mut nodes: Vec<Value> = (0..300).map(|i| json!({"children": [i + 1]})).collect();
                nodes.push(json!({"mesh": 0}));
                d["nodes"] = Value::Array(nodes);
                d["scenes"][0]["nodes"] = json!([0]);
            }),
            "deeper than 256",
        ),
        ("control characters in a URI", mutated(|d| d["buffers"][0]["uri"] = json!("a\u{1b}[31mred.bin")), "\\u{1b}"),
        ("image that is not PNG, JPEG or WebP", textured(json!({"uri": "data:image/png;base64,R0lGODlhAQABAAAAACw="})), "not a PNG, JPEG or WebP"),
        ("truncated PNG", textured(json!({"uri": format!("data:image/png;base64,{}", base64_engine::encode(&png_bytes(4, 4)[..30]))})), "does not decode"),
        (
            "PNG of 20000 x 1 texels",
            textured(json!({"uri": format!("data:image/png;base64,{}", base64_engine::encode(&png_bytes(20000, 1)))})),
            "larger than the limits",
        ),
        ("image view past its buffer", textured(json!({"bufferView": 2, "mimeType": "image/png"})), "lies outside its buffer"),
        ("image view without a mimeType", textured(json!({"bufferView": 2})), "needs a mimeType"),
        ("image with neither uri nor view", textured(json!({})), "neither a uri nor a bufferView"),
        ("image with both uri and view", textured(json!({"bufferView": 2, "mimeType": "image/png", "uri": "x.png"})), "both a uri and a bufferView"),
        (
            // A texture needs the coordinate set it names; the triangle has none.
            "texture coordinates the primitive lacks",
            textured(json!({"uri": format!("data:image/png;base64,{}", base64_engine::encode(&png_bytes(4, 4)))})),
            "TEXCOORD_0, which the primitive lacks",
        ),
        ("animation path that is no property", animated(2, 0, 0, "color"), "target path"),
        ("billboard size as a string", mutated(|d| d["nodes"][0]["extras"] = json!({"picking_vk_billboard": {"size": "1"}})), "size must be a number above 0"),
        (
            "billboard size past a million",
            mutated(|d| d["nodes"][0]["extras"] = json!({"picking_vk_billboard": {"size": 1e10}})),
            "at most 1000000, not 10000000000",
        ),
        ("sparse indices going back", sparse_indices(&[2, 1]), "increase strictly; 1 follows 2"),
        ("sparse indices repeated", sparse_indices(&[1, 1]), "increase strictly"),
        ("sparse index past the count", sparse_indices(&[0, 3]), "sparse index 3 is past its 3 elements"),
        ("image URI outside the folder", textured(json!({"uri": "../../../../etc/passwd"})), "scene's folder"),
        ("image URI is a device", textured(json!({"uri": "/dev/zero"})), "absolute"),
        (
            "texture names a missing image",
            mutated(|d| {
                d["textures"] = json!([{"source": 7}]);
                d["materials"] = json!([{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}]);
                d["meshes"][0]["primitives"][0]["material"] = json!(0);
            }),
            "glTF",
        ),
        ("alpha cutoff below zero", material(json!({"alphaMode": "MASK", "alphaCutoff": -0.5})), "alphaCutoff"),
        ("base colour outside 0..1", material(json!({"pbrMetallicRoughness": {"baseColorFactor": [2.0, 0.0, 0.0, 1.0]}})), "baseColorFactor"),
        ("empty document", json!({}), "glTF"),
        ("skin joint past the nodes", skinned(json!({"joints": [999]})), "joint 999 is not a node"),
        ("inverse bind matrices past the list", skinned(json!({"joints": [0], "inverseBindMatrices": 999})), "accessor 999"),
        ("skin past the list", mutated(|d| d["nodes"][0]["skin"] = json!(4)), "skin 4"),
        ("inverse bind matrices of vectors", skinned(json!({"joints": [0], "inverseBindMatrices": 0})), "inverseBindMatrices"),
        (
            // A projective inverse bind matrix (last row 0.5, 0, 0, 1), in a buffer of its own.
            "inverse bind matrix not affine",
            {
                let mut d = skinned(json!({"joints": [0], "inverseBindMatrices": 2}));
                let ibm = "AACAPwAAAAAAAAAAAAAAPwAAAAAAAIA/AAAAAAAAAAAAAAAAAAAAAAAAgD8AAAAAAAAAAAAAAAAAAAAAAACAPw==";
                d["buffers"].as_array_mut().unwrap().push(json!({"byteLength": 64, "uri": format!("data:application/octet-stream;base64,{ibm}")}));
                d["bufferViews"].as_array_mut().unwrap().push(json!({"buffer": 1, "byteLength": 64}));
                d["accessors"].as_array_mut().unwrap().push(json!({"bufferView": 2, "componentType": 5126, "count": 1, "type": "MAT4"}));
                d
            },
            "not (0, 0, 0, 1)",
        ),
        (
            "camera type without its projection object",
            mutated(|d| d["cameras"][0] = json!({"type": "perspective", "orthographic": {"xmag": 1, "ymag": 1, "znear": 0.1, "zfar": 10}})),
            "whose object it lacks",
        ),
        ("animation input past the list", animated(999, 0, 0, "translation"), "accessor 999"),
        ("animation target past the nodes", animated(2, 0, 999, "translation"), "node 999"),
        ("animation input of indices", animated(1, 0, 0, "translation"), "animation input"),
        ("animation key times going back", animated(2, 0, 0, "translation"), "increasing"),
        ("animation key times standing still", animated(3, 0, 0, "translation"), "strictly increasing"),
        ("animation rotation keys of three floats", animated(3, 0, 0, "rotation"), "animation output"),
        (
            "a rotation key of zeros",
            mutated(|d| {
                let input = add_accessor(d, &f32_bytes(&[0.0, 1.0]), 5126, 2, "SCALAR", Some((json!([0.0]), json!([1.0]))));
                let output = add_accessor(d, &f32_bytes(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]), 5126, 2, "VEC4", None);
                let channel = json!({"sampler": 0, "target": {"node": 0, "path": "rotation"}});
                d["animations"] = json!([{"samplers": [{"input": input, "output": output}], "channels": [channel]}]);
            }),
            "a rotation key is all zeros",
        ),
        (
            // Finite offsets, but the morphed vertex's clip coordinates would not be.
            "a morph target carrying a vertex past f32's range",
            mutated(|d| {
                let offsets = f32_bytes(&[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3e38, 0.0]);
                let target = add_accessor(d, &offsets, 5126, 3, "VEC3", Some((json!([0, 0, 0]), json!([0, 3e38, 0]))));
                d["meshes"][0]["primitives"][0]["targets"] = json!([{"POSITION": target}]);
                d["meshes"][0]["weights"] = json!([1.0]);
            }),
            "node 0: its morph weights carry its vertices past f32's range",
        ),
        (
            // glTF asks for one weight per target; an empty list is not that (nor is absent).
            "morph targets with an empty weights list",
            mutated(|d| {
                let target = add_accessor(d, &f32_bytes(&[0.0; 9]), 5126, 3, "VEC3", Some((json!([0, 0, 0]), json!([0, 0, 0]))));
                d["meshes"][0]["primitives"][0]["targets"] = json!([{"POSITION": target}]);
                d["meshes"][0]["weights"] = json!([]);
            }),
            "the mesh has 0 weights for 1 morph targets",
        ),
        // A megabyte-long URI is named by its first 200 characters and its length.
        ("a megabyte-long absolute URI", mutated(|d| d["buffers"][0]["uri"] = json!(format!("/{}", "a".repeat(1 << 20)))), "… (1048577 bytes)"),
        ("positions of count 0", mutated(|d| d["accessors"][0]["count"] = json!(0)), "count 0"),
        ("indices of count 0", mutated(|d| d["accessors"][1]["count"] = json!(0)), "count 0"),
        (
            // The data holds the whole triangle, but the buffer says it is 10 bytes long.
            "a data URI longer than its byteLength",
            mutated(|d| {
                use base64_engine::encode;
                d["buffers"][0] = json!({"byteLength": 10, "uri": format!("data:application/octet-stream;base64,{}", encode(&triangle_bin()))});
            }),
            "holds 10",
        ),
        (
            // A few megabytes naming one triangle 300,000 times: gigabytes once loaded.
            "300,000 primitives of one triangle",
            mutated(|d| d["meshes"][0]["primitives"] = Value::Array(vec![json!({"attributes": {"POSITION": 0}, "indices": 1}); 300_000])),
            "300000 primitives",
        ),
        (
            // EXT_mesh_gpu_instancing: 5 million instances from a sparse accessor of one value.
            "5,000,000 instances of one translation",
            instanced(|d| {
                let a = add_accessor(d, &f32_bytes(&[1.0, 0.0, 0.0]), 5126, 1, "VEC3", None);
                d["accessors"][a]["count"] = json!(5_000_000);
                let view = d["accessors"][a]["bufferView"].take();
                d["accessors"][a]["sparse"] = json!({"count": 1, "indices": {"bufferView": 1, "componentType": 5123}, "values": {"bufferView": view}});
                json!({"TRANSLATION": a})
            }),
            "5000000 EXT_mesh_gpu_instancing instances",
        ),
        ("an instance rotation of zeros", instanced(|d| json!({"ROTATION": add_accessor(d, &f32_bytes(&[0.0; 4]), 5126, 1, "VEC4", None)})), "not a rotation"),
        (
            "a NaN instance scale",
            instanced(|d| json!({"SCALE": add_accessor(d, &f32_bytes(&[1.0, f32::NAN, 1.0]), 5126, 1, "VEC3", None)})),
            "SCALE is not finite",
        ),
        (
            "an instance translation as unsigned bytes",
            instanced(|d| json!({"TRANSLATION": add_accessor(d, &[1, 2, 3, 0], 5121, 1, "VEC3", None)})),
            "TRANSLATION may not be",
        ),
        (
            "30,000 nodes drawing a mesh of 50 primitives",
            mutated(|d| {
                d["meshes"][0]["primitives"] = Value::Array(vec![json!({"attributes": {"POSITION": 0}, "indices": 1}); 50]);
                d["nodes"] = Value::Array((0..30_000).map(|_| json!({"mesh": 0})).collect());
                d["scenes"][0]["nodes"] = json!([0]);
            }),
            "1500000 node draws",
        ),
    ]
}

#[test]
fn every_hostile_class_is_a_clear_error() {
    for (name, doc, expect) in corpus() {
        let path = write_case(&name.replace(' ', "-"), &doc);
        let started = Instant::now();
        let result = load_path(&path);
        assert!(started.elapsed() < Duration::from_secs(5), "{name}: took {:?}", started.elapsed());
        let message = match result {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{name}: loaded, but must be refused"),
        };
        assert!(message.contains(expect), "{name}: {message:?} should mention {expect:?}");
        assert!(message.len() < 2048, "{name}: a message of {} bytes", message.len());
        assert!(!message.contains("reader failed"), "{name}: validation must catch it before the glTF reader panics: {message:?}");
        assert!(!message.contains('\u{1b}') && !message.contains("root:"), "{name}: {message:?} leaks raw bytes or another file");
    }
}

#[test]
fn fifos_folders_and_outside_links_are_not_read() {
    let dir = folder("special");
    let fifo = dir.join("pipe.bin");
    let _ = std::fs::remove_file(&fifo);
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    std::fs::create_dir_all(dir.join("sub.bin")).unwrap();
    let link = dir.join("link.bin");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink("/etc/hostname", &link).unwrap();
    for (uri, expect) in [("pipe.bin", "not a regular file"), ("sub.bin", "not a regular file"), ("link.bin", "outside the scene's folder")] {
        let doc = mutated(|d| d["buffers"][0]["uri"] = json!(uri));
        let path = dir.join(format!("{uri}.gltf"));
        std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
        let started = Instant::now();
        let err = load_path(&path).err().unwrap_or_else(|| panic!("{uri} must be refused")).to_string();
        assert!(err.contains(expect), "{uri}: {err}");
        assert!(started.elapsed() < Duration::from_secs(5), "{uri} blocked");
    }
    // Allowed explicitly, a file outside the folder is read (at most byteLength bytes).
    let outside = folder("outside").join("tri.bin");
    std::fs::write(&outside, triangle_bin()).unwrap();
    let doc = mutated(|d| d["buffers"][0]["uri"] = json!(outside.to_str().unwrap()));
    let path = dir.join("outside.gltf");
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    assert!(load_path(&path).is_err());
    assert!(load_path_with(&path, &LoadOptions { allow_external_uris: true, ..LoadOptions::default() }).is_ok());
}

#[test]
fn the_budget_counts_what_loading_allocates() {
    // 3,000 one-byte indices over the triangle's 3 vertices: about 3 KB in the file, but
    // 12 KB of u32 indices and 72 KB of flat-shaded vertices once read.
    let dir = folder("budget");
    let mut bin = triangle_bin()[..36].to_vec();
    bin.extend((0..3000).map(|i| (i % 3) as u8));
    std::fs::write(dir.join("tri.bin"), &bin).unwrap();
    let doc = mutated(|d| {
        d["accessors"][1] = json!({"bufferView": 1, "componentType": 5121, "count": 3000, "type": "SCALAR"});
        d["bufferViews"][1] = json!({"buffer": 0, "byteOffset": 36, "byteLength": 3000});
        d["buffers"][0]["byteLength"] = json!(bin.len());
    });
    let path = dir.join("scene.gltf");
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    let budget = |max_bytes| load_path_with(&path, &LoadOptions { max_bytes, ..LoadOptions::default() });
    let err = budget(20_000).expect_err("over the budget").to_string();
    assert!(err.contains("too large") && err.contains("once read"), "{err}");
    assert!(budget(200_000).is_ok());
}

/// What reading allocates beyond the accessors as written is held to the budget: strips and
/// fans made lists, flat-shaded corners with their morph deltas, targets without POSITION
/// (zeros a vertex), node weights; skin matrices are read only for the joints.
#[test]
fn budgets_count_what_reading_allocates() {
    let budget = |doc: &Value, name: &str, max_bytes| load_path_with(&write_case(name, doc), &LoadOptions { max_bytes, ..LoadOptions::default() });
    // A strip of 3,000 u8 indices: 2,998 triangles, 8,994 corners, each with its own vertex.
    let strip = mutated(|d| {
        let indices: Vec<u8> = (0..3000).map(|i| (i % 3) as u8).collect();
        let at = add_accessor(d, &indices, 5121, 3000, "SCALAR", None);
        d["meshes"][0]["primitives"][0]["indices"] = json!(at);
        d["meshes"][0]["primitives"][0]["mode"] = json!(5);
    });
    let err = budget(&strip, "budget-strip", 150_000).expect_err("a strip's corners").to_string();
    assert!(err.contains("once read"), "{err}");
    assert_eq!(budget(&strip, "budget-strip", 400_000).expect("within the budget").meshes[0].primitives[0].positions.len(), 8994);
    // 1,000 morph targets without POSITION on the flat-shaded triangle.
    let targets = mutated(|d| d["meshes"][0]["primitives"][0]["targets"] = Value::Array(vec![json!({}); 1000]));
    let err = budget(&targets, "budget-targets", 50_000).expect_err("targets of zeros").to_string();
    assert!(err.contains("once read"), "{err}");
    assert_eq!(budget(&targets, "budget-targets", 200_000).expect("within the budget").meshes[0].primitives[0].morph_targets.len(), 1000);
    // A skin whose inverse bind matrices claim 2^40 (sparse, no buffer view): one is read.
    let skinned = mutated(|d| {
        let identity = f32_bytes(&glam::Mat4::IDENTITY.to_cols_array());
        let at = add_accessor(d, &identity, 5126, 1, "MAT4", None);
        let sparse = json!({"count": 1, "indices": {"bufferView": 1, "componentType": 5123}, "values": {"bufferView": d["accessors"][at]["bufferView"]}});
        d["accessors"][at] = json!({"componentType": 5126, "count": 1u64 << 40, "type": "MAT4", "sparse": sparse});
        d["skins"] = json!([{"joints": [1], "inverseBindMatrices": at}]);
        d["nodes"][0]["skin"] = json!(0);
    });
    let scene = load_path(&write_case("budget-skin", &skinned)).expect("a skin of one joint");
    assert_eq!(scene.skins[0].inverse_bind.len(), 1);
    // JSON read whole as a tree (here for the compression extensions, which a node's name
    // seems to name): 32 bytes a byte of text.
    let named = mutated(|d| d["nodes"][0]["name"] = json!("KHR_draco_mesh_compression"));
    let text = serde_json::to_vec(&named).unwrap().len() as u64;
    let err = budget(&named, "budget-json", 25 * text).expect_err("a tree past the budget").to_string();
    assert!(err.contains("bytes of JSON"), "{err}");
    assert!(budget(&named, "budget-json", 40 * text + 20_000).is_ok());
    // Animations: key times and values are charged before they are read.
    // (10,000 key times of 0: read within the budget, then refused as not increasing.)
    let animated = sparse_animation(10_000);
    let err = budget(&animated, "budget-animation", 200_000).expect_err("key times of 0").to_string();
    assert!(err.contains("strictly increasing"), "{err}");
    let err = budget(&animated, "budget-animation", 45_000).expect_err("40 KB of key times").to_string();
    assert!(err.contains("animation 0 channel 0") && err.contains("once read"), "{err}");
}

/// A small file whose one mesh of a million points (sparse accessors without a buffer view)
/// 20,000 nodes draw loads in bounded time: framing the scene visited every point for every
/// node (2e10 transforms).
#[test]
fn many_nodes_of_a_large_sparse_mesh_load_in_bounded_time() {
    let doc = mutated(|d| {
        let sparse = json!({"count": 1, "indices": {"bufferView": 1, "componentType": 5123}, "values": {"bufferView": 0}});
        let count = 1 << 20;
        d["accessors"][0] = json!({"componentType": 5126, "count": count, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0], "sparse": sparse});
        d["accessors"].as_array_mut().unwrap().push(json!({"componentType": 5126, "count": count, "type": "VEC3", "sparse": sparse}));
        d["meshes"][0]["primitives"][0]["attributes"]["NORMAL"] = json!(2);
        let nodes = d["nodes"].as_array_mut().unwrap();
        nodes.extend((0..20_000).map(|i| json!({"mesh": 0, "translation": [i % 200, i / 200, 0], "rotation": [0.0, 0.38268343, 0.0, 0.9238795]})));
        d["scenes"][0]["nodes"] = Value::Array((0..20_002).map(|n| json!(n)).collect());
        d["nodes"][1]["translation"] = json!([100.0, 50.0, 400.0]);
    });
    let start = Instant::now();
    let scene = load_path(&write_case("many-nodes-sparse", &doc)).expect("a valid scene");
    assert_eq!(scene.nodes.len(), 20_002);
    let took = start.elapsed();
    assert!(took < Duration::from_secs(60), "{took:?}");
}

/// 20,000 accessors whose sparse substitutions share one view of a million indices load in
/// bounded time: each had its indices read anew (2e10 reads); so do 20,000 skins no node uses.
#[test]
fn accessors_sharing_sparse_indices_and_unused_skins_load_in_bounded_time() {
    let n = 1u32 << 20;
    let doc = mutated(|d| {
        let indices: Vec<u8> = (0..n).flat_map(|i| i.to_le_bytes()).collect();
        let at = add_accessor(d, &indices, 5125, n as usize, "SCALAR", None);
        let values = add_accessor(d, &vec![0u8; n as usize], 5121, n as usize, "SCALAR", None);
        let (index_view, value_view) = (d["accessors"][at]["bufferView"].clone(), d["accessors"][values]["bufferView"].clone());
        let sparse = json!({"count": n, "indices": {"bufferView": index_view, "componentType": 5125}, "values": {"bufferView": value_view}});
        let accessors = d["accessors"].as_array_mut().unwrap();
        accessors.extend((0..20_000).map(|_| json!({"componentType": 5121, "count": n, "type": "SCALAR", "sparse": sparse})));
        d["skins"] = Value::Array(vec![json!({"joints": [1]}); 20_000]);
    });
    let start = Instant::now();
    load_path(&write_case("shared-sparse", &doc)).expect("a valid scene");
    let took = start.elapsed();
    assert!(took < Duration::from_secs(60), "{took:?}");
}

#[test]
fn an_image_shared_by_textures_is_decoded_and_counted_once() {
    // One 256x256 image (256 KiB decoded) sampled by four textures, each a material's: a
    // budget of one and a half images holds it, as it would one texture.
    let png = format!("data:image/png;base64,{}", base64_engine::encode(&png_bytes(256, 256)));
    let doc = mutated(|d| {
        d["images"] = json!([{"uri": png}]);
        d["samplers"] = json!([{"magFilter": 9728}, {"magFilter": 9729}]);
        d["textures"] = json!([{"source": 0}, {"source": 0, "sampler": 0}, {"source": 0, "sampler": 1}, {"source": 0}]);
        d["materials"] = Value::Array((0..4).map(|t| json!({"pbrMetallicRoughness": {"baseColorTexture": {"index": t}}})).collect());
        d["meshes"][0]["primitives"][0]["material"] = json!(0);
        d["accessors"].as_array_mut().unwrap().push(json!({"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC2"}));
        d["meshes"][0]["primitives"][0]["attributes"]["TEXCOORD_0"] = json!(2);
    });
    let path = write_case("shared-image", &doc);
    let options = LoadOptions { max_bytes: 400 << 10, ..LoadOptions::default() };
    let scene = load_path_with(&path, &options).expect("one image's texels fit");
    assert_eq!(scene.textures.len(), 4);
    assert!(scene.textures.windows(2).all(|t| std::sync::Arc::ptr_eq(&t[0].rgba, &t[1].rgba)), "one copy of the texels");
}

#[test]
fn many_textures_of_one_image_upload_it_once() {
    // One 4096x4096 image (64 MiB decoded, a few KiB as PNG) behind 100 textures, each the
    // base colour of its own triangle's material: uploaded per texture that took 6.4 GiB (and
    // the process was killed); shared, the run stays under a 3 GB address space.
    let png = format!("data:image/png;base64,{}", base64_engine::encode(&png_bytes(4096, 4096)));
    let n = 100;
    let doc = mutated(|d| {
        d["images"] = json!([{"uri": png}]);
        d["samplers"] = json!([{"magFilter": 9728}, {"magFilter": 9729}]);
        d["textures"] = Value::Array((0..n).map(|t| json!({"source": 0, "sampler": t % 2})).collect());
        d["materials"] = Value::Array((0..n).map(|t| json!({"pbrMetallicRoughness": {"baseColorTexture": {"index": t}}})).collect());
        d["accessors"].as_array_mut().unwrap().push(json!({"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC2"}));
        let prim = |m: usize| json!({"attributes": {"POSITION": 0, "TEXCOORD_0": 2}, "indices": 1, "material": m});
        d["meshes"] = Value::Array((0..n).map(|m| json!({"primitives": [prim(m)]})).collect());
        let mut nodes: Vec<Value> = (0..n).map(|m| json!({"mesh": m, "translation": [m as f64 * 0.001, 0.0, 0.0]})).collect();
        nodes.push(json!({"camera": 0, "translation": [0.3, 0.3, 3.0]}));
        d["nodes"] = Value::Array(nodes);
        d["scenes"] = json!([{"nodes": (0..=n).collect::<Vec<usize>>()}]);
    });
    let path = write_case("one-image-many-textures", &doc);
    let dir = path.parent().unwrap();
    std::fs::write(dir.join("picks.json"), "[[160, 120]]").unwrap();
    let run = Command::new("prlimit")
        .args(["--as=3000000000", "--cpu=60", "--"])
        .arg(env!("CARGO_BIN_EXE_viewer"))
        .arg(&path)
        .args(["--headless", "--size", "320x240", "--pick-file", dir.join("picks.json").to_str().unwrap(), "--json", dir.join("out.json").to_str().unwrap()])
        .output()
        .expect("run the viewer");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    let records: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("out.json")).unwrap()).unwrap();
    assert_eq!(records[0]["hit"], json!(true), "{records}");
}

#[test]
fn a_huge_name_is_kept_cut_not_copied_into_every_record() {
    let long = "é".repeat(300_000);
    let scene = load_path(&write_case("long-name", &mutated(|d| d["nodes"][0]["name"] = json!(long)))).unwrap();
    let kept = scene.nodes[0].name.as_deref().unwrap();
    assert!(kept.len() <= viewer::gltf_load::MAX_NAME_BYTES + '…'.len_utf8() && kept.ends_with('…'), "{} bytes", kept.len());
    assert!(long.starts_with(kept.trim_end_matches('…')), "cut at a character boundary, from the start");
    let short = load_path(&write_case("short-name", &mutated(|d| d["nodes"][0]["name"] = json!("é".repeat(512))))).unwrap();
    assert_eq!(short.nodes[0].name.as_deref(), Some("é".repeat(512).as_str()), "a name of 1024 bytes is kept whole");
}

/// Found by a read-only audit of the loader (stop 66): allocations a small file could make
/// before the budget was checked, and a reader panic where a warning was promised.
#[test]
fn what_the_audit_found_is_refused_early_or_warned() {
    // The error's text (a scene that loads is not printed: it can be large).
    let budget = |doc: &Value, name: &str, max_bytes| {
        load_path_with(&write_case(name, doc), &LoadOptions { max_bytes, ..LoadOptions::default() }).err().map(|e| e.to_string())
    };
    // 300,000 nodes of `{}`: under 1 MB of text, some 180 MB parsed. Refused before parsing.
    let nodes = mutated(|d| d["nodes"] = Value::Array(vec![json!({}); 300_000]));
    let started = Instant::now();
    let err = budget(&nodes, "audit-nodes", 8 << 20).expect("nodes past the budget are refused");
    assert!(err.contains("300000 nodes") && err.contains("once parsed"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    // A skin of 100,000 joints without inverse bind matrices (2 bytes of text a joint): its
    // identities and palette are charged before they are built.
    let joints = mutated(|d| {
        d["skins"] = json!([{"joints": vec![1; 100_000]}]);
        d["nodes"][0]["skin"] = json!(0);
    });
    let err = budget(&joints, "audit-joints", 4 << 20).expect("joints past the budget are refused");
    assert!(err.contains("100000 joints"), "{err}");
    // A third set of joints as floats (glTF allows only unsigned integers) beside a valid first
    // set: not read, with a warning, instead of the glTF reader's panic.
    let extra_set = mutated(|d| {
        let joints = add_accessor(d, &[0u8; 12], 5121, 3, "VEC4", None);
        let weights = add_accessor(d, &f32_bytes(&[1.0, 0.0, 0.0, 0.0].repeat(3)), 5126, 3, "VEC4", None);
        let floats = add_accessor(d, &f32_bytes(&[0.0; 12]), 5126, 3, "VEC4", None);
        let attributes = &mut d["meshes"][0]["primitives"][0]["attributes"];
        (attributes["JOINTS_0"], attributes["WEIGHTS_0"], attributes["JOINTS_2"]) = (json!(joints), json!(weights), json!(floats));
        d["skins"] = json!([{"joints": [1]}]);
        d["nodes"][0]["skin"] = json!(0);
    });
    let scene = load_path(&write_case("audit-joints-2", &extra_set)).expect("loads, JOINTS_2 left out");
    assert_eq!(scene.meshes[0].primitives[0].skin.len(), 1, "one set of influences read");
    // 2,000 sparse accessors over one view of 20,000 increasing indices, each 2 bytes further
    // in: no two share a key, so each was read whole (40 MB for 40 KB of indices).
    let shifted = mutated(|d| {
        let indices: Vec<u8> = (0..20_000u16).flat_map(u16::to_le_bytes).collect();
        let view = d["bufferViews"].as_array().unwrap().len();
        add_accessor(d, &indices, 5123, 20_000, "SCALAR", None);
        for k in 0..2_000 {
            let sparse = json!({"count": 10_000, "indices": {"bufferView": view, "byteOffset": 2 * k, "componentType": 5123}, "values": {"bufferView": 0}});
            d["accessors"].as_array_mut().unwrap().push(json!({"componentType": 5126, "count": 30_000, "type": "SCALAR", "sparse": sparse}));
        }
    });
    let err = budget(&shifted, "audit-sparse", 1 << 30).expect("indices read past twice the buffers are refused");
    assert!(err.contains("sparse accessors' indices"), "{err}");
    // A file whose size says 0 but that reads on (as /proc/self/pagemap does, 8 bytes a page
    // of the address space) is read up to the limit, not past it: here the process's command
    // line, over 8 bytes.
    let err = match load_path_with(Path::new("/proc/self/cmdline"), &LoadOptions { max_bytes: 8, ..LoadOptions::default() }) {
        Ok(_) => panic!("a file past the limit loaded"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("over 8 bytes"), "{err}");
}

#[test]
fn valid_files_that_were_refused_load() {
    // Extras of any JSON type, and names with control characters (kept, escaped when printed).
    let doc = mutated(|d| {
        d["nodes"][0]["extras"] = json!([1, "two", {"three": 3}]);
        d["nodes"][0]["name"] = json!("Tri\u{7}angle");
    });
    let scene = load_path(&write_case("extras", &doc)).unwrap();
    assert_eq!(scene.nodes[0].name.as_deref(), Some("Tri\u{7}angle"));
    // Vertices past the last whole primitive (which the Khronos validator only warns of) are
    // left out: four indices draw one triangle, three vertices as lines one segment.
    let leftover = mutated(|d| {
        d["accessors"][1]["count"] = json!(4);
        d["bufferViews"][1]["byteLength"] = json!(8);
    });
    let trimmed = load_path(&write_case("leftover-index", &leftover)).expect("loads, the last index left out");
    let drawn = |p: &picking_vk_host::Primitive| p.indices.as_ref().map_or(p.positions.len(), Vec::len);
    assert_eq!(drawn(&trimmed.meshes[0].primitives[0]), 3);
    let lines = mutated(|d| {
        d["meshes"][0]["primitives"][0] = json!({"attributes": {"POSITION": 0}, "mode": 1});
    });
    let trimmed = load_path(&write_case("leftover-line-vertex", &lines)).expect("loads, the third vertex left out");
    assert_eq!(drawn(&trimmed.meshes[0].primitives[0]), 2);
    assert_eq!(viewer::gltf_load::printable("Tri\u{7}angle"), "Tri\\u{7}angle");
    // Without NORMAL, the normals are the triangle's own (flat), as glTF 2.0 requires.
    let prim = &scene.meshes[0].primitives[0];
    assert!(prim.normals.iter().all(|n| (n.z - 1.0).abs() < 1e-6), "{:?}", prim.normals);
    // A data URI buffer.
    let doc = mutated(|d| {
        use base64_engine::encode;
        d["buffers"][0]["uri"] = json!(format!("data:application/octet-stream;base64,{}", encode(&triangle_bin())));
    });
    assert!(load_path(&write_case("data-uri", &doc)).is_ok());
    // Required extensions that change only shading, or add lights: the same geometry is drawn
    // and picked. One the viewer cannot read (WebP textures) is still refused by name.
    let shaded = |required: Value| {
        mutated(|d| {
            d["materials"] = json!([{"extensions": {"KHR_materials_unlit": {}, "KHR_materials_emissive_strength": {"emissiveStrength": 2.0}}}]);
            d["meshes"][0]["primitives"][0]["material"] = json!(0);
            d["extensions"] = json!({"KHR_lights_punctual": {"lights": [{"type": "point"}]}});
            d["extensionsUsed"] = json!(["KHR_materials_unlit", "KHR_materials_emissive_strength", "KHR_lights_punctual", "EXT_texture_webp"]);
            d["extensionsRequired"] = required;
        })
    };
    let scene =
        load_path(&write_case("shading-only", &shaded(json!(["KHR_materials_unlit", "KHR_materials_emissive_strength", "KHR_lights_punctual"])))).unwrap();
    assert_eq!(scene.meshes[0].primitives[0].triangle_count(), 1);
    // EXT_texture_webp is read (the texture's image chosen by `texture_sources`); a required
    // extension the viewer does not read is refused by name.
    load_path(&write_case("webp-required", &shaded(json!(["KHR_materials_unlit", "EXT_texture_webp"])))).expect("EXT_texture_webp is read");
    let err = load_path(&write_case("gloss-required", &shaded(json!(["KHR_materials_unlit", "KHR_materials_pbrSpecularGlossiness"]))))
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(err.contains("requires KHR_materials_pbrSpecularGlossiness") && !err.contains("KHR_materials_unlit"), "{err}");
    // Strips and fans are drawn and picked as the triangles glTF makes of them.
    for (mode, name) in [(5, "strip"), (6, "fan")] {
        let scene = load_path(&write_case(name, &mutated(|d| d["meshes"][0]["primitives"][0]["mode"] = json!(mode)))).unwrap();
        let prim = &scene.meshes[0].primitives[0];
        assert_eq!((prim.topology, prim.triangle_count()), (picking_vk::draw::Topology::TriangleList, 1), "{name}");
    }
    // A skin that only another scene's nodes use is not read (its joints are not shown).
    let doc = mutated(|d| {
        d["nodes"].as_array_mut().unwrap().extend([json!({"mesh": 0, "skin": 0, "children": [3]}), json!({})]);
        d["scenes"].as_array_mut().unwrap().push(json!({"nodes": [2]}));
        d["skins"] = json!([{"joints": [3]}]);
    });
    assert!(load_path(&write_case("other-scene-skin", &doc)).is_ok());
    // What exporters write against glTF's rules but can be shown loads, with a warning: keys
    // before 0 s, a second channel on one property (the first plays), and unweighted joint
    // indices past the skin (read as joint 0, so no shader reads past the palette).
    assert!(load_path(&write_case("keys-before-0", &translated_at(&[-1.0, 0.5, 1.0], 1))).is_ok());
    let scene = load_path(&write_case("two-channels-one-property", &translated_at(&[0.0, 1.0], 2))).unwrap();
    assert_eq!(scene.animations[0].channels.len(), 1);
    let weighted = |pad: f32| {
        mutated(|d| {
            let joints: Vec<u8> = [0, 0, 0, 200].repeat(3);
            let joints = add_accessor(d, &joints, 5121, 3, "VEC4", None);
            let weights = add_accessor(d, &f32_bytes(&[1.0, 0.0, 0.0, pad].repeat(3)), 5126, 3, "VEC4", None);
            let attributes = &mut d["meshes"][0]["primitives"][0]["attributes"];
            (attributes["JOINTS_0"], attributes["WEIGHTS_0"]) = (json!(joints), json!(weights));
            d["nodes"].as_array_mut().unwrap().push(json!({"name": "joint"}));
            d["scenes"][0]["nodes"].as_array_mut().unwrap().push(json!(2));
            d["skins"] = json!([{"joints": [2]}]);
            d["nodes"][0]["skin"] = json!(0);
        })
    };
    let scene = load_path(&write_case("unweighted-joint-past-the-skin", &weighted(0.0))).unwrap();
    assert!(scene.meshes[0].primitives[0].skin[0].joints.iter().flatten().all(|&j| j == 0), "padding reads joint 0");
    let err = load_path(&write_case("weighted-joint-past-the-skin", &weighted(0.5))).unwrap_err().to_string();
    assert!(err.contains("names joint 200, but skin 0 has 1 joints"), "{err}");
    // A scene without a node list is an empty scene (glTF leaves the list optional).
    let doc = mutated(|d| d["scenes"] = json!([{"name": "empty"}]));
    let scene = load_path(&write_case("scene-without-nodes", &doc)).unwrap();
    assert!(scene.nodes.is_empty(), "nothing is drawn");
    // A channel whose target names no node (an extension would say what it animates) is
    // dropped; the others still play.
    let doc = mutated(|d| {
        let input = add_accessor(d, &f32_bytes(&[0.0, 1.0]), 5126, 2, "SCALAR", Some((json!([0.0]), json!([1.0]))));
        let output = add_accessor(d, &f32_bytes(&[0.0, 0.0, 0.0, 2.0, 0.0, 0.0]), 5126, 2, "VEC3", None);
        let channels = json!([{"sampler": 0, "target": {"path": "translation"}}, {"sampler": 0, "target": {"node": 0, "path": "translation"}}]);
        d["animations"] = json!([{"samplers": [{"input": input, "output": output}], "channels": channels}]);
    });
    let scene = load_path(&write_case("channel-without-node", &doc)).unwrap();
    assert_eq!(scene.animations[0].channels.len(), 1, "the channel with a node is read");
    // Sparse positions (how Blender can write shape keys): the base, then the substitutions.
    // Index 2 (the third u16 index, 2) takes the second vertex, (1, 0, 0); on a base of zeros
    // (no bufferView), the other vertices are the origin.
    for (name, base) in [("sparse-over-base", Some(0)), ("sparse-over-zeros", None)] {
        let doc = mutated(|d| {
            d["accessors"][0]["sparse"] =
                json!({"count": 1, "indices": {"bufferView": 1, "byteOffset": 4, "componentType": 5123}, "values": {"bufferView": 0, "byteOffset": 12}});
            if base.is_none() {
                d["accessors"][0].as_object_mut().unwrap().remove("bufferView");
            }
        });
        let scene = load_path(&write_case(name, &doc)).unwrap();
        let positions = &scene.meshes[0].primitives[0].positions;
        let second = if base.is_some() { glam::Vec3::X } else { glam::Vec3::ZERO };
        assert_eq!(positions[..], [glam::Vec3::ZERO, second, glam::Vec3::X], "{name}");
    }
}

/// Base64 without a dependency: the test encodes what the loader decodes.
mod base64_engine {
    pub fn encode(bytes: &[u8]) -> String {
        const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
            let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
            for k in 0..4 {
                if k <= chunk.len() {
                    out.push(TABLE[(n >> (18 - 6 * k) & 63) as usize] as char);
                } else {
                    out.push('=');
                }
            }
        }
        out
    }
}

#[test]
fn truncated_and_damaged_files_never_panic() {
    // The valid scene as a GLB (the viewer's own writer), then every truncation point of its
    // header and a random sample of byte flips and cuts of the whole.
    let glb = viewer::default_scene::build().to_glb();
    let dir = folder("damaged");
    let mut cases: Vec<Vec<u8>> = (0..64).map(|n| glb[..n.min(glb.len())].to_vec()).collect();
    // 150 damaged copies a seed (`PICKING_VK_TEST_SEEDS` for more).
    for seed in picking_vk_tests::harness::seeds(1234..1235) {
        let mut rng = fastrand::Rng::with_seed(seed);
        for _ in 0..150 {
            let mut bytes = glb.clone();
            match rng.u8(..3) {
                0 => bytes.truncate(rng.usize(..bytes.len())),
                1 => {
                    for _ in 0..rng.usize(1..8) {
                        let at = rng.usize(..bytes.len().min(4096));
                        bytes[at] = rng.u8(..);
                    }
                }
                _ => {
                    let at = rng.usize(..bytes.len());
                    bytes[at] ^= 1 << rng.u8(..8);
                }
            }
            cases.push(bytes);
        }
    }
    let (mut refused, mut loaded) = (0, 0);
    for (i, bytes) in cases.iter().enumerate() {
        let path = dir.join(format!("case{i}.glb"));
        std::fs::write(&path, bytes).unwrap();
        match load_path(&path) {
            Ok(_) => loaded += 1,
            Err(e) => {
                refused += 1;
                assert!(!e.to_string().is_empty());
            }
        }
    }
    eprintln!("damaged files: {refused} refused, {loaded} still valid");
    assert!(refused > cases.len() / 2);
}

/// The viewer itself: exit code 1 with its message, no panic, bounded time and memory.
#[test]
fn the_viewer_exits_1_on_hostile_files_within_bounded_time_and_memory() {
    let out = folder("never");
    for (name, doc, expect) in
        corpus().into_iter().filter(|(n, ..)| ["sparse 2^31 bomb", "sparse key times bomb", "float indices", "device URI", "two parents"].contains(n))
    {
        let path = write_case(&format!("cli-{}", name.replace(' ', "-")), &doc);
        let run = Command::new("prlimit")
            .args(["--as=2000000000", "--cpu=20", "--"])
            .arg(env!("CARGO_BIN_EXE_viewer"))
            .args([path.to_str().unwrap(), "--headless", "--demo", "--out", out.to_str().unwrap()])
            .output()
            .expect("run the viewer");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{name}: {stderr}");
        assert!(stderr.contains("viewer: error:") && stderr.contains(expect), "{name}: {stderr}");
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    }
    assert!(!Path::new(&out).join("picks.json").exists(), "nothing is written for a refused scene");
}

/// The valid file with a CUBICSPLINE translation of `node` from x = 3e38 back to 3e38 whose
/// tangents make it overshoot past f32's range between the keys (3.75e38 at 0.5 s), with
/// `extra` done to the file (a skin, say).
fn overshooting(node: usize, extra: impl FnOnce(&mut Value)) -> Value {
    mutated(|d| {
        let input = add_accessor(d, &f32_bytes(&[0.0, 1.0]), 5126, 2, "SCALAR", Some((json!([0.0]), json!([1.0]))));
        // Per key: in-tangent, value, out-tangent.
        let keys = [0.0, 0.0, 0.0, 3e38, 0.0, 0.0, 3e38, 0.0, 0.0, -3e38, 0.0, 0.0, 3e38, 0.0, 0.0, 0.0, 0.0, 0.0];
        let output = add_accessor(d, &f32_bytes(&keys), 5126, 6, "VEC3", None);
        let channel = json!({"sampler": 0, "target": {"node": node, "path": "translation"}});
        d["animations"] = json!([{"samplers": [{"input": input, "output": output, "interpolation": "CUBICSPLINE"}], "channels": [channel]}]);
        extra(d);
    })
}

#[test]
fn poses_past_f32s_range_between_keys_are_refused_not_shown_at_rest() {
    // Found by fuzz round 15: a node, the camera or a skin's joint posed past f32's range kept
    // its last good (rest) transform, and was drawn and picked there at `--time` without a word.
    let joint = |d: &mut Value| {
        d["nodes"].as_array_mut().unwrap().push(json!({"name": "Joint"}));
        d["scenes"][0]["nodes"].as_array_mut().unwrap().push(json!(2));
        let joints = add_accessor(d, &[0u8, 0, 0, 0].repeat(3), 5121, 3, "VEC4", None);
        let weights = add_accessor(d, &f32_bytes(&[1.0, 0.0, 0.0, 0.0].repeat(3)), 5126, 3, "VEC4", None);
        d["meshes"][0]["primitives"][0]["attributes"]["JOINTS_0"] = json!(joints);
        d["meshes"][0]["primitives"][0]["attributes"]["WEIGHTS_0"] = json!(weights);
        d["skins"] = json!([{"joints": [2]}]);
        d["nodes"][0]["skin"] = json!(0);
    };
    let cases: [(&str, Value, &str); 3] = [
        ("overshooting-node", overshooting(0, |_| {}), "node 0: its pose puts it past f32's range"),
        ("overshooting-camera", overshooting(1, |_| {}), "node 1: its pose puts its camera past f32's range"),
        ("overshooting-joint", overshooting(2, joint), "skin 0: its pose puts its joint matrices past f32's range"),
    ];
    for (name, doc, expected) in cases {
        let mut scene = load_path(&write_case(name, &doc)).unwrap_or_else(|e| panic!("{name}: the keys themselves are fine: {e}"));
        for time in [0.25, 0.5, 0.75] {
            viewer::animation::pose(&mut scene, Some(time));
            let err = viewer::gltf_load::check_pose(&scene).map(|_| ()).expect_err(name).to_string();
            assert!(err.contains(expected), "{name} at {time}: {err}");
        }
        // At the last key the node and the camera are finite again (the joint's 3e38 then
        // fails the deformed-reach bound instead).
        viewer::animation::pose(&mut scene, Some(1.0));
        assert!(viewer::gltf_load::check_pose(&scene).is_ok() || name == "overshooting-joint", "{name}: at the last key the pose is finite");
    }
}

#[test]
fn scenes_too_wide_to_frame_and_non_finite_uvs_are_refused() {
    // Found by fuzz round 15: a scene 2.8e20 across without a camera was framed as a unit
    // sphere (f32 lengths overflow) and showed nothing; NaN UVs were reported as nulls.
    let wide = |half: f32| {
        let mut doc = mutated(|d| {
            d["nodes"] = json!([{"mesh": 0, "name": "Tri", "scale": [half, half, half]}]);
            d["scenes"][0]["nodes"] = json!([0]);
            d.as_object_mut().unwrap().remove("cameras");
        });
        doc["accessors"][0]["max"] = json!([1, 1, 0]);
        doc
    };
    let err = load_path(&write_case("too-wide", &wide(1e20))).map(|_| ()).expect_err("too wide").to_string();
    assert!(err.contains("has no camera") && err.contains("frames scenes up to"), "{err}");
    assert!(load_path(&write_case("wide-enough", &wide(1e15))).is_ok(), "1e15 across is framed");
    let nan_uvs = mutated(|d| {
        let uvs = add_accessor(d, &f32_bytes(&[f32::NAN; 6]), 5126, 3, "VEC2", None);
        d["meshes"][0]["primitives"][0]["attributes"]["TEXCOORD_0"] = json!(uvs);
    });
    let err = load_path(&write_case("nan-uvs", &nan_uvs)).map(|_| ()).expect_err("NaN UVs").to_string();
    assert!(err.contains("TEXCOORD_0 value") && err.contains("not finite"), "{err}");
}
