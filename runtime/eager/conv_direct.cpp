#include "eager/conv_direct.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "eager/cpu_features.h"
#include "eager/parallel.h"
#include "eager/phase_planes.h"

namespace kiln::eager {
namespace {

constexpr int64_t kRows = 8;             // output channels per micro-tile
constexpr int64_t kTile = 32;            // positions per micro-tile: two vectors of 16 floats
constexpr int64_t kDepthBlock = 128;     // taps per pass over a tile (its input runs stay in L1)
constexpr double kItemMacs = 1 << 20;    // multiply-adds per unit of work, at least
constexpr double kMaxScratch = 1 << 24;  // floats of padded copies and staged outputs, at most

#if KILN_AVX512_KERNELS
/// R output channels x 32 positions: y[i][q] = (accumulate ? y[i][q] : bias[i] or 0) + sum over
/// k < kc of w[i * ldw + k] * x[off[k] + q], then with `relu` y < 0 ? 0 : y (maxps(0, y) is
/// exactly that: NaN and -0 pass through). Lanes past the masks are neither read nor written;
/// `Full` tiles have no such lanes and load without masks.
template <int R, bool Full>
__attribute__((target("avx512f"))) void micro_tile(int64_t kc, const float* w, int64_t ldw,
                                                   const float* x, const int64_t* off, float* y,
                                                   int64_t ldy, __mmask16 m0, __mmask16 m1,
                                                   const float* bias, bool accumulate, bool relu) {
  __m512 acc[R][2];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    if (accumulate) {
      acc[i][0] = _mm512_maskz_loadu_ps(m0, y + i * ldy);
      acc[i][1] = _mm512_maskz_loadu_ps(m1, y + i * ldy + 16);
    } else {
      acc[i][0] = acc[i][1] = _mm512_set1_ps(bias ? bias[i] : 0.0f);
    }
  }
  for (int64_t k = 0; k < kc; ++k) {
    const float* xk = x + off[k];
    __m512 b0, b1;
    if constexpr (Full) {
      b0 = _mm512_loadu_ps(xk);
      b1 = _mm512_loadu_ps(xk + 16);
    } else {
      b0 = _mm512_maskz_loadu_ps(m0, xk);
      b1 = _mm512_maskz_loadu_ps(m1, xk + 16);
    }
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const __m512 a = _mm512_set1_ps(w[i * ldw + k]);
      acc[i][0] = _mm512_fmadd_ps(a, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(a, b1, acc[i][1]);
    }
  }
  if (relu) {
    // (The zero-masked form: GCC 12's _mm512_max_ps trips -Wmaybe-uninitialized.)
    const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      acc[i][0] = _mm512_maskz_max_ps(0xFFFF, zero, acc[i][0]);
      acc[i][1] = _mm512_maskz_max_ps(0xFFFF, zero, acc[i][1]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    _mm512_mask_storeu_ps(y + i * ldy, m0, acc[i][0]);
    _mm512_mask_storeu_ps(y + i * ldy + 16, m1, acc[i][1]);
  }
}

using MicroTile = void (*)(int64_t, const float*, int64_t, const float*, const int64_t*, float*,
                           int64_t, __mmask16, __mmask16, const float*, bool, bool);
/// By rows, for partial tiles [0][R] and whole ones [1][R].
constexpr MicroTile kMicroTiles[2][kRows + 1] = {
    {nullptr, micro_tile<1, false>, micro_tile<2, false>, micro_tile<3, false>,
     micro_tile<4, false>, micro_tile<5, false>, micro_tile<6, false>, micro_tile<7, false>,
     micro_tile<8, false>},
    {nullptr, micro_tile<1, true>, micro_tile<2, true>, micro_tile<3, true>, micro_tile<4, true>,
     micro_tile<5, true>, micro_tile<6, true>, micro_tile<7, true>, micro_tile<8, true>}};

/// Output channels [c0, c1) of tiles [t0, t1) of one image and group: x the group's first input
/// plane (layout `l`), w its weight rows [og, k], y its first output row (`ldy` apart); `relu`
/// applies with the last depth block.
void tiles(const PhaseLayout& l, int64_t k, const int64_t* off, const float* x, const float* w,
           const float* bias, float* y, int64_t ldy, int64_t t0, int64_t t1, int64_t c0, int64_t c1,
           bool relu) {
  for (int64_t kb = 0; kb < k; kb += kDepthBlock) {
    const int64_t kc = std::min(kDepthBlock, k - kb);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t q = t * kTile, left = std::min(kTile, l.positions - q);
      const auto m0 = static_cast<__mmask16>(left >= 16 ? 0xFFFFu : (1u << left) - 1u);
      const auto m1 = static_cast<__mmask16>(left >= 32   ? 0xFFFFu
                                             : left <= 16 ? 0u
                                                          : (1u << (left - 16)) - 1u);
      for (int64_t co = c0; co < c1; co += kRows) {
        const int64_t r = std::min(kRows, c1 - co);
        kMicroTiles[left >= kTile ? 1 : 0][r](
            kc, w + co * k + kb, k, x + q, off + kb, y + co * ldy + q, ldy, m0, m1,
            bias ? bias + co : nullptr, kb > 0, relu && kb + kc == k);
      }
    }
  }
}
#endif

}  // namespace

