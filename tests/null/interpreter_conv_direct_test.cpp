// The interpreter's direct conv (eager/conv_direct.h): where it applies, and that every output
// is exactly the float FMA sequence its contract states (the bias, then each tap in the
// weight's order, a tap in the padding multiplying 0), bit for bit, for 1-D and 2-D windows,
// asymmetric padding, dilation, strides 1 to 4 (phase planes) alone and with dilation, groups,
// 1x1 windows read in place or padded, channel counts that leave partial register tiles,
// several depth blocks and several threads. On a CPU
// without AVX-512 the direct conv does not apply and the tests say so (skipped, not passed).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "eager/conv_direct.h"
#include "eager/interpreter.h"
#include "eager/window_geometry.h"
#include "graph/op.h"

namespace kiln {
namespace {

HostTensor random_f32(Shape shape, std::mt19937& rng) {
  HostTensor t(TensorMeta{DType::kF32, std::move(shape)});
  std::uniform_real_distribution<float> real(-2.0f, 2.0f);
  auto* p = reinterpret_cast<float*>(t.data.data());
  for (int64_t i = 0; i < t.meta.numel(); ++i) p[i] = real(rng);
  return t;
}

const float* f32(const HostTensor& t) {
  return reinterpret_cast<const float*>(t.data.data());
}

struct Case {
  Shape x;  // [N, C, L] or [N, C, H, W]
  int64_t c_out, groups;
  std::vector<int64_t> kernel, dilations, pads;  // pads: begins, then ends
  std::vector<int64_t> strides = {};             // none: all 1
};

Attrs attrs_of(const Case& c) {
  Attrs at;
  const size_t k = c.kernel.size();
  at.window.strides = c.strides.empty() ? std::vector<int64_t>(k, 1) : c.strides;
  at.window.dilations = c.dilations;
  at.window.pads = c.pads;
  at.window.groups = c.groups;
  return at;
}

/// The contract's value of every output: bias, then fmaf over the taps in weight order.
std::vector<float> fma_reference(const Case& c, const HostTensor& x, const HostTensor& w,
                                 const HostTensor& bias, const Shape& out) {
  const bool two_d = c.x.size() == 4;
  const int64_t n = c.x[0], ci = c.x[1], h = two_d ? c.x[2] : 1, wd = c.x.back();
  const int64_t kh = two_d ? c.kernel[0] : 1, kw = c.kernel.back();
  const int64_t dh = two_d ? c.dilations[0] : 1, dw = c.dilations.back();
  const int64_t ph = two_d ? c.pads[0] : 0, pw = two_d ? c.pads[1] : c.pads[0];
  const int64_t sh = two_d && !c.strides.empty() ? c.strides[0] : 1;
  const int64_t sw = c.strides.empty() ? 1 : c.strides.back();
  const int64_t oh = two_d ? out[2] : 1, ow = out.back();
  const int64_t cg = ci / c.groups, og = c.c_out / c.groups;
  std::vector<float> y;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t co = 0; co < c.c_out; ++co)
      for (int64_t r = 0; r < oh; ++r)
        for (int64_t q = 0; q < ow; ++q) {
          float acc = f32(bias)[co];
          for (int64_t k = 0; k < cg; ++k)
            for (int64_t a = 0; a < kh; ++a)
              for (int64_t e = 0; e < kw; ++e) {
                const int64_t pr = r * sh - ph + a * dh, pc = q * sw - pw + e * dw;
                const int64_t channel = co / og * cg + k;
                const float xv = pr < 0 || pr >= h || pc < 0 || pc >= wd
                                     ? 0.0f
                                     : f32(x)[((b * ci + channel) * h + pr) * wd + pc];
                acc = std::fma(f32(w)[((co * cg + k) * kh + a) * kw + e], xv, acc);
              }
          y.push_back(acc);
        }
  return y;
}

bool direct_on_this_cpu() {
  eager::Geometry g;
  g.c = g.c_out = 1;
  g.in = g.out = {1, 1, 64};
  return eager::conv_direct_applies(g);
}

TEST(InterpreterConvDirect, EachOutputIsTheFmaSequenceInWeightOrder) {
  if (!direct_on_this_cpu())
    GTEST_SKIP() << "no AVX-512 (or KILN_CONV_DIRECT=0): the direct conv does not run here";
  const std::vector<Case> cases = {
      {{2, 5, 9, 11}, 13, 1, {3, 3}, {1, 1}, {1, 1, 1, 1}},    // partial tiles and masks
      {{1, 3, 12, 60}, 4, 1, {5, 3}, {2, 1}, {2, 1, 3, 0}},    // dilation, asymmetric pads
      {{1, 3, 10, 70}, 5, 1, {3, 3}, {1, 3}, {1, 3, 1, 3}},    // dilation along rows
      {{2, 70, 10, 15}, 24, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}},  // 1x1 read in place
      {{1, 8, 12, 30}, 9, 1, {1, 1}, {1, 1}, {1, 1, 1, 1}},    // 1x1 with padding
      {{2, 40, 14, 14}, 18, 2, {3, 3}, {1, 1}, {1, 1, 1, 1}},  // groups, two depth blocks
      {{2, 6, 100}, 5, 1, {3}, {1}, {1, 1}},                   // 1-D
      {{2, 32, 40, 40}, 64, 1, {3, 3}, {1, 1}, {1, 1, 1, 1}},  // many work items
      {{1, 2, 30, 63}, 3, 1, {3, 3}, {1, 1}, {0, 0, 0, 0}},    // no padding, 3x3
      {{2, 3, 20, 45}, 4, 1, {3, 1}, {2, 1}, {0, 0, 0, 0}},    // read in place, 3 rows
      {{2, 5, 90}, 6, 1, {4}, {2}, {0, 0}},                    // 1-D, no padding
      {{1, 32, 12, 40}, 8, 1, {2, 2}, {1, 1}, {0, 0, 1, 1}},   // K = 128: one depth block
      {{1, 43, 12, 40}, 8, 1, {1, 3}, {1, 1}, {0, 1, 0, 1}},   // K = 129: two
      {{2, 16, 36, 36}, 36, 1, {3, 3}, {1, 1}, {1, 1, 1, 1}},  // a partial channel range
      // Strides: phase planes.
      {{2, 6, 33, 33}, 10, 1, {3, 3}, {1, 1}, {1, 1, 1, 1}, {2, 2}},   // odd sizes
      {{1, 3, 64, 64}, 16, 1, {7, 7}, {1, 1}, {3, 3, 3, 3}, {2, 2}},   // a stem
      {{2, 16, 32, 32}, 24, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}, {2, 2}},  // 1x1 downsample
      {{1, 4, 40, 50}, 5, 1, {3, 3}, {2, 2}, {2, 1, 0, 2}, {3, 3}},    // stride 3, dilation
      {{2, 4, 24, 66}, 6, 2, {3, 5}, {1, 1}, {1, 2, 1, 2}, {1, 2}},    // stride 2 along rows
      {{1, 5, 40, 30}, 7, 1, {4, 2}, {1, 1}, {0, 1, 1, 0}, {2, 1}},    // and along columns
      {{2, 6, 101}, 5, 1, {5}, {1}, {2, 2}, {2}},                      // 1-D
      {{1, 8, 34, 35}, 8, 1, {2, 2}, {1, 1}, {0, 0, 0, 0}, {4, 4}},    // stride 4
  };
  std::mt19937 rng(29);
  for (const Case& c : cases) {
    const int64_t cg = c.x[1] / c.groups;
    Shape ws{c.c_out, cg};
    for (int64_t k : c.kernel) ws.push_back(k);
    const HostTensor x = random_f32(c.x, rng), w = random_f32(ws, rng);
    const HostTensor bias = random_f32({c.c_out}, rng);
    const Attrs at = attrs_of(c);
    // Every other case without a bias: its sums start from +0.
    const bool with_bias = (&c - cases.data()) % 2 == 0;
    HostTensor zero(TensorMeta{DType::kF32, {c.c_out}});
    std::memset(zero.data.data(), 0, zero.data.size());
    auto r = with_bias
                 ? interpret_op(OpKind::Conv, std::vector<const HostTensor*>{&x, &w, &bias}, at)
                 : interpret_op(OpKind::Conv, std::vector<const HostTensor*>{&x, &w}, at);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    const HostTensor& y = *r;
    Node node;
    node.op = OpKind::Conv;
    node.attrs = at;
    const eager::Geometry g = eager::geometry(node, c.x, y.meta.shape, &ws);
    EXPECT_TRUE(eager::conv_direct_applies(g)) << "conv of " << shape_str(c.x);
    const std::vector<float> want = fma_reference(c, x, w, with_bias ? bias : zero, y.meta.shape);
    ASSERT_EQ(static_cast<size_t>(y.meta.numel()), want.size());
    int64_t wrong = 0;
    for (size_t i = 0; i < want.size(); ++i)
      if (std::memcmp(&f32(y)[i], &want[i], sizeof(float)) != 0 && ++wrong <= 3)
        ADD_FAILURE() << "conv of " << shape_str(c.x) << ": element " << i << " is " << f32(y)[i]
                      << ", the FMA sequence gives " << want[i];
    EXPECT_EQ(wrong, 0) << "conv of " << shape_str(c.x);
  }
}

