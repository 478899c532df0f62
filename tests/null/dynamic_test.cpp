// Dynamic shapes: the seed's three strategies (static, dynamic, automatic) and warm-up, symbolic
// sizes in user code, mark_dynamic / mark_static, duck sizing, range guards, and the recompile
// policy's dynamic step. Built twice: on CPU tensors (label null) and, with
// KILN_TEST_ON_DEVICE, on Vulkan (label device).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "kiln/kiln.h"
#include "null/capture_fixture.h"

namespace kiln {
namespace {

using test::kOnDevice;

Device dev() {
  return kOnDevice ? Device::vulkan() : Device::cpu();
}

class Dynamic : public test::CaptureTest {
 protected:
  Dynamic() : CaptureTest("recompiles,dynamic") {}
  static Tensor rnd(Shape shape, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    std::vector<float> v(static_cast<size_t>(numel(shape)));
    for (float& f : v) f = d(rng);
    return Tensor::from_vector(v, shape, dev());
  }
  static void expect_near(const Tensor& got, const Tensor& want, double tol = 1e-4) {
    ASSERT_EQ(got.meta(), want.meta());
    auto g = got.to_vector<float>(), w = want.to_vector<float>();
    ASSERT_EQ(g.size(), w.size());
    for (size_t i = 0; i < g.size(); ++i) {
      ASSERT_NEAR(g[i], w[i], tol * (1 + std::abs(w[i]))) << "element " << i;
    }
  }
};

// The seed's model, small: vocab 50, d 32, 1 layer, 2 heads, FFN 64.
nn::TextEncoder small_encoder(uint64_t seed) {
  nn::WeightGenerator gen(seed);
  return nn::TextEncoder({50, 32, 1, 2, 64}, gen, dev());
}

Tensor token_ids(Dim batch, Dim seq, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> d(0, 49);
  std::vector<int64_t> v(static_cast<size_t>(batch * seq));
  for (int64_t& x : v) x = d(rng);
  return Tensor::from_vector(v, {batch, seq}, dev());
}

const std::vector<Dim> kSeqLens = {128, 256, 512, 768, 1024};

uint64_t sweep(const nn::TextEncoder& model, CompileOptions options, int passes) {
  auto fn = compile([&](const Tensor& ids) { return model(ids); }, options);
  for (int p = 0; p < passes; ++p) {
    for (Dim s : kSeqLens) {
      Tensor ids = token_ids(2, s, static_cast<uint32_t>(s));
      Tensor got = fn(ids);
      if (p == 0 && (s == 128 || s == 768)) {
        Tensor want = model(ids);  // eager, op by op
        EXPECT_EQ(got.meta(), want.meta());
        auto g = got.to_vector<float>(), w = want.to_vector<float>();
        for (size_t i = 0; i < g.size(); i += 97)
          EXPECT_NEAR(g[i], w[i], 1e-3 * (1 + std::abs(w[i])));
      }
    }
  }
  return fn.stats().compiles;
}

TEST_F(Dynamic, SeedStrategiesCompileCounts) {
  const nn::TextEncoder model = small_encoder(7);
  EXPECT_EQ(sweep(model, {.name = "static", .dynamic = kiln::Dynamic::kFalse}, 1), 5u);
  EXPECT_EQ(sweep(model, {.name = "dynamic", .dynamic = kiln::Dynamic::kTrue}, 1), 1u);
  EXPECT_EQ(sweep(model, {.name = "auto", .dynamic = kiln::Dynamic::kAuto}, 1), 2u);
}

TEST_F(Dynamic, WarmUpThenSecondSweepCompilesNothing) {
  const nn::TextEncoder model = small_encoder(8);
  for (auto mode : {kiln::Dynamic::kFalse, kiln::Dynamic::kAuto}) {
    auto fn =
        compile([&](const Tensor& ids) { return model(ids); }, {.name = "warm", .dynamic = mode});
    for (Dim s : kSeqLens) fn(token_ids(2, s, 1));
    const uint64_t warm = fn.stats().compiles;
    for (Dim s : kSeqLens) fn(token_ids(2, s, 2));
    EXPECT_EQ(fn.stats().compiles, warm) << "second sweep recompiled";
    EXPECT_EQ(fn.stats().cache_hits, kSeqLens.size() + (warm == 2 ? 3 : 0));
  }
}

TEST_F(Dynamic, AutoMakesTheChangedDimSymbolic) {
  auto fn =
      compile([](const Tensor& x) { return sum(relu(x * 2.0 + 1.0), {1}); }, {.name = "auto_fn"});
  fn(rnd({4, 8}, 1));
  fn(rnd({6, 8}, 2));  // dim 0 changed: recompiled with dim 0 symbolic
  ASSERT_EQ(fn.stats().compiles, 2u);
  ASSERT_EQ(fn.entries().size(), 2u);
  EXPECT_TRUE(fn.entries()[0].symbols.empty());
  ASSERT_EQ(fn.entries()[1].symbols.size(), 1u);
  EXPECT_NE(fn.entries()[1].symbols[0].find("input 0 dim 0"), std::string::npos);
  EXPECT_NE(fn.entries()[1].graph.find("f32[s0, 8]"), std::string::npos) << fn.entries()[1].graph;
  for (Dim n : {3, 5, 17, 100}) {
    Tensor x = rnd({n, 8}, static_cast<uint32_t>(n));
    expect_near(fn(x), sum(relu(x * 2.0 + 1.0), {1}));
  }
  EXPECT_EQ(fn.stats().compiles, 2u);
  EXPECT_NE(logs_.find("input 0 dim 0 (size 6) is s0"), std::string::npos) << logs_;
  const std::string report = fn.explain().to_string();
  EXPECT_NE(report.find("s0 = input 0 dim 0 (traced at 6)"), std::string::npos) << report;
  EXPECT_NE(report.find("symbolic_sizes"), std::string::npos) << report;
  fn(rnd({6, 9}, 3));  // dim 1 changed too: one more compile, both symbolic
  EXPECT_EQ(fn.stats().compiles, 3u);
  EXPECT_EQ(fn.entries().back().symbols.size(), 2u);
}

TEST_F(Dynamic, SizesZeroAndOneAreSpecialised) {
  auto fn = compile([](const Tensor& x) { return x * 3.0; },
                    {.name = "zero_one", .dynamic = kiln::Dynamic::kTrue});
  fn(rnd({5, 4}, 1));
  fn(rnd({9, 4}, 2));
  EXPECT_EQ(fn.stats().compiles, 1u);
  fn(rnd({1, 4}, 3));  // 1 is not in the class of s0 >= 2
  EXPECT_EQ(fn.stats().compiles, 2u);
  fn(rnd({0, 4}, 4));
  EXPECT_EQ(fn.stats().compiles, 3u);
}

TEST_F(Dynamic, DuckSizingSharesASymbolAndGuardsTheEquality) {
  auto fn = compile(
      [](const Tensor& a, const Tensor& b) {
        return sum(a, {0}) + sum(b, {0, 1});
      },
      {.name = "duck", .dynamic = kiln::Dynamic::kTrue});
  fn(rnd({6}, 1), rnd({6, 3}, 2));
  ASSERT_EQ(fn.stats().compiles, 1u);
  EXPECT_NE(logs_.find("guard added: s1 == s0  # duck sizing"), std::string::npos) << logs_;
  fn(rnd({11}, 3), rnd({11, 4}, 4));  // same class: a[0] == b[0]
  fn(rnd({7}, 5), rnd({7, 7}, 6));    // b[1] == b[0] is allowed too: s2 is independent
  EXPECT_EQ(fn.stats().compiles, 1u);
  fn(rnd({7}, 5), rnd({8, 3}, 6));  // a[0] != b[0]: the duck-sizing guard fails
  EXPECT_EQ(fn.stats().compiles, 2u);
  EXPECT_NE(logs_.find("size guard s1 == s0"), std::string::npos) << logs_;
}

TEST_F(Dynamic, SymbolicSizesFlowThroughUserCode) {
  // Sizes from size() stay symbolic through arithmetic, reshape, arange and full.
  auto fn = compile(
      [](const Tensor& x) {
        SymSize n = x.size(0), d = x.size(1);
        Tensor halves = sum(reshape(x, {n, d / 2, 2}), {2});
        Tensor pos = cast(arange(n), DType::kF32);
        Tensor ones_row = ones({n, 1});
        return halves * ones_row + unsqueeze(pos, 1);
      },
      {.name = "user_sizes", .dynamic = kiln::Dynamic::kTrue});
  for (Dim n : {3, 8, 13}) {
    Tensor x = rnd({n, 6}, static_cast<uint32_t>(n));
    Tensor want =
        sum(reshape(x, {n, 3, 2}), {2}) +
        unsqueeze(cast(arange(0.0, static_cast<double>(n), 1, DType::kI64, dev()), DType::kF32), 1);
    expect_near(fn(x), want);
  }
  EXPECT_EQ(fn.stats().compiles, 1u);
}

TEST_F(Dynamic, IntegerUseOfASymbolSpecialisesIt) {
  auto fn = compile(
      [](const Tensor& x) {
        int64_t n = x.size(0);  // a C++ integer: guarded
        return x * static_cast<double>(n);
      },
      {.name = "specialise", .dynamic = kiln::Dynamic::kTrue});
  expect_near(fn(rnd({4, 3}, 1)), rnd({4, 3}, 1) * 4.0);
  expect_near(fn(rnd({5, 3}, 2)), rnd({5, 3}, 2) * 5.0);
  EXPECT_EQ(fn.stats().compiles, 2u);
  EXPECT_NE(logs_.find("used as an integer at dynamic_test.cpp"), std::string::npos) << logs_;
}

// A SymSize kept from one trace and used in a later one is an error, as an integer or as a
// shape: its symbols belong to the first trace's ShapeEnv.
TEST_F(Dynamic, ASizeFromAnotherTraceIsAnError) {
  SymSize kept;
  int traces = 0;
  auto fn = compile(
      [&](const Tensor& x) {
        if (traces++ == 0) kept = x.size(0);
        return x * static_cast<double>(static_cast<int64_t>(kept));
      },
      {.name = "escaped", .dynamic = kiln::Dynamic::kTrue});
  fn(rnd({4, 3}, 1));
  EXPECT_THROW(fn(rnd({4, 3, 2}, 2)), Error);  // rank change: a second trace
}

TEST_F(Dynamic, SpecialisingAMarkedDynamicDimIsAnError) {
  auto fn = compile(
      [](const Tensor& x) {
        int64_t n = x.size(0).value();  // line recorded by value()
        return x * static_cast<double>(n);
      },
      {.name = "marked"});
  Tensor x = rnd({4, 3}, 1);
  mark_dynamic(x, 0);
  try {
    fn(x);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("dynamic"), std::string::npos) << msg;
    EXPECT_NE(msg.find("dynamic_test.cpp:"), std::string::npos) << msg;
  }
  // An op that needs the marked dim to equal a static size names the op and line.
  auto fn2 = compile([](const Tensor& a, const Tensor& w) { return a + w; }, {.name = "marked2"});
  Tensor a = rnd({3, 5}, 2), w = rnd({3, 5}, 3);
  mark_dynamic(a, 1);
  try {
    fn2(a, w);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("add at dynamic_test.cpp:"), std::string::npos) << msg;
  }
}

