// Shape and dtype rules of the Window ops (Conv, MaxPool, AvgPool: ONNX semantics over
// NC[D]HW tensors) and GatherND's rule over symbolic sizes (graph/shape_rule.h). Every error
// names the op and its input metas (detail::op_error) and then the offending sizes or
// attribute.
#include <string>

#include "graph/shape_rule.h"

namespace kiln {

int64_t window_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin,
                           int64_t pad_end, int64_t dilation, bool ceil_mode) {
  const int64_t span = in + pad_begin + pad_end - (dilation * (kernel - 1) + 1);
  if (!ceil_mode) return span < 0 ? -1 : span / stride + 1;
  // Rounding up, the window may overhang the padded input by up to stride - 1 positions: a
  // 3-wide window with stride 2 over 2 positions gives one output (ONNX, PyTorch).
  if (span + stride - 1 < 0) return -1;
  int64_t out = (span + stride - 1) / stride + 1;
  // A last window that starts in the end padding is dropped (ONNX, PyTorch).
  if ((out - 1) * stride >= in + pad_begin) --out;
  return out < 1 && span < 0 ? -1 : out;
}

namespace detail {
namespace {

std::string list_str(const std::vector<int64_t>& v) {
  return shape_str(v);
}

/// Checks the window attributes against `k` spatial dims; `kernel` is the window's extent.
Status check_window(OpKind op, std::span<const TensorMeta> ins, const Attrs::Window& w, size_t k,
                    const std::vector<int64_t>& kernel) {
  auto bad = [&](const std::string& what) { return op_error(op, ins, what); };
  if (kernel.size() != k)
    return bad("kernel_shape " + list_str(kernel) + " must have one entry per spatial dim (" +
               std::to_string(k) + ")");
  if (w.strides.size() != k)
    return bad("strides " + list_str(w.strides) + " must have " + std::to_string(k) + " entries");
  if (w.dilations.size() != k)
    return bad("dilations " + list_str(w.dilations) + " must have " + std::to_string(k) +
               " entries");
  if (w.pads.size() != 2 * k)
    return bad("pads " + list_str(w.pads) + " must have " + std::to_string(2 * k) +
               " entries (the begin pads, then the end pads)");
  for (size_t i = 0; i < k; ++i) {
    if (kernel[i] < 1) return bad("kernel size " + std::to_string(kernel[i]) + " must be >= 1");
    if (w.strides[i] < 1) return bad("stride " + std::to_string(w.strides[i]) + " must be >= 1");
    if (w.dilations[i] < 1)
      return bad("dilation " + std::to_string(w.dilations[i]) + " must be >= 1");
    if (w.pads[i] < 0 || w.pads[i + k] < 0)
      return bad("pads " + list_str(w.pads) + " are negative");
  }
  return {};
}

/// [N, C_out, O1, ..., Ok] of a window op over x with the given per-dim kernel.
Expected<Shape> window_shape(OpKind op, std::span<const TensorMeta> ins, const Attrs::Window& w,
                             const std::vector<int64_t>& kernel, Dim channels) {
  const TensorMeta& x = ins[0];
  const size_t k = static_cast<size_t>(x.rank() - 2);
  KILN_RETURN_IF_ERROR(check_window(op, ins, w, k, kernel));
  Shape out = {x.shape[0], channels};
  for (size_t i = 0; i < k; ++i) {
    const bool ceil = op != OpKind::Conv && w.ceil_mode;
    const int64_t o = window_output_size(x.shape[i + 2], kernel[i], w.strides[i], w.pads[i],
                                         w.pads[i + k], w.dilations[i], ceil);
    if (o < 0)
      return op_error(op, ins,
                      "spatial dim " + std::to_string(i) + ": the window (kernel " +
                          std::to_string(kernel[i]) + ", dilation " +
                          std::to_string(w.dilations[i]) + ") is larger than the padded input (" +
                          std::to_string(x.shape[i + 2]) + " + pads " + std::to_string(w.pads[i]) +
                          " + " + std::to_string(w.pads[i + k]) + ")" +
                          (ceil ? " by more than stride - 1 (ceil_mode)" : ""));
    out.push_back(o);
  }
  return out;
}

Status check_spatial_rank(OpKind op, std::span<const TensorMeta> ins) {
  const int r = ins[0].rank();
  if (r < 3 || r > 5)
    return op_error(op, ins,
                    "input must be [N, C, D1, ..., Dk] with 1 to 3 spatial dims, got rank " +
                        std::to_string(r));
  return {};
}

Expected<TensorMeta> conv_meta(OpKind op, std::span<const TensorMeta> ins, const Attrs& at) {
  if (ins.size() != 2 && ins.size() != 3)
    return op_error(op, ins, "expects x, weight and an optional bias");
  KILN_RETURN_IF_ERROR(check_spatial_rank(op, ins));
  const TensorMeta &x = ins[0], &wt = ins[1];
  DType dt = promote_types(x.dtype, wt.dtype);
  if (ins.size() == 3) dt = promote_types(dt, ins[2].dtype);
  for (const TensorMeta& m : ins)
    if (!is_floating(m.dtype)) return op_error(op, ins, "conv needs floating-point tensors");
  if (wt.rank() != x.rank())
    return op_error(op, ins,
                    "weight must be [C_out, C / groups, K1, ..., Kk] of the input's rank " +
                        std::to_string(x.rank()) + ", got rank " + std::to_string(wt.rank()));
  const int64_t groups = at.window.groups;
  const Dim c = x.shape[1], c_out = wt.shape[0];
  if (groups < 1) return op_error(op, ins, "groups " + std::to_string(groups) + " must be >= 1");
  if (c % groups != 0 || c_out % groups != 0)
    return op_error(op, ins,
                    "input channels " + std::to_string(c) + " and output channels " +
                        std::to_string(c_out) + " must be divisible by groups " +
                        std::to_string(groups));
  if (wt.shape[1] != c / groups)
    return op_error(op, ins,
                    "weight dim 1 is " + std::to_string(wt.shape[1]) +
                        ", expected C / groups = " + std::to_string(c / groups));
  if (ins.size() == 3 && (ins[2].rank() != 1 || ins[2].shape[0] != c_out))
    return op_error(op, ins, "bias must be [" + std::to_string(c_out) + "], got " + ins[2].str());
  const std::vector<int64_t> kernel(wt.shape.begin() + 2, wt.shape.end());
  KILN_ASSIGN_OR_RETURN(Shape out, window_shape(op, ins, at.window, kernel, c_out));
  return TensorMeta{dt, out};
}

Expected<TensorMeta> pool_meta(OpKind op, std::span<const TensorMeta> ins, const Attrs& at) {
  KILN_RETURN_IF_ERROR(check_spatial_rank(op, ins));
  const DType dt = ins[0].dtype;
  if (dt == DType::kBool) return op_error(op, ins, "not defined for bool tensors");
  if (op == OpKind::AvgPool && !is_floating(dt))
    return op_error(op, ins, "avg_pool needs a floating-point input");
  if (op == OpKind::MaxPoolIndices && at.window.storage_order != 0 && at.window.storage_order != 1)
    return op_error(op, ins,
                    "storage_order " + std::to_string(at.window.storage_order) + " must be 0 or 1");
  KILN_ASSIGN_OR_RETURN(Shape out,
                        window_shape(op, ins, at.window, at.window.kernel, ins[0].shape[1]));
  return TensorMeta{op == OpKind::MaxPoolIndices ? DType::kI64 : dt, out};
}

}  // namespace

/// GatherND: indices.shape[:-1] + data.shape[b + m:]; the batch dims guarded equal, m
/// specialised.
Expected<SymMeta> gather_nd_shape(ShapeRule& r) {
  const DType idt = r.dtype(1);
  if (idt != DType::kI32 && idt != DType::kI64)
    return r.error("indices must be i32 or i64, got " + std::string(dtype_name(idt)));
  const int64_t rank = r.rank(0), q = r.rank(1), b = r.attrs().index;
  if (rank < 1 || q < 1) return r.error("data and indices must be at least 1-D");
  if (b < 0 || b >= std::min(rank, q))
    return r.error("batch_dims " + std::to_string(b) + " must be in [0, " +
                   std::to_string(std::min(rank, q)) + ")");
  const Shape &data_at = r.meta(0).shape, &idx_at = r.meta(1).shape;  // the traced sizes
  if (idx_at.back() < 1 || idx_at.back() > rank - b)
    return r.error("the indices' last dim (" + std::to_string(idx_at.back()) + ") must be in [1, " +
                   std::to_string(rank - b) + "] (data rank - batch_dims)");
  const SymShape &data = r.shape(0), &idx = r.shape(1);
  for (size_t i = 0; i < static_cast<size_t>(b); ++i)
    KILN_RETURN_IF_ERROR(r.expect_equal(data[i], idx[i],
                                        "batch dim " + std::to_string(i) + " differs: data " +
                                            std::to_string(data_at[i]) + ", indices " +
                                            std::to_string(idx_at[i])));
  KILN_ASSIGN_OR_RETURN(const int64_t m, r.constant(idx.back()));
  SymShape out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), data.begin() + b + m, data.end());
  return SymMeta{r.dtype(0), out};
}

Expected<TensorMeta> infer_meta_window(OpKind op, std::span<const TensorMeta> ins,
                                       const Attrs& attrs) {
  switch (op) {
    case OpKind::Conv:
      return conv_meta(op, ins, attrs);
    case OpKind::MaxPool:
    case OpKind::MaxPoolIndices:
    case OpKind::AvgPool:
      return pool_meta(op, ins, attrs);
    case OpKind::Resize:
      return infer_meta_resample(op, ins, attrs);
    default:
      break;
  }
  return op_error(op, ins, "no shape rule");
}

}  // namespace detail
}  // namespace kiln
