// Every elementwise and movement op of runtime/graph/ops.def on Vulkan against the CPU
// interpreter: fresh random inputs per case, poisoned outputs, eager (one dispatch per op) and
// compiled (kiln::compile) paths, shapes including rank 0, size 0, size 1, odd sizes, inner
// sizes divisible by 4 (vec4 kernels) and not, and NumPy broadcasting. Fused multi-op programs
// are at the end. Reductions are in reduce_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "device/test_util.h"
#include "vk/device.h"  // PoisonReachesNewAllocations only

namespace kiln {
namespace {

using test::Dist;
using test::Tol;

using namespace test::dtypes;

using Unary = std::function<Tensor(const Tensor&)>;
using Binary = std::function<Tensor(const Tensor&, const Tensor&)>;

std::string sh(const Shape& s) {
  return shape_str(s);
}
Tensor add_fn(const Tensor& a, const Tensor& b) {
  return add(a, b);
}

class DeviceOps : public test::DeviceOpTest {};

// The harness itself: after poison_device_memory, a fresh allocation (what a kernel output
// gets) holds NaN, so an unwritten output element cannot pass as a correct one.
TEST_F(DeviceOps, PoisonReachesNewAllocations) {
  auto dev = vk::VulkanDevice::default_device();
  ASSERT_TRUE(dev.ok());
  const size_t n = 1000;
  test::poison_device_memory(4 * n * sizeof(float));
  auto buf = (*dev)->allocate(n * sizeof(float));
  ASSERT_TRUE(buf.ok()) << buf.status().to_string();
  std::vector<float> host(n, 0.0f);
  ASSERT_TRUE((*dev)->download(*buf, host.data(), n * sizeof(float)).ok());
  size_t nans = 0;
  for (float f : host) nans += std::isnan(f) ? 1 : 0;
  EXPECT_EQ(nans, n) << "poisoning did not reach a new allocation";
}

// ---- unary --------------------------------------------------------------------------------------

struct UnaryCase {
  const char* name;
  Unary fn;
  Dist float_dist;
  Dist int_dist;
  bool transcendental;
  bool table_default = false;  // no written case: table_unary_cases()' default ranges
};

std::vector<UnaryCase> unary_cases() {
  return {
      {"neg", [](const Tensor& x) { return neg(x); }, Dist{-3, 3}.with_zeros(0.1),
       Dist{-100, 100}.with_zeros(0.1), false},
      {"relu", [](const Tensor& x) { return relu(x); }, Dist{-3, 3}.with_zeros(0.1),
       Dist{-100, 100}.with_zeros(0.1), false},
      {"exp", [](const Tensor& x) { return exp(x); }, Dist{-4, 4}, Dist{-6, 6}, true},
      {"log", [](const Tensor& x) { return log(x); }, Dist::positive(0.05, 20), Dist{1, 1000},
       true},
      {"sqrt", [](const Tensor& x) { return sqrt(x); }, Dist::positive(0.0, 50), Dist{0, 1000},
       false},
      {"rsqrt", [](const Tensor& x) { return rsqrt(x); }, Dist::positive(0.05, 50), Dist{1, 1000},
       false},
      {"tanh", [](const Tensor& x) { return tanh(x); }, Dist{-5, 5}, Dist{-4, 4}, true},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); }, Dist{-8, 8}, Dist{-8, 8}, true},
      {"gelu", [](const Tensor& x) { return gelu(x); }, Dist{-5, 5}, Dist{-5, 5}, true},
      {"erf", [](const Tensor& x) { return erf(x); }, Dist{-4, 4}, Dist{-3, 3}, true},
      {"silu", [](const Tensor& x) { return silu(x); }, Dist{-8, 8}, Dist{-8, 8}, true},
      {"gelu_tanh", [](const Tensor& x) { return gelu_tanh(x); }, Dist{-5, 5}, Dist{-5, 5}, true},
      {"log1p", [](const Tensor& x) { return log1p(x); }, Dist{-0.99, 6}.with_zeros(0.05),
       Dist{0, 1000}, true},
  };
}

