// The FFTs and complex64 on the interpreter: values by hand (impulses, a cosine, short
// sequences), round trips at odd, prime and power-of-two lengths against a direct double DFT
// written here, every norm, padding and cutting to n, the complex part ops, casts, .npy
// complex64 files, and the errors (bad dtypes, lengths, ops that do not take complex64).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <filesystem>
#include <numbers>
#include <random>
#include <vector>

#include "kiln/kiln.h"

namespace kiln {
namespace {

using c64 = std::complex<float>;
using cd = std::complex<double>;

Tensor complex_tensor(const std::vector<c64>& v, Shape shape) {
  return Tensor::from_vector(v, std::move(shape));
}

void expect_complex(const Tensor& t, const std::vector<cd>& want, double tol,
                    const std::string& label) {
  ASSERT_EQ(t.dtype(), DType::kC64) << label;
  std::vector<c64> got = t.to_vector<c64>();
  ASSERT_EQ(got.size(), want.size()) << label;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i].real(), want[i].real(), tol) << label << " [" << i << "] real";
    EXPECT_NEAR(got[i].imag(), want[i].imag(), tol) << label << " [" << i << "] imag";
  }
}

/// The direct DFT in double, sign -1 forward, +1 inverse (unscaled).
std::vector<cd> reference_dft(const std::vector<cd>& x, int sign) {
  const size_t n = x.size();
  std::vector<cd> y(n);
  for (size_t k = 0; k < n; ++k)
    for (size_t j = 0; j < n; ++j) {
      const double a = 2 * std::numbers::pi * static_cast<double>(j * k % n) / n;
      y[k] += x[j] * cd(std::cos(a), sign * std::sin(a));
    }
  return y;
}

std::vector<c64> random_complex(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<c64> v(n);
  for (c64& x : v) x = {u(rng), u(rng)};
  return v;
}

TEST(Fft, ImpulseAndShortSequences) {
  Tensor impulse = Tensor::from_vector<float>({1, 0, 0, 0}, {4});
  expect_complex(fft(impulse), {1, 1, 1, 1}, 1e-7, "fft([1,0,0,0])");
  expect_complex(fft(impulse, -1, -1, FftNorm::kOrtho), {0.5, 0.5, 0.5, 0.5}, 1e-7, "ortho");
  expect_complex(fft(impulse, -1, -1, FftNorm::kForward), {0.25, 0.25, 0.25, 0.25}, 1e-7,
                 "forward");
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}, {4});
  expect_complex(fft(x), {10, {-2, 2}, -2, {-2, -2}}, 1e-6, "fft([1,2,3,4])");
  expect_complex(rfft(x), {10, {-2, 2}, -2}, 1e-6, "rfft([1,2,3,4])");
  expect_complex(ifft(fft(x)), {1, 2, 3, 4}, 1e-6, "ifft(fft(x))");
  EXPECT_EQ(irfft(rfft(x)).to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  // Padding to n and cutting to n.
  Tensor ones = Tensor::from_vector<float>({1, 1}, {2});
  expect_complex(fft(ones, 4), {2, {1, -1}, 0, {1, 1}}, 1e-6, "fft([1,1], n=4)");
  expect_complex(fft(x, 2), {3, -1}, 1e-6, "fft([1,2,3,4], n=2)");
  // One point: the identity (times the norm's factor).
  expect_complex(fft(complex_tensor({{3, -2}}, {1})), {{3, -2}}, 0, "fft of one point");
  expect_complex(ifft(complex_tensor({{3, -2}}, {1})), {{3, -2}}, 0, "ifft of one point");
}

