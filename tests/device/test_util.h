/// \file test_util.h
/// Shared helpers for device tests: the DeviceTest fixture (skips without Vulkan, fails on new
/// validation-layer messages and on silent CPU fallbacks), random tensors per dtype, device
/// memory poisoning, and value comparison with readable mismatch reports.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kiln/kiln.h"

namespace kiln::test {

/// Short dtype names for test tables: `using namespace test::dtypes;`.
namespace dtypes {
inline constexpr DType kF32 = DType::kF32;
inline constexpr DType kF16 = DType::kF16;
inline constexpr DType kI32 = DType::kI32;
inline constexpr DType kI64 = DType::kI64;
inline constexpr DType kBool = DType::kBool;
}  // namespace dtypes

/// Fixture for tests that need a Vulkan device.
///   * SetUp skips the test (never fails it) when no Vulkan device exists.
///   * TearDown fails the test if kiln::validation_messages() gained entries during it.
///   * Warnings are captured; a graph that silently ran on the CPU interpreter ("no device
///     lowering") fails the test unless the reason is a missing device capability, or the test
///     sets allow_cpu_fallback_.
class DeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!vulkan_available()) GTEST_SKIP() << "no Vulkan device: " << vulkan_status().to_string();
    validation_before_ = validation_messages().size();
    set_log_sink([this](LogTopic topic, std::string_view message) {
      std::lock_guard<std::mutex> lock(warnings_mu_);
      if (topic == LogTopic::kWarning) warnings_.emplace_back(message);
    });
  }

  void TearDown() override {
    if (!vulkan_available()) return;
    set_log_sink({});
    std::vector<std::string> msgs = validation_messages();
    EXPECT_EQ(msgs.size(), validation_before_)
        << "new validation-layer messages, first: "
        << (msgs.size() > validation_before_ ? msgs[validation_before_] : std::string());
    if (!allow_cpu_fallback_) {
      for (const std::string& w : warnings()) {
        bool fallback = w.find("no device lowering") != std::string::npos;
        bool missing_cap = w.find("the device has no") != std::string::npos;
        EXPECT_FALSE(fallback && !missing_cap) << "a graph fell back to the CPU interpreter: " << w;
      }
    }
  }

  std::vector<std::string> warnings() {
    std::lock_guard<std::mutex> lock(warnings_mu_);
    return warnings_;
  }

  /// `fn` compiled, on `x` (a CPU tensor) sized past gallivm's loop limit: on llvmpipe the
  /// kernel is unimplemented at that size and the op runs on the interpreter with a warning
  /// that names the loop limit; a driver without that limit (SwiftShader) runs the kernel.
  /// Either way the values are the interpreter's, exactly.
  template <typename Fn>
  void expect_loop_limit_fallback_or_run(const std::string& label, const Fn& fn, const Tensor& x);

  bool allow_cpu_fallback_ = false;

 private:
  size_t validation_before_ = 0;
  std::mutex warnings_mu_;
  std::vector<std::string> warnings_;
};

// ---- shapes and labels --------------------------------------------------------------------------

inline std::string str(const Shape& shape) {
  return shape_str(shape);
}

inline std::string meta_str(const Tensor& t) {
  return t.meta().str();
}

// ---- random tensors -----------------------------------------------------------------------------

/// Value distribution for random tensors. Floats are uniform in [lo, hi]; integers uniform in
/// [ceil(lo), floor(hi)]; bools are true with probability `p_true`. A fraction `zero_frac` of
/// numeric elements is set to exactly 0 (exercises x != 0, relu(0), compares on ties).
struct Dist {
  double lo = -2.0;
  double hi = 2.0;
  double zero_frac = 0.0;
  double p_true = 0.5;

  static Dist uniform(double lo, double hi) { return Dist{lo, hi, 0.0, 0.5}; }
  /// Strictly positive values, for log / sqrt / rsqrt / divisors.
  static Dist positive(double lo = 0.1, double hi = 4.0) { return Dist{lo, hi, 0.0, 0.5}; }
  Dist with_zeros(double frac) const {
    Dist d = *this;
    d.zero_frac = frac;
    return d;
  }
};

