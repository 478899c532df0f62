// scatter_elements and scatter_nd on Vulkan against the interpreter, on fresh random data into
// poisoned memory, eagerly and compiled: every reduction (none, add, mul) with many duplicate
// indices (the kernel applies them in the interpreter's order), negative indices, indices
// smaller than data outside the axis, every dtype (f32, f16, i32, i64, bool), size-1 and empty
// index sets, fused producers and consumer, symbolic sizes, and out-of-range indices (an error
// on the interpreter, ignored on the device).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "device/test_util.h"

namespace kiln {
namespace {

using test::Dist;
using test::Tol;

class DeviceScatter : public test::DeviceOpTest {
 protected:
  /// Random indices of `shape` in [-size, size) (negative ones count from the end); a small
  /// size makes duplicates likely.
  Tensor indices(const Shape& shape, int64_t size, DType dt = DType::kI64) {
    return rnd(dt, shape, Dist::uniform(static_cast<double>(-size), static_cast<double>(size - 1)));
  }
  /// Random ScatterND index tuples [rows.., m] over the first m dims of `data`.
  Tensor tuples(Shape rows, const Shape& data, size_t m, DType dt = DType::kI64) {
    std::vector<double> v;
    for (int64_t i = 0; i < numel(rows); ++i)
      for (size_t k = 0; k < m; ++k) {
        std::uniform_int_distribution<int64_t> u(-data[k], data[k] - 1);
        v.push_back(static_cast<double>(u(rng_)));
      }
    rows.push_back(static_cast<Dim>(m));
    return test::tensor_from_doubles(dt, rows, v);
  }
};

const char* name(ScatterReduction r) {
  return r == ScatterReduction::kNone ? "none" : r == ScatterReduction::kAdd ? "add" : "mul";
}

constexpr ScatterReduction kAll[] = {ScatterReduction::kNone, ScatterReduction::kAdd,
                                     ScatterReduction::kMul};

TEST_F(DeviceScatter, ScatterElements) {
  struct Case {
    Shape data, idx;
    int64_t axis;
  };
  const std::vector<Case> cases = {
      {{7}, {12}, 0},      {{3, 5}, {3, 9}, 1},
      {{3, 5}, {8, 2}, 0}, {{4, 6, 5}, {3, 4, 5}, -2},
      {{1, 1}, {1, 1}, 0}, {{2, 9, 3}, {2, 9, 1}, 2},
      {{5, 3}, {0, 3}, 0},
  };
  for (const Case& c : cases) {
    const int64_t axis = c.axis < 0 ? c.axis + static_cast<int64_t>(c.data.size()) : c.axis;
    for (ScatterReduction r : kAll) {
      for (DType dt : {DType::kF32, DType::kF16, DType::kI32, DType::kI64}) {
        const Dist dist = is_floating(dt) ? Dist::uniform(-2, 2) : Dist::uniform(-5, 5);
        Tensor data = rnd(dt, c.data, dist), upd = rnd(dt, c.idx, dist);
        Tensor idx = indices(c.idx, c.data[static_cast<size_t>(axis)],
                             dt == DType::kI32 ? DType::kI32 : DType::kI64);
        const std::string label = std::string("scatter_elements ") + dtype_name(dt) + " " +
                                  name(r) + " data" + shape_str(c.data) + " idx" +
                                  shape_str(c.idx) + " axis " + std::to_string(c.axis);
        check(
            label, dt == DType::kF16 ? Tol::for_dtype(dt) : Tol{1e-6, 1e-6},
            [c, r](const Tensor& d, const Tensor& i, const Tensor& u) {
              return scatter_elements(d, c.axis, i, u, r);
            },
            data, idx, upd);
      }
    }
  }
  Tensor data = rnd(DType::kBool, {4, 5}), upd = rnd(DType::kBool, {6, 5});
  check(
      "scatter_elements bool", Tol::exact(),
      [](const Tensor& d, const Tensor& i, const Tensor& u) {
        return scatter_elements(d, 0, i, u);
      },
      data, indices({6, 5}, 4), upd);
  // Producers fold into the loads; a consumer after the kernel.
  check(
      "scatter_elements(x * 2, i, tanh(u), add) + 1", Tol{1e-6, 1e-6},
      [](const Tensor& d, const Tensor& i, const Tensor& u) {
        return scatter_elements(d * 2.0, 1, i, tanh(u), ScatterReduction::kAdd) + 1.0;
      },
      rnd(DType::kF32, {3, 8}), indices({3, 11}, 8), rnd(DType::kF32, {3, 11}));
}

TEST_F(DeviceScatter, ScatterND) {
  struct Case {
    Shape data, rows;
    size_t m;
  };
  const std::vector<Case> cases = {
      {{8}, {5}, 1},    {{4, 4, 4}, {2}, 1}, {{4, 4, 4}, {2, 3}, 2}, {{3, 5, 2}, {7}, 3},
      {{6, 3}, {9}, 1}, {{1}, {1}, 1},       {{5, 7}, {0}, 1},       {{2, 3, 5}, {4, 2}, 2},
  };
  for (const Case& c : cases) {
    Shape upd_shape = c.rows;
    upd_shape.insert(upd_shape.end(), c.data.begin() + static_cast<int64_t>(c.m), c.data.end());
    for (ScatterReduction r : kAll) {
      for (DType dt : {DType::kF32, DType::kF16, DType::kI32, DType::kI64}) {
        const Dist dist = is_floating(dt) ? Dist::uniform(-2, 2) : Dist::uniform(-5, 5);
        Tensor data = rnd(dt, c.data, dist), upd = rnd(dt, upd_shape, dist);
        Tensor idx = tuples(c.rows, c.data, c.m, dt == DType::kI32 ? DType::kI32 : DType::kI64);
        const std::string label = std::string("scatter_nd ") + dtype_name(dt) + " " + name(r) +
                                  " data" + shape_str(c.data) + " idx" + shape_str(idx.shape());
        check(
            label, dt == DType::kF16 ? Tol::for_dtype(dt) : Tol{1e-6, 1e-6},
            [r](const Tensor& d, const Tensor& i, const Tensor& u) {
              return scatter_nd(d, i, u, r);
            },
            data, idx, upd);
      }
    }
  }
  check(
      "scatter_nd bool", Tol::exact(),
      [](const Tensor& d, const Tensor& i, const Tensor& u) { return scatter_nd(d, i, u); },
      rnd(DType::kBool, {5, 3}), tuples({4}, {5, 3}, 1), rnd(DType::kBool, {4, 3}));
  check(
      "relu(scatter_nd(x - 1, i, u * u, mul))", Tol{1e-6, 1e-6},
      [](const Tensor& d, const Tensor& i, const Tensor& u) {
        return relu(scatter_nd(d - 1.0, i, u * u, ScatterReduction::kMul));
      },
      rnd(DType::kF32, {6, 4}), tuples({5}, {6, 4}, 1), rnd(DType::kF32, {5, 4}));
}

TEST_F(DeviceScatter, OutOfRangeIndicesAreIgnoredOnTheDevice) {
  Tensor data = Tensor::from_vector(std::vector<float>{1, 2, 3}, {3});
  Tensor idx = Tensor::from_vector(std::vector<int64_t>{1, 3, -4}, {3, 1});
  Tensor upd = Tensor::from_vector(std::vector<float>{10, 20, 30}, {3});
  Tensor got =
      scatter_nd(data.to(Device::vulkan()), idx.to(Device::vulkan()), upd.to(Device::vulkan()))
          .to(Device::cpu());
  EXPECT_EQ(got.to_doubles(), (std::vector<double>{1, 10, 3}));
  EXPECT_THROW(scatter_nd(data, idx, upd).to_doubles(), Error);
  Tensor ie = Tensor::from_vector(std::vector<int64_t>{2, 7}, {2});
  Tensor ue = Tensor::from_vector(std::vector<float>{5, 6}, {2});
  got = scatter_elements(data.to(Device::vulkan()), 0, ie.to(Device::vulkan()),
                         ue.to(Device::vulkan()))
            .to(Device::cpu());
  EXPECT_EQ(got.to_doubles(), (std::vector<double>{1, 2, 5}));
}

TEST_F(DeviceScatter, SymbolicSizesShareOnePipelineSet) {
  auto fn = [](const Tensor& d, const Tensor& i, const Tensor& u) {
    return scatter_nd(d, i, u, ScatterReduction::kAdd) * 2.0;
  };
  auto compiled = compile(fn, {.name = "sym_scatter_nd", .dynamic = Dynamic::kTrue});
  for (auto [n, rows] : {std::pair<Dim, Dim>{6, 4}, {9, 7}, {5, 11}}) {
    Tensor d = rnd(DType::kF32, {n, 3}), i = tuples({rows}, {n, 3}, 1);
    Tensor u = rnd(DType::kF32, {rows, 3});
    test::poison_device_memory(1 << 20);
    Tensor got = compiled(d.to(Device::vulkan()), i.to(Device::vulkan()), u.to(Device::vulkan()));
    test::expect_close(got, fn(d, i, u), Tol{1e-6, 1e-6}, "symbolic scatter_nd");
  }
  EXPECT_EQ(compiled.stats().compiles, 1u);
  auto se = compile([](const Tensor& d, const Tensor& i,
                       const Tensor& u) { return scatter_elements(d, 1, i, u); },
                    {.name = "sym_scatter_elements", .dynamic = Dynamic::kTrue});
  for (auto [n, w] : {std::pair<Dim, Dim>{4, 6}, {7, 9}}) {
    Tensor d = rnd(DType::kF32, {n, w}), i = indices({n - 1, w + 2}, w);
    Tensor u = rnd(DType::kF32, {n - 1, w + 2});
    test::poison_device_memory(1 << 20);
    Tensor got = se(d.to(Device::vulkan()), i.to(Device::vulkan()), u.to(Device::vulkan()));
    test::expect_close(got, scatter_elements(d, 1, i, u), Tol::exact(),
                       "symbolic scatter_elements");
  }
  EXPECT_EQ(se.stats().compiles, 1u);
}

}  // namespace
}  // namespace kiln
