// Types a device lacks, emulated on the device (docs/runtime.md, "Capabilities"):
// - int64 without shaderInt64: a device opened with `int64=0` (DeviceOpenOptions::limits, as
//   KILN_DEVICE_LIMITS) computes int64 as pairs of 32-bit words (shaders/common/
//   kiln_int64_pairs.glsl). Every int64 operation codegen writes runs on the device, compiled
//   and eagerly, and equals the interpreter exactly, on values at the edges of the range:
//   wraparound, INT64_MIN, carries between the words, shifts past 32 and 64, conversions to and
//   from float around 2^24, 2^53 and 2^63.
// - bool without 8-bit storage (`int8=0`): bool buffers are words of four bytes; every kernel
//   that reads or writes bools, at sizes that are not multiples of 4.
// - f16 without 16-bit storage (`storage16=0`): f16 buffers are words of two halves; every
//   kernel family that stores f16, at odd sizes, rounded as the interpreter rounds.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "device/test_util.h"
#include "kiln/kiln.h"
#include "vk/device.h"

namespace kiln {
namespace {

using test::Tol;

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

/// Values at every edge of the two 32-bit words, then random ones of every magnitude.
std::vector<int64_t> edge_values(size_t n, std::mt19937_64& rng) {
  std::vector<int64_t> v = {0,
                            1,
                            -1,
                            2,
                            -2,
                            7,
                            -7,
                            kMin,
                            kMax,
                            kMin + 1,
                            kMax - 1,
                            0xffffffffLL,
                            0x100000000LL,
                            -0x100000000LL,
                            0x7fffffffLL,
                            0x80000000LL,
                            -0x80000000LL,
                            -0x80000001LL,
                            (int64_t{1} << 53) + 1,
                            -(int64_t{1} << 53) - 1,
                            (int64_t{1} << 24) + 1,
                            (int64_t{1} << 62) + 12345,
                            1000000007,
                            -999999999999LL};
  while (v.size() < n) {
    const int bits = static_cast<int>(rng() % 64);
    const uint64_t mask = bits == 63 ? ~uint64_t{0} : (uint64_t{1} << (bits + 1)) - 1;
    v.push_back(static_cast<int64_t>(rng() & mask) * ((rng() & 1) ? 1 : -1));
  }
  v.resize(n);
  return v;
}

class Emulated : public test::DeviceTest {
 protected:
  void open(const std::string& limits) {
    DeviceOpenOptions o;
    o.limits = limits;
    Expected<Device> d = Device::open("", o);
    ASSERT_TRUE(d.ok()) << d.status().to_string();
    dev_ = *d;
  }

  Tensor i64(const Shape& shape, uint64_t seed) {
    std::mt19937_64 rng(seed);
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return Tensor::from_vector(edge_values(static_cast<size_t>(n), rng), shape);
  }

  /// fn on CPU tensors (the interpreter) and on the device, compiled and eagerly: equal
  /// (exactly for integer results), and the compiled graph ran on the device.
  template <typename Fn, typename... T>
  void check(const std::string& label, const Fn& fn, const T&... cpu) {
    check_tol(label, Tol{0, 0}, fn, cpu...);
  }
  template <typename Fn, typename... T>
  void check_tol(const std::string& label, Tol tol, const Fn& fn, const T&... cpu) {
    SCOPED_TRACE(label);
    const Tensor want = fn(cpu...);
    CompileOptions co;
    co.name = label;
    auto compiled = compile(fn, co);
    const Tensor got = compiled(cpu.to(dev_)...);
    EXPECT_EQ(got.device(), dev_);
    const std::vector<EntryInfo> entries = compiled.entries();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_TRUE(entries[0].on_device) << entries[0].graph;
    test::expect_close(got, want, tol, label);
    test::expect_close(fn(cpu.to(dev_)...), want, tol, label + " [eager]");
  }

