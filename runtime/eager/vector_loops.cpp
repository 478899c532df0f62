// The window kernels' innermost loops (vector_loops.h), each cloned for AVX-512, AVX2 and the
// baseline.
#include "eager/vector_loops.h"

#include <algorithm>

#include "eager/cpu_features.h"
#include "eager/window_geometry.h"

namespace kiln::eager {

// Sanitizer builds take the plain loops: an ifunc resolver runs before a sanitizer's runtime is
// up (float_math.cpp).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
#define KILN_LANE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define KILN_LANE_CLONES
#endif

KILN_LANE_CLONES void madd_strided(float* __restrict y, float w, const float* __restrict x,
                                   int64_t count, int64_t stride) {
  // Strides 1 and 2 (most convs) as their own loops: with the stride known, the vectoriser
  // loads pairs and keeps the even lanes; a variable stride stays scalar.
  if (stride == 1) {
    for (int64_t i = 0; i < count; ++i) y[i] += w * x[i];
  } else if (stride == 2) {
    for (int64_t i = 0; i < count; ++i) y[i] += w * x[2 * i];
  } else {
    for (int64_t i = 0; i < count; ++i) y[i] += w * x[i * stride];
  }
}

KILN_LANE_CLONES void relu_in_place(float* y, int64_t count) {
  for (int64_t i = 0; i < count; ++i) y[i] = y[i] < 0.0f ? 0.0f : y[i];
}

namespace {

/// One row of binary_row's three stride patterns (inlined into each clone).
template <typename F>
inline void binary_row_of(float* __restrict o, const float* __restrict a, int64_t sa,
                          const float* __restrict b, int64_t sb, int64_t n, F f) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
  } else if (sa == 1) {
    const float bv = *b;
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], bv);
  } else {
    const float av = *a;
    for (int64_t i = 0; i < n; ++i) o[i] = f(av, b[i]);
  }
}

}  // namespace

KILN_LANE_CLONES void binary_row(BinaryRowOp op, float* o, const float* a, int64_t sa,
                                 const float* b, int64_t sb, int64_t n) {
  switch (op) {
    case BinaryRowOp::kAdd:
      return binary_row_of(o, a, sa, b, sb, n, [](float x, float y) { return x + y; });
    case BinaryRowOp::kSub:
      return binary_row_of(o, a, sa, b, sb, n, [](float x, float y) { return x - y; });
    case BinaryRowOp::kMul:
      return binary_row_of(o, a, sa, b, sb, n, [](float x, float y) { return x * y; });
    case BinaryRowOp::kDiv:
      return binary_row_of(o, a, sa, b, sb, n, [](float x, float y) { return x / y; });
    case BinaryRowOp::kMax:
      return binary_row_of(o, a, sa, b, sb, n,
                           [](float x, float y) { return (x != x || x > y) ? x : y; });
    case BinaryRowOp::kMin:
      return binary_row_of(o, a, sa, b, sb, n,
                           [](float x, float y) { return (x != x || x < y) ? x : y; });
  }
}

KILN_LANE_CLONES void copy_strided(float* __restrict y, const float* __restrict x, int64_t count,
                                   int64_t stride) {
  if (stride == 1) {
    for (int64_t i = 0; i < count; ++i) y[i] = x[i];
  } else if (stride == 2) {
    for (int64_t i = 0; i < count; ++i) y[i] = x[2 * i];
  } else {
    for (int64_t i = 0; i < count; ++i) y[i] = x[i * stride];
  }
}

KILN_LANE_CLONES void madd_positions(float* __restrict y, const float* __restrict w,
                                     const float* __restrict x, int64_t count, int64_t x_step,
                                     int64_t lanes) {
  for (int64_t i = 0; i < count; ++i, y += lanes, x += x_step)
    for (int64_t c = 0; c < lanes; ++c) y[c] += w[c] * x[c];
}

KILN_LANE_CLONES bool max_positions(float* __restrict y, const float* __restrict x, int64_t count,
                                    int64_t x_step, int64_t lanes) {
  int nan = 0;  // an int, not a bool: a bool reduction keeps the loop scalar
  for (int64_t i = 0; i < count; ++i, y += lanes, x += x_step)
    for (int64_t c = 0; c < lanes; ++c) {
      const float v = x[c];
      nan |= v != v;
      y[c] = v > y[c] ? v : y[c];
    }
  return nan != 0;
}

KILN_LANE_CLONES void max_rows(float* __restrict y, const float* const* rows, int64_t count,
                               int64_t width) {
  for (int64_t j = 0; j < width; ++j) y[j] = -__builtin_inff();
  for (int64_t t = 0; t < count; ++t) {
    const float* __restrict x = rows[t];
    for (int64_t j = 0; j < width; ++j) y[j] = x[j] > y[j] ? x[j] : y[j];
  }
}

namespace {

/// hr[j] for output columns [j0, j1) whose taps all lie inside the row: the maximum over K
/// adjacent taps from column j * S - pw (stride S, dilation 1), in tap order.
template <int S, int K>
inline void row_max_inside(const float* __restrict xr, float* __restrict hr, int64_t j0, int64_t j1,
                           int64_t pw) {
  for (int64_t j = j0; j < j1; ++j) {
    const float* q = xr + j * S - pw;
    float a = q[0];
    for (int k = 1; k < K; ++k) a = q[k] > a ? q[k] : a;
    hr[j] = a;
  }
}

}  // namespace

