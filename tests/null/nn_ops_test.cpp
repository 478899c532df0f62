// The transformer ops through the public API on CPU tensors, against values computed by hand:
// matmul, softmax, layer norm, gather/index_select/embedding, concat, slice, squeeze, triu/tril,
// arange, full/ones/zeros, masked_fill, argmax/argmin/min, erf/silu/gelu_tanh; shape-rule errors
// and size-0 / size-1 cases. Random-data comparisons and compile paths: nn_ops_random_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "expect_error.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor F(std::vector<float> v, Shape shape) {
  return Tensor::from_vector(v, std::move(shape));
}
Tensor I64(std::vector<int64_t> v, Shape shape) {
  return Tensor::from_vector(v, std::move(shape));
}
Tensor B(std::vector<uint8_t> v, Shape shape) {
  return Tensor::from_bytes(DType::kBool, std::move(shape), v.data(), v.size());
}

void expect_values(const Tensor& t, DType dt, const Shape& shape, const std::vector<double>& want,
                   double tol = 1e-6) {
  EXPECT_EQ(t.dtype(), dt) << t.str();
  EXPECT_EQ(t.shape(), shape) << t.str();
  std::vector<double> got = t.to_doubles();
  ASSERT_EQ(got.size(), want.size()) << t.str();
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isinf(want[i]) || std::isnan(want[i]))
      EXPECT_TRUE(got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i]))) << i;
    else
      EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::abs(want[i]))) << "element " << i;
  }
}

/// Runs fn, expects a kiln::Error whose message contains every one of `parts`.
using test::expect_error;

TEST(NnOps, MatMulKnownValues) {
  Tensor a = F({1, 2, 3, 4, 5, 6}, {2, 3}), b = F({7, 8, 9, 10, 11, 12}, {3, 2});
  expect_values(matmul(a, b), DType::kF32, {2, 2}, {58, 64, 139, 154});
  expect_values(matmul(F({1, 2, 3}, {3}), F({4, 5, 6}, {3})), DType::kF32, {}, {32});
  expect_values(matmul(F({1, 2}, {2}), F({1, 2, 3, 4, 5, 6}, {2, 3})), DType::kF32, {3},
                {9, 12, 15});
  expect_values(matmul(F({1, 2, 3, 4}, {2, 2}), F({1, 1}, {2})), DType::kF32, {2}, {3, 7});
  // b stored [2, 2] = [[1, 2], [3, 4]], used transposed.
  expect_values(matmul(F({1, 2}, {1, 2}), F({1, 2, 3, 4}, {2, 2}), false, true), DType::kF32,
                {1, 2}, {5, 11});
  Tensor ia = Tensor::from_vector<int32_t>({1, 2, 3, 4}, {2, 2});
  Tensor ib = Tensor::from_vector<int32_t>({5, 6, 7, 8}, {2, 2});
  expect_values(matmul(ia, ib), DType::kI32, {2, 2}, {19, 22, 43, 50});
  // Size 0: M = 0, and K = 0 (an empty sum is 0).
  expect_values(matmul(F({}, {0, 3}), F({1, 2, 3, 4, 5, 6}, {3, 2})), DType::kF32, {0, 2}, {});
  expect_values(matmul(F({}, {2, 0}), F({}, {0, 3})), DType::kF32, {2, 3}, {0, 0, 0, 0, 0, 0});
}

TEST(NnOps, MatMulErrorsNameBothShapes) {
  expect_error(
      [] {
        matmul(F({1, 2, 3, 4, 5, 6}, {2, 3}), Tensor::full({4, 5}, 1));
      },
      {"matmul", "f32[2, 3]", "f32[4, 5]", "K=3", "K=4"});
  expect_error(
      [] {
        matmul(Tensor::full({2, 2, 3}, 1), Tensor::full({3, 3, 2}, 1));
      },
      {"batch dims", "not broadcastable"});
  expect_error([] { matmul(Tensor::full({2}, 1), Tensor::full({}, 1)); }, {"at least 1-D"});
}

