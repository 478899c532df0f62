// conv_transpose on CPU tensors (the interpreter): values by hand (strides, output_padding,
// pads of either sign, dilations, groups, bias, 1-D to 3-D), the adjoint identity against conv
// on random data (<conv_transpose(x, w), y> == <x, conv(y, w)> for the same weight and window),
// shape-rule errors, and symbolic sizes through kiln::compile.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "expect_error.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

using V = std::vector<int64_t>;

Tensor F(std::vector<float> v, Shape shape) {
  return Tensor::from_vector(v, std::move(shape));
}
Tensor iota(Shape shape) {
  std::vector<float> v(static_cast<size_t>(numel(shape)));
  std::iota(v.begin(), v.end(), 0.0f);
  return F(v, std::move(shape));
}
Tensor random(Shape shape, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(static_cast<size_t>(numel(shape)));
  for (float& x : v) x = u(rng);
  return F(v, std::move(shape));
}

void expect_values(const Tensor& t, const Shape& shape, const std::vector<double>& want) {
  EXPECT_EQ(t.shape(), shape) << t.str();
  std::vector<double> got = t.to_doubles();
  ASSERT_EQ(got.size(), want.size()) << t.str();
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-5 * std::max(1.0, std::abs(want[i]))) << "element " << i;
}

using test::expect_error;

TEST(ConvTranspose, OneDimByHand) {
  // ONNX's example: x = [0, 1, 2], two output channels of ones.
  expect_values(conv_transpose(F({0, 1, 2}, {1, 1, 3}), Tensor::full({1, 2, 3}, 1.0)), {1, 2, 5},
                {0, 1, 3, 3, 2, 0, 1, 3, 3, 2});
  // x = [1, 2], w = [1, 10], stride 3: x0 lands at 0..1, x1 at 3..4; output_padding 1 adds a
  // last position; the bias fills the positions no tap reaches.
  Tensor x = F({1, 2}, {1, 1, 2}), w = F({1, 10}, {1, 1, 2}), b = F({0.5}, {1});
  expect_values(conv_transpose(x, w, b, {3}, {}, {}, 1, {1}), {1, 1, 6},
                {1.5, 10.5, 0.5, 2.5, 20.5, 0.5});
  expect_values(conv_transpose(x, w, b, {3}, {1, 2}, {}, 1, {1}), {1, 1, 3}, {10.5, 0.5, 2.5});
  // A negative pad extends the output.
  expect_values(conv_transpose(x, w, b, {3}, {-1, 0}), {1, 1, 6}, {0.5, 1.5, 10.5, 0.5, 2.5, 20.5});
  // Dilation 2: taps at i and i + 2.
  expect_values(conv_transpose(x, w, Tensor(), {}, {}, {2}), {1, 1, 4}, {1, 2, 10, 20});
}

TEST(ConvTranspose, DilationsGroupsAnd3dByHand) {
  // ONNX's dilations example.
  Tensor x = F({3, 8, 1, 9, 5, 7, 3, 2, 6}, {1, 1, 3, 3}), w = F({7, 2, 1, 9}, {1, 1, 2, 2});
  expect_values(conv_transpose(x, w, Tensor(), {}, {}, {2, 2}), {1, 1, 5, 5},
                {21, 56, 13, 16, 2,  63, 35, 67, 10, 14, 24, 22, 76,
                 76, 21, 9,  5,  88, 45, 63, 3,  2,  33, 18, 54});
  // Two groups: channel 0 feeds output channels 0 and 1, channel 1 output channels 2 and 3.
  Tensor xg = F({1, 2, 10, 20}, {1, 2, 2});
  Tensor wg = F({1, 1, 2, 0, 3, 0, 0, -1}, {2, 2, 2});
  expect_values(conv_transpose(xg, wg, F({0, 0, 0, 100}, {4}), {}, {}, {}, 2), {1, 4, 3},
                {1, 3, 2, 2, 4, 0, 30, 60, 0, 100, 90, 80});
  // 3-D: a 2x2x2 window of ones over one element spreads it over a 2x2x2 cube.
  expect_values(conv_transpose(F({5}, {1, 1, 1, 1, 1}), Tensor::full({1, 1, 2, 2, 2}, 1.0)),
                {1, 1, 2, 2, 2}, {5, 5, 5, 5, 5, 5, 5, 5});
}

double dot(const Tensor& a, const Tensor& b) {
  std::vector<double> x = a.to_doubles(), y = b.to_doubles();
  EXPECT_EQ(x.size(), y.size());
  double s = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) s += x[i] * y[i];
  return s;
}

