// Codegen without a device: fusion rules, emitted GLSL properties, shaderc + spirv-val.
#include <gtest/gtest.h>

#include "codegen/fusion.h"
#include "codegen/kernel_limits.h"
#include "codegen/lower.h"
#include "codegen/spirv.h"
#include "null/graph_builders.h"

namespace kiln {
namespace {

using test::add;
using test::chain_graph;
using test::generic_options;

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

// --- The named fusion rules, one by one ------------------------------------------------------

TEST(FusionRules, Predicates) {
  Node view;
  view.op = OpKind::Permute;
  Node lit;
  lit.op = OpKind::Full;
  Node mul;
  mul.op = OpKind::Mul;
  EXPECT_TRUE(rule_inline_view(view));
  EXPECT_FALSE(rule_inline_view(mul));
  EXPECT_TRUE(rule_inline_literal(lit));
  EXPECT_TRUE(rule_multi_consumer(mul, 2));
  EXPECT_FALSE(rule_multi_consumer(mul, 1));
  EXPECT_FALSE(rule_multi_consumer(view, 3));
}

TEST(FusionRules, MultiConsumerIsStoredOnceAndCountsUsesThroughViews) {
  Graph g;
  NodeId x = g.add_input({DType::kF32, {4, 6}});
  NodeId e = add(g, OpKind::Exp, {x});
  NodeId t = add(g, OpKind::Permute, {e}, Attrs{.dims = {1, 0}});
  NodeId s1 = add(g, OpKind::Neg, {t});
  NodeId s2 = add(g, OpKind::Sqrt, {t});
  NodeId y = add(g, OpKind::Add, {s1, s2});
  g.set_outputs({y});
  FusionDecision d = decide_fusion(g, true);
  EXPECT_EQ(d.rule[e], FusionRule::kMultiConsumer);  // read twice, through one view
  EXPECT_TRUE(d.materialize[e]);
  EXPECT_EQ(d.rule[t], FusionRule::kInlineView);
  EXPECT_FALSE(d.materialize[t]);
  EXPECT_EQ(d.rule[s1], FusionRule::kInlinePointwise);
  EXPECT_EQ(d.rule[y], FusionRule::kGraphOutput);
  auto plan = plan_kernels(g, generic_options());
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->kernels.size(), 2u);
}

TEST(FusionRules, ReductionPrologueFoldsIntoTheLoad) {
  Graph g;
  NodeId x = g.add_input({DType::kF32, {8, 300}});
  NodeId a = g.add_input({DType::kF32, {300}});
  NodeId m = add(g, OpKind::Mul, {x, a});
  NodeId e = add(g, OpKind::Exp, {m});
  NodeId s = add(g, OpKind::Sum, {e}, Attrs{.dims = {1}});
  g.set_outputs({s});
  FusionDecision d = decide_fusion(g, true);
  EXPECT_EQ(d.rule[s], FusionRule::kGraphOutput);
  EXPECT_FALSE(d.materialize[m]);
  EXPECT_FALSE(d.materialize[e]);
  auto plan = plan_kernels(g, generic_options());
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->kernels.size(), 1u);
  EXPECT_EQ(plan->kernels[0].variant, KernelVariant::kReduceWorkgroup);
  EXPECT_EQ(plan->kernels[0].fused_nodes.size(), 3u);  // mul, exp, sum
  EXPECT_NE(plan->kernels[0].glsl.find("exp("), std::string::npos);
  ASSERT_TRUE(compile_kernels(*plan, generic_options()).ok());
}

TEST(FusionRules, ReductionIsABoundaryForItsConsumers) {
  Graph g;
  NodeId x = g.add_input({DType::kF32, {5, 7}});
  NodeId mx = add(g, OpKind::Max, {x}, Attrs{.dims = {1}, .keepdim = true});
  NodeId y = add(g, OpKind::Sub, {x, mx});
  g.set_outputs({y});
  FusionDecision d = decide_fusion(g, true);
  EXPECT_EQ(d.rule[mx], FusionRule::kReduceBoundary);
  auto plan = plan_kernels(g, generic_options());
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->kernels.size(), 2u);
  EXPECT_EQ(plan->kernels[0].variant, KernelVariant::kReduceThread);
  EXPECT_EQ(plan->kernels[1].bindings.size(), 3u);  // y, x, max
}

