// The interpreter's f32 fast paths for the CNN and transformer ops against references written
// out here element by element, in the order and precision the interpreter's contract states,
// compared bit for bit: max pool (window order, the first NaN wins) and depthwise conv (planar
// loops, the AVX-512 rows of conv_depthwise.h, and channels-last loops for many channels on
// small planes; the test's second run, KILN_CHANNELS_LAST=1, takes the latter for every case,
// and its run with KILN_CONV_DIRECT=0 the planar loops), concat of same-dtype inputs (copied as
// they are), and kernels handed an output whose buffer still holds an older tensor's bytes (they
// must write every element). Shapes cover sizes 0 and 1, odd sizes,
// padding, strides, dilations, ceil mode, NaN inputs and tensors split over threads.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/host_memory.h"
#include "eager/float_math.h"
#include "eager/interpreter.h"
#include "graph/op.h"

namespace kiln {
namespace {

HostTensor random_f32(Shape shape, std::mt19937& rng) {
  HostTensor t(TensorMeta{DType::kF32, std::move(shape)});
  std::uniform_real_distribution<float> real(-3.0f, 3.0f);
  auto* p = reinterpret_cast<float*>(t.data.data());
  for (int64_t i = 0; i < t.meta.numel(); ++i) p[i] = real(rng);
  return t;
}

const float* f32(const HostTensor& t) {
  return reinterpret_cast<const float*>(t.data.data());
}

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

HostTensor run(OpKind op, std::vector<const HostTensor*> ins, const Attrs& attrs = {}) {
  auto r = interpret_op(op, ins, attrs);
  EXPECT_TRUE(r.ok()) << op_name(op) << ": " << r.status().to_string();
  return r.ok() ? std::move(r).value() : HostTensor();
}

/// Bit-for-bit equality, NaNs included (the first NaN of a window travels out unchanged).
void expect_same_bits(const HostTensor& got, const std::vector<float>& want,
                      const std::string& what) {
  ASSERT_EQ(got.meta.dtype, DType::kF32) << what;
  ASSERT_EQ(got.meta.numel(), static_cast<int64_t>(want.size())) << what;
  int bad = 0;
  for (size_t i = 0; i < want.size() && bad < 5; ++i) {
    const float g = f32(got)[i], w = want[i];
    if (std::memcmp(&g, &w, 4) != 0) {
      ++bad;
      ADD_FAILURE() << what << ": element " << i << " is " << g << ", want " << w;
    }
  }
}

// ---- max pool ---------------------------------------------------------------------------------

struct PoolCase {
  Shape x;  // [N, C, spatial...]
  std::vector<int64_t> kernel, strides, pads, dilations;
  bool ceil = false;
  int nans = 0;  // NaNs (with distinct payloads) placed at random
};

/// The contract: over the window's positions inside the input, in row-major window order, the
/// first position is taken, then any greater value or a NaN; after a NaN nothing changes.
std::vector<float> max_pool_ref(const HostTensor& x, const PoolCase& c, const Shape& out) {
  const size_t k = c.kernel.size();
  int64_t planes = x.meta.shape[0] * x.meta.shape[1], in_plane = 1, out_plane = 1;
  for (size_t i = 0; i < k; ++i) in_plane *= x.meta.shape[2 + i], out_plane *= out[2 + i];
  int64_t taps = 1;
  for (int64_t w : c.kernel) taps *= w;
  std::vector<float> want;
  for (int64_t pc = 0; pc < planes; ++pc) {
    for (int64_t o = 0; o < out_plane; ++o) {
      float acc = -std::numeric_limits<float>::infinity();
      bool any = false;
      for (int64_t t = 0; t < taps; ++t) {
        int64_t off = 0, orest = o, trest = t;
        bool inside = true;
        std::vector<int64_t> oi(k), ti(k);
        for (size_t d = k; d-- > 0;) {
          oi[d] = orest % out[2 + d], orest /= out[2 + d];
          ti[d] = trest % c.kernel[d], trest /= c.kernel[d];
        }
        for (size_t d = 0; d < k; ++d) {
          const int64_t p = oi[d] * c.strides[d] - c.pads[d] + ti[d] * c.dilations[d];
          inside = inside && p >= 0 && p < x.meta.shape[2 + d];
          off = off * x.meta.shape[2 + d] + p;
        }
        if (!inside || std::isnan(acc)) continue;
        const float v = f32(x)[pc * in_plane + off];
        if (!any || v > acc || std::isnan(v)) acc = v;
        any = true;
      }
      want.push_back(acc);
    }
  }
  return want;
}

TEST(InterpreterFastPaths, MaxPoolMatchesTheWindowOrderFormula) {
  const std::vector<PoolCase> cases = {
      {{1, 1, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}},
      {{2, 3, 9, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}},                    // padding, stride 2
      {{2, 3, 9, 7}, {3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}, true},              // ceil mode
      {{1, 2, 8, 11}, {2, 3}, {1, 2}, {0, 1, 1, 0}, {2, 1}},                   // dilation, asym
      {{1, 2, 5, 5}, {3, 3}, {1, 1}, {2, 2, 2, 2}, {1, 1}},                    // wide padding
      {{2, 2, 6, 6}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, false, 5},          // NaNs
      {{1, 3, 7, 9}, {3, 3}, {2, 1}, {1, 1, 1, 1}, {1, 1}, false, 40},         // many NaNs
      {{2, 3, 13}, {3}, {2}, {1, 1}, {1}},                                     // 1-D
      {{1, 2, 4, 5, 6}, {2, 2, 3}, {1, 2, 2}, {0, 1, 1, 1, 0, 0}, {1, 1, 1}},  // 3-D
      {{2, 64, 63, 63}, {3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}, true, 3},        // threads, ceil
      {{0, 3, 5, 5}, {2, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}},                    // N = 0
      {{1, 2, 2, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, {1, 1}},                    // empty windows
      {{1, 3, 6, 20}, {2, 2}, {3, 4}, {0, 0, 0, 0}, {1, 1}},                   // stride > kernel
      {{2, 3, 300}, {300}, {300}, {0, 0}, {1}},                                // global, 1-D
      {{1, 2, 3, 0}, {1, 1}, {1, 1}, {0, 1, 0, 1}, {1, 1}},                    // no columns
      // 2-D windows of the common CNN shapes: 3 wide stride 1, 2x2 stride 2, ceil mode's edge.
      {{1, 3, 10, 40}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}},
      {{2, 4, 12, 34}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}},
      {{1, 2, 8, 8}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, true},
      {{2, 3, 10, 13}, {2, 2}, {2, 2}, {1, 1, 1, 1}, {1, 1}},
      // Rows of several vectors (row_phases.h): stride 3 with dilation, stride 1.
      {{1, 3, 5, 100}, {2, 4}, {1, 3}, {1, 2, 0, 3}, {1, 2}, true, 2},
      {{1, 2, 4, 37}, {1, 5}, {1, 1}, {0, 4, 0, 4}, {1, 1}},
      // Many channels and tiny planes: the channels-last loops (eager/channels_last.h).
      {{2, 20, 7, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false, 3},          // NaNs
      {{3, 17, 3, 7}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, true},              // ceil, odd C
      {{1, 16, 2, 2}, {1, 1}, {1, 1}, {1, 1, 1, 1}, {1, 1}},                    // empty windows
      {{1, 24, 3, 4, 4}, {2, 2, 2}, {1, 2, 2}, {0, 0, 0, 1, 1, 1}, {1, 1, 1}},  // 3-D
  };
  std::mt19937 rng(31);
  for (const PoolCase& c : cases) {
    HostTensor x = random_f32(c.x, rng);
    auto* p = reinterpret_cast<float*>(x.data.data());
    if (x.meta.numel() > 0) {
      std::uniform_int_distribution<int64_t> at(0, x.meta.numel() - 1);
      for (int i = 0; i < c.nans; ++i) {
        const uint32_t bits = 0x7fc00000u | static_cast<uint32_t>(i + 1);  // distinct payloads
        std::memcpy(&p[at(rng)], &bits, 4);
      }
      p[x.meta.numel() / 2] = -std::numeric_limits<float>::infinity();
      p[0] = -0.0f;
    }
    Attrs a;
    a.window.kernel = c.kernel;
    a.window.strides = c.strides;
    a.window.pads = c.pads;
    a.window.dilations = c.dilations;
    a.window.ceil_mode = c.ceil;
    const HostTensor y = run(OpKind::MaxPool, {&x}, a);
    expect_same_bits(y, max_pool_ref(x, c, y.meta.shape), "max_pool " + shape_str(c.x));
  }
}

/// A 2-D max pool's attributes: a kh x kw window, unit strides and dilations, no padding.
Attrs unit_pool(int64_t kh, int64_t kw) {
  Attrs a;
  a.window.kernel = {kh, kw};
  a.window.strides = {1, 1};
  a.window.pads = {0, 0, 0, 0};
  a.window.dilations = {1, 1};
  return a;
}

TEST(InterpreterFastPaths, MaxPoolKeepsTheFirstOfEqualZeros) {
  HostTensor x(TensorMeta{DType::kF32, {1, 1, 1, 4}});
  auto* p = reinterpret_cast<float*>(x.data.data());
  p[0] = 0.0f, p[1] = -0.0f, p[2] = -0.0f, p[3] = 0.0f;
  const HostTensor y = run(OpKind::MaxPool, {&x}, unit_pool(1, 2));
  expect_same_bits(y, {0.0f, -0.0f, -0.0f}, "max_pool of signed zeros");
}

TEST(InterpreterFastPaths, MaxPoolKeepsTheFirstOfEqualZerosAcrossRows) {
  // 2x2 windows over 2x2 planes: the first zero in row-major order wins, whichever row holds
  // the larger of the others.
  const std::vector<std::pair<std::array<float, 4>, float>> planes = {
      {{-0.0f, -1.0f, 0.0f, -1.0f}, -0.0f},
      {{-1.0f, 0.0f, -0.0f, -1.0f}, 0.0f},
      {{-1.0f, -0.0f, 0.0f, -0.0f}, -0.0f},
      {{-2.0f, -1.0f, -0.0f, 0.0f}, -0.0f},
  };
  for (const auto& [v, want] : planes) {
    HostTensor x(TensorMeta{DType::kF32, {1, 1, 2, 2}});
    std::memcpy(x.data.data(), v.data(), 16);
    const HostTensor y = run(OpKind::MaxPool, {&x}, unit_pool(2, 2));
    expect_same_bits(y, {want}, "max_pool of signed zeros over two rows");
  }
}

TEST(InterpreterFastPaths, ADepthOneWindowInDepthPaddingReadsOnlyPadding) {
  // 3-D inputs of depth 1 whose one output depth lies in the depth padding (pad 1, stride 2):
  // every tap is padding, so a conv gives its bias and a max pool -inf, whichever kernel runs
  // the planes (the 2-D fast paths must not take them).
  std::mt19937 rng(53);
  const HostTensor x = random_f32({1, 4, 1, 8, 8}, rng);
  Attrs a;
  a.window.strides = {2, 1, 1};
  a.window.pads = {1, 1, 1, 0, 1, 1};
  a.window.dilations = {1, 1, 1};
  for (const int64_t groups : {int64_t{1}, int64_t{4}}) {
    const HostTensor w = random_f32({4, 4 / groups, 1, 3, 3}, rng);
    const HostTensor bias = random_f32({4}, rng);
    a.window.groups = groups;
    const HostTensor y = run(OpKind::Conv, {&x, &w, &bias}, a);
    ASSERT_EQ(y.meta.shape, (Shape{1, 4, 1, 8, 8}));
    std::vector<float> want;
    for (int64_t c = 0; c < 4; ++c) want.insert(want.end(), 64, f32(bias)[c]);
    expect_same_bits(y, want, "conv of depth padding, groups " + std::to_string(groups));
  }
  Attrs p;
  p.window.kernel = {1, 2, 2};
  p.window.strides = {2, 1, 1};
  p.window.pads = {1, 0, 0, 0, 0, 0};
  p.window.dilations = {1, 1, 1};
  const HostTensor y = run(OpKind::MaxPool, {&x}, p);
  ASSERT_EQ(y.meta.shape, (Shape{1, 4, 1, 7, 7}));
  expect_same_bits(y, std::vector<float>(4 * 49, -std::numeric_limits<float>::infinity()),
                   "max pool of depth padding");
}

// ---- depthwise conv ---------------------------------------------------------------------------

TEST(InterpreterFastPaths, DepthwiseConvSumsTheTapsInWindowOrder) {
  // Short and long output rows, strides, padding wider than the window reach, dilation and a
  // channel multiplier: each output is the float sum bias + w * x over the taps inside the
  // input in row-major window order.
  struct Case {
    Shape x;
    int64_t multiplier, kernel, stride, pad, dilation;
    int64_t stride_w = 0,
            pad_end = -1;  // the column stride (0: `stride`), the end pads (-1: `pad`)
  };
  const std::vector<Case> cases = {
      {{1, 6, 8, 8}, 1, 5, 2, 2, 1},
      {{2, 4, 9, 11}, 2, 3, 1, 1, 1},
      {{1, 3, 40, 37}, 1, 3, 1, 1, 1},
      {{1, 2, 41, 50}, 1, 5, 2, 2, 1},
      {{1, 2, 7, 20}, 1, 3, 1, 2, 2},
      {{1, 1, 1, 1}, 1, 1, 1, 0, 1},
      {{2, 48, 33, 33}, 1, 3, 1, 1, 1},  // threads
      // Stride 2 read as pairs of vectors (conv_depthwise.h): with dilation, odd widths whose
      // last window runs past the row, 16 columns, rows not a multiple of 4.
      {{1, 3, 30, 45}, 1, 3, 2, 2, 2},
      {{1, 4, 21, 35}, 1, 3, 2, 1, 1},
      {{2, 20, 32, 32}, 1, 3, 2, 1, 1},
      {{1, 2, 11, 70}, 2, 4, 2, 3, 1},
      // Strides differing between rows and columns, end pads differing from begin pads.
      {{1, 3, 20, 41}, 1, 3, 1, 1, 1, 2, 0},
      {{2, 2, 19, 30}, 1, 3, 2, 1, 1, 1, 2},
      {{1, 4, 9, 33}, 1, 5, 2, 0, 1, 2, 3},
      // Many channels and short rows: the channels-last loops (eager/channels_last.h).
      {{2, 24, 9, 9}, 1, 3, 1, 1, 1},
      {{1, 32, 7, 16}, 1, 5, 2, 2, 1},
      {{1, 16, 4, 4}, 1, 3, 1, 2, 2},
      {{3, 17, 1, 1}, 1, 3, 1, 1, 1},
      {{1, 40, 12, 13}, 1, 3, 2, 0, 1},
      {{1, 16, 5, 5}, 2, 3, 1, 1, 1},
      {{2, 96, 8, 8}, 1, 5, 1, 2, 1},  // threads
  };
  std::mt19937 rng(41);
  for (const Case& c : cases) {
    const int64_t ch = c.x[1], co_n = ch * c.multiplier, h = c.x[2], wd = c.x[3];
    const HostTensor x = random_f32(c.x, rng);
    HostTensor w = random_f32({co_n, 1, c.kernel, c.kernel}, rng);
    HostTensor bias = random_f32({co_n}, rng);
    // Channel 0's first tap infinite and its bias -0: a tap in the padding must be skipped, not
    // multiplied by 0 (NaN) or added as 0 (which turns -0 into +0).
    reinterpret_cast<float*>(w.data.data())[0] = std::numeric_limits<float>::infinity();
    reinterpret_cast<float*>(bias.data.data())[0] = -0.0f;
    const int64_t sw = c.stride_w > 0 ? c.stride_w : c.stride;
    const int64_t pad_end = c.pad_end >= 0 ? c.pad_end : c.pad;
    Attrs a;
    a.window.strides = {c.stride, sw};
    a.window.pads = {c.pad, c.pad, pad_end, pad_end};
    a.window.dilations = {c.dilation, c.dilation};
    a.window.groups = ch;
    const HostTensor y = run(OpKind::Conv, {&x, &w, &bias}, a);
    const int64_t oh = y.meta.shape[2], ow = y.meta.shape[3];
    std::vector<float> want;
    for (int64_t n = 0; n < c.x[0]; ++n)
      for (int64_t co = 0; co < co_n; ++co)
        for (int64_t r = 0; r < oh; ++r)
          for (int64_t q = 0; q < ow; ++q) {
            float acc = f32(bias)[co];
            for (int64_t kr = 0; kr < c.kernel; ++kr)
              for (int64_t kq = 0; kq < c.kernel; ++kq) {
                const int64_t pr = r * c.stride - c.pad + kr * c.dilation;
                const int64_t pq = q * sw - c.pad + kq * c.dilation;
                if (pr < 0 || pr >= h || pq < 0 || pq >= wd) continue;
                acc += f32(w)[(co * c.kernel + kr) * c.kernel + kq] *
                       f32(x)[((n * ch + co / c.multiplier) * h + pr) * wd + pq];
              }
            want.push_back(acc);
          }
    expect_same_bits(y, want, "depthwise conv " + shape_str(c.x));
  }
}

// ---- concat -----------------------------------------------------------------------------------

TEST(InterpreterFastPaths, ConcatCopiesEachInputAlongTheAxis) {
  std::mt19937 rng(5);
  const Shape base = {2, 3, 5};
  for (int64_t axis = 0; axis < 3; ++axis) {
    std::vector<HostTensor> parts;
    for (int64_t len : {2, 0, 1, 3}) {
      Shape s = base;
      s[static_cast<size_t>(axis)] = len;
      parts.push_back(random_f32(s, rng));
    }
    std::vector<const HostTensor*> ins;
    for (const HostTensor& t : parts) ins.push_back(&t);
    Attrs a;
    a.axis = axis;
    const HostTensor y = run(OpKind::Concat, ins, a);
    // Element (i, j, k) of the result is element (.., j - start, ..) of the input that covers j.
    std::vector<float> want;
    const Shape& os = y.meta.shape;
    for (int64_t i = 0; i < os[0]; ++i)
      for (int64_t j = 0; j < os[1]; ++j)
        for (int64_t k = 0; k < os[2]; ++k) {
          int64_t at[3] = {i, j, k};
          for (const HostTensor& t : parts) {
            const int64_t len = t.meta.shape[static_cast<size_t>(axis)];
            if (at[axis] >= len) {
              at[axis] -= len;
              continue;
            }
            want.push_back(f32(t)[(at[0] * t.meta.shape[1] + at[1]) * t.meta.shape[2] + at[2]]);
            break;
          }
        }
    expect_same_bits(y, want, "concat axis " + std::to_string(axis));
  }
}

TEST(InterpreterFastPaths, ConcatOfMixedDtypesConvertsEachInput) {
  HostTensor a(TensorMeta{DType::kF32, {2, 2}}), b(TensorMeta{DType::kI32, {2, 1}});
  for (int64_t i = 0; i < 4; ++i) a.set(i, 0.5 * static_cast<double>(i) - 1.0);
  b.set(0, 7), b.set(1, -3);
  Attrs at;
  at.axis = 1;
  const HostTensor y = run(OpKind::Concat, {&a, &b}, at);
  expect_same_bits(y, {-1.0f, -0.5f, 7.0f, 0.0f, 0.5f, -3.0f}, "concat f32 + i32");
}

// ---- tanh -------------------------------------------------------------------------------------

int64_t ulps_apart(float a, float b) {
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  if ((ia < 0) != (ib < 0)) return a == b ? 0 : std::numeric_limits<int64_t>::max();
  return std::abs(static_cast<int64_t>(ia) - static_cast<int64_t>(ib));
}

TEST(InterpreterFastPaths, TanhIsWithinOneUlpOfTheExactValue) {
  // Every 4099th bit pattern (about a million floats of every sign and exponent) and the
  // special values: the double tanh rounded to float is the reference.
  std::vector<float> xs;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4099) {
    float v;
    const auto b = static_cast<uint32_t>(bits);
    std::memcpy(&v, &b, 4);
    xs.push_back(v);
  }
  for (float v :
       {0.0f, -0.0f, 1e-30f, -1e-30f, 0x1p-6f, -0x1p-6f, 0.5f, 9.0f, 9.1f, -9.1f, 20.0f, 1e30f,
        std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
        std::numeric_limits<float>::denorm_min()})
    xs.push_back(v);
  HostTensor x(TensorMeta{DType::kF32, {static_cast<int64_t>(xs.size())}});
  std::memcpy(x.data.data(), xs.data(), xs.size() * 4);
  const HostTensor y = run(OpKind::Tanh, {&x});
  ASSERT_EQ(y.meta.numel(), x.meta.numel());
  int bad = 0;
  for (size_t i = 0; i < xs.size() && bad < 5; ++i) {
    const float got = f32(y)[i], want = static_cast<float>(std::tanh(static_cast<double>(xs[i])));
    const bool ok = std::isnan(xs[i]) ? std::isnan(got) : ulps_apart(got, want) <= 1;
    // The sign of zero and the exact +-1 beyond 9.1 are kept.
    const bool sign_ok = std::isnan(xs[i]) || std::signbit(got) == std::signbit(xs[i]);
    if (!ok || !sign_ok) {
      ++bad;
      ADD_FAILURE() << "tanh(" << xs[i] << ") is " << got << ", want " << want;
    }
  }
  EXPECT_EQ(eager::tanh_float(9.1f), 1.0f);
  EXPECT_EQ(eager::tanh_float(-1e30f), -1.0f);
}

TEST(InterpreterFastPaths, TanhGivesTheScalarFormulasBitsAtEverySize) {
  std::mt19937 rng(9);
  for (const Shape& s : std::vector<Shape>{{0}, {1}, {7}, {3, 5, 33}, {4, 128, 3072}}) {
    HostTensor x = random_f32(s, rng);
    if (x.meta.numel() > 2) {
      auto* p = reinterpret_cast<float*>(x.data.data());
      p[0] = std::numeric_limits<float>::quiet_NaN();
      p[1] = -0.0f;
    }
    std::vector<float> want(static_cast<size_t>(x.meta.numel()));
    for (size_t i = 0; i < want.size(); ++i) want[i] = eager::tanh_float(f32(x)[i]);
    expect_same_bits(run(OpKind::Tanh, {&x}), want, "tanh " + shape_str(s));
    // f16 goes through the same function (then rounds to half).
    HostTensor h(TensorMeta{DType::kF16, s});
    for (int64_t i = 0; i < h.meta.numel(); ++i) h.set(i, f32(x)[i]);
    const HostTensor yh = run(OpKind::Tanh, {&h});
    HostTensor r(TensorMeta{DType::kF16, {1}});
    for (int64_t i = 0; i < h.meta.numel() && i < 1000; ++i) {
      r.set(0, eager::tanh_float(static_cast<float>(h.get(i))));
      if (std::isnan(r.get(0))) continue;
      ASSERT_EQ(yh.get(i), r.get(0)) << "f16 tanh, element " << i;
    }
  }
}

TEST(InterpreterFastPaths, GeluTanhUsesTheSameTanh) {
  std::mt19937 rng(4);
  const HostTensor x = random_f32({3, 257}, rng);
  std::vector<float> want(static_cast<size_t>(x.meta.numel()));
  for (size_t i = 0; i < want.size(); ++i) {
    const float v = f32(x)[i], k = 0.7978845608028654f;
    want[i] = 0.5f * v * (1.0f + eager::tanh_float(k * (v + 0.044715f * v * v * v)));
  }
  expect_same_bits(run(OpKind::GeluTanh, {&x}), want, "gelu_tanh");
}

// ---- products with one row or one column (sgemv) ----------------------------------------------

/// Within the bound of a float dot product of k terms summed in any order: k * 2^-23 * sum |a b|.
void expect_product(const HostTensor& got, const std::vector<double>& exact,
                    const std::vector<double>& abs_sum, int64_t k, const std::string& what) {
  ASSERT_EQ(got.meta.numel(), static_cast<int64_t>(exact.size())) << what;
  for (size_t i = 0; i < exact.size(); ++i) {
    const double bound = static_cast<double>(k) * std::ldexp(1.0, -23) * abs_sum[i] +
                         std::ldexp(1.0, -24) * std::abs(exact[i]);
    ASSERT_LE(std::abs(double(f32(got)[i]) - exact[i]), bound) << what << ", element " << i;
  }
}

TEST(InterpreterFastPaths, MatVecProductsMatchTheDoubleSums) {
  std::mt19937 rng(12);
  // [m, k] x [k, n] with m = 1 or n = 1, either operand stored transposed.
  for (auto [m, n, k] : std::vector<std::array<int64_t, 3>>{
           {1, 1000, 1024}, {1, 7, 3}, {1, 1, 5}, {37, 1, 19}, {2048, 1, 300}, {1, 5, 1}}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        // Batch 1 for a plain a (a batch of m = 1 rows over a shared b is one product of
        // batch * m rows), 2 for a transposed one (a product per batch element).
        const int64_t batch = ta ? 2 : 1;
        const HostTensor a = random_f32(ta ? Shape{batch, k, m} : Shape{batch, m, k}, rng);
        const HostTensor b = random_f32(tb ? Shape{n, k} : Shape{k, n}, rng);
        Attrs at;
        at.trans_a = ta;
        at.trans_b = tb;
        const HostTensor y = run(OpKind::MatMul, {&a, &b}, at);
        std::vector<double> exact, abs_sum;
        for (int64_t bt = 0; bt < batch; ++bt)
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              double e = 0, s = 0;
              for (int64_t p = 0; p < k; ++p) {
                const double av = f32(a)[bt * m * k + (ta ? p * m + i : i * k + p)];
                const double bv = f32(b)[tb ? j * k + p : p * n + j];
                e += av * bv;
                s += std::abs(av * bv);
              }
              exact.push_back(e);
              abs_sum.push_back(s);
            }
        expect_product(y, exact, abs_sum, k,
                       "matmul m " + std::to_string(m) + " n " + std::to_string(n) + " k " +
                           std::to_string(k) + (ta ? " trans_a" : "") + (tb ? " trans_b" : ""));
      }
    }
  }
}