TEST(Fft, Cosine) {
  constexpr int kN = 8;
  std::vector<float> v(kN);
  for (int j = 0; j < kN; ++j) v[j] = static_cast<float>(std::cos(2 * std::numbers::pi * j / kN));
  std::vector<cd> want(kN, 0);
  want[1] = want[kN - 1] = kN / 2.0;
  expect_complex(fft(Tensor::from_vector(v, {kN})), want, 1e-6, "fft(cos)");
  std::vector<cd> half(want.begin(), want.begin() + kN / 2 + 1);
  expect_complex(rfft(Tensor::from_vector(v, {kN})), half, 1e-6, "rfft(cos)");
}

TEST(Fft, MatchesDirectDftAtManyLengths) {
  std::mt19937 rng(7);
  for (int64_t n : {1, 2, 3, 5, 7, 12, 16, 17, 30, 64, 97, 100, 128}) {
    std::vector<c64> v = random_complex(static_cast<size_t>(2 * n), rng);
    Tensor t = complex_tensor(v, {2, n});
    std::vector<cd> fwd, inv;
    for (int r = 0; r < 2; ++r) {
      std::vector<cd> row(v.begin() + r * n, v.begin() + (r + 1) * n);
      for (cd y : reference_dft(row, -1)) fwd.push_back(y);
      for (cd y : reference_dft(row, 1)) inv.push_back(y / static_cast<double>(n));
    }
    const double tol = 1e-5 * std::sqrt(static_cast<double>(n));
    expect_complex(fft(t), fwd, tol, "fft n=" + std::to_string(n));
    expect_complex(ifft(t), inv, tol, "ifft n=" + std::to_string(n));
    // rfft / irfft of the real parts.
    std::vector<float> re;
    for (c64 z : v) re.push_back(z.real());
    Tensor real_t = Tensor::from_vector(re, {2, n});
    Tensor spec = rfft(real_t);
    ASSERT_EQ(spec.shape(), (Shape{2, n / 2 + 1}));
    std::vector<float> back = irfft(spec, n).to_vector<float>();
    for (size_t i = 0; i < re.size(); ++i) EXPECT_NEAR(back[i], re[i], tol) << "irfft n=" << n;
  }
}

TEST(Fft, IrfftDefaultLengthAndIgnoredImaginaryParts) {
  // Bins 0..2 of a length-4 Hermitian spectrum; the imaginary parts of bins 0 and 2 drop out.
  Tensor bins = complex_tensor({{10, 5}, {-2, 2}, {-2, 7}}, {3});
  Tensor y = irfft(bins);
  ASSERT_EQ(y.shape(), (Shape{4}));
  std::vector<float> v = y.to_vector<float>();
  const std::vector<float> want = {1, 2, 3, 4};
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(v[i], want[i], 1e-6);
  // Odd n = 5 from 3 bins: the inverse of rfft of 5 points.
  Tensor x = Tensor::from_vector<float>({1, -2, 0.5f, 3, 2}, {5});
  std::vector<float> back = irfft(rfft(x), 5).to_vector<float>();
  for (size_t i = 0; i < 5; ++i) EXPECT_NEAR(back[i], x.to_vector<float>()[i], 1e-6);
  // Norms: forward scales rfft by 1/n, so irfft with forward is unscaled.
  std::vector<float> f =
      irfft(rfft(x, -1, -1, FftNorm::kForward), 5, -1, FftNorm::kForward).to_vector<float>();
  for (size_t i = 0; i < 5; ++i) EXPECT_NEAR(f[i], x.to_vector<float>()[i], 1e-6);
  std::vector<float> o =
      irfft(rfft(x, -1, -1, FftNorm::kOrtho), 5, -1, FftNorm::kOrtho).to_vector<float>();
  for (size_t i = 0; i < 5; ++i) EXPECT_NEAR(o[i], x.to_vector<float>()[i], 1e-6);
}

TEST(Fft, RealInputsArePromoted) {
  for (DType dt : {DType::kF16, DType::kI32, DType::kI64}) {
    Tensor x = cast(Tensor::from_vector<float>({1, 2, 3, 4}, {4}), dt);
    expect_complex(fft(x), {10, {-2, 2}, -2, {-2, -2}}, 1e-6, dtype_name(dt));
  }
}