TEST_F(Dynamic, MaybeMarkDynamicSymbolicUntilSpecialised) {
  // Symbolic from the first call: one compile for every size.
  auto sym = compile([](const Tensor& x) { return x * 2.0; }, {.name = "maybe"});
  for (int64_t n : {4, 7, 9}) {
    Tensor x = rnd({n, 3}, static_cast<uint32_t>(n));
    maybe_mark_dynamic(x, 0);
    expect_near(sym(x), x * 2.0);
  }
  EXPECT_EQ(sym.stats().compiles, 1u);
  EXPECT_EQ(sym.stats().dynamic_compiles, 1u);
  // Code that needs the value specialises it with a guard (mark_dynamic would fail): one
  // compile per value, each result right.
  auto spec = compile(
      [](const Tensor& x) { return x * static_cast<double>(x.size(0).value()); },
      {.name = "maybe_spec"});
  for (int64_t n : {4, 7, 4}) {
    Tensor x = rnd({n, 3}, static_cast<uint32_t>(n) + 10);
    maybe_mark_dynamic(x, 0);
    expect_near(spec(x), x * static_cast<double>(n));
  }
  EXPECT_EQ(spec.stats().compiles, 2u);
  // Size 1 stays exact.
  Tensor one = rnd({1, 3}, 5);
  maybe_mark_dynamic(one, 0);
  expect_near(spec(one), one * 1.0);
}

