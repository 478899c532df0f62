/// \file gemm.h
/// Private to runtime/eager: the interpreter's float matrix product (OpenBLAS's cblas_sgemm) and
/// the staging of operands as f32, used by the MatMul and Conv kernels.
#pragma once

#include <cstdint>
#include <vector>

#include "eager/host_tensor.h"

namespace kiln::eager {

/// One row-major float matrix operand of sgemm: element (i, j) of the operand is data[i * ld + j],
/// or with `trans` data[j * ld + i] (the stored matrix is the transpose).
struct GemmOperand {
  const float* data = nullptr;
  int64_t ld = 0;
  bool trans = false;
};

/// c[i * ldc + j] = beta * c[i * ldc + j] + sum over p < k of A(i, p) * B(p, j), for i < m and
/// j < n, summed in float in OpenBLAS's order (a product with one row or one column as its sgemv),
/// or for 2 to 16 rows or columns on an AVX-512 CPU in narrow_product's (gemm_narrow.h; not
/// with KILN_OPENBLAS_THREADS=keep).
/// `beta` is 0 (c is overwritten: a NaN in it does not survive) or 1. Any of m, n and k may be 0 (k
/// = 0 leaves beta * c). Leading dimensions must hold a row (or with `trans` a column) of the
/// operand; a size beyond OpenBLAS's 32-bit integers uses a plain float loop in the same terms.
void sgemm(int64_t m, int64_t n, int64_t k, GemmOperand a, GemmOperand b, float beta, float* c,
           int64_t ldc);

/// The elements of `t` as float: t's own storage when it is f32 (no copy), otherwise each element
/// decoded into `scratch` (f16 exactly, integers rounded to nearest, bool as 0 / 1).
const float* as_floats(const HostTensor& t, std::vector<float>& scratch);

/// Where a float result for `out` is computed: out's own storage when it is f32, otherwise
/// `scratch` resized to out's element count (store it with store_floats).
float* float_result(HostTensor& out, std::vector<float>& scratch);
/// Encodes `scratch` into `out` when float_result gave scratch; nothing for an f32 `out`.
void store_floats(HostTensor& out, const std::vector<float>& scratch);

}  // namespace kiln::eager
