// MatMul on Vulkan against the CPU interpreter: every transpose combination, odd sizes around the
// 32/64 tiles, batch broadcasting, 1-D operands, size-0 M/N/K, f16 and mixed dtypes, integers, a
// fused elementwise prologue and an elementwise consumer, eager and compiled, into poisoned
// memory. Float results are compared with an allowance of ~K ulps of sum_k |a_ik| |b_kj|.
// Also prints (never asserts) the GFLOP/s of one 1024^3 f32 matmul.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "device/test_util.h"
#include "exec/calibration.h"  // ForcedMatmulKernel
#include "vk/device.h"         // RowBlockKernel: does the device have subgroup shuffles

namespace kiln {
namespace {

using test::Dist;
using test::Tol;

using namespace test::dtypes;

struct MCase {
  Shape a, b;
  bool ta = false, tb = false;
};

std::string label(const MCase& c, DType da, DType db, const std::string& what = "matmul") {
  return what + "(" + dtype_name(da) + shape_str(c.a) + (c.ta ? "^T" : "") + ", " + dtype_name(db) +
         shape_str(c.b) + (c.tb ? "^T" : "") + ")";
}

/// K of a case (the shape rule's inner dim).
int64_t inner_dim(const MCase& c) {
  if (c.a.size() == 1) return c.a[0];
  return c.ta ? c.a[c.a.size() - 2] : c.a.back();
}

/// a [M, K] (or [K, M] when transposed), b [K, N] (or [N, K]).
MCase mk(Dim m, Dim k, Dim n, bool ta, bool tb) {
  return {ta ? Shape{k, m} : Shape{m, k}, tb ? Shape{n, k} : Shape{k, n}, ta, tb};
}

class DeviceMatmul : public test::DeviceOpTest {
 protected:
  /// sum_k |a_ik| |b_kj| per output element (interpreter, f32).
  std::vector<double> abs_scale(const MCase& c, const Tensor& a, const Tensor& b) {
    auto absf = [](const Tensor& t) {
      Tensor f = cast(t, kF32);
      return maximum(f, neg(f));
    };
    return matmul(absf(a), absf(b), c.ta, c.tb).to_doubles();
  }

  /// Checks `fn`(a, b) for a case; `fn` defaults to the plain matmul.
  template <typename Fn>
  void run_fn(const MCase& c, DType da, DType db, const std::string& what, const Fn& fn,
              const Dist& dist = {}) {
    bool ints = !is_floating(da) && !is_floating(db);
    Dist d = ints ? Dist{-100, 100} : dist;
    Tensor a = rnd(da, c.a, d), b = rnd(db, c.b, d);
    CheckOptions opt;
    Tol tol = Tol::exact();
    if (!ints) {
      const double k = static_cast<double>(inner_dim(c));
      bool half = promote_types(da, db) == kF16;
      opt.scale = abs_scale(c, a, b);
      opt.scale_rel = (half ? 1e-3 : 1e-6) + 1.2e-7 * k;
      tol = Tol{0, 1e-6};
    }
    check_with(label(c, da, db, what), tol, opt, fn, a, b);
  }

  void run(const MCase& c, DType da = kF32, DType db = kF32) {
    const bool ta = c.ta, tb = c.tb;
    run_fn(c, da, db, "matmul",
           [ta, tb](const Tensor& x, const Tensor& y) { return matmul(x, y, ta, tb); });
  }
};

const std::vector<Dim>& odd_sizes() {
  static const std::vector<Dim> v = {1, 7, 33, 65};
  return v;
}

TEST_F(DeviceMatmul, TransposesAndOddSizes) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      for (Dim m : odd_sizes()) run(mk(m, 33, 7, ta, tb));
      for (Dim n : odd_sizes()) run(mk(65, 7, n, ta, tb));
      for (Dim k : odd_sizes()) run(mk(33, k, 65, ta, tb));
      run(mk(130, 70, 129, ta, tb));  // several 64x64 tiles, partial edges, K not a TILE_K multiple
      run(mk(64, 64, 64, ta, tb));    // exact tile
    }
}

