/// \file host_tensor.h
/// A dense, contiguous, row-major tensor in host memory: the interpreter's value type.
#pragma once

#include <cstddef>
#include <cstring>
#include <span>
#include <vector>

#include "core/host_memory.h"
#include "kiln/dtype.h"

namespace kiln {

struct HostTensor {
  TensorMeta meta;
  HostBytes data;  // meta.nbytes() bytes (large ones on huge pages: host_memory.h)

  HostTensor() = default;
  /// A tensor of zeros.
  explicit HostTensor(TensorMeta m) : meta(std::move(m)), data(meta.nbytes(), std::byte{0}) {}
  /// A tensor whose bytes are whatever its buffer held (a reused block's old contents): for a
  /// result that its kernel writes in full.
  static HostTensor uninitialized(TensorMeta m) {
    HostTensor t;
    t.data = HostBytes(m.nbytes());
    t.meta = std::move(m);
    return t;
  }

  template <typename T>
  T* ptr() {
    return reinterpret_cast<T*>(data.data());
  }
  template <typename T>
  const T* ptr() const {
    return reinterpret_cast<const T*>(data.data());
  }

  /// Element i converted to double (f16 decoded, bool as 0/1).
  double get(int64_t i) const;
  /// Stores v at element i, converted to this tensor's dtype (C++ conversion rules).
  void set(int64_t i, double v);
};

}  // namespace kiln
