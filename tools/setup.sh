#!/usr/bin/env bash
# Installs what picking-vk needs on Debian 12 (idempotent; quick when all is present):
# lavapipe (Mesa from bookworm-backports), the Vulkan loader and validation layer, Debian's
# shaderc/glslang static libraries (so no C++ is built from source), Xvfb and xdotool for the
# windowed viewer test, and a Rust toolchain when none is installed.
set -euo pipefail

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

PACKAGES=(
  libvulkan1 vulkan-validationlayers vulkan-tools
  libshaderc-dev glslang-dev glslang-tools spirv-tools
  xvfb xdotool x11-apps imagemagick
  libx11-xcb1 libxcursor1 libxi6 libxrandr2 libxkbcommon-x11-0 libxkbcommon0
  build-essential pkg-config curl ca-certificates
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
# lavapipe must come from backports (Mesa 25): bookworm's Mesa 22 lacks what the tests use.
lvp_ok=0
if dpkg -s mesa-vulkan-drivers >/dev/null 2>&1; then
  case "$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers)" in 2[5-9].*|[3-9]*) lvp_ok=1 ;; esac
fi

if [ ${#missing[@]} -gt 0 ] || [ $lvp_ok = 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
    # The backports suite of the mirror this machine is already configured with.
    # Some of these files may not exist (a fresh Debian 12 has only debian.sources): cat's
    # failure must not end the script under pipefail.
    mirror=$( (cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null || true) \
      | grep -E '^(URIs:|deb) ' | sed -E 's/^URIs:[[:space:]]*//; s/^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?//' \
      | awk '$1 ~ /debian\/?$/ && $1 !~ /security/ {print $1; exit}' || true)
    echo "deb ${mirror:-http://deb.debian.org/debian} bookworm-backports main" | $SUDO tee /etc/apt/sources.list.d/bookworm-backports.list >/dev/null
  fi
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q -t bookworm-backports mesa-vulkan-drivers
  if [ ${#missing[@]} -gt 0 ]; then
    $SUDO apt-get install -y -q "${missing[@]}"
  fi
fi

if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: no Rust toolchain found; installing one with rustup" >&2
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
  export PATH="$HOME/.cargo/bin:$PATH"
fi

# The lint gate in tools/test.sh needs clippy and rustfmt.
if command -v rustup >/dev/null 2>&1; then
  for component in clippy rustfmt; do
    rustup component list --installed 2>/dev/null | grep -q "^$component" || rustup component add "$component"
  done
fi