/// Random values as doubles, already representable in `dtype` (f16 values are rounded to half;
/// complex64 gets 2 n values, interleaved real and imaginary parts).
inline std::vector<double> random_values(DType dtype, int64_t n, std::mt19937& rng,
                                         const Dist& dist = {}) {
  if (dtype == DType::kC64) return random_values(DType::kF32, 2 * n, rng, dist);
  std::vector<double> v(static_cast<size_t>(n));
  std::uniform_real_distribution<double> zero(0.0, 1.0);
  if (dtype == DType::kBool) {
    std::bernoulli_distribution b(dist.p_true);
    for (double& x : v) x = b(rng) ? 1.0 : 0.0;
    return v;
  }
  if (is_floating(dtype)) {
    std::uniform_real_distribution<double> u(dist.lo, dist.hi);
    for (double& x : v) {
      double r = u(rng);
      x = dtype == DType::kF16
              ? static_cast<double>(half_to_float(float_to_half(static_cast<float>(r))))
              : static_cast<double>(static_cast<float>(r));
      if (dist.zero_frac > 0 && zero(rng) < dist.zero_frac) x = 0.0;
    }
    return v;
  }
  std::uniform_int_distribution<int64_t> u(static_cast<int64_t>(std::ceil(dist.lo)),
                                           static_cast<int64_t>(std::floor(dist.hi)));
  for (double& x : v) {
    x = static_cast<double>(u(rng));
    if (dist.zero_frac > 0 && zero(rng) < dist.zero_frac) x = 0.0;
  }
  return v;
}

/// A tensor of `dtype` and `shape` holding exactly `values` (converted per dtype; complex64
/// takes two values per element, real then imaginary part).
inline Tensor tensor_from_doubles(DType dtype, const Shape& shape,
                                  const std::vector<double>& values,
                                  Device device = Device::cpu()) {
  switch (dtype) {
    case DType::kF32: {
      std::vector<float> v(values.begin(), values.end());
      return Tensor::from_bytes(dtype, shape, v.data(), v.size() * sizeof(float), device);
    }
    case DType::kF16: {
      std::vector<uint16_t> v;
      for (double x : values) v.push_back(float_to_half(static_cast<float>(x)));
      return Tensor::from_bytes(dtype, shape, v.data(), v.size() * sizeof(uint16_t), device);
    }
    case DType::kI32: {
      std::vector<int32_t> v;
      for (double x : values) v.push_back(static_cast<int32_t>(x));
      return Tensor::from_bytes(dtype, shape, v.data(), v.size() * sizeof(int32_t), device);
    }
    case DType::kI64: {
      std::vector<int64_t> v;
      for (double x : values) v.push_back(static_cast<int64_t>(x));
      return Tensor::from_bytes(dtype, shape, v.data(), v.size() * sizeof(int64_t), device);
    }
    case DType::kBool: {
      std::vector<uint8_t> v;
      for (double x : values) v.push_back(x != 0 ? 1 : 0);
      return Tensor::from_bytes(dtype, shape, v.data(), v.size(), device);
    }
    case DType::kC64: {  // interleaved (real, imaginary) values, 2 per element
      std::vector<float> v(values.begin(), values.end());
      return Tensor::from_bytes(dtype, shape, v.data(), v.size() * sizeof(float), device);
    }
  }
  return {};
}

/// A fresh random tensor on `device` (default CPU).
inline Tensor random_tensor(DType dtype, const Shape& shape, std::mt19937& rng,
                            const Dist& dist = {}, Device device = Device::cpu()) {
  return tensor_from_doubles(dtype, shape, random_values(dtype, numel(shape), rng, dist), device);
}

// ---- poisoning ----------------------------------------------------------------------------------

/// Fills about `bytes` of device memory with NaN (f32 0x7fc00000) and frees it again, so the
/// sub-allocator hands the recycled NaN-filled ranges to the next allocations (kernel outputs).
/// The caller must keep at least one device tensor alive across the call (e.g. an `anchor`), or
/// the allocator releases the emptied block. Returns nothing: the scratch tensors die here.
inline void poison_device_memory(size_t bytes) {
  constexpr int64_t kChunk = 1 << 18;  // 1 MiB of f32
  int64_t total = static_cast<int64_t>(bytes / sizeof(float)) + 1024;
  std::vector<Tensor> scratch;
  while (total > 0) {
    int64_t n = std::min(total, kChunk);
    scratch.push_back(
        Tensor::full({n}, std::numeric_limits<double>::quiet_NaN(), DType::kF32, Device::vulkan()));
    total -= n;
  }
}

// ---- subnormals ---------------------------------------------------------------------------------

/// Whether the default Vulkan device flushes subnormal f32 values to zero in arithmetic and
/// comparisons (Vulkan allows it unless a shader asks for DenormPreserve, which neither lavapipe
/// nor SwiftShader offers; lavapipe preserves them anyway, SwiftShader flushes). Measured once:
/// 1e-40 + 1e-40 on the device.
inline bool device_flushes_subnormals() {
  static const bool flushes = [] {
    const Tensor x = Tensor::from_vector(std::vector<float>{1e-40f}, {1}).to(Device::vulkan());
    return (x + x).to_vector<float>()[0] == 0.0f;
  }();
  return flushes;
}

