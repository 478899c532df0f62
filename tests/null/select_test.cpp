// masked_select and nonzero on CPU tensors (the interpreter) against values by hand, and through
// kiln::compile on the CPU: the seed's good_fn_1 is one graph with no break, its length an
// unbacked size symbol (no guard mentions it, one entry serves every length); a result used
// by a later op starts the next graph (still no break); a decision that would need a guard on
// the length is a clear error; bad input is rejected; the seed's bad_fn_1/2/3 still break.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "expect_error.h"
#include "graph/symbolic.h"
#include "kiln/kiln.h"
#include "seed_functions.h"

namespace kiln {
namespace {

using test::expect_error;

Tensor F(std::vector<float> v, Shape shape) {
  return Tensor::from_vector(v, std::move(shape));
}

using test::all_axes;
using test::good_fn_1;

TEST(MaskedSelect, ByHand) {
  Tensor x = F({1, -2, 3, -4, 5, -6}, {2, 3});
  Tensor got = masked_select(x, x > 0);
  EXPECT_EQ(got.shape(), (Shape{3}));
  EXPECT_EQ(got.to_doubles(), (std::vector<double>{1, 3, 5}));
  // Row-major order; a broadcast row mask; an all-false mask gives a 0-length result.
  Tensor cols = F({1, 0, 1}, {3}) > 0;
  EXPECT_EQ(masked_select(x, cols).to_doubles(), (std::vector<double>{1, 3, -4, -6}));
  EXPECT_EQ(masked_select(x, x > 100).shape(), (Shape{0}));
  // x broadcast against a bigger mask; integer data keeps its dtype.
  Tensor m = F({1, 1, 0, 0, 1, 1}, {2, 3}) > 0;
  Tensor row = Tensor::from_vector(std::vector<int64_t>{7, 8, 9}, {3});
  Tensor r = masked_select(row, m);
  EXPECT_EQ(r.dtype(), DType::kI64);
  EXPECT_EQ(r.to_doubles(), (std::vector<double>{7, 8, 8, 9}));
  // Empty input.
  EXPECT_EQ(masked_select(F({}, {0, 4}), F({}, {0, 4}) > 0).shape(), (Shape{0}));
}

TEST(NonZero, ByHand) {
  // Row-major coordinates, NaN counts as non-zero (as a cast to bool does).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = F({0, 1, 2, 0, nan, 0}, {2, 3});
  Tensor got = nonzero(x);
  EXPECT_EQ(got.dtype(), DType::kI64);
  EXPECT_EQ(got.shape(), (Shape{3, 2}));
  EXPECT_EQ(got.to_doubles(), (std::vector<double>{0, 1, 0, 2, 1, 1}));
  EXPECT_EQ(nonzero(F({0, 0}, {2})).shape(), (Shape{0, 1}));
  EXPECT_EQ(nonzero(F({}, {0, 3})).shape(), (Shape{0, 2}));
  // A scalar: [count, 0], on the host.
  EXPECT_EQ(nonzero(Tensor::full({}, 2.0, DType::kF32)).shape(), (Shape{1, 0}));
  // Compiled: a data-dependent length, no break; the coordinates feed a gather_nd-style read
  // in the next graph.
  auto fn = compile([](const Tensor& v) { return nonzero(v); }, {.name = "nonzero"});
  for (std::vector<float> v : {std::vector<float>{0, 3, 0, 4}, {0, 0, 0, 0}, {1, 1, 1, 1}}) {
    Tensor t = F(v, {2, 2});
    EXPECT_EQ(fn(t).to_doubles(), nonzero(t).to_doubles());
    EXPECT_EQ(fn(t).shape(), nonzero(t).shape());
  }
  EXPECT_EQ(fn.stats().graph_breaks, 0u);
  EXPECT_EQ(fn.stats().compiles, 1u);
}

TEST(MaskedSelect, BadInput) {
  Tensor x = F({1, 2, 3}, {3});
  expect_error([&] { masked_select(x, x); }, {"masked_select", "bool"});
  expect_error([&] { masked_select(x, F({1, 2}, {2}) > 0); }, {"expand"});
  expect_error([&] { masked_select(Tensor(), x > 0); }, {"masked_select", "undefined"});
}

TEST(MaskedSelect, GoodFn1IsOneGraphWithoutBreaks) {
  auto fn = compile([](const Tensor& x) { return good_fn_1(x); }, {.name = "good_fn_1"});
  for (float shift : {0.0f, 10.0f, -3.0f}) {  // different lengths, one entry
    std::vector<float> v;
    for (int i = 0; i < 24; ++i) v.push_back(static_cast<float>((i * 7) % 11) + shift * (i % 2));
    Tensor x = F(v, {4, 6});
    Tensor got = fn(x);
    Tensor want = good_fn_1(x);
    EXPECT_EQ(got.shape(), want.shape());
    EXPECT_EQ(got.to_doubles(), want.to_doubles());
  }
  EXPECT_EQ(fn.stats().compiles, 1u);
  EXPECT_EQ(fn.stats().graph_breaks, 0u);
  std::vector<EntryInfo> entries = fn.entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].graph_count, 1);
  EXPECT_TRUE(entries[0].breaks.empty());
  EXPECT_NE(entries[0].graph.find("masked_select"), std::string::npos) << entries[0].graph;
  // The length has no guard.
  EXPECT_EQ(entries[0].guards.find("masked_select"), std::string::npos) << entries[0].guards;
}