Tol unary_tol(DType out, bool transcendental, bool table_default = false) {
  // The table's default cases: unary_math_test.cpp's f32 tolerance (a few ulps).
  if (out == kF32 && table_default) return Tol{4e-6, 2e-6};
  if (out == kF32) return transcendental ? Tol{2e-6, 1e-6} : Tol{1e-5, 1e-6};
  return Tol::for_dtype(out);
}

/// Every row of kiln/elementwise_ops.def: the cases above where one is written (their input
/// ranges), else the op on values in [-3, 3] (integers in [-10, 10]), so an op added to the
/// table is tested here without an edit (unary_math_test.cpp adds special values per op).
std::vector<UnaryCase> table_unary_cases() {
  const std::vector<UnaryCase> written = unary_cases();
  const std::vector<std::pair<const char*, Unary>> table = {
#define KILN_UNARY(e, name, ints, glsl) {#name, [](const Tensor& x) { return name(x); }},
#include "kiln/elementwise_ops.def"
#undef KILN_UNARY
  };
  std::vector<UnaryCase> out;
  for (const auto& [name, fn] : table) {
    auto it = std::find_if(written.begin(), written.end(),
                           [&](const UnaryCase& c) { return std::string(c.name) == name; });
    out.push_back(it != written.end() ? *it
                                      : UnaryCase{name, fn, Dist{-3, 3}.with_zeros(0.05),
                                                  Dist{-10, 10}.with_zeros(0.05), true, true});
  }
  return out;
}

TEST_F(DeviceOps, EveryWrittenUnaryCaseIsInTheTable) {
  const std::vector<UnaryCase> table = table_unary_cases();
  for (const UnaryCase& c : unary_cases())
    EXPECT_TRUE(std::any_of(table.begin(), table.end(), [&](const UnaryCase& t) {
      return std::string(t.name) == c.name;
    })) << c.name;
}

TEST_F(DeviceOps, Unary) {
  // f32 gets every shape (vec4 and scalar kernels); other dtypes a representative subset.
  const std::vector<Shape> f32_shapes = {{},        {0},      {1},      {7},    {8},
                                         {13},      {33},     {4, 12},  {3, 7}, {2, 0, 5},
                                         {5, 1, 7}, {17, 33}, {96, 256}};
  const std::vector<Shape> other_shapes = {{}, {1}, {13}, {4, 12}, {2, 0, 5}, {17, 33}};
  for (const UnaryCase& c : table_unary_cases()) {
    for (DType dt : {kF32, kF16, kI32, kI64}) {
      for (const Shape& s : dt == kF32 ? f32_shapes : other_shapes) {
        Tensor x = rnd(dt, s, is_floating(dt) ? c.float_dist : c.int_dist);
        DType out = c.fn(Tensor::full({}, 1, dt)).dtype();
        check(std::string(c.name) + "(" + dtype_name(dt) + sh(s) + ")",
              unary_tol(out, c.transcendental, c.table_default), c.fn, x);
      }
    }
  }
}

TEST_F(DeviceOps, UnaryRejectsBool) {
  Tensor b = rnd(kBool, {4}).to(Device::vulkan());
  for (const UnaryCase& c : table_unary_cases()) EXPECT_THROW(c.fn(b), Error) << c.name;
}

// ---- binary arithmetic
// ----------------------------------------------------------------------------

struct ShapePair {
  Shape a, b;
};

const std::vector<ShapePair>& binary_shapes() {
  static const std::vector<ShapePair> v = {
      {{}, {}},
      {{0}, {0}},
      {{1}, {1}},
      {{7}, {7}},
      {{13, 33}, {13, 33}},
      {{4, 8}, {4, 8}},
      {{64, 128}, {64, 128}},
      {{5, 1, 7}, {3, 1}},
      {{5, 1, 8}, {3, 1}},
      {{}, {13, 7}},
      {{12, 8}, {}},
      {{4}, {2, 3, 4}},
      {{2, 3, 4}, {4}},
      {{7, 1}, {1, 9}},
      {{0, 3}, {1, 3}},
      {{1}, {33}},
  };
  return v;
}

