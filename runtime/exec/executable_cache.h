/// \file executable_cache.h
/// A bounded, thread-safe map from GraphKey to compiled Executable, evicting the least recently
/// used entry when full. Serves eager device ops: every op run eagerly on a device is a
/// one-node graph, and structurally equal ops (graph/graph_key.h) share one executable.
///
/// An evicted executable stays alive while a caller still holds it (shared ownership).
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "exec/executable.h"
#include "graph/graph_key.h"

namespace kiln {

class ExecutableCache {
 public:
  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t evictions = 0;
    size_t size = 0;
    size_t capacity = 0;
  };

  /// `capacity` >= 1 entries.
  explicit ExecutableCache(size_t capacity);

  /// The executable stored under `key` (now the most recently used), or nullptr.
  std::shared_ptr<Executable> find(const GraphKey& key);
  /// Stores `exe` under `key` unless the key is present (another thread compiled it first);
  /// evicts the least recently used entries beyond the capacity.
  void insert(const GraphKey& key, std::shared_ptr<Executable> exe);
  Stats stats() const;
  void clear();

 private:
  struct Slot {
    std::shared_ptr<Executable> exe;
    std::list<const GraphKey*>::iterator use;  // position in uses_
  };
  mutable std::mutex mu_;
  size_t capacity_;
  std::unordered_map<GraphKey, Slot, GraphKeyHash> slots_;
  std::list<const GraphKey*> uses_;  // most recently used first; points at slots_' keys
  Stats stats_;
};

/// Entries of each device's cache of eager device ops.
inline constexpr size_t kEagerCacheCapacity = 256;
/// Devices with a cache of eager ops at once; a further device's first eager op drops the
/// cache of the device whose last eager op is the oldest (its executables, and with them the
/// references they hold to that device).
inline constexpr size_t kEagerCacheDevices = 4;

/// The cache of eager ops run on the device with id `device_id` (vk::VulkanDevice::id();
/// kEagerCacheCapacity entries), made on first use. Each device has its own, so ops run on one
/// device never evict another's.
std::shared_ptr<ExecutableCache> eager_executable_cache(uint64_t device_id);
/// How many devices have a cache of eager ops now (at most kEagerCacheDevices).
size_t eager_cache_device_count();
/// Drops the cache of `device_id` and the executables it holds (Device::close).
void drop_eager_executable_cache(uint64_t device_id);

}  // namespace kiln
