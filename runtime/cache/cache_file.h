/// \file cache_file.h
/// The on-disk format of one persistent-cache file and atomic file writes (docs/cache.md).
///
/// A file is a header followed by a payload. The header holds a magic, the format version, the
/// entry kind, the Kiln version, the identity the payload is valid for (device + driver +
/// compiler), the key the file was written under, the payload size and a 64-bit checksum of the
/// payload; the header carries its own checksum. decode_cache_file() accepts a file only if every
/// field matches what the reader expects, and otherwise says why in one short phrase.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "kiln/status.h"

namespace kiln::cache {

/// What a cache file holds. The value is stored in the header.
enum class EntryKind : uint32_t {
  kSpirv = 1,          // one kernel's SPIR-V, keyed by Kernel::cache_key
  kPipelineCache = 2,  // vkGetPipelineCacheData of one device
  kEntry = 3,          // a compiled graph: the kernel keys it needs
  kGlsl = 4,           // a preprocessed kernel source (template + macros + generated includes)
  kPipelineSet = 5,    // the pipelines one device created: recreated at open (KILN_PREWARM)
  kCalibration = 6,    // one device's measured kernel rates (exec/calibration.h)
};
const char* entry_kind_name(EntryKind kind);

inline constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'C', 'A', 'C', 'H'};
/// Bumped whenever the header or a payload layout changes; other versions are rejected.
inline constexpr uint32_t kFormatVersion = 2;  // 2: r32f texel bindings in pipeline sets
/// Fixed part of the header, before its strings.
inline constexpr size_t kFixedHeaderBytes = 48;
/// Files larger than this are rejected unread.
inline constexpr uint64_t kMaxFileBytes = 1ull << 30;

/// The Kiln version stored in (and required of) every file.
std::string_view kiln_version();

/// 64-bit FNV-1a of `data`.
uint64_t fnv1a64(std::string_view data, uint64_t seed = 1469598103934665603ull);
/// fnv1a64 as 16 hex digits.
std::string hash_hex(std::string_view data);

struct FileFields {
  EntryKind kind = EntryKind::kSpirv;
  std::string_view identity;  // device / driver / compiler the payload is valid for
  std::string_view key;
  std::string_view kiln_version = cache::kiln_version();
  uint32_t format_version = kFormatVersion;
};

/// Header + payload, ready to write.
std::string encode_cache_file(const FileFields& fields, std::string_view payload);

/// The payload of `bytes` if it is a valid file for `expected` (kind, identity, key, Kiln and
/// format version); otherwise invalid_argument whose message is the reason ("truncated (10 of 60
/// bytes)", "checksum mismatch", "foreign driver: file is for X, device is Y", ...).
Expected<std::string> decode_cache_file(std::string_view bytes, const FileFields& expected);

/// Reads a whole file. A missing file is unavailable("no file"); other failures carry errno text.
Expected<std::string> read_file(const std::filesystem::path& path);

/// Writes `bytes` to `path` atomically: a uniquely named temporary file in the same directory
/// (".<name>.tmp.<pid>.<random>") is written, fsync'd and renamed over `path`, so readers see the
/// old file or the new one, never a partial one. On failure the temporary file is removed.
/// Creates the parent directory if needed.
Status write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

}  // namespace kiln::cache
