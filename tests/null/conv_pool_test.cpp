// The ONNX-front-end ops on CPU tensors (the interpreter) against values computed by hand:
// pow, abs, sign, conv (1-D/2-D/3-D, padding, strides, dilations, groups, bias), max_pool and
// avg_pool (ceil_mode, count_include_pad, dilations), gather_nd (batch_dims, negative
// indices); shape-rule errors; and symbolic (dynamic) sizes through kiln::compile.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "expect_error.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor F(std::vector<float> v, Shape shape) {
  return Tensor::from_vector(v, std::move(shape));
}
Tensor I64(std::vector<int64_t> v, Shape shape) {
  return Tensor::from_vector(v, std::move(shape));
}
Tensor I32(std::vector<int32_t> v, Shape shape) {
  return Tensor::from_vector(v, std::move(shape));
}
/// 0, 1, ..., numel - 1 (plus `start`) as f32.
Tensor iota(Shape shape, float start = 0) {
  std::vector<float> v(static_cast<size_t>(numel(shape)));
  std::iota(v.begin(), v.end(), start);
  return F(v, std::move(shape));
}

void expect_values(const Tensor& t, DType dt, const Shape& shape, const std::vector<double>& want,
                   double tol = 1e-6) {
  EXPECT_EQ(t.dtype(), dt) << t.str();
  EXPECT_EQ(t.shape(), shape) << t.str();
  std::vector<double> got = t.to_doubles();
  ASSERT_EQ(got.size(), want.size()) << t.str();
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isinf(want[i]) || std::isnan(want[i]))
      EXPECT_TRUE(got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i])))
          << "element " << i << ": " << got[i];
    else
      EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::abs(want[i]))) << "element " << i;
  }
}

using test::expect_error;

TEST(OnnxOps, PowFloatSpecialCases) {
  Tensor a = F({2, -2, -2, 0, 0, NAN, 1, 4, -0.5f, 10}, {10});
  Tensor b = F({3, 3, 0.5f, 0, -1, 0, NAN, 0.5f, -2, -1}, {10});
  expect_values(pow(a, b), DType::kF32, {10}, {8, -8, kNaN, 1, kInf, 1, 1, 2, 4, 0.1});
  // Broadcasting, and promotion of an integer base with a float exponent.
  expect_values(pow(F({1, 2, 3}, {3, 1}), F({2, 3}, {1, 2})), DType::kF32, {3, 2},
                {1, 1, 4, 8, 9, 27});
  expect_values(pow(I32({2, 3}, {2}), F({0.5f, 2}, {2})), DType::kF32, {2}, {std::sqrt(2.0), 9});
}

TEST(OnnxOps, PowIntegerIsExact) {
  Tensor a = I64({2, -3, 5, 1, -1, -1, 2, 0, 3}, {9});
  Tensor b = I64({10, 3, 0, -5, -3, -2, -1, 0, 39}, {9});
  std::vector<int64_t> got = pow(a, b).to_vector<int64_t>();
  EXPECT_EQ(got, (std::vector<int64_t>{1024, -27, 1, 1, -1, 1, 0, 1, 4052555153018976267}));
  // i32: 3^21 wraps in 32 bits like repeated mul.
  EXPECT_EQ(pow(I32({3, 7}, {2}), I32({21, 2}, {2})).to_vector<int32_t>(),
            (std::vector<int32_t>{static_cast<int32_t>(10460353203ll & 0xffffffff), 49}));
  expect_error([] { pow(Tensor::full({2}, 1, DType::kBool), Tensor::full({2}, 1, DType::kBool)); },
               {"pow(", "bool"});
}

TEST(OnnxOps, AbsAndSign) {
  expect_values(abs(F({-1.5f, 0, 2, -0.0f, -INFINITY}, {5})), DType::kF32, {5},
                {1.5, 0, 2, 0, kInf});
  EXPECT_EQ(abs(I32({-3, 4, std::numeric_limits<int32_t>::min()}, {3})).to_vector<int32_t>(),
            (std::vector<int32_t>{3, 4, std::numeric_limits<int32_t>::min()}));
  expect_values(sign(F({-2, 0, 3, NAN}, {4})), DType::kF32, {4}, {-1, 0, 1, kNaN});
  EXPECT_EQ(sign(I64({-5, 0, 7}, {3})).to_vector<int64_t>(), (std::vector<int64_t>{-1, 0, 1}));
}