TEST(FusionRules, ViewsNeverCopy) {
  Graph g;
  NodeId x = g.add_input({DType::kF32, {2, 3, 4}});
  NodeId p = add(g, OpKind::Permute, {x}, Attrs{.dims = {2, 0, 1}});
  NodeId r = add(g, OpKind::Reshape, {p}, Attrs{.dims = {4, 6}});
  NodeId e = add(g, OpKind::Expand, {r}, Attrs{.dims = {3, 4, 6}});
  NodeId y = add(g, OpKind::Tanh, {e});
  g.set_outputs({y});
  auto plan = plan_kernels(g, generic_options());
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->kernels.size(), 1u);
  EXPECT_EQ(plan->kernels[0].bindings.size(), 2u);  // output and x: no intermediate buffers
  ASSERT_TRUE(compile_kernels(*plan, generic_options()).ok());
}

TEST(Codegen, ScalarLoadsReadR32fTexelBuffersWhereTheyFit) {
  // A permuted input: a scalar kernel whose loads are lane-varying. With r32f texel buffers
  // and room for the input, it is one (binding 1); without either it stays a storage buffer.
  for (const bool r32f : {false, true})
    for (const uint64_t max_texels : {uint64_t{1} << 20, uint64_t{300}}) {
      Graph g;
      NodeId x = g.add_input({DType::kF32, {15, 17}});
      NodeId y = add(g, OpKind::Exp, {add(g, OpKind::Permute, {x}, Attrs{.dims = {1, 0}})});
      g.set_outputs({y});
      CodegenOptions o = generic_options();
      o.caps.texel_r32f = r32f;
      o.caps.max_texel_elements = max_texels;
      auto plan = plan_kernels(g, o);
      ASSERT_TRUE(plan.ok()) << plan.status().to_string();
      ASSERT_EQ(plan->kernels.size(), 1u);
      const Kernel& k = plan->kernels[0];
      const bool want = r32f && max_texels > 15 * 17 + 64;
      const std::string what =
          std::string(r32f ? "r32f" : "no r32f") + ", " + std::to_string(max_texels) + " texels";
      EXPECT_EQ(k.texel_r32f_bindings, want ? std::vector<uint32_t>{1} : std::vector<uint32_t>{})
          << what;
      // (The source is preprocessed: `r32f)uniform`, `b1 . data`.)
      EXPECT_EQ(k.glsl.find("r32f)uniform readonly imageBuffer kiln_s1") != std::string::npos, want)
          << what << "\n"
          << k.glsl;
      EXPECT_EQ(k.glsl.find("imageLoad(kiln_s1") != std::string::npos, want) << what;
      EXPECT_EQ(k.glsl.find("b1 . data[") != std::string::npos, !want) << what;
      ASSERT_TRUE(compile_kernels(*plan, o).ok()) << what;
    }
}

TEST(Codegen, ABindingReadAsVec4sAndAsScalarsStaysAStorageBuffer) {
  // y[i, j, k] = x[i, j] + x[i, k]: a vec4 kernel reads x as whole vec4s (along k) and as one
  // value per row (x[i, j]), so x may be neither texel format; declaring it as both a storage
  // buffer and a texel buffer would read it through the wrong descriptor.
  Graph g;
  NodeId x = g.add_input({DType::kF32, {8, 8}});
  NodeId col = add(g, OpKind::Reshape, {x}, Attrs{.dims = {8, 8, 1}});
  NodeId y = add(g, OpKind::Add, {x, col});
  g.set_outputs({y});
  CodegenOptions o = generic_options();
  o.caps.texel_rgba32f = o.caps.texel_r32f = true;
  o.caps.max_texel_elements = uint64_t{1} << 20;
  auto plan = plan_kernels(g, o);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  ASSERT_EQ(plan->kernels.size(), 1u);
  const Kernel& k = plan->kernels[0];
  EXPECT_TRUE(k.texel_bindings.empty()) << k.glsl;
  EXPECT_TRUE(k.texel_r32f_bindings.empty()) << k.glsl;
  EXPECT_EQ(k.glsl.find("imageBuffer"), std::string::npos) << k.glsl;
  ASSERT_TRUE(compile_kernels(*plan, o).ok());
}

