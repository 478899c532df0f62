/// \file host_memory.h
/// The allocator behind HostTensor's bytes. Buffers of 2 MiB and more are 2 MiB-aligned and
/// advised as transparent huge pages (MADV_HUGEPAGE), so touching a fresh buffer takes one
/// page fault per 2 MiB instead of one per 4 KiB. The interpreter allocates every node's output
/// and every downloaded input anew; on virtual machines a 4 KiB fault costs tens of
/// microseconds, and the 4 KiB faults of one call of the seed encoder (about 300,000) took
/// longer than its arithmetic (docs/perf.md "Host buffers on huge pages"). Buffers from 64 KiB
/// are kept for reuse when freed; smaller buffers come from operator new. The Vulkan allocator
/// advises its mapped blocks the same way on CPU drivers (lavapipe), where device memory is host
/// memory. KILN_HUGEPAGES=0 turns the advice off. Freed large buffers are kept for reuse (up to
/// KILN_HOST_CACHE_MB, default 512 MiB), so a repeated interpreter call reuses its intermediates'
/// pages instead of faulting in fresh ones.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace kiln {

namespace host_memory {
/// Buffers of at least this many bytes are huge-page candidates.
inline constexpr size_t kHugeThreshold = size_t{2} << 20;
/// Buffers of at least this many bytes come from allocate_large and are kept for reuse when
/// freed (smaller ones from operator new).
inline constexpr size_t kCachedThreshold = size_t{64} << 10;
void* allocate_large(size_t bytes);
/// Frees a block from allocate_large(bytes), or keeps it for the next allocation of its size
/// while the blocks kept stay within KILN_HOST_CACHE_MB (default 512; 0 keeps none).
void free_large(void* p, size_t bytes) noexcept;
/// Bytes in freed blocks kept for reuse.
size_t cached_bytes();
/// Frees every kept block.
void release_cached();
/// Advises the whole 2 MiB pages inside [p, p + bytes) as huge pages (a mapping of device
/// memory on a CPU Vulkan driver, say); nothing when KILN_HUGEPAGES=0 or too small.
void advise_huge(void* p, size_t bytes) noexcept;
}  // namespace host_memory

template <typename T>
struct HostAllocator {
  using value_type = T;
  HostAllocator() = default;
  template <typename U>
  HostAllocator(const HostAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor)

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes >= host_memory::kCachedThreshold)
      return static_cast<T*>(host_memory::allocate_large(bytes));
    return static_cast<T*>(
        ::operator new (bytes, std::align_val_t{alignof(T) > 16 ? alignof(T) : 16}));
  }
  void deallocate(T* p, size_t n) noexcept {
    const size_t bytes = n * sizeof(T);
    if (bytes >= host_memory::kCachedThreshold)
      host_memory::free_large(p, bytes);
    else
      ::operator delete (p, std::align_val_t{alignof(T) > 16 ? alignof(T) : 16});
  }
  /// Default-initialises where a vector value-initialises, so HostBytes(n) and resize(n) leave
  /// the new bytes as the allocator gave them (a kernel that writes every byte need not pay for
  /// clearing them first); HostBytes(n, std::byte{0}) clears.
  template <typename U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <typename U>
  bool operator==(const HostAllocator<U>&) const noexcept {
    return true;
  }
};

/// A HostTensor's bytes (HostBytes(n) does not clear them: see HostAllocator::construct).
using HostBytes = std::vector<std::byte, HostAllocator<std::byte>>;

}  // namespace kiln
