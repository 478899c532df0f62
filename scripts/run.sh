#!/usr/bin/env bash
# One command per job on a fresh Debian 12 machine:
#   scripts/run.sh demo    install packages, build, run `kiln demo --small` (the seed benchmark, small)
#   scripts/run.sh test    install packages, build, run the whole test suite (validation layer on)
#   scripts/run.sh build   install packages and build only
#   scripts/run.sh asan    the whole test suite again, every target built with AddressSanitizer +
#                          UBSan (KILN_ASAN; own build dir, default build-asan; docs/testing.md)
#   scripts/run.sh fuzz    install clang, build the libFuzzer targets (KILN_LIBFUZZER; own build
#                          dir, default build-fuzz) and run each from its seed corpus for
#                          FUZZ_RUNS inputs (default 20000)
#   scripts/run.sh tsan    the threads test and the null-label tests under ThreadSanitizer
#                          (KILN_TSAN; own build dir, default build-tsan; docs/testing.md)
# BUILD_DIR and BUILD_TYPE (default: RelWithDebInfo) may be set.
set -euo pipefail
cd "$(dirname "$0")/.."

job="${1:-}"
case "$job" in demo|test|build|asan|fuzz|tsan) ;; *) echo "usage: scripts/run.sh demo|test|build|asan|fuzz|tsan" >&2; exit 2 ;; esac

BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}"
# Sanitizer builds: -O1 and line tables only (-g1) build and link much faster than -O2 -g, and
# the reports still name files and lines.
SAN_FLAGS=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DKILN_BUILD_BENCH=OFF)
FUZZERS=(fuzz_onnx fuzz_npy fuzz_cache_file)

case "$job" in
  asan)
    BUILD_DIR="${BUILD_DIR:-build-asan}"
    scripts/install-deps.sh
    cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DKILN_WERROR=ON \
      -DKILN_ASAN=ON "${SAN_FLAGS[@]}"
    cmake --build "$BUILD_DIR" -j "$(nproc)"
    # The sanitizer options and suppressions come with each test (tests/CMakeLists.txt).
    ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)"
    exit 0 ;;
  tsan)
    BUILD_DIR="${BUILD_DIR:-build-tsan}"
    scripts/install-deps.sh
    cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DKILN_WERROR=ON \
      -DKILN_TSAN=ON "${SAN_FLAGS[@]}"
    # device_threads_test and the null-label tests; the fuzz-labelled ASan test is left out (ASan
    # and TSan cannot share a binary).
    mapfile -t tests < <(ctest --test-dir "$BUILD_DIR" -N -L null -LE fuzz 2>/dev/null |
                         sed -n 's/^ *Test *#[0-9]*: //p')
    tests=(device_threads_test "${tests[@]}")
    targets=$(cmake --build "$BUILD_DIR" --target help | sed -n 's/^\([A-Za-z0-9_]*\): .*/\1/p')
    build=(kiln_cli)  # null_onnx_models_test runs the (instrumented) CLI
    for t in "${tests[@]}"; do grep -qx "$t" <<<"$targets" && build+=("$t"); done
    cmake --build "$BUILD_DIR" -j "$(nproc)" --target "${build[@]}"
    # TSAN_OPTIONS (halt on the first report, the library suppressions) come with each test.
    ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" \
      -R "^($(IFS='|'; echo "${tests[*]}"))\$"
    exit 0 ;;
  fuzz)
    BUILD_DIR="${BUILD_DIR:-build-fuzz}"
    # Debian 12's clang-14 and clang-15 cannot compile Kiln (std::source_location, lambda
    # captures of structured bindings); clang-16 can.
    scripts/install-deps.sh clang-16 libclang-rt-16-dev llvm-16
    # llvm-16's symbolizer names functions and lines in reports (the default one may be older).
    export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-16/bin/llvm-symbolizer
    cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DKILN_WERROR=ON \
      -DCMAKE_CXX_COMPILER=clang++-16 -DKILN_LIBFUZZER=ON "${SAN_FLAGS[@]}"
    cmake --build "$BUILD_DIR" -j "$(nproc)" --target "${FUZZERS[@]}"
    for f in "${FUZZERS[@]}"; do
      reader="${f#fuzz_}"
      work="$BUILD_DIR/fuzz-corpus/$reader"  # new inputs go here, the committed seeds stay as they are
      mkdir -p "$work"
      echo "== $f: ${FUZZ_RUNS:-20000} runs from tests/fuzz/libfuzzer/corpus/$reader"
      "$BUILD_DIR/tests/fuzz/libfuzzer/$f" -runs="${FUZZ_RUNS:-20000}" -timeout=30 \
        -print_final_stats=1 "$work" "tests/fuzz/libfuzzer/corpus/$reader"
    done
    exit 0 ;;
esac

BUILD_DIR="${BUILD_DIR:-build}"
scripts/install-deps.sh
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DKILN_WERROR=ON
cmake --build "$BUILD_DIR" -j "$(nproc)"

case "$job" in
  demo) "$BUILD_DIR/kiln" devices && "$BUILD_DIR/kiln" demo --small ;;
  test) ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" ;;
  build) ;;
esac