TEST(NnOps, SoftmaxAndLogSoftmaxKnownValues) {
  Tensor x = F({1, 2, 3}, {3});
  expect_values(softmax(x, 0), DType::kF32, {3}, {0.09003057, 0.24472847, 0.66524096});
  expect_values(log_softmax(x, -1), DType::kF32, {3}, {-2.40760596, -1.40760596, -0.40760596});
  // Stable for large inputs (exp(1000) overflows without subtracting the max).
  expect_values(softmax(F({1000, 1000}, {2}), 0), DType::kF32, {2}, {0.5, 0.5});
  expect_values(log_softmax(F({1000, 0}, {2}), 0), DType::kF32, {2}, {0, -1000});
  expect_values(softmax(F({0, 1, 0, 1}, {2, 2}), 0), DType::kF32, {2, 2}, {0.5, 0.5, 0.5, 0.5});
  expect_values(softmax(F({5}, {1}), 0), DType::kF32, {1}, {1});  // size 1
  expect_values(softmax(F({}, {0, 4}), 1), DType::kF32, {0, 4}, {});
  expect_values(softmax(F({-INFINITY, 0}, {2}), 0), DType::kF32, {2}, {0, 1});
  expect_error(
      [] {
        softmax(Tensor::full({2, 2}, 1), 2);
      },
      {"softmax(f32[2, 2])", "axis 2 is out of range for rank 2"});
  expect_error([] { softmax(Tensor::full({2}, 1, DType::kI32), 0); }, {"floating-point"});
}

TEST(NnOps, LayerNormKnownValues) {
  Tensor x = F({1, 2, 3, 4}, {1, 4});
  const double s = 1 / std::sqrt(1.25);
  expect_values(layer_norm(x, Tensor::full({4}, 1), Tensor::full({4}, 0), 1, 0.0), DType::kF32,
                {1, 4}, {-1.5 * s, -0.5 * s, 0.5 * s, 1.5 * s});
  expect_values(layer_norm(x, F({2, 2, 2, 2}, {4}), F({1, 0, 0, 1}, {4}), 1, 0.0), DType::kF32,
                {1, 4}, {1 - 3 * s, -s, s, 1 + 3 * s});
  // Two normalised dims: the whole [2, 2] block is one row.
  expect_values(
      layer_norm(F({1, 2, 3, 4}, {2, 2}), Tensor::full({2, 2}, 1), Tensor::full({2, 2}, 0), 2, 0.0),
      DType::kF32, {2, 2}, {-1.5 * s, -0.5 * s, 0.5 * s, 1.5 * s});
  // A size-1 row has zero variance: the result is the bias (eps keeps it finite).
  expect_values(layer_norm(F({7}, {1, 1}), F({3}, {1}), F({0.5}, {1})), DType::kF32, {1, 1}, {0.5});
  expect_error(
      [] {
        layer_norm(Tensor::full({2, 4}, 1), Tensor::full({3}, 1), Tensor::full({4}, 0));
      },
      {"weight must have the normalised shape [4], got [3]"});
  expect_error(
      [] { layer_norm(Tensor::full({4}, 1), Tensor::full({4}, 1), Tensor::full({4}, 0), 2); },
      {"normalized_dims 2 is out of range for rank 1"});
}

TEST(NnOps, GatherIndexSelectEmbedding) {
  Tensor x = F({1, 2, 3, 4}, {2, 2});
  expect_values(gather(x, 1, I64({0, 0, 1, 0}, {2, 2})), DType::kF32, {2, 2}, {1, 1, 4, 3});
  expect_values(gather(x, 0, Tensor::from_vector<int32_t>({1, 0}, {1, 2})), DType::kF32, {1, 2},
                {3, 2});
  Tensor w = F({1, 2, 3, 4, 5, 6}, {3, 2});
  expect_values(index_select(w, 0, I64({2, 0}, {2})), DType::kF32, {2, 2}, {5, 6, 1, 2});
  expect_values(index_select(w, 1, Tensor::from_vector<int32_t>({1}, {1})), DType::kF32, {3, 1},
                {2, 4, 6});
  expect_values(index_select(w, 0, I64({}, {0})), DType::kF32, {0, 2}, {});
  expect_values(embedding(w, I64({2, 0, 1, 1}, {2, 2})), DType::kF32, {2, 2, 2},
                {5, 6, 1, 2, 3, 4, 3, 4});
  expect_error(
      [&] {
        index_select(w, 0, I64({0, 3}, {2}));
      },
      {"index 3 is out of range for dim 0 of size 3"});
  expect_error(
      [&] {
        gather(x, 1, I64({0, -1, 0, 0}, {2, 2}));
      },
      {"index -1 is out of range for dim 1 of size 2"});
  expect_error([&] { index_select(w, 0, F({0}, {1})); }, {"indices must be i32 or i64"});
  expect_error([&] { gather(w, 2, I64({0}, {1, 1})); }, {"axis 2 is out of range for rank 2"});
}

