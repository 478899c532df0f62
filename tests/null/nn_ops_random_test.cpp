// The transformer ops on random data against double-precision loops written independently of
// the interpreter (matmul with broadcast batch dims and every transpose combination, softmax,
// log_softmax, layer_norm), codegen's unimplemented path for the new ops, and compiled functions
// that use them: on CPU tensors (same result as eager) and on Vulkan tensors when a device
// exists (falls back to the interpreter with a warning).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "codegen/lower.h"
#include "graph/graph.h"
#include "kiln/kiln.h"

namespace kiln {
namespace {

std::vector<float> random_floats(int64_t n, uint32_t seed, float lo = -2.f, float hi = 2.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = dist(rng);
  return v;
}
Tensor rand_tensor(const Shape& shape, uint32_t seed, Device device = Device::cpu()) {
  return Tensor::from_vector(random_floats(numel(shape), seed), shape, device);
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::abs(want[i]))) << "element " << i;
}

// Naive batched matmul on explicit multi-indices. a is stored [batch_a..., r, c] and read as
// [M, K] (or [K, M] when trans_a), likewise b; batch dims broadcast (size 1 or missing).
std::vector<double> naive_matmul(const std::vector<double>& a, const Shape& sa, bool ta,
                                 const std::vector<double>& b, const Shape& sb, bool tb,
                                 Shape* out_shape) {
  const Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  const int64_t m = ta ? sa.back() : sa[sa.size() - 2], k = ta ? sa[sa.size() - 2] : sa.back();
  const int64_t n = tb ? sb[sb.size() - 2] : sb.back();
  const size_t rank = std::max(ba.size(), bb.size());
  Shape batch(rank);
  for (size_t i = 0; i < rank; ++i) {
    Dim x = i < rank - ba.size() ? 1 : ba[i - (rank - ba.size())];
    Dim y = i < rank - bb.size() ? 1 : bb[i - (rank - bb.size())];
    batch[i] = std::max(x, y);
  }
  *out_shape = batch;
  out_shape->push_back(m);
  out_shape->push_back(n);
  // Flat offset of batch index `idx` in an operand with batch shape `bs` (broadcast).
  auto offset = [&](const std::vector<int64_t>& idx, const Shape& bs) {
    int64_t off = 0;
    for (size_t i = 0; i < bs.size(); ++i) {
      const int64_t v = bs[i] == 1 ? 0 : idx[i + (rank - bs.size())];
      off = off * bs[i] + v;
    }
    return off;
  };
  std::vector<double> out;
  std::vector<int64_t> idx(rank, 0);
  for (int64_t flat = 0; flat < numel(batch); ++flat) {
    for (int64_t r = flat, i = static_cast<int64_t>(rank) - 1; i >= 0; --i) {
      idx[static_cast<size_t>(i)] = r % batch[static_cast<size_t>(i)];
      r /= batch[static_cast<size_t>(i)];
    }
    const int64_t oa = offset(idx, ba) * m * k, ob = offset(idx, bb) * k * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          const double x = a[static_cast<size_t>(oa + (ta ? p * m + i : i * k + p))];
          const double y = b[static_cast<size_t>(ob + (tb ? j * k + p : p * n + j))];
          acc += x * y;
        }
        out.push_back(acc);
      }
    }
  }
  return out;
}

TEST(NnRandom, MatMulBroadcastBatchAndEveryTranspose) {
  const int64_t m = 3, k = 5, n = 4;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      SCOPED_TRACE("trans_a=" + std::to_string(ta) + " trans_b=" + std::to_string(tb));
      const Shape sa = {2, 1, ta ? k : m, ta ? m : k}, sb = {3, tb ? n : k, tb ? k : n};
      Tensor a = rand_tensor(sa, 10 + ta), b = rand_tensor(sb, 20 + tb);
      Shape want_shape;
      std::vector<double> want =
          naive_matmul(a.to_doubles(), sa, ta, b.to_doubles(), sb, tb, &want_shape);
      Tensor c = matmul(a, b, ta != 0, tb != 0);
      EXPECT_EQ(c.shape(), (Shape{2, 3, m, n}));
      EXPECT_EQ(c.shape(), want_shape);
      expect_close(c.to_doubles(), want, 1e-5);
    }
  }
}

