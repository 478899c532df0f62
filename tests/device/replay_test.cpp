// Replay: a compiled graph's command buffer is recorded once per memory layout and replayed;
// its intermediates live in one arena planned by liveness (runtime/exec/replay.h).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "device/test_util.h"
#include "kiln/kiln.h"
#include "vk/device.h"

namespace kiln {
namespace {

/// Vulkan tests: skipped without a device; fail on any validation message or a silent
/// interpreter fallback.
class Replay : public test::DeviceTest {};

Tensor rand_tensor(Shape shape, uint32_t seed, Device device) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.f, 2.f);
  std::vector<float> v(static_cast<size_t>(numel(shape)));
  for (float& x : v) x = dist(rng);
  return Tensor::from_vector(v, shape, device);
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, float tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << "at " << i;
}

/// Several kernels with intermediates that die early (the arena reuses their bytes).
Tensor block(const Tensor& x, const Tensor& w) {
  Tensor h = relu(matmul(x, w) + 1.0);
  Tensor p = softmax(h * 0.5, -1);
  return p + sum(h, {-1}, true) * 0.01;
}

TEST_F(Replay, CachedCallAllocatesNothingAndRecordsNothing) {
  auto f = compile(block, {.name = "block", .dynamic = Dynamic::kFalse});
  const Tensor w = rand_tensor({32, 24}, 1, Device::vulkan());
  std::vector<Tensor> xs;
  for (uint32_t i = 0; i < 3; ++i) xs.push_back(rand_tensor({37, 32}, 10 + i, Device::vulkan()));
  f(xs[0], w);  // compile and record; the output is dropped
  f(xs[1], w);
  ASSERT_EQ(f.entries().size(), 1u);
  ASSERT_TRUE(f.entries()[0].on_device);
  EXPECT_GE(f.entries()[0].kernels.size(), 2u);
  EXPECT_EQ(f.entries()[0].recordings, 1u);
  auto device = vk::VulkanDevice::default_device();
  ASSERT_TRUE(device.ok());
  const bool unified = (*device)->info().unified_memory;

  const RuntimeCounters c0 = runtime_counters();
  Tensor y = f(xs[2], w);
  const RuntimeCounters c1 = runtime_counters();
  EXPECT_EQ(c1.memory_allocations, c0.memory_allocations);
  EXPECT_EQ(f.entries()[0].recordings, 1u);
  EXPECT_EQ(f.entries()[0].replays, 3u);
  EXPECT_EQ(c1.dispatches - c0.dispatches, f.entries()[0].kernels.size());
  EXPECT_EQ(c1.submissions - c0.submissions, 1u);
  EXPECT_EQ(c1.buffer_allocations, c0.buffer_allocations);
  // Inputs are copied in and outputs handed out without any transfer command on unified memory;
  // otherwise the copies in are one command buffer, submitted with the recording.
  EXPECT_EQ(c1.command_buffers_recorded - c0.command_buffers_recorded, unified ? 0u : 1u);
  const Tensor xc = xs[2].to(Device::cpu()), wc = w.to(Device::cpu());
  expect_close(y.to_vector<float>(), block(xc, wc).to_vector<float>(), 1e-5f);

  // The arena holds the intermediates by liveness: no more than all of them, at least the
  // largest live set.
  const EntryInfo e = f.entries()[0];
  EXPECT_GE(e.arena_bytes, e.largest_live_bytes);
  EXPECT_GT(e.largest_live_bytes, 0u);
  EXPECT_NE(f.explain().to_string().find("largest live set"), std::string::npos);
}

TEST_F(Replay, AnOutputHeldAcrossCallsKeepsItsValues) {
  auto f = compile(block, {.name = "held", .dynamic = Dynamic::kFalse});
  const Tensor w = rand_tensor({32, 24}, 2, Device::vulkan());
  const Tensor x1 = rand_tensor({5, 32}, 20, Device::vulkan());
  const Tensor x2 = rand_tensor({5, 32}, 21, Device::vulkan());
  Tensor y1 = f(x1, w);
  Tensor y2 = f(x2, w);  // y1 is held: the second output bank
  // Both banks hold live results: the spill bank, its output copied out. An output fed back in.
  Tensor y3 = f(sum(reshape(y2, {5, 24}), {-1}, true) * x1, w);
  const Tensor wc = w.to(Device::cpu());
  const Tensor r1 = block(x1.to(Device::cpu()), wc), r2 = block(x2.to(Device::cpu()), wc);
  expect_close(y1.to_vector<float>(), r1.to_vector<float>(), 1e-5f);
  expect_close(y2.to_vector<float>(), r2.to_vector<float>(), 1e-5f);
  const Tensor r3 = block(sum(r2, {-1}, true) * x1.to(Device::cpu()), wc);
  expect_close(y3.to_vector<float>(), r3.to_vector<float>(), 1e-5f);
}

