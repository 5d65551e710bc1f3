#!/usr/bin/env bash
# Writes the compressed glTF fixtures of crates/viewer/tests/compressed_files.rs from the
# built-in scene (assets/default_scene.glb) with third-party tools: glTF Transform's CLI 4.5
# and gltfpack (meshoptimizer's packer), both from npm. Not part of the test command: the
# fixtures are committed, and this records how each was made. Needs node and npm.
set -euo pipefail
cd "$(dirname "$0")/.."
src=assets/default_scene.glb
out=crates/viewer/tests/fixtures/compressed
tools=$(mktemp -d)
npm install --prefix "$tools" --silent @gltf-transform/cli@4.5.1 gltfpack@1.3.0 >/dev/null
gt="$tools/node_modules/.bin/gltf-transform"
pack="$tools/node_modules/.bin/gltfpack"
mkdir -p "$out"
# Draco: default (14-bit positions, EdgeBreaker), coarse quantization, the sequential coder
# at 16 bits, and Draco over a file quantized first (integer accessors in the stream).
"$gt" draco "$src" "$out/draco.glb"
"$gt" draco "$src" "$out/draco-q11.glb" --quantize-position 11 --quantize-normal 8 --quantize-texcoord 10
"$gt" draco "$src" "$out/draco-sequential-q16.glb" --method sequential --quantize-position 16
"$gt" quantize "$src" "$tools/quantized.glb" && "$gt" draco "$tools/quantized.glb" "$out/quantize-draco.glb"
# Meshopt (EXT_meshopt_compression): high level (OCTAHEDRAL normals, QUATERNION rotations),
# medium level (no filters).
"$gt" meshopt "$src" "$out/meshopt.glb"
"$gt" meshopt "$src" "$out/meshopt-medium.glb" --level medium
# gltfpack: float positions through the EXPONENTIAL filter (EXT), and KHR_meshopt_compression
# (vertex codec version 1), named nodes, materials and extras kept.
"$pack" -i "$src" -o "$out/gltfpack-exp.glb" -c -vpf -kn -km -ke
"$pack" -i "$src" -o "$out/gltfpack-khr.glb" -cc -ce khr -kn -km -ke
# gltfpack's mesh instancing: repeated meshes become EXT_mesh_gpu_instancing nodes whose
# instance transforms are meshopt-compressed too (named nodes are merged, so the signposts,
# billboards from node extras, are gone).
"$pack" -i "$src" -o "$out/gltfpack-instanced.glb" -c -mi -km -ke
rm -rf "$tools"
ls -l "$out"
