// fft, ifft, rfft and irfft on Vulkan against the interpreter (double precision), on fresh
// random data into poisoned memory, eagerly and compiled: lengths 1, odd, prime, powers of two
// (the shared-memory Stockham path), other lengths (the direct DFT with a shared twiddle
// table) and lengths too long for shared memory (the direct DFT from the buffer), every norm,
// padding and cutting to n, batch dims (an empty batch too), real and complex inputs, fused
// producers, symbolic batch sizes; the complex part ops; and the seed's good_fn_3
// (torch.fft.fft(x)) compiled with no graph break. The tolerance grows with sqrt(n) log2(n)
// and the values' magnitude.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "exec/check.h"
#include "device/test_util.h"

namespace kiln {
namespace {

using test::Dist;
using test::Tol;

constexpr FftNorm kNorms[] = {FftNorm::kBackward, FftNorm::kForward, FftNorm::kOrtho};

const char* norm_name(FftNorm n) {
  return n == FftNorm::kBackward ? "backward" : n == FftNorm::kForward ? "forward" : "ortho";
}

class DeviceFft : public test::DeviceOpTest {
 protected:
  /// Float error of an n-point transform of values up to `mag` in magnitude: rounding in
  /// each of the ~log2(n) stages (the direct DFT: its twiddles and n-term sums) grows like
  /// sqrt(n) times the values, times the norm's factor.
  static Tol fft_tol(int64_t n, double mag, FftNorm norm, bool inverse) {
    double scale = 1;
    if (norm == FftNorm::kOrtho) scale = 1 / std::sqrt(static_cast<double>(n));
    if ((norm == FftNorm::kBackward) == inverse && norm != FftNorm::kOrtho) scale = 1.0 / n;
    const double steps = std::log2(static_cast<double>(n)) + 2;
    return {1e-5, 1e-6 * steps * std::sqrt(static_cast<double>(n)) * mag * scale};
  }
};

TEST_F(DeviceFft, AllOpsLengthsAndNorms) {
  // 1, odd, prime, powers of two, other lengths; 2048 is the largest Stockham length with 32
  // KiB of shared memory, 3000 and 4096 take the direct DFT from the buffer there.
  const std::vector<int64_t> lengths = {1, 2, 3, 5, 8, 12, 16, 31, 64, 97, 100, 256, 1000, 2048};
  for (int64_t n : lengths) {
    const Shape shape = n <= 16 ? Shape{3, 2, n} : Shape{3, n};
    for (FftNorm norm : kNorms) {
      const std::string at = " n=" + std::to_string(n) + " " + norm_name(norm);
      Tensor z = rnd(DType::kC64, shape, Dist::uniform(-1, 1));
      Tensor x = rnd(DType::kF32, shape, Dist::uniform(-1, 1));
      check(
          "fft c64" + at, fft_tol(n, 1, norm, false),
          [norm](const Tensor& t) { return fft(t, -1, -1, norm); }, z);
      check(
          "ifft c64" + at, fft_tol(n, 1, norm, true),
          [norm](const Tensor& t) { return ifft(t, -1, -1, norm); }, z);
      check(
          "fft f32" + at, fft_tol(n, 1, norm, false),
          [norm](const Tensor& t) { return fft(t, -1, -1, norm); }, x);
      check(
          "rfft" + at, fft_tol(n, 1, norm, false),
          [norm](const Tensor& t) { return rfft(t, -1, -1, norm); }, x);
      // irfft of n / 2 + 1 random bins, output length n (odd and even n).
      Shape bins = shape;
      bins.back() = n / 2 + 1;
      check(
          "irfft" + at, fft_tol(n, 1, norm, true),
          [norm, n](const Tensor& t) { return irfft(t, n, -1, norm); },
          rnd(DType::kC64, bins, Dist::uniform(-1, 1)));
    }
  }
}

TEST_F(DeviceFft, LongRowsPaddingAndProducers) {
  // Rows too long for shared memory: the direct DFT reading the buffer.
  for (int64_t n : {3000, 4096}) {
    check(
        "fft long n=" + std::to_string(n), fft_tol(n, 1, FftNorm::kBackward, false),
        [](const Tensor& t) { return fft(t); }, rnd(DType::kC64, {2, n}, Dist::uniform(-1, 1)));
  }
  Tensor x = rnd(DType::kF32, {4, 10}, Dist::uniform(-1, 1));
  check(
      "fft n=16 (padded)", fft_tol(16, 1, FftNorm::kBackward, false),
      [](const Tensor& t) { return fft(t, 16); }, x);
  check(
      "fft n=7 (cut)", fft_tol(7, 1, FftNorm::kBackward, false),
      [](const Tensor& t) { return fft(t, 7); }, x);
  check(
      "rfft n=9 (cut, odd)", fft_tol(9, 1, FftNorm::kBackward, false),
      [](const Tensor& t) { return rfft(t, 9); }, x);
  check(
      "irfft n=30 (padded bins)", fft_tol(30, 1, FftNorm::kBackward, true),
      [](const Tensor& t) { return irfft(t, 30); }, rnd(DType::kC64, {2, 6}, Dist::uniform(-1, 1)));
  check(
      "irfft default n", fft_tol(18, 1, FftNorm::kBackward, true),
      [](const Tensor& t) { return irfft(t); }, rnd(DType::kC64, {2, 10}, Dist::uniform(-1, 1)));
  // Producers fold into the load: an f16 input, an elementwise chain, an i32 input.
  check(
      "fft(tanh(x) * 2)", fft_tol(64, 2, FftNorm::kBackward, false),
      [](const Tensor& t) { return fft(tanh(t) * 2.0); },
      rnd(DType::kF32, {5, 64}, Dist::uniform(-1, 1)));
  check(
      "fft f16", fft_tol(24, 1, FftNorm::kBackward, false), [](const Tensor& t) { return fft(t); },
      rnd(DType::kF16, {3, 24}, Dist::uniform(-1, 1)));
  check(
      "rfft i32", fft_tol(20, 5, FftNorm::kOrtho, false),
      [](const Tensor& t) { return rfft(t, -1, -1, FftNorm::kOrtho); },
      rnd(DType::kI32, {3, 20}, Dist::uniform(-5, 5)));
  // Round trips and consumers of the complex result.
  check(
      "irfft(rfft(x))", {1e-5, 1e-5}, [](const Tensor& t) { return irfft(rfft(t), 10); }, x);
  check(
      "abs(fft(x))", fft_tol(10, 1, FftNorm::kBackward, false),
      [](const Tensor& t) { return abs(fft(t)); }, x);
  check(
      "real / imag / view_as_real", fft_tol(10, 1, FftNorm::kBackward, false),
      [](const Tensor& t) {
        Tensor y = fft(t);
        return concat({real(y), imag(y), reshape(view_as_real(y), {4, 20})}, 1);
      },
      x);
  check(
      "fft(view_as_complex(x))", fft_tol(5, 1, FftNorm::kBackward, false),
      [](const Tensor& t) { return fft(view_as_complex(t)); },
      rnd(DType::kF32, {4, 5, 2}, Dist::uniform(-1, 1)));
  check(
      "fft(cast(x, c64))", fft_tol(10, 1, FftNorm::kBackward, false),
      [](const Tensor& t) { return fft(cast(t, DType::kC64)); }, x);
}

// Another dim than the last: permutes around the kernel (folded into its load; the result's
// permute a copy kernel of complex64 values or folded into a consumer). Stored complex64
// movement ops run as copy kernels too.
TEST_F(DeviceFft, OtherDimsAndComplexMovement) {
  Tensor z = rnd(DType::kC64, {6, 3, 4}, Dist::uniform(-1, 1));
  Tensor x = rnd(DType::kF32, {5, 7, 2}, Dist::uniform(-1, 1));
  check(
      "fft dim 0", fft_tol(6, 1, FftNorm::kBackward, false),
      [](const Tensor& t) { return fft(t, -1, 0); }, z);
  check(
      "ifft dim -2, n=5", fft_tol(5, 1, FftNorm::kBackward, true),
      [](const Tensor& t) { return ifft(t, 5, -2); }, z);
  check(
      "rfft dim 1", fft_tol(7, 1, FftNorm::kBackward, false),
      [](const Tensor& t) { return rfft(t, -1, 1); }, x);
  check(
      "irfft dim 0", fft_tol(8, 1, FftNorm::kBackward, true),
      [](const Tensor& t) { return irfft(t, -1, 0); }, z);
  check(
      "abs(fft dim 0)", fft_tol(5, 1, FftNorm::kBackward, false),
      [](const Tensor& t) { return abs(fft(t, -1, 0)); }, x);
  check(
      "reshape / permute / expand of complex64", Tol::exact(),
      [](const Tensor& t) {
        return expand(permute(reshape(t, {3, 6, 4}), {2, 0, 1}), {2, 4, 3, 6});
      },
      z);
}

TEST_F(DeviceFft, EmptyBatchAndEmptyRows) {
  check(
      "fft of an empty batch", Tol::exact(), [](const Tensor& t) { return fft(t); },
      rnd(DType::kC64, {0, 8}));
  check(
      "rfft of an empty batch", Tol::exact(), [](const Tensor& t) { return rfft(t); },
      rnd(DType::kF32, {2, 0, 7}));
  // Rows of no points padded to n: zeros.
  check(
      "fft of empty rows, n=4", Tol::exact(), [](const Tensor& t) { return fft(t, 4); },
      rnd(DType::kF32, {3, 0}));
}

TEST_F(DeviceFft, SymbolicBatch) {
  CheckOptions opt;
  opt.compile.dynamic = Dynamic::kTrue;
  for (int64_t b : {2, 7})
    check_with(
        "fft dynamic batch " + std::to_string(b), fft_tol(48, 1, FftNorm::kBackward, false), opt,
        [](const Tensor& t) { return fft(t); }, rnd(DType::kF32, {b, 48}, Dist::uniform(-1, 1)));
  // One compile serves both batch sizes; the FFT length is specialised (a new one recompiles).
  auto f = compile([](const Tensor& t) { return rfft(t); },
                   {.name = "rfft_dyn", .dynamic = Dynamic::kTrue});
  for (int64_t b : {3, 9}) {
    Tensor x = rnd(DType::kF32, {b, 32}, Dist::uniform(-1, 1));
    test::expect_close(f(x.to(Device::vulkan())), rfft(x),
                       fft_tol(32, 1, FftNorm::kBackward, false),
                       "rfft dynamic batch " + std::to_string(b));
  }
  EXPECT_EQ(f.entries().size(), 1u);
  Tensor y = rnd(DType::kF32, {3, 20}, Dist::uniform(-1, 1));
  test::expect_close(f(y.to(Device::vulkan())), rfft(y), fft_tol(20, 1, FftNorm::kBackward, false),
                     "rfft new length");
}

// Check mode compares each complex64 kernel output with the interpreter part by part.
TEST_F(DeviceFft, CheckModeComparesComplexOutputs) {
  auto f = compile([](const Tensor& t) { return abs(fft(t * 2.0)) + 1.0; },
                   {.name = "fft_checked", .check = true});
  clear_check_reports();
  Tensor x = rnd(DType::kF32, {3, 100}, Dist::uniform(-1, 1));
  f(x.to(Device::vulkan()));
  const std::vector<CheckReport> reports = check_reports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].first_divergence, -1);
  EXPECT_GE(reports[0].kernels.size(), 2u);
  for (const KernelCheck& k : reports[0].kernels) {
    EXPECT_TRUE(k.compared) << k.kernel;
    EXPECT_TRUE(k.ok) << k.kernel << " max error " << k.max_error;
  }
}

// The seed's good_fn_3: torch.fft.fft(x), compiled: one graph, no break, on the device.
TEST_F(DeviceFft, GoodFn3CompilesWithoutBreaks) {
  auto good_fn_3 = compile([](const Tensor& x) { return fft(x); }, {.name = "good_fn_3"});
  Tensor x = rnd(DType::kF32, {4, 256}, Dist::uniform(-1, 1));
  Tensor got = good_fn_3(x.to(Device::vulkan()));
  test::expect_close(got, fft(x), fft_tol(256, 1, FftNorm::kBackward, false), "good_fn_3");
  EXPECT_EQ(good_fn_3.stats().graph_breaks, 0u);
  std::vector<EntryInfo> entries = good_fn_3.entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_TRUE(entries[0].on_device);
  EXPECT_TRUE(entries[0].breaks.empty());
  EXPECT_EQ(entries[0].graph_count, 1);
  ASSERT_EQ(entries[0].kernels.size(), 1u);
  EXPECT_NE(entries[0].kernels[0].find("fft"), std::string::npos) << entries[0].kernels[0];
}

}  // namespace
}  // namespace kiln