KILN_LANE_CLONES void max_pool_plane_2d(const Pool2d& p, const float* x, float* y, float* rows) {
  // Output columns whose taps all lie inside the row: the first tap's from the left, the last
  // tap's from the right (columns_inside, window_geometry.h).
  const int64_t j_lo = columns_inside(-p.pw, p.sw, p.w, p.ow).first;
  const int64_t j_hi =
      std::max(j_lo, columns_inside((p.kw - 1) * p.dw - p.pw, p.sw, p.w, p.ow).second);
  for (int64_t iy = 0; iy < p.h; ++iy) {
    const float* __restrict xr = x + iy * p.w;
    float* __restrict hr = rows + iy * p.ow;
    const auto edge = [&](int64_t j) {
      float a = -__builtin_inff();
      for (int64_t k = 0; k < p.kw; ++k) {
        const int64_t c = j * p.sw - p.pw + k * p.dw;
        if (c >= 0 && c < p.w) a = xr[c] > a ? xr[c] : a;
      }
      hr[j] = a;
    };
    for (int64_t j = 0; j < j_lo; ++j) edge(j);
    if (p.dw == 1 && p.sw == 2 && p.kw == 3) {
      row_max_inside<2, 3>(xr, hr, j_lo, j_hi, p.pw);
    } else if (p.dw == 1 && p.sw == 1 && p.kw == 3) {
      row_max_inside<1, 3>(xr, hr, j_lo, j_hi, p.pw);
    } else if (p.dw == 1 && p.sw == 2 && p.kw == 2) {
      row_max_inside<2, 2>(xr, hr, j_lo, j_hi, p.pw);
    } else {
      for (int64_t j = j_lo; j < j_hi; ++j) edge(j);
    }
    for (int64_t j = std::max(j_lo, j_hi); j < p.ow; ++j) edge(j);
  }
  for (int64_t r = 0; r < p.oh; ++r) {
    float* __restrict yr = y + r * p.ow;
    for (int64_t j = 0; j < p.ow; ++j) yr[j] = -__builtin_inff();
    for (int64_t k = 0; k < p.kh; ++k) {
      const int64_t iy = r * p.sh - p.ph + k * p.dh;
      if (iy < 0 || iy >= p.h) continue;
      const float* __restrict hr = rows + iy * p.ow;
      for (int64_t j = 0; j < p.ow; ++j) yr[j] = hr[j] > yr[j] ? hr[j] : yr[j];
    }
  }
}

KILN_LANE_CLONES bool any_nan(const float* x, int64_t count) {
  int nan = 0;  // an int, not a bool: a bool reduction keeps the loop scalar
  for (int64_t i = 0; i < count; ++i) nan |= x[i] != x[i];
  return nan != 0;
}

KILN_LANE_CLONES void deinterleave(float* __restrict dst, const float* __restrict src,
                                   int64_t count, int64_t stride) {
  if (stride == 2) {
    for (int64_t m = 0; m < count; ++m) {
      dst[m] = src[2 * m];
      dst[count + m] = src[2 * m + 1];
    }
    return;
  }
  for (int64_t p = 0; p < stride; ++p)
    for (int64_t m = 0; m < count; ++m) dst[p * count + m] = src[m * stride + p];
}

#if KILN_AVX512_KERNELS
namespace {

/// A whole 16 x 16 tile: 16 rows loaded, transposed in registers in four stages (stage b swaps
/// the off-diagonal b x b blocks of each 2b x 2b block: rows r and r + b exchange lanes through
/// two-source permutes), 16 rows stored.
__attribute__((target("avx512f"))) void transpose_16x16(const float* src, int64_t cols, float* dst,
                                                        int64_t rows) {
  __m512 v[16];
#pragma GCC unroll 16
  for (int r = 0; r < 16; ++r) v[r] = _mm512_loadu_ps(src + r * cols);
#pragma GCC unroll 4
  for (int b = 8; b >= 1; b /= 2) {
    alignas(64) int32_t lo[16], hi[16];
    for (int l = 0; l < 16; ++l) {
      lo[l] = (l & b) == 0 ? l : 16 + l - b;
      hi[l] = (l & b) == 0 ? l + b : 16 + l;
    }
    const __m512i ilo = _mm512_load_si512(lo), ihi = _mm512_load_si512(hi);
#pragma GCC unroll 16
    for (int r = 0; r < 16; ++r) {
      if ((r & b) != 0) continue;
      const __m512 x = v[r], y = v[r + b];
      v[r] = _mm512_permutex2var_ps(x, ilo, y);
      v[r + b] = _mm512_permutex2var_ps(x, ihi, y);
    }
  }
#pragma GCC unroll 16
  for (int c = 0; c < 16; ++c) _mm512_storeu_ps(dst + c * rows, v[c]);
}

}  // namespace
#endif

KILN_LANE_CLONES void transpose_tile_lanes(const float* __restrict src, int64_t rows, int64_t cols,
                                           float* __restrict dst, int64_t i0, int64_t i1,
                                           int64_t j0, int64_t j1) {
  for (int64_t j = j0; j < j1; ++j) {
    float* __restrict d = dst + j * rows;
    const float* s = src + j;
    for (int64_t i = i0; i < i1; ++i) d[i] = s[i * cols];
  }
}

void transpose_tile(const float* src, int64_t rows, int64_t cols, float* dst, int64_t i0,
                    int64_t i1, int64_t j0, int64_t j1) {
#if KILN_AVX512_KERNELS
  if (i1 - i0 == 16 && j1 - j0 == 16 && cpu_has_avx512()) {
    transpose_16x16(src + i0 * cols + j0, cols, dst + j0 * rows + i0, rows);
    return;
  }
#endif
  transpose_tile_lanes(src, rows, cols, dst, i0, i1, j0, j1);
}

}  // namespace kiln::eager
