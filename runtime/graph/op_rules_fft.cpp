// Shape and dtype rules of the Spectral ops (torch.fft semantics, over the last dim):
//   Fft/Ifft: a real (promoted) or complex64 input [..., m] -> complex64 [..., n].
//   Rfft: a real input [..., m] -> complex64 [..., n / 2 + 1].
//   Irfft: a complex64 (or real) input [..., m] -> f32 [..., n], n = 2 * (m - 1) by default.
//   n (Attrs::dims[0], -1 = default) is the transform length: the input is cut or zero-padded
//   to n (Irfft: to n / 2 + 1 bins). Attrs::index is the norm (kFftNormBackward, ...).
//   Real/Imag/ComplexAbs: complex64 -> f32 of the same shape.
//   ViewAsReal: complex64 [...] -> f32 [..., 2]; ViewAsComplex: f32 [..., 2] -> complex64 [...].
// Every error names the op and its input metas (detail::op_error), then the offending value.
#include <string>

#include "graph/op.h"

namespace kiln::detail {

int64_t fft_length(OpKind op, int64_t m, const Attrs& attrs) {
  const int64_t n = attrs.dims.empty() ? -1 : attrs.dims[0];
  if (n != -1) return n;
  return op == OpKind::Irfft ? 2 * (m - 1) : m;
}

Expected<TensorMeta> infer_meta_spectral(OpKind op, std::span<const TensorMeta> ins,
                                         const Attrs& at) {
  auto bad = [&](const std::string& what) { return op_error(op, ins, what); };
  if (ins.size() != 1) return bad("expects one input");
  const TensorMeta& x = ins[0];
  const DType dt = x.dtype;
  Shape shape = x.shape;
  switch (op) {
    case OpKind::Real:
    case OpKind::Imag:
    case OpKind::ComplexAbs:
      if (!is_complex(dt)) return bad("needs a complex64 tensor");
      return TensorMeta{DType::kF32, shape};
    case OpKind::ViewAsReal:
      if (!is_complex(dt)) return bad("needs a complex64 tensor");
      shape.push_back(2);
      return TensorMeta{DType::kF32, shape};
    case OpKind::ViewAsComplex:
      if (dt != DType::kF32) return bad("needs an f32 tensor");
      if (shape.empty() || shape.back() != 2) return bad("needs a last dim of size 2");
      shape.pop_back();
      return TensorMeta{DType::kC64, shape};
    default:
      break;
  }
  if (shape.empty()) return bad("needs at least one dim");
  if (dt == DType::kBool) return bad("is not defined for bool tensors");
  if (op == OpKind::Rfft && is_complex(dt)) return bad("needs a real input (fft takes complex)");
  if (at.dims.size() > 1) return bad("takes one length");
  if (at.index < kFftNormBackward || at.index > kFftNormOrtho)
    return bad("unknown norm " + std::to_string(at.index));
  if (!at.dims.empty() && at.dims[0] < 1 && at.dims[0] != -1)
    return bad("length n=" + std::to_string(at.dims[0]) + " must be at least 1");
  const int64_t n = fft_length(op, shape.back(), at);
  if (n < 1)
    return bad("transform length " + std::to_string(n) + " must be at least 1 (irfft of " +
               std::to_string(shape.back()) + " bins needs n)");
  switch (op) {
    case OpKind::Fft:
    case OpKind::Ifft:
      shape.back() = n;
      return TensorMeta{DType::kC64, shape};
    case OpKind::Rfft:
      shape.back() = n / 2 + 1;
      return TensorMeta{DType::kC64, shape};
    case OpKind::Irfft:
      shape.back() = n;
      return TensorMeta{DType::kF32, shape};
    default:
      break;
  }
  return bad("is not a spectral op");
}

}  // namespace kiln::detail
