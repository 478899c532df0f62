// Codegen without a device: fusion rules, emitted GLSL properties, shaderc + spirv-val.
#include <gtest/gtest.h>

#include "codegen/fusion.h"
#include "codegen/lower.h"
#include "codegen/spirv.h"

namespace kiln {
namespace {

NodeId add(Graph& g, OpKind op, std::vector<NodeId> in, Attrs a = {}) {
  auto r = g.add(op, std::move(in), std::move(a));
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return *r;
}

CodegenOptions generic_options(bool fuse = true) {
  CodegenOptions o;
  o.fuse = fuse;
  o.caps = TargetCaps::generic();
  return o;
}

// y = relu((x * a + b) * c - d), x 2-D, a..d broadcast 1-D.
Graph chain_graph(Dim rows, Dim cols) {
  Graph g;
  NodeId x = g.add_input({DType::kF32, {rows, cols}});
  NodeId a = g.add_input({DType::kF32, {cols}});
  NodeId b = g.add_input({DType::kF32, {cols}});
  NodeId c = g.add_input({DType::kF32, {cols}});
  NodeId d = g.add_input({DType::kF32, {cols}});
  NodeId y = add(g, OpKind::Mul, {x, a});
  y = add(g, OpKind::Add, {y, b});
  y = add(g, OpKind::Mul, {y, c});
  y = add(g, OpKind::Sub, {y, d});
  y = add(g, OpKind::Relu, {y});
  g.set_outputs({y});
  return g;
}

TEST(Fusion, PointwiseChainIsOneKernel) {
  Graph g = chain_graph(5, 8);
  auto plan = plan_kernels(g, generic_options());
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  ASSERT_EQ(plan->kernels.size(), 1u);
  const Kernel& k = plan->kernels[0];
  EXPECT_EQ(k.variant, KernelVariant::kElementwiseVec4);
  EXPECT_EQ(k.fused_nodes.size(), 5u);
  EXPECT_EQ(k.bindings.size(), 6u);  // output + x, a, b, c, d
  Status st = compile_kernels(*plan, generic_options());
  ASSERT_TRUE(st.ok()) << st.to_string() << "\n" << plan->kernels[0].glsl;
  EXPECT_FALSE(plan->kernels[0].spirv.empty());
  EXPECT_TRUE(validate_spirv(plan->kernels[0].spirv).ok());
}

TEST(Fusion, OddInnerSizeFallsBackToScalar) {
  Graph g = chain_graph(3, 7);
  auto plan = plan_kernels(g, generic_options());
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->kernels.size(), 1u);
  EXPECT_EQ(plan->kernels[0].variant, KernelVariant::kElementwise);
  Status st = compile_kernels(*plan, generic_options());
  EXPECT_TRUE(st.ok()) << st.to_string() << "\n" << plan->kernels[0].glsl;
}

TEST(Fusion, UnfusedIsOneKernelPerOp) {
  Graph g = chain_graph(4, 4);
  auto plan = plan_kernels(g, generic_options(/*fuse=*/false));
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->kernels.size(), 5u);
}

}  // namespace
}  // namespace kiln
