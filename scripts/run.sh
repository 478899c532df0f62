#!/usr/bin/env bash
# One command per job on a fresh Debian 12 machine:
#   scripts/run.sh demo    install packages, build, run `kiln demo --small` (the seed benchmark, small)
#   scripts/run.sh test    install packages, build, run the whole test suite (validation layer on)
#   scripts/run.sh build   install packages and build only
# BUILD_DIR (default: build) and BUILD_TYPE (default: RelWithDebInfo) may be set.
set -euo pipefail
cd "$(dirname "$0")/.."

job="${1:-}"
case "$job" in demo|test|build) ;; *) echo "usage: scripts/run.sh demo|test|build" >&2; exit 2 ;; esac

BUILD_DIR="${BUILD_DIR:-build}"
BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}"

scripts/install-deps.sh
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DKILN_WERROR=ON
cmake --build "$BUILD_DIR" -j "$(nproc)"

case "$job" in
  demo) "$BUILD_DIR/kiln" devices && "$BUILD_DIR/kiln" demo --small ;;
  test) ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" ;;
  build) ;;
esac
