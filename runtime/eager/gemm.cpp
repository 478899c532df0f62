// The interpreter's float GEMM: OpenBLAS's cblas_sgemm on row-major operands, with the cases BLAS
// leaves to the caller (an empty product, a sum over k = 0, sizes beyond 32-bit integers) handled
// here, and products with a few rows or columns as dot products (gemm_narrow.h). OpenBLAS runs
// single-threaded; a large product is split into up to 4 blocks of rows or columns over the
// interpreter's own workers (parallel.h), whose caller runs the blocks no worker has claimed.
// OpenBLAS's own threads wait for each other: on a machine whose cores are busy with other work, a
// small conv took 35x longer with them (docs/runtime.md "Threads").
#include "eager/gemm.h"

#include <cblas.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>

#include "eager/gemm_narrow.h"
#include "eager/interpreter_ops.h"
#include "eager/parallel.h"
#include "kiln/logging.h"

// DYNAMIC_ARCH OpenBLAS's kernel choice (choose_openblas_kernels below); absent elsewhere.
extern "C" {
void gotoblas_dynamic_init(void) __attribute__((weak));
void gotoblas_dynamic_quit(void) __attribute__((weak));
}

namespace kiln::eager {
namespace {

bool fits_blas_int(int64_t v) {
  return v >= 0 && v <= static_cast<int64_t>(std::numeric_limits<blasint>::max());
}

float element(const GemmOperand& x, int64_t i, int64_t j) {
  return x.trans ? x.data[j * x.ld + i] : x.data[i * x.ld + j];
}

/// A product with one row (m = 1) or one column (n = 1) as OpenBLAS's matrix-vector product,
/// which streams the matrix once (sgemm packs it first: 5-6x slower for a classifier's
/// [1, 1024] x [1024, 1000]). Sizes fit blasint. With beta 0, c is cleared first, so that no
/// NaN it held survives whatever sgemv does with y * 0.
void gemv(int64_t m, int64_t n, int64_t k, const GemmOperand& a, const GemmOperand& b, float beta,
          float* c, int64_t ldc) {
  const auto bi = [](int64_t v) { return static_cast<blasint>(v); };
  if (m == 1) {  // c[j] = sum_p A(0, p) B(p, j): B (or its stored transpose) times a's row
    if (beta == 0.0f) std::fill(c, c + n, 0.0f);
    const blasint incx = bi(a.trans ? a.ld : 1);
    if (b.trans)  // stored [n][k]
      cblas_sgemv(CblasRowMajor, CblasNoTrans, bi(n), bi(k), 1.0f, b.data, bi(b.ld), a.data, incx,
                  beta, c, 1);
    else  // stored [k][n]
      cblas_sgemv(CblasRowMajor, CblasTrans, bi(k), bi(n), 1.0f, b.data, bi(b.ld), a.data, incx,
                  beta, c, 1);
    return;
  }
  // n == 1: c[i * ldc] = sum_p A(i, p) B(p, 0)
  if (beta == 0.0f)
    for (int64_t i = 0; i < m; ++i) c[i * ldc] = 0.0f;
  const blasint incx = bi(b.trans ? 1 : b.ld);
  if (!a.trans)  // stored [m][k]
    cblas_sgemv(CblasRowMajor, CblasNoTrans, bi(m), bi(k), 1.0f, a.data, bi(a.ld), b.data, incx,
                beta, c, bi(ldc));
  else  // stored [k][m]
    cblas_sgemv(CblasRowMajor, CblasTrans, bi(k), bi(m), 1.0f, a.data, bi(a.ld), b.data, incx, beta,
                c, bi(ldc));
}

/// OpenBLAS's cores whose float kernels use neither AVX2 nor FMA.
bool pre_avx2_core(std::string_view core) {
  for (std::string_view old :
       {"Katmai", "Coppermine", "Northwood", "Prescott", "Banias", "Atom", "Core2", "Penryn",
        "Dunnington", "Nehalem", "Sandybridge", "Opteron", "Opteron(SSE3)", "Barcelona", "Bobcat",
        "Nano", "Bulldozer", "Piledriver"})
    if (core == old) return true;
  return false;
}

/// A DYNAMIC_ARCH OpenBLAS (Debian's) picks its kernels by CPU model at load. A model newer than
/// the library falls back to its oldest x86-64 kernels (0.3.21 runs Prescott's SSE3 kernels on
/// Intel's model 207, which has AVX-512): there products take 2x as long. Unless the process set
/// OPENBLAS_CORETYPE, pick the kernels by the CPU's features instead, before Kiln's first
/// product. The two entry points exist only in DYNAMIC_ARCH builds (weak: null otherwise).
void choose_openblas_kernels() {
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr || gotoblas_dynamic_init == nullptr ||
      gotoblas_dynamic_quit == nullptr)
    return;
  const char* core = openblas_get_corename();
  if (core == nullptr || !pre_avx2_core(core)) return;
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return;
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512cd");
  const char* want = avx512 ? "SkylakeX" : "Haswell";
  const std::string was = core;
  setenv("OPENBLAS_CORETYPE", want, 0);  // read by gotoblas_dynamic_init, then removed again
  gotoblas_dynamic_quit();
  gotoblas_dynamic_init();
  unsetenv("OPENBLAS_CORETYPE");
  log(LogTopic::kPerf, "OpenBLAS chose its " + was + " kernels on a CPU with AVX2/FMA" +
                           (avx512 ? " and AVX-512" : "") + "; now " + openblas_get_corename() +
                           " (OPENBLAS_CORETYPE=" + want + ")");
}

/// Sets OpenBLAS up once, at the first product: its kernels (above) and, unless
/// KILN_OPENBLAS_THREADS=keep, one thread, Kiln splitting large products itself. Returns
/// whether Kiln splits.
bool configure_openblas() {
  static const bool split = [] {
    const char* v = std::getenv("KILN_OPENBLAS_THREADS");
    if (v != nullptr && std::string_view(v) == "keep") return false;
    choose_openblas_kernels();
    openblas_set_num_threads(1);
    return true;
  }();
  return split;
}

void sgemm_serial(int64_t m, int64_t n, int64_t k, GemmOperand a, GemmOperand b, float beta,
                  float* c, int64_t ldc);

}  // namespace

