// einsum on CPU tensors (the interpreter) against a brute-force reference (every assignment of
// the labels, products summed in double): transposes, sums, traces and diagonals, inner, outer
// and batched products, three operands, implicit outputs, repeated labels; ellipsis dims
// (broadcast too) against the equivalent explicit equation; integer operands; invalid
// equations.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace kiln {
namespace {

Tensor random(const Shape& shape, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> v(static_cast<size_t>(numel(shape)));
  for (float& x : v) x = u(rng);
  return Tensor::from_vector(v, shape);
}

/// The einsum of letter-only terms by brute force; `out` is the output term.
std::vector<double> reference(const std::vector<std::string>& terms, const std::string& out,
                              const std::vector<Tensor>& xs, Shape* shape) {
  std::map<char, int64_t> size;
  for (size_t i = 0; i < terms.size(); ++i)
    for (size_t d = 0; d < terms[i].size(); ++d) size[terms[i][d]] = xs[i].shape()[d];
  std::vector<char> labels;
  for (const auto& [l, n] : size) labels.push_back(l);
  shape->clear();
  for (char l : out) shape->push_back(size[l]);
  std::vector<double> result(static_cast<size_t>(numel(*shape)), 0.0);
  std::vector<std::vector<double>> vals;
  for (const Tensor& x : xs) vals.push_back(x.to_doubles());
  std::map<char, int64_t> at;
  for (char l : labels) at[l] = 0;
  auto offset = [&](const std::string& term, const Shape& s) {
    int64_t o = 0;
    for (size_t d = 0; d < term.size(); ++d) o = o * s[d] + at[term[d]];
    return o;
  };
  for (;;) {
    double p = 1;
    for (size_t i = 0; i < xs.size(); ++i)
      p *= vals[i][static_cast<size_t>(offset(terms[i], xs[i].shape()))];
    result[static_cast<size_t>(offset(out, *shape))] += p;
    size_t k = 0;
    for (; k < labels.size(); ++k) {
      if (++at[labels[k]] < size[labels[k]]) break;
      at[labels[k]] = 0;
    }
    if (k == labels.size()) break;
  }
  return result;
}

void expect_close(const Tensor& got, const Shape& shape, const std::vector<double>& want,
                  const std::string& what) {
  ASSERT_EQ(got.shape(), shape) << what;
  std::vector<double> g = got.to_doubles();
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_NEAR(g[i], want[i], 1e-5) << what << " [" << i << "]";
}

TEST(Einsum, AgainstBruteForce) {
  struct Case {
    std::vector<std::string> terms;
    std::string out;
    std::vector<Shape> shapes;
  };
  const std::vector<Case> cases = {
      {{"ij"}, "ji", {{3, 4}}},
      {{"ij"}, "i", {{3, 5}}},
      {{"ij"}, "", {{2, 3}}},
      {{"ii"}, "", {{4, 4}}},          // trace
      {{"ii"}, "i", {{4, 4}}},         // diagonal
      {{"bii"}, "bi", {{2, 3, 3}}},    // batched diagonal
      {{"iji"}, "j", {{3, 2, 3}}},     // diagonal over non-adjacent dims
      {{"i", "i"}, "", {{5}, {5}}},    // inner product
      {{"i", "j"}, "ij", {{3}, {4}}},  // outer product
      {{"ij", "jk"}, "ik", {{3, 4}, {4, 5}}},
      {{"bij", "bjk"}, "bik", {{2, 3, 4}, {2, 4, 1}}},
      {{"bij", "bkj"}, "bki", {{2, 3, 4}, {2, 5, 4}}},  // transposed operand and output
      {{"ij", "ij"}, "ij", {{3, 4}, {3, 4}}},           // elementwise product
      {{"ijk", "k"}, "ji", {{2, 3, 4}, {4}}},
      {{"ij", "jk", "kl"}, "il", {{2, 3}, {3, 4}, {4, 2}}},  // three operands
      {{"ab", "bc", "ca"}, "", {{2, 3}, {3, 4}, {4, 2}}},
      {{"abc", "cd"}, "db", {{2, 1, 3}, {3, 2}}},  // a summed before the product
  };
  std::mt19937 rng(11);
  for (const Case& c : cases) {
    std::vector<Tensor> xs;
    for (const Shape& s : c.shapes) xs.push_back(random(s, rng));
    std::string eq;
    for (const std::string& t : c.terms) eq += (eq.empty() ? "" : ",") + t;
    eq += "->" + c.out;
    Shape shape;
    const std::vector<double> want = reference(c.terms, c.out, xs, &shape);
    expect_close(einsum(eq, xs), shape, want, eq);
  }
}

TEST(Einsum, ImplicitOutputAndEllipsis) {
  std::mt19937 rng(5);
  Tensor a = random({3, 4}, rng), b = random({4, 2}, rng);
  // Implicit: the letters named once, alphabetically ("ij,jk" -> "ik"; "ba" -> "ab").
  EXPECT_EQ(einsum("ij,jk", {a, b}).to_doubles(), einsum("ij,jk->ik", {a, b}).to_doubles());
  EXPECT_EQ(einsum("ba", {a}).to_doubles(), einsum("ba->ab", {a}).to_doubles());
  EXPECT_EQ(einsum("ii", {random({3, 3}, rng)}).shape(), Shape{});
  // Ellipsis dims against their explicit letters, broadcast ones against an expanded operand.
  Tensor x = random({2, 3, 4, 5}, rng), y = random({2, 3, 5, 2}, rng);
  EXPECT_EQ(einsum("...ij,...jk->...ik", {x, y}).to_doubles(),
            einsum("abij,abjk->abik", {x, y}).to_doubles());
  Tensor yb = random({3, 5, 2}, rng), y1 = random({1, 3, 5, 2}, rng);
  EXPECT_EQ(
      einsum("...ij,...jk->...ik", {x, yb}).to_doubles(),
      einsum("abij,abjk->abik", {x, expand(reshape(yb, {1, 3, 5, 2}), {2, 3, 5, 2})}).to_doubles());
  EXPECT_EQ(einsum("...ij,...jk", {x, y1}).to_doubles(),
            einsum("abij,abjk->abik", {x, expand(y1, {2, 3, 5, 2})}).to_doubles());
  EXPECT_EQ(einsum("...ii->...i", {random({2, 3, 3}, rng)}).shape(), (Shape{2, 3}));
  EXPECT_EQ(einsum("i...->...", {x}).to_doubles(), sum(x, {0}).to_doubles());
}

TEST(Einsum, IntegerOperands) {
  Tensor a = Tensor::from_vector(std::vector<int64_t>{1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = Tensor::from_vector(std::vector<int64_t>{1, -1, 2}, {3});
  Tensor r = einsum("ij,j->i", {a, b});
  EXPECT_EQ(r.dtype(), DType::kI64);
  EXPECT_EQ(r.to_doubles(), (std::vector<double>{5, 11}));
}

TEST(Einsum, InvalidEquations) {
  Tensor a = Tensor::full({2, 3}, 1.0);
  auto expect_error = [](auto fn, const std::string& part) {
    try {
      fn();
      ADD_FAILURE() << "no error, expected " << part;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_error([&] { einsum("ij,jk->ik", {a}); }, "2 terms for 1 operands");
  expect_error([&] { einsum("ijk->i", {a}); }, "names 3 dims of a rank-2 operand");
  expect_error([&] { einsum("i->i", {a}); }, "names 1 dims of a rank-2 operand");
  expect_error([&] { einsum("ij->k", {a}); }, "output label 'k' is in no input");
  expect_error([&] { einsum("ij->ii", {a}); }, "output label 'i' repeats");
  expect_error([&] { einsum("i1->i", {a}); }, "'1' is not a letter");
  expect_error([&] { einsum("i.j->i", {a}); }, "outside an ellipsis");
  expect_error([&] { einsum("ii->i", {a}); }, "sizes 2 and 3");
}

}  // namespace
}  // namespace kiln
