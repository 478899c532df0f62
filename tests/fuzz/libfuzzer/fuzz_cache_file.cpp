// libFuzzer target for the persistent-cache file reader (runtime/cache/cache_file.cpp): the
// header, string and checksum parsing that DiskCache::load runs on every file it reads. Any bytes
// must end in the payload or a one-phrase reason, never in a crash or a sanitizer report.
//
// The first input byte picks a mode. Mode 0 decodes the rest as it is. Otherwise the harness
// first rewrites both checksums (header and payload) to match, so the fuzzer also reaches the
// checks behind them (kind, key, Kiln version, identity, payload size) and the accepting path.
// An accepted file's payload must re-encode to a file that decodes to the same payload.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "cache/cache_file.h"

namespace {

using namespace kiln::cache;

uint32_t get_u32(const std::string& b, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v |= uint32_t{static_cast<unsigned char>(b[at + i])} << (8 * i);
  return v;
}

void put_u64_at(std::string& b, size_t at, uint64_t v) {
  for (size_t i = 0; i < 8; ++i) b[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

/// Makes both checksums of `b` match its contents, where its header lengths allow it.
void fix_checksums(std::string& b) {
  if (b.size() < kFixedHeaderBytes) return;
  const uint64_t strings = uint64_t{get_u32(b, 32)} + get_u32(b, 36) + get_u32(b, 40);
  const uint64_t header = kFixedHeaderBytes + strings + 8;
  if (b.size() < header) return;
  put_u64_at(b, 24, fnv1a64(std::string_view(b).substr(header)));
  put_u64_at(b, header - 8, fnv1a64(std::string_view(b).substr(0, header - 8)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] != 0) fix_checksums(bytes);
  const FileFields want{.kind = EntryKind::kSpirv, .identity = "lavapipe 0.0.1", .key = "k1_add"};
  kiln::Expected<std::string> payload = decode_cache_file(bytes, want);
  if (!payload.ok()) {
    if (payload.status().message().empty()) __builtin_trap();
    return 0;
  }
  kiln::Expected<std::string> again = decode_cache_file(encode_cache_file(want, *payload), want);
  if (!again.ok() || *again != *payload) __builtin_trap();
  return 0;
}
