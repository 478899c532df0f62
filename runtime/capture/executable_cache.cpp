#include "capture/executable_cache.h"

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

size_t ExecutableCache::erase_device(const vk::VulkanDevice* device) {
  std::lock_guard<std::mutex> lock(mu_);
  size_t erased = 0;
  for (auto it = uses_.begin(); it != uses_.end();) {
    auto slot = slots_.find(**it);
    if (slot->second.exe->vulkan_device() == device) {
      it = uses_.erase(it);
      slots_.erase(slot);
      ++erased;
    } else {
      ++it;
    }
  }
  return erased;
}

void ExecutableCache::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  slots_.clear();
  uses_.clear();
}

ExecutableCache& eager_executable_cache() {
  static ExecutableCache cache(kEagerCacheCapacity);
  return cache;
}

}  // namespace kiln
