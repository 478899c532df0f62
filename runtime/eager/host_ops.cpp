#include "eager/host_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <type_traits>
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

namespace {

/// The positions of one row of `n` keys in TopK's order (stable_sort keeps equal keys, and
/// NaNs among themselves, in position order).
template <typename T>
void order_row(const T* key, int64_t n, bool largest, std::vector<int64_t>& order) {
  auto nan = [](T v) {
    if constexpr (std::is_floating_point_v<T>)
      return std::isnan(v);
    else
      return false;
  };
  order.resize(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const T va = key[a], vb = key[b];
    const bool na = nan(va), nb = nan(vb);
    if (na || nb) return largest ? na && !nb : nb && !na;
    return largest ? va > vb : va < vb;
  });
}

}  // namespace

void topk_indices(const HostTensor& x, int64_t k, bool largest, HostTensor& out) {
  const int64_t n = x.meta.shape.back();
  const int64_t rows = n == 0 ? 0 : x.meta.numel() / n;
  auto* o = out.ptr<int64_t>();
  std::vector<int64_t> order;
  std::vector<double> keys;
  for (int64_t r = 0; r < rows; ++r) {
    if (x.meta.dtype == DType::kI64) {  // exact (not rounded through double)
      order_row(x.ptr<int64_t>() + r * n, n, largest, order);
    } else {
      keys.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) keys[static_cast<size_t>(i)] = x.get(r * n + i);
      order_row(keys.data(), n, largest, order);
    }
    std::copy_n(order.begin(), k, o + r * k);
  }
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
  topk_indices(x, k, largest, indices);
  const int64_t rows = last == 0 ? 0 : x.meta.numel() / last;
  const size_t size = dtype_size(x.meta.dtype);
  const auto* ix = indices.ptr<int64_t>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < k; ++j)  // the bytes, so i64 values stay exact
      std::memcpy(values.data.data() + static_cast<size_t>(r * k + j) * size,
                  x.data.data() + static_cast<size_t>(r * last + ix[r * k + j]) * size, size);
  return std::make_pair(std::move(values), std::move(indices));
}

}  // namespace kiln