TEST(NnRandom, MatMulOneDimOperandsAndHalf) {
  Tensor v = rand_tensor({5}, 1), b = rand_tensor({2, 5, 3}, 2), a = rand_tensor({3, 5}, 3);
  Shape s;
  std::vector<double> want =
      naive_matmul(v.to_doubles(), {1, 5}, false, b.to_doubles(), {2, 5, 3}, false, &s);
  Tensor c = matmul(v, b);
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  expect_close(c.to_doubles(), want, 1e-5);
  want = naive_matmul(a.to_doubles(), {3, 5}, false, v.to_doubles(), {5, 1}, false, &s);
  Tensor d = matmul(a, v);
  EXPECT_EQ(d.shape(), (Shape{3}));
  expect_close(d.to_doubles(), want, 1e-5);
  Tensor h = matmul(cast(a, DType::kF16), cast(b, DType::kF16), false, false);
  EXPECT_EQ(h.dtype(), DType::kF16);
  want = naive_matmul(cast(a, DType::kF16).to_doubles(), {3, 5}, false,
                      cast(b, DType::kF16).to_doubles(), {2, 5, 3}, false, &s);
  expect_close(h.to_doubles(), want, 2e-3);
}

TEST(NnRandom, SoftmaxRowsSumToOneAndMatchDoubleReference) {
  const Shape shape = {3, 5, 7};
  Tensor x = Tensor::from_vector(random_floats(numel(shape), 7, -20.f, 20.f), shape);
  const std::vector<double> xv = x.to_doubles();
  for (int axis = 0; axis < 3; ++axis) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    int64_t outer = 1, inner = 1, len = shape[static_cast<size_t>(axis)];
    for (int d = 0; d < axis; ++d) outer *= shape[static_cast<size_t>(d)];
    for (int d = axis + 1; d < 3; ++d) inner *= shape[static_cast<size_t>(d)];
    std::vector<double> want(xv.size()), want_log(xv.size());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t in = 0; in < inner; ++in) {
        auto at = [&](int64_t i) { return static_cast<size_t>((o * len + i) * inner + in); };
        double mx = -INFINITY, sum = 0;
        for (int64_t i = 0; i < len; ++i) mx = std::max(mx, xv[at(i)]);
        for (int64_t i = 0; i < len; ++i) sum += std::exp(xv[at(i)] - mx);
        for (int64_t i = 0; i < len; ++i) {
          want[at(i)] = std::exp(xv[at(i)] - mx) / sum;
          want_log[at(i)] = xv[at(i)] - mx - std::log(sum);
        }
      }
    }
    Tensor y = softmax(x, axis);
    expect_close(y.to_doubles(), want, 1e-6);
    expect_close(log_softmax(x, axis - 3).to_doubles(), want_log, 1e-6);
    std::vector<double> sums = sum(y, {axis}).to_doubles();
    for (double s : sums) EXPECT_NEAR(s, 1.0, 1e-6);
  }
}

TEST(NnRandom, LayerNormMatchesDoubleReference) {
  const Shape shape = {4, 6, 8};
  Tensor x = Tensor::from_vector(random_floats(numel(shape), 3, -5.f, 5.f), shape);
  Tensor w = rand_tensor({6, 8}, 4), b = rand_tensor({6, 8}, 5);
  const std::vector<double> xv = x.to_doubles(), wv = w.to_doubles(), bv = b.to_doubles();
  const double eps = 1e-5;
  std::vector<double> want;
  for (size_t row = 0; row < 4; ++row) {
    double mean = 0, var = 0;
    for (size_t i = 0; i < 48; ++i) mean += xv[row * 48 + i] / 48;
    for (size_t i = 0; i < 48; ++i) var += std::pow(xv[row * 48 + i] - mean, 2) / 48;
    for (size_t i = 0; i < 48; ++i)
      want.push_back((xv[row * 48 + i] - mean) / std::sqrt(var + eps) * wv[i] + bv[i]);
  }
  expect_close(layer_norm(x, w, b, 2, eps).to_doubles(), want, 1e-5);
  Tensor h = layer_norm(cast(x, DType::kF16), cast(w, DType::kF16), cast(b, DType::kF16), 2, eps);
  EXPECT_EQ(h.dtype(), DType::kF16);
  expect_close(h.to_doubles(), want, 1e-2);
}

