// Kernels whose invocations loop longer than Mesa's loop limiter allows, against the
// interpreter. gallivm (lavapipe, llvmpipe) ends every loop of a shader invocation once that
// invocation's loops (all of them together, nested ones counting each inner iteration, per SIMD
// vector of 8 or 16 invocations) have run 65535 iterations, without an error, so a kernel whose
// per-invocation trip count grows with a size returns wrong values beyond it. Each case here
// is a thin tensor whose naive per-invocation count crosses 65535: a long reduced row, a long
// softmax / layer_norm row, a long K, a long key sequence, a wide window, many scattered
// updates, and symbolic reduced sizes that grow after the kernel was chosen. Inputs are mostly
// positive (or hold a planted extreme near the end), so a loop cut short changes the result
// far beyond the tolerance.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "device/test_util.h"

namespace kiln {
namespace {

using test::Dist;
using test::Tol;

using namespace test::dtypes;

constexpr int64_t kLimit = 65535;  // gallivm's LP_MAX_TGSI_LOOP_ITERATIONS

class DeviceLoopLimit : public test::DeviceOpTest {
 protected:
  /// A float tensor of `shape`, uniform in [lo, hi], with `peak` at flat position `at`.
  Tensor planted(const Shape& shape, double lo, double hi, int64_t at, double peak) {
    std::vector<double> v = test::random_values(kF32, numel(shape), rng_, Dist{lo, hi});
    v[static_cast<size_t>(at)] = peak;
    return test::tensor_from_doubles(kF32, shape, v);
  }

  /// Like check(), for kernels that may be past the driver's loop limit at these sizes: they
  /// must either run on the device or fall back to the interpreter with a loop-limit warning,
  /// and in both cases return the interpreter's values (eagerly and compiled).
  template <typename Fn, typename... T>
  void check_or_fallback(const std::string& label, Tol tol, const Fn& fn, const T&... cpu_inputs) {
    SCOPED_TRACE(label + " (seed " + std::to_string(seed_) + ")");
    ++cases_;
    allow_cpu_fallback_ = true;
    const size_t before = warnings().size();
    Tensor want = fn(cpu_inputs...);
    try {
      test::poison_device_memory(2 * want.meta().nbytes() + (64u << 10));
      test::expect_close(fn(cpu_inputs.to(Device::vulkan())...), want, tol, label + " [eager]");
      CompileOptions co;
      co.name = "fallback";
      auto compiled = compile(fn, co);
      test::poison_device_memory(2 * want.meta().nbytes() + (64u << 10));
      test::expect_close(compiled(cpu_inputs.to(Device::vulkan())...), want, tol,
                         label + " [compiled]");
    } catch (const Error& e) {
      ADD_FAILURE() << label << " threw: " << e.what();
    }
    const std::vector<std::string> w = warnings();
    for (size_t i = before; i < w.size(); ++i)
      EXPECT_NE(w[i].find("loop iterations"), std::string::npos)
          << label << ": a fallback for another reason: " << w[i];
  }

