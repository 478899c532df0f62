// libFuzzer target for the .npy reader (runtime/io/npy.cpp, npy_header.cpp): any bytes must end in
// a tensor or a clear error, never in a crash, a sanitizer report or another exception. A tensor
// that parses must survive a write and a re-read unchanged (shape, dtype and bytes).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "kiln/io.h"
#include "kiln/kiln.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kiln;
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  Expected<Tensor> t = parse_npy(bytes);
  if (!t.ok()) {
    if (t.status().message().empty()) __builtin_trap();  // an error must say what is wrong
    return 0;
  }
  const std::vector<std::byte> again = serialize_npy(*t);
  Expected<Tensor> u = parse_npy(again);
  if (!u.ok() || u->dtype() != t->dtype() || u->shape() != t->shape()) __builtin_trap();
  const std::vector<double> a = t->to_doubles(), b = u->to_doubles();
  if (a.size() != b.size()) __builtin_trap();
  // Compared bitwise: NaN payloads must survive too.
  if (!a.empty() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) != 0)
    __builtin_trap();
  return 0;
}
