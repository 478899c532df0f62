// conv_transpose on Vulkan against the interpreter, on fresh random data into poisoned memory,
// eagerly and compiled: 1-D/2-D/3-D, strides larger and smaller than the window, dilations,
// groups, begin/end pads (negative ones too), output_padding, size-1 inputs and windows, odd
// sizes, output-channel blocks with a partial one, a bias, fused producers and consumer, f16,
// and symbolic batch and spatial sizes (one pipeline set for several shapes).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "device/test_util.h"

namespace kiln {
namespace {

using test::Tol;
using V = std::vector<int64_t>;

class DeviceConvTranspose : public test::DeviceOpTest {};

struct Case {
  Shape x, w;  // w: [C, C_out / groups, K..]
  V s, p, d, op;
  int64_t groups;
  bool bias;
};

std::string label(const Case& c) {
  return "conv_transpose x" + shape_str(c.x) + " w" + shape_str(c.w) + " s" + shape_str(c.s) +
         " p" + shape_str(c.p) + " d" + shape_str(c.d) + " op" + shape_str(c.op) + " g" +
         std::to_string(c.groups) + (c.bias ? " bias" : "");
}

TEST_F(DeviceConvTranspose, AgainstInterpreter) {
  const std::vector<Case> cases = {
      {{1, 1, 3}, {1, 2, 3}, {1}, {0, 0}, {1}, {0}, 1, false},
      {{2, 3, 7}, {3, 5, 3}, {2}, {1, 2}, {1}, {1}, 1, true},
      {{1, 4, 5}, {4, 1, 2}, {3}, {0, 0}, {2}, {2}, 4, true},  // stride > window: untouched gaps
      {{1, 1, 1}, {1, 1, 1}, {1}, {0, 0}, {1}, {0}, 1, true},
      {{1, 1, 1, 1}, {1, 3, 2, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}, {0, 0}, 1, true},
      {{2, 3, 5, 4}, {3, 4, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, {1, 0}, 1, true},
      {{1, 4, 6, 7}, {4, 3, 3, 2}, {2, 3}, {0, 1, 2, 0}, {2, 1}, {1, 2}, 2, false},
      {{1, 6, 4, 4}, {6, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, {0, 0}, 6, true},  // depthwise
      {{1, 2, 3, 3}, {2, 2, 3, 3}, {3, 2}, {-1, 0, 0, -1}, {1, 1}, {0, 0}, 1, true},
      {{2, 2, 9, 1}, {2, 7, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, {0, 0}, 1, true},
      {{1, 2, 3, 4, 5},
       {2, 2, 3, 3, 3},
       {1, 1, 1},
       {0, 0, 0, 0, 0, 0},
       {1, 1, 1},
       {0, 0, 0},
       1,
       false},
      {{1, 4, 3, 2, 3},
       {4, 3, 2, 3, 2},
       {2, 1, 3},
       {1, 0, 1, 0, 1, 1},
       {1, 2, 1},
       {1, 0, 2},
       2,
       true},
      // Output-channel blocks of 4 with a partial one.
      {{2, 5, 4, 5}, {5, 7, 2, 3}, {2, 1}, {0, 1, 1, 0}, {1, 2}, {0, 0}, 1, true},
  };
  for (const Case& c : cases) {
    const int64_t c_out = c.w[1] * c.groups;
    Tensor x = rnd(DType::kF32, c.x), w = rnd(DType::kF32, c.w), b = rnd(DType::kF32, {c_out});
    auto fn = [c](const Tensor& xx, const Tensor& ww, const Tensor& bb) {
      return conv_transpose(xx, ww, c.bias ? bb : Tensor(), c.s, c.p, c.d, c.groups, c.op);
    };
    check(label(c), Tol{1e-4, 1e-4}, fn, x, w, b);
  }
  // Elementwise producers fold into the loads; a consumer runs after the kernel.
  check(
      "relu(conv_transpose(x * 2 + 1, tanh(w), b)) - 1", Tol{1e-4, 1e-4},
      [](const Tensor& xx, const Tensor& ww, const Tensor& bb) {
        return relu(conv_transpose(xx * 2.0 + 1.0, tanh(ww), bb * 0.5, {2, 2}, {1, 0, 0, 1})) - 1.0;
      },
      rnd(DType::kF32, {2, 3, 5, 6}), rnd(DType::kF32, {3, 4, 3, 3}), rnd(DType::kF32, {4}));
  check(
      "conv_transpose f16", Tol{5e-3, 5e-3},
      [](const Tensor& xx, const Tensor& ww) {
        return conv_transpose(xx, ww, Tensor(), {2, 2}, {1, 1, 1, 1}, {}, 1, {1, 1});
      },
      rnd(DType::kF16, {1, 2, 5, 5}), rnd(DType::kF16, {2, 3, 3, 3}));
}

TEST_F(DeviceConvTranspose, SymbolicSizesShareOnePipelineSet) {
  Tensor w = rnd(DType::kF32, {6, 2, 3, 2}).to(Device::vulkan());
  Tensor b = rnd(DType::kF32, {4}).to(Device::vulkan());
  auto fn = [w, b](const Tensor& x) {
    return conv_transpose(x, w, b, {2, 3}, {1, 0, 2, 1}, {1, 2}, 2, {1, 0});
  };
  auto compiled = compile(fn, {.name = "sym_conv_transpose", .dynamic = Dynamic::kTrue});
  Tensor w_cpu = w.to(Device::cpu()), b_cpu = b.to(Device::cpu());
  for (Shape s : {Shape{2, 6, 5, 4}, Shape{3, 6, 8, 7}, Shape{4, 6, 3, 2}}) {
    Tensor x = rnd(DType::kF32, s);
    test::poison_device_memory(1 << 20);
    Tensor got = compiled(x.to(Device::vulkan()));
    Tensor want = conv_transpose(x, w_cpu, b_cpu, {2, 3}, {1, 0, 2, 1}, {1, 2}, 2, {1, 0});
    test::expect_close(got, want, Tol{1e-4, 1e-4}, "symbolic " + shape_str(s));
  }
  EXPECT_EQ(compiled.stats().compiles, 1u);
  ASSERT_EQ(compiled.entries().size(), 1u);
  EXPECT_TRUE(compiled.entries()[0].on_device);
}

}  // namespace
}  // namespace kiln