  /// Compiles `fn` with every dim symbolic, calls it on `small` (which chooses the kernels),
  /// then on `large` into poisoned memory, and compares each call with the interpreter.
  template <typename Fn>
  void check_grown(const std::string& label, Tol tol, const Fn& fn, const Tensor& small,
                   const Tensor& large, const std::vector<double>& scale = {},
                   double scale_rel = 0.0) {
    SCOPED_TRACE(label + " (seed " + std::to_string(seed_) + ")");
    ++cases_;
    CompileOptions co;
    co.name = "grown";
    co.dynamic = Dynamic::kTrue;
    auto compiled = compile(fn, co);
    try {
      Tensor got_small = compiled(small.to(Device::vulkan()));
      test::expect_close(got_small, fn(small), tol, label + " [small]");
      test::poison_device_memory(2 * large.meta().nbytes() + (64u << 10));
      Tensor got = compiled(large.to(Device::vulkan()));
      std::vector<EntryInfo> entries = compiled.entries();
      ASSERT_EQ(entries.size(), 1u) << label << ": the large call recompiled";
      EXPECT_TRUE(entries[0].on_device) << label << " ran on the interpreter";
      test::expect_close(got, fn(large), tol, label + " [large]", scale, scale_rel);
    } catch (const Error& e) {
      ADD_FAILURE() << label << " threw: " << e.what();
    }
  }
};

// ---- reductions ------------------------------------------------------------------------------

// One output, one workgroup: each of its invocations loops over R / workgroup size elements.
TEST_F(DeviceLoopLimit, ReduceOneLongRow) {
  const int64_t r = 128 * kLimit + 4099;  // past the limit for workgroups of 128
  Tensor x = rnd(kF32, {1, r}, Dist{0, 1});
  CheckOptions opt;
  opt.scale = sum(x, {1}).to_doubles();
  opt.scale_rel = 1e-6;
  check_with(
      "sum over [1, " + std::to_string(r) + "]", Tol{0, 1e-6}, opt,
      [](const Tensor& t) { return sum(t, {1}); }, x);
  Tensor y = planted({r}, -1, 1, r - 3, 5.0);
  check(
      "argmax of a planted maximum", Tol::exact(), [](const Tensor& t) { return argmax(t, 0); }, y);
}

// The thread-per-output variant was chosen for a short reduced dim; the dim then grows.
TEST_F(DeviceLoopLimit, ReduceSymbolicRowGrows) {
  Tensor small = rnd(kF32, {3, 20}, Dist{0, 1});
  Tensor large = rnd(kF32, {3, kLimit + 2000}, Dist{0, 1});
  // The small call picks the one-invocation-per-row kernel, so the large call sums 67,535
  // floats in sequence: its rounding error grows like sqrt(n) 2^-24 (about 1.5e-5 of the sum;
  // 3.3e-6 measured on SwiftShader), while the interpreter sums in double.
  check_grown(
      "sum over a growing dim", Tol{0, 1e-6}, [](const Tensor& t) { return sum(t, {1}); }, small,
      large, sum(large, {1}).to_doubles(), 3e-5);
  Tensor peak = planted({2, kLimit + 2000}, -1, 1, kLimit + 2000 + kLimit + 1500, 5.0);
  check_grown(
      "max over a growing dim", Tol::exact(), [](const Tensor& t) { return max(t, {1}); },
      rnd(kF32, {2, 20}), peak);
}

TEST_F(DeviceLoopLimit, CumSumSymbolicLineGrows) {
  const int64_t r = kLimit + 500;
  Tensor small = rnd(kF32, {1, 20}, Dist{0, 1});
  Tensor large = rnd(kF32, {1, r}, Dist{0, 1});
  auto fn = [](const Tensor& t) { return cumsum(t, 1); };
  check_grown("cumsum over a growing line", Tol{0, 1e-6}, fn, small, large,
              cumsum(large, 1).to_doubles(), 2e-6);
}

// ---- softmax, log_softmax, layer_norm ----------------------------------------------------------

TEST_F(DeviceLoopLimit, RowNormOneLongRow) {
  const int64_t r = 64 * kLimit / 3 + 70000;  // three passes of R / 64 for workgroups of 64
  Tensor x = planted({1, r}, -1, 1, r - 5, 12.0);
  check(
      "softmax over [1, " + std::to_string(r) + "]", Tol{1e-4, 1e-9},
      [](const Tensor& t) { return softmax(t, 1); }, x);
  check(
      "log_softmax over a long row", Tol{1e-5, 1e-5},
      [](const Tensor& t) { return log_softmax(t, -1); }, x);
  Tensor w = rnd(kF32, {r}), b = rnd(kF32, {r});
  Tensor y = rnd(kF32, {1, r}, Dist{0, 4});
  check(
      "layer_norm over a long row", Tol{1e-4, 1e-4},
      [](const Tensor& t, const Tensor& ww, const Tensor& bb) { return layer_norm(t, ww, bb); }, y,
      w, b);
}

TEST_F(DeviceLoopLimit, SoftmaxSymbolicRowGrows) {
  const int64_t r = kLimit / 3 + 3000;  // one invocation per row: three passes of R
  Tensor large = planted({2, r}, -1, 1, 2 * r - 7, 12.0);
  check_grown(
      "softmax over a growing dim", Tol{1e-4, 1e-9}, [](const Tensor& t) { return softmax(t, 1); },
      rnd(kF32, {2, 16}), large);
}

// ---- contractions ------------------------------------------------------------------------------

TEST_F(DeviceLoopLimit, MatmulLongK) {
  // Row-block kernel: K / 4 iterations per invocation.
  const int64_t k4 = 4 * kLimit + 4000;
  Tensor a = rnd(kF32, {2, k4}, Dist{0, 1}), b = rnd(kF32, {k4, 4}, Dist{0, 1});
  check_or_fallback(
      "matmul [2, K] x [K, 4], row-block", Tol{1e-4, 1e-3},
      [](const Tensor& x, const Tensor& y) { return matmul(x, y); }, a, b);
  // Tiled kernel (K not a multiple of 4): K / TILE_K tiles, each with its inner loops.
  const int64_t k = kLimit + 2;
  Tensor c = rnd(kF32, {2, k}, Dist{0, 1}), d = rnd(kF32, {k, 3}, Dist{0, 1});
  check_or_fallback(
      "matmul [2, K] x [K, 3], tiled", Tol{1e-4, 1e-3},
      [](const Tensor& x, const Tensor& y) { return matmul(x, y); }, c, d);
}

TEST_F(DeviceLoopLimit, AttentionLongKeys) {
  const int64_t sk = 4 * kLimit + 4000;  // key blocks of 4
  Tensor q = rnd(kF32, {1, 2, 8}, Dist{-0.1, 0.1}), k = rnd(kF32, {1, sk, 8}, Dist{-0.1, 0.1});
  Tensor v = rnd(kF32, {1, sk, 8}, Dist{0, 1});
  check_or_fallback(
      "attention over " + std::to_string(sk) + " keys", Tol{3e-5, 2e-4},
      [](const Tensor& qq, const Tensor& kk, const Tensor& vv) {
        return matmul(softmax(matmul(qq, kk, false, true) * 0.5, -1), vv) + 0.0;
      },
      q, k, v);
}

// ---- windows
// -------------------------------------------------------------------------------------

TEST_F(DeviceLoopLimit, WideWindows) {
  const int64_t w = kLimit + 1000;
  Tensor x = rnd(kF32, {1, 1, w + 1}, Dist{0, 1});
  check_or_fallback(
      "avg_pool with a window of " + std::to_string(w), Tol{1e-5, 1e-6},
      [w](const Tensor& t) { return avg_pool(t, {w}); }, x);
  Tensor p = planted({1, 1, w + 1}, -1, 1, w - 2, 5.0);
  check_or_fallback(
      "max_pool with a wide window", Tol::exact(),
      [w](const Tensor& t) { return max_pool(t, {w}); }, p);
  Tensor wt = rnd(kF32, {1, 1, w}, Dist{0, 1});
  check_or_fallback(
      "conv with a wide window", Tol{1e-4, 1e-3},
      [](const Tensor& t, const Tensor& ww) { return conv(t, ww); }, x, wt);
  // Many input channels, one position.
  Tensor xc = rnd(kF32, {1, w, 1}, Dist{0, 1}), wc = rnd(kF32, {1, w, 1}, Dist{0, 1});
  check_or_fallback(
      "conv over " + std::to_string(w) + " channels", Tol{1e-4, 1e-3},
      [](const Tensor& t, const Tensor& ww) { return conv(t, ww); }, xc, wc);
  // The implicit-GEMM kernel (16 output channels): K / 4 iterations.
  const int64_t kg = 4 * kLimit + 4000;
  Tensor xg = rnd(kF32, {1, 1, kg}, Dist{0, 1}), wg = rnd(kF32, {16, 1, kg}, Dist{0, 1});
  check_or_fallback(
      "conv, implicit GEMM, window " + std::to_string(kg), Tol{1e-4, 1e-3},
      [](const Tensor& t, const Tensor& ww) { return conv(t, ww); }, xg, wg);
  Tensor xt = rnd(kF32, {1, w, 2}, Dist{0, 1}), wtt = rnd(kF32, {w, 1, 1}, Dist{0, 1});
  check_or_fallback(
      "conv_transpose over " + std::to_string(w) + " channels", Tol{1e-4, 1e-3},
      [](const Tensor& t, const Tensor& ww) { return conv_transpose(t, ww); }, xt, wtt);
}

// ---- scatter
// -------------------------------------------------------------------------------------

TEST_F(DeviceLoopLimit, ScatterManyUpdates) {
  const int64_t n = kLimit + 3000;
  Tensor idx = rnd(kI64, {1, n}, Dist::uniform(0, 2));
  Tensor upd = rnd(kF32, {1, n}, Dist{0, 1}), data = rnd(kF32, {1, 3}, Dist{0, 1});
  for (ScatterReduction red : {ScatterReduction::kNone, ScatterReduction::kAdd}) {
    check(
        std::string("scatter_elements of ") + std::to_string(n) + " updates" +
            (red == ScatterReduction::kAdd ? ", add" : ""),
        Tol{1e-5, 1e-4},
        [red](const Tensor& d, const Tensor& i, const Tensor& u) {
          return scatter_elements(d, 1, i, u, red);
        },
        data, idx, upd);
  }
  Tensor tuples = rnd(kI64, {n, 1}, Dist::uniform(0, 2));
  Tensor upd_nd = rnd(kF32, {n}, Dist{0, 1}), data_nd = rnd(kF32, {3}, Dist{0, 1});
  for (ScatterReduction red : {ScatterReduction::kNone, ScatterReduction::kAdd}) {
    check(
        std::string("scatter_nd of ") + std::to_string(n) + " tuples" +
            (red == ScatterReduction::kAdd ? ", add" : ""),
        Tol{1e-5, 1e-4},
        [red](const Tensor& d, const Tensor& i, const Tensor& u) {
          return scatter_nd(d, i, u, red);
        },
        data_nd, tuples, upd_nd);
  }
}

}  // namespace
}  // namespace kiln
