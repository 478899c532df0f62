// Capture on CPU tensors (no device needed): trace once, guard, replay, recompile with reasons.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace kiln {
namespace {

struct LogCapture {
  std::vector<std::string> lines;
  explicit LogCapture(const char* topics) {
    set_logs(topics);
    set_log_sink([this](LogTopic t, std::string_view m) {
      lines.push_back(std::string(log_topic_name(t)) + ": " + std::string(m));
    });
  }
  ~LogCapture() {
    set_log_sink({});
    set_logs("");
  }
  std::string all() const {
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
  }
};

Tensor iota(Shape shape, float scale = 1.f) {
  std::vector<float> v(static_cast<size_t>(numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * static_cast<float>(i) - 3.f;
  return Tensor::from_vector(v, shape);
}

TEST(Capture, TraceOnceThenReplayWithoutRunningFn) {
  int traces = 0;
  auto f = compile([&](const Tensor& x, const Tensor& a) {
    ++traces;  // a C++ side effect: happens at trace time only
    return relu(x * a + 1.0);
  });
  Tensor x = iota({3, 4}), a = iota({4}, 0.5f);
  std::vector<float> first = f(x, a).to_vector<float>();
  std::vector<float> second = f(x, a).to_vector<float>();
  EXPECT_EQ(traces, 1);
  EXPECT_EQ(first, second);
  EXPECT_EQ(first, relu(x * a + 1.0).to_vector<float>());
  CompileStats s = f.stats();
  EXPECT_EQ(s.calls, 2u);
  EXPECT_EQ(s.compiles, 1u);
  EXPECT_EQ(s.cache_hits, 1u);
  EXPECT_EQ(s.recompiles, 0u);
  ASSERT_EQ(f.entries().size(), 1u);
  EXPECT_FALSE(f.entries()[0].on_device);
}

TEST(Capture, NewShapeRecompilesAndLogsTheFailingGuard) {
  LogCapture logs("recompiles");
  auto f = compile([](const Tensor& x) { return exp(x) - x; }, {.name = "expm"});
  f(iota({2, 5}));
  f(iota({2, 5}));
  f(iota({3, 5}));
  CompileStats s = f.stats();
  EXPECT_EQ(s.compiles, 2u);
  EXPECT_EQ(s.recompiles, 1u);
  EXPECT_EQ(s.cache_hits, 1u);
  std::string text = logs.all();
  EXPECT_NE(text.find("recompiling 'expm'"), std::string::npos) << text;
  EXPECT_NE(text.find("input 0 size of dim 0: expected 2, got 3"), std::string::npos) << text;
  // Both shapes are now cached.
  f(iota({2, 5}));
  f(iota({3, 5}));
  EXPECT_EQ(f.stats().compiles, 2u);
  EXPECT_EQ(f.stats().cache_hits, 3u);
}

TEST(Capture, DtypeAndRankChangesRecompile) {
  LogCapture logs("recompiles_verbose");
  auto f = compile([](const Tensor& x) { return x + x; });
  f(iota({4}));
  std::vector<int32_t> ints = {1, 2, 3, 4};
  Tensor xi = Tensor::from_vector(ints, {4});
  EXPECT_EQ(f(xi).to_vector<int32_t>(), (std::vector<int32_t>{2, 4, 6, 8}));
  f(iota({2, 2}));
  EXPECT_EQ(f.stats().recompiles, 2u);
  EXPECT_NE(logs.all().find("input 0 dtype: expected f32, got i32"), std::string::npos)
      << logs.all();
  EXPECT_NE(logs.all().find("input 0 rank: expected 1, got 2"), std::string::npos) << logs.all();
}

TEST(Capture, CapturedTensorIdentityIsGuarded) {
  LogCapture logs("recompiles");
  auto w = std::make_shared<Tensor>(iota({4}));
  auto f = compile([&](const Tensor& x) { return x * (*w); }, {.name = "scale"});
  Tensor x = iota({4});
  std::vector<float> y1 = f(x).to_vector<float>();
  // In-place updates are read live: no recompile.
  std::vector<float> twos(4, 2.f);
  w->copy_from(twos.data(), twos.size() * sizeof(float));
  EXPECT_EQ(f(x).to_vector<float>(), (x * 2.0).to_vector<float>());
  EXPECT_EQ(f.stats().compiles, 1u);
  // Replacing the captured tensor is an identity change: re-trace.
  *w = iota({4}, 3.f);
  EXPECT_EQ(f(x).to_vector<float>(), (x * iota({4}, 3.f)).to_vector<float>());
  EXPECT_EQ(f.stats().recompiles, 1u);
  EXPECT_NE(logs.all().find("captured tensor 0 (f32[4]) no longer exists"), std::string::npos)
      << logs.all();
  (void)y1;
}

TEST(Capture, BadInputsGiveClearErrorsAndKeepTheCacheUsable) {
  auto f = compile([](const Tensor& x, const Tensor& a) { return x * a; }, {.name = "mul"});
  Tensor x = iota({4, 8});
  f(x, iota({8}));
  try {
    f(x, iota({5}));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("mul(f32[4, 8], f32[5])"), std::string::npos) << m;
    EXPECT_NE(m.find("not broadcastable"), std::string::npos) << m;
  }
  try {
    where(iota({3}), iota({3}), iota({3}));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("condition must be bool"), std::string::npos) << e.what();
  }
  EXPECT_THROW(x.to_vector<int32_t>(), Error);
  EXPECT_EQ(f(x, iota({8})).numel(), 32);
  EXPECT_EQ(f.stats().compiles, 1u);
}

// Shapes whose element count passes int64 would read as 0 elements (numel wraps) and later
// loops would index past their buffers: every way of making one is an error naming the shape.
TEST(Capture, ShapesPastInt64AreErrors) {
  const int64_t big = int64_t{1} << 62;
  auto expect_error = [](auto make, const std::string& part) {
    try {
      Tensor t = make();
      FAIL() << "accepted " << t.str();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  const float one = 1.f;
  expect_error(
      [&] {
        return Tensor::from_bytes(DType::kF32, {big, 16}, &one, 0);
      },
      "more than 2^63 elements");
  expect_error(
      [&] {
        return Tensor::from_vector(std::vector<float>{}, {big, 16, 4});
      },
      "more than 2^63 elements");
  expect_error(
      [&] {
        return Tensor::full({big / 2, 2}, 1.0, DType::kF32);
      },
      "more than 2^63 bytes");
  Tensor x = iota({1, 16});
  expect_error([&] { return expand(x, {big, 16}); }, "more than 2^63 elements");
  expect_error([&] { return reshape(iota({1}), {big, 4, 0}); }, "");
  auto f = compile([=](const Tensor& a) { return sum(expand(a, {big, 16}), {0}); });
  expect_error([&] { return f(x); }, "more than 2^63 elements");
  // A zero-size dim makes any other size fine: no elements.
  EXPECT_EQ(Tensor::full({big, 0}, 1.0, DType::kF32).numel(), 0);
  EXPECT_EQ(sum(iota({1, 16}), {0}).numel(), 16);
}

}  // namespace
}  // namespace kiln
