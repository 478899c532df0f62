// Shape and dtype rule of ConvTranspose (ONNX semantics over NC[D]HW tensors): the weight is
// [C, C_out / groups, K1, ..., Kk], the output [N, C_out, O1, ..., Ok] with
// O = stride * (D - 1) + output_padding + dilation * (K - 1) + 1 - pad_begin - pad_end.
// Pads may be negative: a negative pad extends the output by positions that hold the bias
// (how ONNX's output_shape larger than the full output comes out).
// Every error names the op and its input metas (detail::op_error), then the offending value.
#include <string>

#include "graph/op.h"

namespace kiln {

int64_t conv_transpose_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin,
                                   int64_t pad_end, int64_t dilation, int64_t output_padding) {
  return stride * (in - 1) + output_padding + dilation * (kernel - 1) + 1 - pad_begin - pad_end;
}

namespace detail {

Expected<TensorMeta> conv_transpose_meta(std::span<const TensorMeta> ins, const Attrs& at) {
  const OpKind op = OpKind::ConvTranspose;
  auto bad = [&](const std::string& what) { return op_error(op, ins, what); };
  if (ins.size() != 2 && ins.size() != 3) return bad("expects x, weight and an optional bias");
  const TensorMeta &x = ins[0], &wt = ins[1];
  const int r = x.rank();
  if (r < 3 || r > 5)
    return bad("input must be [N, C, D1, ..., Dk] with 1 to 3 spatial dims, got rank " +
               std::to_string(r));
  DType dt = promote_types(x.dtype, wt.dtype);
  if (ins.size() == 3) dt = promote_types(dt, ins[2].dtype);
  for (const TensorMeta& m : ins)
    if (!is_floating(m.dtype)) return bad("conv_transpose needs floating-point tensors");
  if (wt.rank() != r)
    return bad("weight must be [C, C_out / groups, K1, ..., Kk] of the input's rank " +
               std::to_string(r) + ", got rank " + std::to_string(wt.rank()));
  const Attrs::Window& w = at.window;
  const int64_t groups = w.groups;
  if (groups < 1) return bad("groups " + std::to_string(groups) + " must be >= 1");
  const Dim c = x.shape[1];
  if (c % groups != 0)
    return bad("input channels " + std::to_string(c) + " must be divisible by groups " +
               std::to_string(groups));
  if (wt.shape[0] != c)
    return bad("weight dim 0 is " + std::to_string(wt.shape[0]) +
               ", expected C = " + std::to_string(c));
  const Dim c_out = wt.shape[1] * groups;
  if (ins.size() == 3 && (ins[2].rank() != 1 || ins[2].shape[0] != c_out))
    return bad("bias must be [" + std::to_string(c_out) + "], got " + ins[2].str());
  const size_t k = static_cast<size_t>(r - 2);
  auto entries = [&](const char* name, const std::vector<int64_t>& v, size_t n) -> Status {
    if (v.size() != n)
      return bad(std::string(name) + " " + shape_str(v) + " must have " + std::to_string(n) +
                 " entries");
    return {};
  };
  KILN_RETURN_IF_ERROR(entries("strides", w.strides, k));
  KILN_RETURN_IF_ERROR(entries("dilations", w.dilations, k));
  KILN_RETURN_IF_ERROR(entries("pads", w.pads, 2 * k));
  KILN_RETURN_IF_ERROR(entries("output_padding", w.output_padding, k));
  Shape out = {x.shape[0], c_out};
  for (size_t i = 0; i < k; ++i) {
    if (w.strides[i] < 1) return bad("stride " + std::to_string(w.strides[i]) + " must be >= 1");
    if (w.dilations[i] < 1)
      return bad("dilation " + std::to_string(w.dilations[i]) + " must be >= 1");
    if (w.output_padding[i] < 0)
      return bad("output_padding " + shape_str(w.output_padding) + " is negative");
    if (x.shape[i + 2] < 1)
      return bad("spatial dim " + std::to_string(i) + " of the input is empty");
    const int64_t o =
        conv_transpose_output_size(x.shape[i + 2], wt.shape[i + 2], w.strides[i], w.pads[i],
                                   w.pads[i + k], w.dilations[i], w.output_padding[i]);
    if (o < 0)
      return bad("spatial dim " + std::to_string(i) + ": pads " + std::to_string(w.pads[i]) +
                 " + " + std::to_string(w.pads[i + k]) + " trim more than the full output (" +
                 std::to_string(o + w.pads[i] + w.pads[i + k]) + ")");
    out.push_back(o);
  }
  return TensorMeta{dt, out};
}

}  // namespace detail
}  // namespace kiln