TEST(OnnxOps, Conv2dPaddingAndStrides) {
  Tensor x = iota({1, 1, 5, 5}), w = Tensor::full({1, 1, 3, 3}, 1.0);
  expect_values(conv(x, w, Tensor(), {}, {1, 1, 1, 1}), DType::kF32, {1, 1, 5, 5},
                {12,  21, 27, 33,  24,  33,  54,  63, 72,  51,  63,  99, 108,
                 117, 81, 93, 144, 153, 162, 111, 72, 111, 117, 123, 84});
  expect_values(conv(x, w), DType::kF32, {1, 1, 3, 3}, {54, 63, 72, 99, 108, 117, 144, 153, 162});
  expect_values(conv(iota({1, 1, 7, 5}), w, Tensor(), {2, 2}, {1, 1, 1, 1}), DType::kF32,
                {1, 1, 4, 3}, {12, 27, 24, 63, 108, 81, 123, 198, 141, 112, 177, 124});
  // Asymmetric pads (begin 0, end 1 on H; begin 1, end 0 on W) and a bias.
  expect_values(
      conv(iota({1, 1, 2, 2}), Tensor::full({1, 1, 2, 2}, 1.0), F({10}, {1}), {}, {0, 1, 1, 0}),
      DType::kF32, {1, 1, 2, 2}, {10 + 0 + 2, 10 + 0 + 1 + 2 + 3, 10 + 2, 10 + 2 + 3});
}

TEST(OnnxOps, Conv1dDilationGroupsAnd3d) {
  expect_values(conv(F({1, 2, 3, 4, 5}, {1, 1, 5}), F({1, -1}, {1, 1, 2}), Tensor(), {}, {}, {2}),
                DType::kF32, {1, 1, 3}, {-2, -2, -2});
  // Depthwise: two groups of one channel, two output channels per group.
  Tensor x = F({1, 2, 3, 10, 20, 30}, {1, 2, 3});
  Tensor w = F({2, -1, 3, 1}, {4, 1, 1});
  expect_values(conv(x, w, F({0, 0, 0, 100}, {4}), {2}, {}, {}, 2), DType::kF32, {1, 4, 2},
                {2, 6, -1, -3, 30, 90, 110, 130});
  // Two input channels summed; batch of two.
  Tensor xb = iota({2, 2, 3});
  expect_values(conv(xb, Tensor::full({1, 2, 2}, 1.0)), DType::kF32, {2, 1, 2},
                {0 + 1 + 3 + 4, 1 + 2 + 4 + 5, 6 + 7 + 9 + 10, 7 + 8 + 10 + 11});
  expect_values(conv(iota({1, 1, 2, 2, 2}), Tensor::full({1, 1, 2, 2, 2}, 1.0)), DType::kF32,
                {1, 1, 1, 1, 1}, {28});
}

TEST(OnnxOps, ConvErrors) {
  Tensor x = iota({1, 4, 5, 5});
  expect_error(
      [&] {
        conv(x, Tensor::full({2, 3, 3, 3}, 1.0));
      },
      {"conv(f32[1, 4, 5, 5], f32[2, 3, 3, 3])", "weight dim 1 is 3", "conv_pool_test"});
  expect_error(
      [&] {
        conv(x, Tensor::full({3, 2, 3, 3}, 1.0), Tensor(), {}, {}, {}, 2);
      },
      {"divisible by groups 2"});
  expect_error([&] { conv(x, Tensor::full({2, 4, 7, 7}, 1.0)); }, {"larger than the padded input"});
  expect_error(
      [&] {
        conv(x, Tensor::full({2, 4, 3, 3}, 1.0), Tensor(), {1});
      },
      {"strides [1] must have 2 entries"});
  expect_error([&] { conv(iota({4, 5}), Tensor::full({2, 4}, 1.0)); }, {"1 to 3 spatial dims"});
  expect_error(
      [&] {
        conv(x, Tensor::full({2, 4, 3, 3}, 1.0), Tensor::full({3}, 0.0));
      },
      {"bias must be [2]"});
}

