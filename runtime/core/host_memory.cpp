// Huge-page host buffers (host_memory.h): aligned_alloc at 2 MiB, then madvise(MADV_HUGEPAGE).
// The advice is only advice: with transparent huge pages off ("never") or no 2 MiB page free,
// the kernel maps 4 KiB pages as before. glibc serves these sizes by mmap and returns them on
// free, so the advice never reaches memory another allocation reuses.
#include "core/host_memory.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>

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

}  // namespace

void* allocate_large(size_t bytes) {
  const size_t rounded = (bytes + kHugeThreshold - 1) / kHugeThreshold * kHugeThreshold;
  void* p = std::aligned_alloc(kHugeThreshold, rounded);
  if (p == nullptr) throw std::bad_alloc();
  advise_huge(p, rounded);
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

void free_large(void* p) noexcept {
  std::free(p);  // NOLINT(cppcoreguidelines-no-malloc): paired with aligned_alloc above
}

}  // namespace kiln::host_memory
