//! Compressed glTF written by third-party tools (`tools/compressed-fixtures.sh`: glTF
//! Transform and gltfpack over the built-in scene): Draco at several quantization levels and
//! both coders, meshopt with every filter those tools write, EXT and KHR. Each is picked
//! headlessly (lavapipe, validation on) against its uncompressed source; damaged and hostile
//! variants are refused by name.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use viewer::gltf_load::{load_bytes, SceneError};

const W: u32 = 320;
const H: u32 = 240;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/compressed").join(name)
}

fn source() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/default_scene.glb")
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("picking-vk-compressed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The headless viewer's pick records for `pixels` of `scene`.
fn picks(scene: &Path, pixels: &[[u32; 2]], tag: &str) -> Vec<Value> {
    let (list, out) = (tmp(&format!("{tag}-picks.json")), tmp(&format!("{tag}-out.json")));
    std::fs::write(&list, serde_json::to_string(pixels).unwrap()).unwrap();
    let size = format!("{W}x{H}");
    let args = [scene.to_str().unwrap(), "--headless", "--validation", "--size", &size, "--pick-file", list.to_str().unwrap(), "--json", out.to_str().unwrap()];
    let run = Command::new(env!("CARGO_BIN_EXE_viewer")).args(args).output().expect("run viewer");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{tag}: viewer failed:\n{stderr}");
    assert!(!stderr.contains("validation:"), "{tag}: validation messages:\n{stderr}");
    serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap()
}

/// How a tool rewrote the scene beyond compressing it.
#[derive(Clone, Copy, PartialEq)]
enum Kept {
    /// Node names and the signposts (billboards the viewer draws from node extras).
    All,
    /// The signposts, not the names of the nodes that draw meshes.
    Billboards,
    /// Neither: the tool merged the named nodes.
    Geometry,
}

/// Each fixture, the position quantization its tool applied (bits over each mesh's bounds),
/// and what it kept.
const FIXTURES: &[(&str, u32, Kept)] = &[
    ("draco.glb", 14, Kept::All),
    ("draco-q11.glb", 11, Kept::All),
    ("draco-sequential-q16.glb", 16, Kept::All),
    ("quantize-draco.glb", 14, Kept::All),
    ("meshopt.glb", 14, Kept::All),
    ("meshopt-medium.glb", 14, Kept::All),
    ("gltfpack-exp.glb", 14, Kept::Billboards),
    ("gltfpack-khr.glb", 14, Kept::Billboards),
    ("gltfpack-instanced.glb", 14, Kept::Geometry),
];

/// The built-in scene's widest mesh (the ground) spans 16 units.
const LARGEST_MESH: f64 = 16.0;

#[test]
fn compressed_files_pick_like_their_uncompressed_source() {
    let mut rng = fastrand::Rng::with_seed(38);
    let pixels: Vec<[u32; 2]> = (0..400).map(|_| [rng.u32(..W), rng.u32(..H)]).collect();
    let want = picks(&source(), &pixels, "source");
    assert!(want.iter().filter(|r| r["hit"] == true).count() > 250, "the pixels mostly hit something");
    for &(name, bits, kept) in FIXTURES {
        let got = picks(&fixture(name), &pixels, name);
        // A position moves by at most half a quantization step per axis; along a ray that
        // meets the surface at a slant, and through the depth buffer's rounding, the pick's
        // distance moves by a few times that (documented in the README).
        let step = LARGEST_MESH / f64::from((1u32 << bits) - 1);
        let (mut worst, mut compared) = (0.0f64, 0);
        for ((w, g), p) in want.iter().zip(&got).zip(&pixels) {
            if kept == Kept::Geometry && w["node_name"].as_str().is_some_and(|n| n.starts_with("Signpost")) {
                continue;
            }
            compared += 1;
            assert_eq!(w["hit"], g["hit"], "{name} pixel {p:?}: hit or miss as the source");
            if w["hit"] != true {
                continue;
            }
            if kept == Kept::All {
                assert_eq!(w["node_name"], g["node_name"], "{name} pixel {p:?}: the same object");
            }
            let (dw, dg) = (w["distance"].as_f64().unwrap(), g["distance"].as_f64().unwrap());
            let error = (dw - dg).abs();
            assert!(error <= 2.0 * step + 2e-4 * dw, "{name} pixel {p:?}: distance {dg} against the source's {dw}");
            worst = worst.max(error);
        }
        assert!(compared > 380, "{name}: {compared} pixels compared");
        eprintln!("{name}: {compared} picks agree, largest distance error {worst:.5}");
    }
}

/// A GLB's JSON and binary chunk.
fn split(glb: &[u8]) -> (Value, Vec<u8>) {
    let json_len = u32::from_le_bytes(glb[12..16].try_into().unwrap()) as usize;
    let json = serde_json::from_slice(&glb[20..20 + json_len]).unwrap();
    let bin_at = 20 + json_len;
    let bin_len = u32::from_le_bytes(glb[bin_at..bin_at + 4].try_into().unwrap()) as usize;
    (json, glb[bin_at + 8..bin_at + 8 + bin_len].to_vec())
}

/// A GLB of `json` and `bin`.
fn join(json: &Value, bin: &[u8]) -> Vec<u8> {
    let mut j = serde_json::to_vec(json).unwrap();
    j.resize(j.len().next_multiple_of(4), b' ');
    let mut b = bin.to_vec();
    b.resize(b.len().next_multiple_of(4), 0);
    let mut out = vec![];
    out.extend(b"glTF");
    out.extend(2u32.to_le_bytes());
    out.extend(((12 + 8 + j.len() + 8 + b.len()) as u32).to_le_bytes());
    out.extend((j.len() as u32).to_le_bytes());
    out.extend(b"JSON");
    out.extend(&j);
    out.extend((b.len() as u32).to_le_bytes());
    out.extend(b"BIN\0");
    out.extend(&b);
    out
}

/// Loads `name` with its JSON (and binary chunk) changed by `change`.
fn load_changed(name: &str, change: impl FnOnce(&mut Value, &mut Vec<u8>)) -> Result<viewer::scene::Scene, SceneError> {
    let (mut json, mut bin) = split(&std::fs::read(fixture(name)).unwrap());
    change(&mut json, &mut bin);
    load_bytes(&join(&json, &bin), None)
}

/// The refusal's message, which must not be a caught panic.
fn refusal(result: Result<viewer::scene::Scene, SceneError>) -> String {
    let err = result.map(|_| ()).expect_err("refused");
    assert!(!matches!(err, SceneError::ReaderPanic(_)), "a panic, not a refusal: {err}");
    err.to_string()
}

/// The first primitive with a Draco extension: (mesh, primitive, its extension).
fn draco_primitive(json: &Value) -> (usize, usize, Value) {
    for (m, mesh) in json["meshes"].as_array().unwrap().iter().enumerate() {
        for (p, prim) in mesh["primitives"].as_array().unwrap().iter().enumerate() {
            if let Some(ext) = prim.pointer("/extensions/KHR_draco_mesh_compression") {
                return (m, p, ext.clone());
            }
        }
    }
    panic!("no Draco primitive")
}

/// The first bufferView whose meshopt extension has mode `mode`.
fn meshopt_view(json: &Value, mode: &str) -> usize {
    let views = json["bufferViews"].as_array().unwrap();
    views.iter().position(|v| v.pointer("/extensions/EXT_meshopt_compression/mode").and_then(Value::as_str) == Some(mode)).unwrap()
}

#[test]
fn damaged_draco_streams_and_lying_counts_are_refused_by_name() {
    let (json, _) = split(&std::fs::read(fixture("draco.glb")).unwrap());
    let (m, p, ext) = draco_primitive(&json);
    let view = ext["bufferView"].as_u64().unwrap() as usize;
    let position = json["meshes"][m]["primitives"][p]["attributes"]["POSITION"].as_u64().unwrap() as usize;
    let at = format!("mesh {m} primitive {p}: KHR_draco_mesh_compression");
    // A stream cut short.
    let err = refusal(load_changed("draco.glb", |j, _| {
        let length = j["bufferViews"][view]["byteLength"].as_u64().unwrap();
        j["bufferViews"][view]["byteLength"] = json!(length / 2);
    }));
    assert!(err.contains(&at) && err.contains("does not decode"), "{err}");
    // Counts that lie about what the stream holds, down to a 2^31-element claim.
    for count in [1u64 << 31, 3] {
        let err = refusal(load_changed("draco.glb", |j, _| j["accessors"][position]["count"] = json!(count)));
        assert!(err.contains(&at) && err.contains(&format!("says {count} vertices")), "{err}");
    }
    let indices = json["meshes"][m]["primitives"][p]["indices"].as_u64().unwrap() as usize;
    let err = refusal(load_changed("draco.glb", |j, _| j["accessors"][indices]["count"] = json!(5)));
    assert!(err.contains(&at) && err.contains("says 5 indices"), "{err}");
    // An attribute the stream does not have.
    let err = refusal(load_changed("draco.glb", |j, _| {
        j["meshes"][m]["primitives"][p]["extensions"]["KHR_draco_mesh_compression"]["attributes"]["POSITION"] = json!(77)
    }));
    assert!(err.contains(&at) && err.contains("Draco attribute 77"), "{err}");
    // Two streams describing one accessor (two primitives of as many vertices sharing their
    // POSITION accessor): each would draw whichever decoded last.
    let draco: Vec<(usize, usize, u64, u64)> = json["meshes"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .flat_map(|(m, mesh)| mesh["primitives"].as_array().unwrap().iter().enumerate().map(move |(p, prim)| (m, p, prim)))
        .filter_map(|(m, p, prim)| {
            let view = prim.pointer("/extensions/KHR_draco_mesh_compression/bufferView")?.as_u64()?;
            let position = prim["attributes"]["POSITION"].as_u64()?;
            Some((m, p, view, position))
        })
        .collect();
    let count = |a: u64| json["accessors"][a as usize]["count"].as_u64().unwrap();
    let (first, second) = draco
        .iter()
        .flat_map(|a| draco.iter().map(move |b| (a, b)))
        .find(|(a, b)| a.2 != b.2 && a.3 != b.3 && count(a.3) == count(b.3))
        .expect("two Draco primitives of as many vertices");
    let err = refusal(load_changed("draco.glb", |j, _| j["meshes"][second.0]["primitives"][second.1]["attributes"]["POSITION"] = json!(first.3)));
    assert!(err.contains(&format!("accessor {} is described by the streams", first.3)), "{err}");
    // A stream outside its buffer.
    let err = refusal(load_changed("draco.glb", |j, _| j["bufferViews"][view]["byteOffset"] = json!(1u64 << 40)));
    assert!(err.contains(&at) && err.contains("past the end of buffer"), "{err}");
}

#[test]
fn damaged_meshopt_views_and_huge_claims_are_refused_by_name() {
    let (json, _) = split(&std::fs::read(fixture("meshopt.glb")).unwrap());
    let attributes = meshopt_view(&json, "ATTRIBUTES");
    let triangles = meshopt_view(&json, "TRIANGLES");
    let named = |view: usize| format!("bufferView {view} (EXT_meshopt_compression)");
    // A stream cut short.
    let err = refusal(load_changed("meshopt.glb", |j, _| j["bufferViews"][attributes]["extensions"]["EXT_meshopt_compression"]["byteLength"] = json!(9)));
    assert!(err.contains(&named(attributes)) && err.contains("stream"), "{err}");
    // A 2^31-element claim (the view's length agreeing) is refused before anything is
    // allocated: it is over the budget.
    let err = refusal(load_changed("meshopt.glb", |j, _| {
        let ext = &mut j["bufferViews"][attributes]["extensions"]["EXT_meshopt_compression"];
        ext["count"] = json!(1u64 << 31);
        let stride = ext["byteStride"].as_u64().unwrap();
        j["bufferViews"][attributes]["byteLength"] = json!((1u64 << 31) * stride);
    }));
    assert!(err.contains(&named(attributes)) && err.contains("over what the limit leaves"), "{err}");
    // A count that disagrees with the view it fills.
    let err = refusal(load_changed("meshopt.glb", |j, _| j["bufferViews"][triangles]["extensions"]["EXT_meshopt_compression"]["count"] = json!(3)));
    assert!(err.contains(&named(triangles)) && err.contains("byteLength"), "{err}");
    // Filters and modes the extension does not define.
    for (key, value, says) in [("filter", "COLOR", "not one EXT_meshopt_compression defines"), ("mode", "STRIPS", "mode \"STRIPS\"")] {
        let err = refusal(load_changed("meshopt.glb", |j, _| j["bufferViews"][attributes]["extensions"]["EXT_meshopt_compression"][key] = json!(value)));
        assert!(err.contains(&named(attributes)) && err.contains(says), "{err}");
    }
    // Decoded indices past the vertices are refused as plain indices are.
    let err = refusal(load_changed("meshopt.glb", |j, _| {
        let prim =
            j["meshes"].as_array().unwrap().iter().flat_map(|m| m["primitives"].as_array().unwrap()).find(|p| p.get("indices").is_some()).unwrap().clone();
        let position = prim["attributes"]["POSITION"].as_u64().unwrap() as usize;
        j["accessors"][position]["count"] = json!(1);
    }));
    assert!(err.contains("index") || err.contains("vertex"), "{err}");
}

#[test]
fn bytes_flipped_anywhere_in_compressed_data_never_panic() {
    for name in ["draco.glb", "meshopt.glb", "gltfpack-khr.glb"] {
        let glb = std::fs::read(fixture(name)).unwrap();
        let (json, bin) = split(&glb);
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..60 {
            let mut damaged = bin.clone();
            for _ in 0..8 {
                let i = rng.usize(..damaged.len());
                damaged[i] ^= 1 << rng.u32(..8);
            }
            if let Err(e) = load_bytes(&join(&json, &damaged), None) {
                assert!(!matches!(e, SceneError::ReaderPanic(_)), "{name}: {e}");
            }
        }
    }
}

#[test]
fn a_required_extension_the_viewer_does_not_read_is_named_before_any_accessor_is_checked() {
    let err = refusal(load_changed("draco.glb", |j, _| {
        j["extensionsUsed"].as_array_mut().unwrap().push(json!("EXT_texture_video"));
        j["extensionsRequired"].as_array_mut().unwrap().push(json!("EXT_texture_video"));
        // Broken accessors that would be refused first if they were looked at.
        j["accessors"][0]["count"] = json!(0);
        j["meshes"][0]["primitives"][0]["attributes"]["POSITION"] = json!(9999);
    }));
    assert!(err.contains("requires EXT_texture_video"), "{err}");
}

#[test]
fn meshopt_views_with_their_data_in_their_own_buffer_are_read_from_it_unless_the_extension_is_required() {
    // The uncompressed source, with a meshopt extension on its first view whose "stream" is
    // not one: a file that only uses the extension keeps its data in the view's own buffer
    // (the fallback), which is read; one that requires it must decode the stream.
    let with_meshopt = |required: bool| {
        let (mut json, bin) = split(&std::fs::read(source()).unwrap());
        let length = json["bufferViews"][0]["byteLength"].as_u64().unwrap();
        json["bufferViews"][0]["extensions"] =
            json!({"EXT_meshopt_compression": {"buffer": 0, "byteOffset": 0, "byteLength": 16, "byteStride": 4, "count": length / 4, "mode": "ATTRIBUTES"}});
        json["extensionsUsed"] = json!(["EXT_meshopt_compression"]);
        if required {
            json["extensionsRequired"] = json!(["EXT_meshopt_compression"]);
        }
        load_bytes(&join(&json, &bin), None)
    };
    assert!(with_meshopt(false).is_ok(), "the fallback is read");
    let err = refusal(with_meshopt(true));
    assert!(err.contains("bufferView 0 (EXT_meshopt_compression)") && err.contains("ATTRIBUTES stream"), "{err}");
}