TEST(OnnxOps, MaxPool) {
  Tensor x = iota({1, 1, 4, 4}, 1);
  expect_values(max_pool(x, {2, 2}, {2, 2}), DType::kF32, {1, 1, 2, 2}, {6, 8, 14, 16});
  expect_values(max_pool(x, {3, 3}, {2, 2}, {}, {}, true), DType::kF32, {1, 1, 2, 2},
                {11, 12, 15, 16});
  expect_values(max_pool(x, {2, 2}, {1, 1}, {}, {2, 2}), DType::kF32, {1, 1, 2, 2},
                {11, 12, 15, 16});
  // ceil_mode drops a window that would start in the end padding.
  expect_values(max_pool(iota({1, 1, 2, 2}, 1), {1, 1}, {2, 2}, {}, {}, true), DType::kF32,
                {1, 1, 1, 1}, {1});
  expect_values(max_pool(F({-1, -5, -3}, {1, 1, 3}), {3}, {}, {1, 1}), DType::kF32, {1, 1, 3},
                {-1, -1, -3});
  expect_values(max_pool(F({1, NAN, 3, 4}, {1, 1, 4}), {2}, {2}), DType::kF32, {1, 1, 2},
                {kNaN, 4});
  EXPECT_EQ(max_pool(I64({3, -7, 9, 2, 5, 1}, {1, 2, 3}), {2}).to_vector<int64_t>(),
            (std::vector<int64_t>{3, 9, 5, 5}));
  expect_values(max_pool(iota({1, 1, 2, 2, 2}), {2, 2, 2}), DType::kF32, {1, 1, 1, 1, 1}, {7});
  expect_error([&] { max_pool(x, {2}); }, {"max_pool(f32[1, 1, 4, 4])", "kernel_shape [2]"});
  expect_error([&] { max_pool(x, {2, 2}, {0, 1}); }, {"stride 0 must be >= 1"});
}

// ceil_mode lets a window overhang the (padded) input by up to stride - 1 positions, as ONNX and
// PyTorch do (squeezenet's last 3-wide, stride-2 pool over a 2-wide map): one output, the
// window clipped to the input.
TEST(OnnxOps, CeilModeWindowOverhangingTheInput) {
  Tensor x = iota({1, 1, 2, 5}, 1);  // rows 1..5 and 6..10
  expect_values(max_pool(x, {3, 3}, {2, 2}, {}, {}, true), DType::kF32, {1, 1, 1, 2}, {8, 10});
  EXPECT_EQ(max_pool_indices(x, {3, 3}, {2, 2}, {}, {}, true).to_vector<int64_t>(),
            (std::vector<int64_t>{7, 9}));
  for (bool include : {false, true})  // no pads: both count the 6 positions inside the input
    expect_values(avg_pool(x, {3, 3}, {2, 2}, {}, {}, true, include), DType::kF32, {1, 1, 1, 2},
                  {27 / 6.0, 39 / 6.0});
  // A begin pad: the window covers the pad, both inputs and one position past the end.
  expect_values(avg_pool(F({1, 2}, {1, 1, 2}), {4}, {2}, {1, 0}, {}, true, true), DType::kF32,
                {1, 1, 1}, {1.0});
  // Without ceil_mode, or overhanging by stride or more, the window does not fit.
  expect_error([&] { max_pool(x, {3, 3}, {2, 2}); }, {"larger than the padded input (2 + pads"});
  expect_error(
      [&] {
        max_pool(x, {3, 3}, {1, 1}, {}, {}, true);
      },
      {"larger than the padded input (2 + pads 0 + 0) by more than stride - 1"});
  expect_error([&] { avg_pool(x, {4, 1}, {2, 1}, {}, {}, true); }, {"by more than stride - 1"});

  // Symbolic sizes: a trace where the window fits serves the sizes where it overhangs (the
  // guard allows stride - 1 positions less), with the eager values.
  auto fn = [](const Tensor& t) {
    return max_pool(t, {3, 3}, {2, 2}, {}, {}, true) +
           avg_pool(t, {3, 3}, {2, 2}, {}, {}, true, true);
  };
  auto compiled = compile(fn, {.name = "ceil_overhang", .dynamic = Dynamic::kTrue});
  for (Shape s : {Shape{2, 3, 9, 8}, Shape{3, 3, 2, 5}, Shape{2, 3, 7, 2}, Shape{2, 3, 2, 2}}) {
    Tensor t = iota(s, -40);
    Tensor want = fn(t), got = compiled(t);
    ASSERT_EQ(got.shape(), want.shape()) << shape_str(s);
    expect_values(got, DType::kF32, want.shape(), want.to_doubles());
  }
  EXPECT_EQ(compiled.stats().compiles, 1u);
}