TEST(ConvTranspose, IsTheAdjointOfConv) {
  struct Case {
    Shape x, w;
    V s, p, d, op;
    int64_t groups;
  };
  const std::vector<Case> cases = {
      {{2, 3, 7}, {3, 4, 3}, {2}, {1, 0}, {1}, {1}, 1},
      {{1, 4, 5, 6}, {4, 3, 3, 2}, {2, 3}, {1, 2, 0, 1}, {1, 2}, {0, 2}, 2},
      {{1, 6, 4, 4}, {6, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {2, 1}, {0, 0}, 6},
      {{2, 2, 3, 4, 3}, {2, 3, 2, 3, 2}, {2, 1, 2}, {0, 1, 1, 1, 0, 0}, {1, 1, 2}, {1, 0, 0}, 1},
  };
  std::mt19937 rng(7);
  for (const Case& c : cases) {
    Tensor x = random(c.x, rng), w = random(c.w, rng);
    Tensor t = conv_transpose(x, w, Tensor(), c.s, c.p, c.d, c.groups, c.op);
    Tensor y = random(t.shape(), rng);
    Tensor back = conv(y, w, Tensor(), c.s, c.p, c.d, c.groups);
    ASSERT_EQ(back.shape(), x.shape()) << shape_str(c.x);
    const double lhs = dot(t, y), rhs = dot(x, back);
    EXPECT_NEAR(lhs, rhs, 1e-4 * std::max(1.0, std::abs(lhs))) << shape_str(c.x);
  }
}

TEST(ConvTranspose, Errors) {
  Tensor x = iota({1, 4, 3, 3});
  expect_error(
      [&] {
        conv_transpose(x, Tensor::full({3, 2, 3, 3}, 1.0));
      },
      {"conv_transpose(f32[1, 4, 3, 3], f32[3, 2, 3, 3])", "weight dim 0 is 3"});
  expect_error(
      [&] {
        conv_transpose(x, Tensor::full({4, 2, 3, 3}, 1.0), Tensor(), {}, {}, {}, 3);
      },
      {"divisible by groups 3"});
  expect_error(
      [&] {
        conv_transpose(x, Tensor::full({4, 2, 3, 3}, 1.0), Tensor::full({3}, 0.0), {}, {}, {}, 2);
      },
      {"bias must be [4]"});
  expect_error(
      [&] {
        conv_transpose(x, Tensor::full({4, 2, 3, 3}, 1.0), Tensor(), {1});
      },
      {"strides [1] must have 2 entries"});
  expect_error(
      [&] {
        conv_transpose(x, Tensor::full({4, 2, 3, 3}, 1.0), Tensor(), {}, {3, 3, 3, 3});
      },
      {"trim more than the full output"});
  expect_error(
      [&] {
        conv_transpose(x, Tensor::full({4, 2, 3, 3}, 1.0), Tensor(), {}, {}, {}, 1, {-1, 0});
      },
      {"output_padding [-1, 0] is negative"});
  expect_error(
      [&] {
        conv_transpose(iota({4, 5}), Tensor::full({5, 2}, 1.0));
      },
      {"1 to 3 spatial dims"});
  expect_error(
      [&] {
        conv_transpose(Tensor::full({1, 1, 2}, 1, DType::kI32), Tensor::full({1, 1, 2}, 1.0));
      },
      {"floating-point"});
}

TEST(ConvTranspose, SymbolicSizesMatchEager) {
  std::mt19937 rng(3);
  Tensor w = random({2, 3, 3, 2}, rng), b = random({3}, rng);
  auto fn = [w, b](const Tensor& x) {
    return conv_transpose(x, w, b, {2, 1}, {1, 0, 0, 1}, {1, 2}, 1, {1, 0});
  };
  auto compiled = compile(fn, {.name = "sym_conv_transpose", .dynamic = Dynamic::kTrue});
  for (Shape s : {Shape{3, 2, 4, 5}, Shape{4, 2, 6, 3}, Shape{5, 2, 5, 7}}) {
    Tensor x = random(s, rng);
    Tensor got = compiled(x), want = fn(x);
    ASSERT_EQ(got.shape(), want.shape());
    std::vector<double> g = got.to_doubles(), e = want.to_doubles();
    for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], e[i], 1e-5) << shape_str(s);
  }
  EXPECT_EQ(compiled.stats().compiles, 1u);
}

}  // namespace
}  // namespace kiln
