/// \file disk_cache.h
/// The persistent cache directory (docs/cache.md): where it is, and checked reads and atomic
/// writes of its files. Every hit, miss, rejection and failed write is logged under
/// KILN_LOGS=cache with its reason. Plain file I/O: no Vulkan, no codegen. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "cache/cache_file.h"

namespace kiln::cache {

/// Where the cache lives and why: KILN_CACHE_DIR if set (off, 0, none or the empty string
/// disable the cache), else $XDG_CACHE_HOME/kiln, else $HOME/.cache/kiln, else disabled.
struct CacheDirChoice {
  std::filesystem::path dir;  // empty: no disk cache
  std::string source;         // "KILN_CACHE_DIR", "XDG_CACHE_HOME", "HOME", or why disabled
};
CacheDirChoice resolve_cache_dir();

struct CacheCounters {
  uint64_t hits = 0;
  uint64_t misses = 0;    // no file
  uint64_t rejected = 0;  // a file that failed validation (or could not be read)
  uint64_t writes = 0;
  uint64_t write_failures = 0;
};

/// What DiskCache::sweep did.
struct SweepReport {
  uint64_t temp_removed = 0;  // temporary files left by writers that died
  uint64_t evicted = 0;       // entries removed, least recently used first
  uint64_t bytes = 0;         // Kiln's files that remain (Mesa's directory not counted)
};

/// The limit on Kiln's own files: KILN_CACHE_MAX_SIZE (bytes, or with a K/M/G suffix), else
/// kDefaultCacheSizeLimit. Mesa bounds its own directory (MESA_SHADER_CACHE_MAX_SIZE).
inline constexpr uint64_t kDefaultCacheSizeLimit = 512ull << 20;
uint64_t cache_size_limit();
/// "512M" -> 536870912; nullopt when not a size.
std::optional<uint64_t> parse_size(std::string_view text);

class DiskCache {
 public:
  /// A cache in `dir`; an empty path is a disabled cache (every load misses, stores do nothing).
  explicit DiskCache(std::filesystem::path dir);

  /// The process-wide cache, from resolve_cache_dir() on first use (logged once).
  static DiskCache& global();

  bool enabled() const { return !dir_.empty(); }
  const std::filesystem::path& dir() const { return dir_; }
  /// <dir>/<kind dir>/<key>.kc (kind dirs: spirv, glsl, pipeline, entries). Keys that are not plain
  /// [A-Za-z0-9_-] names are hashed.
  std::filesystem::path path_for(EntryKind kind, std::string_view key) const;

  /// The payload stored under (kind, key) if its file is valid for `identity`; nullopt on a miss
  /// or a rejected file. `label` names the item in logs ("spirv k3_matmul: miss (no file)").
  std::optional<std::string> load(EntryKind kind, std::string_view key, std::string_view identity,
                                  std::string_view label);
  /// Writes the file atomically. False (logged) on failure; after the first failure the cache
  /// stops writing for the life of the object (an unwritable directory is reported once).
  bool store(EntryKind kind, std::string_view key, std::string_view identity,
             std::string_view label, std::string_view payload);

  CacheCounters counters() const;

  /// Removes temporary files older than `temp_age` (writers that died mid-write) and, while
  /// Kiln's files exceed `max_bytes`, the least recently used ones (a load hit refreshes a
  /// file's time). Run once when the process first opens the cache; logged when it removes.
  SweepReport sweep(uint64_t max_bytes, std::chrono::seconds temp_age);

 private:
  std::filesystem::path dir_;
  std::atomic<bool> writes_disabled_{false};
  mutable std::mutex mu_;
  CacheCounters counters_;
};

/// While alive, points Mesa's on-disk shader cache (where lavapipe/llvmpipe and the Mesa GPU
/// drivers keep their compiled shaders) at <cache dir>/mesa, unless MESA_SHADER_CACHE_DIR or
/// MESA_GLSL_CACHE_DIR is already set or the cache is disabled, so that one directory holds all
/// warm-start state. Held around instance and device creation (Mesa reads the variable when it
/// opens its cache); the variable is removed again afterwards, so child processes do not inherit
/// it and follow their own KILN_CACHE_DIR. Scopes of different threads run one at a time, so
/// devices opened concurrently neither see nor remove each other's setting.
class DriverCacheScope {
 public:
  /// For devices on the global cache.
  DriverCacheScope();
  /// For a device on `cache` (its <dir>/mesa).
  explicit DriverCacheScope(const DiskCache& cache);
  ~DriverCacheScope();
  DriverCacheScope(const DriverCacheScope&) = delete;
  DriverCacheScope& operator=(const DriverCacheScope&) = delete;

 private:
  std::unique_lock<std::mutex> lock_;
  bool set_ = false;
};

}  // namespace kiln::cache