TEST(OnnxOps, MaxPoolIndices) {
  Tensor x = iota({1, 1, 5, 5}, 1);
  Tensor z = max_pool_indices(x, {5, 5}, {}, {2, 2, 2, 2});
  EXPECT_EQ(z.dtype(), DType::kI64);
  EXPECT_EQ(z.to_vector<int64_t>(),
            (std::vector<int64_t>{12, 13, 14, 14, 14, 17, 18, 19, 19, 19, 22, 23, 24,
                                  24, 24, 22, 23, 24, 24, 24, 22, 23, 24, 24, 24}));
  // storage_order 1: spatial dims flattened column-major.
  EXPECT_EQ(max_pool_indices(x, {2, 2}, {2, 2}, {}, {}, false, 1).to_vector<int64_t>(),
            (std::vector<int64_t>{6, 16, 8, 18}));
  // The first maximum in window order; indices count N and C too.
  Tensor t = F({5, 5, 1, 2, 7, 0, 7, 7}, {2, 1, 4});
  EXPECT_EQ(max_pool_indices(t, {2}, {2}).to_vector<int64_t>(), (std::vector<int64_t>{0, 3, 4, 6}));
  EXPECT_EQ(max_pool_indices(F({1, NAN, NAN, 4}, {1, 1, 4}), {4}).to_vector<int64_t>(),
            (std::vector<int64_t>{1}));
  expect_error(
      [&] {
        max_pool_indices(x, {2, 2}, {}, {}, {}, false, 2);
      },
      {"storage_order 2 must be 0 or 1"});
}

TEST(OnnxOps, AvgPool) {
  Tensor x = iota({1, 1, 3, 3}, 1);
  expect_values(avg_pool(x, {2, 2}), DType::kF32, {1, 1, 2, 2}, {3, 4, 6, 7});
  // Pads: the corner window holds 4 input elements of 9 positions.
  Tensor ex = avg_pool(x, {3, 3}, {1, 1}, {1, 1, 1, 1});
  expect_values(ex, DType::kF32, {1, 1, 3, 3}, {3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7});
  Tensor in = avg_pool(x, {3, 3}, {1, 1}, {1, 1, 1, 1}, {}, false, true);
  expect_values(
      in, DType::kF32, {1, 1, 3, 3},
      {12 / 9.0, 21 / 9.0, 16 / 9.0, 27 / 9.0, 45 / 9.0, 33 / 9.0, 24 / 9.0, 39 / 9.0, 28 / 9.0});
  expect_values(avg_pool(iota({1, 1, 4, 4}, 1), {3, 3}, {2, 2}, {}, {}, true), DType::kF32,
                {1, 1, 2, 2}, {6, 7.5, 12, 13.5});
  // ceil_mode with count_include_pad: the extra positions past the end pad never count.
  expect_values(avg_pool(F({1, 2, 3, 4, 5}, {1, 1, 5}), {3}, {2}, {1, 0}, {}, true, true),
                DType::kF32, {1, 1, 3}, {3 / 3.0, 9 / 3.0, 9 / 2.0});
  expect_values(avg_pool(F({1, 2, 3, 4, 5}, {1, 1, 5}), {2}, {2}), DType::kF32, {1, 1, 2},
                {1.5, 3.5});
  expect_error([] { avg_pool(I64({1, 2}, {1, 1, 2}), {1}); }, {"floating-point"});
}

