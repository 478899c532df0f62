// Huge-page host buffers (host_memory.h): aligned_alloc at 2 MiB, then madvise(MADV_HUGEPAGE).
// The advice is only advice: with transparent huge pages off ("never") or no 2 MiB page free,
// the kernel maps 4 KiB pages as before. glibc serves these sizes by mmap and returns them on
// free, so the advice never reaches memory another allocation reuses. Freed blocks (these and
// those from 64 KiB up) are kept for reuse by size, up to KILN_HOST_CACHE_MB in all (default
// 512), so that an interpreter call does not fault its intermediates' pages in again every call.
#include "core/host_memory.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "core/platform.h"

namespace kiln::host_memory {
namespace {

bool advise_huge_pages() {
  static const bool on = [] {
    const char* v = std::getenv("KILN_HUGEPAGES");
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return on;
}

/// Blocks of 2 MiB and more are whole huge pages; smaller ones whole multiples of 64 KiB.
size_t block_unit(size_t bytes) {
  return bytes >= kHugeThreshold ? kHugeThreshold : kCachedThreshold;
}
size_t rounded_size(size_t bytes) {
  const size_t unit = block_unit(bytes);
  return (bytes + unit - 1) / unit * unit;
}

/// Freed large blocks by rounded size, kept for the next allocation of that size.
class BlockCache {
 public:
  void* take(size_t rounded) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = blocks_.find(rounded);
    if (it == blocks_.end()) return nullptr;
    void* p = it->second;
    blocks_.erase(it);
    held_ -= rounded;
    return p;
  }
  /// Keeps `p` unless that would hold more than the limit; false when the caller must free it.
  bool keep(void* p, size_t rounded) {
    std::lock_guard<std::mutex> lock(mu_);
    if (held_ + rounded > limit_) return false;
    blocks_.emplace(rounded, p);
    held_ += rounded;
    return true;
  }
  size_t held() {
    std::lock_guard<std::mutex> lock(mu_);
    return held_;
  }
  void release_all() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [size, p] : blocks_) std::free(p);  // NOLINT(cppcoreguidelines-no-malloc)
    blocks_.clear();
    held_ = 0;
  }

 private:
  static size_t limit_from_env() {
#if defined(__SANITIZE_ADDRESS__)
    return 0;  // under AddressSanitizer every freed block goes back, so a late use is reported
#else
    const char* v = std::getenv("KILN_HOST_CACHE_MB");
    if (v == nullptr || *v == '\0') return size_t{512} << 20;
    char* end = nullptr;
    const unsigned long long mb = std::strtoull(v, &end, 10);
    return end == v ? size_t{512} << 20 : static_cast<size_t>(mb) << 20;
#endif
  }
  std::mutex mu_;
  std::multimap<size_t, void*> blocks_;
  size_t held_ = 0;
  const size_t limit_ = limit_from_env();
};

BlockCache& cache() {
  // Never destroyed: tensors in static storage may free their blocks during exit.
  static BlockCache* c = new BlockCache();  // NOLINT(cppcoreguidelines-owning-memory)
  return *c;
}

}  // namespace

size_t cached_bytes() {
  return cache().held();
}

void release_cached() {
  cache().release_all();
}

void* allocate_large(size_t bytes) {
  const size_t rounded = rounded_size(bytes);
  if (void* p = cache().take(rounded)) return p;
  void* p = std::aligned_alloc(rounded >= kHugeThreshold ? kHugeThreshold : 64, rounded);
  if (p == nullptr) throw std::bad_alloc();
  if (rounded >= kHugeThreshold) advise_huge(p, rounded);
  return p;
}

void advise_huge(void* p, size_t bytes) noexcept {
  if (!advise_huge_pages() || p == nullptr) return;
  const auto begin = reinterpret_cast<uintptr_t>(p);
  const uintptr_t first = (begin + kHugeThreshold - 1) / kHugeThreshold * kHugeThreshold;
  const uintptr_t last = (begin + bytes) / kHugeThreshold * kHugeThreshold;
  if (last > first)
    platform::advise_huge_pages(reinterpret_cast<void*>(first), last - first);  // NOLINT
}

void free_large(void* p, size_t bytes) noexcept {
  if (p == nullptr) return;
  try {
    if (cache().keep(p, rounded_size(bytes))) return;
  } catch (...) {  // the map could not grow: free the block instead
  }
  std::free(p);  // NOLINT(cppcoreguidelines-no-malloc): paired with aligned_alloc above
}

}  // namespace kiln::host_memory