void sgemm(int64_t m, int64_t n, int64_t k, GemmOperand a, GemmOperand b, float beta, float* c,
           int64_t ldc) {
  // At most 4 blocks of rows or columns, each one OpenBLAS call of at least 32 rows or columns
  // and 2^21 multiply-adds. Their bounds follow from the sizes alone, so that a result does not
  // depend on the number of threads (OpenBLAS's kernel for a block, packed, direct or sgemv,
  // depends on its size). Few wide blocks: OpenBLAS ran blocks of 64 rows or columns up to 1.5x
  // slower than one call over the whole product (docs/perf.md); a product uses up to 4 cores.
  constexpr int64_t kMinBlock = 32, kMaxBlocks = 4;
  constexpr double kBlockWork = double{1 << 21};
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const bool split = configure_openblas();
  if (split && narrow_product_applies(m, n, k, a, b)) {  // a few rows or columns: no packing
    narrow_product(m, n, k, a, b, beta, c, ldc);
    return;
  }
  const bool by_rows = m > n;
  const int64_t along = by_rows ? m : n;
  const int64_t blocks = std::min<int64_t>(
      {kMaxBlocks, along / kMinBlock, static_cast<int64_t>(std::min(work / kBlockWork, 1e6))});
  if (!split || blocks < 2) {
    sgemm_serial(m, n, k, a, b, beta, c, ldc);
    return;
  }
  const auto bound = [&](int64_t blk) { return along * blk / blocks; };
  parallel_for(blocks, 1, [&](int64_t first, int64_t last) {
    for (int64_t blk = first; blk < last; ++blk) {
      const int64_t lo = bound(blk), hi = bound(blk + 1);
      if (by_rows) {  // rows lo..hi of A and C
        GemmOperand ab = a;
        ab.data += a.trans ? lo : lo * a.ld;
        sgemm_serial(hi - lo, n, k, ab, b, beta, c + lo * ldc, ldc);
      } else {  // columns lo..hi of B and C
        GemmOperand bb = b;
        bb.data += b.trans ? lo * b.ld : lo;
        sgemm_serial(m, hi - lo, k, a, bb, beta, c + lo, ldc);
      }
    }
  });
}

namespace {

void sgemm_serial(int64_t m, int64_t n, int64_t k, GemmOperand a, GemmOperand b, float beta,
                  float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {  // BLAS implementations differ on k = 0; the product is the empty sum
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return;
  }
  // cblas (row-major) wants lda >= the operand's stored row length even where only one row is
  // read; a single row or column may have any stride, so give it the minimum.
  a.ld = std::max<int64_t>(a.ld, a.trans ? m : k);
  b.ld = std::max<int64_t>(b.ld, b.trans ? k : n);
  ldc = std::max<int64_t>(ldc, n);
  if (fits_blas_int(m) && fits_blas_int(n) && fits_blas_int(k) && fits_blas_int(a.ld) &&
      fits_blas_int(b.ld) && fits_blas_int(ldc)) {
    if (m == 1 || n == 1) {
      gemv(m, n, k, a, b, beta, c, ldc);
      return;
    }
    cblas_sgemm(CblasRowMajor, a.trans ? CblasTrans : CblasNoTrans,
                b.trans ? CblasTrans : CblasNoTrans, static_cast<blasint>(m),
                static_cast<blasint>(n), static_cast<blasint>(k), 1.0f, a.data,
                static_cast<blasint>(a.ld), b.data, static_cast<blasint>(b.ld), beta, c,
                static_cast<blasint>(ldc));
    return;
  }
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
      for (int64_t p = 0; p < k; ++p) acc += element(a, i, p) * element(b, p, j);
      c[i * ldc + j] = acc;
    }
  }
}

}  // namespace

const float* as_floats(const HostTensor& t, std::vector<float>& scratch) {
  if (t.meta.dtype == DType::kF32) return t.ptr<float>();
  Reader<float> rd = reader<float>(t);
  scratch.resize(static_cast<size_t>(t.meta.numel()));
  for (size_t i = 0; i < scratch.size(); ++i) scratch[i] = rd(static_cast<int64_t>(i));
  return scratch.data();
}

float* float_result(HostTensor& out, std::vector<float>& scratch) {
  if (out.meta.dtype == DType::kF32) return out.ptr<float>();
  scratch.assign(static_cast<size_t>(out.meta.numel()), 0.0f);
  return scratch.data();
}

void store_floats(HostTensor& out, const std::vector<float>& scratch) {
  if (out.meta.dtype == DType::kF32) return;
  Writer<float> wr = writer<float>(out);
  for (size_t i = 0; i < scratch.size(); ++i) wr(static_cast<int64_t>(i), scratch[i]);
}

}  // namespace kiln::eager
