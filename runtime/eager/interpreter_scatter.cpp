// The CPU interpreter's Scatter ops (reference semantics, ONNX's):
//   ScatterElements: out = data; then for every element j of indices in row-major order,
//     out[j with j[axis] replaced by indices[j]] = updates[j] (reduction none), += (add) or
//     *= (mul).
//   ScatterND: out = data; then for every index tuple i of indices[..., 0..m) in row-major
//     order, out[indices[i], rest..] = updates[i, rest..] (or += / *=) for every rest.
// Updates apply in that order, so with duplicate indices and reduction none the last one wins
// (ONNX leaves the order undefined; the Vulkan kernels apply them in the same order). An index
// in [-size, 0) counts from the end; one outside [-size, size) is an error Status naming it.
// Floating values combine in float, integers in 64 bits with two's-complement wraparound, and
// each result is rounded to the output dtype once (f16: the float sum or product, rounded).
#include <string>
#include <vector>

#include "eager/interpreter_ops.h"

namespace kiln::eager {
namespace {

/// `v` in [0, size), or an error naming the op, the index and the dim.
Status normalize_index(OpKind op, int64_t& v, int64_t size, size_t dim) {
  if (v < -size || v >= size)
    return invalid_argument(std::string(op_name(op)) + ": index " + std::to_string(v) +
                            " is out of range [" + std::to_string(-size) + ", " +
                            std::to_string(size) + ") for data dim " + std::to_string(dim));
  if (v < 0) v += size;
  return {};
}

template <typename C>
C combine(int64_t reduction, C a, C b) {
  if (reduction == kScatterAdd) {
    if constexpr (std::is_integral_v<C>)
      return static_cast<C>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    else
      return a + b;
  }
  if (reduction == kScatterMul) {
    if constexpr (std::is_integral_v<C>)
      return static_cast<C>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    else
      return a * b;
  }
  return b;
}

template <typename C>
Status scatter(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out) {
  const HostTensor &data = *ins[0], &idx = *ins[1], &upd = *ins[2];
  const Shape& ds = data.meta.shape;
  const int64_t reduction = node.attrs.index;
  Reader<C> d = reader<C>(data), u = reader<C>(upd);
  Reader<int64_t> ix = reader<int64_t>(idx);
  std::vector<C> acc(static_cast<size_t>(data.meta.numel()));
  for (size_t i = 0; i < acc.size(); ++i) acc[i] = d(static_cast<int64_t>(i));
  const size_t r = ds.size();
  std::vector<int64_t> dstride(r, 1);
  for (size_t i = r - 1; i-- > 0;) dstride[i] = dstride[i + 1] * ds[i + 1];
  if (node.op == OpKind::ScatterElements) {
    const auto axis = static_cast<size_t>(node.attrs.axis);
    const Shape& is = idx.meta.shape;
    std::vector<int64_t> at(r, 0);
    for (int64_t j = 0; j < idx.meta.numel(); ++j) {
      int64_t rest = j;
      for (size_t k = r; k-- > 0;) {
        at[k] = rest % is[k];
        rest /= is[k];
      }
      int64_t v = ix(j);
      KILN_RETURN_IF_ERROR(normalize_index(node.op, v, ds[axis], axis));
      int64_t o = 0;
      for (size_t k = 0; k < r; ++k) o += (k == axis ? v : at[k]) * dstride[k];
      acc[static_cast<size_t>(o)] = combine(reduction, acc[static_cast<size_t>(o)], u(j));
    }
  } else {
    const Shape& is = idx.meta.shape;
    const auto m = static_cast<size_t>(is.back());
    const int64_t tuples = idx.meta.numel() / static_cast<int64_t>(m);
    const int64_t slice = m < r ? dstride[m - 1] : 1;  // elements per index tuple
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t base = 0;
      for (size_t k = 0; k < m; ++k) {
        int64_t v = ix(t * static_cast<int64_t>(m) + static_cast<int64_t>(k));
        KILN_RETURN_IF_ERROR(normalize_index(node.op, v, ds[k], k));
        base += v * dstride[k];
      }
      for (int64_t s = 0; s < slice; ++s)
        acc[static_cast<size_t>(base + s)] =
            combine(reduction, acc[static_cast<size_t>(base + s)], u(t * slice + s));
    }
  }
  Writer<C> w = writer<C>(out);
  for (size_t i = 0; i < acc.size(); ++i) w(static_cast<int64_t>(i), acc[i]);
  return {};
}

}  // namespace

Status eval_scatter(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out) {
  if (is_floating(out.meta.dtype)) return scatter<float>(node, ins, out);
  return scatter<int64_t>(node, ins, out);
}

}  // namespace kiln::eager
