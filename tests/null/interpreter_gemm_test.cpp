// The interpreter's MatMul and Conv (OpenBLAS sgemm underneath) against a plain double-precision
// reference computed here, on random inputs: odd sizes, sizes 0 and 1, 1-D operands, batched and
// broadcast batches, transposed operands, f16 and mixed dtypes; conv in 1-D/2-D/3-D with groups,
// strides, dilations, asymmetric padding, bias, 1x1 windows and an image large enough to be
// split into several im2col chunks. Integer matmul stays exact (int64 wraparound).
//
// Each float result must lie within the error bound of a float dot product summed in any order:
// |got - exact| <= k * 2^-23 * sum |a * b| (twice the standard gamma_k bound, k the number of
// products), plus half an ulp of the output dtype for the final rounding.
#include <cblas.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "eager/interpreter.h"

namespace kiln {
namespace {

HostTensor random_tensor(DType dt, Shape shape, std::mt19937& rng) {
  HostTensor t(TensorMeta{dt, std::move(shape)});
  std::uniform_real_distribution<double> real(-2.0, 2.0);
  std::uniform_int_distribution<int64_t> integer(-50, 50);
  for (int64_t i = 0; i < t.meta.numel(); ++i)
    t.set(i, is_floating(dt) ? real(rng) : static_cast<double>(integer(rng)));
  return t;
}

/// The exact value, the sum of |products| and the product count of one output element.
struct Ref {
  double value = 0, abs_sum = 0;
  int64_t terms = 0;
};

double unit_roundoff(DType dt) {
  return dt == DType::kF16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -24);
}

void expect_within(const HostTensor& got, const std::vector<Ref>& want, const std::string& what) {
  ASSERT_EQ(got.meta.numel(), static_cast<int64_t>(want.size())) << what;
  int bad = 0;
  for (size_t i = 0; i < want.size() && bad < 5; ++i) {
    const Ref& r = want[i];
    const double u = unit_roundoff(got.meta.dtype);
    const double sum_error = static_cast<double>(r.terms) * std::ldexp(1.0, -23) * r.abs_sum;
    const double bound = sum_error * (1 + u) + u * std::abs(r.value);
    const double g = got.get(static_cast<int64_t>(i));
    if (!(std::abs(g - r.value) <= bound)) {
      ++bad;
      ADD_FAILURE() << what << ": element " << i << " is " << g << ", want " << r.value
                    << " within " << bound;
    }
  }
}

// ---- matmul ----------------------------------------------------------------------------------

struct MatCase {
  Shape a, b;
  bool trans_a = false, trans_b = false;
};

std::string str(const MatCase& c) {
  return "matmul " + shape_str(c.a) + (c.trans_a ? "^T" : "") + " @ " + shape_str(c.b) +
         (c.trans_b ? "^T" : "");
}

/// numpy.matmul in double: the logical operands after the transposes, batch broadcast.
std::vector<Ref> matmul_ref(const HostTensor& a, const HostTensor& b, const MatCase& c,
                            const Shape& out) {
  auto logical = [](const Shape& s, bool trans, bool is_a) {
    // rows, cols and element (batch offset, i, j) -> flat index
    struct View {
      Shape batch;
      int64_t rows, cols, rs, cs;
    } v;
    if (s.size() == 1) {
      v = {{}, is_a ? 1 : s[0], is_a ? s[0] : 1, is_a ? 0 : 1, is_a ? 1 : 0};
      return v;
    }
    const int64_t r = s[s.size() - 2], cl = s.back();
    v.batch.assign(s.begin(), s.end() - 2);
    v.rows = trans ? cl : r;
    v.cols = trans ? r : cl;
    v.rs = trans ? 1 : cl;
    v.cs = trans ? cl : 1;
    return v;
  };
  const auto va = logical(a.meta.shape, c.trans_a, true);
  const auto vb = logical(b.meta.shape, c.trans_b, false);
  const int64_t m = va.rows, k = va.cols, n = vb.cols;
  const size_t batch_rank =
      out.size() - (a.meta.rank() == 1 ? 0 : 1) - (b.meta.rank() == 1 ? 0 : 1);
  const Shape batch(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(batch_rank));
  // Flat matrix offset of batch index `idx` in an operand with batch dims `bd` (right-aligned,
  // size-1 dims broadcast).
  auto offset = [&](const std::vector<int64_t>& idx, const Shape& bd, int64_t matrix) {
    int64_t off = 0;
    const size_t lead = batch.size() - bd.size();
    for (size_t d = 0; d < bd.size(); ++d) off = off * bd[d] + (bd[d] == 1 ? 0 : idx[lead + d]);
    return off * matrix;
  };
  std::vector<Ref> refs;
  std::vector<int64_t> idx(batch.size(), 0);
  for (int64_t bi = 0; bi < numel(batch); ++bi) {
    for (int64_t rem = bi, d = static_cast<int64_t>(batch.size()) - 1; d >= 0; --d) {
      idx[static_cast<size_t>(d)] = rem % batch[static_cast<size_t>(d)];
      rem /= batch[static_cast<size_t>(d)];
    }
    const int64_t oa = offset(idx, va.batch, m * k), ob = offset(idx, vb.batch, k * n);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        Ref r;
        r.terms = k;
        for (int64_t p = 0; p < k; ++p) {
          const double x = a.get(oa + i * va.rs + p * va.cs), y = b.get(ob + p * vb.rs + j * vb.cs);
          r.value += x * y;
          r.abs_sum += std::abs(x * y);
        }
        refs.push_back(r);
      }
    }
  }
  return refs;
}