bool direct_convs_enabled() {
#if KILN_AVX512_KERNELS
  static const bool enabled = avx512_kernels_enabled("KILN_CONV_DIRECT");
  return enabled;
#else
  return false;
#endif
}

bool conv_direct_applies(const Geometry& g) {
#if KILN_AVX512_KERNELS
  const bool enabled = direct_convs_enabled();
  if (!enabled || g.c <= 0 || g.c_out <= 0 || g.n <= 0) return false;
  if (!plain_2d_window(g, 4)) return false;
  // The phase planes and the staged outputs, counted in double (absurd pads or dilations must
  // not wrap), within kMaxScratch; larger convs take im2col's chunks.
  double phase[3];
  for (size_t d = 1; d < 3; ++d)
    phase[d] = std::ceil((double(g.in[d]) + double(g.pad[d]) + double(g.pad_end[d])) /
                         double(g.stride[d]));
  const double overhang =
      std::floor(double(g.kernel[2] - 1) * double(g.dil[2]) / double(g.stride[2]));
  const double scratch = double(g.n) * double(g.c) * double(g.stride[1] * g.stride[2]) *
                             (phase[1] * phase[2] + overhang) +
                         double(g.n) * double(g.c_out) * double(g.out[1]) * phase[2];
  if (!(scratch <= kMaxScratch)) return false;
  // At least 3/4 of the lanes computed are outputs: not the small maps of a CNN's last stages
  // (a 4x4 map padded to 6 wide fills 16 of 32 lanes), where im2col + sgemm, which packs the
  // weight once for all images, was faster (docs/perf.md).
  const PhaseLayout l = phase_layout(g);
  // A 1x1 window reads the input in place; planes a multiple of 256 floats long put its rows in
  // the same L1 sets, and a copy costs as much as the product saves (measured: 1.2-1.35x
  // slower than sgemm on 32x32 and 16x16 maps).
  if (l.in_place && l.plane % 256 == 0) return false;
  const int64_t lanes = (l.positions + kTile - 1) / kTile * kTile;
  return 4 * g.out[1] * g.out[2] >= 3 * lanes;
#else
  (void)g;
  return false;
#endif
}

