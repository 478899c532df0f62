// Signal and normalization ops composed from Tensor-API calls: the Hann, Hamming and Blackman
// windows, LRN, MeanVarianceNormalization and ReverseSequence.
#include <cmath>
#include <numbers>
#include <string>

#include "onnx/importer.h"

namespace kiln::onnx {

namespace {

Tensor lit(double v, const Tensor& like) {
  return scalar(v, like.dtype());
}

/// a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N) for n < size, N = size (periodic) or size - 1
/// (symmetric), in the node's output_datatype. The size is read on the host (a graph break
/// when it is computed), as the output's length depends on it.
void cosine_window(NodeCtx& c, double a0, double a1, double a2) {
  const int64_t size = c.scalar_int(0);
  if (size < 0) c.fail("the window size must not be negative");
  if (size > (int64_t{1} << 31)) c.fail("the window size is above 2^31");
  auto out = kiln_dtype(static_cast<OnnxType>(c.attr_i("output_datatype", 1)));
  if (!out.ok()) throw Error(out.status());
  const bool periodic = c.attr_i("periodic", 1) != 0;
  const double n = periodic ? static_cast<double>(size) : static_cast<double>(size - 1);
  // In f32 as ONNX's function body computes it: angle = n * (2 pi / N).
  Tensor k = arange(0, static_cast<double>(size), 1, DType::kF32, c.device());
  Tensor angle =
      mul(k, scalar(static_cast<float>(2 * std::numbers::pi) / static_cast<float>(n), DType::kF32));
  Tensor w = sub(scalar(a0, DType::kF32), mul(scalar(a1, DType::kF32), cos(angle)));
  if (a2 != 0) w = add(w, mul(scalar(a2, DType::kF32), cos(mul(angle, scalar(2, DType::kF32)))));
  c.set(0, *out == DType::kF32 ? w : cast(w, *out));
}

/// y = x / (bias + alpha / size * sum of x^2 over the `size` channels around c)^beta.
void lrn(NodeCtx& c) {
  Tensor x = c.in(0);
  if (x.dim() < 3) c.fail("the input must be [N, C, D1, ...]");
  const int64_t size = c.attr_i("size", 0);
  if (size < 1) c.fail("size must be positive");
  const double alpha = c.attr_f("alpha", 1e-4), beta = c.attr_f("beta", 0.75);
  const double bias = c.attr_f("bias", 1.0);
  const int64_t channels = x.sizes()[1].value();
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  Tensor sq = mul(x, x);
  // Zero channels on both sides, then the sum of `size` shifted views.
  Sizes pad_shape = x.sizes();
  std::vector<Tensor> parts;
  if (before > 0) {
    pad_shape[1] = before;
    parts.push_back(full(pad_shape, 0, x.dtype(), c.device()));
  }
  parts.push_back(sq);
  if (after > 0) {
    pad_shape[1] = after;
    parts.push_back(full(pad_shape, 0, x.dtype(), c.device()));
  }
  Tensor padded = parts.size() == 1 ? sq : concat(parts, 1);
  Tensor sum_sq = slice(padded, 1, 0, channels);
  for (int64_t k = 1; k < size; ++k) sum_sq = add(sum_sq, slice(padded, 1, k, k + channels));
  Tensor base = add(mul(sum_sq, lit(alpha / static_cast<double>(size), x)), lit(bias, x));
  c.set(0, div(x, pow(base, lit(beta, x))));
}

/// (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9) over `axes` (default 0, 2, 3), as ONNX's
/// function body.
void mvn(NodeCtx& c) {
  Tensor x = c.in(0);
  std::vector<int64_t> axes = c.attr_ints("axes");
  if (!c.has_attr("axes")) axes = {0, 2, 3};
  for (int64_t& a : axes) a = axis_of(c, a, x.dim());
  Tensor m = mean(x, axes, true);
  Tensor var = sub(mean(mul(x, x), axes, true), mul(m, m));
  c.set(0, div(sub(x, m), add(sqrt(var), lit(1e-9, x))));
}

/// Reverses the first sequence_lens[b] elements along time_axis for each b along batch_axis.
void reverse_sequence(NodeCtx& c) {
  Tensor x = c.in(0);
  if (x.dim() < 2) c.fail("the input must have rank >= 2");
  const int64_t batch_axis = axis_of(c, c.attr_i("batch_axis", 1), x.dim());
  const int64_t time_axis = axis_of(c, c.attr_i("time_axis", 0), x.dim());
  if (batch_axis == time_axis || batch_axis > 1 || time_axis > 1)
    c.fail("batch_axis and time_axis must be 0 and 1 in some order");
  const SymSize steps = x.sizes()[static_cast<size_t>(time_axis)];
  const SymSize batch = x.sizes()[static_cast<size_t>(batch_axis)];
  Tensor lens = cast(c.in(1), DType::kI64);
  if (lens.dim() != 1) c.fail("sequence_lens must be 1-D");
  // index[t, b] = L_b - 1 - t for t < L_b, else t; laid out as x's time and batch dims.
  Tensor t = reshape(arange(steps, DType::kI64, c.device()), {steps, 1});
  Tensor l = reshape(lens, {1, batch});  // a length above the time dim: a gather error
  Tensor idx = where(lt(t, l), sub(sub(l, scalar(1, DType::kI64)), t), expand(t, {steps, batch}));
  if (time_axis == 1) idx = permute(idx, {1, 0});
  Sizes view = idx.sizes();
  for (int64_t d = 2; d < x.dim(); ++d) view.push_back(1);
  c.set(0, gather(x, time_axis, expand(reshape(idx, view), x.sizes())));
}

}  // namespace

void register_signal_ops(std::map<std::string, OpHandler>& t) {
  t["HannWindow"] = [](NodeCtx& c) { cosine_window(c, 0.5, 0.5, 0); };
  t["HammingWindow"] = [](NodeCtx& c) { cosine_window(c, 25.0 / 46.0, 21.0 / 46.0, 0); };
  t["BlackmanWindow"] = [](NodeCtx& c) { cosine_window(c, 0.42, 0.5, 0.08); };
  t["LRN"] = lrn;
  t["MeanVarianceNormalization"] = mvn;
  t["ReverseSequence"] = reverse_sequence;
}

}  // namespace kiln::onnx