HostTensor run_matmul(const HostTensor& a, const HostTensor& b, const MatCase& c) {
  Attrs attrs;
  attrs.trans_a = c.trans_a;
  attrs.trans_b = c.trans_b;
  auto r = interpret_op(OpKind::MatMul, std::vector<const HostTensor*>{&a, &b}, attrs);
  EXPECT_TRUE(r.ok()) << str(c) << ": " << r.status().to_string();
  return r.ok() ? std::move(r).value() : HostTensor();
}

const std::vector<MatCase>& mat_cases() {
  static const std::vector<MatCase> cases = {
      {{0, 5}, {5, 3}},                    // m = 0
      {{4, 5}, {5, 0}},                    // n = 0
      {{4, 0}, {0, 3}},                    // k = 0: zeros
      {{1, 1}, {1, 1}},                    //
      {{7, 13}, {13, 5}},                  // odd sizes
      {{1, 9}, {9, 1}},                    //
      {{9}, {9}},                          // 1-D . 1-D
      {{9}, {9, 4}},                       // 1-D @ 2-D
      {{4, 9}, {9}},                       // 2-D @ 1-D
      {{0}, {0}},                          // empty dot
      {{3, 5, 7}, {3, 7, 2}},              // batched
      {{2, 1, 5, 7}, {3, 7, 4}},           // broadcast batch dims
      {{5, 7}, {2, 7, 3}},                 // a shared by the batch
      {{2, 3, 5, 7}, {7, 4}},              // b shared: one sgemm over the batch
      {{2, 3, 5, 7}, {1, 1, 7, 4}},        // b shared through size-1 batch dims
      {{2, 0, 5, 7}, {7, 4}},              // empty batch
      {{7, 5}, {7, 3}, true, false},       // a^T
      {{5, 7}, {3, 7}, false, true},       // b^T
      {{7, 5}, {3, 7}, true, true},        // both
      {{2, 7, 5}, {2, 3, 7}, true, true},  // batched, both transposed
      {{3, 7, 5}, {7, 4}, true, false},    // a^T batched, b shared
      {{5, 1}, {5, 3}, true, false},       // a^T of a column: one row
      {{4, 5}, {1, 5}, false, true},       // b^T of a row: one column
      {{1, 5}, {5, 1}, true, true},        // k = 1 both transposed
      {{4, 3, 1}, {1, 6}},                 // k = 1
      {{65, 129}, {129, 33}},              // larger, odd
      {{2, 4, 31, 16}, {2, 4, 16, 31}},    // attention-like scores
      // Large enough to be split into blocks over the workers (gemm.cpp, above 2 * 2^21
      // multiply-adds): by rows, by columns, with transposed operands, one-row and one-column
      // products (sgemv per block).
      {{300, 200}, {200, 100}},              // rows
      {{200, 301}, {80, 200}, true, true},   // rows of a^T, b^T
      {{40, 200}, {200, 701}},               // columns
      {{40, 200}, {701, 200}, false, true},  // columns of b^T
      {{1, 3000}, {3000, 1500}},             // one row, columns split
      {{3001, 1500}, {1500, 1}},             // one column, rows split
      // A few rows by a stored-transposed B, and a few columns of plain operands (a conv on a
      // 2x2 map): dot products on AVX-512 CPUs (gemm_narrow.h), sgemm elsewhere and in
      // null_interpreter_gemm_blas_test.
      {{8, 784}, {300, 784}, false, true},
      {{3, 2048}, {700, 2048}, false, true},
      {{16, 40}, {1000, 40}, false, true},
      {{2, 3, 64}, {300, 64}, false, true},  // batched rows, b^T shared
      {{1000, 600}, {600, 4}},
      {{500, 2000}, {2000, 8}},
      {{97, 5000}, {5000, 2}},
      {{33, 17}, {17, 16}},  // 16 columns, k = 17
  };
  return cases;
}

