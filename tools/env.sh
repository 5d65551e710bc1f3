# Sourced by the run/test scripts: the Vulkan environment for lavapipe with validation.
export PATH="$HOME/.cargo/bin:$PATH"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
# Debian's static shaderc needs its glslang and SPIRV-Tools libraries linked too (picking-vk's
# `hooks` feature; see crates/picking-vk/build.rs).
export PICKING_VK_GLSLANG_STATIC_DIR="${PICKING_VK_GLSLANG_STATIC_DIR:-/usr/lib/x86_64-linux-gnu}"
# Keep the loader to lavapipe unless the caller chose drivers (set VK_DRIVER_FILES= to use all).
if [ -z "${VK_DRIVER_FILES+x}" ] && [ -f /usr/share/vulkan/icd.d/lvp_icd.json ]; then
  export VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.json
fi
