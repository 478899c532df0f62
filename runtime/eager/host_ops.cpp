#include "eager/host_ops.h"

#include <algorithm>
#include <numeric>
#include <vector>

namespace kiln {

HostTensor host_nonzero(const HostTensor& x) {
  const int rank = x.meta.rank();
  const int64_t n = x.meta.numel();
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < n; ++i)
    if (x.get(i) != 0) hits.push_back(i);
  HostTensor out(TensorMeta{DType::kI64, {static_cast<Dim>(hits.size()), rank}});
  std::vector<int64_t> strides = contiguous_strides(x.meta.shape);
  auto* o = out.ptr<int64_t>();
  for (size_t h = 0; h < hits.size(); ++h)
    for (int d = 0; d < rank; ++d)
      o[h * static_cast<size_t>(rank) + static_cast<size_t>(d)] =
          (hits[h] / strides[d]) % x.meta.shape[d];
  return out;
}

Expected<std::pair<HostTensor, HostTensor>> host_topk(const HostTensor& x, int64_t k,
                                                      bool largest) {
  if (x.meta.rank() == 0) return invalid_argument("topk of a rank-0 tensor");
  const Dim last = x.meta.shape.back();
  if (k < 0 || k > last)
    return invalid_argument("topk: k = " + std::to_string(k) + " is out of range for " +
                            x.meta.str());
  Shape out_shape = x.meta.shape;
  out_shape.back() = k;
  HostTensor values(TensorMeta{x.meta.dtype, out_shape});
  HostTensor indices(TensorMeta{DType::kI64, out_shape});
  const int64_t rows = last == 0 ? 0 : x.meta.numel() / last;
  std::vector<int64_t> order(static_cast<size_t>(last));
  for (int64_t r = 0; r < rows; ++r) {
    std::iota(order.begin(), order.end(), 0);
    auto key = [&](int64_t i) { return x.get(r * last + i); };
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return largest ? key(a) > key(b) : key(a) < key(b);
    });
    for (int64_t j = 0; j < k; ++j) {
      values.set(r * k + j, key(order[static_cast<size_t>(j)]));
      indices.ptr<int64_t>()[r * k + j] = order[static_cast<size_t>(j)];
    }
  }
  return std::make_pair(std::move(values), std::move(indices));
}

}  // namespace kiln
