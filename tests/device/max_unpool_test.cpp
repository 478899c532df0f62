// max_unpool (ONNX MaxUnpool) on Vulkan against the interpreter, on fresh random data into
// poisoned memory, eagerly and compiled: 1-D to 3-D windows, strides, pads, odd sizes, sizes
// 0 and 1, an explicit output shape, many duplicate indices (the kernel applies them in the
// interpreter's order) and every dtype max_unpool takes (f32, f16, i32, i64).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "device/test_util.h"
#include "tensor/apply_op.h"

namespace kiln {
namespace {

using test::Dist;
using test::Tol;

struct Case {
  Shape x;
  std::vector<int64_t> kernel, strides, pads, output;  // output: {} = the default shape
};

/// The default output shape of `c`: (D - 1) * stride + kernel - pads per spatial dim.
Shape out_shape(const Case& c) {
  if (!c.output.empty()) return c.output;
  Shape s = {c.x[0], c.x[1]};
  const size_t k = c.kernel.size();
  for (size_t i = 0; i < k; ++i)
    s.push_back((c.x[i + 2] - 1) * c.strides[i] + c.kernel[i] - c.pads[i] - c.pads[i + k]);
  return s;
}

Tensor max_unpool(const Tensor& x, const Tensor& i, const Case& c) {
  Attrs a;
  a.window.kernel = c.kernel;
  a.window.strides = c.strides;
  a.window.pads = c.pads;
  a.dims = c.output;
  return apply_op(OpKind::MaxUnpool, {x, i}, std::move(a), Loc::current());
}

class DeviceMaxUnpool : public test::DeviceOpTest {
 protected:
  /// Indices of `shape` in [0, size): a small size makes duplicates likely.
  Tensor indices(const Shape& shape, int64_t size) {
    std::vector<double> v;
    std::uniform_int_distribution<int64_t> u(0, std::max<int64_t>(size - 1, 0));
    for (int64_t j = 0; j < numel(shape); ++j) v.push_back(static_cast<double>(u(rng_)));
    return test::tensor_from_doubles(DType::kI64, shape, v);
  }
};

TEST_F(DeviceMaxUnpool, MatchesTheInterpreter) {
  const std::vector<Case> cases = {
      {{1, 1, 2, 2}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {}},
      {{2, 3, 5, 7}, {3, 2}, {2, 3}, {1, 0, 0, 1}, {}},
      {{1, 2, 9}, {3}, {3}, {0, 0}, {}},
      {{1, 1, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {}},
      {{3, 1, 4, 1}, {2, 1}, {2, 1}, {0, 0, 0, 0}, {}},
      {{2, 2, 3, 3, 3}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0, 0, 0, 0}, {}},
      {{1, 3, 4, 5}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 3, 9, 11}},
      {{0, 2, 3, 3}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {}},
      {{1, 2, 0, 3}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 2, 4, 6}},
  };
  for (const Case& c : cases) {
    const Shape out = out_shape(c);
    for (DType dt : {DType::kF32, DType::kF16, DType::kI32, DType::kI64}) {
      const Dist dist = is_floating(dt) ? Dist::uniform(-2, 2) : Dist::uniform(-50, 50);
      Tensor x = rnd(dt, c.x, dist);
      Tensor i = indices(c.x, numel(out));
      check(
          std::string("max_unpool ") + dtype_name(dt) + " x" + shape_str(c.x) + " out" +
              shape_str(out),
          Tol::exact(), [c](const Tensor& a, const Tensor& b) { return max_unpool(a, b, c); }, x,
          i);
    }
  }
}

TEST_F(DeviceMaxUnpool, FusedProducer) {
  const Case c{{2, 3, 6, 5}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {}};
  Tensor x = rnd(DType::kF32, c.x, Dist::uniform(-2, 2));
  Tensor i = indices(c.x, numel(out_shape(c)));
  check(
      "max_unpool of relu(x) * 2", Tol{1e-6, 1e-6},
      [c](const Tensor& a, const Tensor& b) { return max_unpool(relu(a) * 2.0, b, c) + 1.0; }, x,
      i);
}

}  // namespace
}  // namespace kiln
