#!/usr/bin/env bash
# Runs the viewer on the built-in scene: a window when a display exists, otherwise the
# headless demo, which picks a set of pixels and writes its outputs under out/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
source tools/env.sh
if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
  exec cargo run --release --locked -p viewer -- "$@"
else
  exec cargo run --release --locked -p viewer -- --headless --demo "$@"
fi