/// `t` with its subnormal f32 values replaced by zeros of the same sign when the device
/// flushes subnormals (device_flushes_subnormals), else `t`: a reference computed through it is
/// what such a device computes. Traceable, so a tested function may apply it to intermediates.
inline Tensor flush_subnormals_like_the_device(const Tensor& t) {
  if (t.dtype() != DType::kF32 || !device_flushes_subnormals()) return t;
  return where(abs(t) < 1.17549435e-38, t * 0.0, t);
}

// ---- comparison ---------------------------------------------------------------------------------

/// Per-element tolerance: |actual - expected| <= abs + rel * |expected| (+ rel_scale * scale[i]
/// when a scale vector is given, e.g. the sum of |x| over each reduced slice).
struct Tol {
  double rel = 0.0;
  double abs = 0.0;

  static Tol exact() { return {0.0, 0.0}; }
  /// Defaults for one elementwise op producing `dtype`.
  static Tol for_dtype(DType dtype) {
    switch (dtype) {
      case DType::kF32:
        return {1e-5, 1e-6};
      case DType::kF16:
        return {2e-3, 1e-4};
      default:
        return exact();
    }
  }
};

/// Compares values; NaN matches NaN (and only NaN), infinities must match exactly. `scale`, if
/// non-empty, adds scale[i] * scale_rel to the allowed error of element i.
inline ::testing::AssertionResult values_close(const std::vector<double>& actual,
                                               const std::vector<double>& expected, Tol tol,
                                               const std::vector<double>& scale = {},
                                               double scale_rel = 0.0) {
  if (actual.size() != expected.size())
    return ::testing::AssertionFailure()
           << "size mismatch: got " << actual.size() << " elements, expected " << expected.size();
  size_t bad = 0;
  std::ostringstream first;
  first.precision(9);
  for (size_t i = 0; i < actual.size(); ++i) {
    double a = actual[i], e = expected[i];
    bool ok;
    if (std::isnan(e) || std::isnan(a)) {
      ok = std::isnan(e) && std::isnan(a);
    } else if (std::isinf(e) || std::isinf(a)) {
      ok = a == e;
    } else {
      double allowed = tol.abs + tol.rel * std::fabs(e);
      if (!scale.empty()) allowed += scale_rel * scale[i];
      ok = std::fabs(a - e) <= allowed;
    }
    if (!ok) {
      if (bad < 5) first << "\n  [" << i << "] got " << a << ", expected " << e;
      ++bad;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << actual.size() << " elements differ; first:" << first.str();
}

/// Checks dtype, shape and values of `actual` against `expected` (any devices).
inline void expect_close(const Tensor& actual, const Tensor& expected, Tol tol,
                         const std::string& label, const std::vector<double>& scale = {},
                         double scale_rel = 0.0) {
  ASSERT_TRUE(actual.defined()) << label << ": undefined result";
  EXPECT_EQ(actual.dtype(), expected.dtype()) << label << ": dtype " << dtype_name(actual.dtype())
                                              << " vs " << dtype_name(expected.dtype());
  ASSERT_EQ(actual.shape(), expected.shape())
      << label << ": shape " << str(actual.shape()) << " vs " << str(expected.shape());
  if (actual.dtype() == DType::kI64 && expected.dtype() == DType::kI64) {
    // Exact, without the rounding of large values to double.
    std::vector<int64_t> a = actual.to_vector<int64_t>(), e = expected.to_vector<int64_t>();
    size_t bad = 0;
    std::ostringstream first;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] == e[i]) continue;
      if (bad++ < 5) first << "\n  [" << i << "] got " << a[i] << ", expected " << e[i];
    }
    EXPECT_EQ(bad, 0u) << label << " (" << meta_str(expected) << "): " << bad << " of " << a.size()
                       << " elements differ; first:" << first.str();
    return;
  }
  EXPECT_TRUE(values_close(actual.to_doubles(), expected.to_doubles(), tol, scale, scale_rel))
      << label << " (" << meta_str(expected) << ")";
}

inline void expect_close(const std::vector<double>& actual, const std::vector<double>& expected,
                         Tol tol, const std::string& label) {
  EXPECT_TRUE(values_close(actual, expected, tol)) << label;
}

// ---- differential checks: Vulkan vs the CPU interpreter -----------------------------------------

/// A deterministic seed from the running test's full name (FNV-1a), so each test has its own
/// stream and failures reproduce.
inline uint32_t seed_for_current_test() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "";
  uint32_t h = 2166136261u;
  for (char c : name) h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
  return h;
}

