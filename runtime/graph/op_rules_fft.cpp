// The Spectral ops' shape rule, written once over symbolic sizes (graph/shape_rule.h;
// torch.fft semantics, over the last dim):
//   Fft/Ifft: a real (promoted) or complex64 input [..., m] -> complex64 [..., n].
//   Rfft: a real input [..., m] -> complex64 [..., n / 2 + 1].
//   Irfft: a complex64 (or real) input [..., m] -> f32 [..., n], n = 2 * (m - 1) by default.
//   n (Attrs::dims[0], -1 = default) is the transform length: the input is cut or zero-padded
//   to n (Irfft: to n / 2 + 1 bins). Attrs::index is the norm (kFftNormBackward, ...).
//   Real/Imag/ComplexAbs: complex64 -> f32 of the same shape.
//   ViewAsReal: complex64 [...] -> f32 [..., 2]; ViewAsComplex: f32 [..., 2] -> complex64 [...].
// The transformed (last) dim is specialised: the kernel's length is a constant; the batch dims
// stay symbolic. Every error names the op and its input metas, then the offending value.
#include <string>

#include "graph/shape_rule.h"

namespace kiln::detail {

int64_t fft_length(OpKind op, int64_t m, const Attrs& attrs) {
  const int64_t n = attrs.dims.empty() ? -1 : attrs.dims[0];
  if (n != -1) return n;
  return op == OpKind::Irfft ? 2 * (m - 1) : m;
}

Expected<SymMeta> fft_shape(ShapeRule& r) {
  if (r.inputs() != 1) return r.error("expects one input");
  const OpKind op = r.op();
  const Attrs& at = r.attrs();
  const DType dt = r.dtype(0);
  SymShape shape = r.shape(0);
  switch (op) {
    case OpKind::Real:
    case OpKind::Imag:
    case OpKind::ComplexAbs:
      if (!is_complex(dt)) return r.error("needs a complex64 tensor");
      return SymMeta{DType::kF32, shape};
    case OpKind::ViewAsReal:
      if (!is_complex(dt)) return r.error("needs a complex64 tensor");
      shape.push_back(SymInt(2));
      return SymMeta{DType::kF32, shape};
    case OpKind::ViewAsComplex: {
      if (dt != DType::kF32) return r.error("needs an f32 tensor");
      if (shape.empty()) return r.error("needs a last dim of size 2");
      KILN_ASSIGN_OR_RETURN(const int64_t last, r.constant(shape.back()));
      if (last != 2) return r.error("needs a last dim of size 2");
      shape.pop_back();
      return SymMeta{DType::kC64, shape};
    }
    default:
      break;
  }
  if (shape.empty()) return r.error("needs at least one dim");
  if (dt == DType::kBool) return r.error("is not defined for bool tensors");
  if (op == OpKind::Rfft && is_complex(dt))
    return r.error("needs a real input (fft takes complex)");
  if (at.dims.size() > 1) return r.error("takes one length");
  if (at.index < kFftNormBackward || at.index > kFftNormOrtho)
    return r.error("unknown norm " + std::to_string(at.index));
  if (!at.dims.empty() && at.dims[0] < 1 && at.dims[0] != -1)
    return r.error("length n=" + std::to_string(at.dims[0]) + " must be at least 1");
  KILN_ASSIGN_OR_RETURN(const int64_t m, r.constant(shape.back()));
  const int64_t n = fft_length(op, m, at);
  if (n < 1)
    return r.error("transform length " + std::to_string(n) + " must be at least 1 (irfft of " +
                   std::to_string(m) + " bins needs n)");
  switch (op) {
    case OpKind::Fft:
    case OpKind::Ifft:
      shape.back() = SymInt(n);
      return SymMeta{DType::kC64, shape};
    case OpKind::Rfft:
      shape.back() = SymInt(n / 2 + 1);
      return SymMeta{DType::kC64, shape};
    case OpKind::Irfft:
      shape.back() = SymInt(n);
      return SymMeta{DType::kF32, shape};
    default:
      break;
  }
  return r.error("is not a spectral op");
}

}  // namespace kiln::detail
