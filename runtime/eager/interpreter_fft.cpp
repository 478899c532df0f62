// The CPU interpreter's Spectral ops (reference semantics, torch.fft's), over the last dim:
//   fft:   X[k] = s * sum_j x[j] e^(-2 pi i j k / n), k < n
//   ifft:  the same with e^(+2 pi i j k / n)
//   rfft:  fft of a real input, bins k <= n / 2
//   irfft: the real inverse of the Hermitian spectrum whose bins k <= n / 2 are the input
//          (X[n - k] = conj(X[k]); the imaginary parts of bin 0 and, for even n, bin n / 2
//          drop out), n real outputs
// The input row is cut or zero-padded to n (irfft: to n / 2 + 1 bins). s is 1, 1 / n or
// 1 / sqrt(n) by the norm (backward scales the inverse, forward the forward transform, ortho
// both). Everything is computed in double: an iterative radix-2 FFT for powers of two,
// Bluestein's chirp-z through one for other lengths above 16, the direct sum below; twiddle
// angles are reduced exactly (j * k mod n) before sin / cos. Results round to complex64 (f32)
// once. real / imag / abs (hypot) / view_as_real / view_as_complex convert element by element.
#include <cmath>
#include <complex>
#include <numbers>
#include <vector>

#include "eager/interpreter_ops.h"