TEST_F(Dynamic, MarkDynamicRangeAndMarkStatic) {
  auto fn = compile([](const Tensor& x) { return x - 1.0; }, {.name = "range"});
  Tensor x = rnd({8, 4}, 1);
  mark_dynamic(x, 0, 2, 16);
  fn(x);
  fn(rnd({16, 4}, 2));
  EXPECT_EQ(fn.stats().compiles, 1u);
  fn(rnd({17, 4}, 3));  // outside the range: a recompile, reason names the range guard
  EXPECT_EQ(fn.stats().compiles, 2u);
  EXPECT_NE(logs_.find("<= 16"), std::string::npos) << logs_;

  auto fs = compile([](const Tensor& v) { return v * 2.0; },
                    {.name = "static_mark", .dynamic = kiln::Dynamic::kTrue});
  Tensor y = rnd({5, 4}, 4);
  mark_static(y, 1);
  fs(y);
  ASSERT_EQ(fs.entries().size(), 1u);
  EXPECT_NE(fs.entries()[0].graph.find("f32[s0, 4]"), std::string::npos) << fs.entries()[0].graph;
}

TEST_F(Dynamic, RecompileLimitRecompilesOnceDynamicThenEager) {
  auto fn = compile([](const Tensor& x) { return x + 1.0; },
                    {.name = "limit", .recompile_limit = 2, .dynamic = kiln::Dynamic::kFalse});
  for (Dim n : {3, 4, 5}) fn(rnd({n}, 1));
  EXPECT_EQ(fn.stats().compiles, 3u);
  EXPECT_FALSE(fn.stats().dynamic_after_limit);
  fn(rnd({6}, 2));  // past the limit: one compile with dim 0 symbolic
  EXPECT_EQ(fn.stats().compiles, 4u);
  EXPECT_TRUE(fn.stats().dynamic_after_limit);
  EXPECT_NE(logs_.find("recompiling ONCE"), std::string::npos) << logs_;
  Tensor x = rnd({40}, 3);
  expect_near(fn(x), x + 1.0);  // served by the symbolic entry
  EXPECT_EQ(fn.stats().compiles, 4u);
  EXPECT_EQ(fn.stats().eager_calls, 0u);
  Tensor two_d = rnd({2, 2}, 4);
  expect_near(fn(two_d), two_d + 1.0);  // a rank change now runs eagerly
  EXPECT_EQ(fn.stats().eager_calls, 1u);
}

