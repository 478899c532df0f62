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
  std::mutex mu;
  std::unordered_map<uint64_t, std::shared_ptr<ExecutableCache>> by_device;
};
EagerCaches& eager_caches() {
  static EagerCaches caches;
  return caches;
}
}  // namespace

std::shared_ptr<ExecutableCache> eager_executable_cache(uint64_t device_id) {
  EagerCaches& c = eager_caches();
  std::lock_guard<std::mutex> lock(c.mu);
  std::shared_ptr<ExecutableCache>& cache = c.by_device[device_id];
  if (!cache) cache = std::make_shared<ExecutableCache>(kEagerCacheCapacity);
  return cache;
}

void drop_eager_executable_cache(uint64_t device_id) {
  std::shared_ptr<ExecutableCache> dropped;  // destroyed outside the lock
  EagerCaches& c = eager_caches();
  std::lock_guard<std::mutex> lock(c.mu);
  if (auto it = c.by_device.find(device_id); it != c.by_device.end()) {
    dropped = std::move(it->second);
    c.by_device.erase(it);
  }
}

}  // namespace kiln
