// The flash-attention kernel (FusionRule::kAttention) against the interpreter: batched and
// unbatched, queries and keys of different lengths, odd lengths and lengths 0 / 1, every
// transposition of Q, K and V, a causal mask built in the graph, rows whose scores are all
// -inf, the heads-merging store, and one compile serving every length of a symbolic graph.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "device/test_util.h"

namespace kiln {
namespace {

using test::Dist;
using test::Tol;

class DeviceAttention : public test::DeviceOpTest {
 protected:
  /// Kernel names of the single entry `fn` compiles to on Vulkan inputs.
  template <typename Fn, typename... T>
  std::vector<std::string> kernels_of(const Fn& fn, const T&... cpu_inputs) {
    auto compiled = compile(fn);
    compiled(cpu_inputs.to(Device::vulkan())...);
    std::vector<EntryInfo> entries = compiled.entries();
    if (entries.size() != 1) return {};
    return entries[0].kernels;
  }
};

const Tol kTol{3e-5, 2e-4};

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, double scale) {
  return matmul(softmax(matmul(q, k, false, true) * scale, -1), v);
}

std::string sh(const Shape& s) {
  return shape_str(s);
}

TEST_F(DeviceAttention, MatchesTheInterpreter) {
  struct Case {
    Shape batch;
    int64_t sq, sk, d, dv;
  };
  for (const Case& c : std::vector<Case>{{{2, 3}, 7, 7, 8, 8},
                                         {{1, 2}, 33, 33, 64, 64},
                                         {{3}, 70, 70, 16, 24},
                                         {{}, 5, 9, 8, 16},
                                         {{2}, 1, 1, 32, 8},
                                         {{1, 1}, 1, 13, 8, 8},
                                         {{2, 2}, 130, 3, 64, 64}}) {
    Shape qs = c.batch, ks = c.batch, vs = c.batch;
    qs.insert(qs.end(), {c.sq, c.d});
    ks.insert(ks.end(), {c.sk, c.d});
    vs.insert(vs.end(), {c.sk, c.dv});
    const double scale = 1.0 / std::sqrt(static_cast<double>(c.d));
    auto fn = [scale](const Tensor& q, const Tensor& k, const Tensor& v) {
      return attention(q, k, v, scale);
    };
    Tensor q = rnd(DType::kF32, qs), k = rnd(DType::kF32, ks), v = rnd(DType::kF32, vs);
    check("attention q" + sh(qs) + " k" + sh(ks) + " v" + sh(vs), kTol, fn, q, k, v);
    EXPECT_EQ(kernels_of(fn, q, k, v), std::vector<std::string>{"k0_attention"}) << sh(qs);
  }
}

// PyTorch's exporter merges the heads of a [B*H, S, D] output as permute([1, 0, 2]) and a
// reshape to [S*B, H*D]: the kernel writes that layout itself (one kernel), matching the
// interpreter, for odd lengths and batches.
TEST_F(DeviceAttention, ExportersHeadMerge) {
  for (const auto& [b, h, s, d] : std::vector<std::array<int64_t, 4>>{
           {2, 4, 7, 8}, {1, 2, 33, 16}, {3, 1, 1, 8}, {2, 2, 70, 64}}) {
    const Shape qs{b * h, s, d};
    auto fn = [b, h, s, d](const Tensor& q, const Tensor& k, const Tensor& v) {
      Tensor o = attention(q, k, v, 0.25);
      return reshape(permute(o, {1, 0, 2}), {s * b, h * d});
    };
    Tensor q = rnd(DType::kF32, qs), k = rnd(DType::kF32, qs), v = rnd(DType::kF32, qs);
    check("attention_head_merge" + sh(qs), kTol, fn, q, k, v);
    EXPECT_EQ(kernels_of(fn, q, k, v), std::vector<std::string>{"k0_attention"}) << sh(qs);
  }
}

TEST_F(DeviceAttention, EveryTransposition) {
  const int64_t b = 2, s = 11, t = 6, d = 16;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (bool tv : {false, true}) {
        Tensor q = rnd(DType::kF32, ta ? Shape{b, d, s} : Shape{b, s, d});
        Tensor k = rnd(DType::kF32, tb ? Shape{b, t, d} : Shape{b, d, t});
        Tensor v = rnd(DType::kF32, tv ? Shape{b, d, t} : Shape{b, t, d});
        auto fn = [ta, tb, tv](const Tensor& x, const Tensor& y, const Tensor& z) {
          return matmul(softmax(matmul(x, y, ta, tb) * 0.3, -1), z, false, tv);
        };
        const std::string label =
            std::string("trans ") + (ta ? "a" : "-") + (tb ? "b" : "-") + (tv ? "v" : "-");
        check(label, kTol, fn, q, k, v);
        EXPECT_EQ(kernels_of(fn, q, k, v), std::vector<std::string>{"k0_attention"}) << label;
      }
    }
  }
}