TEST_F(DeviceMatmul, BatchBroadcast) {
  run({{2, 1, 7, 33}, {3, 33, 5}});
  run({{2, 1, 33, 7}, {3, 5, 33}, true, true});
  run({{4, 65, 33}, {33, 7}});
  run({{65, 33}, {2, 33, 70}});
  run({{3, 1, 9, 5}, {1, 4, 9, 5}, false, true});
  run({{1, 1, 1}, {2, 1, 1}});
  run({{2, 3, 4, 70, 20}, {4, 20, 66}});
}

TEST_F(DeviceMatmul, OneDimensionalOperands) {
  run({{33}, {33, 7}});
  run({{33}, {7, 33}, false, true});
  run({{65, 33}, {33}});
  run({{33, 65}, {33}, true, false});
  run({{33}, {33}});
  run({{1}, {1}});
  run({{33}, {2, 33, 7}});
  run({{3, 7, 33}, {33}});
  run({{3, 33, 7}, {33}, true, true});  // trans_b is ignored for a 1-D b
}

TEST_F(DeviceMatmul, EmptyDims) {
  run(mk(0, 5, 7, false, false));
  run(mk(5, 5, 0, false, true));
  run(mk(7, 0, 9, false, false));  // K = 0: zeros
  run(mk(7, 0, 9, true, true));
  run({{2, 3, 0}, {0, 4}});
  run({{0, 3, 4}, {4, 5}});  // no batches
  run({{0}, {0}});           // 1-D, K = 0: a 0-d zero
}

TEST_F(DeviceMatmul, HalfAndMixed) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) run(mk(33, 65, 7, ta, tb), kF16, kF16);
  run(mk(130, 70, 129, false, false), kF16, kF16);
  run({{2, 1, 7, 33}, {3, 33, 5}}, kF16, kF16);
  run(mk(33, 65, 7, false, true), kF16, kF32);
  run(mk(33, 65, 7, true, false), kF32, kF16);
  run({{65}, {65, 9}}, kF16, kF16);
}

TEST_F(DeviceMatmul, Integers) {
  run(mk(33, 65, 7, false, false), kI32, kI32);
  run(mk(65, 7, 33, true, true), kI32, kI32);
  run(mk(70, 33, 66, false, true), kI64, kI64);
  run({{2, 1, 7, 9}, {3, 9, 5}}, kI32, kI64);
}

// matmul(relu(x) * 2, w): the prologue folds into the matmul's loads (one kernel when compiled).
TEST_F(DeviceMatmul, FusedPrologue) {
  for (bool tb : {false, true}) {
    MCase c = mk(33, 65, 7, false, tb);
    run_fn(c, kF32, kF32, "matmul_relu_prologue", [tb](const Tensor& x, const Tensor& w) {
      return matmul(mul(relu(x), scalar(2.0)), w, false, tb);
    });
  }
  run_fn({{2, 9, 33}, {9, 70}, true, false}, kF16, kF16, "matmul_relu_prologue",
         [](const Tensor& x, const Tensor& w) {
           return matmul(mul(relu(x), scalar(2.0, kF16)), w, true, false);
         });
  // Both operands computed, batch-broadcast b: matmul(x + 1, exp(w) - 0.5).
  run_fn({{4, 7, 20}, {20, 9}}, kF32, kF32, "matmul_two_prologues",
         [](const Tensor& x, const Tensor& w) {
           return matmul(add(x, scalar(1.0)), sub(exp(w), scalar(0.5)));
         });

  auto compiled = compile(
      [](const Tensor& x, const Tensor& w) { return matmul(mul(relu(x), scalar(2.0)), w); });
  compiled(rnd(kF32, {9, 20}).to(Device::vulkan()), rnd(kF32, {20, 5}).to(Device::vulkan()));
  std::vector<EntryInfo> entries = compiled.entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_TRUE(entries[0].on_device);
  EXPECT_EQ(entries[0].kernels.size(), 1u) << entries[0].graph;
}

