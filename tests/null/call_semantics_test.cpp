// What one call of a compiled function promises whatever its arguments: clear errors for bad
// arguments once entries exist, failed calls that leave the cache as it was, host functions
// run once per call, fullgraph's guarantee past the recompile limit, nesting errors, unique
// dump folders. Built twice: CPU tensors (label null) and Vulkan (KILN_TEST_ON_DEVICE).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

#include "kiln/kiln.h"
#include "null/capture_fixture.h"

namespace kiln {
namespace {

class CallSemantics : public test::CaptureTest {
 protected:
  CallSemantics() : CaptureTest("recompiles") {}
  static Tensor vec(std::vector<float> v) {
    Shape s{static_cast<Dim>(v.size())};
    return Tensor::from_vector(v, s, dev());
  }
  static Tensor ramp(Dim n, float start = 1.f) {
    std::vector<float> v(static_cast<size_t>(n));
    for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
    return vec(v);
  }
};

TEST_F(CallSemantics, UndefinedArgumentAfterAnEntryIsAClearError) {
  auto f = compile([](const Tensor& x) { return x + 1.0; }, {.name = "undef"});
  f(ramp(4));
  try {
    f(Tensor());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("argument 0 is undefined"), std::string::npos) << e.what();
  }
  EXPECT_EQ(f(ramp(4)).to_vector<float>(), (std::vector<float>{2, 3, 4, 5}));
  EXPECT_EQ(f.stats().compiles, 1u);
  EXPECT_EQ(f.stats().cache_hits, 1u);
}

TEST_F(CallSemantics, FailedCallsLeaveTheRecompileBudgetAlone) {
  // reshape({2, -1}) fails for odd sizes: such calls throw and must not count as recompiles.
  auto f = compile(
      [](const Tensor& x) {
        return reshape(x, {2, -1}) * 2.0;
      },
      {.name = "reshaper", .recompile_limit = 2, .dynamic = Dynamic::kFalse});
  f(ramp(8));
  for (int i = 0; i < 9; ++i) EXPECT_THROW(f(ramp(7)), Error);
  EXPECT_EQ(f.stats().recompiles, 0u);
  EXPECT_EQ(f.stats().compiles, 1u);
  EXPECT_TRUE(f.explain().recompile_reasons.empty());
  // The next valid new shape compiles (it is the first real recompile), not an eager run.
  Tensor y = f(ramp(6));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ(f.stats().recompiles, 1u);
  EXPECT_EQ(f.stats().eager_calls, 0u);
  EXPECT_FALSE(f.stats().recompile_limit_hit);
}

TEST_F(CallSemantics, HostFunctionRunsOncePerCallAcrossEntriesAndRetraces) {
  int host_calls = 0;
  HostFunction host = [&](const std::vector<Tensor>& a) {
    ++host_calls;
    return std::vector<Tensor>{a[0] * 1.0};
  };
  auto fn = [&](const Tensor& x) {
    Tensor y = call_host("count", host, {x})[0];
    if (sum(y, {0}) > 0.0) return y * 2.0;  // a value guard after the host step
    return y * 3.0;
  };
  auto f = compile(fn, {.name = "host_once"});
  const std::vector<std::vector<float>> inputs = {{1, 2},   {-1, -2}, {3, 4},
                                                  {-3, -4}, {5, 6},   {-5, -1}};
  for (size_t i = 0; i < inputs.size(); ++i) {
    Tensor y = f(vec(inputs[i]));
    EXPECT_EQ(host_calls, static_cast<int>(i + 1)) << "call " << i;
    const float k = inputs[i][0] > 0 ? 2.f : 3.f;
    EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{k * inputs[i][0], k * inputs[i][1]}));
  }
  EXPECT_EQ(f.stats().compiles, 2u);  // one entry per branch
}

TEST_F(CallSemantics, CapturedTensorReadByAHostStepStaysLive) {
  Tensor w = vec({1.f, 2.f});
  HostFunction twice = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{a[0] * 2.0}; };
  auto f = compile([&](const Tensor& x) { return x + call_host("twice", twice, {w})[0]; },
                   {.name = "live_weight"});
  Tensor x = vec({10.f, 20.f});
  EXPECT_EQ(f(x).to_vector<float>(), (std::vector<float>{12.f, 24.f}));
  const std::vector<float> w2 = {3.f, 4.f};
  w.copy_from(w2.data(), w2.size() * sizeof(float));
  EXPECT_EQ(f(x).to_vector<float>(), (std::vector<float>{16.f, 28.f}));
  EXPECT_EQ(f.stats().compiles, 1u);
}

// A concrete tensor made inside the traced code and dropped before its segment runs (here a
// copy of a captured weight) was captured weakly and gone when the segment ran: a crash. The
// trace now holds what it captures until it ends; later calls re-trace (the copy is new each
// time: its identity guard fails) and stay right.
TEST_F(CallSemantics, TemporaryMadeInsideATraceLivesUntilItsSegmentRuns) {
  Tensor w = vec({1.f, 2.f});
  auto f = compile(
      [&](const Tensor& x) {
        Tensor copy = Tensor::from_vector(w.to_vector<float>(), {2}, dev());
        return x * copy;
      },
      {.name = "temporary"});
  Tensor x = vec({10.f, 20.f});
  for (int call = 0; call < 3; ++call)
    EXPECT_EQ(f(x).to_vector<float>(), (std::vector<float>{10.f, 40.f})) << "call " << call;
}

