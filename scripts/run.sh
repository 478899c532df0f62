#!/usr/bin/env bash
# One command per job on a fresh Debian 12 machine:
#   scripts/run.sh demo    install packages, build, run `kiln demo --small` (the seed benchmark, small)
#   scripts/run.sh test    install packages, build, run the whole test suite (validation layer on)
#   scripts/run.sh swiftshader  the same build, the device tests on SwiftShader (the chromium
#                          package's Vulkan ICD), then the devices test with lavapipe and
#                          SwiftShader both visible
#   scripts/run.sh build   install packages and build only
#   scripts/run.sh asan    install clang, then the null-label tests and the runtime's device
#                          tests again, built with AddressSanitizer + UBSan and libFuzzer's
#                          coverage (KILN_ASAN + KILN_LIBFUZZER; own build dir, default
#                          build-asan; ASAN_ALL=1: every test; docs/testing.md), then the fuzz job
#                          in the same build
#   scripts/run.sh fuzz    install clang, build the libFuzzer targets (the asan job's build) and
#                          run each from its seed corpus for FUZZ_RUNS inputs (default 20000)
#   scripts/run.sh tsan    the multi-threaded tests under ThreadSanitizer, the stress test at
#                          KILN_STRESS_CALLS=1000 (KILN_TSAN; own build dir, default
#                          build-tsan; TSAN_ALL=1 adds the null-label tests; docs/testing.md)
#   scripts/run.sh package installs Kiln into a temporary prefix, checks that each installed
#                          header compiles alone, then builds examples/ against the install out
#                          of tree (find_package and pkg-config) and runs them (docs/install.md).
#                          Reuses build/ when the test job configured it (nothing is rebuilt);
#                          else configures build-package without tests and benchmarks.
# BUILD_DIR and BUILD_TYPE (default: RelWithDebInfo) may be set. TEST_CACHE_DIR, for asan and
# tsan, points the tests' persistent kernel cache at a folder another build's tests filled
# (default: the stage's own <build dir>/test-cache); .ci/run hands the test stage's cache on.
set -euo pipefail
cd "$(dirname "$0")/.."

job="${1:-}"
case "$job" in demo|test|swiftshader|build|asan|fuzz|tsan|package) ;; *) echo "usage: scripts/run.sh demo|test|swiftshader|build|asan|fuzz|tsan|package" >&2; exit 2 ;; esac

BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}"
# Sanitizer builds: -O1 and line tables only (-g1) build and link much faster than -O2 -g, and
# the reports still name files and lines.
SAN_FLAGS=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DKILN_BUILD_BENCH=OFF)
test_cache_flag() {
  echo "-DKILN_TEST_CACHE_DIR=${TEST_CACHE_DIR:-$(realpath -m "$1")/test-cache}"
}
FUZZERS=(fuzz_onnx fuzz_npy fuzz_cache_file)

run_fuzzers() {
  cmake --build "$BUILD_DIR" -j "$(nproc)" --target "${FUZZERS[@]}"
  for f in "${FUZZERS[@]}"; do
    reader="${f#fuzz_}"
    work="$BUILD_DIR/fuzz-corpus/$reader"  # new inputs go here, the committed seeds stay as they are
    mkdir -p "$work"
    echo "== $f: ${FUZZ_RUNS:-20000} runs from tests/fuzz/libfuzzer/corpus/$reader"
    "$BUILD_DIR/tests/fuzz/libfuzzer/$f" -runs="${FUZZ_RUNS:-20000}" -timeout=30 \
      -print_final_stats=1 "$work" "tests/fuzz/libfuzzer/corpus/$reader"
  done
}