  Device dev_ = Device::cpu();
  std::mt19937 rng_{7};
};

class Int64Pairs : public Emulated {
 protected:
  void SetUp() override {
    Emulated::SetUp();
    if (IsSkipped()) return;
    open("int64=0");
    ASSERT_FALSE(dev_.vulkan_device()->info().shader_int64);
  }
};

class BoolWords : public Emulated {
 protected:
  void SetUp() override {
    Emulated::SetUp();
    if (IsSkipped()) return;
    open("int8=0");
    ASSERT_FALSE(dev_.vulkan_device()->info().storage_buffer_8bit);
  }
};

TEST_F(Int64Pairs, ArithmeticWrapsExactly) {
  const Tensor a = i64({5, 41}, 1), b = i64({5, 41}, 2);
  check("add", [](const Tensor& x, const Tensor& y) { return x + y; }, a, b);
  check("sub", [](const Tensor& x, const Tensor& y) { return x - y; }, a, b);
  check("mul", [](const Tensor& x, const Tensor& y) { return x * y; }, a, b);
  check("neg_abs_sign", [](const Tensor& x) { return neg(x) + abs(x) * sign(x); }, a);
  check("relu_max_min",
        [](const Tensor& x, const Tensor& y) { return relu(x) + maximum(x, y) - minimum(x, y); },
        a, b);
  // Past 2^53, where a double would round: the example.
  check("add_2p53_plus_1",
        [](const Tensor& x) { return x + scalar((int64_t{1} << 53) + 1, DType::kI64); }, a);
}

TEST_F(Int64Pairs, ComparesAndWhere) {
  const Tensor a = i64({3, 29}, 3), b = i64({3, 29}, 4);
  // Equal and neighbouring values in both words.
  const Tensor c = where(lt(a, b), a, a + scalar(int64_t{1}, DType::kI64));
  check("compares",
        [](const Tensor& x, const Tensor& y) {
          return cast(lt(x, y), DType::kI64) + cast(le(x, y), DType::kI64) * scalar(2, DType::kI64) +
                 cast(gt(x, y), DType::kI64) * scalar(4, DType::kI64) +
                 cast(ge(x, y), DType::kI64) * scalar(8, DType::kI64) +
                 cast(eq(x, y), DType::kI64) * scalar(16, DType::kI64) +
                 cast(ne(x, y), DType::kI64) * scalar(32, DType::kI64);
        },
        a, c);
  check("where", [](const Tensor& x, const Tensor& y) { return where(gt(x, y), x, y); }, a, b);
}

TEST_F(Int64Pairs, ShiftsModPow) {
  const Tensor a = i64({4, 33}, 5);
  std::vector<int64_t> amounts;
  for (int64_t i = -3; i < 4 * 33 - 3; ++i) amounts.push_back(i % 70);
  const Tensor s = Tensor::from_vector(amounts, {4, 33});
  check("shift_left", [](const Tensor& x, const Tensor& y) { return shift_left(x, y); }, a, s);
  check("shift_right", [](const Tensor& x, const Tensor& y) { return shift_right(x, y); }, a, s);
  const Tensor b = i64({4, 33}, 6);
  check("mod_fmod",
        [](const Tensor& x, const Tensor& y) { return mod(x, y) * scalar(3, DType::kI64) + fmod(x, y); },
        a, b);
  std::vector<int64_t> small;
  for (int64_t i = 0; i < 4 * 33; ++i) small.push_back(i % 9 - 4);
  const Tensor e = Tensor::from_vector(small, {4, 33});
  check("pow", [](const Tensor& x, const Tensor& y) { return pow(x, y); }, a, e);
  check("pow_small_bases", [](const Tensor& x, const Tensor& y) { return pow(x, y); }, e,
        Tensor::from_vector(amounts, {4, 33}));
}

TEST_F(Int64Pairs, ConversionsToAndFromFloat) {
  const Tensor a = i64({3, 47}, 7);
  check("to_f32", [](const Tensor& x) { return cast(x, DType::kF32); }, a);
  check("to_i32_bool", [](const Tensor& x) {
          return cast(cast(x, DType::kI32), DType::kI64) + cast(cast(x, DType::kBool), DType::kI64);
        },
        a);
  check("from_i32", [](const Tensor& x) { return cast(cast(x, DType::kI32), DType::kI64) * x; }, a);
  std::vector<float> f = {0.0f, -0.0f, 0.5f, -0.5f, 1.5f, -1.5f, 16777217.0f, 3e9f, -3e9f,
                          9.2e18f, -9.2e18f, 9.3e18f, -9.3e18f, 1e30f, -1e30f,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN(), 123456789.0f, -4294967296.0f,
                          4294967295.0f, 2147483648.0f};
  const Tensor t = Tensor::from_vector(f, {static_cast<int64_t>(f.size())});
  check("from_f32", [](const Tensor& x) { return cast(x, DType::kI64); }, t);
  check_tol("arith_then_f32", Tol{0, 0},
            [](const Tensor& x) { return cast(x * scalar(3, DType::kI64), DType::kF32) + scalar(0.5); },
            a);
}

TEST_F(Int64Pairs, ReductionsScansAndMatmul) {
  const Tensor a = i64({6, 37}, 8);
  check("sum", [](const Tensor& x) { return sum(x, {1}); }, a);
  check("prod", [](const Tensor& x) { return prod(x, {0}); }, a);
  check("max_min", [](const Tensor& x) { return max(x, {1}) - min(x, {1}); }, a);
  check("argmax", [](const Tensor& x) { return argmax(x, 1); }, a);
  check("cumsum", [](const Tensor& x) { return cumsum(x, 1); }, a);
  check("cumsum_exclusive_reverse", [](const Tensor& x) { return cumsum(x, 0, true, true); }, a);
  const Tensor big = i64({3, 3000}, 9);
  check("cumsum_long", [](const Tensor& x) { return cumsum(x, 1); }, big);
  const Tensor m = i64({9, 13}, 10), n = i64({13, 5}, 11);
  check("matmul", [](const Tensor& x, const Tensor& y) { return matmul(x, y); }, m, n);
}

TEST_F(Int64Pairs, IndexMath) {
  const Tensor x = test::random_tensor(DType::kF32, {11, 7}, rng_);
  std::vector<int64_t> ids = {0, 10, 3, 1, 6, 5, 5, 9};
  const Tensor idx = Tensor::from_vector(ids, {8});
  check_tol("index_select", Tol{0, 0},
            [](const Tensor& t, const Tensor& i) { return index_select(t, 0, i); }, x, idx);
  const Tensor gi = Tensor::from_vector(std::vector<int64_t>{6, 0, 3, 1, 2, 5, 4}, {1, 7});
  check_tol("gather", Tol{0, 0},
            [](const Tensor& t, const Tensor& i) { return gather(t, 0, i * scalar(1, DType::kI64)); },
            x, gi);
  check("arange", [](const Tensor& i) { return i * arange(-(int64_t{1} << 40), 0, int64_t{1} << 37, DType::kI64, i.device()); },
        Tensor::from_vector(std::vector<int64_t>(8, 3), {8}));
  const Tensor m = Tensor::from_vector(std::vector<int64_t>{0, 5, 0, kMin, 0, 0x100000000LL}, {2, 3});
  check("nonzero", [](const Tensor& t) { return nonzero(t); }, m);
}

class HalfWords : public Emulated {
 protected:
  void SetUp() override {
    Emulated::SetUp();
    if (IsSkipped()) return;
    open("storage16=0");
    ASSERT_FALSE(dev_.vulkan_device()->info().storage_buffer_16bit);
  }
};

TEST_F(HalfWords, EveryKernelFamilyThatStoresHalves) {
  for (int64_t cols : {1, 3, 8, 13}) {
    SCOPED_TRACE(cols);
    const Tensor a = cast(test::random_tensor(DType::kF32, {5, cols}, rng_), DType::kF16);
    const Tensor b = cast(test::random_tensor(DType::kF32, {5, cols}, rng_), DType::kF16);
    const Tensor w = cast(test::random_tensor(DType::kF32, {cols, 7}, rng_), DType::kF16);
    // Elementwise (rounded per op), the neighbouring half of a word loaded and stored.
    check("elementwise",
          [](const Tensor& x, const Tensor& y) { return exp(x) * y + x; }, a, b);
    check("cast_in_out",
          [](const Tensor& x) { return cast(cast(x, DType::kF32) * scalar(3.0), DType::kF16); }, a);
    check("reduce", [](const Tensor& x) { return sum(x, {1}); }, a);
    check("softmax", [](const Tensor& x) { return softmax(x, -1); }, a);
    check("matmul", [](const Tensor& x, const Tensor& y) { return matmul(x, y); }, a, w);
    check("cumsum", [](const Tensor& x) { return cumsum(x, 1); }, a);
    check("masked_select",
          [](const Tensor& x) { return masked_select(x, gt(x, scalar(0.0, DType::kF16))); }, a);
    check("concat_permute",
          [](const Tensor& x, const Tensor& y) { return permute(concat({x, y}, 1), {1, 0}); }, a,
          b);
    // A huge value overflows to inf when rounded to half, as in the interpreter.
    check("overflow", [](const Tensor& x) { return x * scalar(70000.0, DType::kF16); }, a);
    // Subnormal halves (below 2^-14), stored and loaded back exactly.
    check("subnormal",
          [](const Tensor& x) { return x * scalar(1e-5, DType::kF16) + x * scalar(3e-7, DType::kF16); },
          a);
  }
}

TEST_F(BoolWords, EveryKernelThatStoresOrLoadsBools) {
  for (int64_t cols : {1, 3, 5, 8, 13}) {
    SCOPED_TRACE(cols);
    const Tensor a = test::random_tensor(DType::kF32, {7, cols}, rng_);
    const Tensor b = test::random_tensor(DType::kF32, {7, cols}, rng_);
    // Elementwise: a stored bool, then bools loaded at neighbouring bytes of one word.
    check("compare", [](const Tensor& x, const Tensor& y) { return lt(x, y); }, a, b);
    const Tensor m = lt(a, b);
    check("load_bools",
          [](const Tensor& mk, const Tensor& x) {
            return where(mk, x, neg(x)) + cast(mk, DType::kF32);
          },
          m, a);
    check("bool_ops", [](const Tensor& mk, const Tensor& x) { return ne(mk, gt(x, scalar(0.0))); },
          m, a);
    // Reductions into bools and over bools.
    check("any_all", [](const Tensor& mk) { return max(mk, {1}); }, m);
    check("all", [](const Tensor& mk) { return min(mk, {0}); }, m);
    check("count", [](const Tensor& mk) { return sum(mk, {1}); }, m);
    // Compaction by a bool mask, and a bool tensor compacted.
    check("masked_select", [](const Tensor& x, const Tensor& mk) { return masked_select(x, mk); },
          a, m);
    check("nonzero", [](const Tensor& mk) { return nonzero(mk); }, m);
    // Movement of bools: permute, concat, slice.
    check("permute_concat",
          [](const Tensor& mk) { return concat({permute(mk, {1, 0}), permute(mk, {1, 0})}, 1); }, m);
  }
}

}  // namespace
}  // namespace kiln