// The seed's three "bad" functions still break where PyTorch does, with their good forms
// compiling whole (good_fn_2: where; good_fn_3: kiln::fft, tests/device/fft_test.cpp).
TEST(MaskedSelect, SeedBadFunctionsBreak) {
  Tensor x = F({0.5f, -2, 3, 1, -0.25f, 4}, {6});
  // bad_fn_1: threshold = x.mean().item() is a host read.
  auto bad_fn_1 =
      compile([](const Tensor& v) { return masked_select(v, v > scalar(mean(v, {0}).item())); },
              {.name = "bad_fn_1"});
  EXPECT_EQ(bad_fn_1(x).to_doubles(), good_fn_1(x).to_doubles());
  EXPECT_EQ(bad_fn_1.stats().graph_breaks, 1u);
  // bad_fn_2: `if x.sum() > 0` branches on a tensor; good_fn_2's where does not.
  auto bad_fn_2 = compile(
      [](const Tensor& v) {
        if (sum(v, {0}) > 0.0) return v * 2.0;
        return v * 3.0;
      },
      {.name = "bad_fn_2"});
  auto good_fn_2 =
      compile([](const Tensor& v) { return where(sum(v, {0}) > 0.0, v * 2.0, v * 3.0); },
              {.name = "good_fn_2"});
  EXPECT_EQ(bad_fn_2(x).to_doubles(), good_fn_2(x).to_doubles());
  EXPECT_EQ(bad_fn_2.stats().graph_breaks, 1u);
  EXPECT_EQ(good_fn_2.stats().graph_breaks, 0u);
  // bad_fn_3: the FFT computed by another library on the host (numpy.fft in the seed; a
  // direct DFT here) through call_host.
  auto bad_fn_3 = compile(
      [](const Tensor& v) {
        return call_host(
            "host_dft",
            [](const std::vector<Tensor>& in) { return std::vector<Tensor>{real(fft(in[0]))}; },
            {v})[0];
      },
      {.name = "bad_fn_3"});
  auto good_fn_3 = compile([](const Tensor& v) { return real(fft(v)); }, {.name = "good_fn_3"});
  const std::vector<double> a = bad_fn_3(x).to_doubles(), b = good_fn_3(x).to_doubles();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5);
  EXPECT_EQ(bad_fn_3.stats().graph_breaks, 1u);
  EXPECT_EQ(good_fn_3.stats().graph_breaks, 0u);
}