TEST(NnOps, ConcatAndSlice) {
  expect_values(concat({F({1, 2}, {1, 2}), F({3, 4, 5, 6}, {2, 2})}, 0), DType::kF32, {3, 2},
                {1, 2, 3, 4, 5, 6});
  expect_values(concat({F({1, 2}, {2, 1}), F({3, 4, 5, 6}, {2, 2})}, -1), DType::kF32, {2, 3},
                {1, 3, 4, 2, 5, 6});
  Tensor mixed = concat({Tensor::from_vector<int32_t>({1}, {1}), F({2.5}, {1}), F({}, {0})}, 0);
  expect_values(mixed, DType::kF32, {2}, {1, 2.5});
  expect_values(concat({I64({7}, {1})}, 0), DType::kI64, {1}, {7});
  expect_error(
      [] {
        concat({Tensor::full({2, 3}, 1), Tensor::full({3, 3}, 1)}, 1);
      },
      {"input 1 has shape [3, 3]", "input 0's [2, 3] outside axis 1"});
  expect_error([] { concat({Tensor::full({2}, 1), Tensor::full({2, 1}, 1)}, 0); }, {"input 1"});

  Tensor r = arange(0, 10);
  expect_values(slice(r, 0, 2, 8, 3), DType::kI64, {2}, {2, 5});
  expect_values(slice(r, 0, -3, 100), DType::kI64, {3}, {7, 8, 9});
  expect_values(slice(r, 0, -100, 2), DType::kI64, {2}, {0, 1});
  expect_values(slice(r, 0, 5, 2), DType::kI64, {0}, {});
  expect_values(slice(r, 0, 9, 10), DType::kI64, {1}, {9});
  Tensor m = F({1, 2, 3, 4, 5, 6}, {2, 3});
  expect_values(slice(m, 1, 1, 3), DType::kF32, {2, 2}, {2, 3, 5, 6});
  expect_values(slice(m, -2, 1, 2), DType::kF32, {1, 3}, {4, 5, 6});
  // Rows of zero elements: nothing to copy (the UBSan build checks no null pointer is copied).
  expect_values(slice(Tensor::full({3, 0}, 1), 0, 0, 2), DType::kF32, {2, 0}, {});
  expect_error([&] { slice(m, 0, 0, 1, 0); }, {"step must be positive"});
  expect_error([&] { slice(m, 3, 0, 1); }, {"axis 3 is out of range for rank 2"});
}

TEST(NnOps, SqueezeUnsqueezeAreReshapes) {
  Tensor x = F({1, 2, 3}, {1, 3});
  EXPECT_EQ(squeeze(x, 0).shape(), (Shape{3}));
  EXPECT_EQ(squeeze(x, 1).shape(), (Shape{1, 3}));  // not size 1: unchanged
  EXPECT_EQ(unsqueeze(x, -1).shape(), (Shape{1, 3, 1}));
  EXPECT_EQ(unsqueeze(x, 0).shape(), (Shape{1, 1, 3}));
  expect_values(unsqueeze(squeeze(x, 0), 1), DType::kF32, {3, 1}, {1, 2, 3});
  expect_error([&] { unsqueeze(x, 3); }, {"axis 3 is out of range"});
}

