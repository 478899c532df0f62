#include "eager/conv_depthwise.h"

#include <algorithm>

#include "eager/conv_direct.h"
#include "eager/cpu_features.h"
#include "eager/elementwise_loops.h"
#include "eager/parallel.h"
#include "eager/phase_planes.h"

namespace kiln::eager {
namespace {

#if KILN_AVX512_KERNELS
/// One output plane from input plane xc: lo[kx] and hi[kx] the output columns whose tap kx lies
/// inside the input row. Stride 2 loads the 32 floats from a tap's first column and keeps the
/// even ones.
template <int S>
__attribute__((target("avx512f"))) void depthwise_plane(const Geometry& g, const int64_t* lo,
                                                        const int64_t* hi, const float* xc,
                                                        const float* wc, float b, float* yc) {
  const int64_t ow = g.out[2], kw = g.kernel[2], in_w = g.in[2];
  const auto lanes = [](int64_t a, int64_t e) {  // bits [a, e), 0 <= a < e <= 32
    return static_cast<uint32_t>(((uint64_t{1} << (e - a)) - 1u) << a);
  };
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  // kRows output rows at a time: independent sums, so that one row's adds need not wait for
  // the previous tap's.
  constexpr int64_t kRows = 4;
  for (int64_t r0 = 0; r0 < g.out[1]; r0 += kRows) {
    const int64_t rows = std::min(kRows, g.out[1] - r0);
    for (int64_t jb = 0; jb < ow; jb += 16) {
      const int64_t n = std::min<int64_t>(16, ow - jb);
      __m512 acc[kRows];
      for (auto& a : acc) a = _mm512_set1_ps(b);
      for (int64_t ky = 0; ky < g.kernel[1]; ++ky) {
        for (int64_t kx = 0; kx < kw; ++kx) {
          const int64_t a = std::max(lo[kx], jb), e = std::min(hi[kx], jb + n);
          if (a >= e) continue;
          const auto m = static_cast<__mmask16>(lanes(a - jb, e - jb));
          const int64_t c0 = jb * S - g.pad[2] + kx * g.dil[2];  // lane 0's input column
          const __m512 wv = _mm512_set1_ps(wc[ky * kw + kx]);
          uint32_t read = 0;
          if constexpr (S == 2) {  // columns c0 .. c0 + 31, those inside the row
            const int64_t i0 = std::max<int64_t>(0, -c0), i1 = std::min<int64_t>(32, in_w - c0);
            read = lanes(i0, i1);
          }
#pragma GCC unroll 4
          for (int64_t i = 0; i < kRows; ++i) {
            const int64_t iy = (r0 + i) * g.stride[1] - g.pad[1] + ky * g.dil[1];
            if (i >= rows || iy < 0 || iy >= g.in[1]) continue;
            const float* xr = xc + iy * in_w;
            __m512 v;
            if constexpr (S == 1) {
              v = _mm512_maskz_loadu_ps(m, xr + c0);
            } else {
              const __m512 v0 = _mm512_maskz_loadu_ps(static_cast<__mmask16>(read), xr + c0);
              const __m512 v1 =
                  _mm512_maskz_loadu_ps(static_cast<__mmask16>(read >> 16), xr + c0 + 16);
              v = _mm512_permutex2var_ps(v0, even, v1);
            }
            acc[i] = _mm512_mask_add_ps(acc[i], m, acc[i], _mm512_mul_ps(wv, v));
          }
        }
      }
      for (int64_t i = 0; i < rows; ++i)
        _mm512_mask_storeu_ps(yc + (r0 + i) * ow + jb, static_cast<__mmask16>(lanes(0, n)), acc[i]);
    }
  }
}
#endif

}  // namespace

bool depthwise_direct_applies(const Geometry& g) {
#if KILN_AVX512_KERNELS
  if (!direct_convs_enabled() || g.c <= 0 || g.n <= 0 || g.c_out % g.c != 0) return false;
  return plain_2d_window(g, 2);
#else
  (void)g;
  return false;
#endif
}

void depthwise_direct(const Geometry& g, const float* x, const float* w, const float* bias,
                      float* y, const OutputRuns& post) {
#if KILN_AVX512_KERNELS
  const int64_t kw = g.kernel[2], taps = g.kernel[1] * kw;
  const int64_t in_plane = g.in[1] * g.in[2], out_plane = g.out[1] * g.out[2];
  const int64_t multiplier = g.c_out / g.c;
  const InnerTaps inner(g);  // per kx, the output columns [lo, hi) whose tap is inside the row
  const auto plane = g.stride[2] == 1 ? depthwise_plane<1> : depthwise_plane<2>;
  const int64_t grain =
      std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, out_plane * taps));
  parallel_for(g.n * g.c_out, grain, [&](int64_t b, int64_t e) {
    for (int64_t nc = b; nc < e; ++nc) {
      const int64_t n = nc / g.c_out, co = nc % g.c_out;
      plane(g, inner.lo.data(), inner.hi.data(), x + (n * g.c + co / multiplier) * in_plane,
            w + co * taps, bias ? bias[co] : 0.0f, y + nc * out_plane);
    }
    if (post) post(y + b * out_plane, (e - b) * out_plane);
  });
#else
  (void)g, (void)x, (void)w, (void)bias, (void)y, (void)post;
#endif
}

}  // namespace kiln::eager