TEST(Fft, BatchDimsAndEmptyBatch) {
  Tensor x = Tensor::from_vector<float>({1, 0, 0, 0, 1, 2, 3, 4}, {2, 1, 4});
  Tensor y = fft(x);
  ASSERT_EQ(y.shape(), (Shape{2, 1, 4}));
  expect_complex(y, {1, 1, 1, 1, 10, {-2, 2}, -2, {-2, -2}}, 1e-6, "batched");
  Tensor empty = Tensor::full({0, 3, 6}, 1.0);
  EXPECT_EQ(fft(empty).shape(), (Shape{0, 3, 6}));
  EXPECT_EQ(rfft(empty).shape(), (Shape{0, 3, 4}));
  EXPECT_EQ(irfft(fft(empty)).shape(), (Shape{0, 3, 10}));
}

TEST(Fft, OtherDims) {
  std::mt19937 rng(11);
  Tensor z = complex_tensor(random_complex(3 * 4 * 5, rng), {3, 4, 5});
  for (int64_t dim : {0, 1, -2, -3}) {
    std::vector<int64_t> perm = {0, 1, 2};
    std::swap(perm[static_cast<size_t>(dim < 0 ? dim + 3 : dim)], perm[2]);
    const std::string at = "dim " + std::to_string(dim);
    EXPECT_EQ(fft(z, -1, dim).to_vector<c64>(),
              permute(fft(permute(z, perm)), perm).to_vector<c64>())
        << at;
    EXPECT_EQ(ifft(z, 6, dim, FftNorm::kOrtho).to_vector<c64>(),
              permute(ifft(permute(z, perm), 6, -1, FftNorm::kOrtho), perm).to_vector<c64>())
        << at;
  }
  Tensor x = real(z);
  EXPECT_EQ(rfft(x, -1, 0).shape(), (Shape{2, 4, 5}));
  EXPECT_EQ(irfft(z, -1, 1).shape(), (Shape{3, 6, 5}));
  EXPECT_EQ(irfft(z, -1, 1).to_vector<float>(),
            permute(irfft(permute(z, {0, 2, 1})), {0, 2, 1}).to_vector<float>());
  // 1-D: dim 0 is the last dim.
  Tensor v = Tensor::from_vector<float>({1, 2, 3, 4}, {4});
  expect_complex(fft(v, -1, 0), {10, {-2, 2}, -2, {-2, -2}}, 1e-6, "dim 0 of 1-D");
}

TEST(Fft, ComplexPartOps) {
  Tensor z = complex_tensor({{3, 4}, {-1, 0}, {0, -2}}, {3});
  EXPECT_EQ(real(z).to_vector<float>(), (std::vector<float>{3, -1, 0}));
  EXPECT_EQ(imag(z).to_vector<float>(), (std::vector<float>{4, 0, -2}));
  EXPECT_EQ(abs(z).to_vector<float>(), (std::vector<float>{5, 1, 2}));
  EXPECT_EQ(abs(z).dtype(), DType::kF32);
  Tensor r = view_as_real(z);
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{3, 4, -1, 0, 0, -2}));
  Tensor back = view_as_complex(r);
  EXPECT_EQ(back.to_vector<c64>(), z.to_vector<c64>());
  EXPECT_EQ(z.to_doubles(), (std::vector<double>{3, 4, -1, 0, 0, -2}));
  // real of a real tensor is the tensor; cast makes complex64 with imaginary part 0.
  Tensor f = Tensor::from_vector<float>({1.5f, -2}, {2});
  EXPECT_EQ(real(f).impl(), f.impl());
  expect_complex(cast(f, DType::kC64), {1.5, -2}, 0, "cast to c64");
  expect_complex(cast(Tensor::from_vector<int32_t>({7}, {1}), DType::kC64), {7}, 0, "i32");
  EXPECT_EQ(reshape(z, {3, 1}).to_vector<c64>(), z.to_vector<c64>());
  EXPECT_EQ(std::string(dtype_name(DType::kC64)), "c64");
  EXPECT_EQ(z.meta().str(), "c64[3]");
  EXPECT_EQ(dtype_size(DType::kC64), 8u);
}

