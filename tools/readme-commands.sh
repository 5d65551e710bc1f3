#!/usr/bin/env bash
# Runs every cargo command README.md shows, each in a clean environment (`env -i` with only PATH
# and HOME: no script sourced, nothing exported), and fails if any fails. Commands that need a
# display run under Xvfb. A cargo command in README.md that this script does not run fails it
# too, so the README cannot show a command nobody ran.
#
# Commands write their outputs into target/readme-commands/ (cargo finds the workspace above
# it). The GPU suite itself (`cargo test --test 'gpu_*'`), the long soak and the small
# benchmark are what tools/test.sh runs already: here they are built and linked in the clean
# environment (the suite also runs one binary).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
scratch=$root/target/readme-commands
rm -rf "$scratch"
mkdir -p "$scratch/assets"
cd "$scratch"

# PATH as a fresh login shell after the set-up commands has it (rustup's cargo included).
clean_path="$HOME/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
clean() { env -i PATH="$clean_path" HOME="$HOME" bash -c "$1"; }

# Every cargo command README.md shows (code spans and blocks, joined across lines), and what
# this script runs for it. Each must match one case below.
readme_commands() {
  awk 'BEGIN{RS="`"} NR%2==0 && /cargo / {gsub(/[ \n\\]+/," "); sub(/^ /,""); sub(/ $/,""); print}' "$root/README.md"
}

failed=0
ran=0
run() { # name, command
  echo "== readme ($1): $(echo "$2" | head -n 1)"
  local start=$SECONDS
  if clean "$2" >"$scratch/$1.log" 2>&1; then
    echo "   ok ($((SECONDS - start)) s)"
  else
    echo "   FAILED ($((SECONDS - start)) s); last lines:"
    tail -n 25 "$scratch/$1.log" | sed 's/^/   | /'
    failed=$((failed + 1))
  fi
  ran=$((ran + 1))
}

# A free X display for the window commands.
display=99
while [ -e "/tmp/.X11-unix/X$display" ] || [ -e "/tmp/.X$display-lock" ]; do display=$((display + 1)); done
xvfb() { # name, command run with DISPLAY set while Xvfb serves it
  Xvfb ":$display" -screen 0 1280x800x24 >/dev/null 2>&1 &
  local xpid=$!
  sleep 1
  run "$1" "export DISPLAY=:$display; $2"
  kill "$xpid" 2>/dev/null || true
  wait "$xpid" 2>/dev/null || true
}
# Starts a windowed app (the README's command, in the background as the README runs it),
# waits for its window, runs the README's xdotool/import lines, then closes it with Esc and
# requires exit code 0.
window() { # app command, the lines to run against the window, the window's name (the viewer's if none)
  local name=${3:-picking-vk viewer}
  cat <<EOF
$1 >viewer.log 2>&1 &
viewer=\$!
for i in \$(seq 1 600); do
  xdotool search --name "$name" >/dev/null 2>&1 && break
  kill -0 \$viewer 2>/dev/null || { cat viewer.log; exit 1; }
  sleep 1
done
xdotool search --name "$name" >/dev/null || { echo "no window named $name"; cat viewer.log; exit 1; }
sleep 3
$2
xdotool search --name "$name" windowfocus --sync key Escape
wait \$viewer
EOF
}