TEST(InterpreterFastPaths, ConvWithOneOutputChannelAddsItsBias) {
  std::mt19937 rng(13);
  const HostTensor x = random_f32({2, 3, 6, 5}, rng), w = random_f32({1, 3, 3, 3}, rng);
  const HostTensor bias = random_f32({1}, rng);
  Attrs at;
  at.window.strides = {1, 1};
  at.window.pads = {1, 1, 1, 1};
  at.window.dilations = {1, 1};
  const HostTensor y = run(OpKind::Conv, {&x, &w, &bias}, at);
  std::vector<double> exact, abs_sum;
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t r = 0; r < 6; ++r)
      for (int64_t c = 0; c < 5; ++c) {
        double e = f32(bias)[0], s = std::abs(e);
        for (int64_t ci = 0; ci < 3; ++ci)
          for (int64_t kr = 0; kr < 3; ++kr)
            for (int64_t kc = 0; kc < 3; ++kc) {
              const int64_t pr = r - 1 + kr, pc = c - 1 + kc;
              if (pr < 0 || pr >= 6 || pc < 0 || pc >= 5) continue;
              const double v =
                  double(f32(x)[((n * 3 + ci) * 6 + pr) * 5 + pc]) * f32(w)[(ci * 3 + kr) * 3 + kc];
              e += v;
              s += std::abs(v);
            }
        exact.push_back(e);
        abs_sum.push_back(s);
      }
  expect_product(y, exact, abs_sum, 28, "conv with one output channel");
}