struct DtypePair {
  DType a, b;
};

TEST_F(DeviceOps, Binary) {
  const std::vector<std::pair<const char*, Binary>> ops = {
      {"add", [](const Tensor& a, const Tensor& b) { return add(a, b); }},
      {"sub", [](const Tensor& a, const Tensor& b) { return sub(a, b); }},
      {"mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); }},
      {"div", [](const Tensor& a, const Tensor& b) { return div(a, b); }},
      {"maximum", [](const Tensor& a, const Tensor& b) { return maximum(a, b); }},
      {"minimum", [](const Tensor& a, const Tensor& b) { return minimum(a, b); }},
  };
  // Same-dtype pairs get every shape pair; mixed pairs (promotion) a few.
  const std::vector<DtypePair> same = {{kF32, kF32}, {kF16, kF16}, {kI32, kI32}, {kI64, kI64}};
  const std::vector<DtypePair> mixed = {{kI32, kF32},  {kF16, kF32}, {kI32, kI64},
                                        {kBool, kI32}, {kF16, kI64}, {kF32, kBool}};
  // Every other row of kiln/elementwise_ops.def (pow, mod, fmod, the shifts and any op added
  // there): same-dtype pairs (integers only where the op takes only integers) in five shapes.
  const std::vector<std::tuple<const char*, Binary, bool>> table = {
#define KILN_BINARY(e, name, dtypes, glsl)                             \
  {#name, [](const Tensor& a, const Tensor& b) { return name(a, b); }, \
   std::string_view(#dtypes) == "IntsOnly"},
#include "kiln/elementwise_ops.def"
#undef KILN_BINARY
  };
  for (const auto& [name, fn, ints_only] : table) {
    if (std::any_of(ops.begin(), ops.end(),
                    [&](const auto& o) { return o.first == std::string(name); }))
      continue;
    for (DType dt : {kF32, kF16, kI32, kI64}) {
      if (ints_only && is_floating(dt)) continue;
      for (size_t i : {0u, 2u, 4u, 7u, 11u}) {
        const ShapePair& sp = binary_shapes()[i];
        Dist d = is_floating(dt) ? Dist{-3, 3}.with_zeros(0.05) : Dist{-20, 20}.with_zeros(0.05);
        Tensor a = rnd(dt, sp.a, d), b = rnd(dt, sp.b, d);
        DType out = fn(Tensor::full({}, 1, dt), Tensor::full({}, 1, dt)).dtype();
        check(std::string(name) + "(" + dtype_name(dt) + sh(sp.a) + ", " + sh(sp.b) + ")",
              Tol::for_dtype(out), fn, a, b);
      }
    }
  }
  for (const auto& [name, fn] : ops) {
    const bool is_div = std::string(name) == "div";
    auto run = [&](DtypePair dp, const ShapePair& sp) {
      Dist da = is_floating(dp.a) ? Dist{-3, 3}.with_zeros(0.05) : Dist{-50, 50}.with_zeros(0.05);
      Dist db = is_floating(dp.b) ? Dist{-3, 3}.with_zeros(0.05) : Dist{-50, 50}.with_zeros(0.05);
      if (is_div) db = is_floating(dp.b) ? Dist::positive(0.5, 4) : Dist{1, 20};
      if (is_div && dp.b == kBool) db.p_true = 1.0;  // divisor true (1) everywhere
      Tensor a = rnd(dp.a, sp.a, da), b = rnd(dp.b, sp.b, db);
      DType out = fn(Tensor::full({}, 1, dp.a), Tensor::full({}, 1, dp.b)).dtype();
      check(std::string(name) + "(" + dtype_name(dp.a) + sh(sp.a) + ", " + dtype_name(dp.b) +
                sh(sp.b) + ")",
            Tol::for_dtype(out), fn, a, b);
    };
    for (DtypePair dp : same)
      for (const ShapePair& sp : binary_shapes()) run(dp, sp);
    for (DtypePair dp : mixed)
      for (size_t i : {0u, 4u, 7u, 11u}) run(dp, binary_shapes()[i]);
  }
}

TEST_F(DeviceOps, BinaryRejectsBoolArithmetic) {
  Tensor b = rnd(kBool, {4}).to(Device::vulkan());
  EXPECT_THROW(add(b, b), Error);
  EXPECT_THROW(maximum(b, b), Error);
}

TEST_F(DeviceOps, ScalarOperands) {
  // C++ numbers take the tensor's dtype when integral-valued (else f32), as literals.
  const std::vector<std::pair<const char*, Unary>> fns = {
      {"x*2.5", [](const Tensor& x) { return x * 2.5; }},
      {"3-x", [](const Tensor& x) { return 3.0 - x; }},
      {"x/2", [](const Tensor& x) { return x / 2.0; }},
      {"x+7", [](const Tensor& x) { return x + 7.0; }},
      {"1/(x*x+1)", [](const Tensor& x) { return 1.0 / (x * x + 1.0); }},
  };
  for (const auto& [name, fn] : fns) {
    for (DType dt : {kF32, kF16, kI32, kI64}) {
      for (const Shape& s : {Shape{}, Shape{13}, Shape{6, 8}}) {
        Tensor x = rnd(dt, s, is_floating(dt) ? Dist{-3, 3} : Dist{-40, 40});
        DType out = fn(Tensor::full({}, 1, dt)).dtype();
        check(std::string(name) + " " + dtype_name(dt) + sh(s), Tol::for_dtype(out), fn, x);
      }
    }
  }
}

// Integer overflow wraps (two's complement) on both sides.
TEST_F(DeviceOps, IntegerWraparound) {
  for (DType dt : {kI32, kI64}) {
    double big = dt == kI32 ? 2.0e9 : 4.0e18;
    Tensor a = rnd(dt, {41}, Dist{-big, big}), b = rnd(dt, {41}, Dist{-big, big});
    check(std::string("add wraps ") + dtype_name(dt), Tol::exact(), Binary(add_fn), a, b);
    check(
        std::string("mul wraps ") + dtype_name(dt), Tol::exact(),
        [](const Tensor& p, const Tensor& q) { return p * q; }, a, b);
  }
}

// ---- compare and where
// ------------------------------------------------------------------------------

const std::vector<std::pair<const char*, Binary>>& compare_ops() {
  static const std::vector<std::pair<const char*, Binary>> v = {
      {"eq", [](const Tensor& a, const Tensor& b) { return eq(a, b); }},
      {"ne", [](const Tensor& a, const Tensor& b) { return ne(a, b); }},
      {"lt", [](const Tensor& a, const Tensor& b) { return lt(a, b); }},
      {"le", [](const Tensor& a, const Tensor& b) { return le(a, b); }},
      {"gt", [](const Tensor& a, const Tensor& b) { return gt(a, b); }},
      {"ge", [](const Tensor& a, const Tensor& b) { return ge(a, b); }},
  };
  return v;
}

// Small integer values (in any dtype) so that ties are frequent.
Tensor tie_prone(DType dt, const Shape& s, std::mt19937& rng) {
  return test::tensor_from_doubles(dt, s, test::random_values(kI32, numel(s), rng, Dist{-3, 3}));
}

void run_compares(std::mt19937& rng, const std::vector<DtypePair>& dtypes,
                  const std::vector<size_t>& shape_ids,
                  const std::function<void(const std::string&, const Binary&, const Tensor&,
                                           const Tensor&)>& check) {
  for (const auto& [name, fn] : compare_ops())
    for (DtypePair dp : dtypes)
      for (size_t i : shape_ids) {
        const ShapePair& sp = binary_shapes()[i];
        Tensor a =
            dp.a == kBool ? test::random_tensor(kBool, sp.a, rng) : tie_prone(dp.a, sp.a, rng);
        Tensor b =
            dp.b == kBool ? test::random_tensor(kBool, sp.b, rng) : tie_prone(dp.b, sp.b, rng);
        check(std::string(name) + "(" + dtype_name(dp.a) + sh(sp.a) + ", " + dtype_name(dp.b) +
                  sh(sp.b) + ")",
              fn, a, b);
      }
}

TEST_F(DeviceOps, Compare) {
  auto chk = [&](const std::string& label, const Binary& fn, const Tensor& a, const Tensor& b) {
    check(label, Tol::exact(), fn, a, b);
  };
  run_compares(rng_, {{kF32, kF32}, {kF16, kF16}, {kI32, kI32}, {kI64, kI64}},
               {0, 1, 2, 4, 5, 7, 9, 11, 13}, chk);
  run_compares(rng_, {{kI32, kF32}, {kI64, kI32}, {kBool, kI32}, {kF16, kF32}, {kF32, kBool}},
               {3, 8, 12}, chk);
}

// Ordered compares of two bool tensors (promote_types(bool, bool) == bool).
TEST_F(DeviceOps, CompareBoolBool) {
  auto chk = [&](const std::string& label, const Binary& fn, const Tensor& a, const Tensor& b) {
    check(label, Tol::exact(), fn, a, b);
  };
  run_compares(rng_, {{kBool, kBool}}, {3, 7}, chk);
}

TEST_F(DeviceOps, Where) {
  struct Case {
    Shape c, x, y;
  };
  const std::vector<Case> shapes = {
      {{}, {}, {}},
      {{0}, {0}, {0}},
      {{1}, {1}, {1}},
      {{13}, {13}, {13}},
      {{6, 8}, {6, 8}, {6, 8}},
      {{5, 1, 7}, {3, 1}, {}},
      {{3, 1}, {5, 1, 8}, {8}},
      {{4}, {2, 3, 4}, {3, 1}},
      {{33, 7}, {}, {33, 7}},
  };
  const std::vector<DtypePair> dtypes = {{kF32, kF32},   {kF16, kF16}, {kI32, kI64},
                                         {kBool, kBool}, {kF32, kI32}, {kI64, kI64}};
  auto fn = [](const Tensor& c, const Tensor& x, const Tensor& y) { return where(c, x, y); };
  for (DtypePair dp : dtypes) {
    for (const Case& s : shapes) {
      Tensor c = rnd(kBool, s.c), x = rnd(dp.a, s.x, Dist{-50, 50}),
             y = rnd(dp.b, s.y, Dist{-50, 50});
      check("where(bool" + sh(s.c) + ", " + dtype_name(dp.a) + sh(s.x) + ", " + dtype_name(dp.b) +
                sh(s.y) + ")",
            Tol::for_dtype(promote_types(dp.a, dp.b)), fn, c, x, y);
    }
  }
  Tensor x = rnd(kF32, {4}).to(Device::vulkan());
  EXPECT_THROW(where(x, x, x), Error);  // condition must be bool
}

// ---- cast ---------------------------------------------------------------------------------------

TEST_F(DeviceOps, CastAllPairs) {
  const std::vector<DType> all = {kF32, kF16, kI32, kI64, kBool};
  const std::vector<Shape> shapes = {{}, {0}, {1}, {13}, {4, 8}, {33, 7}};
  for (DType from : all) {
    for (DType to : all) {
      for (const Shape& s : shapes) {
        // Floats with fractional parts (truncation toward zero), negatives and exact zeros,
        // all within every target's range (and exactly representable in f16 as integers).
        Dist d = is_floating(from) ? Dist{-1000.0, 1000.0}.with_zeros(0.1)
                                   : Dist{-2000, 2000}.with_zeros(0.1);
        Tensor x = rnd(from, s, d);
        auto fn = [to](const Tensor& t) { return cast(t, to); };
        check(std::string("cast(") + dtype_name(from) + sh(s) + " -> " + dtype_name(to) + ")",
              Tol::for_dtype(to), fn, x);
      }
    }
  }
}

TEST_F(DeviceOps, CastI64ToI32Wraps) {
  std::vector<double> v = {4294967296.0 + 5,
                           -4294967296.0 - 7,
                           2147483648.0,
                           -2147483649.0,
                           1099511627776.0 + 123,
                           0,
                           -1,
                           2147483647.0,
                           6000000000.0};
  Tensor x = test::tensor_from_doubles(kI64, {static_cast<Dim>(v.size())}, v);
  check(
      "cast(i64 large -> i32)", Tol::exact(), [](const Tensor& t) { return cast(t, kI32); }, x);
}

// ---- movement -----------------------------------------------------------------------------------

TEST_F(DeviceOps, Reshape) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3, 4}, {6, 4}}, {{4, 6}, {3, 8}}, {{24}, {2, 1, 3, 4}}, {{}, {1, 1}},
      {{1}, {}},           {{0, 3}, {3, 0}}, {{13, 7}, {91}},      {{2, 4}, {8}},
      {{5, 1, 8}, {5, 8}}, {{33}, {3, 11}},  {{64, 96}, {96, 64}},
  };
  for (DType dt : {kF32, kF16, kI32, kI64, kBool}) {
    for (const auto& [from, to] : cases) {
      Tensor x = rnd(dt, from, Dist{-100, 100});
      Shape target = to;
      check(
          std::string("reshape(") + dtype_name(dt) + sh(from) + " -> " + sh(to) + ")", Tol::exact(),
          [target](const Tensor& t) { return reshape(t, target); }, x);
    }
  }
}