TEST(InterpreterGemmTest, FloatMatmulMatchesDoubleReference) {
  std::mt19937 rng(12345);
  for (const MatCase& c : mat_cases()) {
    for (DType dt : {DType::kF32, DType::kF16}) {
      const HostTensor a = random_tensor(dt, c.a, rng), b = random_tensor(dt, c.b, rng);
      const HostTensor out = run_matmul(a, b, c);
      ASSERT_FALSE(HasFailure());
      EXPECT_EQ(out.meta.dtype, dt) << str(c);
      expect_within(out, matmul_ref(a, b, c, out.meta.shape), str(c) + " " + dtype_name(dt));
    }
  }
}

TEST(InterpreterGemmTest, SplitProductsGiveTheBitsOfOneOpenBlasCall) {
  // The interpreter splits a large product into up to 4 blocks fixed by its sizes (gemm.cpp);
  // for packed products as these, each block gives exactly what one OpenBLAS call over the
  // whole product gives: splitting costs no accuracy and changes no bits. That holds for
  // OpenBLAS's AVX-512 kernels; its Haswell kernels (OPENBLAS_CORETYPE=Haswell) give a column
  // block of [128, 768] x [768, 2304] other bits than one call (measured with OpenBLAS alone).
  std::string core = openblas_get_corename();
  for (char& ch : core) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (core != "skylakex" && core != "cooperlake" && core != "sapphirerapids")
    GTEST_SKIP() << "OpenBLAS runs its " << core << " kernels, whose blocks may differ";
  const std::vector<MatCase> cases = {
      {{128, 768}, {768, 2304}},             // columns (a transformer's QKV projection)
      {{2304, 256}, {256, 96}},              // rows
      {{300, 3000}, {500, 3000}, false, true},  // b^T
      {{64, 576}, {576, 2048}},              // a conv's weight by its im2col matrix
  };
  std::mt19937 rng(99);
  for (const MatCase& c : cases) {
    const HostTensor a = random_tensor(DType::kF32, c.a, rng), b = random_tensor(DType::kF32, c.b, rng);
    const HostTensor out = run_matmul(a, b, c);
    ASSERT_FALSE(HasFailure());
    const int64_t m = c.a[0], k = c.a[1], n = c.trans_b ? c.b[0] : c.b[1];
    std::vector<float> want(static_cast<size_t>(m * n), -1.0f);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, c.trans_b ? CblasTrans : CblasNoTrans,
                static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), 1.0f,
                reinterpret_cast<const float*>(a.data.data()), static_cast<blasint>(k),
                reinterpret_cast<const float*>(b.data.data()), static_cast<blasint>(c.b[1]),
                0.0f, want.data(), static_cast<blasint>(n));
    ASSERT_EQ(out.meta.numel(), m * n);
    EXPECT_EQ(std::memcmp(out.data.data(), want.data(), want.size() * sizeof(float)), 0) << str(c);
  }
}

