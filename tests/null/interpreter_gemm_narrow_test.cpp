// The interpreter's products with a few rows or columns (runtime/eager/gemm_narrow.h), bit for
// bit against the float sequence gemm_narrow.h documents, computed here in scalar code: lane l
// of 16 sums the terms p = l mod 16 in order with fused multiply-adds, then the lanes are added
// in a fixed tree. Both layouts (a few columns of a plain A, a few rows by a stored-transposed
// B), each narrow operand stored either way, 2 to 16 rows or columns, k below, at and past a
// multiple of 16, leading dimensions wider than the rows, beta 0 over a poisoned output and
// beta 1, non-finite inputs, products large enough for several threads, and the sizes it must
// leave to sgemm. Without AVX-512 the tests skip.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "eager/gemm.h"
#include "eager/gemm_narrow.h"

namespace kiln::eager {
namespace {

/// Whether the narrow path runs here: AVX-512 and KILN_GEMM_NARROW not 0.
bool narrow_on() {
  const GemmOperand plain{nullptr, 64, false};
  return narrow_product_applies(64, 4, 64, plain, plain);
}

struct Case {
  int64_t m, n, k;
  bool trans_a, trans_b;
  int64_t pad = 0;  // extra floats per stored row of A, B and C
};

std::string str(const Case& c) {
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) +
         (c.trans_a ? " a^T" : "") + (c.trans_b ? " b^T" : "") +
         (c.pad ? " pad " + std::to_string(c.pad) : "");
}

/// One output of the documented sequence: x(p) * y(p) for p < k.
template <typename X, typename Y>
float narrow_sum(int64_t k, X x, Y y) {
  float lane[16] = {};
  for (int64_t p = 0; p < k; ++p) lane[p % 16] = std::fma(x(p), y(p), lane[p % 16]);
  for (int half = 8; half >= 1; half /= 2)
    for (int l = 0; l < half; ++l) lane[l] = lane[l] + lane[l + half];
  return lane[0];
}

bool same_bits(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

struct Operands {
  std::vector<float> a, b, c;
  GemmOperand ga, gb;
  int64_t ldc = 0;
};

Operands make(const Case& c, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  Operands o;
  o.ga = {nullptr, (c.trans_a ? c.m : c.k) + c.pad, c.trans_a};
  o.gb = {nullptr, (c.trans_b ? c.k : c.n) + c.pad, c.trans_b};
  o.a.resize(static_cast<size_t>((c.trans_a ? c.k : c.m) * o.ga.ld));
  o.b.resize(static_cast<size_t>((c.trans_b ? c.n : c.k) * o.gb.ld));
  for (float& v : o.a) v = u(rng);
  for (float& v : o.b) v = u(rng);
  o.ga.data = o.a.data();
  o.gb.data = o.b.data();
  o.ldc = c.n + c.pad;
  o.c.resize(static_cast<size_t>(c.m * o.ldc));
  for (float& v : o.c) v = u(rng);
  return o;
}

float at(const GemmOperand& x, int64_t i, int64_t j) {
  return x.trans ? x.data[j * x.ld + i] : x.data[i * x.ld + j];
}

/// Runs sgemm (which must take the narrow path) and checks every output and the padding.
void check(const Case& c, float beta, std::mt19937& rng) {
  Operands o = make(c, rng);
  ASSERT_TRUE(narrow_product_applies(c.m, c.n, c.k, o.ga, o.gb)) << str(c);
  if (beta == 0.0f)  // poisoned: nothing of it may survive
    for (float& v : o.c) v = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> before = o.c;
  sgemm(c.m, c.n, c.k, o.ga, o.gb, beta, o.c.data(), o.ldc);
  int bad = 0;
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < o.ldc; ++j) {
      const size_t at_ij = static_cast<size_t>(i * o.ldc + j);
      if (j >= c.n) {  // the padding of C's rows stays as it was
        EXPECT_TRUE(same_bits(o.c[at_ij], before[at_ij])) << str(c) << " wrote past row " << i;
        continue;
      }
      const float sum = narrow_sum(
          c.k, [&](int64_t p) { return at(o.ga, i, p); },
          [&](int64_t p) { return at(o.gb, p, j); });
      const float want = beta == 0.0f ? sum : before[at_ij] + sum;
      if (!same_bits(o.c[at_ij], want) && ++bad <= 3)
        ADD_FAILURE() << str(c) << " beta " << beta << ": c[" << i << "][" << j << "] is "
                      << o.c[at_ij] << ", want " << want;
    }
  }
}