// Random chains of shape-preserving blocks over x [n, 6] (n symbolic), compiled once with every
// dim dynamic and run at many n against the CPU interpreter.
Tensor random_block(int which, const Tensor& x, const Tensor& w, const Tensor& b) {
  const SymSize n = x.size(0);
  switch (which) {
    case 0:
      return softmax(x * 0.5 + b, -1);
    case 1:
      return matmul(relu(x), w, false, true) - b;
    case 2:
      return layer_norm(x, w, b, 1) * 2.0;  // w is [6] in this block
    case 3:
      return reshape(permute(reshape(x, {n, 3, 2}), {0, 2, 1}), {n, -1}) + 1.0;
    case 4:
      return x - max(x, {0}, true);  // reduce over the symbolic axis, broadcast back
    case 5:
      return concat({slice(x, 0, 0, 1), tanh(slice(x, 0, 1, 1 << 30))}, 0);
    case 6:
      return matmul(softmax(matmul(x, x, false, true), -1), x);  // attention-like, [n, n] inside
    default:
      return x * sigmoid(sum(x, {1}, true));
  }
}

TEST_F(Dynamic, RandomSymbolicGraphsMatchTheInterpreterAtManySizes) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 10; ++trial) {
    const std::vector<int> blocks = {static_cast<int>(rng() % 8), static_cast<int>(rng() % 8),
                                     static_cast<int>(rng() % 8)};
    auto body = [blocks](const Tensor& x, const Tensor& w, const Tensor& wv, const Tensor& b) {
      Tensor h = x;
      for (int k : blocks) h = random_block(k, h, k == 2 ? wv : w, b);
      return h;
    };
    Tensor w = rnd({6, 6}, static_cast<uint32_t>(trial + 100));
    Tensor wv = rnd({6}, static_cast<uint32_t>(trial + 300));
    Tensor b = rnd({6}, static_cast<uint32_t>(trial + 200));
    auto fn = compile(body, {.name = "random", .dynamic = kiln::Dynamic::kTrue});
    auto cpu = [](const Tensor& t) { return t.to(Device::cpu()); };
    for (Dim n : {2, 3, 7, 16, 33, 64, 5}) {
      Tensor x = rnd({n, 6}, static_cast<uint32_t>(trial * 1000 + n));
      expect_near(cpu(fn(x, w, wv, b)), body(cpu(x), cpu(w), cpu(wv), cpu(b)));
    }
    EXPECT_EQ(fn.stats().compiles, 1u) << "blocks " << blocks[0] << blocks[1] << blocks[2] << "\n"
                                       << fn.explain().to_string();
  }
}

}  // namespace
}  // namespace kiln
