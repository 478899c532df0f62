// MaxUnpool's shape rule, written once over symbolic sizes (graph/shape_rule.h): x
// [N, C, D1, ..., Dk] with indices of its shape; the output is Attrs::dims when given (ONNX's
// output_shape input), else Di' = (Di - 1) * stride + kernel - pad_begin - pad_end per
// spatial dim.
#include "graph/shape_rule.h"

namespace kiln::detail {

Expected<SymMeta> max_unpool_shape(ShapeRule& r) {
  const Attrs::Window& w = r.attrs().window;
  const int rank = r.rank(0);
  if (rank < 3) return r.error("needs x of rank 3 or more ([N, C, D1, ...])");
  const auto k = static_cast<size_t>(rank - 2);
  if (w.kernel.size() != k || w.strides.size() != k || w.pads.size() != 2 * k)
    return r.error("needs " + std::to_string(k) + " kernel sizes and strides and " +
                   std::to_string(2 * k) + " pads");
  for (size_t i = 0; i < k; ++i)
    if (w.kernel[i] < 1 || w.strides[i] < 1 || w.pads[i] < 0 || w.pads[i + k] < 0)
      return r.error("kernel sizes and strides must be positive and pads non-negative");
  if (r.dtype(0) == DType::kBool) return r.error("not defined for bool tensors");
  if (r.dtype(1) != DType::kI64) return r.error("indices must be i64");
  if (r.rank(1) != rank) return r.error("indices must have x's shape");
  for (size_t d = 0; d < static_cast<size_t>(rank); ++d)
    KILN_RETURN_IF_ERROR(r.equal(r.shape(0)[d], r.shape(1)[d], "x and indices sizes").status());
  SymMeta out{r.dtype(0), {}};
  const std::vector<int64_t>& dims = r.attrs().dims;
  if (!dims.empty()) {
    if (dims.size() != static_cast<size_t>(rank))
      return r.error("output_shape " + shape_str(dims) + " must have x's rank");
    for (int64_t d : dims) {
      if (d < 0) return r.error("negative size in output_shape " + shape_str(dims));
      out.shape.push_back(SymInt(d));
    }
    return out;
  }
  out.shape = {r.shape(0)[0], r.shape(0)[1]};
  for (size_t i = 0; i < k; ++i) {
    const SymInt& d = r.shape(0)[i + 2];
    const int64_t s = w.strides[i];
    const SymInt o = SymInt(s) * d + SymInt(w.kernel[i] - s - w.pads[i] - w.pads[i + k]);
    KILN_RETURN_IF_ERROR(r.at_least(o, SymInt(0), "pads trim more than the output"));
    out.shape.push_back(o);
  }
  return out;
}

}  // namespace kiln::detail
