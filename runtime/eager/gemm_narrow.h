/// \file gemm_narrow.h
/// Private to runtime/eager: float products with a few rows or a few columns, as dot products
/// that stream the large operand once in its stored layout. sgemm packs that operand (a conv's
/// weight by the im2col matrix of a 2x2 or 3x3 map, a linear layer's weight by a batch of 2 or 8
/// rows) on every call; here each of its rows is read from memory once, by one thread, in tiles
/// of 4 rows dotted with up to 6 rows of the small side in registers (a tile is read again from
/// cache for each further 6 rows of the small side: 3 times at 16).
#pragma once

#include <cstdint>

#include "eager/gemm.h"

namespace kiln::eager {

/// The most rows or columns the small side of a narrow product may have.
inline constexpr int64_t kNarrowMax = 16;

/// Whether narrow_product computes this product (the terms of sgemm in gemm.h): on a CPU with
/// AVX-512, k >= 16, the large side at least 16, and either n <= kNarrowMax with A's rows
/// stored contiguously (!a.trans), or m <= kNarrowMax with B stored as its transpose (b.trans,
/// a linear layer's [n, k] weight). KILN_GEMM_NARROW=0 turns it off.
bool narrow_product_applies(int64_t m, int64_t n, int64_t k, const GemmOperand& a,
                            const GemmOperand& b);

/// c[i * ldc + j] = beta * c[i * ldc + j] + sum over p < k of A(i, p) * B(p, j), where
/// narrow_product_applies. Each element is one float sum: 16 lanes, lane l summing the terms p
/// = l mod 16 in order, then the lanes added in a fixed tree (l + (l + 8), then
/// + 4, + 2, + 1). The sequence does not depend on how many rows the large side has (beyond
/// which side takes this path) or on the threads, which split the large side.
void narrow_product(int64_t m, int64_t n, int64_t k, const GemmOperand& a, const GemmOperand& b,
                    float beta, float* c, int64_t ldc);

}  // namespace kiln::eager
