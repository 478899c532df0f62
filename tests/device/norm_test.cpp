// Softmax, log_softmax and layer_norm kernels (one workgroup per row) against the interpreter:
// every axis, odd / size-0 / size-1 extents, rows shorter and longer than the workgroup, f16,
// and fused prologues and epilogues.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "device/test_util.h"

namespace kiln {
namespace {

using test::Dist;
using test::Tol;

class DeviceNorm : public test::DeviceOpTest {};

std::string sh(const Shape& s) {
  return shape_str(s);
}

TEST_F(DeviceNorm, SoftmaxAndLogSoftmaxOverEveryAxis) {
  const std::vector<Shape> shapes = {{1}, {7}, {3, 5}, {4, 33}, {2, 3, 130}, {5, 1, 9}, {2, 0, 3}};
  for (const Shape& s : shapes) {
    for (int64_t axis = -static_cast<int64_t>(s.size()); axis < static_cast<int64_t>(s.size());
         ++axis) {
      Tensor x = rnd(DType::kF32, s, Dist{-6, 6});
      check(
          "softmax" + sh(s) + " axis " + std::to_string(axis), Tol{2e-6, 1e-7},
          [axis](const Tensor& t) { return softmax(t, axis); }, x);
      check(
          "log_softmax" + sh(s) + " axis " + std::to_string(axis), Tol{2e-6, 4e-6},
          [axis](const Tensor& t) { return log_softmax(t, axis); }, x);
    }
  }
}

TEST_F(DeviceNorm, SoftmaxF16AndLargeRows) {
  Tensor h = rnd(DType::kF16, {6, 70}, Dist{-4, 4});
  check(
      "softmax f16", Tol::for_dtype(DType::kF16), [](const Tensor& t) { return softmax(t, -1); },
      h);
  Tensor big = rnd(DType::kF32, {3, 5000}, Dist{-10, 10});
  check(
      "softmax long rows", Tol{2e-5, 1e-8}, [](const Tensor& t) { return softmax(t, 1); }, big);
}

// A LayerNorm spelled out as ops, as ONNX exporters before opset 17 write it (PyTorch's
// ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div/Mul/Add, and the rsqrt form), runs as one row-norm
// kernel (FusionRule::kLayerNorm) and matches the interpreter.
TEST_F(DeviceNorm, SpelledOutLayerNorm) {
  auto spelled = [](bool rsqrt_form, int k) {
    return [rsqrt_form, k](const Tensor& t, const Tensor& wt, const Tensor& bt) {
      std::vector<int64_t> axes;
      for (int64_t d = t.dim() - k; d < t.dim(); ++d) axes.push_back(d);
      Tensor c = t - mean(t, axes, true);
      Tensor sq = rsqrt_form ? c * c : pow(c, scalar(2.0));
      Tensor shifted = mean(sq, axes, true) + scalar(1e-5);
      Tensor normed = rsqrt_form ? rsqrt(shifted) * c : c / sqrt(shifted);
      return normed * wt + bt;
    };
  };
  struct Case {
    Shape x;
    int k;
  };
  for (bool rsqrt_form : {false, true}) {
    for (const Case& c : std::vector<Case>{{{4, 8}, 1},
                                           {{3, 5, 7}, 2},
                                           {{1, 1}, 1},
                                           {{3, 300}, 1},
                                           {{0, 6}, 1},
                                           {{2, 3, 64}, 1}}) {
      Shape norm(c.x.end() - c.k, c.x.end());
      Tensor x = rnd(DType::kF32, c.x, Dist{-3, 3});
      Tensor w = rnd(DType::kF32, norm, Dist{0.5, 1.5});
      Tensor b = rnd(DType::kF32, norm, Dist{-1, 1});
      check("spelled_layer_norm" + sh(c.x) + " k=" + std::to_string(c.k) +
                (rsqrt_form ? " rsqrt" : " sqrt"),
            Tol{2e-5, 2e-5}, spelled(rsqrt_form, c.k), x, w, b);
    }
  }
  auto compiled = compile(spelled(false, 1), {.name = "spelled_layer_norm"});
  Tensor x = rnd(DType::kF32, {6, 40}, Dist{-3, 3});
  Tensor w = rnd(DType::kF32, {40}, Dist{0.5, 1.5}), b = rnd(DType::kF32, {40}, Dist{-1, 1});
  compiled(x.to(Device::vulkan()), w.to(Device::vulkan()), b.to(Device::vulkan()));
  const std::vector<EntryInfo> entries = compiled.entries();
  ASSERT_EQ(entries.size(), 1u);
  ASSERT_EQ(entries[0].kernels.size(), 1u) << entries[0].graph;
  EXPECT_NE(entries[0].kernels[0].find("layer_norm"), std::string::npos);
}

TEST_F(DeviceNorm, LayerNormOverTrailingDims) {
  struct Case {
    Shape x;
    int k;
  };
  for (const Case& c : std::vector<Case>{{{4, 8}, 1},
                                         {{3, 5, 7}, 2},
                                         {{1, 1}, 1},
                                         {{2, 129}, 1},
                                         {{3, 300}, 1},
                                         {{2, 20, 30}, 2},
                                         {{0, 6}, 1},
                                         {{2, 3, 64}, 1}}) {
    Shape norm(c.x.end() - c.k, c.x.end());
    Tensor x = rnd(DType::kF32, c.x, Dist{-3, 3});
    Tensor w = rnd(DType::kF32, norm, Dist{0.5, 1.5});
    Tensor b = rnd(DType::kF32, norm, Dist{-1, 1});
    check(
        "layer_norm" + sh(c.x) + " k=" + std::to_string(c.k), Tol{2e-5, 2e-5},
        [k = c.k](const Tensor& t, const Tensor& wt, const Tensor& bt) {
          return layer_norm(t, wt, bt, k, 1e-5);
        },
        x, w, b);
  }
  Tensor xh = rnd(DType::kF16, {5, 48}, Dist{-3, 3});
  Tensor wh = rnd(DType::kF16, {48}, Dist{0.5, 1.5}), bh = rnd(DType::kF16, {48}, Dist{-1, 1});
  check(
      "layer_norm f16", Tol{4e-3, 4e-3},
      [](const Tensor& t, const Tensor& wt, const Tensor& bt) {
        return layer_norm(t, wt, bt, 1, 1e-5);
      },
      xh, wh, bh);
}

TEST_F(DeviceNorm, FusedPrologueAndEpilogueStayOneKernelEach) {
  // Attention-style scores: scale and mask fold into softmax's load.
  Tensor scores = rnd(DType::kF32, {2, 4, 16, 16}, Dist{-3, 3});
  Tensor mask = rnd(DType::kF32, {16, 16}, Dist{-1, 0});
  auto attn = [](const Tensor& s, const Tensor& m) { return softmax(s * 0.25 + m, -1); };
  check("softmax(scale + mask)", Tol{2e-6, 1e-7}, attn, scores, mask);
  // Post-norm residual: the add folds into layer_norm's load.
  Tensor x = rnd(DType::kF32, {8, 32}), r = rnd(DType::kF32, {8, 32});
  Tensor w = rnd(DType::kF32, {32}, Dist{0.5, 1.5}), b = rnd(DType::kF32, {32});
  auto post_norm = [](const Tensor& a, const Tensor& res, const Tensor& wt, const Tensor& bt) {
    return relu(layer_norm(a + res, wt, bt, 1, 1e-5)) * 2.0;
  };
  check("layer_norm(x + r) then relu", Tol{2e-5, 2e-5}, post_norm, x, r, w, b);
  auto f = compile(post_norm, {.name = "post_norm"});
  f(x.to(Device::vulkan()), r.to(Device::vulkan()), w.to(Device::vulkan()), b.to(Device::vulkan()));
  ASSERT_EQ(f.entries().size(), 1u);
  EXPECT_EQ(f.entries()[0].kernels.size(), 2u);  // layer_norm (with the add), relu*2
  auto g = compile(attn, {.name = "attn"});
  g(scores.to(Device::vulkan()), mask.to(Device::vulkan()));
  EXPECT_EQ(g.entries()[0].kernels.size(), 1u);
}

}  // namespace
}  // namespace kiln
