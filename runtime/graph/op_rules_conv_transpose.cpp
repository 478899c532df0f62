// ConvTranspose's shape rule, written once over symbolic sizes (graph/shape_rule.h; ONNX
// semantics over NC[D]HW tensors): the weight is [C, C_out / groups, K1, ..., Kk], the output
// [N, C_out, O1, ..., Ok] with
// O = stride * (D - 1) + output_padding + dilation * (K - 1) + 1 - pad_begin - pad_end.
// Pads may be negative: a negative pad extends the output by positions that hold the bias
// (how ONNX's output_shape larger than the full output comes out). The channels are guarded
// equal, the kernel sizes specialised, and a symbolic O guarded >= 0; the divisibility of C by
// groups and a non-empty input are checked at the traced sizes.
// Every error names the op and its input metas, then the offending value.
#include <string>

#include "graph/shape_rule.h"

namespace kiln {

int64_t conv_transpose_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin,
                                   int64_t pad_end, int64_t dilation, int64_t output_padding) {
  return stride * (in - 1) + output_padding + dilation * (kernel - 1) + 1 - pad_begin - pad_end;
}

namespace detail {

Expected<SymMeta> conv_transpose_shape(ShapeRule& r) {
  const size_t n_in = r.inputs();
  if (n_in != 2 && n_in != 3) return r.error("expects x, weight and an optional bias");
  const int rank = r.rank(0);
  if (rank < 3 || rank > 5)
    return r.error("input must be [N, C, D1, ..., Dk] with 1 to 3 spatial dims, got rank " +
                   std::to_string(rank));
  DType dt = promote_types(r.dtype(0), r.dtype(1));
  if (n_in == 3) dt = promote_types(dt, r.dtype(2));
  for (size_t i = 0; i < n_in; ++i)
    if (!is_floating(r.dtype(i))) return r.error("conv_transpose needs floating-point tensors");
  if (r.rank(1) != rank)
    return r.error("weight must be [C, C_out / groups, K1, ..., Kk] of the input's rank " +
                   std::to_string(rank) + ", got rank " + std::to_string(r.rank(1)));
  const Attrs::Window& w = r.attrs().window;
  const int64_t groups = w.groups;
  if (groups < 1) return r.error("groups " + std::to_string(groups) + " must be >= 1");
  const Shape &x_at = r.meta(0).shape, &wt_at = r.meta(1).shape;  // the traced sizes
  const Dim c = x_at[1];
  if (c % groups != 0)
    return r.error("input channels " + std::to_string(c) + " must be divisible by groups " +
                   std::to_string(groups));
  const SymShape &x = r.shape(0), &wt = r.shape(1);
  KILN_RETURN_IF_ERROR(r.expect_equal(
      x[1], wt[0],
      "weight dim 0 is " + std::to_string(wt_at[0]) + ", expected C = " + std::to_string(c)));
  const SymInt c_out = wt[1] * SymInt(groups);
  if (n_in == 3) {
    const std::string bias_error =
        "bias must be [" + std::to_string(wt_at[1] * groups) + "], got " + r.meta(2).str();
    if (r.rank(2) != 1) return r.error(bias_error);
    KILN_RETURN_IF_ERROR(r.expect_equal(r.shape(2)[0], c_out, bias_error));
  }
  const size_t k = static_cast<size_t>(rank - 2);
  auto entries = [&](const char* name, const std::vector<int64_t>& v, size_t n) -> Status {
    if (v.size() != n)
      return r.error(std::string(name) + " " + shape_str(v) + " must have " + std::to_string(n) +
                     " entries");
    return {};
  };
  KILN_RETURN_IF_ERROR(entries("strides", w.strides, k));
  KILN_RETURN_IF_ERROR(entries("dilations", w.dilations, k));
  KILN_RETURN_IF_ERROR(entries("pads", w.pads, 2 * k));
  KILN_RETURN_IF_ERROR(entries("output_padding", w.output_padding, k));
  SymMeta out{dt, {x[0], c_out}};
  for (size_t i = 0; i < k; ++i) {
    const int64_t s = w.strides[i], pb = w.pads[i], pe = w.pads[i + k];
    if (s < 1) return r.error("stride " + std::to_string(s) + " must be >= 1");
    if (w.dilations[i] < 1)
      return r.error("dilation " + std::to_string(w.dilations[i]) + " must be >= 1");
    if (w.output_padding[i] < 0)
      return r.error("output_padding " + shape_str(w.output_padding) + " is negative");
    if (x_at[i + 2] < 1)
      return r.error("spatial dim " + std::to_string(i) + " of the input is empty");
    KILN_ASSIGN_OR_RETURN(const int64_t kernel, r.constant(wt[i + 2]));
    const int64_t rest =
        conv_transpose_output_size(1, kernel, s, pb, pe, w.dilations[i], w.output_padding[i]);
    const SymInt& d = x[i + 2];
    if (d.is_constant()) {
      const int64_t o = s * (d.constant_value() - 1) + rest;
      if (o < 0)
        return r.error("spatial dim " + std::to_string(i) + ": pads " + std::to_string(pb) + " + " +
                       std::to_string(pe) + " trim more than the full output (" +
                       std::to_string(o + pb + pe) + ")");
      out.shape.push_back(SymInt(o));
      continue;
    }
    const SymInt o = SymInt(s) * d + SymInt(rest - s);
    KILN_RETURN_IF_ERROR(r.at_least(o, SymInt(0), "pads trim more than the output"));
    out.shape.push_back(o);
  }
  return out;
}

}  // namespace detail
}  // namespace kiln
