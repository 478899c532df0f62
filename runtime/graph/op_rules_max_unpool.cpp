// MaxUnpool's shape rule, written once over symbolic sizes (graph/shape_rule.h): x
// [N, C, D1, ..., Dk] with indices of its shape. The output is MaxPool's input again: the
// unpooled shape [N, C, D1', ..., Dk'], Di' = (Di - 1) * stride + kernel - pad_begin - pad_end,
// or Attrs::dims (ONNX's output_shape input) when given, which must be at least that in every
// dim (a pooling that floored odd sizes). The indices are flat positions in the output, as
// MaxPool computed them and as PyTorch and onnxruntime read them.
#include "graph/shape_rule.h"

namespace kiln::detail {
namespace {

/// The output shape when output_shape is not given.
SymShape unpooled_shape(const SymShape& x, const Attrs::Window& w) {
  SymShape out = {x[0], x[1]};
  const size_t k = x.size() - 2;
  for (size_t i = 0; i < k; ++i) {
    const int64_t s = w.strides[i];
    out.push_back(SymInt(s) * x[i + 2] + SymInt(w.kernel[i] - s - w.pads[i] - w.pads[i + k]));
  }
  return out;
}

}  // namespace

Expected<SymMeta> max_unpool_shape(ShapeRule& r) {
  const Attrs::Window& w = r.attrs().window;
  const int rank = r.rank(0);
  if (rank < 3) return r.error("needs x of rank 3 or more ([N, C, D1, ...])");
  const auto k = static_cast<size_t>(rank - 2);
  if (w.kernel.size() != k || w.strides.size() != k || w.pads.size() != 2 * k)
    return r.error("needs " + std::to_string(k) + " kernel sizes and strides and " +
                   std::to_string(2 * k) + " pads");
  constexpr int64_t kMaxWindow = int64_t{1} << 40;  // keeps the size arithmetic exact
  for (size_t i = 0; i < k; ++i) {
    if (w.kernel[i] < 1 || w.strides[i] < 1 || w.pads[i] < 0 || w.pads[i + k] < 0)
      return r.error("kernel sizes and strides must be positive and pads non-negative");
    if (w.kernel[i] > kMaxWindow || w.strides[i] > kMaxWindow || w.pads[i] > kMaxWindow ||
        w.pads[i + k] > kMaxWindow)
      return r.error("kernel sizes, strides and pads must be at most 2^40");
  }
  if (r.dtype(0) == DType::kBool) return r.error("not defined for bool tensors");
  if (r.dtype(1) != DType::kI64) return r.error("indices must be i64");
  if (r.rank(1) != rank) return r.error("indices must have x's shape");
  for (size_t d = 0; d < static_cast<size_t>(rank); ++d)
    KILN_RETURN_IF_ERROR(r.equal(r.shape(0)[d], r.shape(1)[d], "x and indices sizes").status());
  SymMeta out{r.dtype(0), unpooled_shape(r.shape(0), w)};
  for (size_t i = 0; i < k; ++i)
    KILN_RETURN_IF_ERROR(r.at_least(out.shape[i + 2], SymInt(0), "pads trim more than the output"));
  const std::vector<int64_t>& dims = r.attrs().dims;
  if (dims.empty()) return out;
  if (dims.size() != static_cast<size_t>(rank))
    return r.error("output_shape " + shape_str(dims) + " must have x's rank");
  const std::string too_small = "output_shape " + shape_str(dims) +
                                " is smaller than the unpooled shape " + sym_shape_str(out.shape);
  for (size_t d = 0; d < dims.size(); ++d)
    KILN_RETURN_IF_ERROR(r.at_least(SymInt(dims[d]), out.shape[d], too_small));
  for (size_t d = 0; d < dims.size(); ++d) out.shape[d] = SymInt(dims[d]);
  return out;
}

}  // namespace kiln::detail
