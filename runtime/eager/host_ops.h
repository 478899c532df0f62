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

/// TopK's order, a total order on a row's positions: for largest, a comes before b when
/// x[a] > x[b], or they are equal (-0.0 == 0.0) and a < b; NaN comes before every number (the
/// largest, as in PyTorch), two NaNs by position. For smallest, x[a] < x[b] and NaN after every
/// number. `out` (i64 [..., k], k <= the last dim of x, which has rank >= 1) gets the first k
/// positions of each row in that order. The kernel (codegen/lower_topk.cpp) ranks by the same
/// order.
void topk_indices(const HostTensor& x, int64_t k, bool largest, HostTensor& out);

/// The k largest (largest=true) or smallest elements along the last dim in topk_indices'
/// order; values keep x's dtype, indices are i64.
Expected<std::pair<HostTensor, HostTensor>> host_topk(const HostTensor& x, int64_t k, bool largest);

}  // namespace kiln