TEST_F(DeviceOps, Permute) {
  const std::vector<std::pair<Shape, std::vector<int64_t>>> cases = {
      {{2, 3, 4}, {2, 0, 1}},
      {{2, 3, 4}, {1, 0, 2}},
      {{5, 7}, {1, 0}},
      {{}, {}},
      {{3, 1, 8}, {2, 1, 0}},
      {{0, 4}, {1, 0}},
      {{13}, {0}},
      {{4, 2, 3, 5}, {3, 1, 0, 2}},
      {{48, 64}, {1, 0}},
  };
  for (DType dt : {kF32, kF16, kI32, kI64, kBool}) {
    for (const auto& [s, perm] : cases) {
      Tensor x = rnd(dt, s, Dist{-100, 100});
      std::vector<int64_t> p = perm;
      check(
          std::string("permute(") + dtype_name(dt) + sh(s) + ", " + sh(perm) + ")", Tol::exact(),
          [p](const Tensor& t) { return permute(t, p); }, x);
    }
  }
}

TEST_F(DeviceOps, Expand) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{1, 7}, {5, 7}}, {{3, 1}, {2, 3, 8}},     {{}, {4, 4}}, {{1}, {0}},
      {{4}, {2, 3, 4}}, {{5, 1, 1}, {5, 3, 13}}, {{1}, {1}},   {{1, 64}, {128, 64}},
  };
  for (DType dt : {kF32, kF16, kI32, kI64, kBool}) {
    for (const auto& [from, to] : cases) {
      Tensor x = rnd(dt, from, Dist{-100, 100});
      Shape target = to;
      check(
          std::string("expand(") + dtype_name(dt) + sh(from) + " -> " + sh(to) + ")", Tol::exact(),
          [target](const Tensor& t) { return expand(t, target); }, x);
    }
  }
}

