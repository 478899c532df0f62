// kiln::unique (the sort_slices kernel op, then gathers, scatters, cumsum and masked_select)
// on Vulkan against the interpreter, on fresh random data into poisoned memory, eagerly and
// compiled (every graph on the device): small integer values (many repeats), NaN, -0.0 and 0.0
// planted in floats, flattened and along every axis, sorted and in first-occurrence order,
// f32, f16, i32, i64 (neighbours of 2^53) and bool, sizes 1 and odd ones, all four outputs
// exactly; sort_slices alone on its own; and the flattened length past gallivm's loop limit,
// which runs on the interpreter there with a loop-limit warning.
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

class DeviceUnique : public test::DeviceOpTest {
 protected:
  Tensor values(DType dt, const Shape& shape) {
    const int64_t n = numel(shape);
    std::uniform_int_distribution<int> small(-2, 2), special(0, 11);
    if (dt == DType::kI64) {
      const int64_t big = int64_t{1} << 53;
      std::vector<int64_t> v;
      for (int64_t i = 0; i < n; ++i) v.push_back(big + small(rng_));
      return Tensor::from_vector(v, shape);
    }
    std::vector<double> v;
    for (int64_t i = 0; i < n; ++i) {
      double x = dt == DType::kBool ? small(rng_) > 0 : small(rng_);
      if (is_floating(dt)) {
        const int k = special(rng_);
        if (k == 0) x = std::numeric_limits<double>::quiet_NaN();
        if (k == 1) x = -0.0;
      }
      v.push_back(x);
    }
    return test::tensor_from_doubles(dt, shape, v);
  }

  /// Checks the values, and the three i64 outputs joined, eagerly and compiled.
  void check_unique(const std::string& label, const Tensor& x, std::optional<int64_t> axis,
                    bool sorted) {
    for (bool ints : {false, true}) {
      auto fn = [axis, sorted, ints](const Tensor& a) {
        UniqueResult r = unique(a, axis, sorted);
        return ints ? concat({r.indices, r.inverse, r.counts}, 0) : r.values;
      };
      const std::string what = label + (ints ? " indices, inverse, counts" : " values");
      CheckOptions opt;
      opt.compiled = false;  // below, with every graph checked
      check_with(what, Tol::exact(), opt, fn, x);
      Tensor want = fn(x);
      test::poison_device_memory(1 << 20);
      auto compiled = compile(fn, {.name = "unique"});
      test::expect_close(compiled(x.to(Device::vulkan())), want, Tol::exact(),
                         what + " [compiled]");
      for (const EntryInfo& e : compiled.entries())
        EXPECT_TRUE(e.on_device) << what << " [compiled] ran a graph on the interpreter\n"
                                 << e.graph;
    }
  }
};

TEST_F(DeviceUnique, MatchesTheInterpreter) {
  for (DType dt : {DType::kF32, DType::kF16, DType::kI32, DType::kI64, DType::kBool})
    for (const Shape& s : {Shape{1}, Shape{7}, Shape{3, 5}, Shape{2, 3, 4}, Shape{40}})
      for (bool sorted : {true, false}) {
        if (dt != DType::kF32 && s.size() != 2) continue;
        const std::string label =
            std::string(dtype_name(dt)) + " x" + shape_str(s) + (sorted ? " sorted" : " unsorted");
        Tensor x = values(dt, s);
        check_unique(label + " flattened", x, std::nullopt, sorted);
        if (dt == DType::kF32 || dt == DType::kI64)
          for (int64_t a = 0; a < static_cast<int64_t>(s.size()); ++a)
            check_unique(label + " axis " + std::to_string(a), x, a, sorted);
      }
}

// The K-long outputs share one length, so they combine inside a compiled function; and the
// input may itself have a data-dependent length.
TEST_F(DeviceUnique, OutputsCombineAndDataDependentInput) {
  for (bool sorted : {true, false}) {
    auto fn = [sorted](const Tensor& x) {
      UniqueResult r = unique(masked_select(x, gt(x, scalar(-2.0))), std::nullopt, sorted);
      return r.values * cast(r.counts, DType::kF32) + cast(r.indices, DType::kF32);
    };
    auto compiled = compile(fn, {.name = "unique_combined"});
    for (int k = 0; k < 3; ++k) {
      Tensor x = values(DType::kF32, {5 + 3 * k});
      Tensor want = fn(x);
      test::poison_device_memory(1 << 20);
      test::expect_close(
          compiled(x.to(Device::vulkan())), want, Tol::exact(),
          std::string(sorted ? "sorted" : "unsorted") + " call " + std::to_string(k));
    }
    for (const EntryInfo& e : compiled.entries())
      EXPECT_TRUE(e.on_device) << "a graph on the interpreter\n" << e.graph;
    EXPECT_EQ(compiled.stats().graph_breaks, 0u);
  }
}

TEST_F(DeviceUnique, SortSlicesAlone) {
  for (const Shape& s : {Shape{9}, Shape{1, 1}, Shape{4, 6}, Shape{3, 0}, Shape{0}})
    for (int64_t a = 0; a < static_cast<int64_t>(s.size()); ++a) {
      Attrs at;
      at.axis = a;
      check(
          "sort_slices x" + shape_str(s) + " axis " + std::to_string(a), Tol::exact(),
          [at](const Tensor& x) {
            return apply_op(OpKind::SortSlices, {x}, Attrs(at), Loc::current());
          },
          values(DType::kF32, s));
    }
}

TEST_F(DeviceUnique, PastTheLoopLimitFallsBackOrRuns) {
  // Two slices of 33,000: each invocation compares two slices elementwise, 66,003 trips.
  expect_loop_limit_fallback_or_run(
      "two long slices",
      [](const Tensor& a) { return apply_op(OpKind::SortSlices, {a}, Attrs{}, Loc::current()); },
      values(DType::kI32, {2, 33000}));
}

}  // namespace
}  // namespace kiln
