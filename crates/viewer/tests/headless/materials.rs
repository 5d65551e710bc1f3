//! Materials that cut what is picked: alpha masks, single-sided faces, vertex colours'
//! alpha, texture transforms and coordinate sets, a masked texture on a morphed mesh.

use super::*;

/// A random scene of alpha-tested quads (random textures, nearest and linear samplers,
/// cutoffs and colour alphas), single-sided boards (some facing away, some mirrored; every
/// other one two layers deep, see [`with_a_layer_behind`]) and an opaque backdrop, with a camera.
fn alpha_scene(seed: u64) -> GltfBuilder {
    alpha_scene_with_uvs(seed, |uv| uv)
}

/// `alpha_scene` with every board's texture coordinates passed through `uvs`.
fn alpha_scene_with_uvs(seed: u64, uvs: impl Fn(glam::Vec2) -> glam::Vec2) -> GltfBuilder {
    alpha_scene_dressed(seed, uvs, |_| None)
}

/// `alpha_scene_with_uvs`, each masked board given the vertex colours `colors` makes for it.
fn alpha_scene_dressed(
    seed: u64,
    uvs: impl Fn(glam::Vec2) -> glam::Vec2,
    mut colors: impl FnMut(&picking_vk_host::Primitive) -> Option<Vec<glam::Vec4>>,
) -> GltfBuilder {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut b = GltfBuilder::new();
    let backdrop = b.add_mesh("Backdrop", &[(&shapes::plane(6.0, [0.5, 0.5, 0.5, 1.0]), IndexStorage::U16)]);
    let node =
        b.add_node("Backdrop", Some(backdrop), Mat4::from_translation(Vec3::new(0.0, 0.0, -4.0)) * Mat4::from_rotation_x(std::f32::consts::FRAC_PI_2), &[]);
    b.add_root(node);
    for i in 0..10 {
        let side = [8u32, 16][rng.usize(..2)];
        let rgba: Vec<u8> = (0..side * side).flat_map(|_| [rng.u8(..), rng.u8(..), rng.u8(..), if rng.bool() { 255 } else { rng.u8(..40) }]).collect();
        let linear = rng.bool();
        let sampler = picking_vk_host::SamplerDesc { linear_mag: linear, linear_min: linear, ..Default::default() };
        let texture = b.add_texture(&picking_vk_host::TextureData { rgba: rgba.into(), width: side, height: side, sampler });
        let masked = i % 3 != 2;
        let board = picking_vk_host::Primitive {
            texture: Some(texture),
            alpha_cutoff: masked.then(|| 0.3 + rng.f32() * 0.4),
            single_sided: !masked || rng.bool(),
            ..shapes::plane(0.5 + rng.f32() * 0.5, [0.6 + rng.f32() * 0.4, 0.7, 0.5, 0.85 + rng.f32() * 0.15])
        };
        let board = picking_vk_host::Primitive { uvs: board.uvs.as_ref().map(|u| u.iter().map(|&uv| uvs(uv)).collect()), ..board };
        let board = picking_vk_host::Primitive { colors: board.alpha_cutoff.and_then(|_| colors(&board)), ..board };
        let board = if i % 2 == 0 { with_a_layer_behind(board) } else { board };
        let mesh = b.add_mesh(&format!("Board {i}"), &[(&board, IndexStorage::U16)]);
        let at = Vec3::new(rng.f32() * 3.0 - 1.5, rng.f32() * 2.0 - 1.0, -rng.f32() * 3.0);
        // Stood up to face the camera, turned a little; every third one faces away.
        let facing = if i % 3 == 1 { -std::f32::consts::FRAC_PI_2 } else { std::f32::consts::FRAC_PI_2 };
        let turn = Mat4::from_rotation_y(rng.f32() * 0.8 - 0.4) * Mat4::from_rotation_x(facing + rng.f32() * 0.4 - 0.2);
        let mirror = if rng.usize(..4) == 0 { Mat4::from_scale(Vec3::new(-1.0, 1.0, 1.0)) } else { Mat4::IDENTITY };
        let node = b.add_node(&format!("Board {i}"), Some(mesh), Mat4::from_translation(at) * turn * mirror, &[]);
        b.add_root(node);
    }
    let cam = b.add_camera_node(
        "Cam",
        0.9,
        0.1,
        Some(40.0),
        glam::camera::rh::view::look_at_mat4(Vec3::new(0.2, 0.3, 4.0), Vec3::new(0.0, 0.0, -1.0), Vec3::Y).inverse(),
    );
    b.add_root(cam);
    b
}

