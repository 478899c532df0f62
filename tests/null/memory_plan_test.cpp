// The arena planner: buffers share bytes only when their lifetimes are disjoint.
#include <gtest/gtest.h>

#include <random>

#include "exec/memory_plan.h"

namespace kiln {
namespace {

bool overlap_in_time(const BufferLifetime& a, const BufferLifetime& b) {
  return a.first <= b.last && b.first <= a.last;
}

/// No two buffers live at the same time overlap in memory; all fit the arena; aligned.
void expect_valid(const std::vector<BufferLifetime>& bufs, const MemoryLayout& m, uint64_t align) {
  ASSERT_EQ(m.offsets.size(), bufs.size());
  for (size_t i = 0; i < bufs.size(); ++i) {
    const uint64_t size_i = (std::max<uint64_t>(bufs[i].bytes, 1) + align - 1) / align * align;
    EXPECT_EQ(m.offsets[i] % align, 0u);
    EXPECT_LE(m.offsets[i] + size_i, m.arena_bytes);
    for (size_t j = i + 1; j < bufs.size(); ++j) {
      if (!overlap_in_time(bufs[i], bufs[j])) continue;
      const uint64_t size_j = (std::max<uint64_t>(bufs[j].bytes, 1) + align - 1) / align * align;
      const bool disjoint =
          m.offsets[i] + size_i <= m.offsets[j] || m.offsets[j] + size_j <= m.offsets[i];
      EXPECT_TRUE(disjoint) << "buffers " << i << " and " << j;
    }
  }
  EXPECT_GE(m.arena_bytes, m.largest_live_bytes);
}

TEST(MemoryPlan, AChainReusesTheBytesOfDeadBuffers) {
  // k0 -> k1 -> k2 -> k3: each buffer is read only by the next kernel.
  const std::vector<BufferLifetime> bufs{{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 3}};
  const MemoryLayout m = plan_memory(bufs, 256);
  expect_valid(bufs, m, 256);
  EXPECT_EQ(m.largest_live_bytes, 2048u);  // two 1024-byte slots live during each kernel
  EXPECT_EQ(m.arena_bytes, 2048u);         // instead of 4096
  EXPECT_EQ(m.offsets[0], m.offsets[2]);
}

TEST(MemoryPlan, BuffersLiveTogetherNeverShare) {
  const std::vector<BufferLifetime> bufs{{300, 0, 5}, {10, 1, 5}, {7000, 2, 5}, {0, 5, 5}};
  const MemoryLayout m = plan_memory(bufs, 16);
  expect_valid(bufs, m, 16);
  EXPECT_EQ(m.arena_bytes, 304u + 16u + 7008u + 16u);
}

TEST(MemoryPlan, RandomLifetimesStayValidAndNearTheFloor) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<BufferLifetime> bufs(1 + rng() % 40);
    for (BufferLifetime& b : bufs) {
      b.bytes = rng() % 5000;
      b.first = static_cast<int>(rng() % 30);
      b.last = b.first + static_cast<int>(rng() % 6);
    }
    const MemoryLayout m = plan_memory(bufs, 64);
    expect_valid(bufs, m, 64);
    uint64_t total = 0;
    for (const BufferLifetime& b : bufs) total += (std::max<uint64_t>(b.bytes, 1) + 63) / 64 * 64;
    EXPECT_LE(m.arena_bytes, total);
  }
}

}  // namespace
}  // namespace kiln
