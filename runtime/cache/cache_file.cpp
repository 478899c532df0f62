// Persistent-cache file format (header, checksums, validation) and atomic writes.
#include "cache/cache_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "core/platform.h"

namespace kiln::cache {
namespace {

// Header layout (little-endian):
//   0  magic[8]            "KILNCACH"
//   8  u32 format_version
//  12  u32 kind
//  16  u64 payload_size
//  24  u64 payload_checksum   fnv1a64 of the payload
//  32  u32 kiln_version_len, u32 identity_len, u32 key_len, u32 reserved (0)
//  48  kiln_version, identity, key (no terminators)
//  ..  u64 header_checksum    fnv1a64 of every header byte before it
//  ..  payload
constexpr uint32_t kMaxStringBytes = 64 * 1024;

void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
uint32_t get_u32(std::string_view b, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b[at + static_cast<size_t>(i)]);
  return v;
}
uint64_t get_u64(std::string_view b, size_t at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b[at + static_cast<size_t>(i)]);
  return v;
}

Status reject(std::string reason) {
  return invalid_argument(std::move(reason));
}

std::string errno_text(const std::string& what, const std::filesystem::path& path) {
  return what + " " + path.string() + ": " + std::strerror(errno);
}

/// A name no other process or thread picks: pid, a per-process random value and a counter.
std::string temp_suffix() {
  static const uint64_t process_random = [] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }();
  static std::atomic<uint64_t> counter{0};
  char buf[64];
  std::snprintf(buf, sizeof buf, ".tmp.%ld.%016llx.%llu", platform::process_id(),
                static_cast<unsigned long long>(process_random),
                static_cast<unsigned long long>(counter.fetch_add(1)));
  return buf;
}

}  // namespace

const char* entry_kind_name(EntryKind kind) {
  switch (kind) {
    case EntryKind::kSpirv:
      return "spirv";
    case EntryKind::kPipelineCache:
      return "pipeline cache";
    case EntryKind::kEntry:
      return "entry";
    case EntryKind::kGlsl:
      return "glsl";
    case EntryKind::kPipelineSet:
      return "pipeline set";
    case EntryKind::kCalibration:
      return "calibration";
  }
  return "unknown";
}

std::string_view kiln_version() {
  return KILN_VERSION_STRING;
}

uint64_t fnv1a64(std::string_view data, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hash_hex(std::string_view data) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a64(data)));
  return buf;
}

std::string encode_cache_file(const FileFields& f, std::string_view payload) {
  std::string out(kMagic, sizeof kMagic);
  put_u32(out, f.format_version);
  put_u32(out, static_cast<uint32_t>(f.kind));
  put_u64(out, payload.size());
  put_u64(out, fnv1a64(payload));
  put_u32(out, static_cast<uint32_t>(f.kiln_version.size()));
  put_u32(out, static_cast<uint32_t>(f.identity.size()));
  put_u32(out, static_cast<uint32_t>(f.key.size()));
  put_u32(out, 0);
  out += f.kiln_version;
  out += f.identity;
  out += f.key;
  put_u64(out, fnv1a64(out));
  out += payload;
  return out;
}

Expected<std::string> decode_cache_file(std::string_view b, const FileFields& want) {
  if (b.size() < kFixedHeaderBytes)
    return reject("truncated (" + std::to_string(b.size()) + " bytes, the header alone needs " +
                  std::to_string(kFixedHeaderBytes) + ")");
  if (std::memcmp(b.data(), kMagic, sizeof kMagic) != 0)
    return reject("not a Kiln cache file (bad magic)");
  const uint32_t version = get_u32(b, 8);
  if (version != want.format_version)
    return reject("format version " + std::to_string(version) + ", expected " +
                  std::to_string(want.format_version));
  const uint32_t kind = get_u32(b, 12);
  const uint64_t payload_size = get_u64(b, 16);
  const uint64_t payload_sum = get_u64(b, 24);
  const uint32_t lens[3] = {get_u32(b, 32), get_u32(b, 36), get_u32(b, 40)};
  for (uint32_t len : lens)
    if (len > kMaxStringBytes)
      return reject("corrupt header (string of " + std::to_string(len) + " bytes)");
  const size_t strings = size_t{lens[0]} + lens[1] + lens[2];
  const size_t header = kFixedHeaderBytes + strings + 8;
  if (b.size() < header)
    return reject("truncated (" + std::to_string(b.size()) + " bytes, the header needs " +
                  std::to_string(header) + ")");
  if (get_u64(b, header - 8) != fnv1a64(b.substr(0, header - 8)))
    return reject("header checksum mismatch");
  const std::string_view file_version = b.substr(kFixedHeaderBytes, lens[0]);
  const std::string_view identity = b.substr(kFixedHeaderBytes + lens[0], lens[1]);
  const std::string_view key = b.substr(kFixedHeaderBytes + lens[0] + lens[1], lens[2]);
  if (kind != static_cast<uint32_t>(want.kind))
    return reject("wrong kind (" + std::string(entry_kind_name(static_cast<EntryKind>(kind))) +
                  ", expected " + entry_kind_name(want.kind) + ")");
  if (key != want.key) return reject("key mismatch (file holds " + std::string(key) + ")");
  if (file_version != want.kiln_version)
    return reject("written by Kiln " + std::string(file_version) + ", this is Kiln " +
                  std::string(want.kiln_version));
  if (identity != want.identity)
    return reject("foreign driver: file is for '" + std::string(identity) + "', device is '" +
                  std::string(want.identity) + "'");
  if (b.size() - header != payload_size)
    return reject((b.size() - header < payload_size ? "truncated (" : "trailing bytes (") +
                  std::to_string(b.size()) + " bytes, header says " +
                  std::to_string(header + payload_size) + ")");
  std::string_view payload = b.substr(header);
  if (fnv1a64(payload) != payload_sum) return reject("checksum mismatch");
  return std::string(payload);
}

Expected<std::string> read_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return unavailable("no file");
    return unavailable(errno_text("cannot open", path));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return unavailable("not a regular file: " + path.string());
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxFileBytes) {
    ::close(fd);
    return unavailable("file too large (" + std::to_string(st.st_size) + " bytes)");
  }
  std::string out(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      Status s = unavailable(errno_text("cannot read", path));
      ::close(fd);
      return s;
    }
    if (n == 0) break;  // shrank while reading: the decoder reports the truncation
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(done);
  return out;
}

Status write_file_atomic(const std::filesystem::path& path, std::string_view bytes) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec)
    return unavailable("cannot create directory " + path.parent_path().string() + ": " +
                       ec.message());
  const std::filesystem::path tmp =
      path.parent_path() / ("." + path.filename().string() + temp_suffix());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return unavailable(errno_text("cannot create", tmp));
  auto fail = [&](const char* what) {
    Status s = unavailable(errno_text(what, tmp));
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  };
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail("cannot write");
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) return fail("cannot fsync");
  if (::close(fd) != 0) {
    Status s = unavailable(errno_text("cannot close", tmp));
    ::unlink(tmp.c_str());
    return s;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Status s = unavailable(errno_text("cannot rename onto", path));
    ::unlink(tmp.c_str());
    return s;
  }
  return Status::ok_status();
}

}  // namespace kiln::cache