TEST(InterpreterGemmTest, MixedDtypesPromoteToF32) {
  std::mt19937 rng(7);
  const MatCase c{{3, 6, 5}, {5, 4}};
  for (auto [da, db] : {std::pair{DType::kF16, DType::kF32}, std::pair{DType::kI32, DType::kF32},
                        std::pair{DType::kF32, DType::kI64}}) {
    const HostTensor a = random_tensor(da, c.a, rng), b = random_tensor(db, c.b, rng);
    const HostTensor out = run_matmul(a, b, c);
    ASSERT_FALSE(HasFailure());
    EXPECT_EQ(out.meta.dtype, DType::kF32);
    expect_within(out, matmul_ref(a, b, c, out.meta.shape),
                  std::string(dtype_name(da)) + " @ " + dtype_name(db));
  }
}

TEST(InterpreterGemmTest, IntegerMatmulIsExact) {
  std::mt19937 rng(99);
  for (const MatCase& c : mat_cases()) {
    const HostTensor a = random_tensor(DType::kI32, c.a, rng);
    const HostTensor b = random_tensor(DType::kI64, c.b, rng);
    const HostTensor out = run_matmul(a, b, c);
    ASSERT_FALSE(HasFailure());
    ASSERT_EQ(out.meta.dtype, DType::kI64) << str(c);
    const std::vector<Ref> want = matmul_ref(a, b, c, out.meta.shape);
    ASSERT_EQ(out.meta.numel(), static_cast<int64_t>(want.size())) << str(c);
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_EQ(out.ptr<int64_t>()[i], static_cast<int64_t>(want[i].value)) << str(c) << " " << i;
  }
}

TEST(InterpreterGemmTest, NonFiniteValuesPropagate) {
  // [1, inf] @ [[0], [1]] = inf; [nan, 1] @ [[1], [1]] = nan; 0 * inf = nan.
  HostTensor a(TensorMeta{DType::kF32, {3, 2}}), b(TensorMeta{DType::kF32, {2, 1}});
  const double inf = INFINITY, nan = NAN;
  const std::vector<double> av = {1, inf, nan, 1, 0, 1}, bv = {inf, 1};
  for (size_t i = 0; i < av.size(); ++i) a.set(static_cast<int64_t>(i), av[i]);
  for (size_t i = 0; i < bv.size(); ++i) b.set(static_cast<int64_t>(i), bv[i]);
  const HostTensor out = run_matmul(a, b, {{3, 2}, {2, 1}});
  ASSERT_EQ(out.meta.numel(), 3);
  EXPECT_EQ(out.get(0), inf);
  EXPECT_TRUE(std::isnan(out.get(1)));
  EXPECT_TRUE(std::isnan(out.get(2)));  // 0 * inf + 1 * 1
}

