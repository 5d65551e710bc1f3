#!/usr/bin/env bash
# The whole test suite: setup, the lint gate (rustfmt, clippy, rustdoc), every unit, GPU
# (lavapipe + validation), parity and viewer test in the workspace, the library's hover
# example under validation, the library's package build, and the README's cargo commands. GPU tests fail, never skip,
# when no Vulkan device is found.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
source tools/env.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
RUSTDOCFLAGS=-Dwarnings cargo doc -p picking-vk --no-deps --locked
cargo test --workspace --locked "$@"
# The GPU suite again with the pick passes begun by dynamic rendering: through
# VK_KHR_dynamic_rendering on Vulkan 1.2, then core Vulkan 1.3.
PICKING_VK_TEST_RENDERING=dynamic cargo test -p picking-vk-tests --locked "$@"
PICKING_VK_TEST_RENDERING=dynamic-1.3 cargo test -p picking-vk-tests --locked "$@"
cargo run -p picking-vk --example hover --locked
# The library crate packages and builds on its own, with only its declared dependencies.
cargo package -p picking-vk --locked --allow-dirty
# Every cargo command README.md shows, in a clean environment (no script sourced), and a crate
# outside the workspace that depends on picking-vk with `hooks`.
bash tools/readme-commands.sh
