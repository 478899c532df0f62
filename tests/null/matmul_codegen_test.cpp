// MatMul codegen without a device: the tiled kernel's plan (variant, grid, bindings, fused
// prologue) and its GLSL compiling through glslang + spirv-val for a spread of shapes, transposes,
// 1-D operands, batch broadcasting, dtypes and capped grids.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "codegen/fusion.h"
#include "codegen/lower.h"
#include "codegen/spirv.h"

namespace kiln {
namespace {

NodeId add(Graph& g, OpKind op, std::vector<NodeId> in, Attrs a = {}) {
  auto r = g.add(op, std::move(in), std::move(a));
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : NodeId{-1};
}

CodegenOptions generic_options() {
  CodegenOptions o;
  o.caps = TargetCaps::generic();
  return o;
}

struct MCase {
  Shape a, b;
  bool ta = false, tb = false;
  DType da = DType::kF32, db = DType::kF32;
};

std::string label(const MCase& c) {
  return std::string(dtype_name(c.da)) + shape_str(c.a) + (c.ta ? "^T" : "") + " x " +
         dtype_name(c.db) + shape_str(c.b) + (c.tb ? "^T" : "");
}

Graph matmul_graph(const MCase& c) {
  Graph g;
  NodeId a = g.add_input({c.da, c.a});
  NodeId b = g.add_input({c.db, c.b});
  Attrs at;
  at.trans_a = c.ta;
  at.trans_b = c.tb;
  g.set_outputs({add(g, OpKind::MatMul, {a, b}, at)});
  return g;
}

/// Plans and compiles `g`; returns the plan (empty on failure, with a test failure recorded).
KernelPlan compile_plan(const Graph& g, const std::string& what,
                        const CodegenOptions& opt = generic_options()) {
  auto plan = plan_kernels(g, opt);
  EXPECT_TRUE(plan.ok()) << what << ": " << plan.status().to_string();
  if (!plan.ok()) return {};
  Status st = compile_kernels(*plan, opt);
  EXPECT_TRUE(st.ok()) << what << ": " << st.to_string() << "\n"
                       << (plan->kernels.empty() ? "" : plan->kernels[0].glsl);
  for (const Kernel& k : plan->kernels) {
    EXPECT_FALSE(k.spirv.empty()) << what;
    EXPECT_TRUE(validate_spirv(k.spirv).ok()) << what;
  }
  return std::move(plan).value();
}

TEST(MatmulCodegen, ShapesCompile) {
  const std::vector<MCase> cases = {
      {{7, 33}, {33, 65}},
      {{1, 1}, {1, 1}},
      {{65, 7}, {65, 33}, true, false},
      {{7, 65}, {33, 65}, false, true},
      {{65, 7}, {33, 65}, true, true},
      {{2, 1, 5, 6}, {3, 6, 4}},
      {{5}, {5, 3}},
      {{4, 5}, {5}},
      {{5}, {5}},
      {{5}, {2, 5, 3}},
      {{2, 5, 4}, {5}, true, false},
      {{128, 96}, {96, 200}},
      {{3, 0}, {0, 4}},
      {{7, 9}, {9, 5}, false, false, DType::kF16, DType::kF16},
      {{7, 9}, {9, 5}, false, false, DType::kF16, DType::kF32},
      {{7, 9}, {9, 5}, false, false, DType::kI32, DType::kI32},
      {{7, 9}, {9, 5}, false, false, DType::kI64, DType::kI32},
      {{70, 90}, {90, 80}, false, false, DType::kI64, DType::kI64},
  };
  for (const MCase& c : cases) {
    KernelPlan plan = compile_plan(matmul_graph(c), label(c));
    ASSERT_EQ(plan.kernels.size(), 1u) << label(c);
    const Kernel& k = plan.kernels[0];
    EXPECT_EQ(k.variant, KernelVariant::kMatmulTiled) << label(c);
    EXPECT_EQ(std::string(kernel_variant_name(k.variant)), "matmul_tiled");
    EXPECT_EQ(k.bindings.size(), 3u) << label(c);
    EXPECT_NE(k.glsl.find("kiln_load_a"), std::string::npos);
    EXPECT_NE(k.glsl.find("kiln_load_b"), std::string::npos);
    EXPECT_NE(k.glsl.find("shared"), std::string::npos);
  }
}

/// The kernel's workgroup counts, capped at `cap` per axis.
std::array<uint32_t, 3> groups(const Kernel& k, uint32_t cap = 65535) {
  return kernel_groups(k, {}, {cap, cap, cap});
}

TEST(MatmulCodegen, GridCoversTilesAndBatches) {
  KernelPlan small = compile_plan(matmul_graph({{2, 3, 7, 33}, {33, 65}}), "small");
  ASSERT_EQ(small.kernels.size(), 1u);
  EXPECT_EQ(small.kernels[0].local_size, 64u);
  EXPECT_EQ(groups(small.kernels[0]), (std::array<uint32_t, 3>{3, 1, 6}));  // 32x32 tiles

  KernelPlan large = compile_plan(matmul_graph({{130, 64}, {64, 200}}), "large");
  ASSERT_EQ(large.kernels.size(), 1u);
  EXPECT_EQ(large.kernels[0].local_size, 64u);                              // 8x8 per invocation
  EXPECT_EQ(groups(large.kernels[0]), (std::array<uint32_t, 3>{4, 3, 1}));  // 64x64 tiles

  // A capped grid (at run time, by the device limits): the kernel grid-strides over batches.
  KernelPlan c = compile_plan(matmul_graph({{5, 3, 4}, {5, 4, 90}}), "capped");
  ASSERT_EQ(c.kernels.size(), 1u);
  EXPECT_EQ(groups(c.kernels[0]), (std::array<uint32_t, 3>{3, 1, 5}));
  EXPECT_EQ(groups(c.kernels[0], 2), (std::array<uint32_t, 3>{2, 1, 2}));

  // The large tile's 16.5 KiB of shared memory does not fit a 16 KiB device: small tiles.
  CodegenOptions narrow = generic_options();
  narrow.caps.max_shared_memory = 16384;
  KernelPlan n = compile_plan(matmul_graph({{128, 128}, {128, 128}}), "narrow", narrow);
  ASSERT_EQ(n.kernels.size(), 1u);
  EXPECT_EQ(groups(n.kernels[0]), (std::array<uint32_t, 3>{4, 4, 1}));  // 32x32 tiles
  KernelPlan w = compile_plan(matmul_graph({{128, 128}, {128, 128}}), "wide");
  ASSERT_EQ(w.kernels.size(), 1u);
  EXPECT_EQ(groups(w.kernels[0]), (std::array<uint32_t, 3>{2, 2, 1}));  // 64x64 tiles
}

// relu(matmul(relu(x) * 2, w^T) + bias): the prologue folds into kiln_load_a and the epilogue
// (bias add, relu) into kiln_store (rule matmul_epilogue): one kernel reading x, w and bias and
// writing only the final relu.
TEST(MatmulCodegen, PrologueAndEpilogueFold) {
  Graph g;
  NodeId x = g.add_input({DType::kF32, {3, 9, 17}});
  NodeId w = g.add_input({DType::kF32, {5, 17}});
  NodeId bias = g.add_input({DType::kF32, {5}});
  NodeId r = add(g, OpKind::Relu, {x});
  Attrs two;
  two.scalar = 2.0;
  two.dtype = DType::kF32;
  NodeId c = add(g, OpKind::Full, {}, two);
  NodeId s = add(g, OpKind::Mul, {r, c});
  Attrs tb;
  tb.trans_b = true;
  NodeId mm = add(g, OpKind::MatMul, {s, w}, tb);
  NodeId biased = add(g, OpKind::Add, {mm, bias});
  NodeId y = add(g, OpKind::Relu, {biased});
  g.set_outputs({y});
  KernelPlan plan = compile_plan(g, "prologue");
  ASSERT_EQ(plan.kernels.size(), 1u);
  const Kernel& k = plan.kernels[0];
  EXPECT_EQ(k.variant, KernelVariant::kMatmulTiled);
  EXPECT_EQ(k.root, y);
  EXPECT_EQ(k.name, "k0_matmul_relu");
  EXPECT_EQ(k.bindings, (std::vector<NodeId>{y, x, w, bias}));
  EXPECT_EQ(k.fused_nodes, (std::vector<NodeId>{r, s, mm, biased, y}));
  EXPECT_NE(k.glsl.find("kiln_relu"), std::string::npos);
  const FusionDecision d = decide_fusion(g, true);
  EXPECT_EQ(d.rule[mm], FusionRule::kMatmulEpilogue);
  EXPECT_EQ(d.epilogue_of[y], mm);
}

// The epilogue rule does not apply when the product has another use, when the chain changes the
// shape (broadcasts the product), or without fusion.
TEST(MatmulCodegen, EpilogueRuleLegality) {
  Graph g;
  NodeId x = g.add_input({DType::kF32, {4, 8}});
  NodeId w = g.add_input({DType::kF32, {8, 6}});
  NodeId big = g.add_input({DType::kF32, {3, 4, 6}});
  NodeId mm = add(g, OpKind::MatMul, {x, w});
  NodeId grown = add(g, OpKind::Add, {mm, big});  // [3, 4, 6]: broadcasts the product
  g.set_outputs({grown});
  EXPECT_EQ(decide_fusion(g, true).rule[mm], FusionRule::kOwnKernel);
  EXPECT_EQ(compile_plan(g, "grown").kernels.size(), 2u);

  Graph h;
  NodeId hx = h.add_input({DType::kF32, {4, 8}});
  NodeId hw = h.add_input({DType::kF32, {8, 6}});
  NodeId hm = add(h, OpKind::MatMul, {hx, hw});
  NodeId e1 = add(h, OpKind::Exp, {hm});
  NodeId e2 = add(h, OpKind::Neg, {hm});  // a second use of the product
  NodeId sum = add(h, OpKind::Add, {e1, e2});
  h.set_outputs({sum});
  EXPECT_EQ(decide_fusion(h, true).rule[hm], FusionRule::kOwnKernel);
  EXPECT_EQ(compile_plan(h, "two_uses").kernels.size(), 2u);
  EXPECT_EQ(decide_fusion(h, false).rule[hm], FusionRule::kOwnKernel);
}

// The row-block kernel's register blocks (docs/codegen.md `matmul_rowblock`): 32 rows per
// invocation (row groups and row-split windows step by 32), up to 64 invocations × one vec4
// column for A·B, up to 32 × 4 scalar columns for A·Bᵀ (2 at most 64 columns); a static C
// gets the fewest invocations, a multiple of 8, that cover its columns in as many blocks;
// every form compiles through glslang, spirv-opt, spirv-val.
TEST(MatmulCodegen, RowBlockRegisterBlocks) {
  CodegenOptions opt = generic_options();
  opt.caps.subgroup_shuffle = true;
  struct Want {
    Dim n;
    bool tb;
    uint32_t local_size, col_blocks;
  };
  // A·B 520: 130 vec4 columns in 3 blocks of 48 lanes (64 would leave 62 of 192 idle); A·Bᵀ
  // 520: 5 blocks of 32 × 4; 72: 18 lanes of 4 columns in 24; 16 and 40 at 2 columns per lane:
  // 8 and 24 lanes; A·B 16: 4 vec4 columns in 8 lanes; A·B 1028: 257 vec4s in 5 blocks of 56.
  for (const Want& w : std::vector<Want>{{520, false, 48, 3},
                                         {520, true, 32, 5},
                                         {72, true, 24, 1},
                                         {16, true, 8, 1},
                                         {40, true, 24, 1},
                                         {16, false, 8, 1},
                                         {1028, false, 56, 5}}) {
    const MCase c{{100, 64}, w.tb ? Shape{w.n, 64} : Shape{64, w.n}, false, w.tb};
    KernelPlan plan = compile_plan(matmul_graph(c), label(c), opt);
    ASSERT_EQ(plan.kernels.size(), 1u) << label(c);
    const Kernel& k = plan.kernels[0];
    ASSERT_EQ(k.variant, KernelVariant::kMatmulRowBlock) << label(c);
    ASSERT_TRUE(k.row_split.has_value());
    EXPECT_EQ(k.row_split->rows_per_group, 32u);
    EXPECT_EQ(k.local_size, w.local_size) << label(c);
    // Row groups along x (100 rows in 4 groups of 32), then the column blocks.
    EXPECT_EQ(groups(k), (std::array<uint32_t, 3>{4, w.col_blocks, 1})) << label(c);
  }
}

// A·Bᵀ: a lane's columns are neighbours stored as one vec4 (more than 64 columns) or vec2 (at
// most 64) per row where C's rows hold a whole number of them, else LX apart and stored one by
// one; every form compiles and validates.
TEST(MatmulCodegen, RowBlockAbtStoresVectorsWhereRowsAllow) {
  CodegenOptions opt = generic_options();
  opt.caps.subgroup_shuffle = true;
  for (const auto& [n, store] : std::vector<std::pair<Dim, std::string>>{
           {520, "vec4"}, {522, "float"}, {64, "vec2"}, {24, "vec2"}, {33, "float"}}) {
    const MCase c{{100, 64}, {n, 64}, false, true};
    KernelPlan plan = compile_plan(matmul_graph(c), label(c), opt);
    ASSERT_EQ(plan.kernels.size(), 1u) << label(c);
    const Kernel& k = plan.kernels[0];
    ASSERT_EQ(k.variant, KernelVariant::kMatmulRowBlock) << label(c);
    // (Preprocessed source: `{ vec4 data[];} b0w;`, `b0 . data[`.)
    const bool vec = store != "float";
    EXPECT_EQ(k.glsl.find("{ " + store + " data[];} b0w;") != std::string::npos, vec)
        << label(c) << "\n"
        << k.glsl;
    EXPECT_EQ(k.glsl.find("b0w . data[") != std::string::npos, vec) << label(c);
    EXPECT_EQ(k.glsl.find("b0 . data[") != std::string::npos, !vec) << label(c);
  }
}

// The row-block kernel's epilogue operands (a bias, a residual, a scale) are read one float
// per lane: r32f texel buffers where the device has them, counted with the kernel's own rgba32f
// A and B against the four texel bindings a kernel may have.
TEST(MatmulCodegen, RowBlockEpilogueOperandsAreR32fTexels) {
  for (const bool operand_texels : {false, true}) {
    Graph g;
    NodeId a = g.add_input({DType::kF32, {100, 64}});
    NodeId b = g.add_input({DType::kF32, {520, 64}});
    NodeId bias = g.add_input({DType::kF32, {520}});
    NodeId res = g.add_input({DType::kF32, {100, 520}});
    NodeId scale = g.add_input({DType::kF32, {100, 1}});
    Attrs tb;
    tb.trans_b = true;
    NodeId mm = add(g, OpKind::MatMul, {a, b}, tb);
    NodeId y =
        add(g, OpKind::Mul, {add(g, OpKind::Add, {add(g, OpKind::Add, {mm, bias}), res}), scale});
    g.set_outputs({y});
    CodegenOptions opt = generic_options();
    opt.caps.subgroup_shuffle = true;
    opt.caps.texel_rgba32f = operand_texels;
    opt.caps.texel_r32f = true;
    opt.caps.max_texel_elements = uint64_t{1} << 20;
    KernelPlan plan = compile_plan(g, "epilogue", opt);
    ASSERT_EQ(plan.kernels.size(), 1u);
    const Kernel& k = plan.kernels[0];
    ASSERT_EQ(k.variant, KernelVariant::kMatmulRowBlock) << k.glsl;
    // Bindings: C, A, B, then the epilogue's bias, residual and scale.
    using Bindings = std::vector<uint32_t>;
    EXPECT_EQ(k.texel_bindings, operand_texels ? Bindings({1, 2}) : Bindings());
    EXPECT_EQ(k.texel_r32f_bindings, operand_texels ? Bindings({3, 4}) : Bindings({3, 4, 5}))
        << k.glsl;
    EXPECT_LE(k.texel_bindings.size() + k.texel_r32f_bindings.size(), 4u);
    EXPECT_EQ(k.glsl.find("b5 . data[") != std::string::npos, operand_texels) << k.glsl;
  }
}

// Row blocks run along x while a workgroup's column panel of B (K x its columns) fits in 1 MiB
// of cache, else column blocks do: K 512 keeps rows on x for both layouts (the vocabulary
// head), K 3072 (a GPT-2 MLP's down projection) puts columns on x.
TEST(MatmulCodegen, RowBlockGridAxisFollowsThePanelSize) {
  CodegenOptions opt = generic_options();
  opt.caps.subgroup_shuffle = true;
  for (bool tb : {false, true})
    for (Dim k : {Dim{512}, Dim{3072}}) {
      const MCase c{{100, k}, tb ? Shape{520, k} : Shape{k, 520}, false, tb};
      KernelPlan plan = compile_plan(matmul_graph(c), label(c), opt);
      ASSERT_EQ(plan.kernels.size(), 1u) << label(c);
      const Kernel& kern = plan.kernels[0];
      ASSERT_EQ(kern.variant, KernelVariant::kMatmulRowBlock) << label(c);
      const bool rows_on_x = k == 512;
      EXPECT_EQ(kern.row_split->row_axis, rows_on_x ? 0u : 1u) << label(c);
      const uint32_t cols = tb ? 5u : 3u;
      EXPECT_EQ(groups(kern), rows_on_x ? (std::array<uint32_t, 3>{4, cols, 1})
                                        : (std::array<uint32_t, 3>{cols, 4, 1}))
          << label(c);
      // The shader walks row blocks along the same axis (preprocessed source).
      EXPECT_NE(kern.glsl.find(rows_on_x ? "rb = gl_WorkGroupID . x" : "rb = gl_WorkGroupID . y"),
                std::string::npos);
    }
}

// The row-block kernel's rows slot is its own push constant even when the column count is the
// same symbol (q·kᵀ with duck-sized lengths): splitting overrides the rows slot per part, which
// must not change N.
TEST(MatmulCodegen, RowBlockRowsSlotIsNotShared) {
  ShapeEnv env;
  const SymInt s0(env.symbol(env.create_symbol(40, "input 0 dim 0")));
  Graph g;
  g.set_shape_env(&env);
  NodeId q = g.add_input({DType::kF32, {40, 64}}, "", {s0, SymInt(64)});
  NodeId k = g.add_input({DType::kF32, {40, 64}}, "", {s0, SymInt(64)});
  Attrs tb;
  tb.trans_b = true;
  NodeId mm = value_or_throw(g.add(OpKind::MatMul, {q, k}, tb));
  g.set_outputs({mm});
  g.canonicalize(env);
  CodegenOptions opt;
  opt.caps = TargetCaps::generic();
  opt.caps.subgroup_shuffle = true;
  KernelPlan plan = value_or_throw(plan_kernels(g, opt));
  ASSERT_EQ(plan.kernels.size(), 1u);
  const Kernel& kern = plan.kernels[0];
  ASSERT_EQ(kern.variant, KernelVariant::kMatmulRowBlock);
  ASSERT_TRUE(kern.row_split.has_value());
  const auto rows = static_cast<size_t>(kern.row_split->rows_slot);
  ASSERT_LT(rows, kern.size_slots.size());
  EXPECT_EQ(kern.size_slots[rows], s0.expr());
  // N is s0 as well, in a slot of its own.
  size_t holding_s0 = 0;
  for (const SymExpr& e : kern.size_slots) holding_s0 += e == s0.expr();
  EXPECT_GE(holding_s0, 2u);
  EXPECT_GE(kern.size_slots.size(), 3u);  // rows, first row, and s0 for N
}

// The exporter's head split under dynamic axes, [s1, s0, 512] -> [s1, 8*s0, 64]: the emitter
// groups {s1}{s0, 512 | 8*s0, 64} (the symbolic products s0 and 8*s0 grow on either side), so
// the load divides by constants only, never by a push-constant size.
TEST(MatmulCodegen, SymbolicHeadSplitIndexesWithConstantDivisors) {
  ShapeEnv env;
  const SymInt s0(env.symbol(env.create_symbol(4, "input 0 dim 0")));
  const SymInt s1(env.symbol(env.create_symbol(6, "input 0 dim 1")));
  Graph g;
  g.set_shape_env(&env);
  NodeId x = g.add_input({DType::kF32, {6, 4, 512}}, "", {s1, s0, SymInt(512)});
  Attrs shape;
  shape.dims = {6, 32, 64};
  NodeId r =
      value_or_throw(g.add(OpKind::Reshape, {x}, shape, "", {s1, SymInt(8) * s0, SymInt(64)}));
  NodeId y = value_or_throw(g.add(OpKind::Relu, {r}));
  g.set_outputs({y});
  g.canonicalize(env);
  CodegenOptions opt;
  opt.caps = TargetCaps::generic();
  KernelPlan plan = value_or_throw(plan_kernels(g, opt));
  ASSERT_EQ(plan.kernels.size(), 1u);
  const std::string& glsl = plan.kernels[0].glsl;
  // The reshape's input index (the `r` variables) divides by 512 only; without the grouping it
  // is decomposed from the row-major linear index with divisions by the size slots.
  size_t r_lines = 0;
  std::istringstream lines(glsl);
  for (std::string line; std::getline(lines, line);) {
    if (line.find("const uint r") == std::string::npos) continue;
    ++r_lines;
    EXPECT_EQ(line.find("kiln_pc"), std::string::npos) << line;
  }
  EXPECT_GE(r_lines, 2u) << glsl;
  EXPECT_NE(glsl.find("512u"), std::string::npos);
}

}  // namespace
}  // namespace kiln
