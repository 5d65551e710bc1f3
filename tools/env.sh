# Sourced by the run/test scripts: the Vulkan environment for lavapipe with validation.
export PATH="$HOME/.cargo/bin:$PATH"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp}"
# Keep the loader to lavapipe unless the caller chose drivers (set VK_DRIVER_FILES= to use all).
if [ -z "${VK_DRIVER_FILES+x}" ] && [ -f /usr/share/vulkan/icd.d/lvp_icd.json ]; then
  export VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.json
fi
