// The fusion rules around contractions, one at a time, without a device: kEpilogueRoot (a
// linear's bias or activation stored by the matmul kernel when a view or another matmul reads
// it), the row-block kernel reading a reshape of a stored tensor, and kAttention's legality
// (what matches, what must not) with the kernel counts and GLSL of the planned graphs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/fusion.h"
#include "codegen/lower.h"
#include "codegen/spirv.h"
#include "null/graph_builders.h"

namespace kiln {
namespace {

using test::add;
using test::generic_options;
using test::shuffle_options;

KernelPlan plan_and_compile(const Graph& g, const CodegenOptions& opt = shuffle_options()) {
  auto plan = plan_kernels(g, opt);
  EXPECT_TRUE(plan.ok()) << plan.status().to_string();
  if (!plan.ok()) return {};
  Status st = compile_kernels(*plan, opt);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return std::move(plan).value();
}

Attrs trans_b() {
  Attrs a;
  a.trans_b = true;
  return a;
}
Attrs scalar(double v) {
  Attrs a;
  a.scalar = v;
  a.dtype = DType::kF32;
  return a;
}
Attrs axis(int64_t ax) {
  Attrs a;
  a.axis = ax;
  return a;
}
Attrs dims(std::vector<int64_t> d) {
  Attrs a;
  a.dims = std::move(d);
  return a;
}

// x·Wᵀ + b, then a head split (reshape + permute) read by a second matmul: the add is the
// first matmul's stored epilogue, so the second matmul reads a stored tensor through views.
TEST(FusionRules, EpilogueRootBeforeAView) {
  Graph g;
  NodeId x = g.add_input({DType::kF32, {6, 32}});
  NodeId w = g.add_input({DType::kF32, {32, 32}});
  NodeId b = g.add_input({DType::kF32, {32}});
  NodeId mm = add(g, OpKind::MatMul, {x, w}, trans_b());
  NodeId biased = add(g, OpKind::Add, {mm, b});
  NodeId split = add(g, OpKind::Reshape, {biased}, dims({6, 4, 8}));
  NodeId heads = add(g, OpKind::Permute, {split}, dims({1, 0, 2}));
  NodeId other = g.add_input({DType::kF32, {4, 6, 8}});
  NodeId y = add(g, OpKind::MatMul, {heads, other}, trans_b());
  g.set_outputs({y});
  const FusionDecision d = decide_fusion(g, true);
  EXPECT_EQ(d.rule[biased], FusionRule::kEpilogueRoot);
  EXPECT_TRUE(d.materialize[biased]);
  EXPECT_EQ(d.epilogue_of[biased], mm);
  EXPECT_EQ(d.rule[mm], FusionRule::kMatmulEpilogue);
  KernelPlan plan = plan_and_compile(g);
  ASSERT_EQ(plan.kernels.size(), 2u);
  EXPECT_EQ(plan.kernels[0].name, "k0_matmul_add");
  EXPECT_EQ(plan.kernels[0].variant, KernelVariant::kMatmulRowBlock);
  // Without fusion every op is its own kernel (views still fold).
  EXPECT_EQ(decide_fusion(g, false).rule[biased], FusionRule::kUnfused);
}

// linear -> relu -> linear: relu is the first kernel's epilogue, and the second linear reads
// a stored operand, so both run as row-block kernels.
TEST(FusionRules, ActivationBetweenLinearsIsStoredByTheFirst) {
  Graph g;
  NodeId x = g.add_input({DType::kF32, {9, 16}});
  NodeId w1 = g.add_input({DType::kF32, {24, 16}});
  NodeId w2 = g.add_input({DType::kF32, {8, 24}});
  NodeId h = add(g, OpKind::MatMul, {x, w1}, trans_b());
  NodeId r = add(g, OpKind::Relu, {h});
  NodeId y = add(g, OpKind::MatMul, {r, w2}, trans_b());
  g.set_outputs({y});
  KernelPlan plan = plan_and_compile(g);
  ASSERT_EQ(plan.kernels.size(), 2u);
  EXPECT_EQ(plan.kernels[0].name, "k0_matmul_relu");
  EXPECT_EQ(plan.kernels[0].variant, KernelVariant::kMatmulRowBlock);
  EXPECT_EQ(plan.kernels[1].variant, KernelVariant::kMatmulRowBlock);
  // A chain that reads the matmul's own operand (x + x·W) is not moved into its store.
  Graph g2;
  NodeId a = g2.add_input({DType::kF32, {9, 16}});
  NodeId w = g2.add_input({DType::kF32, {16, 16}});
  NodeId p = add(g2, OpKind::MatMul, {a, w}, trans_b());
  NodeId res = add(g2, OpKind::Add, {p, a});
  NodeId z = add(g2, OpKind::MatMul, {res, w}, trans_b());
  g2.set_outputs({z});
  EXPECT_EQ(decide_fusion(g2, true).rule[res], FusionRule::kInlinePointwise);
}

// linear -> bias -> HardSwish -> linear: the HardSwish reads the biased product twice
// (x · clip(x / 6 + 1/2, 0, 1)); the first kernel applies the whole region and stores only its
// exit, so the plan has two kernels and the biased product is never stored. A region whose
// inner node is also read outside it (here by the graph's second output) stores that node
// instead: it is not applied again by the kernel of its readers.
TEST(FusionRules, EpilogueRegionReadingTheProductTwiceIsStoredAtItsExit) {
  for (bool leak : {false, true}) {
    Graph g;
    NodeId x = g.add_input({DType::kF32, {9, 16}});
    NodeId w1 = g.add_input({DType::kF32, {24, 16}});
    NodeId b1 = g.add_input({DType::kF32, {24}});
    NodeId w2 = g.add_input({DType::kF32, {8, 24}});
    NodeId h = add(g, OpKind::MatMul, {x, w1}, trans_b());
    NodeId biased = add(g, OpKind::Add, {h, b1});
    NodeId sixth = add(g, OpKind::Full, {}, scalar(1.0 / 6.0));
    NodeId half = add(g, OpKind::Full, {}, scalar(0.5));
    NodeId zero = add(g, OpKind::Full, {}, scalar(0.0));
    NodeId one = add(g, OpKind::Full, {}, scalar(1.0));
    NodeId scaled = add(g, OpKind::Mul, {biased, sixth});
    NodeId shifted = add(g, OpKind::Add, {scaled, half});
    NodeId lo = add(g, OpKind::Maximum, {shifted, zero});
    NodeId gate = add(g, OpKind::Minimum, {lo, one});
    NodeId hs = add(g, OpKind::Mul, {biased, gate});
    NodeId y = add(g, OpKind::MatMul, {hs, w2}, trans_b());
    if (leak)
      g.set_outputs({y, gate});
    else
      g.set_outputs({y});
    const FusionDecision d = decide_fusion(g, true);
    if (!leak) {
      EXPECT_EQ(d.rule[hs], FusionRule::kEpilogueRoot);
      EXPECT_EQ(d.epilogue_of[hs], h);
      EXPECT_FALSE(d.materialize[biased]);
      EXPECT_FALSE(d.materialize[gate]);
      KernelPlan plan = plan_and_compile(g);
      ASSERT_EQ(plan.kernels.size(), 2u);
      EXPECT_EQ(plan.kernels[0].name, "k0_matmul_mul");
      EXPECT_EQ(plan.kernels[1].variant, KernelVariant::kMatmulRowBlock);
    } else {
      // The gate is an output: the region closes at it, the multiply after it reads it stored.
      EXPECT_TRUE(d.materialize[gate]);
      EXPECT_NE(d.rule[hs], FusionRule::kEpilogueRoot);
      EXPECT_TRUE(plan_and_compile(g).kernels.size() >= 2u);
    }
  }
}

// Regions that must not become epilogues, or only once: two products whose regions share
// nodes (the second region is not taken: the first one's exit applies them), an attention
// whose additive score bias is another product's HardSwish-like region (the scores chain stays
// the attention kernel's), and a product plus 1 followed by 40 squarings, each reading the previous
// node twice (the searches through the region visit each node once: walking every path took
// time exponential in the depth). Every plan compiles.
TEST(FusionRules, EpilogueRegionsLeaveOtherRulesAndEachOtherAlone) {
  {
    Graph g;
    NodeId x1 = g.add_input({DType::kF32, {8, 16}});
    NodeId w1 = g.add_input({DType::kF32, {16, 16}});
    NodeId x2 = g.add_input({DType::kF32, {8, 16}});
    NodeId w2 = g.add_input({DType::kF32, {16, 16}});
    NodeId mm1 = add(g, OpKind::MatMul, {x1, w1});
    NodeId mm2 = add(g, OpKind::MatMul, {x2, w2});
    NodeId y = add(g, OpKind::Add, {mm1, add(g, OpKind::Full, {}, scalar(1.0))});
    NodeId t = add(g, OpKind::Mul, {y, mm2});
    NodeId s = add(g, OpKind::Add, {t, y});
    NodeId v = add(g, OpKind::Mul, {y, add(g, OpKind::Full, {}, scalar(3.0))});
    NodeId f = add(g, OpKind::Add, {s, x2});
    NodeId e = add(g, OpKind::Add, {f, v});
    g.set_outputs({e});
    const FusionDecision d = decide_fusion(g, true);
    EXPECT_EQ(d.epilogue_of[e], mm1);
    EXPECT_FALSE(d.materialize[s]);
    EXPECT_TRUE(d.materialize[mm2]);
    EXPECT_EQ(plan_and_compile(g).kernels.size(), 2u);
  }
  {
    Graph g;
    NodeId q = g.add_input({DType::kF32, {2, 8, 8}});
    NodeId k = g.add_input({DType::kF32, {2, 8, 8}});
    NodeId vv = g.add_input({DType::kF32, {2, 8, 8}});
    NodeId xa = g.add_input({DType::kF32, {2, 8, 8}});
    NodeId w = g.add_input({DType::kF32, {8, 8}});
    NodeId c = g.add_input({DType::kF32, {8}});
    NodeId sc =
        add(g, OpKind::Mul,
            {add(g, OpKind::MatMul, {q, k}, trans_b()), add(g, OpKind::Full, {}, scalar(0.125))});
    NodeId b = add(g, OpKind::Add, {add(g, OpKind::MatMul, {xa, w}), c});
    NodeId h = add(g, OpKind::Mul, {b, add(g, OpKind::Relu, {b})});
    NodeId t = add(g, OpKind::Add, {sc, h});
    NodeId out = add(g, OpKind::MatMul, {add(g, OpKind::Softmax, {t}, axis(-1)), vv});
    g.set_outputs({out});
    const FusionDecision d = decide_fusion(g, true, true);
    EXPECT_NE(d.rule[t], FusionRule::kEpilogueRoot);
    EXPECT_FALSE(plan_and_compile(g).kernels.empty());
  }
  {
    Graph g;
    NodeId x = g.add_input({DType::kF32, {8, 16}});
    NodeId w = g.add_input({DType::kF32, {16, 16}});
    const NodeId mm = add(g, OpKind::MatMul, {x, w}, trans_b());
    NodeId y = add(g, OpKind::Add, {mm, add(g, OpKind::Full, {}, scalar(1.0))});
    for (int i = 0; i < 40; ++i) y = add(g, OpKind::Mul, {y, y});
    g.set_outputs({y});
    const FusionDecision d = decide_fusion(g, true);
    EXPECT_EQ(d.epilogue_of[y], mm);
    EXPECT_EQ(plan_and_compile(g).kernels.size(), 1u);
  }
}

// An embedding's output is a reshape of the gathered rows: the row-block kernel reads the
// stored rows through it.
TEST(FusionRules, RowBlockReadsAReshapeOfAStoredTensor) {
  Graph g;
  NodeId table = g.add_input({DType::kF32, {50, 16}});
  NodeId ids = g.add_input({DType::kI64, {12}});
  Attrs ax0;
  ax0.axis = 0;
  NodeId rows = add(g, OpKind::IndexSelect, {table, ids}, ax0);
  NodeId w = g.add_input({DType::kF32, {8, 16}});
  NodeId x = add(g, OpKind::Reshape, {rows}, dims({3, 4, 16}));
  NodeId y1 = add(g, OpKind::MatMul, {x, w}, trans_b());
  NodeId y2 = add(g, OpKind::Relu, {x});
  g.set_outputs({y1, y2});
  KernelPlan plan = plan_and_compile(g);
  bool found = false;
  for (const Kernel& k : plan.kernels) {
    if (k.root != y1) continue;
    found = true;
    EXPECT_EQ(k.variant, KernelVariant::kMatmulRowBlock);
    EXPECT_EQ(k.bindings[1], rows);  // A is the gathered rows' buffer
  }
  EXPECT_TRUE(found);
}

/// softmax(q·kᵀ * 0.125 + mask)·v over [2, 4, S, dh]; returns the graph's node ids.
struct AttentionGraph {
  Graph g;
  NodeId q, k, v, mask, scores, scaled, masked, sm, out;
};
void build_attention(AttentionGraph& a, int64_t dh, OpKind norm = OpKind::Softmax,
                     int64_t norm_axis = -1) {
  Graph& g = a.g;
  a.q = g.add_input({DType::kF32, {2, 4, 10, dh}});
  a.k = g.add_input({DType::kF32, {2, 4, 10, dh}});
  a.v = g.add_input({DType::kF32, {2, 4, 10, dh}});
  a.mask = g.add_input({DType::kF32, {10, 10}});
  a.scores = add(g, OpKind::MatMul, {a.q, a.k}, trans_b());
  NodeId c = add(g, OpKind::Full, {}, scalar(0.125));
  a.scaled = add(g, OpKind::Mul, {a.scores, c});
  a.masked = add(g, OpKind::Add, {a.scaled, a.mask});
  a.sm = add(g, norm, {a.masked}, axis(norm_axis));
  a.out = add(g, OpKind::MatMul, {a.sm, a.v});
}

TEST(FusionRules, AttentionMatchesTheDecomposedForm) {
  AttentionGraph a;
  build_attention(a, 16);
  // Merge the heads: [2, 4, 10, 16] -> [2, 10, 4, 16] -> [2, 10, 64].
  NodeId p = add(a.g, OpKind::Permute, {a.out}, dims({0, 2, 1, 3}));
  NodeId r = add(a.g, OpKind::Reshape, {p}, dims({2, 10, 64}));
  NodeId y = add(a.g, OpKind::Relu, {r});
  a.g.set_outputs({y});
  const FusionDecision d = decide_fusion(a.g, true, true);
  for (NodeId id : {a.scores, a.sm, a.out}) {
    EXPECT_EQ(d.rule[id], FusionRule::kAttention) << id;
    EXPECT_FALSE(d.materialize[id]) << id;
  }
  EXPECT_TRUE(d.materialize[r]);  // stored in the merged layout
  EXPECT_EQ(d.attention_of[r], a.out);
  KernelPlan plan = plan_and_compile(a.g);
  ASSERT_EQ(plan.kernels.size(), 2u);
  EXPECT_EQ(plan.kernels[0].name, "k0_attention");
  EXPECT_EQ(plan.kernels[0].variant, KernelVariant::kAttention);
  EXPECT_NE(plan.kernels[0].glsl.find("subgroupShuffle"), std::string::npos);
  // A target without subgroup shuffles keeps the decomposed kernels.
  const FusionDecision plain = decide_fusion(a.g, true, false);
  EXPECT_EQ(plain.rule[a.sm], FusionRule::kOwnKernel);
  KernelPlan fallback = plan_and_compile(a.g, generic_options());
  EXPECT_GE(fallback.kernels.size(), 4u);
}

TEST(FusionRules, AttentionLegality) {
  {  // a head dim that is not a multiple of 8
    AttentionGraph a;
    build_attention(a, 12);
    a.g.set_outputs({a.out});
    EXPECT_EQ(decide_fusion(a.g, true, true).rule[a.sm], FusionRule::kOwnKernel);
  }
  {  // log_softmax is not attention
    AttentionGraph a;
    build_attention(a, 8, OpKind::LogSoftmax);
    a.g.set_outputs({a.out});
    EXPECT_NE(decide_fusion(a.g, true, true).rule[a.out], FusionRule::kAttention);
  }
  {  // softmax over another axis
    AttentionGraph a;
    build_attention(a, 8, OpKind::Softmax, 2);
    a.g.set_outputs({a.out});
    EXPECT_NE(decide_fusion(a.g, true, true).rule[a.out], FusionRule::kAttention);
  }
  {  // the probabilities are also an output: they must be stored
    AttentionGraph a;
    build_attention(a, 8);
    a.g.set_outputs({a.out, a.sm});
    EXPECT_NE(decide_fusion(a.g, true, true).rule[a.out], FusionRule::kAttention);
  }
  {  // the scores are read twice
    AttentionGraph a;
    build_attention(a, 8);
    NodeId other = add(a.g, OpKind::Relu, {a.scores});
    a.g.set_outputs({a.out, other});
    EXPECT_NE(decide_fusion(a.g, true, true).rule[a.out], FusionRule::kAttention);
  }
  {  // two products in the score chain (q·kᵀ + q·rᵀ): not one attention kernel
    AttentionGraph a;
    build_attention(a, 8);
    NodeId r = a.g.add_input({DType::kF32, {2, 4, 10, 8}});
    NodeId qr = add(a.g, OpKind::MatMul, {a.q, r}, trans_b());
    NodeId both = add(a.g, OpKind::Add, {a.scores, qr});
    NodeId sm2 = add(a.g, OpKind::Softmax, {both}, axis(-1));
    NodeId out2 = add(a.g, OpKind::MatMul, {sm2, a.v});
    a.g.set_outputs({out2});
    EXPECT_NE(decide_fusion(a.g, true, true).rule[out2], FusionRule::kAttention);
    EXPECT_FALSE(plan_and_compile(a.g).kernels.empty());
  }
  {  // matched: plain output, no heads merge
    AttentionGraph a;
    build_attention(a, 8);
    a.g.set_outputs({a.out});
    const FusionDecision d = decide_fusion(a.g, true, true);
    EXPECT_EQ(d.rule[a.out], FusionRule::kAttention);
    EXPECT_EQ(d.attention_of[a.out], a.out);
    EXPECT_EQ(plan_and_compile(a.g).kernels.size(), 1u);
  }
}

// PyTorch's exporter merges the heads of a [B*H, S, D] attention output as
// permute([1, 0, 2]) -> [S, B*H, D] then reshape -> [S*B, H*D]: the attention kernel writes that
// layout directly, and the out-projection reads it in place on the row-block kernel.
TEST(FusionRules, AttentionStoresTheExportersHeadMerge) {
  Graph g;
  NodeId q = g.add_input({DType::kF32, {8, 10, 16}});
  NodeId k = g.add_input({DType::kF32, {8, 10, 16}});
  NodeId v = g.add_input({DType::kF32, {8, 10, 16}});
  NodeId mask = g.add_input({DType::kF32, {10, 10}});
  NodeId w = g.add_input({DType::kF32, {64, 64}});
  NodeId s = add(g, OpKind::MatMul, {q, k}, trans_b());
  NodeId masked = add(g, OpKind::Add, {s, mask});
  NodeId sm = add(g, OpKind::Softmax, {masked}, axis(-1));
  NodeId out = add(g, OpKind::MatMul, {sm, v});
  NodeId p = add(g, OpKind::Permute, {out}, dims({1, 0, 2}));
  NodeId r = add(g, OpKind::Reshape, {p}, dims({20, 64}));
  NodeId y = add(g, OpKind::MatMul, {r, w}, trans_b());
  g.set_outputs({y});
  const FusionDecision d = decide_fusion(g, true, true, true);
  EXPECT_EQ(d.attention_of[r], out);
  EXPECT_TRUE(d.materialize[r]);
  KernelPlan plan = plan_and_compile(g);
  ASSERT_EQ(plan.kernels.size(), 2u);
  EXPECT_EQ(plan.kernels[0].variant, KernelVariant::kAttention);
  EXPECT_EQ(plan.kernels[1].variant, KernelVariant::kMatmulRowBlock);
}

}  // namespace
}  // namespace kiln
