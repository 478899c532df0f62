#!/usr/bin/env bash
# Installs the Debian 12 packages Kiln builds and tests with, plus any packages named as
# arguments (scripts/run.sh fuzz adds clang). Idempotent; needs root (or sudo).
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
  glslang-dev glslang-tools spirv-tools
  libgtest-dev libgmock-dev libbenchmark-dev
  libfmt-dev nlohmann-json3-dev libcli11-dev libopenblas-dev
  libonnx-dev libprotobuf-dev protobuf-compiler python3-onnx python3-numpy
  graphviz chromium
)
PACKAGES+=("$@")

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
