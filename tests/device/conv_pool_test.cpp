// The ONNX-front-end ops on Vulkan against the interpreter, on fresh random data into poisoned
// memory, eagerly and compiled: pow / abs / sign (fused elementwise, vec4 and scalar), conv
// (1-D/2-D/3-D, padding, strides, dilations, groups, bias, fused producers), max_pool and
// avg_pool (ceil_mode, windows overhanging the input, count_include_pad, dilations, integer and f16
// inputs), gather_nd (batch_dims, negative indices, fused into a consumer), and symbolic sizes (one
// pipeline set for several shapes).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "device/test_util.h"
#include "exec/calibration.h"
#include "vk/device.h"

namespace kiln {
namespace {

using test::Dist;
using test::Tol;
using V = std::vector<int64_t>;

class DeviceConvPool : public test::DeviceOpTest {
 protected:
  /// Random valid gather_nd indices: `rows` tuples of m = dims.size() entries, each entry in
  /// [-dim, dim) (negative ones count from the end).
  Tensor nd_indices(Shape shape, const V& dims, DType dt) {
    std::vector<double> v;
    for (int64_t i = 0; i < numel(shape); ++i) {
      const int64_t d = dims[static_cast<size_t>(i) % dims.size()];
      std::uniform_int_distribution<int64_t> u(-d, d - 1);
      v.push_back(static_cast<double>(u(rng_)));
    }
    return test::tensor_from_doubles(dt, shape, v);
  }
};

std::string window_label(const std::string& op, const Shape& x, const V& k, const V& s, const V& p,
                         const V& d) {
  return op + " x" + shape_str(x) + " k" + shape_str(k) + " s" + shape_str(s) + " p" +
         shape_str(p) + " d" + shape_str(d);
}

TEST_F(DeviceConvPool, PowAbsSign) {
  const Tol tol{2e-5, 1e-6};
  // Negative bases with integral exponents, fractional exponents (NaN for negative bases), 0.
  Tensor base = rnd(DType::kF32, {7, 12}, Dist::uniform(-3, 3).with_zeros(0.1));
  Tensor e_int = cast(rnd(DType::kI32, {7, 12}, Dist::uniform(-4, 5)), DType::kF32);
  Tensor e_frac = rnd(DType::kF32, {12}, Dist::uniform(-2, 2).with_zeros(0.1));
  check(
      "pow f32 ^ integral (vec4)", tol,
      [](const Tensor& a, const Tensor& b) { return pow(a, b) * 0.5; }, base, e_int);
  check(
      "pow f32 ^ fractional, broadcast", tol,
      [](const Tensor& a, const Tensor& b) { return pow(a, b) + 1.0; }, base, e_frac);
  check(
      "pow scalar exponent, odd shape", tol,
      [](const Tensor& a) { return pow(abs(a) + 0.5, scalar(2.5)); }, rnd(DType::kF32, {5, 3}));
  for (DType dt : {DType::kI32, DType::kI64}) {
    Tensor a = rnd(dt, {3, 5, 7}, Dist::uniform(-9, 9));
    Tensor b = rnd(dt, {5, 7}, Dist::uniform(-3, 40));
    check(
        std::string("pow ") + dtype_name(dt), Tol::exact(),
        [](const Tensor& x, const Tensor& y) { return pow(x, y); }, a, b);
    check(
        std::string("abs/sign ") + dtype_name(dt), Tol::exact(),
        [](const Tensor& x) { return abs(x) * sign(x) - x; }, a);
  }
  check(
      "pow f16", Tol::for_dtype(DType::kF16),
      [](const Tensor& a, const Tensor& b) { return pow(a, b); },
      rnd(DType::kF16, {9}, Dist::positive(0.5, 2)), rnd(DType::kF16, {9}, Dist::uniform(-3, 3)));
  check(
      "abs, sign f32", Tol::exact(), [](const Tensor& x) { return abs(x) + sign(x) * 10.0; },
      rnd(DType::kF32, {3, 11}, Dist{}.with_zeros(0.2)));
}

struct ConvCase {
  Shape x, w;
  V s, p, d;
  int64_t groups;
  bool bias;
};

TEST_F(DeviceConvPool, Conv) {
  const std::vector<ConvCase> cases = {
      {{2, 3, 11}, {4, 3, 3}, {2}, {1, 2}, {1}, 1, true},
      {{1, 4, 7}, {4, 1, 3}, {1}, {2, 0}, {2}, 4, false},
      {{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, true},
      {{2, 3, 9, 7}, {6, 3, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true},
      {{1, 4, 10, 13}, {6, 2, 3, 2}, {2, 3}, {0, 1, 2, 0}, {2, 1}, 2, true},
      {{3, 2, 5, 5}, {5, 2, 5, 5}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, false},
      {{1, 6, 8, 8}, {6, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 6, true},
      {{1, 2, 5, 6, 7}, {3, 2, 2, 3, 3}, {1, 2, 1}, {1, 0, 1, 0, 1, 1}, {1, 1, 2}, 1, true},
      {{2, 2, 3, 3, 3}, {4, 1, 1, 1, 1}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}, {1, 1, 1}, 2, false},
      // Output-channel blocks of 8 with a partial one, last-dim blocks of 4 with a partial one.
      {{2, 20, 6, 11}, {12, 20, 2, 2}, {1, 2}, {1, 0, 0, 1}, {1, 1}, 1, true},
      {{1, 6, 9}, {10, 3, 4}, {3}, {2, 1}, {2}, 2, true},
      // Depthwise windows whose last-dim inputs a block loads once (overlapping windows):
      // 5x5 at stride 1 and 2, dilation 2, a block narrower than 4, a 1-D row.
      {{1, 8, 9, 10}, {8, 1, 5, 5}, {1, 1}, {2, 2, 2, 2}, {1, 1}, 8, true},
      {{2, 6, 11, 9}, {6, 1, 5, 5}, {2, 2}, {2, 1, 2, 3}, {1, 1}, 6, true},
      {{1, 4, 7, 13}, {4, 1, 3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2}, 4, false},
      {{1, 4, 6, 3}, {4, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 4, true},
      {{2, 3, 17}, {3, 1, 7}, {1}, {3, 3}, {1}, 3, true},
  };
  for (const ConvCase& c : cases) {
    Tensor x = rnd(DType::kF32, c.x), w = rnd(DType::kF32, c.w);
    Tensor b = rnd(DType::kF32, {c.w[0]});
    const std::string label =
        window_label("conv", c.x, {c.w.begin() + 2, c.w.end()}, c.s, c.p, c.d) + " g" +
        std::to_string(c.groups) + (c.bias ? " bias" : "");
    auto fn = [c](const Tensor& xx, const Tensor& ww, const Tensor& bb) {
      return conv(xx, ww, c.bias ? bb : Tensor(), c.s, c.p, c.d, c.groups);
    };
    check(label, Tol{1e-4, 1e-4}, fn, x, w, b);
  }
  // Elementwise producers fold into the loads; bias + relu after the kernel.
  Tensor x = rnd(DType::kF32, {2, 3, 6, 5}), w = rnd(DType::kF32, {4, 3, 3, 3});
  Tensor b = rnd(DType::kF32, {4});
  check(
      "relu(conv(x * 2 + 1, tanh(w)) + b)", Tol{1e-4, 1e-4},
      [](const Tensor& xx, const Tensor& ww, const Tensor& bb) {
        return relu(conv(xx * 2.0 + 1.0, tanh(ww), Tensor(), {}, {1, 0, 1, 2}) +
                    reshape(bb, {4, 1, 1}));
      },
      x, w, b);
  check(
      "conv f16", Tol{5e-3, 5e-3},
      [](const Tensor& xx, const Tensor& ww) {
        return conv(xx, ww, Tensor(), {2, 2}, {1, 1, 1, 1});
      },
      rnd(DType::kF16, {1, 2, 7, 7}), rnd(DType::kF16, {3, 2, 3, 3}));
}

// Dense f32 convs with at least 16 output channels run as an implicit GEMM (conv_gemm.comp:
// register blocks of 32 channels, or fewer rounded up to 8, shared by subgroup shuffles, 1, 2
// or 4 positions per lane): partial channel blocks, partial position blocks, padding, strides,
// dilations, 1-D to 3-D, 1x1 convs, a fused producer on the gathered input and on the weight,
// and a bias.
TEST_F(DeviceConvPool, ConvAsImplicitGemm) {
  const std::vector<ConvCase> cases = {
      {{1, 3, 13, 11}, {16, 3, 7, 7}, {2, 2}, {3, 3, 3, 3}, {1, 1}, 1, true},
      {{2, 20, 9, 7}, {40, 20, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true},
      {{3, 8, 17, 19}, {33, 8, 3, 3}, {2, 2}, {1, 0, 1, 2}, {1, 2}, 1, false},
      {{2, 64, 5, 5}, {128, 64, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, true},
      {{1, 1, 1, 1}, {16, 1, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, true},
      {{2, 5, 40}, {16, 5, 5}, {1}, {2, 2}, {2}, 1, true},
      {{1, 4, 5, 6, 7}, {17, 4, 3, 3, 3}, {1, 2, 1}, {1, 1, 1, 1, 0, 1}, {1, 1, 1}, 1, true},
  };
  for (const ConvCase& c : cases) {
    Tensor x = rnd(DType::kF32, c.x), w = rnd(DType::kF32, c.w);
    Tensor b = rnd(DType::kF32, {c.w[0]});
    const std::string label =
        window_label("implicit-gemm conv", c.x, {c.w.begin() + 2, c.w.end()}, c.s, c.p, c.d) +
        (c.bias ? " bias" : "");
    auto fn = [c](const Tensor& xx, const Tensor& ww, const Tensor& bb) {
      return conv(xx, ww, c.bias ? bb : Tensor(), c.s, c.p, c.d, c.groups);
    };
    check(label, Tol{1e-4, 1e-4}, fn, x, w, b);
  }
  check(
      "relu(conv(relu(x * 2 - 1), tanh(w)) + b), 24 channels", Tol{1e-4, 1e-4},
      [](const Tensor& xx, const Tensor& ww, const Tensor& bb) {
        return relu(conv(relu(xx * 2.0 - 1.0), tanh(ww), bb, {1, 1}, {1, 1, 1, 1}));
      },
      rnd(DType::kF32, {2, 6, 10, 9}), rnd(DType::kF32, {24, 6, 3, 3}), rnd(DType::kF32, {24}));
}

// Where the device has the row-block product, 2-D f32 convs whose window holds a multiple of 4
// taps run as im2col + product (codegen/conv_lowering.cpp: im2col rows · weightᵀ, then a
// permute the consumer folds), and a 1x1 conv of one image as weight · x with no im2col;
// strides, dilations, asymmetric pads, 1x1 outputs, partial row and column blocks, no bias, and
// producers that fold into the im2col loads. Each compiled case's kernels show which form ran.
TEST_F(DeviceConvPool, ConvAsIm2colProduct) {
  const bool rowblock = has_rowblock_kernel(Device::vulkan().vulkan_device()->info());
  struct Case {
    ConvCase c;
    const char* form;  // "im2col", "direct" (1x1, no im2col)
  };
  const std::vector<Case> cases = {
      {{{1, 8, 12, 12}, {32, 8, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true}, "im2col"},
      {{{3, 8, 9, 7}, {20, 8, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true}, "im2col"},
      {{{2, 4, 17, 19}, {33, 4, 3, 3}, {2, 2}, {1, 0, 1, 2}, {1, 2}, 1, false}, "im2col"},
      {{{1, 64, 3, 3}, {130, 64, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true}, "im2col"},
      {{{2, 16, 5, 5}, {24, 16, 5, 5}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, true}, "im2col"},
      {{{1, 12, 16, 16}, {32, 12, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, true}, "direct"},
      {{{2, 12, 7, 5}, {17, 12, 1, 1}, {2, 1}, {0, 1, 0, 1}, {1, 1}, 1, true}, "im2col"},
      // 3-channel stems: 147 and 27 taps, rows padded with zero taps to 148 and 28.
      {{{1, 3, 29, 27}, {64, 3, 7, 7}, {2, 2}, {3, 3, 3, 3}, {1, 1}, 1, true}, "im2col"},
      {{{2, 3, 17, 16}, {32, 3, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1, false}, "im2col"},
      {{{1, 17, 6, 7}, {36, 17, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, true}, "im2col"},
      // 1x1 convs on 1x1 maps: the input read as [N, C] in place.
      {{{2, 16, 1, 1}, {24, 16, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, true}, "direct"},
      {{{1, 96, 1, 1}, {20, 96, 1, 1}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1, false}, "direct"},
  };
  for (const Case& cs : cases) {
    const ConvCase& c = cs.c;
    Tensor x = rnd(DType::kF32, c.x), w = rnd(DType::kF32, c.w), b = rnd(DType::kF32, {c.w[0]});
    const std::string label =
        window_label("im2col conv", c.x, {c.w.begin() + 2, c.w.end()}, c.s, c.p, c.d) +
        (c.bias ? " bias" : "");
    auto fn = [c](const Tensor& xx, const Tensor& ww, const Tensor& bb) {
      return conv(xx, ww, c.bias ? bb : Tensor(), c.s, c.p, c.d, c.groups);
    };
    check(label, Tol{1e-4, 1e-4}, fn, x, w, b);
    // The form, not the device's measured rates, is what this checks: the row-block product
    // (which kMatmulLayout needs) whatever the calibration would pick.
    const ForcedMatmulKernel rowblock_product(MatmulRates::Force::kRowBlock);
    auto compiled = compile(fn, {.name = "im2col_form"});
    (void)compiled(x.to(Device::vulkan()), w.to(Device::vulkan()), b.to(Device::vulkan()));
    std::string kernels;
    const std::vector<EntryInfo> entries = compiled.entries();
    ASSERT_EQ(entries.size(), 1u) << label;
    for (const std::string& k : entries[0].kernels) kernels += k + " ";
    const bool im2col = kernels.find("im2col") != std::string::npos,
               conv_kernel = kernels.find("conv") != std::string::npos;
    if (!rowblock) {
      EXPECT_TRUE(conv_kernel && !im2col) << label << ": " << kernels;
    } else if (std::string(cs.form) == "im2col") {
      // The product stores the NCHW output itself (kMatmulLayout) where the output's planes
      // are a static whole number of vec4s: no permute kernel then.
      EXPECT_TRUE(im2col && !conv_kernel) << label << ": " << kernels;
      const Shape out = conv(x, w, Tensor(), c.s, c.p, c.d, c.groups).shape();
      EXPECT_EQ(kernels.find("permute") == std::string::npos, out[2] * out[3] % 4 == 0)
          << label << ": " << kernels;
    } else {
      EXPECT_TRUE(!im2col && !conv_kernel && kernels.find("matmul") != std::string::npos)
          << label << ": " << kernels;
    }
  }
  // The taps past K (27 taps padded to 28) read the input at a clamped position and must be 0:
  // an inf in the last channel at a window's first tap gives +-inf in the conv, and NaN through
  // a pad tap that kept the value (times the weight's zero column).
  {
    const std::vector<float> xf = rnd(DType::kF32, {1, 3, 9, 9}).to_vector<float>();
    std::vector<double> xv(xf.begin(), xf.end());
    xv[(2 * 9 + 4) * 9 + 4] = INFINITY;
    check(
        "conv 3 -> 32, 3x3, an inf in the last channel", Tol{1e-4, 1e-4},
        [](const Tensor& xx, const Tensor& ww) {
          return conv(xx, ww, Tensor(), {1, 1}, {1, 1, 1, 1});
        },
        test::tensor_from_doubles(DType::kF32, {1, 3, 9, 9}, xv), rnd(DType::kF32, {32, 3, 3, 3}));
  }
  // Producers of x fold into the im2col loads; the consumer reads the permuted product.
  check(
      "relu(conv(relu(x * 2 - 1), w) + b) * 3, 2 images", Tol{1e-4, 1e-4},
      [](const Tensor& xx, const Tensor& ww, const Tensor& bb) {
        return relu(conv(relu(xx * 2.0 - 1.0), ww, bb, {1, 1}, {1, 1, 1, 1})) * 3.0;
      },
      rnd(DType::kF32, {2, 8, 10, 9}), rnd(DType::kF32, {24, 8, 3, 3}), rnd(DType::kF32, {24}));
  // Two convs in a row with a residual add: the second im2col reads the first product's view.
  check(
      "conv(relu(conv(x))) + x", Tol{1e-4, 1e-4},
      [](const Tensor& xx, const Tensor& w1, const Tensor& w2) {
        Tensor h = relu(conv(xx, w1, Tensor(), {1, 1}, {1, 1, 1, 1}));
        return conv(h, w2, Tensor(), {1, 1}, {1, 1, 1, 1}) + xx;
      },
      rnd(DType::kF32, {2, 16, 6, 6}), rnd(DType::kF32, {16, 16, 3, 3}),
      rnd(DType::kF32, {16, 16, 3, 3}));
}

// A squeeze-excite block as torchvision's mobilenet_v3 exports it: global mean, 1x1 conv, relu,
// 1x1 conv, hard sigmoid, times the feature map. Its convs run on 1x1 maps, read in place, with
// the relu and the hard sigmoid in the products' epilogues (no im2col, no kernel for either);
// at batch 1, 2 and, compiled over a symbolic batch, 3 and 5.
TEST_F(DeviceConvPool, SqueezeExciteOnOneByOneMaps) {
  const bool rowblock = has_rowblock_kernel(Device::vulkan().vulkan_device()->info());
  auto block = [](const Tensor& f, const Tensor& w1, const Tensor& b1, const Tensor& w2,
                  const Tensor& b2) {
    Tensor s = mean(f, {2, 3}, true);
    s = relu(conv(s, w1, b1, {1, 1}, {0, 0, 0, 0}));
    s = conv(s, w2, b2, {1, 1}, {0, 0, 0, 0});
    s = minimum(maximum(s * (1.0 / 6) + 0.5, scalar(0.0)), scalar(1.0));
    return s * f;
  };
  const Tensor w1 = rnd(DType::kF32, {24, 32, 1, 1}), b1 = rnd(DType::kF32, {24}),
               w2 = rnd(DType::kF32, {32, 24, 1, 1}), b2 = rnd(DType::kF32, {32});
  for (Dim n : {1, 2})
    check("squeeze-excite, batch " + std::to_string(n), Tol{1e-4, 1e-4}, block,
          rnd(DType::kF32, {n, 32, 7, 5}), w1, b1, w2, b2);
  // The weights as constants of the compiled function (a model's), the batch symbolic.
  const Tensor w1d = w1.to(Device::vulkan()), b1d = b1.to(Device::vulkan()),
               w2d = w2.to(Device::vulkan()), b2d = b2.to(Device::vulkan());
  auto compiled = compile([&](const Tensor& f) { return block(f, w1d, b1d, w2d, b2d); },
                          {.name = "squeeze_excite", .dynamic = Dynamic::kTrue});
  for (Dim n : {2, 3, 5}) {
    Tensor f = rnd(DType::kF32, {n, 32, 6, 6});
    test::poison_device_memory(1 << 20);
    Tensor got = compiled(f.to(Device::vulkan()));
    test::expect_close(got, block(f, w1, b1, w2, b2), Tol{1e-4, 1e-4},
                       "symbolic squeeze-excite, batch " + std::to_string(n));
  }
  if (!rowblock) return;
  for (const EntryInfo& entry : compiled.entries()) {
    std::string kernels;
    for (const std::string& k : entry.kernels) kernels += k + " ";
    EXPECT_EQ(kernels.find("im2col"), std::string::npos) << kernels;
    EXPECT_EQ(entry.kernels.size(), 4u) << kernels;  // mean, two products, the scaling
    EXPECT_NE(kernels.find("matmul_relu"), std::string::npos) << kernels;
  }
}

struct PoolCase {
  Shape x;
  V k, s, p, d;
  bool ceil;
};

TEST_F(DeviceConvPool, MaxAndAvgPool) {
  const std::vector<PoolCase> cases = {
      {{2, 3, 10}, {3}, {2}, {1, 1}, {1}, false},
      {{2, 3, 10}, {3}, {2}, {1, 1}, {1}, true},
      {{1, 2, 7, 9}, {3, 2}, {2, 2}, {1, 0, 1, 1}, {1, 2}, true},
      {{2, 1, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, false},
      {{1, 3, 6, 6}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, false},
      {{1, 2, 5, 5}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, false},
      {{1, 2, 5, 4, 6}, {2, 3, 2}, {2, 1, 2}, {0, 1, 1, 1, 1, 0}, {1, 1, 1}, true},
      {{1, 1, 4, 4, 4}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}, {2, 1, 1}, false},
      // ceil_mode windows overhanging the input by up to stride - 1 (one output along H).
      {{2, 3, 2, 5}, {3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}, true},
      {{1, 2, 3, 4}, {5, 2}, {3, 2}, {1, 0, 0, 0}, {1, 1}, true},
  };
  for (const PoolCase& c : cases) {
    Tensor x = rnd(DType::kF32, c.x);
    const std::string label = window_label("", c.x, c.k, c.s, c.p, c.d) + (c.ceil ? " ceil" : "");
    check(
        "max_pool" + label, Tol::exact(),
        [c](const Tensor& t) { return max_pool(t, c.k, c.s, c.p, c.d, c.ceil); }, x);
    for (int64_t order : {0, 1})
      check(
          "max_pool_indices" + label + " storage_order " + std::to_string(order), Tol::exact(),
          [c, order](const Tensor& t) {
            return max_pool_indices(t, c.k, c.s, c.p, c.d, c.ceil, order);
          },
          x);
    for (bool include : {false, true})
      check(
          "avg_pool" + label + (include ? " count_include_pad" : ""), Tol{1e-5, 1e-6},
          [c, include](const Tensor& t) {
            return avg_pool(t, c.k, c.s, c.p, c.d, c.ceil, include);
          },
          x);
  }
  for (DType dt : {DType::kI32, DType::kI64, DType::kF16}) {
    check(
        std::string("max_pool ") + dtype_name(dt), Tol::exact(),
        [](const Tensor& t) {
          return max_pool(t, {2, 3}, {1, 2}, {1, 1, 0, 1}, {}, true);
        },
        rnd(dt, {2, 2, 5, 7}, Dist::uniform(-50, 50)));
    // Few distinct values: ties pick the first maximum in window order.
    check(
        std::string("max_pool_indices with ties ") + dtype_name(dt), Tol::exact(),
        [](const Tensor& t) {
          return max_pool_indices(t, {3, 2}, {1, 1}, {1, 0, 1, 1});
        },
        rnd(dt, {2, 3, 5, 6}, Dist::uniform(-2, 2)));
  }
  check(
      "max_pool(relu(conv)) then avg_pool * 3", Tol{1e-4, 1e-4},
      [](const Tensor& x, const Tensor& w) {
        Tensor c = relu(conv(x, w, Tensor(), {}, {1, 1, 1, 1}));
        return avg_pool(max_pool(c, {2, 2}, {2, 2}), {2, 2}, {1, 1}, {1, 1, 0, 0}) * 3.0;
      },
      rnd(DType::kF32, {1, 3, 9, 8}), rnd(DType::kF32, {4, 3, 3, 3}));
}

TEST_F(DeviceConvPool, GatherND) {
  Tensor data = rnd(DType::kF32, {5, 4, 3});
  for (DType dt : {DType::kI32, DType::kI64}) {
    const std::string t = dtype_name(dt);
    check(
        "gather_nd m=2 " + t, Tol::exact(),
        [](const Tensor& d, const Tensor& i) { return gather_nd(d, i); }, data,
        nd_indices({6, 2}, {5, 4}, dt));
    check(
        "gather_nd m=3 into exp " + t, Tol::for_dtype(DType::kF32),
        [](const Tensor& d, const Tensor& i) { return gather_nd(exp(d), i) + 1.0; }, data,
        nd_indices({2, 3, 3}, {5, 4, 3}, dt));
    check(
        "gather_nd m=1 " + t, Tol::exact(),
        [](const Tensor& d, const Tensor& i) { return gather_nd(d, i) * 2.0; }, data,
        nd_indices({1, 1}, {5}, dt));
  }
  check(
      "gather_nd batch_dims=1", Tol::exact(),
      [](const Tensor& d, const Tensor& i) { return gather_nd(d, i, 1); },
      rnd(DType::kF32, {3, 4, 5}), nd_indices({3, 2, 1}, {4}, DType::kI64));
  check(
      "gather_nd batch_dims=2, i64 data", Tol::exact(),
      [](const Tensor& d, const Tensor& i) { return gather_nd(d, i, 2); },
      rnd(DType::kI64, {2, 3, 4, 5}, Dist::uniform(-100, 100)),
      nd_indices({2, 3, 1, 2}, {4, 5}, DType::kI64));
}

TEST_F(DeviceConvPool, SymbolicSizesShareOnePipelineSet) {
  Tensor w = rnd(DType::kF32, {4, 3, 3, 2}).to(Device::vulkan());
  auto fn = [w](const Tensor& x) {
    Tensor c = conv(x, w, Tensor(), {2, 1}, {1, 0, 2, 1}, {1, 2});
    return avg_pool(max_pool(c, {2, 2}, {1, 2}, {}, {}, true), {2, 1}, {2, 1}, {0, 0, 1, 0}, {},
                    true, true);
  };
  auto compiled = compile(fn, {.name = "sym_window", .dynamic = Dynamic::kTrue});
  Tensor w_cpu = w.to(Device::cpu());
  for (Shape s : {Shape{2, 3, 9, 8}, Shape{4, 3, 12, 7}, Shape{5, 3, 10, 11}}) {
    Tensor x = rnd(DType::kF32, s);
    test::poison_device_memory(1 << 20);
    Tensor got = compiled(x.to(Device::vulkan()));
    Tensor c = conv(x, w_cpu, Tensor(), {2, 1}, {1, 0, 2, 1}, {1, 2});
    Tensor want = avg_pool(max_pool(c, {2, 2}, {1, 2}, {}, {}, true), {2, 1}, {2, 1}, {0, 0, 1, 0},
                           {}, true, true);
    test::expect_close(got, want, Tol{1e-4, 1e-4}, "symbolic " + shape_str(s));
  }
  EXPECT_EQ(compiled.stats().compiles, 1u);
  ASSERT_EQ(compiled.entries().size(), 1u);
  EXPECT_TRUE(compiled.entries()[0].on_device);
}

// A ceil-mode pool traced where its window fits serves, in the same compile, sizes where the
// window overhangs the input (squeezenet's last pool over a 2-wide map).
TEST_F(DeviceConvPool, CeilModePoolOverhangingTheInputUnderSymbolicSizes) {
  auto fn = [](const Tensor& x) {
    return max_pool(x, {3, 3}, {2, 2}, {}, {}, true) + avg_pool(x, {3, 3}, {2, 2}, {}, {}, true);
  };
  auto compiled = compile(fn, {.name = "sym_ceil_overhang", .dynamic = Dynamic::kTrue});
  for (Shape s : {Shape{2, 3, 9, 8}, Shape{3, 3, 2, 5}, Shape{2, 3, 7, 2}, Shape{2, 3, 2, 2}}) {
    Tensor x = rnd(DType::kF32, s);
    test::poison_device_memory(1 << 20);
    Tensor got = compiled(x.to(Device::vulkan()));
    test::expect_close(got, fn(x), Tol{1e-5, 1e-6}, "symbolic " + shape_str(s));
  }
  EXPECT_EQ(compiled.stats().compiles, 1u);
  ASSERT_EQ(compiled.entries().size(), 1u);
  EXPECT_TRUE(compiled.entries()[0].on_device);
}

// The implicit-GEMM conv under symbolic batch and spatial sizes: positions and blocks are push
// constants, so one compile serves every shape, down to a few positions.
TEST_F(DeviceConvPool, ImplicitGemmConvWithSymbolicSizes) {
  Tensor w = rnd(DType::kF32, {20, 3, 3, 3}).to(Device::vulkan());
  Tensor b = rnd(DType::kF32, {20}).to(Device::vulkan());
  auto fn = [w, b](const Tensor& x) { return relu(conv(x, w, b, {2, 1}, {1, 1, 1, 1})); };
  auto compiled = compile(fn, {.name = "sym_conv_gemm", .dynamic = Dynamic::kTrue});
  Tensor w_cpu = w.to(Device::cpu()), b_cpu = b.to(Device::cpu());
  for (Shape s : {Shape{2, 3, 9, 8}, Shape{3, 3, 17, 13}, Shape{2, 3, 2, 2}}) {
    Tensor x = rnd(DType::kF32, s);
    test::poison_device_memory(1 << 20);
    Tensor got = compiled(x.to(Device::vulkan()));
    Tensor want = relu(conv(x, w_cpu, b_cpu, {2, 1}, {1, 1, 1, 1}));
    test::expect_close(got, want, Tol{1e-4, 1e-4}, "symbolic " + shape_str(s));
  }
  EXPECT_EQ(compiled.stats().compiles, 1u);
}

// Symbolic batch and image sizes through im2col + product (A·Bᵀ: a symbolic number of
// positions is the product's M), strided and padded.
TEST_F(DeviceConvPool, Im2colConvWithSymbolicSizes) {
  const bool rowblock = has_rowblock_kernel(Device::vulkan().vulkan_device()->info());
  Tensor w = rnd(DType::kF32, {20, 8, 3, 3}).to(Device::vulkan());
  Tensor b = rnd(DType::kF32, {20}).to(Device::vulkan());
  auto fn = [w, b](const Tensor& x) { return relu(conv(x, w, b, {2, 1}, {1, 1, 1, 1})); };
  auto compiled = compile(fn, {.name = "sym_im2col", .dynamic = Dynamic::kTrue});
  Tensor w_cpu = w.to(Device::cpu()), b_cpu = b.to(Device::cpu());
  for (Shape s : {Shape{2, 8, 9, 8}, Shape{3, 8, 17, 13}, Shape{2, 8, 2, 2}}) {
    Tensor x = rnd(DType::kF32, s);
    test::poison_device_memory(1 << 20);
    Tensor got = compiled(x.to(Device::vulkan()));
    Tensor want = relu(conv(x, w_cpu, b_cpu, {2, 1}, {1, 1, 1, 1}));
    test::expect_close(got, want, Tol{1e-4, 1e-4}, "symbolic im2col " + shape_str(s));
  }
  // Two compiles for these sizes, with the lowering or without it (KILN_DISABLE_IM2COL=1
  // gives the same count); every entry runs the lowered form.
  EXPECT_LE(compiled.stats().compiles, 2u);
  for (const EntryInfo& entry : compiled.entries()) {
    std::string kernels;
    for (const std::string& k : entry.kernels) kernels += k + " ";
    EXPECT_EQ(kernels.find("im2col") != std::string::npos, rowblock) << kernels;
  }
}

// A residual block: 3x3 conv, ReLU, 1x1 conv, the sum of both convs' outputs, ReLU, then a
// stride-2 1x1 conv. With the row-block product the ReLUs and the sum run in the products'
// epilogues on their [N·H·W, C] matrices and the stride-1 1x1 conv reads the first product's
// matrix as its im2col matrix: two im2col kernels (the 3x3 and the stride-2 conv), no kernel of
// its own for an elementwise op. Values against the interpreter at several sizes, odd ones too.
TEST_F(DeviceConvPool, ResidualBlockRunsItsElementwiseOpsOnTheProducts) {
  const bool rowblock = has_rowblock_kernel(Device::vulkan().vulkan_device()->info());
  const Tensor w3 = rnd(DType::kF32, {16, 8, 3, 3}), b3 = rnd(DType::kF32, {16}),
               w1 = rnd(DType::kF32, {16, 16, 1, 1}), b1 = rnd(DType::kF32, {16}),
               w2 = rnd(DType::kF32, {24, 16, 1, 1});
  auto block = [](const Tensor& x, const Tensor& k3, const Tensor& c3, const Tensor& k1,
                  const Tensor& c1, const Tensor& k2) {
    const Tensor r = relu(conv(x, k3, c3, {1, 1}, {1, 1, 1, 1}));
    const Tensor y = relu(conv(r, k1, c1, {1, 1}, {0, 0, 0, 0}) + r);
    return conv(y, k2, Tensor(), {2, 2}, {0, 0, 0, 0});
  };
  const Tensor w3d = w3.to(Device::vulkan()), b3d = b3.to(Device::vulkan()),
               w1d = w1.to(Device::vulkan()), b1d = b1.to(Device::vulkan()),
               w2d = w2.to(Device::vulkan());
  for (const Dynamic dynamic : {Dynamic::kFalse, Dynamic::kTrue}) {
    auto compiled = compile([&](const Tensor& x) { return block(x, w3d, b3d, w1d, b1d, w2d); },
                            {.name = "residual_block", .dynamic = dynamic});
    for (Shape s : {Shape{2, 8, 9, 7}, Shape{1, 8, 12, 12}, Shape{3, 8, 5, 2}}) {
      Tensor x = rnd(DType::kF32, s);
      test::poison_device_memory(1 << 20);
      Tensor got = compiled(x.to(Device::vulkan()));
      test::expect_close(
          got, block(x, w3, b3, w1, b1, w2), Tol{1e-4, 1e-4},
          "residual block " + shape_str(s) + (dynamic == Dynamic::kTrue ? ", symbolic" : ""));
    }
    if (!rowblock) continue;
    // A small product may go to the tiled kernel (calibrated rates), with the ops before it
    // as its prologue; no elementwise op runs as a kernel of its own either way, and the
    // stride-1 1x1 conv never needs an im2col.
    int without_1x1_im2col = 0;
    for (const EntryInfo& entry : compiled.entries()) {
      std::string kernels;
      int im2cols = 0;
      for (const std::string& k : entry.kernels) kernels += k + " ";
      for (const std::string& k : entry.kernels) {
        const std::string kind = k.substr(k.find('_') + 1);
        im2cols += kind == "im2col";
        EXPECT_TRUE(kind != "relu" && kind != "add") << kernels;
      }
      EXPECT_LE(im2cols, 2) << kernels;
      without_1x1_im2col += im2cols == 2;
    }
    EXPECT_GE(without_1x1_im2col, 1);
  }
}

// A SqueezeNet fire module between two max pools: conv + ReLU, a 3x3/stride-2 max pool
// (ceil_mode, so the last window overhangs), a 1x1 squeeze conv, its 1x1 and 3x3 expand convs
// with ReLUs, their concat along the channels, another max pool (with padding) and a 1x1 conv.
// With the row-block product the pools run over the products read as NHWC (vec4 loads of 4
// channels), the concat joins the products' columns (vec4), and the 1x1 convs after a pool or
// the first conv need no im2col: the 3x3 convs' are the only ones. Values against the
// interpreter at odd sizes, static and symbolic, a NaN input included.
TEST_F(DeviceConvPool, FireModuleRunsItsPoolsAndConcatOnTheProducts) {
  const bool rowblock = has_rowblock_kernel(Device::vulkan().vulkan_device()->info());
  // Weights scaled by 1/sqrt(fan-in), as a trained network's are, so values stay near 1.
  auto weight = [&](const Shape& s) {
    return rnd(DType::kF32, s) * (1.0 / std::sqrt(static_cast<double>(s[1] * s[2] * s[3])));
  };
  const Tensor w0 = weight({32, 3, 3, 3}), b0 = rnd(DType::kF32, {32}), ws = weight({16, 32, 1, 1}),
               bs = rnd(DType::kF32, {16}), we1 = weight({24, 16, 1, 1}),
               be1 = rnd(DType::kF32, {24}), we3 = weight({32, 16, 3, 3}),
               be3 = rnd(DType::kF32, {32}),
               wl = weight({20, 56, 1, 1});  // 24 + 32 channels concatenated
  auto fire = [](const Tensor& x, const std::vector<Tensor>& p) {
    Tensor y = relu(conv(x, p[0], p[1], {1, 1}, {1, 1, 1, 1}));
    y = max_pool(y, {3, 3}, {2, 2}, {0, 0, 0, 0}, {}, true);
    const Tensor s = relu(conv(y, p[2], p[3], {1, 1}, {0, 0, 0, 0}));
    y = concat({relu(conv(s, p[4], p[5], {1, 1}, {0, 0, 0, 0})),
                relu(conv(s, p[6], p[7], {1, 1}, {1, 1, 1, 1}))},
               1);
    y = max_pool(y, {3, 3}, {2, 2}, {1, 1, 1, 1});
    return conv(y, p[8], Tensor(), {1, 1}, {0, 0, 0, 0});
  };
  const std::vector<Tensor> host = {w0, b0, ws, bs, we1, be1, we3, be3, wl};
  std::vector<Tensor> dev;
  for (const Tensor& t : host) dev.push_back(t.to(Device::vulkan()));
  for (const Dynamic dynamic : {Dynamic::kFalse, Dynamic::kTrue}) {
    auto compiled = compile([&](const Tensor& x) { return fire(x, dev); },
                            {.name = "fire_module", .dynamic = dynamic});
    for (Shape s : {Shape{2, 3, 17, 15}, Shape{1, 3, 12, 12}, Shape{3, 3, 9, 6}}) {
      std::vector<double> v(static_cast<size_t>(numel(s)));
      std::uniform_real_distribution<double> d(-1.0, 1.0);
      for (double& e : v) e = d(rng_);
      if (s[0] == 1) v[40] = std::nan("");  // one image's NaN reaches the output
      const Tensor x = test::tensor_from_doubles(DType::kF32, s, v);
      test::poison_device_memory(1 << 20);
      Tensor got = compiled(x.to(Device::vulkan()));
      test::expect_close(
          got, fire(x, host), Tol{1e-4, 1e-4},
          "fire module " + shape_str(s) + (dynamic == Dynamic::kTrue ? ", symbolic" : ""));
    }
    if (!rowblock) continue;
    // A small product may go to the tiled kernel (calibrated rates), with the ops before it as
    // its prologue; no entry has an im2col for a 1x1 conv either way.
    for (const EntryInfo& entry : compiled.entries()) {
      std::string kernels;
      int im2cols = 0;
      for (const std::string& k : entry.kernels) {
        kernels += k + " ";
        im2cols += k.substr(k.find('_') + 1) == "im2col";
      }
      EXPECT_LE(im2cols, 2) << kernels;
    }
  }
}

// An inverted-residual block (MobileNet's): a 1x1 expand conv with a HardSwish, a depthwise
// conv (3x3 and 5x5, strides 1 and 2, dilation 2, with and without bias) with a ReLU or a
// HardSwish, and a 1x1 project conv. With the row-block product the depthwise conv runs as
// depthwise_nhwc on the expand product read as NHWC (the HardSwish stored by the product kernel,
// which applies it whole although it reads the product twice), and the project conv reads its
// output matrix as its im2col. Values against the interpreter at odd sizes (a 1x1 output map
// included), static and symbolic.
TEST_F(DeviceConvPool, InvertedResidualRunsItsDepthwiseConvOnTheProduct) {
  const bool rowblock = has_rowblock_kernel(Device::vulkan().vulkan_device()->info());
  auto weight = [&](const Shape& s) {
    return rnd(DType::kF32, s) * (1.0 / std::sqrt(static_cast<double>(s[1] * s[2] * s[3])));
  };
  auto hardswish = [](const Tensor& x) {
    const Tensor gate = minimum(maximum(x * (1.0 / 6.0) + 0.5, scalar(0.0)), scalar(1.0));
    return x * gate;
  };
  struct Dw {
    int64_t c, k, stride, pad, dil;
    bool bias, hswish = false;  // hswish: a HardSwish after the depthwise conv, not a ReLU
  };
  for (const Dw& d : {Dw{16, 3, 1, 1, 1, true}, Dw{24, 5, 2, 2, 1, false},
                      Dw{20, 3, 1, 2, 2, true, true}, Dw{16, 3, 2, 2, 2, true, true}}) {
    const std::vector<Tensor> host = {weight({d.c, 8, 1, 1}), rnd(DType::kF32, {d.c}),
                                      weight({d.c, 1, d.k, d.k}), rnd(DType::kF32, {d.c}),
                                      weight({16, d.c, 1, 1})};
    auto block = [&](const Tensor& x, const std::vector<Tensor>& p) {
      const Tensor e = hardswish(conv(x, p[0], p[1], {1, 1}, {0, 0, 0, 0}));
      const Tensor dw = conv(e, p[2], d.bias ? p[3] : Tensor(), {d.stride, d.stride},
                             {d.pad, d.pad, d.pad, d.pad}, {d.dil, d.dil}, d.c);
      const Tensor h = d.hswish ? hardswish(dw) : relu(dw);
      return conv(h, p[4], Tensor(), {1, 1}, {0, 0, 0, 0});
    };
    std::vector<Tensor> dev;
    for (const Tensor& t : host) dev.push_back(t.to(Device::vulkan()));
    for (const Dynamic dynamic : {Dynamic::kFalse, Dynamic::kTrue}) {
      auto compiled = compile([&](const Tensor& x) { return block(x, dev); },
                              {.name = "inverted_residual", .dynamic = dynamic});
      for (Shape s : {Shape{2, 8, 9, 7}, Shape{3, 8, 6, 11}, Shape{2, 8, 2, 1}}) {
        const Tensor x = rnd(DType::kF32, s);
        test::poison_device_memory(1 << 20);
        Tensor got = compiled(x.to(Device::vulkan()));
        const std::string what = "c " + std::to_string(d.c) + " k " + std::to_string(d.k) + " s " +
                                 std::to_string(d.stride) + " d " + std::to_string(d.dil) + " x" +
                                 shape_str(s) + (dynamic == Dynamic::kTrue ? ", symbolic" : "");
        test::expect_close(got, block(x, host), Tol{1e-4, 1e-4}, what);
      }
      if (!rowblock) continue;
      // Every entry runs the depthwise conv as depthwise_nhwc (its activation applied before
      // its store), with no window kernel, no elementwise kernel of its own, and one im2col at most
      // (the expand conv's: a small product may read its input through the tiled kernel).
      for (const EntryInfo& entry : compiled.entries()) {
        std::string kernels;
        int dws = 0, im2cols = 0;
        for (const std::string& k : entry.kernels) kernels += k + " ";
        for (const std::string& k : entry.kernels) {
          const std::string kind = k.substr(k.find('_') + 1);
          dws += kind.rfind("depthwise_nhwc", 0) == 0;
          im2cols += kind == "im2col";
          EXPECT_TRUE(kind != "conv" && kind != "relu" && kind != "mul") << kernels;
        }
        EXPECT_EQ(dws, 1) << kernels;
        EXPECT_LE(im2cols, 1) << kernels;
      }
    }
  }
}

// Pools over a conv's product (no ReLU between: negative values, so a max must start at -inf)
// in every window shape the 3-D form must carry: non-square kernels and strides, uneven pads,
// dilation, ceil_mode, average pools with and without count_include_pad, and a 1x1 window
// with padding whose outputs in the padding are -inf. Each pooled map feeds a 1x1 conv (which
// reads the pool's matrix), or is the output. Values against the interpreter, static and
// symbolic sizes.
TEST_F(DeviceConvPool, PoolsOverAProductTakeEveryWindowShape) {
  struct P {
    const char* what;
    bool max;
    V k, s, p, d;
    bool ceil, include_pad, to_conv;
  };
  const std::vector<P> pools = {
      {"max 3x2, strides 2x1, pads {1,0,0,1}",
       true,
       {3, 2},
       {2, 1},
       {1, 0, 0, 1},
       {1, 1},
       false,
       false,
       true},
      {"max 3x3, stride 2, dilations 1x2, ceil_mode",
       true,
       {3, 3},
       {2, 2},
       {0, 0, 0, 0},
       {1, 2},
       true,
       false,
       true},
      {"avg 2x3, strides 1x2, pads {0,1,1,0}, count_include_pad, ceil_mode",
       false,
       {2, 3},
       {1, 2},
       {0, 1, 1, 0},
       {1, 1},
       true,
       true,
       true},
      {"avg 3x3, stride 2, pads 1",
       false,
       {3, 3},
       {2, 2},
       {1, 1, 1, 1},
       {1, 1},
       false,
       false,
       true},
      {"max 1x1, stride 2, pads 1 (windows in the padding)",
       true,
       {1, 1},
       {2, 2},
       {1, 1, 1, 1},
       {1, 1},
       false,
       false,
       false},
  };
  const Tensor w = rnd(DType::kF32, {24, 8, 3, 3}) * (1.0 / std::sqrt(72.0)),
               b = rnd(DType::kF32, {24}), w1 = rnd(DType::kF32, {16, 24, 1, 1}) * 0.2;
  const Tensor wd = w.to(Device::vulkan()), bd = b.to(Device::vulkan()),
               w1d = w1.to(Device::vulkan());
  for (const P& pc : pools) {
    auto fn = [pc](const Tensor& x, const Tensor& cw, const Tensor& cb, const Tensor& c1) {
      const Tensor y = conv(x, cw, cb, {1, 1}, {1, 1, 1, 1});
      const Tensor p = pc.max ? max_pool(y, pc.k, pc.s, pc.p, pc.d, pc.ceil)
                              : avg_pool(y, pc.k, pc.s, pc.p, pc.d, pc.ceil, pc.include_pad);
      return pc.to_conv ? conv(p, c1, Tensor(), {1, 1}, {0, 0, 0, 0}) : p;
    };
    for (const Dynamic dynamic : {Dynamic::kFalse, Dynamic::kTrue}) {
      auto compiled = compile([&](const Tensor& x) { return fn(x, wd, bd, w1d); },
                              {.name = "pool_over_product", .dynamic = dynamic});
      for (Shape s : {Shape{2, 8, 11, 9}, Shape{1, 8, 7, 12}}) {
        const Tensor x = rnd(DType::kF32, s);
        test::poison_device_memory(1 << 20);
        Tensor got = compiled(x.to(Device::vulkan()));
        test::expect_close(got, fn(x, w, b, w1), Tol{1e-4, 1e-4},
                           std::string(pc.what) + " " + shape_str(s) +
                               (dynamic == Dynamic::kTrue ? ", symbolic" : ""));
      }
    }
  }
}

// A conv whose im2col matrix would exceed maxStorageBufferRange (which the im2col kernel
// writes as one binding) runs on the implicit-GEMM kernel, which stores no matrix.
TEST_F(DeviceConvPool, ConvWhoseIm2colWouldExceedOneStorageBufferRange) {
  const vk::DeviceInfo& info = Device::vulkan().vulkan_device()->info();
  if (!has_rowblock_kernel(info)) GTEST_SKIP() << "no row-block kernel: no im2col";
  if (info.max_storage_buffer_range > (uint64_t{200} << 20))
    GTEST_SKIP() << "maxStorageBufferRange " << info.max_storage_buffer_range
                 << " is too large to exceed in a test";
  // 128 x 128 positions x 2304 taps x 4 bytes = 144 MiB of im2col rows; the output is 1 MiB.
  const Shape xs{1, 256, 128, 128};
  ASSERT_GT(uint64_t{128} * 128 * 256 * 9 * 4, info.max_storage_buffer_range);
  Tensor x = rnd(DType::kF32, xs, Dist{-1, 1}), w = rnd(DType::kF32, {16, 256, 3, 3}, Dist{-1, 1}),
         b = rnd(DType::kF32, {16});
  auto fn = [](const Tensor& xx, const Tensor& ww, const Tensor& bb) {
    return conv(xx, ww, bb, {1, 1}, {1, 1, 1, 1});
  };
  check("conv 256 -> 16 on 128x128", Tol{1e-4, 1e-4}, fn, x, w, b);
  auto compiled = compile(fn, {.name = "big_im2col"});
  (void)compiled(x.to(Device::vulkan()), w.to(Device::vulkan()), b.to(Device::vulkan()));
  const std::vector<EntryInfo> entries = compiled.entries();
  ASSERT_EQ(entries.size(), 1u);
  std::string kernels;
  for (const std::string& k : entries[0].kernels) kernels += k + " ";
  EXPECT_EQ(kernels.find("im2col"), std::string::npos) << kernels;
  EXPECT_NE(kernels.find("conv"), std::string::npos) << kernels;
}

}  // namespace
}  // namespace kiln