TEST(InterpreterConvDirect, LeavesSmallMapsAndAliasedPlanesToIm2col) {
  if (!direct_on_this_cpu())
    GTEST_SKIP() << "no AVX-512 (or KILN_CONV_DIRECT=0): the direct conv does not run here";
  auto geom = [](std::array<int64_t, 3> in, std::array<int64_t, 3> out, int64_t k, int64_t pad,
                 int64_t stride) {
    eager::Geometry g;
    g.n = 1;
    g.c = 8;
    g.c_out = 8;
    g.in = in;
    g.out = out;
    g.kernel = {1, k, k};
    g.pad = g.pad_end = {0, pad, pad};
    g.stride = {1, stride, stride};
    return g;
  };
  EXPECT_TRUE(eager::conv_direct_applies(geom({1, 32, 32}, {1, 32, 32}, 3, 1, 1)));
  EXPECT_TRUE(eager::conv_direct_applies(geom({1, 32, 32}, {1, 16, 16}, 3, 1, 2)));
  // Stride 2 down to 4x4 (4 of 5 columns in a 20-position run: 16 outputs in 32 lanes), and
  // stride 5.
  EXPECT_FALSE(eager::conv_direct_applies(geom({1, 8, 8}, {1, 4, 4}, 3, 1, 2)));
  EXPECT_FALSE(eager::conv_direct_applies(geom({1, 60, 60}, {1, 12, 12}, 5, 0, 5)));
  // A 4x4 map padded to 6 wide: 16 outputs in 32 lanes.
  EXPECT_FALSE(eager::conv_direct_applies(geom({1, 4, 4}, {1, 4, 4}, 3, 1, 1)));
  // 1x1 over 32x32 planes (1024 floats apart: rows in the same L1 sets); 10x10 reads in place.
  EXPECT_FALSE(eager::conv_direct_applies(geom({1, 32, 32}, {1, 32, 32}, 1, 0, 1)));
  EXPECT_TRUE(eager::conv_direct_applies(geom({1, 10, 10}, {1, 10, 10}, 1, 0, 1)));
  // 3-D windows, and an output size that does not follow from the geometry.
  eager::Geometry d3 = geom({1, 32, 32}, {1, 32, 32}, 3, 1, 1);
  d3.in[0] = d3.out[0] = 4;
  EXPECT_FALSE(eager::conv_direct_applies(d3));
  EXPECT_FALSE(eager::conv_direct_applies(geom({1, 32, 32}, {1, 31, 32}, 3, 1, 1)));
  // Absurd padding and dilation (products past int64), and a large image: im2col's chunks.
  eager::Geometry huge = geom({1, 32, 32}, {1, 32, 32}, 3, 1, 1);
  huge.pad[2] = huge.pad_end[2] = int64_t{1} << 61;
  EXPECT_FALSE(eager::conv_direct_applies(huge));
  eager::Geometry dilated = geom({1, 32, 32}, {1, 32, 32}, 3, 1, 1);
  dilated.dil[1] = int64_t{1} << 62;
  EXPECT_FALSE(eager::conv_direct_applies(dilated));
  eager::Geometry large = geom({1, 2048, 2048}, {1, 2048, 2048}, 3, 1, 1);
  EXPECT_FALSE(eager::conv_direct_applies(large));
}

