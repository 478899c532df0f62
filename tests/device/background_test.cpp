// Background compilation (CompileOptions::background, docs/capture.md): calls made while an
// entry compiles are served by the interpreter or by a ready entry that covers them, the
// compiled kernels are swapped in once built and warmed, and every path gives the same answer.
// Calls from many threads race with the swap (run under ThreadSanitizer by
// `scripts/run.sh tsan`), and a compile that fails in the background leaves the calls served
// and the failure logged.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "exec/background.h"
#include "exec/executable.h"
#include "device/test_util.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

/// Holds the background workers for the scope: queued compiles wait, so the calls made
/// meanwhile are served before any swap.
class HoldCompiles {
 public:
  HoldCompiles() { BackgroundCompiler::instance().hold(true); }
  ~HoldCompiles() { release(); }
  void release() { BackgroundCompiler::instance().hold(false); }
};

/// A function with a matmul, a reduction, a broadcast and an elementwise chain.
Tensor model(const Tensor& x, const Tensor& w) {
  Tensor h = relu(matmul(x, w) + 0.5f);
  return h * sigmoid(h) - mean(h, {1}, true);
}

std::vector<float> random_floats(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

/// |a - b| <= 1e-4 * (1 + |b|) everywhere: the interpreter and the kernels round differently
/// (docs/ops.md gives the oracle's tolerance).
void expect_close(const Tensor& got, const Tensor& want, const std::string& what) {
  const std::vector<float> a = got.to(Device::cpu()).to_vector<float>();
  const std::vector<float> b = want.to(Device::cpu()).to_vector<float>();
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_LE(std::fabs(a[i] - b[i]), 1e-4f * (1.0f + std::fabs(b[i])))
        << what << ": element " << i << " is " << a[i] << ", expected " << b[i];
}

class BackgroundTest : public test::DeviceTest {};

TEST_F(BackgroundTest, CallsBeforeTheSwapRunOnTheInterpreterAndAgreeWithTheKernels) {
  const Device vk = Device::vulkan();
  const Tensor w = Tensor::from_vector(random_floats(24 * 5, 1), {24, 5}, vk);
  auto f = compile([&w](const Tensor& x) { return model(x, w); },
                   {.name = "bg_paths", .dynamic = Dynamic::kFalse, .background = true});
  const Tensor x_cpu = Tensor::from_vector(random_floats(7 * 24, 2), {7, 24});
  const Tensor x = x_cpu.to(vk);
  const Tensor want = model(x_cpu, w.to(Device::cpu()));  // the interpreter, eagerly

  HoldCompiles hold;
  const Tensor first = f(x);  // traced; its segment queued, so the interpreter answers
  const Tensor second = f(x);
  CompileStats st = f.stats();
  EXPECT_EQ(st.compiles, 1u);
  EXPECT_EQ(st.calls_while_compiling, 2u);
  ASSERT_EQ(f.entries().size(), 1u);
  EXPECT_FALSE(f.entries()[0].ready);
  EXPECT_FALSE(f.entries()[0].on_device);
  EXPECT_EQ(first.device(), vk);  // results live where the arguments do, whatever served
  expect_close(first, want, "first call (interpreter)");
  expect_close(second, want, "second call (interpreter)");

  hold.release();
  f.wait_ready();
  const RuntimeCounters before = runtime_counters();
  const Tensor third = f(x);
  EXPECT_GT(runtime_counters().dispatches, before.dispatches) << "the kernels did not run";
  st = f.stats();
  EXPECT_EQ(st.calls_while_compiling, 2u);
  EXPECT_EQ(st.compiles, 1u);
  const EntryInfo e = f.entries().at(0);
  EXPECT_TRUE(e.ready);
  EXPECT_TRUE(e.on_device);
  EXPECT_FALSE(e.kernels.empty());
  EXPECT_GT(e.background_ms, 0.0);
  EXPECT_TRUE(e.background_error.empty());
  expect_close(third, want, "compiled call");
  expect_close(third, first, "compiled against interpreter-served call");
  EXPECT_NE(f.explain().to_string().find("2 call(s) served by the interpreter"), std::string::npos)
      << f.explain().to_string();
}

TEST_F(BackgroundTest, AReadyEntryCoversCallsWhileANewerOneCompiles) {
  const Device vk = Device::vulkan();
  const Tensor w = Tensor::from_vector(random_floats(16 * 3, 3), {16, 3}, vk);
  auto f = compile([&w](const Tensor& x) { return model(x, w); },
                   {.name = "bg_cover", .dynamic = Dynamic::kAuto, .background = true});
  auto cpu_model = [&w](const Tensor& x) { return model(x, w.to(Device::cpu())); };
  const Tensor x8 = Tensor::from_vector(random_floats(8 * 16, 4), {8, 16});
  const Tensor x13 = Tensor::from_vector(random_floats(13 * 16, 5), {13, 16});
  f.precompile(x8.to(vk));  // entry 0: static, size 8, ready
  ASSERT_TRUE(f.entries().at(0).ready);

  HoldCompiles hold;
  const Tensor y13 = f(x13.to(vk));  // entry 1: size symbolic, queued
  ASSERT_EQ(f.entries().size(), 2u);
  EXPECT_FALSE(f.entries()[1].ready);
  EXPECT_FALSE(f.entries()[1].symbols.empty());
  const Tensor y8 = f(x8.to(vk));  // both entries match: the ready static one serves
  const CompileStats st = f.stats();
  EXPECT_EQ(st.calls_covered, 1u);
  EXPECT_EQ(st.calls_while_compiling, 2u);  // precompile's own call and the size-13 call
  expect_close(y13, cpu_model(x13), "size 13 (interpreter)");
  expect_close(y8, cpu_model(x8), "size 8 (covering entry)");

  hold.release();
  f.wait_ready();
  const Tensor x21 = Tensor::from_vector(random_floats(21 * 16, 6), {21, 16});
  expect_close(f(x21.to(vk)), cpu_model(x21), "size 21 (symbolic entry, compiled)");
  EXPECT_EQ(f.stats().compiles, 2u);
  EXPECT_TRUE(f.entries()[1].on_device);
}

TEST_F(BackgroundTest, AFailedBackgroundCompileIsLoggedAndTheCallsStayServed) {
  allow_cpu_fallback_ = true;
  const Device vk = Device::vulkan();
  const Tensor w = Tensor::from_vector(random_floats(10 * 4, 7), {10, 4}, vk);
  inject_background_compile_failure("bg_fault");
  auto f = compile([&w](const Tensor& x) { return model(x, w); },
                   {.name = "bg_fault", .dynamic = Dynamic::kFalse, .background = true});
  const Tensor x_cpu = Tensor::from_vector(random_floats(5 * 10, 8), {5, 10});
  const Tensor want = model(x_cpu, w.to(Device::cpu()));
  const Tensor first = f(x_cpu.to(vk));
  f.wait_ready();
  inject_background_compile_failure("");
  const Tensor second = f(x_cpu.to(vk));
  expect_close(first, want, "call before the failure");
  expect_close(second, want, "call after the failure");
  const EntryInfo e = f.entries().at(0);
  EXPECT_TRUE(e.ready);
  EXPECT_FALSE(e.on_device);
  EXPECT_NE(e.background_error.find("injected"), std::string::npos) << e.background_error;
  bool logged = false;
  for (const std::string& m : warnings())
    logged |= m.find("background compile failed") != std::string::npos &&
              m.find("bg_fault") != std::string::npos;
  EXPECT_TRUE(logged) << "no warning about the failed background compile";
  EXPECT_NE(f.explain().to_string().find("background compile failed"), std::string::npos);
}

TEST_F(BackgroundTest, ManyThreadsRaceTheSwap) {
  // Small integers in f32: every op below is exact, so each result is checked exactly.
  const Device vk = Device::vulkan();
  auto f = compile([](const Tensor& x) { return sum(x * x + x, {1}) - 3.0f; },
                   {.name = "bg_race", .dynamic = Dynamic::kAuto, .background = true});
  constexpr int kThreads = 6;
  const int calls = 30;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<uint32_t>(100 + t));
      for (int i = 0; i < calls && failures[t].empty(); ++i) {
        const int64_t rows = 2 + (t + i) % 3, cols = 3 + (i % 4) * 2;
        std::vector<float> v(static_cast<size_t>(rows * cols));
        for (float& x : v) x = static_cast<float>(static_cast<int>(rng() % 7) - 3);
        try {
          const std::vector<float> got =
              f(Tensor::from_vector(v, {rows, cols}, vk)).to_vector<float>();
          for (int64_t r = 0; r < rows; ++r) {
            float want = -3.0f;
            for (int64_t c = 0; c < cols; ++c) {
              const float x = v[static_cast<size_t>(r * cols + c)];
              want += x * x + x;
            }
            if (got.at(static_cast<size_t>(r)) != want) {
              failures[t] = "thread " + std::to_string(t) + " call " + std::to_string(i) + " row " +
                            std::to_string(r) + ": " + std::to_string(got[static_cast<size_t>(r)]) +
                            " != " + std::to_string(want);
              break;
            }
          }
        } catch (const Error& e) {
          failures[t] = e.what();
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (const std::string& fail : failures) EXPECT_TRUE(fail.empty()) << fail;
  f.wait_ready();
  for (const EntryInfo& e : f.entries()) EXPECT_TRUE(e.ready);
  const CompileStats st = f.stats();
  EXPECT_EQ(st.calls, static_cast<uint64_t>(kThreads * calls));
}

}  // namespace
}  // namespace kiln