TEST(OnnxOps, GatherND) {
  Tensor d2 = F({0, 1, 2, 3}, {2, 2});
  expect_values(gather_nd(d2, I64({0, 0, 1, 1}, {2, 2})), DType::kF32, {2}, {0, 3});
  expect_values(gather_nd(d2, I64({1, 0}, {2, 1})), DType::kF32, {2, 2}, {2, 3, 0, 1});
  expect_values(gather_nd(d2, I32({-1, -2}, {1, 2})), DType::kF32, {1}, {2});
  Tensor d3 = iota({2, 2, 2});
  expect_values(gather_nd(d3, I64({0, 1, 1, 0}, {2, 2})), DType::kF32, {2, 2}, {2, 3, 4, 5});
  expect_values(gather_nd(d3, I64({0, 1, 1, 0}, {2, 1, 2})), DType::kF32, {2, 1, 2}, {2, 3, 4, 5});
  expect_values(gather_nd(d3, I64({1, 0}, {2, 1}), 1), DType::kF32, {2, 2}, {2, 3, 4, 5});
  expect_values(gather_nd(d3, I64({1, 0, 0, 1}, {2, 1, 2}), 1), DType::kF32, {2, 1}, {2, 5});
  expect_error([&] { gather_nd(d2, I64({2, 0}, {1, 2})); }, {"index 2 is out of range [-2, 2)"});
  expect_error([&] { gather_nd(d2, I64({0, 0, 0}, {1, 3})); }, {"last dim (3)"});
  expect_error(
      [&] {
        gather_nd(d3, I64({0, 0, 0}, {3, 1}), 1);
      },
      {"gather_nd(", "batch dim 0 differs"});
}

TEST(OnnxOps, SymbolicSizesMatchEager) {
  // One compiled graph over symbolic N and spatial sizes; each call must equal the eager ops.
  // The weight is captured (static); the channel count specialises through it.
  Tensor w = iota({3, 2, 3, 2}, -8);
  auto fn = [w](const Tensor& x) {
    Tensor c = relu(conv(x, w, Tensor(), {2, 1}, {1, 0, 2, 1}, {1, 2}));
    return avg_pool(max_pool(c, {2, 2}, {1, 2}, {}, {}, true), {2, 1}, {2, 1}, {0, 0, 1, 0}, {},
                    true, true);
  };
  auto compiled = compile(fn, {.name = "sym_window", .dynamic = Dynamic::kTrue});
  for (Shape s : {Shape{3, 2, 9, 8}, Shape{4, 2, 12, 7}, Shape{5, 2, 10, 11}}) {
    Tensor x = iota(s, -50);
    Tensor want = fn(x), got = compiled(x);
    ASSERT_EQ(got.shape(), want.shape()) << shape_str(s);
    expect_values(got, DType::kF32, want.shape(), want.to_doubles());
  }
  EXPECT_EQ(compiled.stats().compiles, 1u);
  auto gnd = compile([](const Tensor& d, const Tensor& i) { return gather_nd(d, i, 1) * 2.0; },
                     {.name = "sym_gather_nd", .dynamic = Dynamic::kTrue});
  for (Dim n : {3, 5}) {
    Tensor d = iota({n, 4, 6});
    std::vector<int64_t> idx;
    for (Dim i = 0; i < n * 2; ++i) idx.push_back(i % 4 - 2);
    Tensor ix = I64(idx, {n, 2, 1});
    expect_values(gnd(d, ix), DType::kF32, {n, 2, 6}, (gather_nd(d, ix, 1) * 2.0).to_doubles());
  }
}

}  // namespace
}  // namespace kiln