TEST_F(Replay, ALoopHoldingThePreviousResultAlternatesTwoOutputBanks) {
  auto f = compile(block, {.name = "loop", .dynamic = Dynamic::kFalse});
  const Tensor w = rand_tensor({32, 24}, 4, Device::vulkan());
  std::vector<Tensor> xs;
  for (uint32_t i = 0; i < 6; ++i) xs.push_back(rand_tensor({9, 32}, 40 + i, Device::vulkan()));
  Tensor y = f(xs[0], w);
  y = f(xs[1], w);  // the first result is alive during the call: a second output bank
  EXPECT_EQ(f.entries()[0].recordings, 2u);
  auto device = vk::VulkanDevice::default_device();
  ASSERT_TRUE(device.ok());
  const RuntimeCounters c0 = runtime_counters();
  for (size_t i = 2; i < xs.size(); ++i) y = f(xs[i], w);
  const RuntimeCounters c1 = runtime_counters();
  EXPECT_EQ(f.entries()[0].recordings, 2u);
  EXPECT_EQ(c1.memory_allocations, c0.memory_allocations);
  if ((*device)->info().unified_memory) {  // no copy of a held result, no recording
    EXPECT_EQ(c1.buffer_allocations, c0.buffer_allocations);
    EXPECT_EQ(c1.command_buffers_recorded, c0.command_buffers_recorded);
  }
  expect_close(y.to_vector<float>(),
               block(xs.back().to(Device::cpu()), w.to(Device::cpu())).to_vector<float>(), 1e-5f);
}

TEST_F(Replay, ALargeResultFedBackIsCopiedInNotRecordedAgain) {
  // y = f(y) with y over the 1 MiB copy threshold: each result is a new buffer, so binding it
  // would record every call; the graph's own results are copied into the arena instead.
  auto f = compile([](const Tensor& y) { return relu(y * 0.5 + 1.0) - 0.25; },
                   {.name = "feedback", .dynamic = Dynamic::kFalse});
  const Tensor y0 = rand_tensor({512, 1024}, 5, Device::vulkan());  // 2 MiB
  Tensor y = f(y0);
  y = f(y);  // the first call's result comes back: the layout changes once
  y = f(y);  // its result is held while the call runs: the second output bank
  const uint64_t recordings = f.entries()[0].recordings;
  EXPECT_EQ(recordings, 3u);
  const RuntimeCounters c0 = runtime_counters();
  for (int i = 0; i < 4; ++i) y = f(y);
  const RuntimeCounters c1 = runtime_counters();
  EXPECT_EQ(f.entries()[0].recordings, recordings);
  EXPECT_EQ(c1.memory_allocations, c0.memory_allocations);
  Tensor want = y0.to(Device::cpu());
  for (int i = 0; i < 7; ++i) want = relu(want * 0.5 + 1.0) - 0.25;
  expect_close(y.to_vector<float>(), want.to_vector<float>(), 1e-6f);
}

TEST_F(Replay, HostConstantsAreCopiedInOnEveryCall) {
  // A captured CPU tensor goes into its arena slot on every call, straight from its host data.
  Tensor bias = rand_tensor({24}, 6, Device::cpu());
  auto f = compile([&bias](const Tensor& x) { return relu(x + bias); },
                   {.name = "host_const", .dynamic = Dynamic::kFalse});
  for (uint32_t i = 0; i < 3; ++i) {
    const Tensor x = rand_tensor({7, 24}, 60 + i, Device::vulkan());
    const Tensor y = f(x);
    expect_close(y.to_vector<float>(), relu(x.to(Device::cpu()) + bias).to_vector<float>(), 1e-6f);
  }
  ASSERT_EQ(f.entries().size(), 1u);
  EXPECT_TRUE(f.entries()[0].on_device);
  EXPECT_EQ(f.entries()[0].recordings, 1u);
}

TEST_F(Replay, OneRecordingServesSeveralSizesOfAShapeClass) {
  auto f = compile(block, {.name = "sizes", .dynamic = Dynamic::kTrue});
  const Tensor w = rand_tensor({32, 24}, 3, Device::vulkan());
  const Tensor wc = w.to(Device::cpu());
  uint32_t seed = 30;
  auto check = [&](Dim rows) {
    const Tensor x = rand_tensor({rows, 32}, seed++, Device::vulkan());
    const Tensor y = f(x, w);
    EXPECT_EQ(y.shape(), (Shape{rows, 24}));
    expect_close(y.to_vector<float>(), block(x.to(Device::cpu()), wc).to_vector<float>(), 1e-5f);
  };
  for (Dim rows : {64, 40, 17, 2, 63, 64}) check(rows);
  ASSERT_EQ(f.entries().size(), 1u);
  EXPECT_EQ(f.stats().compiles, 1u);
  EXPECT_EQ(f.entries()[0].recordings, 1u);  // every size fit the first layout
  check(200);                                // past the arena's capacity: a new layout
  EXPECT_EQ(f.entries()[0].recordings, 2u);
  check(250);  // the capacities grew past the need
  check(5);
  EXPECT_EQ(f.entries()[0].recordings, 2u);
}

}  // namespace
}  // namespace kiln