TEST(MaskedSelect, UsedByLaterOpsInTheNextGraph) {
  auto body = [](const Tensor& x) {
    Tensor s = masked_select(x, x > 0);
    return std::vector<Tensor>{s * 10, sum(s, {0})};
  };
  auto fn = compile(body, {.name = "select_then_ops"});
  for (std::vector<float> v : {std::vector<float>{1, -1, 2, -2, 3, -3},
                               {-1, -1, -1, -1, -1, 4},
                               {-1, -1, -1, -1, -1, -1},
                               {1, 2, 3, 4, 5, 6}}) {
    Tensor x = F(v, {2, 3});
    std::vector<Tensor> got = fn(x), want = body(x);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].shape(), want[0].shape());
    EXPECT_EQ(got[0].to_doubles(), want[0].to_doubles());
    EXPECT_EQ(got[1].to_doubles(), want[1].to_doubles());
  }
  EXPECT_EQ(fn.stats().compiles, 1u);
  EXPECT_EQ(fn.stats().graph_breaks, 0u);
  EXPECT_EQ(fn.entries().at(0).graph_count, 2);
}

// reshape's -1 over a data-dependent length divides the symbolic product out exactly, with no
// decision on the length (which could not be guarded): [2 * s] -> [-1, s] is [2, s].
TEST(MaskedSelect, ReshapeInfersAroundTheLength) {
  auto body = [](const Tensor& x) {
    Tensor s = masked_select(x, x > 0);
    Tensor both = concat({s, s * 2}, 0);
    return reshape(both, {SymSize(-1), s.sizes()[0] * 2}) + 1;
  };
  auto fn = compile(body, {.name = "reshape_length"});
  for (std::vector<float> v : {std::vector<float>{1, -1, 2, -2, 3, -3}, {-1, -1, -1, -1, -1, 4}}) {
    Tensor x = F(v, {2, 3});
    Tensor got = fn(x), want = body(x);
    EXPECT_EQ(got.shape(), want.shape());
    EXPECT_EQ(got.to_doubles(), want.to_doubles());
  }
  EXPECT_EQ(fn.stats().compiles, 1u);
  EXPECT_EQ(fn.stats().graph_breaks, 0u);
}

TEST(MaskedSelect, DecisionOnTheLengthIsAnError) {
  // Adding two selections needs their lengths equal: a guard on data-dependent sizes.
  auto fn =
      compile([](const Tensor& x) { return masked_select(x, x > 0) + masked_select(x, x < 0); },
              {.name = "two_lengths"});
  expect_error([&] { fn(F({1, -1, 2, -2}, {4})); }, {"data-dependent size", "masked_select"});
}

TEST(MaskedSelect, ShapeEnvKeepsUnbackedSymbolsOutOfGuards) {
  ShapeEnv env;
  const int s0 = env.create_symbol(8, "input 0 dim 0");
  const int u = env.create_unbacked_symbol(8, "the length of masked_select");
  EXPECT_EQ(env.unbacked_symbols(), (std::vector<int>{u}));
  EXPECT_TRUE(env.statically_known_true(sym_ge(SymInt(env.symbol(u)), SymInt(0))));
  auto decided = env.evaluate_guarding(sym_eq(SymInt(env.symbol(u)), SymInt(env.symbol(s0))), "t");
  ASSERT_FALSE(decided.ok());
  EXPECT_NE(decided.status().message().find("data-dependent"), std::string::npos);
  EXPECT_FALSE(env.evaluate_guarding(SymInt(env.symbol(u)), "t").ok());
  for (const ShapeGuard& g : env.guards()) {
    const std::vector<int> fs = g.lhs.free_symbols();
    EXPECT_EQ(std::count(fs.begin(), fs.end(), u), 0) << g.to_string();
  }
  env.set_hint(u, 3);
  EXPECT_EQ(env.hint(SymInt(env.symbol(u))), 3);
}

}  // namespace
}  // namespace kiln