// The row-block kernel (f32, stored operands, 2-D b, K a multiple of 4 and, for A·B, N too):
// row counts around its 32-row blocks and the 1- to 16-row blocks of short products, column
// counts around its 128 / 512-wide workgroup tiles,
// A with batch dims. The generated code is checked to be the row-block kernel when the device
// has subgroup shuffles.
TEST_F(DeviceMatmul, RowBlockKernel) {
  std::string code;
  set_logs("output_code");
  set_log_sink([&code](LogTopic, std::string_view m) { code += std::string(m); });
  for (bool tb : {false, true}) {
    // Row blocks are 32 rows in four groups of 8 lanes: partial first, last and middle groups.
    // Up to 16 rows, blocks of the next power of two (1, 2, 4, 8, 16 rows; fewer than 8 rows
    // leave lanes loading rows past the block).
    for (Dim m : {1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 31, 32, 33, 41, 65, 100})
      run(mk(m, 64, 12, false, tb));
    for (Dim m : {1, 3, 6, 13}) run(mk(m, 260, 516, false, tb));
    for (Dim n : {4, 8, 20, 132, 516, 1028}) run(mk(19, 8, n, false, tb));
    if (tb)
      for (Dim n : {1, 5, 129, 300}) run(mk(23, 12, n, false, true));
    // K 2052 / 2056: a column panel of B over 1 MiB, so column blocks run along x and row
    // blocks along y (codegen/lower_matmul_rowblock.cpp); K 260 keeps rows along x.
    for (Dim k : {4, 36, 260, tb ? 2056 : 2052}) run(mk(tb ? 37 : 45, k, 16, false, tb));
    run({{3, 37, 64}, tb ? Shape{20, 64} : Shape{64, 20}, false, tb});
    run({{2, 3, 5, 16}, tb ? Shape{8, 16} : Shape{16, 8}, false, tb});
  }
  set_log_sink({});
  set_logs("");
  auto dev = vk::VulkanDevice::default_device();
  ASSERT_TRUE(dev.ok());
  if ((*dev)->info().subgroup_shuffle && (*dev)->info().subgroup_size >= 8) {
    EXPECT_NE(code.find("kiln_rowblock"), std::string::npos);
    EXPECT_NE(code.find("subgroupShuffle"), std::string::npos);
    for (const char* rows : {"i0 = rb * 1u", "i0 = rb * 2u", "i0 = rb * 4u", "i0 = rb * 8u",
                             "i0 = rb * 16u", "i0 = rb * 32u"})
      EXPECT_NE(code.find(rows), std::string::npos) << rows;
  }
}

// Operands the row-block kernel cannot read in place (codegen/matmul_choice.h): the exporter's
// [B, S, E] -> [S, B, E] transpose before a linear, and a norm's arithmetic folded into A's
// loads. A is stored by one kernel and the product runs on the row-block kernel over all rows
// (forced for the kernel count: calibrated rates decide otherwise), never on the tiled kernel
// batch by batch; the values match the interpreter's.
TEST_F(DeviceMatmul, PermutedAndComputedOperands) {
  for (Shape x_shape : {Shape{3, 5, 16}, Shape{1, 1, 8}, Shape{4, 33, 64}, Shape{2, 17, 12}}) {
    for (bool tb : {true, false}) {
      const Dim e = x_shape[2], n = 20;
      MCase c{x_shape, tb ? Shape{n, e} : Shape{e, n}, false, tb};
      run_fn(c, kF32, kF32, "permuted_linear", [tb](const Tensor& x, const Tensor& w) {
        return matmul(permute(x, {1, 0, 2}), w, false, tb);
      });
      run_fn(c, kF32, kF32, "computed_linear", [tb](const Tensor& x, const Tensor& w) {
        return matmul(add(mul(x, scalar(0.5)), scalar(1.0)), w, false, tb);
      });
    }
  }
  auto linear = compile(
      [](const Tensor& x, const Tensor& w, const Tensor& b) {
        return matmul(permute(x, {1, 0, 2}), w, false, true) + b;
      },
      {.name = "permuted_linear"});
  Tensor x = rnd(kF32, {4, 40, 32}, Dist{-1, 1}), w = rnd(kF32, {24, 32}, Dist{-1, 1}),
         b = rnd(kF32, {24}, Dist{-1, 1});
  // The store of A is what this checks, so the row-block kernel is forced: with the device's
  // calibrated rates a product this small may go to the tiled kernel instead (lavapipe with
  // 16-lane subgroups measures so).
  Tensor y;
  {
    const ForcedMatmulKernel rowblock(MatmulRates::Force::kRowBlock);
    y = linear(x.to(Device::vulkan()), w.to(Device::vulkan()), b.to(Device::vulkan()));
  }
  test::expect_close(y.to(Device::cpu()), matmul(permute(x, {1, 0, 2}), w, false, true) + b,
                     Tol{1e-5, 1e-5}, "permuted_linear");
  const std::vector<EntryInfo> entries = linear.entries();
  ASSERT_EQ(entries.size(), 1u);
  auto dev = vk::VulkanDevice::default_device();
  ASSERT_TRUE(dev.ok());
  if ((*dev)->info().subgroup_shuffle && (*dev)->info().subgroup_size >= 8) {
    ASSERT_EQ(entries[0].kernels.size(), 2u) << entries[0].graph;
    EXPECT_NE(entries[0].kernels[0].find("permute"), std::string::npos) << entries[0].kernels[0];
    EXPECT_NE(entries[0].kernels[1].find("matmul_add"), std::string::npos);
  }
}

