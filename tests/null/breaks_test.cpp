// Graph breaks, value guards and the recompile policy: the "must break / must fail" suite.
// Built twice: on CPU tensors (label null) and, with KILN_TEST_ON_DEVICE, on Vulkan (device).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/kiln.h"
#include "null/capture_fixture.h"

namespace kiln {
namespace {

using test::kOnDevice;

class Breaks : public test::CaptureTest {
 protected:
  Breaks() : CaptureTest("graph_breaks,recompiles") {}
  static Tensor vec(std::vector<float> v) {
    Shape s{static_cast<Dim>(v.size())};
    return Tensor::from_vector(v, s, dev());
  }
  static Tensor rnd(Dim n, uint32_t seed, float lo = -1.f, float hi = 1.f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(lo, hi);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& f : v) f = d(rng);
    return vec(v);
  }
  static void expect_near(const Tensor& got, const Tensor& want) {
    auto g = got.to_vector<float>(), w = want.to_vector<float>();
    ASSERT_EQ(g.size(), w.size());
    for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], 1e-5 * (1 + std::abs(w[i])));
  }
};

TEST_F(Breaks, ItemSplitsTheGraphAndItsValueIsGuarded) {
  int item_line = 0;
  auto fn = [&](const Tensor& x) {
    Tensor s = sum(x * 2.0, {0});
    item_line = __LINE__ + 1;
    double v = s.item<double>();
    return x * v + 1.0;
  };
  auto f = compile(fn, {.name = "item"});
  Tensor x = rnd(8, 1);
  expect_near(f(x), fn(x.to(Device::cpu())).to(dev()));
  ExplainReport r = f.explain();
  EXPECT_EQ(r.graph_count, 2u) << r.to_string();
  ASSERT_EQ(r.graph_break_count, 1u);
  EXPECT_NE(r.break_reasons[0].find("item()"), std::string::npos) << r.break_reasons[0];
  EXPECT_NE(r.break_reasons[0].find("breaks_test.cpp:" + std::to_string(item_line)),
            std::string::npos)
      << r.break_reasons[0];
  EXPECT_NE(logs_.find("graph break"), std::string::npos);
  // Same data: the value guard passes, no re-trace.
  f(x);
  EXPECT_EQ(f.stats().compiles, 1u);
  EXPECT_EQ(f.stats().cache_hits, 1u);
  // New data: the read value differs -> a recompile whose reason is the value guard.
  Tensor y = rnd(8, 2);
  expect_near(f(y), fn(y.to(Device::cpu())).to(dev()));
  EXPECT_EQ(f.stats().recompiles, 1u);
  EXPECT_NE(logs_.find("value read by item() at breaks_test.cpp:" + std::to_string(item_line)),
            std::string::npos)
      << logs_;
}

TEST_F(Breaks, DumpManifestsMarkTheBreakAndTheRecompileReason) {
  namespace fs = std::filesystem;
  const fs::path root =
      fs::temp_directory_path() /
      ("kiln_dump_breaks_" + std::to_string(::getpid()) + (kOnDevice ? "_d" : ""));
  fs::remove_all(root);
  ::setenv("KILN_DUMP_DIR", root.c_str(), 1);
  int item_line = 0;
  auto fn = [&](const Tensor& x) {
    Tensor s = sum(x * 2.0, {0});
    item_line = __LINE__ + 1;
    double v = s.item<double>();
    return x * v + 1.0;
  };
  auto f = compile(fn, {.name = "dumped_break"});
  f(rnd(8, 1));
  f(rnd(8, 2));  // the value read differs: a recompile
  ::unsetenv("KILN_DUMP_DIR");
  auto manifest = [&](const std::string& folder) {
    std::ifstream in(root / folder / "manifest.json");
    return nlohmann::json::parse(in, nullptr, false);
  };
  const auto first = manifest("dumped_break_0"), second = manifest("dumped_break_g1_0"),
             again = manifest("dumped_break_1");
  fs::remove_all(root);
  ASSERT_FALSE(first.is_discarded() || second.is_discarded() || again.is_discarded());
  ASSERT_EQ(first["breaks"].size(), 1u);
  EXPECT_NE(first["breaks"][0]["reason"].get<std::string>().find("item()"), std::string::npos);
  EXPECT_EQ(first["breaks"][0]["loc"], "breaks_test.cpp:" + std::to_string(item_line));
  EXPECT_TRUE(first["break_before"].is_null());
  EXPECT_EQ(first["break_after"], 0);
  EXPECT_EQ(second["segment"], 1);
  EXPECT_EQ(second["break_before"], 0);
  EXPECT_TRUE(second["break_after"].is_null());
  EXPECT_EQ(first["reason"], "first call");
  EXPECT_EQ(again["compile"], 1);
  EXPECT_TRUE(again["recompile"].get<bool>());
  EXPECT_NE(again["reason"].get<std::string>().find("value read by item()"), std::string::npos)
      << again["reason"];
}

