// Conv codegen without a device: which kernel each conv gets (the implicit GEMM of
// codegen/lower_conv_gemm.cpp or the direct window kernel) and the GLSL of both compiling
// through glslang + spirv-val, for 1-D, 2-D and 3-D convs, partial channel blocks, symbolic
// sizes and each reason the implicit GEMM does not apply.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codegen/lower.h"
#include "codegen/spirv.h"
#include "null/graph_builders.h"

namespace kiln {
namespace {

using test::add;
using V = std::vector<int64_t>;

struct ConvCase {
  Shape x, w;
  V strides, pads, dilations;
  int64_t groups = 1;
  DType dtype = DType::kF32;
};

Graph conv_graph(const ConvCase& c, bool bias) {
  Graph g;
  NodeId x = g.add_input({c.dtype, c.x});
  NodeId w = g.add_input({c.dtype, c.w});
  std::vector<NodeId> in = {x, w};
  if (bias) in.push_back(g.add_input({c.dtype, {c.w[0]}}));
  Attrs a;
  a.window.strides = c.strides;
  a.window.pads = c.pads;
  a.window.dilations = c.dilations;
  a.window.groups = c.groups;
  g.set_outputs({add(g, OpKind::Conv, in, a)});
  return g;
}

KernelVariant planned_variant(const Graph& g, const CodegenOptions& opt, const std::string& what) {
  auto plan = plan_kernels(g, opt);
  EXPECT_TRUE(plan.ok()) << what << ": " << plan.status().to_string();
  if (!plan.ok() || plan->kernels.size() != 1) return KernelVariant::kElementwise;
  Status st = compile_kernels(*plan, opt);
  EXPECT_TRUE(st.ok()) << what << ": " << st.to_string() << "\n" << plan->kernels[0].glsl;
  if (st.ok()) {
    EXPECT_TRUE(validate_spirv(plan->kernels[0].spirv).ok()) << what;
  }
  return plan->kernels[0].variant;
}

TEST(ConvCodegen, ImplicitGemmForDenseF32Convs) {
  const std::vector<ConvCase> cases = {
      {{1, 3, 13, 11}, {16, 3, 7, 7}, {2, 2}, {3, 3, 3, 3}, {1, 1}},   // a CNN's stem
      {{2, 20, 9, 7}, {40, 20, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}},   // a partial row block
      {{2, 64, 5, 5}, {128, 64, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}},  // 1x1, few positions
      {{2, 5, 40}, {16, 5, 5}, {1}, {2, 2}, {2}},                      // 1-D, dilated
      {{1, 4, 5, 6, 7}, {17, 4, 3, 3, 3}, {1, 2, 1}, {1, 1, 1, 1, 0, 1}, {1, 1, 1}},  // 3-D
  };
  for (bool bias : {false, true})
    for (const ConvCase& c : cases) {
      const std::string what = "conv x" + shape_str(c.x) + " w" + shape_str(c.w);
      EXPECT_EQ(planned_variant(conv_graph(c, bias), test::shuffle_options(), what),
                KernelVariant::kConvGemm)
          << what;
    }
}

// A row block holds 32 output channels, or fewer rounded up to a multiple of 8: a 16-channel
// stem computes 16 rows per invocation, not 32 of which half are clamped copies.
TEST(ConvCodegen, ImplicitGemmRowBlockFollowsTheChannelCount) {
  for (const auto& [c_out, rows] :
       std::vector<std::pair<Dim, int>>{{16, 16}, {17, 24}, {24, 24}, {32, 32}, {40, 32}}) {
    const ConvCase c{{1, 3, 13, 11}, {c_out, 3, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}};
    auto plan = plan_kernels(conv_graph(c, true), test::shuffle_options());
    ASSERT_TRUE(plan.ok()) << plan.status().to_string();
    ASSERT_EQ(plan->kernels.size(), 1u);
    const Kernel& k = plan->kernels[0];
    ASSERT_EQ(k.variant, KernelVariant::kConvGemm);
    // (Preprocessed source: `rb * 16u`.)
    EXPECT_NE(k.glsl.find("i0 = rb * " + std::to_string(rows) + "u;"), std::string::npos)
        << c_out << " channels\n"
        << k.glsl;
    const std::string last = "c" + std::to_string(rows - 1) + "_0";
    EXPECT_NE(k.glsl.find(last), std::string::npos) << c_out << " channels";
    EXPECT_EQ(k.glsl.find("c" + std::to_string(rows) + "_0"), std::string::npos)
        << c_out << " channels";
    EXPECT_EQ(k.groups[0].constant_value(), (c_out + rows - 1) / rows);
  }
}

TEST(ConvCodegen, DirectKernelWhereTheGemmDoesNotApply) {
  const ConvCase dense{{1, 8, 9, 9}, {32, 8, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}};
  // No subgroup shuffles on the target.
  EXPECT_EQ(planned_variant(conv_graph(dense, true), test::generic_options(), "no shuffle"),
            KernelVariant::kWindow);
  ConvCase grouped = dense;
  grouped.w = {32, 4, 3, 3};
  grouped.groups = 2;
  EXPECT_EQ(planned_variant(conv_graph(grouped, true), test::shuffle_options(), "groups"),
            KernelVariant::kWindow);
  ConvCase narrow = dense;
  narrow.w = {15, 8, 3, 3};
  EXPECT_EQ(planned_variant(conv_graph(narrow, true), test::shuffle_options(), "15 channels"),
            KernelVariant::kWindow);
  ConvCase half = dense;
  half.dtype = DType::kF16;
  EXPECT_EQ(planned_variant(conv_graph(half, false), test::shuffle_options(), "f16"),
            KernelVariant::kWindow);
}

// The direct kernel loads a position block's inputs along the last dim once where its windows
// overlap (KILN_SEG: (block - 1) * stride + (taps - 1) * dilation + 1 inputs), and loads per tap
// where that would load more (a 1-wide window, a stride above the window) or more than 32
// (the array must fit a driver's stack). The loop count it declares for llvmpipe's limit
// includes those loads.
TEST(ConvCodegen, DirectKernelLoadsOverlappingRowInputsOnce) {
  struct Case {
    ConvCase c;
    int seg;
  };
  const std::vector<Case> cases = {
      {{{1, 8, 9, 10}, {8, 1, 5, 5}, {1, 1}, {2, 2, 2, 2}, {1, 1}, 8}, 8},  // 3 + 4 + 1
      {{{1, 8, 9, 10}, {8, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 8}, 9},  // 3 * 2 + 2 + 1
      {{{1, 4, 7, 13}, {4, 1, 3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2}, 4}, 8},  // 3 + 2 * 2 + 1
      {{{1, 4, 6, 3}, {4, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 4}, 5},   // a 3-wide block
      {{{2, 3, 17}, {3, 1, 7}, {1}, {3, 3}, {1}, 3}, 10},                   // 1-D
      {{{1, 8, 9, 9}, {8, 1, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 8}, 0},   // 1 tap: 4 = 4
      {{{1, 8, 9, 16}, {8, 1, 1, 2}, {1, 3}, {0, 0, 0, 0}, {1, 1}, 8}, 0},  // stride 3 > 2 taps
      {{{1, 1, 40}, {1, 1, 29}, {1}, {0, 0}, {1}, 1}, 32},                  // 32 inputs: kept
      {{{1, 1, 41}, {1, 1, 30}, {1}, {0, 0}, {1}, 1}, 0},                   // 33: a tap each
  };
  for (const Case& cs : cases) {
    const std::string what = "conv x" + shape_str(cs.c.x) + " w" + shape_str(cs.c.w);
    const Graph g = conv_graph(cs.c, true);
    auto plan = plan_kernels(g, test::shuffle_options());
    ASSERT_TRUE(plan.ok() && plan->kernels.size() == 1) << what;
    const Kernel& k = plan->kernels[0];
    ASSERT_EQ(k.variant, KernelVariant::kWindow) << what;
    // The source comes preprocessed: the row's loads are an array of KILN_SEG floats.
    const size_t xs = k.glsl.find("float xs[");
    if (cs.seg > 0) {
      EXPECT_NE(k.glsl.find("float xs[" + std::to_string(cs.seg) + "]"), std::string::npos)
          << what << ": " << (xs == std::string::npos ? "none" : k.glsl.substr(xs, 20));
    } else {
      EXPECT_EQ(xs, std::string::npos) << what << ": " << k.glsl.substr(xs, 20);
    }
    const Shape& w = cs.c.w;
    int64_t taps = 1;
    for (size_t d = 2; d < w.size(); ++d) taps *= w[d];
    const int64_t rows = taps / w.back();  // window rows: the taps before the last dim
    EXPECT_GE(k.loop_trips.constant_value(), w[1] * (taps + rows * cs.seg)) << what;
    Status st = compile_kernels(*plan, test::shuffle_options());
    EXPECT_TRUE(st.ok()) << what << ": " << st.to_string();
  }
}

// Symbolic batch and spatial sizes: positions, row and column blocks come from push constants.
TEST(ConvCodegen, ImplicitGemmWithSymbolicSizes) {
  ShapeEnv env;
  const SymInt n(env.symbol(env.create_symbol(2, "input 0 dim 0")));
  const SymInt h(env.symbol(env.create_symbol(12, "input 0 dim 2")));
  const SymInt w(env.symbol(env.create_symbol(10, "input 0 dim 3")));
  Graph g;
  g.set_shape_env(&env);
  NodeId x = g.add_input({DType::kF32, {2, 6, 12, 10}}, "", {n, SymInt(6), h, w});
  NodeId wt = g.add_input({DType::kF32, {24, 6, 3, 3}});
  Attrs a;
  a.window.strides = {2, 1};
  a.window.pads = {1, 1, 1, 1};
  a.window.dilations = {1, 1};
  g.set_outputs({add(g, OpKind::Conv, {x, wt}, a)});
  g.canonicalize(env);
  EXPECT_EQ(planned_variant(g, test::shuffle_options(), "symbolic"), KernelVariant::kConvGemm);
}

}  // namespace
}  // namespace kiln