TEST(Codegen, AtMostFourTexelBuffersPerKernel) {
  // Six permuted inputs added up: six scalar-read bindings, of which four may be texel
  // buffers (maxPerStageDescriptorStorageImages is 4 at least); the others stay storage
  // buffers.
  Graph g;
  NodeId sum = -1;
  for (int i = 0; i < 6; ++i) {
    NodeId t = add(g, OpKind::Permute, {g.add_input({DType::kF32, {5, 7}})}, Attrs{.dims = {1, 0}});
    sum = sum < 0 ? t : add(g, OpKind::Add, {sum, t});
  }
  g.set_outputs({sum});
  CodegenOptions o = generic_options();
  o.caps.texel_r32f = true;
  o.caps.max_texel_elements = uint64_t{1} << 20;
  auto plan = plan_kernels(g, o);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  ASSERT_EQ(plan->kernels.size(), 1u);
  const Kernel& k = plan->kernels[0];
  EXPECT_EQ(k.texel_r32f_bindings, (std::vector<uint32_t>{1, 2, 3, 4})) << k.glsl;
  EXPECT_NE(k.glsl.find("b5 . data["), std::string::npos) << k.glsl;
  ASSERT_TRUE(compile_kernels(*plan, o).ok());
}

TEST(Codegen, SymbolicScalarOperandsAreR32fTexelsWhereTheLimitCoversStorage) {
  // A permuted input of symbolic rows: it may outgrow any fixed texel count at a later call,
  // so it is an r32f texel buffer only where every storage buffer fits the texel limit.
  for (const bool covers : {false, true}) {
    ShapeEnv env;
    const SymInt s0(env.symbol(env.create_symbol(15, "input 0 dim 0")));
    Graph g;
    g.set_shape_env(&env);
    NodeId x = g.add_input({DType::kF32, {15, 17}}, "", {s0, SymInt(17)});
    NodeId y = add(g, OpKind::Exp, {add(g, OpKind::Permute, {x}, Attrs{.dims = {1, 0}})});
    g.set_outputs({y});
    g.canonicalize(env);
    CodegenOptions o = generic_options();
    o.caps.texel_r32f = true;
    o.caps.max_texel_elements = uint64_t{1} << 20;
    o.caps.scalar_texels_cover_storage = covers;
    auto plan = plan_kernels(g, o);
    ASSERT_TRUE(plan.ok()) << plan.status().to_string();
    ASSERT_EQ(plan->kernels.size(), 1u);
    const Kernel& k = plan->kernels[0];
    EXPECT_EQ(k.texel_r32f_bindings, covers ? std::vector<uint32_t>{1} : std::vector<uint32_t>{})
        << k.glsl;
    EXPECT_EQ(k.glsl.find("b1 . data[") != std::string::npos, !covers) << k.glsl;
    ASSERT_TRUE(compile_kernels(*plan, o).ok());
  }
}

TEST(Codegen, EveryDtypeCompilesAndValidates) {
  for (DType dt : {DType::kF32, DType::kF16, DType::kI32, DType::kI64}) {
    Graph g;
    NodeId x = g.add_input({dt, {3, 5}});
    NodeId y = g.add_input({dt, {5}});
    NodeId m = add(g, OpKind::Maximum, {x, y});
    NodeId c = add(g, OpKind::Gt, {m, x});
    NodeId s = add(g, OpKind::Sum, {m}, Attrs{.dims = {0}});
    g.set_outputs({c, s});
    auto plan = plan_kernels(g, generic_options());
    ASSERT_TRUE(plan.ok()) << dtype_name(dt) << ": " << plan.status().to_string();
    Status st = compile_kernels(*plan, generic_options());
    EXPECT_TRUE(st.ok()) << dtype_name(dt) << ": " << st.to_string();
  }
}