namespace kiln::eager {
namespace {

using cd = std::complex<double>;

/// e^(sign * 2 pi i * t / n) for an exactly reduced t in [0, n).
cd twiddle(int64_t t, int64_t n, int sign) {
  const double a = 2.0 * std::numbers::pi * static_cast<double>(t) / static_cast<double>(n);
  return {std::cos(a), sign * std::sin(a)};
}

/// In place, n a power of two: iterative radix-2 (bit reversal, then butterflies).
void fft_pow2(std::vector<cd>& x, int sign) {
  const int64_t n = static_cast<int64_t>(x.size());
  for (int64_t i = 1, j = 0; i < n; ++i) {
    int64_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(x[static_cast<size_t>(i)], x[static_cast<size_t>(j)]);
  }
  std::vector<cd> w(static_cast<size_t>(n / 2 > 0 ? n / 2 : 1));
  for (int64_t k = 0; k < n / 2; ++k) w[static_cast<size_t>(k)] = twiddle(k, n, sign);
  for (int64_t len = 2; len <= n; len <<= 1) {
    const int64_t step = n / len;
    for (int64_t i = 0; i < n; i += len)
      for (int64_t k = 0; k < len / 2; ++k) {
        const cd u = x[static_cast<size_t>(i + k)];
        const cd v = x[static_cast<size_t>(i + k + len / 2)] * w[static_cast<size_t>(k * step)];
        x[static_cast<size_t>(i + k)] = u + v;
        x[static_cast<size_t>(i + k + len / 2)] = u - v;
      }
  }
}

/// The DFT of x (any length) with e^(sign * 2 pi i j k / n).
std::vector<cd> dft(const std::vector<cd>& x, int sign) {
  const int64_t n = static_cast<int64_t>(x.size());
  if ((n & (n - 1)) == 0) {
    std::vector<cd> y = x;
    fft_pow2(y, sign);
    return y;
  }
  std::vector<cd> y(static_cast<size_t>(n));
  if (n <= 16) {
    for (int64_t k = 0; k < n; ++k) {
      cd acc = 0;
      for (int64_t j = 0; j < n; ++j)
        acc += x[static_cast<size_t>(j)] * twiddle(j * k % n, n, sign);
      y[static_cast<size_t>(k)] = acc;
    }
    return y;
  }
  // Bluestein: jk = (j^2 + k^2 - (k - j)^2) / 2, so X[k] = c[k] * sum_j (x[j] c[j]) conj(c[k-j])
  // with the chirp c[j] = e^(sign * pi i j^2 / n) (angle reduced mod 2n), a convolution of
  // length m >= 2n - 1 done with power-of-two FFTs.
  int64_t m = 1;
  while (m < 2 * n - 1) m <<= 1;
  std::vector<cd> chirp(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j)
    chirp[static_cast<size_t>(j)] = twiddle(j * j % (2 * n), 2 * n, sign);
  std::vector<cd> a(static_cast<size_t>(m)), b(static_cast<size_t>(m));
  for (int64_t j = 0; j < n; ++j)
    a[static_cast<size_t>(j)] = x[static_cast<size_t>(j)] * chirp[static_cast<size_t>(j)];
  b[0] = std::conj(chirp[0]);
  for (int64_t j = 1; j < n; ++j)
    b[static_cast<size_t>(j)] = b[static_cast<size_t>(m - j)] =
        std::conj(chirp[static_cast<size_t>(j)]);
  fft_pow2(a, -1);
  fft_pow2(b, -1);
  for (int64_t i = 0; i < m; ++i) a[static_cast<size_t>(i)] *= b[static_cast<size_t>(i)];
  fft_pow2(a, 1);
  for (int64_t k = 0; k < n; ++k)
    y[static_cast<size_t>(k)] =
        a[static_cast<size_t>(k)] * chirp[static_cast<size_t>(k)] / static_cast<double>(m);
  return y;
}

double fft_scale(OpKind op, int64_t norm, int64_t n) {
  const bool inverse = op == OpKind::Ifft || op == OpKind::Irfft;
  if (norm == kFftNormOrtho) return 1.0 / std::sqrt(static_cast<double>(n));
  if ((norm == kFftNormBackward) == inverse) return 1.0 / static_cast<double>(n);
  return 1.0;
}

/// Element i of `t` as a complex double (a real dtype has imaginary part 0).
cd load_complex(const HostTensor& t, int64_t i) {
  if (is_complex(t.meta.dtype)) {
    const std::complex<float> v = t.ptr<std::complex<float>>()[i];
    return {v.real(), v.imag()};
  }
  return {t.get(i), 0.0};
}

Status eval_fft(const Node& node, const HostTensor& in, HostTensor& out) {
  const int64_t m = in.meta.shape.back();
  const int64_t n = detail::fft_length(node.op, m, node.attrs);
  const int64_t out_len = out.meta.shape.back();
  const int64_t rows = out.meta.numel() / out_len;  // out_len >= 1 (the shape rule)
  const bool inverse = node.op == OpKind::Ifft || node.op == OpKind::Irfft;
  const double scale = fft_scale(node.op, node.attrs.index, n);
  const int64_t used = node.op == OpKind::Irfft ? n / 2 + 1 : n;  // input values per row
  std::vector<cd> x(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(x.begin(), x.end(), cd(0));
    for (int64_t j = 0; j < std::min(m, used); ++j)
      x[static_cast<size_t>(j)] = load_complex(in, r * m + j);
    if (node.op == OpKind::Irfft)  // the Hermitian half: X[n - k] = conj(X[k])
      for (int64_t k = n / 2 + 1; k < n; ++k)
        x[static_cast<size_t>(k)] = std::conj(x[static_cast<size_t>(n - k)]);
    const std::vector<cd> y = dft(x, inverse ? 1 : -1);
    for (int64_t k = 0; k < out_len; ++k) {
      const cd v = y[static_cast<size_t>(k)] * scale;
      if (node.op == OpKind::Irfft)
        out.ptr<float>()[r * out_len + k] = static_cast<float>(v.real());
      else
        out.ptr<std::complex<float>>()[r * out_len + k] =
            std::complex<float>(static_cast<float>(v.real()), static_cast<float>(v.imag()));
    }
  }
  return {};
}

}  // namespace

Status eval_spectral(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out) {
  const HostTensor& in = *ins[0];
  const int64_t count = in.meta.numel();
  switch (node.op) {
    case OpKind::Fft:
    case OpKind::Ifft:
    case OpKind::Rfft:
    case OpKind::Irfft:
      return eval_fft(node, in, out);
    case OpKind::Real:
    case OpKind::Imag:
    case OpKind::ComplexAbs:
      for (int64_t i = 0; i < count; ++i) {
        const std::complex<float> v = in.ptr<std::complex<float>>()[i];
        out.ptr<float>()[i] = node.op == OpKind::Real ? v.real()
                              : node.op == OpKind::Imag
                                  ? v.imag()
                                  : static_cast<float>(std::hypot(static_cast<double>(v.real()),
                                                                  static_cast<double>(v.imag())));
      }
      return {};
    case OpKind::ViewAsReal:
    case OpKind::ViewAsComplex:  // the same bytes: interleaved real and imaginary parts
      std::copy(in.data.begin(), in.data.end(), out.data.begin());
      return {};
    default:
      break;
  }
  return internal_error(std::string("eval_spectral: ") + op_name(node.op) +
                        " is not a spectral op");
}

}  // namespace kiln::eager