TEST_F(Breaks, DataDependentIfReplaysBothBranches) {
  auto fn = [](const Tensor& x) {
    if (sum(x, {0}) > 0.0) return x * 2.0;
    return x * 3.0 - 1.0;
  };
  auto f = compile(fn, {.name = "branch"});
  Tensor pos = rnd(16, 3, 0.1f, 1.f), neg = rnd(16, 4, -1.f, -0.1f);
  Tensor pos2 = rnd(16, 5, 0.1f, 1.f), neg2 = rnd(16, 6, -1.f, -0.1f);
  expect_near(f(pos), pos * 2.0);
  expect_near(f(neg), neg * 3.0 - 1.0);
  EXPECT_EQ(f.stats().compiles, 2u);
  // Both branches are cached now: new data on either side replays without tracing.
  expect_near(f(pos2), pos2 * 2.0);
  expect_near(f(neg2), neg2 * 3.0 - 1.0);
  expect_near(f(pos), pos * 2.0);
  EXPECT_EQ(f.stats().compiles, 2u);
  EXPECT_EQ(f.stats().cache_hits, 3u);
  ExplainReport r = f.explain();
  ASSERT_EQ(r.graph_break_count, 1u);
  EXPECT_NE(r.break_reasons[0].find("bool() (data-dependent branch)"), std::string::npos);
  EXPECT_NE(r.break_reasons[0].find("breaks_test.cpp:"), std::string::npos) << r.break_reasons[0];
}

TEST_F(Breaks, BreakInsideALoop) {
  auto fn = [](Tensor x) {
    for (int i = 0; i < 3; ++i) {
      x = x * 0.5 + 1.0;
      if (sum(x, {0}) > 10.0) x = x - 2.0;
    }
    return relu(x);
  };
  auto f = compile(fn, {.name = "loop"});
  for (uint32_t seed = 10; seed < 14; ++seed) {
    Tensor x = rnd(12, seed, -2.f, 4.f);
    expect_near(f(x), fn(x.to(Device::cpu())).to(dev()));
  }
  ExplainReport r = f.explain();
  EXPECT_EQ(r.graph_break_count, 3u) << r.to_string();
  EXPECT_EQ(r.graph_count, 4u) << r.to_string();
}

TEST_F(Breaks, ToVectorAndHostFunctionRunOnReplay) {
  int host_calls = 0;
  auto fn = [&](const Tensor& x) {
    auto y = call_host("negate",
                       [&](const std::vector<Tensor>& in) {
                         ++host_calls;
                         return std::vector<Tensor>{-in[0]};
                       },
                       {exp(x)});
    std::vector<float> v = sum(y[0], {0}).to_vector<float>();
    return y[0] * static_cast<double>(v[0]);
  };
  auto f = compile(fn, {.name = "host"});
  Tensor x = rnd(6, 7);
  expect_near(f(x), fn(x.to(Device::cpu())).to(dev()));
  int after_trace = host_calls;
  f(x);
  EXPECT_EQ(host_calls, after_trace + 1);  // outside-library calls run on every replay
  EXPECT_EQ(f.stats().cache_hits, 1u);
  ExplainReport r = f.explain();
  ASSERT_EQ(r.graph_break_count, 2u);
  EXPECT_NE(r.break_reasons[0].find("host function 'negate'"), std::string::npos);
  EXPECT_NE(r.break_reasons[1].find("to_vector()"), std::string::npos);
}

