// The kLayerNorm rule (codegen/fusion_layer_norm.cpp) without a device: a LayerNorm spelled out
// as ops, as ONNX exporters before opset 17 write it, becomes one row-norm kernel; what must not
// match (an intermediate read elsewhere, a mean over other dims, a non-scalar eps) keeps its
// kernels.
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

Attrs mean_over(std::vector<int64_t> dims) {
  Attrs a;
  a.dims = std::move(dims);
  a.keepdim = true;
  return a;
}

struct Spelled {
  Graph g;
  NodeId x = -1, mean = -1, centred = -1, var = -1, normed = -1, root = -1;
};

/// x [rows, cols] (or [2, rows, cols]); PyTorch's export: (x - mean) / sqrt(mean((x - mean)^2)
/// + eps) * gamma + beta; `rsqrt_form`: the importer's own spelling, centred · rsqrt(..) with
/// centred · centred.
Spelled spelled(bool rsqrt_form = false, bool batch = false, std::vector<int64_t> axes = {-1},
                bool scalar_eps = true) {
  Spelled s;
  Graph& g = s.g;
  const Shape shape = batch ? Shape{2, 5, 24} : Shape{7, 24};
  const int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<int64_t> dims;
  for (int64_t a : axes) dims.push_back(a < 0 ? a + rank : a);
  s.x = g.add_input({DType::kF32, shape});
  NodeId gamma = g.add_input({DType::kF32, {24}});
  NodeId beta = g.add_input({DType::kF32, {24}});
  NodeId eps = g.add_constant({DType::kF32, scalar_eps ? Shape{} : Shape{24}}, 0);
  s.mean = add(g, OpKind::Mean, {s.x}, mean_over(dims));
  s.centred = add(g, OpKind::Sub, {s.x, s.mean});
  NodeId sq;
  if (rsqrt_form) {
    sq = add(g, OpKind::Mul, {s.centred, s.centred});
  } else {
    NodeId two = g.add_constant({DType::kF32, {}}, 1);
    sq = add(g, OpKind::Pow, {s.centred, two});
  }
  s.var = add(g, OpKind::Mean, {sq}, mean_over(dims));
  NodeId shifted = add(g, OpKind::Add, {s.var, eps});
  if (rsqrt_form) {
    NodeId r = add(g, OpKind::Rsqrt, {shifted});
    s.normed = add(g, OpKind::Mul, {r, s.centred});
  } else {
    NodeId r = add(g, OpKind::Sqrt, {shifted});
    s.normed = add(g, OpKind::Div, {s.centred, r});
  }
  NodeId scaled = add(g, OpKind::Mul, {s.normed, gamma});
  s.root = add(g, OpKind::Add, {beta, scaled});
  return s;
}

KernelPlan plan(const Graph& g) {
  auto p = plan_kernels(g, generic_options());
  EXPECT_TRUE(p.ok()) << p.status().to_string();
  if (!p.ok()) return {};
  Status st = compile_kernels(*p, generic_options());
  EXPECT_TRUE(st.ok()) << st.to_string();
  return std::move(p).value();
}

TEST(LayerNormRule, ExportersSpellingIsOneKernel) {
  for (bool rsqrt_form : {false, true}) {
    for (bool batch : {false, true}) {
      Spelled s = spelled(rsqrt_form, batch);
      s.g.set_outputs({s.root});
      const FusionDecision d = decide_fusion(s.g, true);
      ASSERT_EQ(d.layer_norms.size(), 1u);
      EXPECT_EQ(d.layer_norm_of[s.root], 0);
      EXPECT_EQ(d.layer_norms[0].x, s.x);
      EXPECT_EQ(d.layer_norms[0].dims, 1);
      for (NodeId id : {s.mean, s.centred, s.var, s.normed}) {
        EXPECT_EQ(d.rule[id], FusionRule::kLayerNorm) << id;
        EXPECT_FALSE(d.materialize[id]) << id;
      }
      const KernelPlan p = plan(s.g);
      ASSERT_EQ(p.kernels.size(), 1u);
      EXPECT_EQ(p.kernels[0].name, "k0_layer_norm");
      EXPECT_EQ(p.kernels[0].variant, KernelVariant::kRowNorm);
      EXPECT_NE(p.kernels[0].glsl.find("kiln_normalize"), std::string::npos);
      EXPECT_NE(p.fusion_log.find("layer_norm"), std::string::npos);
    }
  }
  // Over the trailing two dims.
  Spelled two = spelled(false, true, {1, 2});
  two.g.set_outputs({two.root});
  EXPECT_EQ(decide_fusion(two.g, true).layer_norms.at(0).dims, 2);
  EXPECT_EQ(plan(two.g).kernels.size(), 1u);
}

// Without the affine tail the normalised value itself is the root; followed by a linear, the
// chain's end is stored by the norm kernel and the linear reads it.
TEST(LayerNormRule, RootIsTheChainEnd) {
  Spelled s = spelled();
  NodeId w = s.g.add_input({DType::kF32, {24, 8}});
  NodeId y = add(s.g, OpKind::MatMul, {s.root, w});
  s.g.set_outputs({y});
  const FusionDecision d = decide_fusion(s.g, true);
  ASSERT_EQ(d.layer_norms.size(), 1u);
  EXPECT_EQ(d.layer_norms[0].root, s.root);
  EXPECT_TRUE(d.materialize[s.root]);
  EXPECT_EQ(plan(s.g).kernels.size(), 2u);
}

TEST(LayerNormRule, WhatMustNotMatch) {
  {  // The mean is read elsewhere too.
    Spelled s = spelled();
    s.g.set_outputs({s.root, s.mean});
    EXPECT_TRUE(decide_fusion(s.g, true).layer_norms.empty());
  }
  {  // The centred value is read elsewhere too.
    Spelled s = spelled();
    NodeId extra = add(s.g, OpKind::Relu, {s.centred});
    s.g.set_outputs({s.root, extra});
    EXPECT_TRUE(decide_fusion(s.g, true).layer_norms.empty());
  }
  {  // Means over a leading dim.
    Spelled s = spelled(false, true, {1});
    s.g.set_outputs({s.root});
    EXPECT_TRUE(decide_fusion(s.g, true).layer_norms.empty());
  }
  {  // eps per column is not a LayerNorm's.
    Spelled s = spelled(false, false, {-1}, false);
    s.g.set_outputs({s.root});
    EXPECT_TRUE(decide_fusion(s.g, true).layer_norms.empty());
  }
  {  // Fusion off: every op its own kernel.
    Spelled s = spelled();
    s.g.set_outputs({s.root});
    EXPECT_TRUE(decide_fusion(s.g, false).layer_norms.empty());
  }
}

}  // namespace
}  // namespace kiln