/// `board` (a plane facing +y) with a second copy of itself 0.2 below, in the same primitive,
/// its UVs shifted: where the front layer's mask has a hole, the pick and the UV it reports
/// are the back layer's.
fn with_a_layer_behind(board: picking_vk_host::Primitive) -> picking_vk_host::Primitive {
    let n = board.positions.len() as u32;
    let mut out = board.clone();
    out.positions.extend(board.positions.iter().map(|p| *p - Vec3::Y * 0.2));
    out.normals.extend_from_slice(&board.normals);
    if let (Some(uvs), Some(src)) = (out.uvs.as_mut(), board.uvs.as_ref()) {
        uvs.extend(src.iter().map(|uv| *uv + glam::Vec2::new(0.37, 0.21)));
    }
    if let (Some(colors), Some(src)) = (out.colors.as_mut(), board.colors.as_ref()) {
        colors.extend_from_slice(src);
    }
    let indices: Vec<u32> = board.indices.clone().unwrap_or_else(|| (0..n).collect());
    out.indices = Some(indices.iter().copied().chain(indices.iter().map(|i| i + n)).collect());
    out
}

#[test]
fn alpha_masked_and_single_sided_gltf_scenes_pick_like_a_ray_caster_with_texture_lookup() {
    let (w, h) = (320, 240);
    let (mut agree, mut hits, mut changed) = (0, 0, 0);
    for seed in 0..3 {
        let glb = tmp(&format!("alpha-{seed}.glb"));
        std::fs::write(&glb, alpha_scene(seed).to_glb()).unwrap();
        let scene = viewer::gltf_load::load_path(&glb).unwrap();
        assert_eq!(scene.textures.len(), 10, "every board's texture is decoded");
        let pixels = random_pixels(seed + 10, 400, w, h);
        let (a, hit) = check_scene_against_oracle(Some(&glb), &scene, &pixels, w, h, &[]);
        agree += a;
        hits += hit;
        // Pixels where the masks and culling change the answer of a plain ray cast.
        let with_materials = SceneOracle::new(&scene, w, h);
        let plain = SceneOracle::with_culling(&scene, w, h, false);
        for p in &pixels {
            let want = with_materials.pick(*p);
            let raw = plain.oracle.pick(*p);
            changed += usize::from(!want.ambiguous && !raw.ambiguous && want.hit.map(|h| h.id) != raw.hit.map(|h| h.id));
        }
    }
    eprintln!("alpha-masked scenes: {agree} unambiguous picks agree with the ray caster, {hits} hits, {changed} where masks or culling change the answer");
    assert!(agree > 900 && hits > 600 && changed > 60, "{agree} / {hits} / {changed}");
}