TEST_F(CallSemantics, FullgraphNeverFallsBackToEagerPastTheLimit) {
  auto make = [](bool fullgraph) {
    return compile([](const Tensor& x) { return x * 2.0; }, {.name = "strict_limit",
                                                             .fullgraph = fullgraph,
                                                             .recompile_limit = 1,
                                                             .dynamic = Dynamic::kFalse});
  };
  auto f = make(true);
  f(ramp(2));
  f(ramp(3));  // recompile 1
  f(ramp(4));  // past the limit: the one symbolic recompile (compiled code)
  EXPECT_TRUE(f.stats().dynamic_after_limit);
  Tensor m = Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2}, dev());
  try {
    f(m);  // a rank change no entry covers: would run eagerly
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("fullgraph=true"), std::string::npos) << e.what();
  }
  EXPECT_EQ(f.stats().eager_calls, 0u);
  // Without fullgraph the same call runs eagerly and is right.
  auto g = make(false);
  g(ramp(2));
  g(ramp(3));
  g(ramp(4));
  EXPECT_EQ(g(m).to_vector<float>(), (std::vector<float>{2, 4, 6, 8}));
  EXPECT_EQ(g.stats().eager_calls, 1u);
}

TEST_F(CallSemantics, RecompileLimitHitIsSetWhenTheLimitIsAnnounced) {
  auto f = compile([](const Tensor& x) { return x + 1.0; },
                   {.name = "limit_flag", .recompile_limit = 1, .dynamic = Dynamic::kFalse});
  f(ramp(2));
  f(ramp(3));
  EXPECT_FALSE(f.stats().recompile_limit_hit);
  f(ramp(4));  // the limit warning, and the symbolic recompile
  EXPECT_TRUE(f.stats().recompile_limit_hit);
  EXPECT_TRUE(f.stats().dynamic_after_limit);
}

TEST_F(CallSemantics, StaticMarkedDimsNeverAnnounceASymbolicRecompile) {
  auto f = compile([](const Tensor& x) { return x + 1.0; },
                   {.name = "all_static", .recompile_limit = 1});
  for (Dim n : {2, 3, 4, 5}) {
    Tensor x = ramp(n);
    mark_static(x, 0);
    EXPECT_EQ(f(x).to_vector<float>(), (ramp(n, 2.f)).to_vector<float>());
  }
  EXPECT_EQ(logs_.find("recompiling ONCE"), std::string::npos) << logs_;
  EXPECT_FALSE(f.stats().dynamic_after_limit);
  EXPECT_EQ(f.stats().eager_calls, 2u);
  EXPECT_EQ(f.stats().dynamic_compiles, 0u);
}

TEST_F(CallSemantics, CallingACompiledFunctionFromATraceIsTheNestingError) {
  auto inner = compile([](const Tensor& x) { return x * 2.0; }, {.name = "inner"});
  inner(ramp(3));  // inner has an entry: the guard path is the one reached from the trace
  auto outer = compile([&](const Tensor& x) { return inner(x) + 1.0; }, {.name = "outer"});
  try {
    outer(ramp(3));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot nest"), std::string::npos) << e.what();
  }
}

TEST_F(CallSemantics, DynamicCompilesCountOnlyGraphsThatKeepASymbol) {
  auto f = compile(
      [](const Tensor& x) {
        const int64_t n = x.size(0);  // specialises the only symbol
        return x * static_cast<double>(n);
      },
      {.name = "specialised", .dynamic = Dynamic::kTrue});
  EXPECT_EQ(f(ramp(4)).to_vector<float>(), (std::vector<float>{4, 8, 12, 16}));
  EXPECT_EQ(f.stats().compiles, 1u);
  EXPECT_EQ(f.stats().dynamic_compiles, 0u);
  auto g = compile([](const Tensor& x) { return x * 2.0; },
                   {.name = "symbolic", .dynamic = Dynamic::kTrue});
  g(ramp(4));
  EXPECT_EQ(g.stats().dynamic_compiles, 1u);
}

TEST_F(CallSemantics, SameNamedFunctionsDumpIntoTheirOwnFolders) {
  namespace fs = std::filesystem;
  const fs::path root =
      fs::temp_directory_path() /
      ("kiln_dump_names_" + std::to_string(::getpid()) + (test::kOnDevice ? "_d" : ""));
  fs::remove_all(root);
  ::setenv("KILN_DUMP_DIR", root.c_str(), 1);
  auto f = compile([](const Tensor& x) { return x + 1.0; }, {.name = "twin"});
  auto g = compile([](const Tensor& x) { return x * 3.0; }, {.name = "twin"});
  f(ramp(4));
  g(ramp(4));
  ::unsetenv("KILN_DUMP_DIR");
  std::vector<std::string> graphs, manifests;
  for (const auto& d : fs::directory_iterator(root)) {
    std::ifstream in(d.path() / "graph.txt");
    graphs.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    std::ifstream m(d.path() / "manifest.json");
    manifests.emplace_back(std::istreambuf_iterator<char>(m), std::istreambuf_iterator<char>());
  }
  fs::remove_all(root);
  ASSERT_EQ(graphs.size(), 2u);
  EXPECT_NE(graphs[0], graphs[1]);
  // Each folder's manifest names the function and its own unique prefix (in either order: the
  // manifests' other fields, not the prefixes, decide how their texts sort).
  for (const std::string& m : manifests)
    EXPECT_NE(m.find("\"function\": \"twin\""), std::string::npos) << m;
  auto has = [](const std::string& m, const char* prefix) {
    return m.find(std::string("\"prefix\": \"") + prefix + "\"") != std::string::npos;
  };
  EXPECT_TRUE((has(manifests[0], "twin") && has(manifests[1], "twin-2")) ||
              (has(manifests[0], "twin-2") && has(manifests[1], "twin")))
      << manifests[0] << "\n" << manifests[1];
}

}  // namespace
}  // namespace kiln