// A linear layer whose output exceeds maxStorageBufferRange (the seed's vocabulary head at long
// sequences) runs as several dispatches over row ranges, binding windows of A and C; the
// epilogue (a bias) reads at the global row. Compared with a CPU computation on sampled rows.
TEST_F(DeviceMatmul, OutputLargerThanOneStorageBufferRange) {
  auto dev = vk::VulkanDevice::default_device();
  ASSERT_TRUE(dev.ok());
  const uint64_t max_range = (*dev)->info().max_storage_buffer_range;
  if (max_range > (uint64_t{256} << 20))
    GTEST_SKIP() << "maxStorageBufferRange " << max_range << " is too large to exceed in a test";
  const Dim n = 4096, k = 8;
  const Dim m = static_cast<Dim>(max_range / (n * 4)) * 13 / 10 + 5;  // 1.3 ranges, odd rows
  // Either kernel, whichever the device's measured rates pick: each must split the output.
  for (auto [tb, force] :
       {std::pair{true, MatmulRates::Force::kRowBlock}, std::pair{true, MatmulRates::Force::kTiled},
        std::pair{false, MatmulRates::Force::kRowBlock},
        std::pair{false, MatmulRates::Force::kTiled}}) {
    ForcedMatmulKernel forced(force);
    SCOPED_TRACE(std::string(tb ? "A·Bᵀ" : "A·B") +
                 (force == MatmulRates::Force::kTiled ? ", tiled kernel" : ", row-block kernel"));
    Tensor x = rnd(kF32, {m, k}, Dist{-1, 1});
    Tensor w = rnd(kF32, tb ? Shape{n, k} : Shape{k, n}, Dist{-1, 1});
    Tensor bias = rnd(kF32, {n}, Dist{-1, 1});
    auto linear = compile(
        [tb](const Tensor& a, const Tensor& b, const Tensor& c) {
          // A per-row term too, so that a part reading the wrong rows would show.
          Tensor row = cast(unsqueeze(arange(a.size(0)), 1), kF32) * 1e-3;
          return matmul(a, b, false, tb) + c + row;
        },
        {.name = "big_linear"});
    Tensor y = linear(x.to(Device::vulkan()), w.to(Device::vulkan()), bias.to(Device::vulkan()));
    ASSERT_EQ(linear.entries().at(0).kernels.size(), 1u);
    const std::vector<float> got = y.to_vector<float>();
    const std::vector<float> xv = x.to_vector<float>(), wv = w.to_vector<float>(),
                             bv = bias.to_vector<float>();
    for (Dim i : {Dim{0}, Dim{1}, m / 2, m - 2, m - 1}) {
      for (Dim j : {Dim{0}, Dim{7}, n - 1}) {
        double want = bv[static_cast<size_t>(j)] + 1e-3 * static_cast<double>(i);
        for (Dim kk = 0; kk < k; ++kk)
          want += double(xv[static_cast<size_t>(i * k + kk)]) *
                  wv[static_cast<size_t>(tb ? j * k + kk : kk * n + j)];
        EXPECT_NEAR(got[static_cast<size_t>(i * n + j)], want, 1e-4 * (1 + std::abs(want)))
            << "row " << i << " col " << j << (tb ? " (A·Bᵀ)" : " (A·B)")
            << (force == MatmulRates::Force::kTiled ? " tiled" : " row-block");
      }
    }
  }
}