TEST(InterpreterConvDirect, NonFiniteValuesGiveWhatTheSequenceGives) {
  if (!direct_on_this_cpu())
    GTEST_SKIP() << "no AVX-512 (or KILN_CONV_DIRECT=0): the direct conv does not run here";
  const Case c{{1, 4, 16, 20}, 8, 1, {3, 3}, {1, 1}, {1, 1, 1, 1}};
  std::mt19937 rng(31);
  HostTensor x = random_f32(c.x, rng), w = random_f32({8, 4, 3, 3}, rng);
  const HostTensor bias = random_f32({8}, rng);
  auto* px = reinterpret_cast<float*>(x.data.data());
  auto* pw = reinterpret_cast<float*>(w.data.data());
  px[5] = std::numeric_limits<float>::quiet_NaN();
  px[100] = std::numeric_limits<float>::infinity();
  pw[7] = -std::numeric_limits<float>::infinity();  // times a padding 0: NaN, as im2col gives
  auto r = interpret_op(OpKind::Conv, std::vector<const HostTensor*>{&x, &w, &bias}, attrs_of(c));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const std::vector<float> want = fma_reference(c, x, w, bias, r->meta.shape);
  int64_t nans = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const float got = f32(*r)[i];
    if (std::isnan(want[i])) {
      ++nans;
      EXPECT_TRUE(std::isnan(got)) << "element " << i;
    } else {
      EXPECT_EQ(std::memcmp(&got, &want[i], sizeof(float)), 0)
          << "element " << i << ": " << got << " vs " << want[i];
    }
  }
  EXPECT_GT(nans, 0);
}

}  // namespace
}  // namespace kiln