#[test]
fn vertex_colours_tint_the_lit_pass_and_their_alpha_masks_picks_like_a_ray_caster() {
    // The alpha scene's masked boards given random vertex colours (three in four fading to
    // alpha 0 along one edge), and a red board of its own.
    let (w, h) = (320, 240);
    let (mut agree, mut hits, mut changed) = (0, 0, 0);
    for seed in 0..2 {
        let mut rng = fastrand::Rng::with_seed(seed + 40);
        let mut b = alpha_scene_dressed(
            seed,
            |uv| uv,
            |board| {
                let fade = rng.usize(..4) != 0;
                let alpha = |at: Vec3| if fade && at.x < 0.0 { 0.0 } else { 1.0 };
                Some(board.positions.iter().map(|&at| glam::Vec4::new(rng.f32(), rng.f32(), rng.f32(), alpha(at))).collect())
            },
        );
        // A white board in red vertex colours (drawn in the plain scene too, uncoloured).
        let add_red = |b: &mut GltfBuilder, color: Option<glam::Vec4>| {
            let plane = shapes::plane(0.6, [1.0; 4]);
            let red = picking_vk_host::Primitive { colors: color.map(|c| vec![c; plane.positions.len()]), ..plane };
            let mesh = b.add_mesh("Red", &[(&red, IndexStorage::U16)]);
            let place = Mat4::from_translation(Vec3::new(-1.6, -1.2, 0.5)) * Mat4::from_rotation_x(std::f32::consts::FRAC_PI_2);
            let node = b.add_node("Red", Some(mesh), place, &[]);
            b.add_root(node);
            node
        };
        // And an untextured masked board whose vertex alpha alone cuts its left half away.
        let add_fade = |b: &mut GltfBuilder, coloured: bool| {
            let plane = picking_vk_host::Primitive { alpha_cutoff: Some(0.5), ..shapes::plane(0.7, [0.9, 0.9, 0.9, 1.0]) };
            let colors = plane.positions.iter().map(|p| glam::Vec4::new(1.0, 1.0, 1.0, if p.x < 0.0 { 0.0 } else { 1.0 })).collect();
            let fade = picking_vk_host::Primitive { colors: coloured.then_some(colors), ..plane };
            let mesh = b.add_mesh("Fade", &[(&fade, IndexStorage::U16)]);
            let node =
                b.add_node("Fade", Some(mesh), Mat4::from_translation(Vec3::new(1.4, -1.0, 0.3)) * Mat4::from_rotation_x(std::f32::consts::FRAC_PI_2), &[]);
            b.add_root(node);
        };
        let red_node = add_red(&mut b, Some(glam::Vec4::new(1.0, 0.0, 0.0, 1.0)));
        add_fade(&mut b, true);
        let mut plain = alpha_scene(seed);
        add_red(&mut plain, None);
        add_fade(&mut plain, false);
        let plain = viewer::gltf_load::load_bytes(&plain.to_glb(), None).unwrap();
        let glb = tmp(&format!("vertex-colours-{seed}.glb"));
        std::fs::write(&glb, b.to_glb()).unwrap();
        let scene = viewer::gltf_load::load_path(&glb).unwrap();
        assert!(scene.meshes.iter().flat_map(|m| &m.primitives).filter(|p| p.colors.is_some()).count() > 5, "COLOR_0 is read");
        let pixels = random_pixels(seed + 50, 1000, w, h);
        let shot = tmp(&format!("vertex-colours-{seed}.png"));
        let (a, hit) = check_scene_against_oracle(Some(&glb), &scene, &pixels, w, h, &["--screenshot", shot.to_str().unwrap()]);
        (agree, hits) = (agree + a, hits + hit);
        // The lit pass multiplies the white material by the red vertex colour (the first pick
        // is highlighted: left out).
        let image = image::open(&shot).unwrap().to_rgba8();
        let records = headless_picks(Some(&glb), &pixels, w, h, &[]);
        let on_red: Vec<[u8; 4]> = records
            .iter()
            .zip(&pixels)
            .skip(1)
            .filter(|(r, _)| r["node"].as_u64() == Some(red_node as u64))
            .map(|(_, p)| image.get_pixel(p.x, p.y).0)
            .collect();
        assert!(on_red.len() >= 3, "{} picks on the red board", on_red.len());
        for [r, g, b, _] in &on_red {
            assert!(*r > 60 && u32::from(*g) * 3 < u32::from(*r) && u32::from(*b) * 3 < u32::from(*r), "the red board is drawn red: {r} {g} {b}");
        }
        let (with_colours, without) = (SceneOracle::new(&scene, w, h), SceneOracle::new(&plain, w, h));
        for p in &pixels {
            let (want, old) = (with_colours.pick(*p), without.pick(*p));
            changed += usize::from(!want.ambiguous && !old.ambiguous && want.hit.map(|h| h.id) != old.hit.map(|h| h.id));
        }
    }
    eprintln!("vertex-coloured masks: {agree} unambiguous picks agree with the ray caster, {hits} hits, {changed} where vertex alpha changes the answer");
    assert!(agree > 1600 && hits > 1200 && changed > 80, "{agree} / {hits} / {changed}");
}