TEST(Codegen, MissingDeviceFeaturesChangeTheLoweringNotTheDevice) {
  // int64 without shaderInt64 (pairs of words), bool without 8-bit storage and f16 without
  // 16-bit storage (words of bytes / halves): the kernels compile, ask for none of the missing
  // capabilities (the runtime's check_kernel_limits) and name none of their extensions.
  Graph g;
  NodeId x = g.add_input({DType::kI64, {5}});
  NodeId h = g.add_input({DType::kF16, {5}});
  NodeId n = add(g, OpKind::Neg, {x});
  NodeId b = add(g, OpKind::Gt, {n, x});
  NodeId e = add(g, OpKind::Exp, {h});
  g.set_outputs({n, b, e});
  CodegenOptions o = generic_options();
  o.caps.shader_int64 = o.caps.storage_buffer_8bit = o.caps.storage_buffer_16bit = false;
  auto plan = plan_kernels(g, o);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  ASSERT_TRUE(compile_kernels(*plan, o).ok());
  std::string all;
  for (const Kernel& k : plan->kernels) {
    EXPECT_TRUE(check_kernel_limits(k, o.caps).ok()) << k.name << "\n" << k.glsl;
    EXPECT_EQ(k.glsl.find("int64"), std::string::npos) << k.glsl;
    EXPECT_EQ(k.glsl.find("8bit_storage"), std::string::npos) << k.glsl;
    EXPECT_EQ(k.glsl.find("16bit_storage"), std::string::npos) << k.glsl;
    all += k.glsl;
  }
  EXPECT_NE(all.find("kiln_i64_neg("), std::string::npos);
  EXPECT_NE(all.find("kiln_store_bool("), std::string::npos);
  EXPECT_NE(all.find("kiln_store_f16("), std::string::npos);
  // With the features, the native types.
  auto native = plan_kernels(g, generic_options());
  ASSERT_TRUE(native.ok());
  std::string native_all;
  for (const Kernel& k : native->kernels) native_all += k.glsl;
  EXPECT_NE(native_all.find("int64_t"), std::string::npos);
  EXPECT_EQ(native_all.find("kiln_i64_"), std::string::npos);
  EXPECT_EQ(native_all.find("kiln_store_"), std::string::npos);
}

TEST(Codegen, BadGlslIsAnErrorWithDiagnostics) {
  auto r = compile_glsl("#version 450\nvoid main() { undefined_function(); }\n", "bad");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("undefined_function"), std::string::npos)
      << r.status().message();
  EXPECT_FALSE(validate_spirv({0x07230203u, 0u, 0u, 0u, 0u}).ok());
}

TEST(Codegen, CacheKeyIsDeterministicAndTargetSpecific) {
  Graph g = chain_graph(4, 8);
  auto p1 = plan_kernels(g, generic_options());
  auto p2 = plan_kernels(g, generic_options());
  ASSERT_TRUE(compile_kernels(*p1, generic_options()).ok());
  ASSERT_TRUE(compile_kernels(*p2, generic_options()).ok());
  EXPECT_EQ(p1->kernels[0].cache_key, p2->kernels[0].cache_key);
  EXPECT_EQ(p1->kernels[0].glsl, p2->kernels[0].glsl);
  CodegenOptions other = generic_options();
  other.caps.device_key = "another-driver";
  auto p3 = plan_kernels(g, other);
  ASSERT_TRUE(compile_kernels(*p3, other).ok());
  EXPECT_NE(p1->kernels[0].cache_key, p3->kernels[0].cache_key);
}

// --- IEEE semantics the emitted GLSL spells out (docs/ops.md, "Floating point") -------------

