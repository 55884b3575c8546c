#!/usr/bin/env bash
# setup.sh: install the Debian packages tg needs (idempotent), then configure and build.
# Usage: scripts/setup.sh [build-dir]   (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}

packages=(g++ meson ninja-build pkg-config python3 llvm-19-dev llvm-19 lld-19 liblld-19-dev libboost-dev doctest-dev
  libcli11-dev libusb-1.0-0-dev libopenblas-dev libsqlite3-dev zlib1g-dev libzstd-dev libpcre2-dev
  libcpp-httplib-dev nlohmann-json3-dev)
# The server's tests drive it with the openai npm client (installed by the test into the build
# folder): Node and npm from Debian unless some Node is there already (e.g. nodesource's,
# which bundles npm and conflicts with Debian's npm package).
command -v node > /dev/null || packages+=(nodejs)
command -v npm > /dev/null || packages+=(npm)
# ... and its chat page with puppeteer-core in Debian's Chromium.
command -v chromium > /dev/null || packages+=(chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
fi

# Debian's /usr/bin/llvm-config is LLVM 14; point meson at LLVM 19's.
native=$root/scripts/llvm19.ini
if [ ! -d "$build" ]; then
  meson setup "$build" "$root" --native-file "$native" --wrap-mode=nodownload
fi
ninja -C "$build"