/// The alpha-masked boards with their texture coordinates stored as TEXCOORD_1 only, moved by
/// the inverse of a `KHR_texture_transform` (offset, rotation, scale) that the materials name
/// with `texCoord` 1: the masks must cut the same holes as the plain file's, and the same
/// moved coordinates as TEXCOORD_0 without the transform do not.
#[test]
fn texture_transforms_and_coordinate_sets_cut_the_masks_the_file_means() {
    let (w, h) = (320, 240);
    let (offset, rotation, scale) = (glam::Vec2::new(0.25, -0.1), 0.3f32, glam::Vec2::new(1.5, 0.75));
    let transform = glam::Affine2::from_translation(offset) * glam::Affine2::from_angle(-rotation) * glam::Affine2::from_scale(scale);
    let inverse = transform.inverse();
    let write = |name: &str, b: GltfBuilder, extension: bool| {
        let (json, bin) = b.to_gltf(&format!("{name}.bin"));
        let mut doc: Value = serde_json::from_str(&json).unwrap();
        if extension {
            for material in doc["materials"].as_array_mut().unwrap() {
                if material["pbrMetallicRoughness"].get("baseColorTexture").is_some() {
                    material["pbrMetallicRoughness"]["baseColorTexture"]["extensions"] = serde_json::json!({"KHR_texture_transform": {
                        "offset": offset.to_array(), "rotation": rotation, "scale": scale.to_array(), "texCoord": 1}});
                }
            }
            doc["extensionsUsed"] = serde_json::json!(["KHR_texture_transform"]);
        }
        for mesh in doc["meshes"].as_array_mut().unwrap() {
            for prim in mesh["primitives"].as_array_mut().unwrap() {
                let attributes = prim["attributes"].as_object_mut().unwrap();
                if extension {
                    if let Some(uv) = attributes.remove("TEXCOORD_0") {
                        attributes.insert("TEXCOORD_1".into(), uv);
                    }
                }
            }
        }
        std::fs::write(tmp(&format!("{name}.bin")), bin).unwrap();
        let path = tmp(&format!("{name}.gltf"));
        std::fs::write(&path, doc.to_string()).unwrap();
        path
    };
    let pixels = random_pixels(77, 600, w, h);
    let ids = |path: &Path| headless_picks(Some(path), &pixels, w, h, &[]).iter().map(|r| r["node"].as_u64()).collect::<Vec<_>>();
    let plain = ids(&write("plain", alpha_scene(1), false));
    let moved = ids(&write("moved", alpha_scene_with_uvs(1, |uv| inverse.transform_point2(uv)), true));
    let unmoved = ids(&write("unmoved", alpha_scene_with_uvs(1, |uv| inverse.transform_point2(uv)), false));
    let same = plain.iter().zip(&moved).filter(|(a, b)| a == b).count();
    let differ = plain.iter().zip(&unmoved).filter(|(a, b)| a != b).count();
    eprintln!("texture transform: {same}/{} picks as the plain file; {differ} differ without the transform", pixels.len());
    assert!(same * 100 >= pixels.len() * 99, "{same}/{}", pixels.len());
    assert!(differ >= 20, "the transform must matter: {differ}");
}

#[test]
fn a_masked_texture_on_a_morphed_mesh_is_picked_through_its_holes() {
    // A board morphed up, masked by a texture clear on its left half (u < 0.5), before a
    // backdrop: the left half is picked through onto the backdrop, the right half hits the
    // board. (picking-vk once refused deformation with hooks, and the board was picked as
    // opaque; before that every pick of the frame was an error.)
    let mut b = GltfBuilder::new();
    let half = [[255u8, 255, 255, 0], [255, 255, 255, 255]].concat().repeat(2);
    let texture = b.add_texture(&picking_vk_host::TextureData { rgba: half.into(), width: 2, height: 2, sampler: Default::default() });
    let mut board = picking_vk_host::Primitive { texture: Some(texture), alpha_cutoff: Some(0.5), ..shapes::plane(1.0, [1.0; 4]) };
    board.morph_targets = vec![vec![Vec3::new(0.0, 0.0, -0.4); board.positions.len()]];
    let mesh = b.add_mesh("Board", &[(&board, IndexStorage::U16)]);
    let node = b.add_node("Board", Some(mesh), Mat4::from_rotation_x(std::f32::consts::FRAC_PI_2), &[]);
    b.set_weights(node, &[1.0]);
    b.add_root(node);
    let backdrop = b.add_mesh("Backdrop", &[(&shapes::plane(8.0, [0.5, 0.5, 0.5, 1.0]), IndexStorage::U16)]);
    let behind =
        b.add_node("Backdrop", Some(backdrop), Mat4::from_translation(Vec3::new(0.0, 0.0, -2.0)) * Mat4::from_rotation_x(std::f32::consts::FRAC_PI_2), &[]);
    b.add_root(behind);
    let cam = b.add_camera_node("Cam", 0.9, 0.1, Some(40.0), Mat4::from_translation(Vec3::new(0.0, 0.0, 3.0)));
    b.add_root(cam);
    let glb = tmp("masked-morph.glb");
    std::fs::write(&glb, b.to_glb()).unwrap();
    // The morph lifts the board 0.4 (local -z, world +y): pixel row 4 is on it only morphed.
    let pixels = [UVec2::new(22, 24), UVec2::new(42, 24), UVec2::new(42, 4), UVec2::new(2, 2)];
    let records = headless_picks(Some(&glb), &pixels, 64, 48, &[]);
    assert!(records.iter().all(|r| r.get("error").is_none()), "{records:?}");
    let names: Vec<&str> = records.iter().map(|r| r["node_name"].as_str().unwrap_or("-")).collect();
    assert_eq!(names, ["Backdrop", "Board", "Board", "Backdrop"], "{records:?}");
    // The hole's pick lies on the backdrop, 2 units behind the board.
    assert!((records[0]["world"][2].as_f64().unwrap() + 2.0).abs() < 1e-3, "{records:?}");
}

