// Shape and dtype rules of the transformer ops: Arange, MatMul, Softmax/LogSoftmax, LayerNorm,
// Gather/IndexSelect, Concat, Slice, Triu/Tril. Every error names the op and its input metas
// (detail::op_error) and then the offending sizes or axis.
#include <algorithm>
#include <cmath>
#include <string>

#include "graph/op.h"

namespace kiln::detail {
namespace {

bool is_index_dtype(DType dt) {
  return dt == DType::kI32 || dt == DType::kI64;
}

Expected<TensorMeta> arange_meta(OpKind op, const Attrs& a) {
  if (a.range.size() != 3) return op_error(op, {}, "needs range = {start, end, step}");
  const double start = a.range[0], end = a.range[1], step = a.range[2];
  if (!std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step))
    return op_error(op, {}, "start, end and step must be finite");
  if (step == 0) return op_error(op, {}, "step must be non-zero");
  if (a.dtype == DType::kBool) return op_error(op, {}, "cannot produce a bool range");
  const double count = std::ceil((end - start) / step);
  if (count > 1e15) return op_error(op, {}, "too many elements");
  return TensorMeta{a.dtype, {count > 0 ? static_cast<Dim>(count) : 0}};
}

// a [..., M, K] x b [..., K, N] -> [broadcast(...), M, N]; a 1-D a is [1, K] and a 1-D b is
// [K, 1], and the added dim is removed from the result (numpy.matmul).
Expected<TensorMeta> matmul_meta(OpKind op, std::span<const TensorMeta> ins, const Attrs& at) {
  const TensorMeta &a = ins[0], &b = ins[1];
  if (a.rank() == 0 || b.rank() == 0) return op_error(op, ins, "operands must be at least 1-D");
  if (a.dtype == DType::kBool || b.dtype == DType::kBool)
    return op_error(op, ins, "not defined for bool tensors");
  Shape sa = a.shape, sb = b.shape;
  if (sa.size() == 1)
    sa.insert(sa.begin(), 1);
  else if (at.trans_a)
    std::swap(sa[sa.size() - 1], sa[sa.size() - 2]);
  if (sb.size() == 1)
    sb.push_back(1);
  else if (at.trans_b)
    std::swap(sb[sb.size() - 1], sb[sb.size() - 2]);
  const Dim m = sa[sa.size() - 2], k = sa.back(), kb = sb[sb.size() - 2], n = sb.back();
  if (k != kb)
    return op_error(op, ins,
                    "inner dims differ: a " + a.str() + (at.trans_a ? " (transposed)" : "") +
                        " has K=" + std::to_string(k) + ", b " + b.str() +
                        (at.trans_b ? " (transposed)" : "") + " has K=" + std::to_string(kb));
  auto batch = broadcast_shapes(std::span<const Dim>(sa).first(sa.size() - 2),
                                std::span<const Dim>(sb).first(sb.size() - 2));
  if (!batch.ok()) return op_error(op, ins, "batch dims: " + batch.status().message());
  Shape out = std::move(batch).value();
  if (a.rank() > 1) out.push_back(m);
  if (b.rank() > 1) out.push_back(n);
  return TensorMeta{promote_types(a.dtype, b.dtype), out};
}

Expected<TensorMeta> normalization_meta(OpKind op, std::span<const TensorMeta> ins,
                                        const Attrs& at) {
  const TensorMeta& x = ins[0];
  if (op == OpKind::CumSum) {  // any numeric dtype; bools count as i64, as in sum
    auto axis = normalize_axis(at.axis, x.rank());
    if (!axis.ok()) return op_error(op, ins, axis.status().message());
    if (at.index < 0 || at.index > (kCumSumExclusive | kCumSumReverse))
      return op_error(op, ins, "bad flags " + std::to_string(at.index));
    return TensorMeta{x.dtype == DType::kBool ? DType::kI64 : x.dtype, x.shape};
  }
  if (!is_floating(x.dtype))
    return op_error(op, ins, std::string(op_name(op)) + " needs a floating-point input");
  if (op != OpKind::LayerNorm) {
    auto axis = normalize_axis(at.axis, x.rank());
    if (!axis.ok()) return op_error(op, ins, axis.status().message());
    return x;
  }
  const int64_t k = at.index;
  if (k < 1 || k > x.rank())
    return op_error(op, ins,
                    "normalized_dims " + std::to_string(k) + " is out of range for rank " +
                        std::to_string(x.rank()));
  if (!(at.scalar >= 0) || !std::isfinite(at.scalar))
    return op_error(op, ins, "epsilon must be finite and >= 0");
  const Shape normalized(x.shape.end() - k, x.shape.end());
  for (size_t i = 1; i < 3; ++i) {
    if (ins[i].shape != normalized)
      return op_error(op, ins,
                      std::string(i == 1 ? "weight" : "bias") + " must have the normalised shape " +
                          shape_str(normalized) + ", got " + shape_str(ins[i].shape));
    if (!is_floating(ins[i].dtype))
      return op_error(op, ins, std::string(i == 1 ? "weight" : "bias") + " must be floating-point");
  }
  return x;
}

Expected<TensorMeta> gather_meta(OpKind op, std::span<const TensorMeta> ins, const Attrs& at) {
  const TensorMeta &x = ins[0], &idx = ins[1];
  if (!is_index_dtype(idx.dtype))
    return op_error(op, ins,
                    "indices must be i32 or i64, got " + std::string(dtype_name(idx.dtype)));
  auto axis = normalize_axis(at.axis, x.rank());
  if (!axis.ok()) return op_error(op, ins, axis.status().message());
  const auto d = static_cast<size_t>(*axis);
  if (op == OpKind::IndexSelect) {
    if (idx.rank() != 1)
      return op_error(op, ins, "indices must be 1-D, got rank " + std::to_string(idx.rank()));
    Shape out = x.shape;
    out[d] = idx.shape[0];
    return TensorMeta{x.dtype, out};
  }
  // Gather (torch.gather): out has the indices' shape; out[i..] = x[i.. with dim d = idx[i..]].
  if (idx.rank() != x.rank())
    return op_error(op, ins, "indices must have the input's rank " + std::to_string(x.rank()));
  for (size_t i = 0; i < x.shape.size(); ++i)
    if (i != d && idx.shape[i] > x.shape[i])
      return op_error(op, ins,
                      "indices dim " + std::to_string(i) + " (" + std::to_string(idx.shape[i]) +
                          ") exceeds the input's (" + std::to_string(x.shape[i]) + ")");
  return TensorMeta{x.dtype, idx.shape};
}

Expected<TensorMeta> concat_meta(OpKind op, std::span<const TensorMeta> ins, const Attrs& at) {
  if (ins.empty()) return op_error(op, ins, "needs at least one input");
  auto axis = normalize_axis(at.axis, ins[0].rank());
  if (!axis.ok()) return op_error(op, ins, axis.status().message());
  const auto d = static_cast<size_t>(*axis);
  Shape out = ins[0].shape;
  DType dt = ins[0].dtype;
  out[d] = 0;
  for (size_t i = 0; i < ins.size(); ++i) {
    bool same = ins[i].rank() == ins[0].rank();
    for (size_t j = 0; same && j < out.size(); ++j)
      same = j == d || ins[i].shape[j] == ins[0].shape[j];
    if (!same)
      return op_error(op, ins,
                      "input " + std::to_string(i) + " has shape " + shape_str(ins[i].shape) +
                          ", which differs from input 0's " + shape_str(ins[0].shape) +
                          " outside axis " + std::to_string(d));
    out[d] += ins[i].shape[d];
    dt = promote_types(dt, ins[i].dtype);
  }
  return TensorMeta{dt, out};
}

Expected<TensorMeta> slice_meta(OpKind op, std::span<const TensorMeta> ins, const Attrs& at) {
  auto axis = normalize_axis(at.axis, ins[0].rank());
  if (!axis.ok()) return op_error(op, ins, axis.status().message());
  if (at.dims.size() != 3) return op_error(op, ins, "needs dims = {start, end, step}");
  if (at.dims[2] <= 0)
    return op_error(op, ins, "step must be positive, got " + std::to_string(at.dims[2]));
  Shape out = ins[0].shape;
  const auto d = static_cast<size_t>(*axis);
  out[d] = resolve_slice(at.dims[0], at.dims[1], at.dims[2], out[d]).length;
  return TensorMeta{ins[0].dtype, out};
}

}  // namespace

Expected<TensorMeta> infer_meta_nn(OpKind op, std::span<const TensorMeta> ins, const Attrs& attrs) {
  switch (op) {
    case OpKind::Arange:
      return arange_meta(op, attrs);
    case OpKind::MatMul:
      return matmul_meta(op, ins, attrs);
    case OpKind::Softmax:
    case OpKind::LogSoftmax:
    case OpKind::LayerNorm:
    case OpKind::CumSum:
      return normalization_meta(op, ins, attrs);
    case OpKind::Gather:
    case OpKind::IndexSelect:
      return gather_meta(op, ins, attrs);
    case OpKind::Concat:
      return concat_meta(op, ins, attrs);
    case OpKind::Slice:
      return slice_meta(op, ins, attrs);
    case OpKind::Triu:
    case OpKind::Tril:
      if (ins[0].rank() < 2)
        return op_error(op, ins, "needs at least 2 dims, got " + std::to_string(ins[0].rank()));
      return ins[0];
    default:
      break;
  }
  return op_error(op, ins, "no shape rule");
}

}  // namespace kiln::detail