TEST(NnOps, TriuTril) {
  Tensor m = F({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  expect_values(triu(m), DType::kF32, {3, 3}, {1, 2, 3, 0, 5, 6, 0, 0, 9});
  expect_values(triu(m, 1), DType::kF32, {3, 3}, {0, 2, 3, 0, 0, 6, 0, 0, 0});
  expect_values(tril(m), DType::kF32, {3, 3}, {1, 0, 0, 4, 5, 0, 7, 8, 9});
  expect_values(tril(m, -1), DType::kF32, {3, 3}, {0, 0, 0, 4, 0, 0, 7, 8, 0});
  expect_values(tril(I64({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2})), DType::kI64, {2, 2, 2},
                {1, 0, 3, 4, 5, 0, 7, 8});
  expect_values(triu(F({1, 2, 3, 4, 5, 6}, {2, 3}), -1), DType::kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  // Causal mask: ones above the diagonal.
  Tensor mask = gt(triu(ones({3, 3}), 1), scalar(0));
  expect_values(mask, DType::kBool, {3, 3}, {0, 1, 1, 0, 0, 1, 0, 0, 0});
  expect_error([] { triu(Tensor::full({3}, 1)); }, {"needs at least 2 dims"});
}

TEST(NnOps, ArangeFullMaskedFill) {
  expect_values(arange(0, 5), DType::kI64, {5}, {0, 1, 2, 3, 4});
  expect_values(arange(1, 2, 0.25, DType::kF32), DType::kF32, {4}, {1, 1.25, 1.5, 1.75});
  expect_values(arange(5, 0, -2), DType::kI64, {3}, {5, 3, 1});
  expect_values(arange(0, 0), DType::kI64, {0}, {});
  expect_values(arange(3, 0), DType::kI64, {0}, {});
  expect_error([] { arange(0, 1, 0); }, {"step must be non-zero"});
  expect_values(ones({2}), DType::kF32, {2}, {1, 1});
  expect_values(zeros({2, 1}, DType::kI32), DType::kI32, {2, 1}, {0, 0});
  expect_values(full({1}, 2.5, DType::kF16), DType::kF16, {1}, {2.5});
  Tensor mask = B({1, 0, 1}, {3});
  expect_values(masked_fill(F({1, 2, 3}, {3}), mask, -kInf), DType::kF32, {3}, {-kInf, 2, -kInf});
}

TEST(NnOps, ArgMaxArgMinMin) {
  Tensor x = F({1, 3, 3, 5, 0, 5}, {2, 3});
  expect_values(argmax(x, 1), DType::kI64, {2}, {1, 0});  // first index on ties
  expect_values(argmin(x, 1), DType::kI64, {2}, {0, 1});
  expect_values(argmax(x, 0, true), DType::kI64, {1, 3}, {1, 0, 1});
  expect_values(argmax(x, -1, true), DType::kI64, {2, 1}, {1, 0});
  expect_values(argmax(F({1, NAN, 3, NAN}, {4}), 0), DType::kI64, {}, {1});
  expect_values(argmin(I64({4, -2, 7, -2}, {4}), 0), DType::kI64, {}, {1});
  expect_values(argmax(F({9}, {1}), 0), DType::kI64, {}, {0});
  expect_error([] { argmax(Tensor::full({0, 2}, 1), 0); }, {"argmax over an empty axis"});
  expect_values(min(x, {1}), DType::kF32, {2}, {1, 0});
  expect_values(min(x, {0, 1}), DType::kF32, {}, {0});
  expect_values(min(I64({4, -2, 7}, {3}), {0}, true), DType::kI64, {1}, {-2});
  Tensor b = B({1, 0, 1, 1}, {2, 2});
  expect_values(min(b, {1}), DType::kBool, {2}, {0, 1});
  expect_values(min(F({1, NAN}, {2}), {0}), DType::kF32, {}, {NAN});
  expect_error([] { min(Tensor::full({2, 0}, 1), {1}); }, {"min over an empty axis"});
}

TEST(NnOps, ErfSiluGeluTanh) {
  Tensor x = F({-1, 0, 0.5, 1}, {4});
  expect_values(erf(x), DType::kF32, {4}, {-0.8427007929, 0, 0.5204998778, 0.8427007929});
  expect_values(silu(x), DType::kF32, {4}, {-0.2689414214, 0, 0.3112296867, 0.7310585786});
  expect_values(gelu_tanh(x), DType::kF32, {4}, {-0.1588080094, 0, 0.3457140067, 0.8411919906});
  expect_values(silu(Tensor::from_vector<int32_t>({1}, {1})), DType::kF32, {1}, {0.7310585786});
  expect_values(gelu_tanh(F({0.5}, {1})), DType::kF32, {1}, {0.3457140067});
}

}  // namespace
}  // namespace kiln
