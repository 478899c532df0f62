// sort_slices: x viewed as [outer, n, inner] around the axis; the n slice positions sorted
// stably by the slices' elements in row-major order, compared as numbers (int64 exactly,
// floats with -0.0 == 0.0 and NaN after every number, two NaNs equal). The kernel
// (codegen/lower_unique.cpp) ranks each slice by the same comparison.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "eager/interpreter_ops.h"

namespace kiln::eager {
namespace {

/// -1, 0 or 1: a against b, NaN after every number and equal to NaN.
template <typename C>
int compare(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    const bool na = std::isnan(a), nb = std::isnan(b);
    if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
  }
  return a < b ? -1 : (b < a ? 1 : 0);
}

template <typename C, typename S>
void sort_slices(const HostTensor& x, int64_t axis, int64_t* out) {
  const Shape& s = x.meta.shape;
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < s.size(); ++d) {
    if (static_cast<int64_t>(d) < axis) outer *= s[d];
    if (static_cast<int64_t>(d) > axis) inner *= s[d];
  }
  const int64_t n = s[static_cast<size_t>(axis)];
  const S* v = x.ptr<S>();
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const int c =
            compare(decode<C>(v[(o * n + a) * inner + i]), decode<C>(v[(o * n + b) * inner + i]));
        if (c != 0) return c < 0;
      }
    return false;
  });
  std::copy(order.begin(), order.end(), out);
}

}  // namespace

Status eval_unique(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out) {
  const HostTensor& x = *ins[0];
  int64_t* y = out.ptr<int64_t>();
  visit_storage(x.meta.dtype, [&]<typename S>(std::type_identity<S>) {
    if constexpr (std::is_same_v<S, float> || std::is_same_v<S, uint16_t>)
      sort_slices<float, S>(x, node.attrs.axis, y);
    else if constexpr (std::is_same_v<S, std::complex<float>>)
      unreachable("sort_slices of complex64");
    else
      sort_slices<int64_t, S>(x, node.attrs.axis, y);
  });
  return {};
}

}  // namespace kiln::eager