template <typename Fn>
void DeviceTest::expect_loop_limit_fallback_or_run(const std::string& label, const Fn& fn,
                                                   const Tensor& x) {
  allow_cpu_fallback_ = true;
  Tensor want = fn(x);
  const size_t before = warnings().size();
  auto compiled = compile(fn, {.name = "loop_limit"});
  poison_device_memory(1 << 20);
  expect_close(compiled(x.to(Device::vulkan())), want, Tol::exact(), label);
  const std::vector<std::string> w = warnings();
  for (size_t i = before; i < w.size(); ++i)
    EXPECT_NE(w[i].find("loop iterations"), std::string::npos)
        << label << ": another reason: " << w[i];
  if (Device::vulkan().name().find("llvmpipe") != std::string::npos) {
    EXPECT_GT(w.size(), before) << label << ": no loop-limit fallback on gallivm";
  }
}

/// DeviceTest plus a seeded rng and check(): run a tensor function on CPU tensors (the
/// interpreter, the reference), then on Vulkan copies of the same inputs (a) eagerly, one
/// dispatch per op, and (b) through kiln::compile (fused), each time into poisoned memory, and
/// compare. An `anchor_` device tensor keeps the allocator's block alive so the poison survives.
class DeviceOpTest : public DeviceTest {
 protected:
  void SetUp() override {
    DeviceTest::SetUp();
    if (IsSkipped()) return;
    seed_ = seed_for_current_test();
    rng_.seed(seed_);
    anchor_ = Tensor::full({64}, 0.0, DType::kF32, Device::vulkan());
  }
  void TearDown() override {
    anchor_ = Tensor();
    DeviceTest::TearDown();
    if (!IsSkipped()) RecordProperty("cases", cases_);
  }

  Tensor rnd(DType dtype, const Shape& shape, const Dist& dist = {}) {
    return random_tensor(dtype, shape, rng_, dist);
  }

  struct CheckOptions {
    bool eager = true;
    bool compiled = true;
    CompileOptions compile;
    std::vector<double> scale;  // per-output-element error allowance, times scale_rel
    double scale_rel = 0.0;
  };

  template <typename Fn, typename... T>
  void check(const std::string& label, Tol tol, const Fn& fn, const T&... cpu_inputs) {
    check_with(label, tol, CheckOptions{}, fn, cpu_inputs...);
  }

  template <typename Fn, typename... T>
  void check_with(const std::string& label, Tol tol, const CheckOptions& opt, const Fn& fn,
                  const T&... cpu_inputs) {
    static_assert((std::is_same_v<T, Tensor> && ...), "inputs are Tensors");
    ++cases_;
    SCOPED_TRACE(label + " (seed " + std::to_string(seed_) + ")");
    Tensor want;
    try {
      want = fn(cpu_inputs...);
    } catch (const Error& e) {
      ADD_FAILURE() << label << " [cpu reference] threw: " << e.what();
      return;
    }
    ASSERT_TRUE(want.device().is_cpu());
    size_t bytes = want.meta().nbytes();
    ((bytes += cpu_inputs.meta().nbytes()), ...);
    const size_t poison = 2 * bytes + (64u << 10);
    if (opt.eager) {
      poison_device_memory(poison);
      RuntimeCounters c0 = runtime_counters();
      try {
        Tensor got = fn(cpu_inputs.to(Device::vulkan())...);
        EXPECT_EQ(got.device(), Device::vulkan()) << label << " [eager]";
        if (want.numel() > 0) {
          EXPECT_GT(runtime_counters().dispatches, c0.dispatches)
              << label << " [eager]: no dispatch";
        }
        expect_close(got, want, tol, label + " [eager]", opt.scale, opt.scale_rel);
      } catch (const Error& e) {
        ADD_FAILURE() << label << " [eager] threw: " << e.what();
      }
    }
    if (opt.compiled) {
      poison_device_memory(poison);
      CompileOptions co = opt.compile;
      if (co.name == "fn") co.name = "check";
      auto compiled = compile(fn, co);
      try {
        Tensor got = compiled(cpu_inputs.to(Device::vulkan())...);
        EXPECT_EQ(got.device(), Device::vulkan()) << label << " [compiled]";
        std::vector<EntryInfo> entries = compiled.entries();
        if (entries.size() == 1) {
          EXPECT_TRUE(entries[0].on_device) << label << " [compiled] ran on the interpreter\n"
                                            << entries[0].graph;
        }
        expect_close(got, want, tol, label + " [compiled]", opt.scale, opt.scale_rel);
      } catch (const Error& e) {
        ADD_FAILURE() << label << " [compiled] threw: " << e.what();
      }
    }
  }

  uint32_t seed_ = 0;
  std::mt19937 rng_;
  Tensor anchor_;
  int cases_ = 0;
};

}  // namespace kiln::test
