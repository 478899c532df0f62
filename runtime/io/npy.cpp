// NumPy .npy files: reading (strict, bounds-checked) and writing (format version 1.0).
#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "io/npy_header.h"
#include "kiln/io.h"

namespace kiln {
namespace {

constexpr unsigned char kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr size_t kAlign = 64;  // header padding NumPy uses since 1.14

using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

std::string bytes_str(uint64_t n) {
  return std::to_string(n) + (n == 1 ? " byte" : " bytes");
}

std::string hex(std::span<const std::byte> b) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (std::byte x : b) {
    auto v = static_cast<unsigned>(x);
    s += "\\x";
    s += digits[v >> 4];
    s += digits[v & 15];
  }
  return s;
}

/// Reverses the bytes of each `item`-byte element in place.
void byteswap_elements(std::byte* data, size_t bytes, size_t item) {
  for (size_t i = 0; i + item <= bytes; i += item) std::reverse(data + i, data + i + item);
}

uint64_t read_le(std::span<const std::byte> b, size_t offset, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint64_t>(b[offset + i]) << (8 * i);
  return v;
}

Expected<std::vector<std::byte>> read_file(const std::string& path) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st))
    return invalid_argument(
        "cannot open " + path + ": " +
        (ec && ec != std::errc::no_such_file_or_directory ? ec.message() : "no such file"));
  if (std::filesystem::is_directory(st))
    return invalid_argument("cannot read " + path + ": it is a directory");
  File f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return invalid_argument("cannot open " + path + ": " + std::strerror(errno));
  std::vector<std::byte> out;
  std::byte chunk[1 << 16];
  while (size_t n = std::fread(chunk, 1, sizeof chunk, f.get()))
    out.insert(out.end(), chunk, chunk + n);
  if (std::ferror(f.get()))
    return invalid_argument("error reading " + path + ": " + std::strerror(errno));
  return out;
}

}  // namespace

Expected<Tensor> parse_npy(std::span<const std::byte> bytes, Device device) {
  const size_t size = bytes.size();
  const size_t magic_seen = std::min(size, sizeof kMagic);
  if (size == 0) return invalid_argument("not a .npy file: it is empty");
  if (std::memcmp(bytes.data(), kMagic, magic_seen) != 0)
    return invalid_argument("not a .npy file: bad magic (expected \\x93NUMPY, found '" +
                            hex(bytes.first(magic_seen)) + "')");
  if (magic_seen < sizeof kMagic)
    return invalid_argument("truncated header: the file is " + bytes_str(size) +
                            " and ends inside the magic string");
  if (size < 8)
    return invalid_argument("truncated header: the file is " + bytes_str(size) +
                            " and ends before the format version");
  const auto major = static_cast<unsigned>(bytes[6]), minor = static_cast<unsigned>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    return invalid_argument("unknown .npy format version " + std::to_string(major) + "." +
                            std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)");
  const size_t len_bytes = major == 1 ? 2 : 4, prefix = 8 + len_bytes;
  if (size < prefix)
    return invalid_argument("truncated header: the file is " + bytes_str(size) +
                            " and ends inside the header length field");
  const uint64_t header_len = read_le(bytes, 8, len_bytes);
  if (header_len > size - prefix)
    return invalid_argument("truncated header: header length " + std::to_string(header_len) +
                            " extends beyond the end of the file (" + bytes_str(size - prefix) +
                            " after the length field)");
  std::string_view text(reinterpret_cast<const char*>(bytes.data() + prefix), header_len);
  KILN_ASSIGN_OR_RETURN(io::NpyHeader h, io::parse_npy_header(text));
  if (h.fortran_order)
    return invalid_argument(
        "fortran_order True is not supported: Kiln reads C-order arrays "
        "(save np.ascontiguousarray(a) instead)");
  const std::string what = "shape " + io::npy_shape_str(h.shape) + " of '" + h.descr + "'";
  int64_t count = 1;
  for (Dim d : h.shape)
    if (__builtin_mul_overflow(count, d, &count))
      return invalid_argument("element count overflow: " + what + " has more than 2^63 elements");
  uint64_t need = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>(count), h.item_size, &need))
    return invalid_argument("element count overflow: " + what + " needs more than 2^64 bytes");
  const size_t offset = prefix + header_len, have = size - offset;
  if (need > have)
    return invalid_argument("data is truncated: " + what + " needs " + bytes_str(need) +
                            ", the file has " + bytes_str(have) + " after the header");
  if (need < have)
    return invalid_argument("data is longer than the shape: " + what + " needs " + bytes_str(need) +
                            ", the file has " + bytes_str(have) + " after the header");
  std::vector<std::byte> data(bytes.begin() + static_cast<ptrdiff_t>(offset), bytes.end());
  // complex64 swaps its two floats one by one
  if (h.swap) byteswap_elements(data.data(), data.size(), h.dtype == DType::kC64 ? 4 : h.item_size);
  if (h.dtype == DType::kBool)
    for (std::byte& b : data) b = std::byte{b != std::byte{0}};
  try {
    return Tensor::from_bytes(h.dtype, std::move(h.shape), data.data(), data.size(), device);
  } catch (const Error& e) {
    return e.status();
  }
}

Expected<Tensor> load_npy(const std::string& path, Device device) {
  KILN_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, read_file(path));
  Expected<Tensor> t = parse_npy(bytes, device);
  if (!t.ok()) return t.status().with_context(path);
  return t;
}

std::vector<std::byte> serialize_npy(const Tensor& t) {
  if (!t.defined()) throw Error(invalid_argument("serialize_npy: undefined tensor"));
  const TensorMeta meta = t.meta();
  std::vector<std::byte> data(meta.nbytes());
  t.copy_to(data.data(), data.size());
  std::string dict = io::format_npy_header_dict(meta.dtype, meta.shape);
  // Version 1.0 has a 16-bit header length; 2.0 only for (absurdly) long shapes.
  const bool v1 = dict.size() + 1 + 10 + kAlign <= 0xffff;
  const size_t prefix = v1 ? 10 : 12;
  const size_t total = (prefix + dict.size() + 1 + kAlign - 1) / kAlign * kAlign;
  dict.append(total - prefix - dict.size() - 1, ' ');
  dict += '\n';
  std::vector<std::byte> out(prefix);
  std::memcpy(out.data(), kMagic, sizeof kMagic);
  out[6] = std::byte{static_cast<unsigned char>(v1 ? 1 : 2)};
  out[7] = std::byte{0};
  for (size_t i = 0; i < prefix - 8; ++i)
    out[8 + i] = std::byte{static_cast<unsigned char>((dict.size() >> (8 * i)) & 0xff)};
  const auto* text = reinterpret_cast<const std::byte*>(dict.data());
  out.insert(out.end(), text, text + dict.size());
  if constexpr (std::endian::native == std::endian::big)
    byteswap_elements(data.data(), data.size(),
                      meta.dtype == DType::kC64 ? 4 : dtype_size(meta.dtype));
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

Status save_npy(const std::string& path, const Tensor& t) {
  std::vector<std::byte> bytes;
  try {
    bytes = serialize_npy(t);
  } catch (const Error& e) {
    return e.status().with_context("save_npy " + path);
  }
  File f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) return invalid_argument("cannot write " + path + ": " + std::strerror(errno));
  if (std::fwrite(bytes.data(), 1, bytes.size(), f.get()) != bytes.size())
    return invalid_argument("error writing " + path + ": " + std::strerror(errno));
  if (std::fclose(f.release()) != 0)
    return invalid_argument("error writing " + path + ": " + std::strerror(errno));
  return Status::ok_status();
}

}  // namespace kiln
