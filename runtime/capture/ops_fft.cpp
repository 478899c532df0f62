// The FFTs and the complex64 part ops (kiln/fft.h): the transform dim is always the last one,
// so only the length and the norm become attributes (Attrs::dims = {n}, Attrs::index).
#include "capture/trace.h"
#include "kiln/fft.h"

namespace kiln {
namespace {

Tensor fft_op(OpKind op, const Tensor& x, int64_t n, FftNorm norm, const Loc& loc) {
  Attrs attrs;
  attrs.dims = {n};
  attrs.index = norm == FftNorm::kForward ? kFftNormForward
                : norm == FftNorm::kOrtho ? kFftNormOrtho
                                          : kFftNormBackward;
  return apply_op(op, {x}, std::move(attrs), loc);
}

}  // namespace

Tensor fft(const Tensor& x, int64_t n, FftNorm norm, Loc loc) {
  return fft_op(OpKind::Fft, x, n, norm, loc);
}
Tensor ifft(const Tensor& x, int64_t n, FftNorm norm, Loc loc) {
  return fft_op(OpKind::Ifft, x, n, norm, loc);
}
Tensor rfft(const Tensor& x, int64_t n, FftNorm norm, Loc loc) {
  return fft_op(OpKind::Rfft, x, n, norm, loc);
}
Tensor irfft(const Tensor& x, int64_t n, FftNorm norm, Loc loc) {
  return fft_op(OpKind::Irfft, x, n, norm, loc);
}

Tensor real(const Tensor& x, Loc loc) {
  if (x.defined() && !is_complex(x.dtype())) return x;
  return apply_op(OpKind::Real, {x}, {}, loc);
}
Tensor imag(const Tensor& x, Loc loc) {
  return apply_op(OpKind::Imag, {x}, {}, loc);
}
Tensor view_as_real(const Tensor& x, Loc loc) {
  return apply_op(OpKind::ViewAsReal, {x}, {}, loc);
}
Tensor view_as_complex(const Tensor& x, Loc loc) {
  return apply_op(OpKind::ViewAsComplex, {x}, {}, loc);
}

}  // namespace kiln