// ---- fused chains (compiled) vs the same function on CPU tensors
// ----------------------------------

TEST_F(DeviceOps, FusedChains) {
  const Tol f32{2e-5, 2e-6};
  for (const Shape& s : {Shape{7}, Shape{13, 33}, Shape{64, 128}, Shape{}, Shape{0, 4}}) {
    Tensor x = rnd(kF32, s), y = rnd(kF32, s), z = rnd(kF32, s, Dist::positive());
    check(
        "exp(x)*y-sqrt(z) " + sh(s), f32,
        [](const Tensor& a, const Tensor& b, const Tensor& c) { return exp(a) * b - sqrt(c); }, x,
        y, z);
    check(
        "where(x>y, x, y*2) " + sh(s), f32,
        [](const Tensor& a, const Tensor& b) { return where(gt(a, b), a, b * 2.0); }, x, y);
    check(
        "cast(x>0)*x + sigmoid(y)*tanh(z) " + sh(s), f32,
        [](const Tensor& a, const Tensor& b, const Tensor& c) {
          return cast(gt(a, scalar(0)), kF32) * a + sigmoid(b) * tanh(c);
        },
        x, y, z);
  }
  // Broadcast operands into a vec4 chain and an odd-size one.
  for (const auto& [rows, cols] : {std::pair<Dim, Dim>{37, 64}, {9, 13}}) {
    Tensor x = rnd(kF32, {rows, cols}), a = rnd(kF32, {cols}), b = rnd(kF32, {rows, 1});
    check(
        "gelu(x*a+b)-x " + sh({rows, cols}), f32,
        [](const Tensor& t, const Tensor& u, const Tensor& v) { return gelu(t * u + v) - t; }, x, a,
        b);
  }
  // A movement op in the middle of a fused chain, then a reduction over it.
  {
    Tensor x = rnd(kF32, {12, 40}), a = rnd(kF32, {40}), b = rnd(kF32, {40});
    auto fn = [](const Tensor& t, const Tensor& u, const Tensor& v) {
      return sum(permute(relu(t * u + v), {1, 0}), {1});
    };
    check("sum(permute(relu(x*a+b)), 1)", Tol{1e-5, 1e-6}, fn, x, a, b);  // terms >= 0
  }
  // Reshape between incompatible layouts: permute, then reshape (a non-view on the input).
  for (DType dt : {kF32, kI32}) {
    Tensor x = rnd(dt, {4, 6, 8}, Dist{-20, 20});
    check(
        std::string("reshape(permute(x)+1) ") + dtype_name(dt), Tol::for_dtype(dt),
        [](const Tensor& t) {
          return reshape(permute(t, {1, 0, 2}) + 1.0, {3, 64});
        },
        x);
    check(
        std::string("permute(reshape(x))*x' ") + dtype_name(dt), Tol::for_dtype(dt),
        [](const Tensor& t) {
          return permute(reshape(t, {8, 24}), {1, 0}) * reshape(t, {24, 8});
        },
        x);
    check(
        std::string("reshape(permute(x, 2,0,1)) odd ") + dtype_name(dt), Tol::for_dtype(dt),
        [](const Tensor& t) {
          return neg(reshape(permute(t, {2, 0, 1}), {16, 12}));
        },
        x);
  }
  // Reshapes a vec4 kernel can read through (same inner dim), and one it cannot.
  {
    Tensor x = rnd(kF32, {4, 6, 8}), y = rnd(kF32, {8});
    check(
        "reshape(exp(x), 24x8) + y", Tol{2e-6, 1e-6},
        [](const Tensor& t, const Tensor& u) {
          return reshape(exp(t), {24, 1, 8}) + u;
        },
        x, y);
    check(
        "reshape(x*2, 4x48) - 1", Tol{1e-6, 1e-6},
        [](const Tensor& t) {
          return reshape(t * 2.0, {4, 48}) - 1.0;
        },
        x);
  }
  // Leaky relu with a literal, and a reduction of a reduction.
  {
    Tensor x = rnd(kF32, {6, 5, 12});
    check(
        "where(x>0, x, 0.1*x)", Tol{1e-6, 1e-7},
        [](const Tensor& t) { return where(gt(t, scalar(0)), t, scalar(0.1) * t); }, x);
    check(
        "mean(max(x, 2), 0)", Tol{1e-6, 1e-6},
        [](const Tensor& t) { return mean(max(t, {2}), {0}); }, x);
  }
  // Softmax: reductions materialised and broadcast back.
  for (const Shape& s : {Shape{5, 7}, Shape{3, 200}}) {
    Tensor x = rnd(kF32, s, Dist{-4, 4});
    check(
        "softmax " + sh(s), Tol{1e-5, 1e-6},
        [](const Tensor& t) {
          Tensor e = exp(t - max(t, {1}, true));
          return e / sum(e, {1}, true);
        },
        x);
  }
  // f16 and integer chains, and the unfused baseline.
  {
    Tensor x = rnd(kF16, {9, 16}), y = rnd(kF16, {16});
    // Fused f16 keeps intermediates in float (docs/codegen.md) while the op-by-op reference
    // rounds x*y to half: allow half an f16 ulp of the intermediates (|x*y| <= 4) on top.
    check(
        "f16 relu(x*y)+x", Tol{2e-3, 4e-3},
        [](const Tensor& t, const Tensor& u) { return relu(t * u) + t; }, x, y);
    Tensor i = rnd(kI64, {5, 11}, Dist{-30, 30}), j = rnd(kI32, {11}, Dist{-30, 30});
    check(
        "i64 maximum(i*j, -i) - 3", Tol::exact(),
        [](const Tensor& p, const Tensor& q) { return maximum(p * q, -p) - 3.0; }, i, j);
    CheckOptions scalar_only;
    scalar_only.eager = false;
    scalar_only.compile.vectorize = false;
    Tensor v = rnd(kF32, {16, 64});
    check_with(
        "vectorize=false exp(v)*v", Tol{2e-6, 1e-6}, scalar_only,
        [](const Tensor& p) { return exp(p) * p; }, v);
    CheckOptions unfused;
    unfused.eager = false;
    unfused.compile.fuse = false;
    Tensor a = rnd(kF32, {13, 8}), b = rnd(kF32, {8});
    check_with(
        "unfused exp(a)*b+a", Tol{2e-6, 1e-6}, unfused,
        [](const Tensor& p, const Tensor& q) { return exp(p) * q + p; }, a, b);
  }
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// NaN propagates through maximum, minimum, relu and max-reductions exactly as in the
// interpreter (GLSL's max/min leave NaN operands undefined).
TEST_F(DeviceOps, NanPropagatesLikeTheInterpreter) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> av = {nan, 1.f, -2.f, nan, 3.f, -1.f, 0.f, nan};
  std::vector<float> bv = {0.f, nan, 5.f, nan, -3.f, 2.f, nan, 1.f};
  for (Shape shape : {Shape{8}, Shape{2, 4}}) {
    for (bool vec : {true, false}) {
      Tensor a = Tensor::from_vector(av, shape), b = Tensor::from_vector(bv, shape);
      auto fn = [](const Tensor& x, const Tensor& y) {
        return std::vector<Tensor>{maximum(x, y), minimum(x, y), relu(x),
                                   max(x, {static_cast<int64_t>(x.dim() - 1)})};
      };
      std::vector<Tensor> want = fn(a, b);
      auto f = compile(fn, {.name = "nan", .vectorize = vec});
      std::vector<Tensor> got = f(a.to(Device::vulkan()), b.to(Device::vulkan()));
      for (size_t i = 0; i < want.size(); ++i) {
        std::vector<float> w = want[i].to_vector<float>(), g = got[i].to_vector<float>();
        ASSERT_EQ(w.size(), g.size());
        for (size_t j = 0; j < w.size(); ++j) {
          if (std::isnan(w[j])) {
            EXPECT_TRUE(std::isnan(g[j])) << "output " << i << " element " << j;
          } else {
            EXPECT_EQ(g[j], w[j]) << "output " << i << " element " << j;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace kiln