unknown=0
while IFS= read -r cmd; do
  case "$cmd" in
    "cargo run -p viewer -- --headless "*)
      run headless-$ran "$cmd && test -s $(echo "$cmd" | grep -oE '[^ ]+\.json' | head -1)" ;;
    "cargo run -p viewer -- --write-default-scene assets/default_scene.glb")
      # Written into the scratch folder's assets/: it must equal the checked-in scene.
      run default-scene "$cmd && cmp assets/default_scene.glb $root/assets/default_scene.glb" ;;
    "cargo run -p picking-vk-tools --bin compile-shaders")
      # Rewrites only stale SPIR-V; the checked-in files must then be unchanged.
      run compile-shaders "$cmd && git -C $root diff --quiet -- crates/picking-vk/spirv crates/host/spirv" ;;
    "cargo run -p picking-vk-tools --bin bench -- --small")
      # tools/test.sh runs this very binary with --small (tools/tests/bench_smoke.rs, which
      # checks its tables, JSON and chart); here it builds in the clean environment.
      run bench "cargo build -p picking-vk-tools --bin bench" ;;
    "cargo run -p viewer -- [SCENE]")
      xvfb window-scene "$(window "cargo run -p viewer -- $root/assets/default_scene.glb" "import -window root scene.png")" ;;
    "Xvfb :99 -screen 0 1280x800x24 & DISPLAY=:99 cargo run -p viewer &")
      xvfb window-click "$(window "cargo run -p viewer" "xdotool mousemove 800 420 click 1; sleep 1; import -window root shot.png")" ;;
    "Xvfb :99 -screen 0 1280x800x24 & DISPLAY=:99 cargo run -p viewer & sleep 10 "*)
      # The README's lines after starting the viewer, as written there.
      lines=$(echo "$cmd" | sed -E 's/^.* sleep 10 //; s/DISPLAY=:99 /\n/g')
      xvfb window-band "$(window "cargo run -p viewer" "$lines")" ;;
    "cargo run -p picking-vk-wgpu --example wgpu_app")
      xvfb wgpu-window "$(window "$cmd" "import -window root wgpu-window.png" "picking-vk wgpu example")" ;;
    "cargo run -p picking-vk-wgpu --example wgpu_app -- --headless "*)
      run wgpu-headless "$cmd && test -s $(echo "$cmd" | grep -oE '[^ ]+\.png$')" ;;
    "Xvfb :99 -screen 0 1280x800x24 & DISPLAY=:99 cargo run -p picking-vk-wgpu --example wgpu_app & sleep 10 "*)
      lines=$(echo "$cmd" | sed -E 's/^.* sleep 10 //; s/DISPLAY=:99 /\n/g')
      xvfb wgpu-window-click "$(window "cargo run -p picking-vk-wgpu --example wgpu_app" "$lines" "picking-vk wgpu example")" ;;
    "cargo run --release -p picking-vk-wgpu --example wgpu_bench -- "*)
      # The release build is what docs/wgpu-h200.md ran; here the debug build runs it briefly.
      run wgpu-bench "cargo run -p picking-vk-wgpu --example wgpu_bench -- --frames 20 --size 320x180 | grep -q 'scene + pick'" ;;
    "SOAK_SECONDS="*" cargo test -p viewer --test soak -- --nocapture")
      # tools/test.sh runs the soak for 120 s; here it builds and links in the clean environment.
      run soak "SOAK_SECONDS=1800 cargo test -p viewer --test soak --no-run" ;;
    "cargo test --test 'gpu_*' -- --nocapture")
      # The suite runs in tools/test.sh; here it builds and links, and one test binary runs.
      run gpu-tests "cargo test --test 'gpu_*' --no-run && cargo test --test gpu_picking -- --nocapture" ;;
    *)
      echo "readme-commands: README.md shows a cargo command this script does not run: $cmd" >&2
      unknown=$((unknown + 1)) ;;
  esac
done < <(readme_commands)

# A crate outside the workspace (so no .cargo/config.toml of ours applies) that depends on
# picking-vk with `hooks`, as the README's "Using the crate from another project" says: it must
# build and link with nothing set. It keeps its own target folder (the workspace's holds
# shaderc-sys built with SHADERC_LIB_DIR set; sharing it would rebuild both ways).
outside=$(mktemp -d /tmp/picking-vk-outside.XXXXXX)
mkdir -p "$outside/src"
cat >"$outside/Cargo.toml" <<TOML
[package]
name = "outside-engine"
version = "0.1.0"
edition = "2021"

[dependencies]
picking-vk = { path = "$root/crates/picking-vk", features = ["hooks"] }
TOML
cat >"$outside/src/main.rs" <<'RUST'
fn main() {
    // Taking the address of a function that compiles hooks makes the binary link shaderc.
    let warm_up = picking_vk::Picker::warm_up as usize;
    assert_ne!(warm_up, 0);
    println!("linked picking-vk with hooks; all features: {:?}", picking_vk::PickFeatures::ALL);
}
RUST
cp "$root/Cargo.lock" "$outside/Cargo.lock"
run outside-crate "cd $outside && cargo run --target-dir $root/target/outside-crate"
rm -rf "$outside"

echo "readme-commands: $ran commands run in a clean environment, $failed failed, $unknown not covered"
[ "$failed" = 0 ] && [ "$unknown" = 0 ] && [ "$ran" -gt 0 ]