TEST(InterpreterGemmTest, ConcurrentCallsFromSeveralThreads) {
  // Kiln may be called from many threads at once; OpenBLAS (threaded itself) must give each
  // caller its own correct product.
  constexpr int kThreads = 4, kCalls = 8;
  std::vector<MatCase> cases = {
      {{3, 40, 33}, {33, 47}},
      {{96, 70}, {70, 81}},
      {{2, 17, 9}, {2, 9, 5}},
      {{130, 70}, {70, 150}},               // split into blocks: workers under several callers
      {{8, 784}, {300, 784}, false, true},  // narrow products (AVX-512): a batch of 8 rows
      {{1000, 600}, {600, 4}}};             // and 4 columns, split over the workers
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<uint32_t>(100 + t));
      for (int call = 0; call < kCalls && failures[static_cast<size_t>(t)].empty(); ++call) {
        const MatCase& c = cases[static_cast<size_t>(call + t) % cases.size()];
        const HostTensor a = random_tensor(DType::kF32, c.a, rng);
        const HostTensor b = random_tensor(DType::kF32, c.b, rng);
        Attrs attrs;
        attrs.trans_a = c.trans_a;
        attrs.trans_b = c.trans_b;
        auto r = interpret_op(OpKind::MatMul, std::vector<const HostTensor*>{&a, &b}, attrs);
        if (!r.ok()) {
          failures[static_cast<size_t>(t)] = r.status().to_string();
          break;
        }
        const std::vector<Ref> want = matmul_ref(a, b, c, r->meta.shape);
        for (size_t i = 0; i < want.size(); ++i) {
          const double bound =
              static_cast<double>(want[i].terms) * std::ldexp(1.0, -22) * want[i].abs_sum;
          if (!(std::abs(r->get(static_cast<int64_t>(i)) - want[i].value) <= bound)) {
            failures[static_cast<size_t>(t)] = str(c) + ": element " + std::to_string(i);
            break;
          }
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_TRUE(failures[static_cast<size_t>(t)].empty())
        << "thread " << t << ": " << failures[static_cast<size_t>(t)];
}

// ---- conv ------------------------------------------------------------------------------------

struct ConvCase {
  Shape x, w;  // x [N, C, spatial..], w [C_out, C / groups, kernel..]
  std::vector<int64_t> strides, pads, dilations;
  int64_t groups = 1;
  bool bias = true;
};

std::string str(const ConvCase& c) {
  auto v = [](const std::vector<int64_t>& d) { return shape_str(d); };
  return "conv x" + shape_str(c.x) + " w" + shape_str(c.w) + " s" + v(c.strides) + " p" +
         v(c.pads) + " d" + v(c.dilations) + " g" + std::to_string(c.groups) +
         (c.bias ? " bias" : "");
}

/// ONNX Conv in double, straight from the definition.
std::vector<Ref> conv_ref(const HostTensor& x, const HostTensor& w, const HostTensor* bias,
                          const ConvCase& c, const Shape& out) {
  const size_t k = c.x.size() - 2;
  const int64_t cg = c.x[1] / c.groups, og = c.w[0] / c.groups;
  std::vector<Ref> refs;
  std::vector<int64_t> o(k, 0), t(k, 0);
  const int64_t out_plane = numel(std::span<const Dim>(out).subspan(2));
  const int64_t taps = numel(std::span<const Dim>(c.w).subspan(2));
  for (int64_t n = 0; n < out[0]; ++n) {
    for (int64_t co = 0; co < out[1]; ++co) {
      for (int64_t op = 0; op < out_plane; ++op) {
        for (int64_t rem = op, d = static_cast<int64_t>(k) - 1; d >= 0; --d) {
          o[static_cast<size_t>(d)] = rem % out[2 + static_cast<size_t>(d)];
          rem /= out[2 + static_cast<size_t>(d)];
        }
        Ref r;
        r.value = bias ? bias->get(co) : 0.0;
        r.abs_sum = std::abs(r.value);
        r.terms = cg * taps + 1;
        for (int64_t ci = 0; ci < cg; ++ci) {
          const int64_t cin = (co / og) * cg + ci;
          for (int64_t tp = 0; tp < taps; ++tp) {
            for (int64_t rem = tp, d = static_cast<int64_t>(k) - 1; d >= 0; --d) {
              t[static_cast<size_t>(d)] = rem % c.w[2 + static_cast<size_t>(d)];
              rem /= c.w[2 + static_cast<size_t>(d)];
            }
            int64_t xi = n * c.x[1] + cin;
            bool inside = true;
            for (size_t d = 0; d < k; ++d) {
              const int64_t p = o[d] * c.strides[d] - c.pads[d] + t[d] * c.dilations[d];
              inside = inside && p >= 0 && p < c.x[2 + d];
              xi = xi * c.x[2 + d] + p;
            }
            if (!inside) continue;
            const double prod = x.get(xi) * w.get((co * cg + ci) * taps + tp);
            r.value += prod;
            r.abs_sum += std::abs(prod);
          }
        }
        refs.push_back(r);
      }
    }
  }
  return refs;
}

const std::vector<ConvCase>& conv_cases() {
  static const std::vector<ConvCase> cases = {
      {{2, 3, 11}, {4, 3, 3}, {2}, {1, 1}, {2}},                           // 1-D
      {{1, 1, 1}, {1, 1, 1}, {1}, {0, 0}, {1}},                            // all ones
      {{2, 4, 9, 7}, {6, 2, 3, 2}, {2, 1}, {1, 0, 2, 1}, {1, 2}, 2},       // groups, asym pads
      {{1, 6, 8, 8}, {6, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 6},       // depthwise
      {{2, 4, 9, 11}, {8, 1, 3, 3}, {2, 2}, {1, 0, 2, 1}, {1, 2}, 4},      // depthwise x2, strided
      {{1, 3, 13}, {3, 1, 5}, {3}, {2, 1}, {1}, 3, false},                 // depthwise 1-D
      {{1, 2, 2, 3}, {2, 1, 5, 5}, {1, 1}, {2, 2, 2, 2}, {1, 1}, 2},       // depthwise, big window
      {{2, 32, 40, 40}, {32, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 32},  // depthwise, threads
      {{1, 2, 4, 5, 6}, {2, 1, 2, 3, 2}, {1, 2, 2}, {0, 1, 1, 1, 0, 0}, {2, 1, 1}, 2},  // 3-D dw
      {{2, 5, 6, 7}, {3, 5, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, false},  // 1x1: no im2col
      {{1, 5, 6, 7}, {3, 5, 1, 1}, {2, 2}, {0, 0, 0, 0}, {1, 1}},            // 1x1 strided
      {{1, 2, 3, 3}, {2, 2, 1, 1}, {1, 1}, {0, 0, 1, 2}, {1, 1}},  // 1x1, end padding only
      {{1, 2, 2, 3}, {3, 2, 5, 5}, {1, 1}, {2, 2, 2, 2}, {1, 1}},  // window > input
      {{1, 2, 5, 4, 6}, {4, 1, 2, 3, 2}, {1, 2, 1}, {0, 1, 1, 1, 0, 0}, {2, 1, 2}, 2},  // 3-D
      {{0, 3, 5, 5}, {2, 3, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}},                       // N = 0
      {{1, 0, 4, 4}, {2, 0, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}},      // C = 0: bias only
      {{1, 64, 96, 96}, {3, 64, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}},  // several im2col chunks
      // Maps of 2x2 to 4x4 with at least 16 output channels: narrow products on AVX-512.
      {{2, 32, 2, 2}, {48, 32, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}},
      {{1, 16, 4, 4}, {20, 16, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}},
      {{2, 24, 3, 3}, {40, 24, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}},
  };
  return cases;
}

TEST(InterpreterGemmTest, ConvMatchesDoubleReference) {
  std::mt19937 rng(2024);
  for (const ConvCase& c : conv_cases()) {
    for (DType dt : {DType::kF32, DType::kF16}) {
      const HostTensor x = random_tensor(dt, c.x, rng), w = random_tensor(dt, c.w, rng);
      const HostTensor bias = random_tensor(dt, {c.w[0]}, rng);
      Attrs attrs;
      attrs.window.strides = c.strides;
      attrs.window.pads = c.pads;
      attrs.window.dilations = c.dilations;
      attrs.window.groups = c.groups;
      std::vector<const HostTensor*> ins = {&x, &w};
      if (c.bias) ins.push_back(&bias);
      auto r = interpret_op(OpKind::Conv, ins, attrs);
      ASSERT_TRUE(r.ok()) << str(c) << ": " << r.status().to_string();
      EXPECT_EQ(r->meta.dtype, dt);
      expect_within(*r, conv_ref(x, w, c.bias ? &bias : nullptr, c, r->meta.shape),
                    str(c) + " " + dtype_name(dt));
    }
  }
}

TEST(InterpreterGemmTest, OpenBlasRunsVectorKernelsOnAnAvx2Cpu) {
  // A DYNAMIC_ARCH OpenBLAS older than the CPU picks its SSE3 kernels (Prescott) by model
  // number; after the interpreter's first product it runs kernels for the CPU's features.
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr ||
      std::getenv("KILN_OPENBLAS_THREADS") != nullptr)
    GTEST_SKIP() << "OPENBLAS_CORETYPE or KILN_OPENBLAS_THREADS set: the process chose";
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
    GTEST_SKIP() << "CPU without AVX2 and FMA";
  std::mt19937 rng(5);
  const MatCase c{{8, 8}, {8, 8}};
  const HostTensor a = random_tensor(DType::kF32, c.a, rng),
                   b = random_tensor(DType::kF32, c.b, rng);
  ASSERT_TRUE(interpret_op(OpKind::MatMul, std::vector<const HostTensor*>{&a, &b}, {}).ok());
  const std::string_view core = openblas_get_corename();
  for (std::string_view old : {"Prescott", "Core2", "Penryn", "Nehalem", "Sandybridge", "Atom",
                               "Barcelona", "Opteron", "Bulldozer", "Piledriver"})
    EXPECT_NE(core, old) << "OpenBLAS runs its " << core << " kernels on a CPU with AVX2 and FMA";
}

}  // namespace
}  // namespace kiln