TEST(InterpreterFastPaths, ConvMatchesTheDoubleSumsOnSmallAndLargeMaps) {
  // im2col's two row layouts (short rows from a padded copy of the plane, long rows with
  // per-tap column ranges), strides, dilations, asymmetric padding, groups and batches
  // against the double sums.
  struct Case {
    Shape x;
    int64_t c_out, groups;
    std::array<int64_t, 2> kernel, strides, dilations;
    std::array<int64_t, 4> pads;  // top, left, bottom, right
  };
  const std::vector<Case> cases = {
      {{1, 16, 2, 2}, 32, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},  // 2x2 map, rows of 2
      {{2, 8, 4, 4}, 12, 2, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},   // stride 2, groups
      {{1, 6, 9, 7}, 5, 1, {3, 2}, {1, 2}, {2, 1}, {0, 2, 3, 1}},    // dilation, asymmetric
      {{3, 4, 5, 16}, 8, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},   // rows of exactly 16
      {{1, 5, 6, 40}, 7, 1, {3, 5}, {1, 3}, {1, 2}, {1, 4, 0, 2}},   // long rows
      {{2, 3, 1, 1}, 4, 1, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},    // 1x1 map, all padding
      {{1, 3, 7, 50}, 4, 1, {3, 5}, {2, 2}, {1, 2}, {1, 3, 0, 2}},   // long rows, strided
      {{1, 2, 3, 0}, 4, 1, {1, 1}, {1, 1}, {1, 1}, {0, 1, 0, 1}},    // empty rows, padded
      // 256 and 512 columns: im2col matrices and products with rows padded past 1 KiB strides,
      // one image and two images side by side, with groups (stride 2 keeps the first off the
      // direct convs; null_interpreter_im2col_test runs every case with them off).
      {{1, 4, 32, 32}, 6, 1, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},
      {{2, 6, 16, 16}, 4, 2, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      // 1028 images side by side per product and 1024 in the last: the last batch's width is a
      // multiple of 256, the first's is not (its buffer, sized for 1028 columns, must hold it).
      {{2052, 510, 1, 8}, 4, 1, {1, 8}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
  };
  std::mt19937 rng(17);
  for (const Case& c : cases) {
    const int64_t n = c.x[0], ci = c.x[1], h = c.x[2], w = c.x[3], cg = ci / c.groups;
    const HostTensor x = random_f32(c.x, rng);
    const HostTensor wt = random_f32({c.c_out, cg, c.kernel[0], c.kernel[1]}, rng);
    const HostTensor bias = random_f32({c.c_out}, rng);
    Attrs at;
    at.window.strides = {c.strides[0], c.strides[1]};
    at.window.pads = {c.pads[0], c.pads[1], c.pads[2], c.pads[3]};
    at.window.dilations = {c.dilations[0], c.dilations[1]};
    at.window.groups = c.groups;
    const HostTensor y = run(OpKind::Conv, {&x, &wt, &bias}, at);
    ASSERT_EQ(y.meta.rank(), 4);
    const int64_t oh = y.meta.shape[2], ow = y.meta.shape[3], og = c.c_out / c.groups;
    std::vector<double> exact, abs_sum;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t co = 0; co < c.c_out; ++co)
        for (int64_t r = 0; r < oh; ++r)
          for (int64_t q = 0; q < ow; ++q) {
            double e = f32(bias)[co], sum = std::abs(e);
            for (int64_t k = 0; k < cg; ++k)
              for (int64_t kr = 0; kr < c.kernel[0]; ++kr)
                for (int64_t kc = 0; kc < c.kernel[1]; ++kc) {
                  const int64_t pr = r * c.strides[0] - c.pads[0] + kr * c.dilations[0];
                  const int64_t pc = q * c.strides[1] - c.pads[1] + kc * c.dilations[1];
                  if (pr < 0 || pr >= h || pc < 0 || pc >= w) continue;
                  const int64_t channel = co / og * cg + k;
                  const double v = double(f32(x)[((b * ci + channel) * h + pr) * w + pc]) *
                                   f32(wt)[((co * cg + k) * c.kernel[0] + kr) * c.kernel[1] + kc];
                  e += v;
                  sum += std::abs(v);
                }
            exact.push_back(e);
            abs_sum.push_back(sum);
          }
    expect_product(y, exact, abs_sum, cg * c.kernel[0] * c.kernel[1] + 1,
                   "conv of " + shape_str(c.x));
  }
}

// ---- where ------------------------------------------------------------------------------------

TEST(InterpreterFastPaths, WhereSelectsInEveryContiguousPattern) {
  std::mt19937 rng(23);
  // (mask, x, y): all full; a scalar y (attention masks); a scalar x; a threaded size.
  const std::vector<std::array<Shape, 3>> cases = {
      {Shape{6, 33}, Shape{6, 33}, Shape{6, 33}},
      {Shape{6, 33}, Shape{6, 33}, Shape{}},
      {Shape{6, 33}, Shape{}, Shape{6, 33}},
      {Shape{1, 256, 256}, Shape{}, Shape{8, 256, 256}},
      {Shape{1}, Shape{1}, Shape{}},
      {Shape{0, 3}, Shape{}, Shape{0, 3}},
  };
  for (const auto& [sc, sx, sy] : cases) {
    HostTensor c(TensorMeta{DType::kBool, sc});
    for (int64_t i = 0; i < c.meta.numel(); ++i) c.set(i, (rng() & 1) != 0 ? 1.0 : 0.0);
    const HostTensor x = random_f32(sx, rng), y = random_f32(sy, rng);
    const HostTensor got = run(OpKind::Where, {&c, &x, &y});
    // Every case broadcasts only leading dims or scalars: index each operand modulo its size.
    std::vector<float> want(static_cast<size_t>(got.meta.numel()));
    for (int64_t i = 0; i < got.meta.numel(); ++i)
      want[static_cast<size_t>(i)] =
          c.get(i % c.meta.numel()) != 0 ? f32(x)[i % x.meta.numel()] : f32(y)[i % y.meta.numel()];
    expect_same_bits(got, want,
                     "where " + shape_str(sc) + " " + shape_str(sx) + " " + shape_str(sy));
  }
}

// ---- reshape of an intermediate ----------------------------------------------------------------

Attrs shape_attrs(std::vector<int64_t> dims) {
  Attrs a;
  a.dims = std::move(dims);
  return a;
}

TEST(InterpreterFastPaths, ReshapeOfALastUseTakesItsBytesAndLeavesOtherReadersAlone) {
  std::mt19937 rng(3);
  const HostTensor x = random_f32({4, 64}, rng);
  const HostTensor x_before = x;
  Graph g;
  const NodeId in = g.add_input(x.meta);
  const NodeId relu = g.add(OpKind::Relu, {in}, {}).value();
  const NodeId relu2 = g.add(OpKind::Relu, {in}, {}).value();  // a graph output too
  const NodeId neg = g.add(OpKind::Neg, {in}, {}).value();
  const NodeId flat_in = g.add(OpKind::Reshape, {in}, shape_attrs({256})).value();      // an input
  const NodeId flat_relu = g.add(OpKind::Reshape, {relu}, shape_attrs({256})).value();  // last use
  const NodeId flat_neg = g.add(OpKind::Reshape, {neg}, shape_attrs({8, 32})).value();
  const NodeId again = g.add(OpKind::Add, {neg, neg}, {}).value();  // neg is read after its reshape
  const NodeId flat_relu2 = g.add(OpKind::Reshape, {relu2}, shape_attrs({256})).value();
  g.set_outputs({flat_in, flat_relu, flat_neg, again, flat_relu, relu2, flat_relu2});
  const HostTensor* inputs[] = {&x};
  auto r = interpret(g, inputs, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const std::vector<HostTensor>& out = *r;
  ASSERT_EQ(out.size(), 7u);
  std::vector<float> ident, relu_v, neg_v, twice;
  for (int64_t i = 0; i < 256; ++i) {
    const float v = f32(x)[i];
    ident.push_back(v);
    relu_v.push_back(v < 0.0f ? 0.0f : v);
    neg_v.push_back(-v);
    twice.push_back(-v + -v);
  }
  expect_same_bits(out[0], ident, "reshape of the input");
  expect_same_bits(out[1], relu_v, "reshape of relu (its last use)");
  expect_same_bits(out[2], neg_v, "reshape of neg (read again later)");
  expect_same_bits(out[3], twice, "neg + neg after the reshape");
  expect_same_bits(out[4], relu_v, "the same output listed twice");
  expect_same_bits(out[5], relu_v, "an output that is also reshaped");
  expect_same_bits(out[6], relu_v, "the reshape of an output");
  EXPECT_EQ(out[2].meta.shape, (Shape{8, 32}));
  EXPECT_EQ(std::memcmp(x.data.data(), x_before.data.data(), x.data.size()), 0);
}

// ---- outputs in reused buffers ----------------------------------------------------------------

/// Leaves a freed block of `bytes` bytes full of NaN bits in the host block cache, so that the
/// next output of that size starts from it.
void poison_block(size_t bytes) {
  HostTensor t(TensorMeta{DType::kF32, {static_cast<int64_t>(bytes / 4)}});
  std::memset(t.data.data(), 0xff, t.data.size());
}

TEST(InterpreterFastPaths, KernelsWriteEveryElementOfAReusedBuffer) {
  std::mt19937 rng(77);
  const HostTensor x = random_f32({2, 16, 32, 32}, rng);  // 128 KiB: a cached block size
  const HostTensor w = random_f32({16, 16, 3, 3}, rng), w1 = random_f32({16, 16, 1, 1}, rng);
  const HostTensor wd = random_f32({16, 1, 3, 3}, rng);
  Attrs conv;
  conv.window.strides = {1, 1};
  conv.window.pads = {1, 1, 1, 1};
  conv.window.dilations = {1, 1};
  Attrs depthwise = conv;
  depthwise.window.groups = 16;
  Attrs conv1 = conv;
  conv1.window.pads = {0, 0, 0, 0};
  Attrs pool = conv;
  pool.window.kernel = {3, 3};
  Attrs cat;
  cat.axis = 1;
  Attrs last;
  last.axis = -1;
  Attrs sl;
  sl.axis = 1;
  sl.dims = {0, 16, 1};
  const HostTensor row = random_f32({1, 8}, rng), wide = random_f32({8, 16384}, rng);
  const HostTensor tall = random_f32({16384, 8}, rng), col = random_f32({8, 1}, rng);
  struct Case {
    OpKind op;
    std::vector<const HostTensor*> ins;
    Attrs attrs;
  };
  const std::vector<Case> cases = {
      {OpKind::Conv, {&x, &w}, conv},
      {OpKind::Conv, {&x, &w1}, conv1},
      {OpKind::Conv, {&x, &wd}, depthwise},
      {OpKind::MaxPool, {&x}, pool},
      {OpKind::Relu, {&x}, {}},
      {OpKind::Add, {&x, &x}, {}},
      {OpKind::Concat, {&x, &x}, cat},
      {OpKind::Softmax, {&x}, last},
      {OpKind::Slice, {&x}, sl},
      {OpKind::MatMul, {&x, &x}, {}},
      {OpKind::MatMul, {&row, &wide}, {}},
      {OpKind::MatMul, {&tall, &col}, {}},
  };
  for (const Case& c : cases) {
    host_memory::release_cached();
    const HostTensor clean = run(c.op, c.ins, c.attrs);  // from fresh, zeroed pages
    poison_block(clean.data.size());
    const HostTensor reused = run(c.op, c.ins, c.attrs);
    ASSERT_EQ(reused.data.size(), clean.data.size());
    EXPECT_EQ(std::memcmp(reused.data.data(), clean.data.data(), clean.data.size()), 0)
        << op_name(c.op) << ": an element was left as the buffer held it";
  }
  host_memory::release_cached();
}

}  // namespace
}  // namespace kiln
