// The FFTs and the complex64 part ops (kiln/fft.h). The graph's FFT ops transform the last
// dim, so only the length and the norm become attributes (Attrs::dims = {n}, Attrs::index);
// another dim is swapped to the end and back with permutes (folded into the FFT kernel's load,
// and into the consumer or a copy kernel after it).
#include <numeric>
#include <string>

#include "capture/trace.h"
#include "tensor/apply_op.h"
#include "kiln/fft.h"

namespace kiln {
namespace {

Tensor fft_op(OpKind op, const Tensor& x, int64_t n, int64_t dim, FftNorm norm, const Loc& loc) {
  Attrs attrs;
  attrs.dims = {n};
  attrs.index = norm == FftNorm::kForward ? kFftNormForward
                : norm == FftNorm::kOrtho ? kFftNormOrtho
                                          : kFftNormBackward;
  const int64_t rank = x.defined() ? x.dim() : 0;
  if (rank == 0 || dim == -1 || dim == rank - 1) return apply_op(op, {x}, std::move(attrs), loc);
  if (dim < -rank || dim >= rank)
    throw Error(invalid_argument(std::string(op_name(op)) + ": dim " + std::to_string(dim) +
                                 " is out of range for a rank-" + std::to_string(rank) +
                                 " tensor"));
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  std::swap(perm[static_cast<size_t>(dim < 0 ? dim + rank : dim)], perm.back());  // self-inverse
  return permute(apply_op(op, {permute(x, perm, loc)}, std::move(attrs), loc), perm, loc);
}

}  // namespace

Tensor fft(const Tensor& x, int64_t n, int64_t dim, FftNorm norm, Loc loc) {
  return fft_op(OpKind::Fft, x, n, dim, norm, loc);
}
Tensor ifft(const Tensor& x, int64_t n, int64_t dim, FftNorm norm, Loc loc) {
  return fft_op(OpKind::Ifft, x, n, dim, norm, loc);
}
Tensor rfft(const Tensor& x, int64_t n, int64_t dim, FftNorm norm, Loc loc) {
  return fft_op(OpKind::Rfft, x, n, dim, norm, loc);
}
Tensor irfft(const Tensor& x, int64_t n, int64_t dim, FftNorm norm, Loc loc) {
  return fft_op(OpKind::Irfft, x, n, dim, norm, loc);
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
