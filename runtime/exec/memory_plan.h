/// \file memory_plan.h
/// Offsets for a compiled graph's buffers in one arena, by liveness: two buffers share bytes
/// only when no kernel runs while both hold live data.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace kiln {

/// A buffer written by kernel `first` and last read by kernel `last` (positions in execution
/// order, first <= last). Graph outputs and inputs copied in are live to the end (or from the
/// start): give them first = 0 or last = the last kernel.
struct BufferLifetime {
  uint64_t bytes = 0;
  int first = 0;
  int last = 0;
};

struct MemoryLayout {
  std::vector<uint64_t> offsets;    // per buffer, multiples of the alignment
  uint64_t arena_bytes = 0;         // end of the highest buffer
  uint64_t largest_live_bytes = 0;  // the most bytes live during one kernel: a lower bound
};

/// Greedy by size: the largest buffers are placed first, each at the lowest aligned offset
/// that overlaps no placed buffer whose lifetime intersects its own. `alignment` is a power
/// of two; sizes are rounded up to it.
MemoryLayout plan_memory(std::span<const BufferLifetime> buffers, uint64_t alignment);

/// The most bytes (sizes rounded up to `alignment`) live during one kernel: a floor for any
/// layout, also MemoryLayout::largest_live_bytes.
uint64_t largest_live_bytes(std::span<const BufferLifetime> buffers, uint64_t alignment);

}  // namespace kiln
