/// \file host_ops.h
/// Ops with no device lowering: their outputs' shapes or orders depend on the data. They run
/// on the CPU only; inside a compiled function each is a graph break.
#pragma once

#include <cstdint>
#include <utility>

#include "eager/host_tensor.h"
#include "kiln/status.h"

namespace kiln {

/// Indices of the non-zero elements in row-major order: i64[count, rank].
HostTensor host_nonzero(const HostTensor& x);

/// The k largest (largest=true) or smallest elements along the last dim, sorted in that order
/// (ties keep the lower index first); values keep x's dtype, indices are i64.
Expected<std::pair<HostTensor, HostTensor>> host_topk(const HostTensor& x, int64_t k, bool largest);

}  // namespace kiln