/// The GLSL of the single kernel of `g` under `o` (compiled too, so it is a valid shader).
std::string only_kernel_glsl(const Graph& g, const CodegenOptions& o) {
  auto plan = plan_kernels(g, o);
  EXPECT_TRUE(plan.ok()) << plan.status().to_string();
  if (!plan.ok()) return "";
  EXPECT_EQ(plan->kernels.size(), 1u);
  Status st = compile_kernels(*plan, o);
  EXPECT_TRUE(st.ok()) << st.to_string() << "\n" << plan->kernels[0].glsl;
  return plan->kernels[0].glsl;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Codegen, SignedZeroInfNanPreserveFollowsTheTarget) {
  Graph g = chain_graph(3, 8);
  CodegenOptions with = generic_options(), without = generic_options();
  without.caps.signed_zero_inf_nan_preserve = false;
  auto p = plan_kernels(g, with);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(compile_kernels(*p, with).ok());
  EXPECT_NE(p->kernels[0].glsl.find("spirv_execution_mode("), std::string::npos);
  auto asm_text = disassemble_spirv(p->kernels[0].spirv);
  ASSERT_TRUE(asm_text.ok());
  EXPECT_NE(asm_text->find("OpExecutionMode %main SignedZeroInfNanPreserve 32"), std::string::npos)
      << *asm_text;
  auto q = plan_kernels(g, without);
  ASSERT_TRUE(q.ok());
  ASSERT_TRUE(compile_kernels(*q, without).ok());
  EXPECT_EQ(q->kernels[0].glsl.find("spirv_execution_mode"), std::string::npos);
  auto q_asm = disassemble_spirv(q->kernels[0].spirv);
  ASSERT_TRUE(q_asm.ok());
  EXPECT_EQ(q_asm->find("SignedZeroInfNanPreserve"), std::string::npos);
  // A different target: neither graph records nor kernels may be shared.
  EXPECT_NE(p->graph_key, q->graph_key);
  EXPECT_NE(p->kernels[0].cache_key, q->kernels[0].cache_key);
}

TEST(Codegen, F16ResultsRoundToHalfWhereComputed) {
  Graph g;
  NodeId h = g.add_input({DType::kF16, {5}});
  NodeId i = g.add_input({DType::kI32, {5}});
  NodeId prod = add(g, OpKind::Mul, {h, h});                          // rounded
  NodeId sum = add(g, OpKind::Add, {prod, i});                        // i32 promoted: rounded
  NodeId neg = add(g, OpKind::Neg, {sum});                            // exact: not rounded
  NodeId mx = add(g, OpKind::Maximum, {neg, h});                      // exact: not rounded
  NodeId c = add(g, OpKind::Cast, {i}, Attrs{.dtype = DType::kF16});  // a cast rounds itself
  NodeId out = add(g, OpKind::Sub, {mx, c});                          // rounded
  g.set_outputs({out});
  const std::string glsl = only_kernel_glsl(g, generic_options());
  EXPECT_EQ(count(glsl, "kiln_f16("), 1u + 4u) << glsl;  // the definition, then 4 uses
  // The i32 operand of the add enters as a float, unrounded, as the interpreter computes.
  EXPECT_NE(glsl.find("float(x"), std::string::npos) << glsl;
}

TEST(Codegen, I32ToI64SignExtendsExplicitly) {
  Graph g;
  NodeId a = g.add_input({DType::kI64, {4}});
  NodeId b = g.add_input({DType::kI32, {4}});
  g.set_outputs({add(g, OpKind::Pow, {a, b})});
  const std::string glsl = only_kernel_glsl(g, generic_options());
  EXPECT_NE(glsl.find("packInt2x32(ivec2("), std::string::npos) << glsl;
  EXPECT_EQ(glsl.find("int64_t(x"), std::string::npos) << glsl;
}

