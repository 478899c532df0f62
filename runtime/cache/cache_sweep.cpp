// Keeping the cache directory bounded: stale temporary files from writers that died, and the
// least recently used entries beyond the size limit.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <vector>

#include "cache/disk_cache.h"
#include "kiln/logging.h"

namespace kiln::cache {
namespace fs = std::filesystem;

std::optional<uint64_t> parse_size(std::string_view text) {
  if (text.empty()) return std::nullopt;
  uint64_t value = 0;
  size_t i = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    if (value > (UINT64_MAX - 9) / 10) return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(text[i] - '0');
  }
  if (i == 0) return std::nullopt;
  std::string unit(text.substr(i));
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (unit == "K" || unit == "KB" || unit == "KIB")
    shift = 10;
  else if (unit == "M" || unit == "MB" || unit == "MIB")
    shift = 20;
  else if (unit == "G" || unit == "GB" || unit == "GIB")
    shift = 30;
  else if (!unit.empty() && unit != "B")
    return std::nullopt;
  if (shift > 0 && value > (UINT64_MAX >> shift)) return std::nullopt;
  return value << shift;
}

SweepReport DiskCache::sweep(uint64_t max_bytes, std::chrono::seconds temp_age) {
  SweepReport report;
  if (!enabled()) return report;
  struct Item {
    fs::path path;
    uint64_t bytes;
    fs::file_time_type time;
  };
  std::vector<Item> items;
  const fs::file_time_type now = fs::file_time_type::clock::now();
  for (const char* sub : {"spirv", "glsl", "pipeline", "entries"}) {  // not Mesa's directory
    std::error_code ec;
    for (fs::directory_iterator it(dir_ / sub, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code fec;
      if (!it->is_regular_file(fec)) continue;
      const uint64_t bytes = it->file_size(fec);
      const fs::file_time_type time = it->last_write_time(fec);
      if (fec) continue;
      const std::string name = it->path().filename().string();
      if (name.find(".tmp.") != std::string::npos) {  // a writer died mid-write
        if (now - time > temp_age && fs::remove(it->path(), fec)) ++report.temp_removed;
        continue;
      }
      items.push_back({it->path(), bytes, time});
      report.bytes += bytes;
    }
  }
  if (report.bytes > max_bytes) {  // least recently used first (a hit refreshes the time)
    std::sort(items.begin(), items.end(),
              [](const Item& a, const Item& b) { return a.time < b.time; });
    for (const Item& item : items) {
      if (report.bytes <= max_bytes) break;
      std::error_code ec;
      if (!fs::remove(item.path, ec)) continue;
      report.bytes -= item.bytes;
      ++report.evicted;
    }
  }
  if (report.temp_removed > 0 || report.evicted > 0)
    log(LogTopic::kCache, "sweep: removed " + std::to_string(report.temp_removed) +
                              " stale temporary file(s), evicted " +
                              std::to_string(report.evicted) + " least recently used file(s); " +
                              std::to_string(report.bytes) + " bytes remain (limit " +
                              std::to_string(max_bytes) + ")");
  return report;
}

uint64_t cache_size_limit() {
  const char* v = std::getenv("KILN_CACHE_MAX_SIZE");
  if (v == nullptr) return kDefaultCacheSizeLimit;
  if (std::optional<uint64_t> bytes = parse_size(v)) return *bytes;
  log(LogTopic::kWarning, std::string("KILN_CACHE_MAX_SIZE=") + v +
                              " is not a size (bytes, or a number with K, M or G); using " +
                              std::to_string(kDefaultCacheSizeLimit >> 20) + "M");
  return kDefaultCacheSizeLimit;
}

}  // namespace kiln::cache