// The mask is built inside the graph (triu of ones) and folds into the score function; a mask
// row of all -inf gives NaN, as softmax does on the interpreter.
TEST_F(DeviceAttention, CausalMaskAndAllMaskedRows) {
  for (int64_t s : {1, 2, 9, 64, 67}) {
    auto fn = [](const Tensor& q, const Tensor& k, const Tensor& v) {
      Tensor mask = nn::causal_mask(q.size(2), q.device());
      return matmul(softmax(matmul(q, k, false, true) * 0.25 + mask, -1), v);
    };
    Tensor q = rnd(DType::kF32, {2, 2, s, 16}), k = rnd(DType::kF32, {2, 2, s, 16}),
           v = rnd(DType::kF32, {2, 2, s, 16});
    check("causal S=" + std::to_string(s), kTol, fn, q, k, v);
    EXPECT_EQ(kernels_of(fn, q, k, v), std::vector<std::string>{"k0_attention"});
  }
  auto masked = [](const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& m) {
    return matmul(softmax(matmul(q, k, false, true) + m, -1), v);
  };
  std::vector<double> mv(5 * 6, 0.0);
  for (int j = 0; j < 6; ++j) mv[2 * 6 + j] = -INFINITY;  // row 2: every key masked
  for (int i = 0; i < 5; ++i) mv[i * 6 + 5] = -INFINITY;
  Tensor m = test::tensor_from_doubles(DType::kF32, {5, 6}, mv);
  check("all-masked row", kTol, masked, rnd(DType::kF32, {3, 5, 8}), rnd(DType::kF32, {3, 6, 8}),
        rnd(DType::kF32, {3, 6, 8}), m);
}

// No keys: the product over an empty dim is 0. No queries: an empty output.
TEST_F(DeviceAttention, EmptyLengths) {
  auto fn = [](const Tensor& q, const Tensor& k, const Tensor& v) { return attention(q, k, v, 1); };
  check("no keys", kTol, fn, rnd(DType::kF32, {2, 3, 8}), rnd(DType::kF32, {2, 0, 8}),
        rnd(DType::kF32, {2, 0, 8}));
  check("no queries", kTol, fn, rnd(DType::kF32, {2, 0, 8}), rnd(DType::kF32, {2, 4, 8}),
        rnd(DType::kF32, {2, 4, 8}));
}

// nn::MultiheadAttention: q, k, v projections with their biases stored by the row-block kernels
// (kEpilogueRoot), the heads read through views, the attention output written in the merged
// [b, s, dim] layout the out projection reads: five kernels, no copies.
TEST_F(DeviceAttention, MultiheadAttentionIsFiveKernels) {
  nn::WeightGenerator gen(7);
  nn::MultiheadAttention mha(32, 4, gen, Device::vulkan());
  nn::MultiheadAttention mha_cpu = mha;
  for (nn::Linear* l : {&mha_cpu.q, &mha_cpu.k, &mha_cpu.v, &mha_cpu.out}) {
    l->weight = l->weight.to(Device::cpu());
    l->bias = l->bias.to(Device::cpu());
  }
  for (int64_t s : {5, 40}) {
    Tensor x = rnd(DType::kF32, {3, s, 32});
    Tensor want = mha_cpu(x, nn::causal_mask(s, Device::cpu()));
    auto fn = [&mha](const Tensor& t) { return mha(t, nn::causal_mask(t.size(1), t.device())); };
    auto compiled = compile(fn);
    Tensor got = compiled(x.to(Device::vulkan()));
    test::expect_close(got, want, kTol, "mha S=" + std::to_string(s));
    std::vector<EntryInfo> entries = compiled.entries();
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].kernels.size(), 5u) << entries[0].graph;
    int attention_kernels = 0;
    for (const std::string& k : entries[0].kernels)
      attention_kernels += k.find("attention") != std::string::npos;
    EXPECT_EQ(attention_kernels, 1) << entries[0].graph;
  }
}

// A sequence length that changes becomes a size symbol (Dynamic::kAuto): the second length
// recompiles once, and that compile's one attention kernel serves every later length.
TEST_F(DeviceAttention, OneCompileServesEveryLength) {
  auto fn = [](const Tensor& q, const Tensor& k, const Tensor& v) {
    Tensor mask = nn::causal_mask(q.size(1), q.device());
    return matmul(softmax(matmul(q, k, false, true) * 0.5 + mask, -1), v);
  };
  auto compiled = compile(fn);
  for (int64_t s : {3, 17, 64, 9, 2}) {
    Tensor q = rnd(DType::kF32, {2, s, 8}), k = rnd(DType::kF32, {2, s, 8}),
           v = rnd(DType::kF32, {2, s, 8});
    Tensor want = fn(q, k, v);
    test::expect_close(
        compiled(q.to(Device::vulkan()), k.to(Device::vulkan()), v.to(Device::vulkan())), want,
        kTol, "dynamic S=" + std::to_string(s));
  }
  EXPECT_EQ(compiled.stats().compiles, 2u);
  EXPECT_EQ(compiled.stats().dynamic_compiles, 1u);
  for (const EntryInfo& e : compiled.entries())
    EXPECT_EQ(e.kernels, std::vector<std::string>{"k0_attention"}) << e.graph;
}

}  // namespace
}  // namespace kiln