void conv_direct(const Geometry& g, int64_t groups, const float* x, const float* w,
                 const float* bias, float* y, bool relu, const OutputRuns& post) {
#if KILN_AVX512_KERNELS
  const PhaseLayout l = phase_layout(g);
  const int64_t cg = g.c / groups, og = g.c_out / groups;
  const int64_t taps = g.kernel[1] * g.kernel[2], k = cg * taps;
  const int64_t in_plane = g.in[1] * g.in[2], out_plane = g.out[1] * g.out[2];
  // The tap offsets, in the weight's order: the tap's phase plane, then its shift within it.
  std::vector<int64_t> off(static_cast<size_t>(k));
  for (int64_t c = 0; c < cg; ++c)
    for (int64_t ky = 0; ky < g.kernel[1]; ++ky)
      for (int64_t kx = 0; kx < g.kernel[2]; ++kx)
        off[static_cast<size_t>((c * g.kernel[1] + ky) * g.kernel[2] + kx)] =
            c * l.channel() + l.tap(g, ky, kx);
  // The padded copies, split into phase planes (phase_planes.h).
  ScratchFloats padded, staged;
  if (!l.in_place) {
    padded.reserve(static_cast<size_t>(g.n * g.c * l.channel()));
    parallel_for(g.n * g.c, 16, [&](int64_t b, int64_t e) {
      for (int64_t nc = b; nc < e; ++nc)
        copy_phases(g, l, x + nc * in_plane, padded.data + nc * l.channel());
    });
  }
  const float* xs = l.in_place ? x : padded.data;
  // Outputs over the padded pitch go to a staging buffer first, then lose their row ends.
  const int64_t ldy = l.direct_out ? out_plane : unaliased(l.positions);
  if (!l.direct_out) staged.reserve(static_cast<size_t>(g.n * g.c_out * ldy));
  float* ys = l.direct_out ? y : staged.data;
  // Work items: (image, group, a range of tiles, a range of output channels) of at least
  // kItemMacs, up to 8 per thread: a worker that wakes late (20-60 us on a 2-core VM, more on a
  // busy machine) then still finds work. Channel ranges first (a thread reads the padded image
  // from its own cache, and the weight rows it reads are its own), then ranges of tiles.
  const int64_t tile_count = (l.positions + kTile - 1) / kTile;
  const double macs = static_cast<double>(g.n * g.c_out) * static_cast<double>(l.positions * k);
  const auto want = static_cast<int64_t>(
      std::clamp(macs / kItemMacs, 1.0, 8.0 * static_cast<double>(cpu_threads())));
  // Up to 4 ranges of whole register tiles.
  const int64_t chunk = want == 1 ? og : ((og + 3) / 4 + kRows - 1) / kRows * kRows;
  const int64_t chunks = (og + chunk - 1) / chunk;
  const int64_t outer = g.n * groups * chunks;
  const int64_t tile_splits = std::clamp<int64_t>((want + outer - 1) / outer, 1, tile_count);
  const int64_t tiles_per_item = (tile_count + tile_splits - 1) / tile_splits;
  const int64_t tile_items = (tile_count + tiles_per_item - 1) / tiles_per_item;
  const int64_t spatial_items = g.n * groups * tile_items;
  parallel_for(spatial_items * chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t item = b; item < e; ++item) {
      const int64_t ch = item % chunks, rest = item / chunks;
      const int64_t ti = rest % tile_items, ng = rest / tile_items;
      const int64_t n = ng / groups, grp = ng % groups;
      const float* xg = xs + (n * g.c + grp * cg) * l.channel();
      float* yg = ys + (n * g.c_out + grp * og) * ldy;
      const int64_t t0 = ti * tiles_per_item, t1 = std::min(tile_count, t0 + tiles_per_item);
      const int64_t c0 = ch * chunk, c1 = std::min(og, c0 + chunk);
      tiles(l, k, off.data(), xg, w + grp * og * k, bias ? bias + grp * og : nullptr, yg, ldy, t0,
            t1, c0, c1, relu);
      if (post && l.direct_out) {  // the item's runs, still in cache (staged ones: below)
        const int64_t p0 = t0 * kTile, p1 = std::min(l.positions, t1 * kTile);
        if (p0 == 0 && p1 == ldy)  // whole planes: one run
          post(yg + c0 * ldy, (c1 - c0) * ldy);
        else
          for (int64_t co = c0; co < c1 && p1 > p0; ++co) post(yg + co * ldy + p0, p1 - p0);
      }
    }
  });
  if (!l.direct_out) {
    parallel_for(g.n * g.c_out, 16, [&](int64_t b, int64_t e) {
      for (int64_t nc = b; nc < e; ++nc)
        for (int64_t oy = 0; oy < g.out[1]; ++oy) {
          const float* src = staged.data + nc * ldy + oy * l.pitch;
          std::copy(src, src + g.out[2], y + nc * out_plane + oy * g.out[2]);
        }
      if (post) post(y + b * out_plane, (e - b) * out_plane);
    });
  }
#else
  (void)g, (void)groups, (void)x, (void)w, (void)bias, (void)y, (void)relu, (void)post;
#endif
}

}  // namespace kiln::eager