case "$job" in
  asan|fuzz)
    # One build for both: clang-16 with AddressSanitizer + UBSan and libFuzzer's coverage
    # instrumentation on every target (KILN_LIBFUZZER implies the sanitizers; KILN_ASAN adds the
    # tests' sanitizer environment). One instrumented build instead of two (GCC's for the tests,
    # clang's for the fuzzers) saves most of a sanitizer build in CI (docs/testing.md). Debian
    # 12's clang-14 and clang-15 cannot compile Kiln (std::source_location, lambda captures of
    # structured bindings); clang-16 can.
    BUILD_DIR="${BUILD_DIR:-build-asan}"
    scripts/install-deps.sh clang-16 libclang-rt-16-dev llvm-16
    # llvm-16's symbolizer names functions and lines in reports (the default one may be older).
    export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-16/bin/llvm-symbolizer
    cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DKILN_WERROR=ON \
      -DCMAKE_CXX_COMPILER=clang++-16 -DKILN_LIBFUZZER=ON -DKILN_ASAN=ON "${SAN_FLAGS[@]}" \
      "$(test_cache_flag "$BUILD_DIR")"
    if [ "$job" = fuzz ]; then
      run_fuzzers
      exit 0
    fi
    # The tests that need the sanitizers: every null-label test (the readers of untrusted input:
    # ONNX, .npy, cache files; the importer, tracing, the interpreter) and the device tests of
    # the runtime's memory: buffers, arenas and replay, caches, graph breaks, calls, threads of
    # the C API. The rest of the device suite runs kernels the
    # release stage already checks, each compiled by the driver, which ASan's allocator slows
    # most (device_dynamic_test alone took 424 s; null_dynamic_test covers its symbolic shapes on
    # the host). ASan does not see inside a driver's JIT code, so the ops that index with data
    # (select, scatter) are checked here on the interpreter, by the null tests. ASAN_ALL=1 runs
    # everything.
    if [ "${ASAN_ALL:-0}" = 1 ]; then
      cmake --build "$BUILD_DIR" -j "$(nproc)"
      ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)"
      run_fuzzers
      exit 0
    fi
    tests=(device_vk_runtime_test device_capture_test device_replay_test device_cache_test
           device_breaks_test device_call_semantics_test device_limits_test device_graph_key_test
           device_check_test device_c_api_test)
    # Null tests left out: the source-tree layering check runs no library code, and the
    # codegen tests check generated shader text and kernel-choice tables, code every device test
    # of the release stage runs again on real graphs.
    no_asan='^(null_layering_test|null_golden_test|null_codegen_test|null_matmul_codegen_test|null_conv_codegen_test|null_fusion_rules_test|null_matmul_choice_test|null_layer_norm_rule_test|null_kernel_limits_test)$'
    mapfile -t null_tests < <(ctest --test-dir "$BUILD_DIR" -N -L null 2>/dev/null |
                              sed -n 's/^ *Test *#[0-9]*: //p' | grep -Ev "$no_asan")
    tests+=("${null_tests[@]}")
    targets=$(cmake --build "$BUILD_DIR" --target help | sed -n 's/^\([A-Za-z0-9_]*\): .*/\1/p')
    build=(kiln_cli kiln_asan_preload "${FUZZERS[@]}")  # null_onnx_models_test runs the CLI
    for t in "${tests[@]}"; do grep -qx "$t" <<<"$targets" && build+=("$t"); done
    cmake --build "$BUILD_DIR" -j "$(nproc)" --target "${build[@]}"
    # The sanitizer options and suppressions come with each test (tests/CMakeLists.txt).
    ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" \
      -R "^($(IFS='|'; echo "${tests[*]}"))\$"
    run_fuzzers
    exit 0 ;;
  tsan)
    BUILD_DIR="${BUILD_DIR:-build-tsan}"
    scripts/install-deps.sh
    cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DKILN_WERROR=ON \
      -DKILN_TSAN=ON "${SAN_FLAGS[@]}" "$(test_cache_flag "$BUILD_DIR")"
    # The tests that run Kiln from many threads: the 8-thread stress test with
    # KILN_STRESS_CALLS calls per thread (default here 1000), the C API's (one model from four
    # threads), the devices test and the interpreter's split products, window kernels, fused chains and direct convs. TSAN_ALL=1 adds the null-label tests; the fuzz-labelled
    # malformed-file test is left out (one thread; the asan stage runs it instrumented).
    export KILN_STRESS_CALLS="${KILN_STRESS_CALLS:-1000}"
    tests=(device_threads_test device_background_test device_c_api_test device_devices_test
           null_interpreter_loops_test device_kernel_calibration_test null_interpreter_test
           null_interpreter_fast_paths_test null_interpreter_channels_last_test
           null_interpreter_chain_test null_interpreter_conv_direct_test
           null_interpreter_conv_direct_threads_test)
    if [ "${TSAN_ALL:-0}" = 1 ]; then
      mapfile -t null_tests < <(ctest --test-dir "$BUILD_DIR" -N -L null -LE fuzz 2>/dev/null |
                                sed -n 's/^ *Test *#[0-9]*: //p')
      tests+=("${null_tests[@]}")
    fi
    targets=$(cmake --build "$BUILD_DIR" --target help | sed -n 's/^\([A-Za-z0-9_]*\): .*/\1/p')
    build=()
    if [ "${TSAN_ALL:-0}" = 1 ]; then build+=(kiln_cli); fi  # null_onnx_models_test runs it
    for t in "${tests[@]}"; do grep -qx "$t" <<<"$targets" && build+=("$t"); done
    cmake --build "$BUILD_DIR" -j "$(nproc)" --target "${build[@]}"
    # TSAN_OPTIONS (halt on the first report, the library suppressions) come with each test.
    ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" \
      -R "^($(IFS='|'; echo "${tests[*]}"))\$"
    exit 0 ;;
  package)
    if [ -z "${BUILD_DIR:-}" ]; then
      if [ -f build/CMakeCache.txt ]; then BUILD_DIR=build; else BUILD_DIR="build-package"; fi
    fi
    scripts/install-deps.sh
    if [ -f "$BUILD_DIR/CMakeCache.txt" ]; then
      cmake -S . -B "$BUILD_DIR"  # keeps its options; regenerates only if the tree changed
    else
      cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DKILN_WERROR=ON \
        -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_BENCH=OFF
    fi
    cmake --build "$BUILD_DIR" -j "$(nproc)"  # up to date after the test job: nothing to do
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    prefix="$work/prefix"
    cmake --install "$BUILD_DIR" --prefix "$prefix"
    # Each public header compiles alone, from the install tree only.
    for h in "$prefix"/include/kiln/*.h; do
      echo "== header ${h#"$prefix"/include/}"
      echo "#include <${h#"$prefix"/include/}>" |
        c++ -std=c++20 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -I"$prefix/include" -x c++ -
    done
    echo "#include <kiln/kiln_c.h>" |
      cc -std=c99 -Wall -Wextra -Wpedantic -Werror -fsyntax-only -I"$prefix/include" -x c -
    # The examples, out of tree, against the installed CMake package.
    cmake -S examples -B "$work/examples" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
      -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_FLAGS="-Wall -Wextra -Wpedantic -Werror" \
      -DCMAKE_C_FLAGS="-Wall -Wextra -Wpedantic -Werror"
    cmake --build "$work/examples" -j "$(nproc)"
    KILN_VALIDATE=1 "$work/examples/compile_example"
    KILN_VALIDATE=1 "$work/examples/onnx_example" tests/data/onnx/mlp/model.onnx \
      tests/data/onnx/mlp/0
    KILN_VALIDATE=1 "$work/examples/c_example" tests/data/onnx/mlp/model.onnx 3 16
    # The same program built with nothing but pkg-config's flags.
    PKG_CONFIG_PATH=$(find "$prefix" -name kiln.pc -printf '%h')
    export PKG_CONFIG_PATH
    # shellcheck disable=SC2046  # the flags are meant to split
    c++ -std=c++20 examples/compile_example.cpp -o "$work/compile_example_pc" \
      $(pkg-config --cflags --libs kiln) -Wl,-rpath,"$(pkg-config --variable=libdir kiln)"
    KILN_VALIDATE=1 "$work/compile_example_pc"
    exit 0 ;;
esac

BUILD_DIR="${BUILD_DIR:-build}"
scripts/install-deps.sh
# -O2 with line tables only (-g1): full debug info (-g) costs a quarter more compile time, and
# test failures and sanitizer reports need only files and lines.
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DKILN_WERROR=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
cmake --build "$BUILD_DIR" -j "$(nproc)"

case "$job" in
  demo) "$BUILD_DIR/kiln" devices && "$BUILD_DIR/kiln" demo --small ;;
  test) ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" ;;
  swiftshader)
    # The device suite again on a second Vulkan implementation: Google's SwiftShader (from
    # Debian's chromium package; subgroup 4, no int64, no 8- or 16-bit storage), then the
    # devices test with both drivers visible in one process (docs/testing.md). The
    # differential fuzzer runs 150 programs here (the release stage runs its 1,000);
    # SWIFTSHADER_FUZZ_COUNT changes that.
    icd="${SWIFTSHADER_ICD:-/usr/lib/chromium/vk_swiftshader_icd.json}"
    [ -f "$icd" ] || { echo "no SwiftShader ICD at $icd (the chromium package)" >&2; exit 1; }
    VK_ICD_FILENAMES="$icd" KILN_FUZZ_COUNT="${SWIFTSHADER_FUZZ_COUNT:-150}" \
      ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" -L device
    lvp=$(ls /usr/share/vulkan/icd.d/lvp_icd.*.json | head -1)
    VK_ICD_FILENAMES="$lvp:$icd" KILN_TEST_TWO_DRIVERS=1 \
      ctest --test-dir "$BUILD_DIR" --output-on-failure -R '^device_devices_test$' ;;
  build) ;;
esac
