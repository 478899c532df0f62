// Signal and normalization ops composed from Tensor-API calls: DFT and STFT (on kiln::fft /
// ifft over the last dim, the signal's dims permuted around it), the Hann, Hamming and Blackman
// windows, LRN, MeanVarianceNormalization and ReverseSequence.
#include <cmath>
#include <numbers>
#include <string>

#include "kiln/fft.h"
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

/// The real and imaginary parts of a [..., 1 or 2] signal (the last dim: real, or real and
/// imaginary), without that dim.
std::pair<Tensor, Tensor> complex_parts(NodeCtx& c, const Tensor& x) {
  const int64_t parts = x.sizes()[static_cast<size_t>(x.dim() - 1)].value();
  if (parts != 1 && parts != 2) c.fail("the last dim must be 1 (real) or 2 (complex)");
  Tensor re = squeeze(slice(x, -1, 0, 1), x.dim() - 1);
  Tensor im = parts == 2 ? squeeze(slice(x, -1, 1, 2), x.dim() - 1) : Tensor();
  return {re, im};
}

/// The DFT of length n over the last dim of (re, im) (im may be undefined: a real signal),
/// cut or zero-padded to n, on kiln::fft / ifft (complex64, computed in f32), bins 0..bins-1 as
/// [..., bins, 2] in re's dtype. The inverse is scaled by 1 / n.
Tensor dft_last(const Tensor& re, const Tensor& im, int64_t n, int64_t bins, bool inverse) {
  Tensor z = cast(re, DType::kF32);
  if (im.defined()) {
    const int64_t last = z.dim();
    z = view_as_complex(concat({unsqueeze(z, last), unsqueeze(cast(im, DType::kF32), last)}, last));
  }
  Tensor y = view_as_real(inverse ? ifft(z, n) : fft(z, n));
  if (bins < n) y = slice(y, -2, 0, bins);
  return re.dtype() == DType::kF32 ? y : cast(y, re.dtype());
}

void dft(NodeCtx& c) {
  Tensor x = c.in(0);
  if (x.dim() < 3) c.fail("the input must be [batch, n..., 1 or 2]");
  const int64_t axis = axis_of(c, c.attr_i("axis", 1), x.dim());
  if (axis == 0 || axis == x.dim() - 1) c.fail("axis must be a signal dim");
  const bool inverse = c.attr_i("inverse", 0) != 0, onesided = c.attr_i("onesided", 0) != 0;
  auto [re, im] = complex_parts(c, x);
  if (onesided && im.defined()) c.fail("onesided needs a real input");
  // The transformed dim last, then back.
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < re.dim(); ++d)
    if (d != axis) perm.push_back(d);
  perm.push_back(axis);
  std::vector<int64_t> back(perm.size() + 1);
  for (size_t d = 0; d < perm.size(); ++d)
    back[static_cast<size_t>(perm[d])] = static_cast<int64_t>(d);
  back[perm.size()] = static_cast<int64_t>(perm.size());
  re = permute(re, perm);
  if (im.defined()) im = permute(im, perm);
  const int64_t n = c.has(1) ? c.scalar_int(1) : x.sizes()[static_cast<size_t>(axis)].value();
  if (n < 1) c.fail("dft_length must be positive");
  const int64_t bins = onesided ? n / 2 + 1 : n;
  c.set(0, permute(dft_last(re, im, n, bins, inverse), back));
}

/// Frames of `frame_length` every `frame_step` samples, windowed, each transformed:
/// [batch, frames, bins, 2].
void stft(NodeCtx& c) {
  Tensor x = c.in(0);
  if (x.dim() != 3) c.fail("the signal must be [batch, length, 1 or 2]");
  const int64_t step = c.scalar_int(1);
  Tensor window = c.has(2) ? c.in(2) : Tensor();
  int64_t len = c.has(3) ? c.scalar_int(3) : -1;
  if (window.defined()) {
    if (window.dim() != 1) c.fail("the window must be 1-D");
    const int64_t w = window.sizes()[0].value();
    if (len >= 0 && len != w) c.fail("frame_length differs from the window's length");
    len = w;
  }
  if (len < 1 || step < 1) c.fail("frame_length and frame_step must be positive");
  const int64_t length = x.sizes()[1].value();
  if (length < len) c.fail("the signal is shorter than a frame");
  const int64_t frames = (length - len) / step + 1;
  std::vector<int64_t> idx;
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t t = 0; t < len; ++t) idx.push_back(f * step + t);
  auto [re, im] = complex_parts(c, x);
  const bool onesided = c.attr_i("onesided", 1) != 0;
  if (onesided && im.defined()) c.fail("onesided needs a real signal");
  const auto frame = [&](const Tensor& s) {
    Tensor v = reshape(index_select(s, 1, c.constant_i64(idx, {frames * len})),
                       {s.sizes()[0], frames, len});
    return window.defined() ? mul(v, window) : v;
  };
  const int64_t bins = onesided ? len / 2 + 1 : len;
  c.set(0, dft_last(frame(re), im.defined() ? frame(im) : Tensor(), len, bins, false));
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
  t["DFT"] = dft;
  t["STFT"] = stft;
  t["LRN"] = lrn;
  t["MeanVarianceNormalization"] = mvn;
  t["ReverseSequence"] = reverse_sequence;
}

}  // namespace kiln::onnx