TEST_F(Breaks, PrintBreaksAndPrintsOnEveryCall) {
  auto f = compile(
      [](const Tensor& x) {
        Tensor y = x + 1.0;
        print("y", y);
        return y * y;
      },
      {.name = "printer"});
  Tensor x = vec({1.f, 2.f});
  testing::internal::CaptureStdout();
  f(x);
  f(x);
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(out, "y: f32[2] [2, 3]\ny: f32[2] [2, 3]\n");
  EXPECT_EQ(f.explain().graph_count, 2u);
  EXPECT_EQ(f.stats().cache_hits, 1u);
}

TEST_F(Breaks, OpsWithoutDeviceLoweringRunOnTheInterpreter) {
  auto fn = [](const Tensor& x) {
    Tensor idx = nonzero(x > 0.0);
    auto [vals, where] = topk(x, 3);
    Tensor scalar_hits = nonzero(sum(x, {0}));  // of a rank-0 tensor: [hits, 0], a host op
    return std::vector<Tensor>{cast(idx, DType::kF32) * 2.0, vals + 1.0,
                               cast(scalar_hits, DType::kF32)};
  };
  auto f = compile(fn, {.name = "cpu_only"});
  Tensor x = vec({0.5f, -1.f, 2.f, 0.f, 3.f});
  auto out = f(x);
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{0.f, 4.f, 8.f}));
  EXPECT_EQ(out[1].to_vector<float>(), (std::vector<float>{4.f, 3.f, 1.5f}));
  EXPECT_EQ(out[2].meta().str(), "f32[1, 0]");
  // nonzero of a rank-0 tensor is a break; topk is a kernel, and so is nonzero of a vector (its
  // length a size symbol, docs/capture.md).
  ExplainReport r = f.explain();
  ASSERT_EQ(r.graph_break_count, 1u);
  EXPECT_NE(r.break_reasons[0].find("nonzero has no device lowering"), std::string::npos)
      << r.break_reasons[0];
  // A different count of non-zeros is another value of that symbol: same entry, right answer.
  auto out2 = f(vec({1.f, 1.f, 1.f, 1.f, -1.f}));
  EXPECT_EQ(out2[0].to_vector<float>(), (std::vector<float>{0.f, 2.f, 4.f, 6.f}));
  EXPECT_EQ(out2[1].to_vector<float>(), (std::vector<float>{2.f, 2.f, 2.f}));
  EXPECT_EQ(f.stats().recompiles, 0u);
}

TEST_F(Breaks, FullgraphTurnsABreakIntoAnError) {
  int line = 0;
  auto f = compile(
      [&](const Tensor& x) {
        line = __LINE__ + 1;
        double v = sum(x, {0}).item<double>();
        return x * v;
      },
      {.name = "strict", .fullgraph = true});
  try {
    f(vec({1.f, 2.f}));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("graph break in 'strict' with fullgraph=true"), std::string::npos) << m;
    EXPECT_NE(m.find("item()"), std::string::npos) << m;
    EXPECT_NE(m.find("breaks_test.cpp:" + std::to_string(line)), std::string::npos) << m;
  }
}

TEST_F(Breaks, RecompileLimitWithErrorPolicy) {
  auto f = compile([](const Tensor& x) { return x + 1.0; },
                   {.name = "limited",
                    .recompile_limit = 2,
                    .on_recompile_limit = RecompileLimitPolicy::kError,
                    .dynamic = Dynamic::kFalse});
  f(rnd(2, 1));
  f(rnd(3, 1));
  f(rnd(4, 1));
  try {
    f(rnd(5, 1));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("'limited' hit its recompile limit (2)"), std::string::npos) << m;
    EXPECT_NE(m.find("input 0 size of dim 0: expected 2, got 5"), std::string::npos) << m;
  }
}