TEST(NnRandom, CodegenLowersArgMaxAsReduction) {
  CodegenOptions o;
  o.caps = TargetCaps::generic();
  Graph g;
  NodeId a = g.add_input({DType::kF32, {2, 3}});
  Attrs attrs;
  attrs.dims = {1};
  NodeId c = value_or_throw(g.add(OpKind::ArgMax, {a}, attrs));
  NodeId r = value_or_throw(g.add(OpKind::Neg, {c}));
  g.set_outputs({r});
  auto plan = plan_kernels(g, o);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  ASSERT_EQ(plan->kernels.size(), 2u);
  EXPECT_EQ(plan->kernels[0].variant, KernelVariant::kReduceThread);
  EXPECT_NE(plan->kernels[0].glsl.find("kiln_arg_combine"), std::string::npos);
  Status arg_compiled = compile_kernels(*plan, o);
  EXPECT_TRUE(arg_compiled.ok()) << arg_compiled.to_string();
  // The new unary ops are lowered: erf, silu and gelu_tanh fuse into one compiled kernel.
  Graph u;
  NodeId x = u.add_input({DType::kF32, {8}});
  NodeId e = value_or_throw(u.add(OpKind::Erf, {x}));
  NodeId s = value_or_throw(u.add(OpKind::Silu, {e}));
  u.set_outputs({value_or_throw(u.add(OpKind::GeluTanh, {s}))});
  auto ok = plan_kernels(u, o);
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(ok->kernels.size(), 1u);
  Status compiled = compile_kernels(*ok, o);
  EXPECT_TRUE(compiled.ok()) << compiled.to_string();
}

// An attention-like block using most of the new ops.
Tensor block(const Tensor& x, const Tensor& w, const Tensor& ids) {
  const int64_t s = x.size(0);
  Tensor q = layer_norm(x, ones({x.size(1)}), zeros({x.size(1)}));
  Tensor scores = matmul(q, matmul(x, w), false, true);
  Tensor causal = gt(triu(ones({s, s}), 1), scalar(0));
  Tensor p = softmax(masked_fill(scores, causal, -INFINITY), -1);
  Tensor h = gelu_tanh(matmul(p, x)) + silu(x) - erf(x);
  Tensor rows = index_select(h, 0, ids);
  Tensor both = concat({slice(rows, 0, 0, 2), slice(h, 0, -1, s)}, 0);
  Tensor pos = cast(unsqueeze(arange(0, static_cast<double>(both.size(0))), 1), DType::kF32);
  Tensor best = cast(argmax(both, 1, true), DType::kF32) + min(both, {1}, true);
  return log_softmax(both + pos, 1) + best + tril(both);
}

TEST(NnRandom, CompiledOnCpuMatchesEager) {
  Tensor x = rand_tensor({4, 6}, 1), w = rand_tensor({6, 6}, 2);
  Tensor ids = Tensor::from_vector<int64_t>({3, 1, 0}, {3});
  auto f = compile([](const Tensor& a, const Tensor& b, const Tensor& i) { return block(a, b, i); },
                   {.name = "nn_block"});
  std::vector<float> eager = block(x, w, ids).to_vector<float>();
  EXPECT_EQ(f(x, w, ids).to_vector<float>(), eager);
  EXPECT_EQ(f(x, w, ids).to_vector<float>(), eager);  // replay
  EXPECT_EQ(f.stats().compiles, 1u);
  EXPECT_EQ(f.stats().cache_hits, 1u);
}

TEST(NnRandom, CompiledArgmaxRunsOnVulkan) {
  if (!vulkan_available()) GTEST_SKIP() << "no Vulkan device: " << vulkan_status().to_string();
  Tensor a = rand_tensor({2, 3, 5}, 8);
  auto f = compile([](const Tensor& x) { return cast(argmax(x, 2), DType::kF32) * 2.0; },
                   {.name = "argmax_device"});
  std::vector<double> got = f(a.to(Device::vulkan())).to_doubles();
  expect_close(got, (cast(argmax(a, 2), DType::kF32) * 2.0).to_doubles(), 1e-6);
  std::vector<EntryInfo> entries = f.entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_TRUE(entries[0].on_device) << entries[0].graph;
}

}  // namespace
}  // namespace kiln