/// `b`'s glTF with every texture's image re-encoded by `encode` and given only through
/// `extension` (required, and no `source` to fall back on), as gltfpack and glTF-Transform
/// write KTX2 and WebP textures: the JSON and its binary buffer.
fn through_extension(b: &GltfBuilder, extension: &str, mime: &str, encode: impl Fn(&[u8]) -> Vec<u8>) -> (String, Vec<u8>) {
    let (text, mut bin) = b.to_gltf("scene.bin");
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    let images = doc["images"].as_array().unwrap().clone();
    for (i, image) in images.iter().enumerate() {
        let view = &doc["bufferViews"][image["bufferView"].as_u64().unwrap() as usize];
        let at = view["byteOffset"].as_u64().unwrap_or(0) as usize;
        let bytes = encode(&bin[at..at + view["byteLength"].as_u64().unwrap() as usize]);
        bin.resize(bin.len().next_multiple_of(4), 0);
        let views = doc["bufferViews"].as_array_mut().unwrap();
        views.push(json!({ "buffer": 0, "byteOffset": bin.len(), "byteLength": bytes.len() }));
        doc["images"][i] = json!({ "bufferView": views.len() - 1, "mimeType": mime });
        bin.extend_from_slice(&bytes);
    }
    for t in doc["textures"].as_array_mut().unwrap() {
        let source = t.as_object_mut().unwrap().remove("source").unwrap();
        t["extensions"] = json!({ extension: { "source": source } });
    }
    doc["buffers"][0]["byteLength"] = json!(bin.len());
    for list in ["extensionsUsed", "extensionsRequired"] {
        doc[list] = json!([extension]);
    }
    (doc.to_string(), bin)
}

#[test]
fn textures_webp_and_ktx2_extensions_give_are_drawn_and_picked_as_the_viewer_reads_them() {
    let (w, h) = (320, 240);
    let seed = 4;
    let builder = alpha_scene(seed);
    let png_scene = {
        let glb = tmp("extension-textures-png.glb");
        std::fs::write(&glb, builder.to_glb()).unwrap();
        viewer::gltf_load::load_path(&glb).unwrap()
    };
    let write = |name: &str, (text, bin): (String, Vec<u8>)| {
        let dir = tmp(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("scene.bin"), bin).unwrap();
        std::fs::write(dir.join("scene.gltf"), text).unwrap();
        dir.join("scene.gltf")
    };
    assert_eq!(png_scene.textures.len(), 10);
    let pixels = random_pixels(seed + 10, 400, w, h);
    // WebP, lossless: the same texels as the PNGs, so the same masks cut the picks.
    let webp = |png: &[u8]| {
        let mut out = vec![];
        image::load_from_memory(png).unwrap().write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::WebP).unwrap();
        out
    };
    let path = write("extension-textures-webp", through_extension(&builder, "EXT_texture_webp", "image/webp", webp));
    let scene = viewer::gltf_load::load_path(&path).unwrap();
    assert_eq!(scene.textures.len(), 10, "every WebP texture is decoded");
    assert!(scene.textures.iter().zip(&png_scene.textures).all(|(a, b)| a.rgba == b.rgba), "the WebP texels are the PNGs'");
    let (agree, hits) = check_scene_against_oracle(Some(&path), &scene, &pixels, w, h, &[]);
    assert!(agree > 300 && hits > 200, "WebP: {agree} / {hits}");
    // KTX2, which the viewer does not decode: the file loads, and its materials are drawn and
    // picked without their textures (colour factor and alpha alone), as the oracle reads them.
    let ktx2 = |_: &[u8]| [&[0xAB, b'K', b'T', b'X', b' ', b'2', b'0', 0xBB, b'\r', b'\n', 0x1A, b'\n'][..], &[0; 68]].concat();
    let path = write("extension-textures-ktx2", through_extension(&builder, "KHR_texture_basisu", "image/ktx2", ktx2));
    let scene = viewer::gltf_load::load_path(&path).unwrap();
    assert!(scene.textures.is_empty(), "no KTX2 image is decoded");
    assert!(scene.meshes.iter().flat_map(|m| &m.primitives).all(|p| p.texture.is_none()));
    let (agree, hits) = check_scene_against_oracle(Some(&path), &scene, &pixels, w, h, &[]);
    assert!(agree > 300 && hits > 200, "KTX2: {agree} / {hits}");
}
