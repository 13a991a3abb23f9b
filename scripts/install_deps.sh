#!/usr/bin/env bash
# Installs what is missing on Debian bookworm (as root): the C++ and Emscripten toolchains, Eigen, xtl,
# doctest, zlib (the native tests inflate the digit asset), clang and libclang-rt-14-dev (libFuzzer and
# the sanitizers for tests/fuzz/run_cpp_fuzz.sh; only a Recommends of clang, which
# --no-install-recommends skips), Chromium (browser tests, and SwiftShader for WebGPU without a GPU),
# Node and the npm packages from package-lock.json. Idempotent: a second run installs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ make emscripten libeigen3-dev xtl-dev doctest-dev zlib1g-dev clang libclang-rt-14-dev chromium)
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[install] Debian packages: ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "[install] need root to apt-get install ${missing[*]}" >&2
    exit 1
  fi
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# npm ci only when the lock file changed since the last install.
stamp=node_modules/.attnlab-lock-stamp
if [ ! -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; then
  echo "[install] npm ci"
  npm ci --no-audit --no-fund --loglevel=error
  cp package-lock.json "$stamp"
fi
