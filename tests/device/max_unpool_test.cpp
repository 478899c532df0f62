// max_unpool (ONNX MaxUnpool) on Vulkan against the interpreter, on fresh random data into
// poisoned memory, eagerly and compiled: 1-D to 3-D windows, strides, pads, odd sizes, sizes
// 0 and 1, output shapes larger than the unpooled one (spatial dims, N and C; the indices
// are flat positions of the output), many duplicate indices (the kernel applies them in the
// interpreter's order), every dtype max_unpool takes (f32, f16, i32, i64) and symbolic sizes.
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
  std::vector<int64_t> kernel, strides, pads, output;  // output: {} = the unpooled shape
};

/// The shape the indices address: (D - 1) * stride + kernel - pads per spatial dim.
Shape unpooled_shape(const Case& c) {
  Shape s = {c.x[0], c.x[1]};
  const size_t k = c.kernel.size();
  for (size_t i = 0; i < k; ++i)
    s.push_back((c.x[i + 2] - 1) * c.strides[i] + c.kernel[i] - c.pads[i] - c.pads[i + k]);
  return s;
}

Shape out_shape(const Case& c) {
  return c.output.empty() ? unpooled_shape(c) : c.output;
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
  /// Indices of `shape` in [0, size) (the unpooled size): a small size makes duplicates
  /// likely.
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
      {{0, 2, 3, 3}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {}},
      // output_shape larger than the unpooled shape (MaxPool floored odd sizes): the indices
      // are flat positions of the whole output.
      {{1, 3, 4, 5}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 3, 9, 11}},
      {{1, 3, 4, 5}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 3, 8, 11}},
      {{2, 3, 5, 7}, {3, 2}, {2, 3}, {1, 0, 0, 1}, {3, 4, 11, 21}},
      {{1, 2, 9}, {3}, {3}, {0, 0}, {1, 2, 31}},
      {{2, 2, 3, 3, 3}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0, 0, 0, 0}, {2, 2, 7, 6, 9}},
      {{1, 1, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {2, 1, 3, 1}},
      {{1, 2, 0, 3}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 2, 4, 6}},
      {{1, 2, 3, 3}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 2, 6, 6}},
      {{1, 1, 2, 2}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1, 5, 5}},
  };
  for (const Case& c : cases) {
    const Shape out = out_shape(c);
    for (DType dt : {DType::kF32, DType::kF16, DType::kI32, DType::kI64}) {
      const Dist dist = is_floating(dt) ? Dist::uniform(-2, 2) : Dist::uniform(-50, 50);
      Tensor x = rnd(dt, c.x, dist);
      Tensor i = indices(c.x, numel(out));
      check(
          std::string("max_unpool ") + dtype_name(dt) + " x" + shape_str(c.x) + " unpooled" +
              shape_str(unpooled_shape(c)) + " out" + shape_str(out),
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

TEST_F(DeviceMaxUnpool, FusedProducerWithOutputShape) {
  const Case c{{2, 3, 6, 5}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {2, 3, 13, 12}};
  Tensor x = rnd(DType::kF32, c.x, Dist::uniform(-2, 2));
  Tensor i = indices(c.x, numel(out_shape(c)));
  check(
      "max_unpool of relu(x) * 2 into " + shape_str(c.output), Tol{1e-6, 1e-6},
      [c](const Tensor& a, const Tensor& b) { return max_unpool(relu(a) * 2.0, b, c) + 1.0; }, x,
      i);
}

// One compile serves every size of x: the unpooled sizes are symbolic (or the output_shape a
// constant). (The first shape's sizes differ, so
// duck sizing ties no two of them.)
TEST_F(DeviceMaxUnpool, SymbolicSizes) {
  for (const std::vector<int64_t>& output : {std::vector<int64_t>{}, {5, 6, 15, 17}}) {
    const Case base{{}, {2, 3}, {2, 2}, {0, 1, 0, 0}, output};
    auto fn = [base](const Tensor& x, const Tensor& i) { return max_unpool(x, i, base); };
    auto compiled = compile(fn, {.name = "sym_max_unpool", .dynamic = Dynamic::kTrue});
    for (Shape s : {Shape{2, 3, 5, 6}, Shape{4, 3, 7, 8}, Shape{3, 5, 6, 5}}) {
      Case c = base;
      c.x = s;
      Tensor x = rnd(DType::kF32, s);
      Tensor i = indices(s, numel(out_shape(c)));
      Tensor want = fn(x, i);
      test::poison_device_memory(1 << 20);
      Tensor got = compiled(x.to(Device::vulkan()), i.to(Device::vulkan()));
      test::expect_close(got, want, Tol::exact(),
                         "symbolic x" + shape_str(s) + " out" + shape_str(want.meta().shape));
    }
    EXPECT_EQ(compiled.stats().compiles, 1u) << shape_str(output);
    ASSERT_EQ(compiled.entries().size(), 1u) << shape_str(output);
    EXPECT_TRUE(compiled.entries()[0].on_device);
  }
}

}  // namespace
}  // namespace kiln