// The helpers of shaders/common/ that only some kernels use are defined in those kernels, once;
// the int64 ones only where the int64 extension is declared.
TEST(Codegen, OptionalHelpersOnlyInKernelsThatUseThem) {
  auto glsl_of = [](DType dtype, OpKind op) {
    Graph g;
    NodeId a = g.add_input({dtype, {4}});
    NodeId b = g.add_input({dtype, {4}});
    g.set_outputs({add(g, op, {a, b})});
    return only_kernel_glsl(g, generic_options());
  };
  const std::string f32_add = glsl_of(DType::kF32, OpKind::Add);
  for (const char* name : {"kiln_pow(", "kiln_ipow(", "kiln_div(", "int64_t"})
    EXPECT_EQ(f32_add.find(name), std::string::npos) << name << "\n" << f32_add;
  const std::string f32_pow = glsl_of(DType::kF32, OpKind::Pow);
  EXPECT_EQ(count(f32_pow, "float kiln_pow(float x, float y)"), 1u) << f32_pow;
  EXPECT_EQ(f32_pow.find("int64_t"), std::string::npos) << f32_pow;
  const std::string f32_div = glsl_of(DType::kF32, OpKind::Div);
  EXPECT_EQ(count(f32_div, "float kiln_div(float a, float b)"), 1u) << f32_div;
  EXPECT_EQ(f32_div.find("int64_t"), std::string::npos) << f32_div;
  const std::string i64_pow = glsl_of(DType::kI64, OpKind::Pow);
  EXPECT_EQ(count(i64_pow, "int64_t kiln_max_i64(int64_t a, int64_t b)"), 1u) << i64_pow;
  EXPECT_EQ(count(i64_pow, "int64_t kiln_ipow(int64_t x, int64_t y)"), 1u) << i64_pow;
  EXPECT_EQ(i64_pow.find("kiln_fmod(int64_t"), std::string::npos) << i64_pow;
  const std::string i64_mod = glsl_of(DType::kI64, OpKind::Mod);
  EXPECT_EQ(count(i64_mod, "int64_t kiln_mod(int64_t a, int64_t b)"), 1u) << i64_mod;
  EXPECT_EQ(i64_mod.find("kiln_ipow("), std::string::npos) << i64_mod;
  EXPECT_EQ(i64_mod.find("kiln_div("), std::string::npos) << i64_mod;
}

TEST(Codegen, ArithmeticWithALiteralPositiveZeroUsesHelpers) {
  for (bool negative_zero : {false, true}) {
    for (OpKind op : {OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div}) {
      Graph g;
      NodeId x = g.add_input({DType::kF32, {3}});
      NodeId z = add(g, OpKind::Full, {},
                     Attrs{.scalar = negative_zero ? -0.0 : 0.0, .dtype = DType::kF32});
      g.set_outputs({add(g, op, {z, x})});
      const std::string glsl = only_kernel_glsl(g, generic_options());
      const char* helper = op == OpKind::Add   ? "= kiln_add_zero(x"
                           : op == OpKind::Sub ? "= kiln_zero_sub(x"
                           : op == OpKind::Mul ? "= kiln_mul_zero(x"
                                               : "= kiln_zero_div(x";
      EXPECT_EQ(glsl.find(helper) != std::string::npos, !negative_zero)
          << op_name(op) << (negative_zero ? " -0.0" : " +0.0") << "\n"
          << glsl;
    }
  }
  // An integer zero cast to float is +0.0 too, through a view.
  Graph g;
  NodeId x = g.add_input({DType::kF32, {2, 3}});
  NodeId z = add(g, OpKind::Full, {}, Attrs{.scalar = 0.0, .dtype = DType::kI32});
  NodeId zf = add(g, OpKind::Cast, {z}, Attrs{.dtype = DType::kF32});
  NodeId ze = add(g, OpKind::Expand, {zf}, Attrs{.dims = {2, 3}});
  g.set_outputs({add(g, OpKind::Mul, {x, ze})});
  EXPECT_NE(only_kernel_glsl(g, generic_options()).find("= kiln_mul_zero(x"), std::string::npos);
}

}  // namespace
}  // namespace kiln
