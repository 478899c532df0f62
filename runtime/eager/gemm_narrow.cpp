#include "eager/gemm_narrow.h"

#include <algorithm>
#include <vector>

#include "eager/cpu_features.h"
#include "eager/parallel.h"
#include "eager/vector_loops.h"

namespace kiln::eager {
namespace {

/// The product as rows of a wide operand P (one per output along the large side) dotted with
/// the rows of a narrow one Q, both k floats long: out[u * su + v * sv] for P's row u and Q's
/// row v.
struct DotProblem {
  const float* p = nullptr;
  int64_t ldp = 0, rows = 0;  // P: rows x k, row u at p + u * ldp
  const float* q = nullptr;
  int64_t ldq = 0, cols = 0;  // Q: cols x k
  int64_t k = 0;
  float* out = nullptr;
  int64_t su = 0, sv = 0;
  bool accumulate = false;  // beta 1: add to out
};

constexpr int64_t kRowsPerTile = 4;  // P rows per register tile
constexpr int64_t kMaxCols = 6;      // Q rows per register tile: 4 x 6 accumulators
constexpr int64_t kBlockRows = 16;   // P rows per parallel range item

#if KILN_AVX512_KERNELS
/// The sum of v's lanes: lane l + lane l + 8, then of those l + (l + 4), l + (l + 2), l + (l + 1).
/// (The masked forms with every lane set: GCC 12's unmasked shuffles and _mm512_reduce_add_ps
/// trip -Wuninitialized.)
__attribute__((target("avx512f"))) inline float lane_sum(__m512 v) {
  constexpr __mmask16 kAll = 0xFFFF;
  v = _mm512_add_ps(v, _mm512_mask_shuffle_f32x4(v, kAll, v, v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm512_add_ps(v, _mm512_mask_shuffle_f32x4(v, kAll, v, v, _MM_SHUFFLE(2, 3, 0, 1)));
  v = _mm512_add_ps(v, _mm512_mask_permute_ps(v, kAll, v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm512_add_ps(v, _mm512_mask_permute_ps(v, kAll, v, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm512_cvtss_f32(v);
}

/// R rows of P by C rows of Q: R * C vector accumulators over k, each reduced at the end.
template <int R, int C>
__attribute__((target("avx512f"))) void dot_tile(const DotProblem& d, int64_t u, int64_t v) {
  __m512 acc[R][C];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int s = 0; s < C; ++s) acc[r][s] = _mm512_setzero_ps();
  const float* pr = d.p + u * d.ldp;
  const float* qr = d.q + v * d.ldq;
  int64_t x = 0;
  for (; x + 16 <= d.k; x += 16) {
    __m512 qv[C];
#pragma GCC unroll 8
    for (int s = 0; s < C; ++s) qv[s] = _mm512_loadu_ps(qr + s * d.ldq + x);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 pv = _mm512_loadu_ps(pr + r * d.ldp + x);
#pragma GCC unroll 8
      for (int s = 0; s < C; ++s) acc[r][s] = _mm512_fmadd_ps(pv, qv[s], acc[r][s]);
    }
  }
  if (x < d.k) {  // the last k mod 16 terms, in lanes 0 .. k mod 16 - 1 (the rest unchanged)
    const auto mask = static_cast<__mmask16>((1u << (d.k - x)) - 1u);
    __m512 qv[C];
#pragma GCC unroll 8
    for (int s = 0; s < C; ++s) qv[s] = _mm512_maskz_loadu_ps(mask, qr + s * d.ldq + x);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 pv = _mm512_maskz_loadu_ps(mask, pr + r * d.ldp + x);
#pragma GCC unroll 8
      for (int s = 0; s < C; ++s) acc[r][s] = _mm512_mask3_fmadd_ps(pv, qv[s], acc[r][s], mask);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int s = 0; s < C; ++s) {
      float* o = d.out + (u + r) * d.su + (v + s) * d.sv;
      const float sum = lane_sum(acc[r][s]);
      *o = d.accumulate ? *o + sum : sum;
    }
}

using DotTile = void (*)(const DotProblem&, int64_t, int64_t);
template <int R>
constexpr DotTile kTilesOfRows[kMaxCols + 1] = {nullptr,        dot_tile<R, 1>, dot_tile<R, 2>,
                                                dot_tile<R, 3>, dot_tile<R, 4>, dot_tile<R, 5>,
                                                dot_tile<R, 6>};

/// P rows [u0, u1) against every row of Q, in tiles of 4 rows (then single rows) by as even a
/// split of Q's rows into at most 6 as there is.
void dot_rows(const DotProblem& d, int64_t u0, int64_t u1) {
  const int64_t tiles = (d.cols + kMaxCols - 1) / kMaxCols;
  for (int64_t u = u0; u < u1;) {
    const bool four = u + kRowsPerTile <= u1;
    for (int64_t t = 0, v = 0; t < tiles; ++t) {
      const int64_t w = (d.cols - v + (tiles - t) - 1) / (tiles - t);
      (four ? kTilesOfRows<4> : kTilesOfRows<1>)[w](d, u, v);
      v += w;
    }
    u += four ? kRowsPerTile : 1;
  }
}
#endif

enum class NarrowSide { kNone, kColumns, kRows };

/// Which side of the product is narrow, where narrow_product computes it.
NarrowSide narrow_side(int64_t m, int64_t n, int64_t k, const GemmOperand& a,
                       const GemmOperand& b) {
  static const bool enabled = avx512_kernels_enabled("KILN_GEMM_NARROW");
  if (k < 16 || !enabled) return NarrowSide::kNone;
  if (n >= 2 && n <= kNarrowMax && m >= 16 && !a.trans) return NarrowSide::kColumns;
  if (m >= 2 && m <= kNarrowMax && n >= 16 && b.trans) return NarrowSide::kRows;
  return NarrowSide::kNone;
}

}  // namespace

bool narrow_product_applies(int64_t m, int64_t n, int64_t k, const GemmOperand& a,
                            const GemmOperand& b) {
  return narrow_side(m, n, k, a, b) != NarrowSide::kNone;
}

void narrow_product(int64_t m, int64_t n, int64_t k, const GemmOperand& a, const GemmOperand& b,
                    float beta, float* c, int64_t ldc) {
#if KILN_AVX512_KERNELS
  DotProblem d;
  d.k = k;
  d.out = c;
  d.accumulate = beta != 0.0f;
  // The narrow side's rows, k floats each: the operand itself where its rows are stored that
  // way, else a transposed copy (at most kNarrowMax x k floats).
  std::vector<float> staged;
  const auto narrow_rows = [&](const GemmOperand& x, bool rows_stored, int64_t count) {
    d.cols = count;
    if (rows_stored) {
      d.q = x.data;
      d.ldq = x.ld;
      return;
    }
    staged.resize(static_cast<size_t>(count * k));  // x's [k, count] block transposed
    for (int64_t p = 0; p < k; p += 16)
      transpose_tile(x.data, k, x.ld, staged.data(), p, std::min(k, p + 16), 0, count);
    d.q = staged.data();
    d.ldq = k;
  };
  if (narrow_side(m, n, k, a, b) == NarrowSide::kColumns) {  // C's rows are A's
    d.p = a.data;
    d.ldp = a.ld;
    d.rows = m;
    d.su = ldc;
    d.sv = 1;
    narrow_rows(b, b.trans, n);
  } else {  // C's columns are B's rows: u = j, v = i
    d.p = b.data;
    d.ldp = b.ld;
    d.rows = n;
    d.su = 1;
    d.sv = ldc;
    narrow_rows(a, !a.trans, m);
  }
  // Ranges of whole 16-row blocks, each at least 2^18 multiply-adds: a product below 2^19 runs
  // on the calling thread (waking a worker costs more than it saves).
  const int64_t blocks = (d.rows + kBlockRows - 1) / kBlockRows;
  const int64_t block_macs = kBlockRows * d.cols * k;
  const int64_t grain = ((int64_t{1} << 18) + block_macs - 1) / block_macs;
  parallel_for(blocks, grain, [&](int64_t first, int64_t last) {
    dot_rows(d, first * kBlockRows, std::min(d.rows, last * kBlockRows));
  });
#else
  (void)m, (void)n, (void)k, (void)a, (void)b, (void)beta, (void)c, (void)ldc;
#endif
}

}  // namespace kiln::eager
