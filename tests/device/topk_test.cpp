// topk_indices and kiln::topk (its values a gather by those indices) on Vulkan against the
// interpreter, on fresh random data into poisoned memory, eagerly and compiled: rows of small
// integer values (many ties), NaN, ±inf, -0.0 and 0.0 planted in float rows, largest and
// smallest, k = 0, 1, N / 2 and N, odd sizes, rows of 1, N = 1 and empty tensors, f32, f16, i32,
// i64 (values around 2^53 and the extremes, which only exact comparisons order) and bool, a
// fused producer, symbolic row counts and lengths, and a row past gallivm's loop limit, which
// runs on the interpreter there, with a loop-limit warning.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "device/test_util.h"
#include "tensor/apply_op.h"

namespace kiln {
namespace {

using test::Tol;

Tensor topk_indices(const Tensor& x, int64_t k, bool largest) {
  Attrs a;
  a.dims = {k};
  a.index = largest ? 1 : 0;
  return apply_op(OpKind::TopKIndices, {x}, std::move(a), Loc::current());
}

class DeviceTopK : public test::DeviceOpTest {
 protected:
  /// Small integer values (ties in every row); float rows also get NaN, ±inf, -0.0 and 0.0.
  Tensor values(DType dt, const Shape& shape) {
    const int64_t n = numel(shape);
    if (dt == DType::kI64) {  // neighbours of 2^53 (one double) and the extremes
      const int64_t big = int64_t{1} << 53;
      const std::vector<int64_t> pool = {big,
                                         big + 1,
                                         -big - 1,
                                         -big,
                                         0,
                                         1,
                                         -1,
                                         7,
                                         std::numeric_limits<int64_t>::min(),
                                         std::numeric_limits<int64_t>::max()};
      std::uniform_int_distribution<size_t> pick(0, pool.size() - 1);
      std::vector<int64_t> v;
      for (int64_t i = 0; i < n; ++i) v.push_back(pool[pick(rng_)]);
      return Tensor::from_vector(v, shape);
    }
    std::uniform_int_distribution<int> small(-3, 3);
    std::uniform_int_distribution<int> special(0, 9);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    std::vector<double> v;
    for (int64_t i = 0; i < n; ++i) {
      double x = dt == DType::kBool ? small(rng_) > 0 : small(rng_);
      if (is_floating(dt)) switch (special(rng_)) {
          case 0:
            x = nan;
            break;
          case 1:
            x = inf;
            break;
          case 2:
            x = -inf;
            break;
          case 3:
            x = -0.0;
            break;
          case 4:
            x = 0.0;
            break;
          default:
            break;
        }
      v.push_back(x);
    }
    return test::tensor_from_doubles(dt, shape, v);
  }
};

TEST_F(DeviceTopK, MatchesTheInterpreter) {
  const std::vector<Shape> shapes = {{1},    {7},       {1, 1},     {5, 1},      {4, 7},
                                     {3, 2}, {2, 3, 5}, {6, 33},    {2, 130},    {0, 4},
                                     {3, 0}, {1, 64},   {3, 1, 17}, {2, 2, 2, 9}};
  for (const Shape& s : shapes)
    for (DType dt : {DType::kF32, DType::kF16, DType::kI32, DType::kI64, DType::kBool}) {
      const int64_t n = s.back();
      std::vector<int64_t> ks = {0, n / 2, n};
      if (n >= 1) ks.push_back(1);
      for (int64_t k : ks)
        for (bool largest : {true, false}) {
          const std::string label = std::string("topk ") + dtype_name(dt) + " x" + shape_str(s) +
                                    " k " + std::to_string(k) +
                                    (largest ? " largest" : " smallest");
          Tensor x = values(dt, s);
          check(
              label + " indices", Tol::exact(),
              [k, largest](const Tensor& a) { return topk_indices(a, k, largest); }, x);
          if (k == n / 2)
            check(
                label + " values", Tol::exact(),
                [k, largest](const Tensor& a) { return topk(a, k, largest).first; }, x);
        }
    }
}

TEST_F(DeviceTopK, FusedProducerAndConsumer) {
  Tensor x = values(DType::kF32, {5, 19});
  check(
      "topk of x * -2 + 1, values + 1", Tol::exact(),
      [](const Tensor& a) { return topk(a * -2.0 + 1.0, 6, true).first + 1.0; }, x);
  check(
      "topk indices of relu(x), as f32", Tol::exact(),
      [](const Tensor& a) { return cast(topk(relu(a), 4, false).second, DType::kF32); }, x);
}

// One compile serves every row count and row length (sizes of 1 are specialised).
TEST_F(DeviceTopK, SymbolicSizes) {
  auto fn = [](const Tensor& x) { return topk_indices(x, 3, true); };
  auto compiled = compile(fn, {.name = "sym_topk", .dynamic = Dynamic::kTrue});
  for (const Shape& s : {Shape{4, 9}, Shape{7, 5}, Shape{2, 40}, Shape{11, 3}}) {
    Tensor x = values(DType::kF32, s);
    Tensor want = fn(x);
    test::poison_device_memory(1 << 20);
    Tensor got = compiled(x.to(Device::vulkan()));
    test::expect_close(got, want, Tol::exact(), "symbolic x" + shape_str(s));
  }
  EXPECT_EQ(compiled.stats().compiles, 1u);
  ASSERT_EQ(compiled.entries().size(), 1u);
  EXPECT_TRUE(compiled.entries()[0].on_device);
}

// A row longer than gallivm's loop limit (65535 iterations per invocation, lavapipe): there the
// kernel is reported unimplemented at that size and the op runs on the interpreter with a
// warning that names the loop limit; a driver without that limit (SwiftShader) runs the kernel.
// Either way the values are the interpreter's.
TEST_F(DeviceTopK, RowPastTheLoopLimitFallsBackOrRuns) {
  expect_loop_limit_fallback_or_run(
      "long row", [](const Tensor& a) { return topk_indices(a, 5, true); },
      values(DType::kF32, {1, 70000}));
}

}  // namespace
}  // namespace kiln
