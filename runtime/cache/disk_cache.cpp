// The persistent cache directory: resolution from the environment, logged loads and atomic stores,
// and Mesa's shader cache placement.
#include "cache/disk_cache.h"

#include <cctype>
#include <cstdlib>
#include <string>

#include "core/platform.h"
#include "kiln/logging.h"

namespace kiln::cache {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

bool is_disable_word(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s.empty() || s == "off" || s == "0" || s == "none" || s == "false" || s == "no";
}

const char* kind_dir(EntryKind kind) {
  switch (kind) {
    case EntryKind::kSpirv:
      return "spirv";
    case EntryKind::kPipelineCache:
      return "pipeline";
    case EntryKind::kEntry:
      return "entries";
    case EntryKind::kGlsl:
      return "glsl";
    case EntryKind::kPipelineSet:
      return "warm";
    case EntryKind::kCalibration:
      return "calibration";
  }
  return "other";
}

bool plain_name(std::string_view key) {
  if (key.empty() || key.size() > 128) return false;
  for (char c : key)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  return true;
}

std::string describe(EntryKind kind, std::string_view label) {
  std::string s = entry_kind_name(kind);
  if (!label.empty()) s += " " + std::string(label);
  return s;
}

}  // namespace

CacheDirChoice resolve_cache_dir() {
  if (const char* v = std::getenv("KILN_CACHE_DIR")) {
    if (is_disable_word(v)) return {{}, "disabled by KILN_CACHE_DIR=" + std::string(v)};
    return {std::filesystem::path(v), "KILN_CACHE_DIR"};
  }
  if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty() && xdg.front() == '/')
    return {std::filesystem::path(xdg) / "kiln", "XDG_CACHE_HOME"};
  if (std::string home = env("HOME"); !home.empty())
    return {std::filesystem::path(home) / ".cache" / "kiln", "HOME"};
  return {{}, "disabled: neither KILN_CACHE_DIR, XDG_CACHE_HOME nor HOME is set"};
}

DiskCache::DiskCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

DiskCache& DiskCache::global() {
  static DiskCache* cache = [] {
    CacheDirChoice choice = resolve_cache_dir();
    if (choice.dir.empty())
      log(LogTopic::kCache, "no disk cache (" + choice.source + ")");
    else
      log(LogTopic::kCache, "directory " + choice.dir.string() + " (from " + choice.source + ")");
    auto* c = new DiskCache(std::move(choice.dir));  // never destroyed: used from static dtors
    c->sweep(cache_size_limit(), std::chrono::hours(1));
    return c;
  }();
  return *cache;
}

std::filesystem::path DiskCache::path_for(EntryKind kind, std::string_view key) const {
  std::string name = plain_name(key) ? std::string(key) : hash_hex(key);
  return dir_ / kind_dir(kind) / (name + ".kc");
}

std::optional<std::string> DiskCache::load(EntryKind kind, std::string_view key,
                                           std::string_view identity, std::string_view label) {
  if (!enabled()) return std::nullopt;
  const std::filesystem::path path = path_for(kind, key);
  Expected<std::string> bytes = read_file(path);
  if (!bytes.ok()) {
    const bool missing = bytes.status().message() == "no file";
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++(missing ? counters_.misses : counters_.rejected);
    }
    if (log_enabled(LogTopic::kCache))
      log(LogTopic::kCache, describe(kind, label) + ": " + (missing ? "miss" : "rejected") + " (" +
                                bytes.status().message() + ")" + (missing ? "" : " - rebuilding"));
    return std::nullopt;
  }
  Expected<std::string> payload =
      decode_cache_file(*bytes, {.kind = kind, .identity = identity, .key = key});
  std::lock_guard<std::mutex> lock(mu_);
  if (!payload.ok()) {
    ++counters_.rejected;
    log(LogTopic::kCache, describe(kind, label) + ": rejected (" + payload.status().message() +
                              ") - rebuilding; file " + path.string());
    return std::nullopt;
  }
  ++counters_.hits;
  std::error_code ec;  // the eviction order is by time of last use
  std::filesystem::last_write_time(path, std::filesystem::file_time_type::clock::now(), ec);
  if (log_enabled(LogTopic::kCache))
    log(LogTopic::kCache,
        describe(kind, label) + ": hit (" + std::to_string(payload->size()) + " bytes)");
  return std::move(payload).value();
}

bool DiskCache::store(EntryKind kind, std::string_view key, std::string_view identity,
                      std::string_view label, std::string_view payload) {
  if (!enabled() || writes_disabled_.load()) return false;
  const std::string bytes =
      encode_cache_file({.kind = kind, .identity = identity, .key = key}, payload);
  Status st = write_file_atomic(path_for(kind, key), bytes);
  std::lock_guard<std::mutex> lock(mu_);
  if (!st.ok()) {
    ++counters_.write_failures;
    if (!writes_disabled_.exchange(true))
      log(LogTopic::kCache, describe(kind, label) + ": cannot write (" + st.message() +
                                "); no more cache writes in this process");
    return false;
  }
  ++counters_.writes;
  if (log_enabled(LogTopic::kCache))
    log(LogTopic::kCache,
        describe(kind, label) + ": stored (" + std::to_string(payload.size()) + " bytes)");
  return true;
}

CacheCounters DiskCache::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

DriverCacheScope::DriverCacheScope() : DriverCacheScope(DiskCache::global()) {}

DriverCacheScope::DriverCacheScope(const DiskCache& cache) {
  static std::mutex scopes;
  lock_ = std::unique_lock<std::mutex>(scopes);
  static std::once_flag logged;
  if (std::getenv("MESA_SHADER_CACHE_DIR") || std::getenv("MESA_GLSL_CACHE_DIR")) {
    std::call_once(logged, [] {
      log(LogTopic::kCache,
          "driver shader cache: where MESA_SHADER_CACHE_DIR says (set by the user)");
    });
    return;
  }
  if (!cache.enabled()) return;
  const std::string mesa = (cache.dir() / "mesa").string();
  // Mesa creates only the last component of the path itself; without the parent it runs with
  // no disk cache at all.
  std::error_code ec;
  std::filesystem::create_directories(mesa, ec);
  if (ec) {
    std::call_once(logged, [&] {
      log(LogTopic::kCache, "driver shader cache: cannot create " + mesa + " (" + ec.message() +
                                "); left to the driver's default");
    });
    return;
  }
  set_ = platform::set_env_if_unset("MESA_SHADER_CACHE_DIR", mesa);
  std::call_once(
      logged, [&] { log(LogTopic::kCache, "driver shader cache: MESA_SHADER_CACHE_DIR=" + mesa); });
}

DriverCacheScope::~DriverCacheScope() {
  if (set_) platform::unset_env("MESA_SHADER_CACHE_DIR");
}

}  // namespace kiln::cache
