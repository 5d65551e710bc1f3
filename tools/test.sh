#!/usr/bin/env bash
# The whole test suite: setup, then every unit, GPU (lavapipe + validation), parity and
# viewer test in the workspace. GPU tests fail, never skip, when no Vulkan device is found.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
source tools/env.sh
cargo test --workspace --locked "$@"