TEST_F(Breaks, RecompileLimitFallsBackToEagerLoudlyOnce) {
  auto f = compile([](const Tensor& x) { return relu(x) * 2.0; },
                   {.name = "churn", .recompile_limit = 1, .dynamic = Dynamic::kFalse});
  for (Dim n = 2; n < 6; ++n) {
    Tensor x = rnd(n, static_cast<uint32_t>(n));
    expect_near(f(x), relu(x) * 2.0);
  }
  // 2 and 3 compile; 4 is past the limit: the dynamic step compiles once with dim 0 symbolic,
  // which then serves 5.
  CompileStats s = f.stats();
  EXPECT_EQ(s.compiles, 3u);
  EXPECT_TRUE(s.dynamic_after_limit);
  EXPECT_EQ(s.eager_calls, 0u);
  // A rank change misses every entry: from now on such calls run eagerly, announced once.
  for (Dim n = 2; n < 4; ++n) {
    Tensor x =
        Tensor::from_vector(std::vector<float>(static_cast<size_t>(n * n), -1.5f), {n, n}, dev());
    expect_near(f(x), relu(x) * 2.0);
  }
  s = f.stats();
  EXPECT_EQ(s.compiles, 3u);
  EXPECT_EQ(s.eager_calls, 2u);
  EXPECT_TRUE(s.recompile_limit_hit);
  size_t first = logs_.find("now run EAGERLY");
  ASSERT_NE(first, std::string::npos) << logs_;
  EXPECT_EQ(logs_.find("now run EAGERLY", first + 1), std::string::npos);  // once
  f(rnd(2, 2));  // cached entries still replay
  EXPECT_EQ(f.stats().cache_hits, 2u);
}

TEST_F(Breaks, ErrorOnRecompile) {
  auto f = compile([](const Tensor& x) { return x * x; },
                   {.name = "frozen", .error_on_recompile = true});
  f(rnd(3, 1));
  try {
    f(rnd(4, 1));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'frozen' would recompile"), std::string::npos);
  }
}

TEST_F(Breaks, ScalarArgumentsAreValueGuarded) {
  auto f = compile([](const Tensor& x, double scale, int shift) { return x * scale + shift; },
                   {.name = "affine"});
  Tensor x = rnd(5, 1);
  expect_near(f(x, 2.0, 1), x * 2.0 + 1.0);
  expect_near(f(x, 2.0, 1), x * 2.0 + 1.0);
  expect_near(f(x, 3.0, 1), x * 3.0 + 1.0);
  EXPECT_EQ(f.stats().compiles, 2u);
  EXPECT_NE(logs_.find("scalar argument 0: expected 2, got 3"), std::string::npos) << logs_;
}

TEST_F(Breaks, ExplainOneShotAndAcrossCalls) {
  ExplainReport once = explain(
      [](const Tensor& x) {
        Tensor y = exp(x);
        print("y", y);
        return y + 1.0;
      },
      vec({0.f}));
  EXPECT_EQ(once.graph_count, 2u);
  EXPECT_EQ(once.graph_break_count, 1u);
  EXPECT_EQ(once.ops_per_graph, (std::vector<size_t>{1, 2}));
  EXPECT_NE(once.guards.find("size(input 0, dim 0) == 1"), std::string::npos) << once.guards;

  auto f = compile([](const Tensor& x) { return x - 1.0; },
                   {.name = "many", .dynamic = Dynamic::kFalse});
  for (Dim n : {2, 3, 2, 4}) f(rnd(n, 1));
  ExplainReport r = f.explain();
  EXPECT_EQ(r.stats.recompiles, 2u);
  ASSERT_EQ(r.recompile_reasons.size(), 2u);
  EXPECT_NE(r.recompile_reasons[1].find("expected 3, got 4"), std::string::npos)
      << r.recompile_reasons[1];
  EXPECT_NE(r.to_string().find("recompile 2:"), std::string::npos);
}

}  // namespace
}  // namespace kiln
