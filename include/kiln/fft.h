/// \file fft.h
/// Discrete Fourier transforms over the last dim (torch.fft semantics) and the complex64 part
/// ops. A complex64 tensor (DType::kC64) stores interleaved (real, imaginary) floats, so
/// Tensor::from_vector / to_vector take std::vector<std::complex<float>>. Besides these
/// functions, complex64 tensors go into reshape, kiln::abs (the magnitude, f32) and
/// cast(x, kC64) of a real x and the movement ops (reshape, permute, expand); every other op
/// reports a kiln::Error.
///
/// The transformed dim is `dim` (default the last; another is permuted to the end and back,
/// folded into the kernels' loads). Its length is a constant of the compiled kernel: inside
/// kiln::compile a symbolic transformed dim is specialised (guarded) to the size seen; the
/// other dims may be symbolic. Errors (a rank-0 input, n < 1, a dim out of range, a complex
/// input to rfft) throw kiln::Error.
#pragma once

#include <cstdint>

#include "kiln/tensor.h"

namespace kiln {

/// Which direction is scaled (torch.fft's `norm`): kBackward scales the inverse by 1 / n,
/// kForward the forward transform by 1 / n, kOrtho both by 1 / sqrt(n).
enum class FftNorm { kBackward, kForward, kOrtho };

/// X[k] = sum_j x[j] e^(-2 pi i j k / n) over dim `dim`, cut or zero-padded to n (n = -1:
/// its size). A real input (f32, f16, i32, i64) is promoted; the result is complex64 [..., n].
Tensor fft(const Tensor& x, int64_t n = -1, int64_t dim = -1, FftNorm norm = FftNorm::kBackward,
           Loc loc = Loc::current());
/// The inverse: e^(+2 pi i j k / n), scaled by 1 / n under kBackward.
Tensor ifft(const Tensor& x, int64_t n = -1, int64_t dim = -1, FftNorm norm = FftNorm::kBackward,
            Loc loc = Loc::current());
/// fft of a real input, bins 0..n / 2: complex64 [..., n / 2 + 1].
Tensor rfft(const Tensor& x, int64_t n = -1, int64_t dim = -1, FftNorm norm = FftNorm::kBackward,
            Loc loc = Loc::current());
/// The inverse of rfft: the input holds bins 0..n / 2 of a Hermitian spectrum (cut or
/// zero-padded to n / 2 + 1; the imaginary parts of bin 0 and, for even n, bin n / 2 are
/// ignored); the result is f32 [..., n], n = 2 * (m - 1) by default (m: the input's size in dim).
Tensor irfft(const Tensor& x, int64_t n = -1, int64_t dim = -1, FftNorm norm = FftNorm::kBackward,
             Loc loc = Loc::current());

/// The real part of a complex64 tensor (f32); a real tensor is returned as it is.
Tensor real(const Tensor& x, Loc loc = Loc::current());
/// The imaginary part of a complex64 tensor (f32).
Tensor imag(const Tensor& x, Loc loc = Loc::current());
/// complex64 [...] as f32 [..., 2] (real, imaginary): the same bytes.
Tensor view_as_real(const Tensor& x, Loc loc = Loc::current());
/// f32 [..., 2] as complex64 [...]: the inverse of view_as_real.
Tensor view_as_complex(const Tensor& x, Loc loc = Loc::current());

}  // namespace kiln
