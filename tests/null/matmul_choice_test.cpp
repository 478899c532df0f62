// The matmul kernel choice from what the operands are (codegen/matmul_choice.h), without a
// device: kMatmulOperand stores an A operand the row-block kernel cannot read in place (a
// permuted view, elementwise arithmetic folded into its loads) when the estimate says so, and
// the fusion log says why each matmul got its kernel.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "codegen/fusion.h"
#include "codegen/lower.h"
#include "codegen/matmul_choice.h"
#include "null/graph_builders.h"

namespace kiln {
namespace {

using test::add;
using test::generic_options;
using test::shuffle_options;

Attrs trans_b() {
  Attrs a;
  a.trans_b = true;
  return a;
}
Attrs dims(std::vector<int64_t> d) {
  Attrs a;
  a.dims = std::move(d);
  return a;
}

KernelPlan plan(const Graph& g, const CodegenOptions& opt = shuffle_options()) {
  auto p = plan_kernels(g, opt);
  EXPECT_TRUE(p.ok()) << p.status().to_string();
  return p.ok() ? std::move(p).value() : KernelPlan{};
}

int count_variant(const KernelPlan& p, KernelVariant v) {
  int n = 0;
  for (const Kernel& k : p.kernels) n += k.variant == v;
  return n;
}

// The exporter's [B, S, E] -> [S, B, E] transpose before a linear: x [4, 128, 64] permuted,
// times w [192, 64] transposed. Returns the graph, the permute and the matmul.
std::tuple<Graph, NodeId, NodeId> permuted_linear() {
  Graph g;
  NodeId x = g.add_input({DType::kF32, {4, 128, 64}});
  NodeId w = g.add_input({DType::kF32, {192, 64}});
  NodeId t = add(g, OpKind::Permute, {x}, dims({1, 0, 2}));
  NodeId mm = add(g, OpKind::MatMul, {t, w}, trans_b());
  g.set_outputs({mm});
  return {std::move(g), t, mm};
}

// The exporter's [B, S, E] -> [S, B, E] transpose before a linear: without the rule the
// product is S batches of B rows on the tiled kernel; with it the permuted A is stored once
// and the product runs on the row-block kernel over all S*B rows.
TEST(MatmulChoice, PermutedOperandIsStoredForTheRowBlockKernel) {
  auto [g, t, mm] = permuted_linear();
  const FusionDecision d = decide_fusion(g, true, false, true);
  EXPECT_EQ(d.rule[t], FusionRule::kMatmulOperand);
  EXPECT_TRUE(d.materialize[t]);
  EXPECT_NE(d.note[t].find("store A for the row-block kernel"), std::string::npos) << d.note[t];
  EXPECT_NE(d.note[mm].find("row-block kernel"), std::string::npos) << d.note[mm];
  const KernelPlan p = plan(g);
  ASSERT_EQ(p.kernels.size(), 2u);
  EXPECT_EQ(p.kernels[1].variant, KernelVariant::kMatmulRowBlock);
  EXPECT_NE(p.fusion_log.find("matmul_operand"), std::string::npos) << p.fusion_log;
  // A target without the row-block kernel keeps the view folded into the tiled kernel's loads,
  // and the log says why.
  const FusionDecision plain = decide_fusion(g, true, false, false);
  EXPECT_EQ(plain.rule[t], FusionRule::kInlineView);
  EXPECT_NE(plain.note[mm].find("tiled kernel (target lacks subgroup shuffles)"), std::string::npos)
      << plain.note[mm];
}

// A LayerNorm's arithmetic in front of the vocabulary head, folded into A's loads, used to
// demote the head to the tiled kernel: the arithmetic's result is stored instead.
TEST(MatmulChoice, FoldedArithmeticIsStoredForTheRowBlockKernel) {
  Graph g;
  NodeId x = g.add_input({DType::kF32, {512, 64}});
  NodeId gamma = g.add_input({DType::kF32, {64}});
  NodeId beta = g.add_input({DType::kF32, {64}});
  NodeId w = g.add_input({DType::kF32, {256, 64}});
  NodeId scaled = add(g, OpKind::Mul, {x, gamma});
  NodeId shifted = add(g, OpKind::Add, {scaled, beta});
  NodeId mm = add(g, OpKind::MatMul, {shifted, w}, trans_b());
  g.set_outputs({mm});
  const FusionDecision d = decide_fusion(g, true, false, true);
  EXPECT_EQ(d.rule[shifted], FusionRule::kMatmulOperand);
  EXPECT_EQ(d.rule[scaled], FusionRule::kInlinePointwise);
  const KernelPlan p = plan(g);
  ASSERT_EQ(p.kernels.size(), 2u);
  EXPECT_EQ(count_variant(p, KernelVariant::kMatmulRowBlock), 1);
  EXPECT_EQ(count_variant(p, KernelVariant::kMatmulTiled), 0);
}

// Stored operands need nothing; a reshape of a stored tensor is read in place.
TEST(MatmulChoice, StoredOrReshapedOperandsAreLeftAlone) {
  Graph g;
  NodeId x = g.add_input({DType::kF32, {4, 16, 32}});
  NodeId w = g.add_input({DType::kF32, {32, 32}});
  NodeId r = add(g, OpKind::Reshape, {x}, dims({64, 32}));
  NodeId mm = add(g, OpKind::MatMul, {r, w});
  g.set_outputs({mm});
  const FusionDecision d = decide_fusion(g, true, false, true);
  EXPECT_EQ(d.rule[r], FusionRule::kInlineView);
  EXPECT_FALSE(operand_needs_store(g, d, r));
  const KernelPlan p = plan(g);
  ASSERT_EQ(p.kernels.size(), 1u);
  EXPECT_EQ(p.kernels[0].variant, KernelVariant::kMatmulRowBlock);
}

// Shapes the row-block kernel cannot run are not stored for it: B with batch dims (Q·Kᵀ), K not
// a multiple of 4; the note names the reason.
TEST(MatmulChoice, NoStoreWhenTheRowBlockKernelCannotRun) {
  Graph g;
  NodeId q = g.add_input({DType::kF32, {4, 8, 16}});
  NodeId k = g.add_input({DType::kF32, {8, 4, 16}});
  NodeId kt = add(g, OpKind::Permute, {k}, dims({1, 0, 2}));
  NodeId qt = add(g, OpKind::Permute, {q}, dims({0, 1, 2}));
  NodeId s = add(g, OpKind::MatMul, {qt, kt}, trans_b());
  g.set_outputs({s});
  const FusionDecision d = decide_fusion(g, true, false, true);
  EXPECT_NE(d.rule[qt], FusionRule::kMatmulOperand);
  EXPECT_NE(d.note[s].find("B has batch dims"), std::string::npos) << d.note[s];

  Graph h;
  NodeId a = h.add_input({DType::kF32, {6, 5, 10}});
  NodeId w = h.add_input({DType::kF32, {7, 10}});
  NodeId at = add(h, OpKind::Permute, {a}, dims({1, 0, 2}));
  NodeId mm = add(h, OpKind::MatMul, {at, w}, trans_b());
  h.set_outputs({mm});
  const FusionDecision dh = decide_fusion(h, true, false, true);
  EXPECT_EQ(dh.rule[at], FusionRule::kInlineView);
  EXPECT_NE(dh.note[mm].find("K not a constant multiple of 4"), std::string::npos) << dh.note[mm];
}

MatmulRates rates(double rowblock, double tiled, double copy = 3e6) {
  MatmulRates r;
  r.rowblock_flops_per_ms = rowblock;
  r.tiled_flops_per_ms = tiled;
  r.copy_bytes_per_ms = copy;
  r.measured = true;
  return r;
}

// The estimate: a 4-row batch fills an eighth of a tile, so the tiled figure grows 8x over
// full tiles, while the row-block figure sees all rows. Without measured rates there is none.
TEST(MatmulChoice, EstimateCountsPartialTiles) {
  Graph g;
  NodeId a = g.add_input({DType::kF32, {128, 4, 512}});
  NodeId w = g.add_input({DType::kF32, {1536, 512}});
  NodeId mm = add(g, OpKind::MatMul, {a, w}, trans_b());
  g.set_outputs({mm});
  const MatmulEstimate none = estimate_matmul(g, g.node(mm), MatmulRates{});
  EXPECT_FALSE(none.measured);
  EXPECT_EQ(none.tiled_ms, 0);
  EXPECT_EQ(none.batches, 128);
  const MatmulEstimate e = estimate_matmul(g, g.node(mm), rates(60e6, 5e6));
  EXPECT_TRUE(e.measured);
  EXPECT_EQ(e.batches, 128);
  EXPECT_EQ(e.rows_per_batch, 4);
  EXPECT_GT(e.tiled_ms, 50 * e.rowblock_ms);
  EXPECT_GT(e.store_a_ms, 0);
  EXPECT_LT(e.store_a_ms, e.rowblock_ms);
  EXPECT_NEAR(e.store_b_ms, 3 * e.store_a_ms, 1e-9 * e.store_a_ms);  // B [1536, 512], A 128x4x512
}

// With measured rates the kernel follows them: a stored 256x256x256 product runs on the
// row-block kernel while its rate is the higher one and on the tiled kernel once the tiled
// rate is; the note says which rates decided. Without rates the structural rule picks the
// row-block kernel.
TEST(MatmulChoice, MeasuredRatesFlipTheKernel) {
  Graph g;
  NodeId a = g.add_input({DType::kF32, {256, 256}});
  NodeId b = g.add_input({DType::kF32, {256, 256}});
  NodeId mm = add(g, OpKind::MatMul, {a, b});
  g.set_outputs({mm});
  auto variant = [&](const MatmulRates& r) {
    CodegenOptions o = shuffle_options();
    o.caps.matmul = r;
    const KernelPlan p = plan(g, o);
    return p.kernels.empty() ? KernelVariant::kElementwise : p.kernels[0].variant;
  };
  EXPECT_EQ(variant(MatmulRates{}), KernelVariant::kMatmulRowBlock);
  EXPECT_EQ(variant(rates(60e6, 5e6)), KernelVariant::kMatmulRowBlock);
  EXPECT_EQ(variant(rates(5e6, 60e6)), KernelVariant::kMatmulTiled);
  EXPECT_EQ(variant(rates(0, 5e6)), KernelVariant::kMatmulTiled);  // row-block not measured
  // A forced kernel (calibration) wins over the rates.
  MatmulRates forced = rates(60e6, 5e6);
  forced.force = MatmulRates::Force::kTiled;
  EXPECT_EQ(variant(forced), KernelVariant::kMatmulTiled);
  forced = rates(5e6, 60e6);
  forced.force = MatmulRates::Force::kRowBlock;
  EXPECT_EQ(variant(forced), KernelVariant::kMatmulRowBlock);

  const FusionDecision none = decide_fusion(g, true, false, true);
  EXPECT_NE(none.note[mm].find("structural rule"), std::string::npos) << none.note[mm];
  const FusionDecision slow = decide_fusion(g, true, false, true, rates(5e6, 60e6));
  EXPECT_NE(slow.note[mm].find("tiled kernel (estimated faster)"), std::string::npos)
      << slow.note[mm];
  EXPECT_NE(slow.note[mm].find("measured on this device"), std::string::npos) << slow.note[mm];
  // The rates are part of the compiled graph's key.
  CodegenOptions o = shuffle_options(), measured = shuffle_options();
  measured.caps.matmul = rates(60e6, 5e6);
  EXPECT_NE(graph_cache_key(g, o), graph_cache_key(g, measured));
}

// Storing a permuted A for the row-block kernel follows the rates too: not when the tiled
// kernel beats the copy plus the row-block product.
TEST(MatmulChoice, MeasuredRatesDecideTheOperandStore) {
  auto [g, t, mm] = permuted_linear();
  EXPECT_EQ(decide_fusion(g, true, false, true, rates(60e6, 5e6)).rule[t],
            FusionRule::kMatmulOperand);
  const FusionDecision d = decide_fusion(g, true, false, true, rates(5e6, 60e6));
  EXPECT_EQ(d.rule[t], FusionRule::kInlineView);
  EXPECT_NE(d.note[mm].find("tiled kernel"), std::string::npos) << d.note[mm];
}

}  // namespace
}  // namespace kiln