TEST(Fft, NpyComplex64RoundTrip) {
  Tensor z = complex_tensor({{1, -1}, {2.5f, 0}, {0, 3}, {-4, 4}}, {2, 2});
  const auto path = std::filesystem::temp_directory_path() / "kiln_fft_test_c64.npy";
  ASSERT_TRUE(save_npy(path.string(), z).ok());
  Expected<Tensor> back = load_npy(path.string());
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->dtype(), DType::kC64);
  EXPECT_EQ(back->shape(), (Shape{2, 2}));
  EXPECT_EQ(back->to_vector<c64>(), z.to_vector<c64>());
  std::filesystem::remove(path);
}

/// Runs `fn`, expecting a kiln::Error whose message contains `what`.
template <typename Fn>
void expect_error(const Fn& fn, const std::string& what) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one containing '" << what << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(Fft, Errors) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}, {4});
  Tensor z = fft(x);
  expect_error([] { fft(Tensor::full({}, 1.0)); }, "at least one dim");
  expect_error([&] { fft(x, 0); }, "at least 1");
  expect_error([&] { fft(x, -3); }, "at least 1");
  expect_error([&] { rfft(z); }, "real input");
  expect_error([] { fft(Tensor::full({3}, 1.0, DType::kBool)); }, "bool");
  expect_error([] { irfft(Tensor::full({1}, 1.0)); }, "irfft of 1 bins needs n");
  expect_error([&] { exp(z); }, "complex64");
  expect_error([&] { z + z; }, "complex64");
  expect_error([&] { sum(z, {0}); }, "complex64");
  expect_error([&] { cast(z, DType::kF32); }, "complex64");
  expect_error([&] { slice(z, 0, 0, 2); }, "complex64");
  expect_error([&] { fft(x, -1, 1); }, "dim 1 is out of range");
  expect_error([&] { fft(x, -1, -2); }, "dim -2 is out of range");
  expect_error([&] { imag(x); }, "complex64");
  expect_error([&] { view_as_real(x); }, "complex64");
  expect_error([] { view_as_complex(Tensor::full({3, 3}, 1.0)); }, "size 2");
  expect_error([] { view_as_complex(Tensor::full({3, 2}, 1.0, DType::kI32)); }, "f32");
  expect_error([] { fft(Tensor::full({1}, 1.0)).item<float>(); }, "complex64");
  expect_error([] { fft(Tensor::full({1}, 1.0)).item<int64_t>(); }, "complex64");
  expect_error([] { (void)static_cast<bool>(fft(Tensor::full({1}, 1.0))); }, "complex64");
  expect_error([&] { z.to_vector<float>(); }, "c64");
}

TEST(Fft, CompiledOnTheInterpreter) {
  // CPU tensors: the compiled graph runs on the interpreter, batch dims symbolic.
  auto f = compile([](const Tensor& x) { return fft(x); },
                   {.name = "fft_cpu", .dynamic = Dynamic::kTrue});
  std::mt19937 rng(3);
  for (int64_t b : {2, 5}) {
    std::vector<float> v(static_cast<size_t>(b * 6));
    std::uniform_real_distribution<float> u(-1, 1);
    for (float& e : v) e = u(rng);
    Tensor x = Tensor::from_vector(v, {b, 6});
    Tensor got = f(x), want = fft(x);
    EXPECT_EQ(got.to_vector<c64>(), want.to_vector<c64>());
  }
  EXPECT_EQ(f.stats().graph_breaks, 0u);
}

}  // namespace
}  // namespace kiln
