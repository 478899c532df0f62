#include "exec/executable_cache.h"

namespace kiln {

ExecutableCache::ExecutableCache(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

std::shared_ptr<Executable> ExecutableCache::find(const GraphKey& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = slots_.find(key);
  if (it == slots_.end()) {
    ++stats_.misses;
    return nullptr;
  }
  ++stats_.hits;
  uses_.splice(uses_.begin(), uses_, it->second.use);
  return it->second.exe;
}

void ExecutableCache::insert(const GraphKey& key, std::shared_ptr<Executable> exe) {
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, added] = slots_.try_emplace(key);
  if (!added) return;
  it->second.exe = std::move(exe);
  uses_.push_front(&it->first);
  it->second.use = uses_.begin();
  while (slots_.size() > capacity_) {
    const GraphKey* oldest = uses_.back();
    uses_.pop_back();
    slots_.erase(slots_.find(*oldest));
    ++stats_.evictions;
  }
}

ExecutableCache::Stats ExecutableCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.size = slots_.size();
  s.capacity = capacity_;
  return s;
}

void ExecutableCache::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  slots_.clear();
  uses_.clear();
}

namespace {
struct EagerCaches {
  struct Slot {
    std::shared_ptr<ExecutableCache> cache;
    uint64_t last_use = 0;
  };
  std::mutex mu;
  std::unordered_map<uint64_t, Slot> by_device;
  uint64_t clock = 0;
};
EagerCaches& eager_caches() {
  static EagerCaches caches;
  return caches;
}
}  // namespace

std::shared_ptr<ExecutableCache> eager_executable_cache(uint64_t device_id) {
  std::shared_ptr<ExecutableCache> evicted;  // destroyed outside the lock
  EagerCaches& c = eager_caches();
  std::lock_guard<std::mutex> lock(c.mu);
  EagerCaches::Slot& slot = c.by_device[device_id];
  slot.last_use = ++c.clock;
  if (!slot.cache) {
    slot.cache = std::make_shared<ExecutableCache>(kEagerCacheCapacity);
    // Cached executables hold their device: a device released without Device::close is
    // freed once kEagerCacheDevices other devices have run eager ops since its last one.
    if (c.by_device.size() > kEagerCacheDevices) {
      auto oldest = c.by_device.begin();
      for (auto it = c.by_device.begin(); it != c.by_device.end(); ++it)
        if (it->second.last_use < oldest->second.last_use) oldest = it;
      evicted = std::move(oldest->second.cache);
      c.by_device.erase(oldest);
    }
  }
  return c.by_device.at(device_id).cache;
}

size_t eager_cache_device_count() {
  EagerCaches& c = eager_caches();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.by_device.size();
}

void drop_eager_executable_cache(uint64_t device_id) {
  std::shared_ptr<ExecutableCache> dropped;  // destroyed outside the lock
  EagerCaches& c = eager_caches();
  std::lock_guard<std::mutex> lock(c.mu);
  if (auto it = c.by_device.find(device_id); it != c.by_device.end()) {
    dropped = std::move(it->second.cache);
    c.by_device.erase(it);
  }
}

}  // namespace kiln
