#!/usr/bin/env bash
# The whole test suite: setup, the lint gate (rustfmt, clippy, rustdoc), every unit, GPU
# (lavapipe + validation), parity and viewer test in the workspace, the library's hover
# example under validation, the library's package build, and the README's cargo commands. GPU tests fail, never skip,
# when no Vulkan device is found.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step's time, printed as it ends and again at the end (the CI budget is 25 minutes).
timings=()
step() { # name, command...
  local name=$1 start=$SECONDS
  shift
  "$@"
  timings+=("$(printf '%5d s  %s' $((SECONDS - start)) "$name")")
  echo "== test.sh: $name took $((SECONDS - start)) s"
}
step setup bash tools/setup.sh
source tools/env.sh
step rustfmt cargo fmt --all -- --check
step clippy cargo clippy --workspace --all-targets --locked -- -D warnings
step rustdoc env RUSTDOCFLAGS=-Dwarnings cargo doc -p picking-vk -p picking-vk-wgpu --no-deps --locked
step "workspace tests" cargo test --workspace --locked "$@"
# The GPU suite again with the pick passes begun by dynamic rendering: through
# VK_KHR_dynamic_rendering on Vulkan 1.2, then core Vulkan 1.3. Selected from the workspace
# (not `-p`), so its features are the build's above and nothing is compiled again.
# The 1.2 run checks the extension's entry points and feature chain; it leaves out the five
# longest binaries (GPU planning, occlusion planning, deformation, hooks, lines and points:
# about 100 s), whose passes begin and end as every other's. The 1.3 run takes the whole suite.
dynamic_12=()
for f in tests/tests/gpu_*.rs; do
  name=$(basename "$f" .rs)
  case "$name" in gpu_planning | gpu_occlusion | gpu_deform | gpu_hooks | gpu_lines_points) ;; *) dynamic_12+=(--test "$name") ;; esac
done
step "GPU tests, dynamic rendering 1.2" env PICKING_VK_TEST_RENDERING=dynamic cargo test --workspace --locked "${dynamic_12[@]}" "$@"
step "GPU tests, dynamic rendering 1.3" env PICKING_VK_TEST_RENDERING=dynamic-1.3 cargo test --workspace --locked --test 'gpu_*' "$@"
step "hover example" bash -c 'cargo build --workspace --locked --example hover && "${CARGO_TARGET_DIR:-target}/debug/examples/hover"'
# The library crate packages and builds on its own, with only its declared dependencies.
step package cargo package -p picking-vk --locked --allow-dirty
# Every cargo command README.md shows, in a clean environment (no script sourced), and a crate
# outside the workspace that depends on picking-vk with `hooks`.
step "README commands" bash tools/readme-commands.sh
printf 'test.sh: every step passed\n'
printf '%s\n' "${timings[@]}"
