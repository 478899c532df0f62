#include "exec/memory_plan.h"

#include <algorithm>
#include <numeric>

namespace kiln {
namespace {

uint64_t round_up(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}

bool overlaps(const BufferLifetime& a, const BufferLifetime& b) {
  return a.first <= b.last && b.first <= a.last;
}

}  // namespace

uint64_t largest_live_bytes(std::span<const BufferLifetime> buffers, uint64_t alignment) {
  int last_kernel = 0;
  for (const BufferLifetime& b : buffers) last_kernel = std::max(last_kernel, b.last);
  std::vector<uint64_t> live(static_cast<size_t>(last_kernel) + 2, 0);
  for (const BufferLifetime& b : buffers) {
    const uint64_t size = round_up(std::max<uint64_t>(b.bytes, 1), alignment);
    live[static_cast<size_t>(b.first)] += size;
    live[static_cast<size_t>(b.last) + 1] -= size;  // wraps; the running sum wraps back
  }
  uint64_t running = 0, most = 0;
  for (size_t t = 0; t + 1 < live.size(); ++t) {
    running += live[t];
    most = std::max(most, running);
  }
  return most;
}

MemoryLayout plan_memory(std::span<const BufferLifetime> buffers, uint64_t alignment) {
  MemoryLayout out;
  out.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].first < buffers[b].first;
  });
  std::vector<size_t> placed;
  std::vector<std::pair<uint64_t, uint64_t>> busy;  // [offset, end) of conflicting buffers
  for (size_t i : order) {
    const uint64_t size = round_up(std::max<uint64_t>(buffers[i].bytes, 1), alignment);
    busy.clear();
    for (size_t j : placed) {
      if (!overlaps(buffers[i], buffers[j])) continue;
      const uint64_t end =
          out.offsets[j] + round_up(std::max<uint64_t>(buffers[j].bytes, 1), alignment);
      busy.emplace_back(out.offsets[j], end);
    }
    std::sort(busy.begin(), busy.end());
    uint64_t offset = 0;  // the first gap that fits
    for (const auto& [begin, end] : busy) {
      if (begin >= offset + size) break;
      offset = std::max(offset, end);
    }
    out.offsets[i] = offset;
    out.arena_bytes = std::max(out.arena_bytes, offset + size);
    placed.push_back(i);
  }
  out.largest_live_bytes = largest_live_bytes(buffers, alignment);
  return out;
}

}  // namespace kiln