TEST(NarrowProductTest, FewColumnsOfAPlainA) {
  if (!narrow_on()) GTEST_SKIP() << "no AVX-512 (or KILN_GEMM_NARROW=0): sgemm computes these";
  std::mt19937 rng(1);
  for (int64_t n : {2, 3, 5, 6, 7, 9, 13, 16})
    for (int64_t k : {16, 17, 31, 32, 100})
      for (bool trans_b : {false, true}) check({37, n, k, false, trans_b}, 0.0f, rng);
  check({16, 4, 4608, false, false}, 0.0f, rng);   // a conv's weight by a 2x2 map's columns
  check({1000, 9, 512, false, false}, 0.0f, rng);  // a classifier conv on a 3x3 map: threads
  check({513, 16, 1153, false, true, 3}, 1.0f, rng);
  check({37, 5, 40, false, false, 7}, 1.0f, rng);
  check({16, 16, 33, false, false, 2}, 0.0f, rng);  // both sides 16: columns, one block
}

TEST(NarrowProductTest, FewRowsByAStoredTransposedB) {
  if (!narrow_on()) GTEST_SKIP() << "no AVX-512 (or KILN_GEMM_NARROW=0): sgemm computes these";
  std::mt19937 rng(2);
  for (int64_t m : {2, 3, 8, 11, 16})
    for (int64_t k : {16, 47, 784})
      for (bool trans_a : {false, true}) check({m, 33, k, trans_a, true}, 0.0f, rng);
  check({8, 2048, 784, false, true}, 0.0f, rng);  // an MLP's first layer at batch 8
  check({2, 1000, 1024, false, true, 5}, 1.0f, rng);
  check({5, 16, 70, true, true, 3}, 0.0f, rng);  // A stored transposed with padded rows
  check({13, 16, 16, true, true}, 1.0f, rng);    // a large side of exactly 16
}

TEST(NarrowProductTest, NonFiniteInputsGiveTheSequencesResult) {
  if (!narrow_on()) GTEST_SKIP() << "no AVX-512 (or KILN_GEMM_NARROW=0)";
  std::mt19937 rng(3);
  const Case c{40, 3, 50, false, false};
  Operands o = make(c, rng);
  o.a[0] = std::numeric_limits<float>::infinity();             // row 0: inf (or NaN with -inf)
  o.a[5 * 50 + 49] = std::numeric_limits<float>::quiet_NaN();  // row 5, in the masked tail
  o.b[2 * 3 + 1] = -std::numeric_limits<float>::infinity();    // column 1 at p = 2
  sgemm(c.m, c.n, c.k, o.ga, o.gb, 0.0f, o.c.data(), o.ldc);
  EXPECT_TRUE(std::isinf(o.c[0 * 3 + 0]) || std::isnan(o.c[0]));
  EXPECT_TRUE(std::isnan(o.c[5 * 3 + 0]) && std::isnan(o.c[5 * 3 + 2]));
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      const float want = narrow_sum(
          c.k, [&](int64_t p) { return o.a[static_cast<size_t>(i * 50 + p)]; },
          [&](int64_t p) { return o.b[static_cast<size_t>(p * 3 + j)]; });
      EXPECT_TRUE(same_bits(o.c[static_cast<size_t>(i * 3 + j)], want)) << i << ", " << j;
    }
}

TEST(NarrowProductTest, LeavesOtherShapesToSgemm) {
  const GemmOperand plain{nullptr, 64, false}, trans{nullptr, 64, true};
  EXPECT_FALSE(narrow_product_applies(64, 1, 64, plain, plain));   // one column: sgemv
  EXPECT_FALSE(narrow_product_applies(1, 64, 64, plain, trans));   // one row: sgemv
  EXPECT_FALSE(narrow_product_applies(64, 17, 64, plain, plain));  // 17 columns
  EXPECT_FALSE(narrow_product_applies(64, 4, 15, plain, plain));   // k < 16
  EXPECT_FALSE(narrow_product_applies(15, 4, 64, plain, plain));   // both sides small
  EXPECT_FALSE(narrow_product_applies(64, 4, 64, trans, plain));   // A's rows not contiguous
  EXPECT_FALSE(narrow_product_applies(4, 64, 64, plain, plain));   // B not stored transposed
  EXPECT_EQ(narrow_product_applies(4, 64, 64, trans, trans), narrow_on());
}

}  // namespace
}  // namespace kiln::eager