// Operand aliasing the row-block kernel must not mishandle: the same tensor as A and B (a Gram
// matrix), and an epilogue that reads A again (a residual around a square linear layer).
TEST_F(DeviceMatmul, RowBlockOperandAliasing) {
  Tensor x = rnd(kF32, {37, 64}, Dist{-1, 1}), w = rnd(kF32, {64, 64}, Dist{-1, 1});
  auto gram = compile([](const Tensor& a) { return matmul(a, a, false, true); }, {.name = "gram"});
  auto residual = compile([](const Tensor& a, const Tensor& b) { return a + matmul(a, b); },
                          {.name = "residual"});
  const Tensor xv = x.to(Device::vulkan()), wv = w.to(Device::vulkan());
  const std::vector<float> g = gram(xv).to_vector<float>(), r = residual(xv, wv).to_vector<float>();
  const std::vector<float> want_g = matmul(x, x, false, true).to_vector<float>(),
                           want_r = (x + matmul(x, w)).to_vector<float>();
  ASSERT_EQ(g.size(), want_g.size());
  ASSERT_EQ(r.size(), want_r.size());
  for (size_t i = 0; i < g.size(); ++i)
    ASSERT_NEAR(g[i], want_g[i], 1e-4 * (1 + std::abs(want_g[i])));
  for (size_t i = 0; i < r.size(); ++i)
    ASSERT_NEAR(r[i], want_r[i], 1e-4 * (1 + std::abs(want_r[i])));
}

// An elementwise consumer chain after the matmul is its epilogue: one kernel, the product never
// stored. Also through the row-block kernel (K a multiple of 4), with a bias and a residual.
TEST_F(DeviceMatmul, ElementwiseConsumer) {
  MCase c = mk(65, 33, 70, false, true);
  auto fn = [](const Tensor& x, const Tensor& w) {
    return relu(add(matmul(x, w, false, true), scalar(0.25)));
  };
  run_fn(c, kF32, kF32, "relu(matmul + 0.25)", fn);
  auto compiled = compile(fn);
  compiled(rnd(kF32, c.a).to(Device::vulkan()), rnd(kF32, c.b).to(Device::vulkan()));
  std::vector<EntryInfo> entries = compiled.entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_TRUE(entries[0].on_device);
  EXPECT_EQ(entries[0].kernels.size(), 1u) << entries[0].graph;
  for (bool tb : {false, true}) {
    MCase rb = mk(37, 64, 20, false, tb);
    auto linear = [tb](const Tensor& x, const Tensor& w) {
      Tensor bias = cast(arange(0.0, 20.0, 1.0, kI64, x.device()), kF32) * 0.1;
      return relu(matmul(x, w, false, tb) + bias) * 0.5 + 1.0;
    };
    run_fn(rb, kF32, kF32, "relu(matmul + bias) * 0.5 + 1", linear);
  }
}

TEST_F(DeviceMatmul, ShapeErrors) {
  Tensor a = rnd(kF32, {3, 4}).to(Device::vulkan());
  Tensor b = rnd(kF32, {5, 6}).to(Device::vulkan());
  EXPECT_THROW(matmul(a, b), Error);                              // K differs
  EXPECT_THROW(matmul(rnd(kF32, {2, 3, 4}).to(Device::vulkan()),  // batch 2 vs 3
                      rnd(kF32, {3, 4, 5}).to(Device::vulkan())),
               Error);
}

// Throughput of the tiled kernel on this device: printed, never asserted.
TEST_F(DeviceMatmul, Throughput1024) {
  constexpr Dim n = 1024;
  Tensor a = rnd(kF32, {n, n}, Dist{-1, 1}).to(Device::vulkan());
  Tensor b = rnd(kF32, {n, n}, Dist{-1, 1}).to(Device::vulkan());
  std::vector<float> warm = matmul(a, b).to_vector<float>();  // pipeline creation
  auto t0 = std::chrono::steady_clock::now();
  std::vector<float> out = matmul(a, b).to_vector<float>();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(out.size(), static_cast<size_t>(n * n));
  EXPECT_EQ(out, warm);
  std::printf("[ matmul ] f32 1024x1024x1024: %.3f s (incl. readback), %.2f GFLOP/s\n", s,
              2.0 * n * n * n / s / 1e9);
}

}  // namespace
}  // namespace kiln
