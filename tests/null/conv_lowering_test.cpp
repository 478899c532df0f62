// Convs lowered for a device with the row-block product (codegen/conv_lowering.cpp), without a
// device: which form each conv takes (A·Bᵀ over im2col rows, the direct 1x1 product of one
// image, or left as a conv), and the lowered graph interpreted (im2col on the
// interpreter, the product, the views back to NCHW) against the conv itself on random data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "codegen/fusion.h"
#include "codegen/lower.h"
#include "codegen/spirv.h"
#include "eager/interpreter.h"
#include "null/graph_builders.h"

namespace kiln {
namespace {

using test::add;
using V = std::vector<int64_t>;

struct Case {
  Shape x, w;
  V strides, pads, dilations;
  const char* form;  // "AB", "ABt", "direct", "pointwise", "none"
  bool bias = true;
  bool weight_input = true;  // false: the weight is computed (tanh(w)), not stored
};

Graph conv_graph(const Case& c) {
  Graph g;
  NodeId x = g.add_input({DType::kF32, c.x});
  NodeId w = g.add_input({DType::kF32, c.w});
  if (!c.weight_input) w = add(g, OpKind::Tanh, {w});
  std::vector<NodeId> in = {x, w};
  if (c.bias) in.push_back(g.add_input({DType::kF32, {c.w[0]}}));
  Attrs a;
  a.window.strides = c.strides;
  a.window.pads = c.pads;
  a.window.dilations = c.dilations;
  g.set_outputs({add(g, OpKind::Conv, in, a)});
  return g;
}

std::string form_of(const Graph& g) {
  bool im2col = false, conv = false, trans_b = false, matmul = false;
  for (const Node& n : g.nodes()) {
    im2col |= n.op == OpKind::Im2col;
    conv |= n.op == OpKind::Conv;
    if (n.op == OpKind::MatMul) matmul = true, trans_b = n.attrs.trans_b;
  }
  if (conv) return "none";
  if (!matmul) return "?";
  if (!im2col) return trans_b ? "pointwise" : "direct";
  return trans_b ? "ABt" : "AB";
}

HostTensor random_host(const TensorMeta& meta, std::mt19937& rng) {
  HostTensor t(meta);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (int64_t i = 0; i < meta.numel(); ++i) t.ptr<float>()[i] = d(rng);
  return t;
}

/// The lowered graph `lg` computes `g`'s first output on random inputs (relative `tol`).
void expect_same_values(const Graph& g, const Graph& lg, std::mt19937& rng, const std::string& what,
                        double tol = 1e-5) {
  std::vector<HostTensor> ins;
  for (NodeId id : g.inputs()) ins.push_back(random_host(g.node(id).meta, rng));
  std::vector<const HostTensor*> ptrs;
  for (const HostTensor& h : ins) ptrs.push_back(&h);
  auto want = interpret(g, ptrs, {});
  auto got = interpret(lg, ptrs, {});
  ASSERT_TRUE(want.ok() && got.ok()) << what;
  const HostTensor &a = (*want)[0], &b = (*got)[0];
  double worst = 0;
  for (int64_t i = 0; i < a.meta.numel(); ++i)
    worst = std::max(worst, std::abs(a.get(i) - b.get(i)) / (1.0 + std::abs(a.get(i))));
  EXPECT_LT(worst, tol) << what << ": lowered graph differs by " << worst;
}

TEST(ConvLowering, FormsAndTheLoweredGraphComputesTheConv) {
  const std::vector<Case> cases = {
      {{1, 8, 12, 12}, {32, 8, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, "ABt"},
      {{2, 8, 10, 9}, {24, 8, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, "ABt", false},
      {{3, 8, 9, 7}, {20, 8, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, "ABt"},
      {{2, 4, 17, 19}, {33, 4, 3, 3}, {2, 2}, {1, 0, 1, 2}, {1, 2}, "ABt", false},
      {{1, 64, 3, 3}, {130, 64, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, "ABt"},
      {{2, 16, 5, 5}, {24, 16, 5, 5}, {1, 1}, {0, 0, 0, 0}, {1, 1}, "ABt"},
      {{1, 12, 16, 16}, {32, 12, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, "direct"},
      {{2, 12, 7, 5}, {17, 12, 1, 1}, {2, 1}, {0, 1, 0, 1}, {1, 1}, "ABt"},
      // Taps not a multiple of 4 (3-channel stems: 147, 27), padded to one with zero taps.
      {{1, 3, 13, 11}, {64, 3, 7, 7}, {2, 2}, {3, 3, 3, 3}, {1, 1}, "ABt"},
      {{2, 3, 9, 10}, {32, 3, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, "ABt", false},
      {{2, 3, 9, 10}, {16, 3, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, "ABt"},
      {{2, 3, 9, 10}, {12, 3, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, "none"},  // < 16 channels
      {{1, 5, 8, 8}, {32, 5, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, "none"},   // 5 taps: too few
      {{1, 17, 8, 8}, {32, 17, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, "ABt"},  // not direct: K 17
      // 1x1 convs on 1x1 maps (squeeze-excite): the input read as [N, C], no im2col.
      {{2, 16, 1, 1}, {24, 16, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, "pointwise"},
      {{1, 96, 1, 1}, {24, 96, 1, 1}, {2, 2}, {0, 0, 0, 0}, {1, 1}, "pointwise", false},
      {{3, 18, 1, 1}, {32, 18, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, "ABt"},  // K 18: padded
      {{1, 16, 1, 1}, {24, 16, 1, 1}, {1, 1}, {1, 1, 1, 1}, {1, 1}, "ABt"},  // padded: 3x3 out
      // Left as convs: few output channels, a computed weight, 1-D.
      {{1, 8, 6, 6}, {8, 8, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, "none"},
      {{1, 8, 6, 6}, {32, 8, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, "none", true, false},
      {{2, 8, 40}, {16, 8, 4}, {1}, {2, 1}, {1}, "none"},
  };
  std::mt19937 rng(7);
  for (const Case& c : cases) {
    const std::string what = "conv x" + shape_str(c.x) + " w" + shape_str(c.w);
    const Graph g = conv_graph(c);
    auto lowered = lower_for_device(g, test::shuffle_options().caps);
    ASSERT_TRUE(lowered.ok()) << what << ": " << lowered.status().to_string();
    if (std::string(c.form) == "none") {
      EXPECT_FALSE(lowered->has_value()) << what << " lowered:\n" << (*lowered)->to_string();
      continue;
    }
    ASSERT_TRUE(lowered->has_value()) << what;
    const Graph& lg = **lowered;
    EXPECT_EQ(form_of(lg), c.form) << what << "\n" << lg.to_string();
    ASSERT_EQ(lg.inputs().size(), g.inputs().size());
    ASSERT_EQ(lg.node(lg.outputs()[0]).meta, g.node(g.outputs()[0]).meta) << what;
    expect_same_values(g, lg, rng, what);
  }
  // Without the row-block product (no subgroup shuffles) nothing is lowered.
  auto plain = lower_for_device(conv_graph(cases[0]), TargetCaps::generic());
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->has_value());
}

// A conv over a symbolic batch and image: A·Bᵀ (a symbolic M), and the lowered output's
// symbolic shape is the conv's own.
TEST(ConvLowering, SymbolicSizesTakeTheTransposedForm) {
  ShapeEnv env;
  const SymInt n(env.symbol(env.create_symbol(2, "input 0 dim 0")));
  const SymInt h(env.symbol(env.create_symbol(9, "input 0 dim 2")));
  const SymInt w(env.symbol(env.create_symbol(7, "input 0 dim 3")));
  Graph g;
  g.set_shape_env(&env);
  NodeId x = g.add_input({DType::kF32, {2, 8, 9, 7}}, "", {n, SymInt(8), h, w});
  NodeId wt = g.add_input({DType::kF32, {24, 8, 3, 3}});
  Attrs a;
  a.window.strides = {2, 1};
  a.window.pads = {1, 1, 1, 1};
  a.window.dilations = {1, 1};
  NodeId c = add(g, OpKind::Conv, {x, wt}, a);
  g.set_outputs({c});
  g.canonicalize(env);
  g.set_shape_env(nullptr);
  auto lowered = lower_for_device(g, test::shuffle_options().caps);
  ASSERT_TRUE(lowered.ok()) << lowered.status().to_string();
  ASSERT_TRUE(lowered->has_value());
  const Graph& lg = **lowered;
  EXPECT_EQ(form_of(lg), "ABt") << lg.to_string();
  EXPECT_EQ(lg.node(lg.outputs()[0]).sym, g.node(c).sym) << lg.to_string();
  auto plan = plan_kernels(lg, test::shuffle_options());
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  std::string kernels;
  for (const Kernel& k : plan->kernels) kernels += k.name + " ";
  EXPECT_NE(kernels.find("im2col"), std::string::npos) << kernels;
  // The plane size is symbolic: the product is stored as [N·H·W, C_out] and the output
  // permute is a kernel of its own (kMatmulLayout needs a static plane).
  EXPECT_EQ(plan->kernels.size(), 3u) << kernels;
  EXPECT_EQ(decide_fusion(lg, true, true, true).rule[lg.outputs()[0]], FusionRule::kGraphOutput);
}

// A static plane that holds a whole number of vec4s: the product stores the NCHW output itself
// (kMatmulLayout): two kernels, the second's root the output permute, its C bound whole when A
// is split into row windows. A plane of 9x7 = 63 positions keeps the permute kernel.
TEST(ConvLowering, TheProductStoresTheNchwOutputOfStaticPlanes) {
  for (const auto& [w, layout] : std::vector<std::pair<Dim, bool>>{{8, true}, {7, false}}) {
    const Graph g =
        conv_graph({{2, 8, 9, w}, {24, 8, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, "ABt", false});
    auto lowered = lower_for_device(g, test::shuffle_options().caps);
    ASSERT_TRUE(lowered.ok()) << lowered.status().to_string();
    ASSERT_TRUE(lowered->has_value());
    const Graph& lg = **lowered;
    auto plan = plan_kernels(lg, test::shuffle_options());
    ASSERT_TRUE(plan.ok()) << plan.status().to_string();
    const std::string what = "9x" + std::to_string(w) + " planes";
    ASSERT_EQ(plan->kernels.size(), layout ? 2u : 3u) << what;
    const Kernel& product = plan->kernels[1];
    EXPECT_EQ(product.variant, KernelVariant::kMatmulRowBlock) << what;
    ASSERT_TRUE(product.row_split.has_value());
    EXPECT_EQ(product.row_split->c_whole, layout) << what;
    EXPECT_EQ(product.glsl.find("kiln_nchw") != std::string::npos, layout) << what;
    if (layout) {
      EXPECT_EQ(product.root, lg.outputs()[0]);
      EXPECT_EQ(lg.node(product.root).op, OpKind::Permute);
      EXPECT_EQ(decide_fusion(lg, true, true, true).rule[product.root], FusionRule::kMatmulLayout);
    } else {
      EXPECT_EQ(plan->kernels[2].root, lg.outputs()[0]);
    }
  }
}

/// A squeeze-excite block on 1x1 maps: conv 1x1, `act`(conv), conv 1x1, hard sigmoid, times a
/// feature map. `batch` may be symbolic (env given).
struct SqueezeExcite {
  Graph g;
  NodeId first_conv = -1;
};
SqueezeExcite squeeze_excite(ShapeEnv* env, OpKind act, bool scalar_act_operand = true) {
  SqueezeExcite se;
  Graph& g = se.g;
  SymInt n(2);
  if (env) {
    g.set_shape_env(env);
    n = SymInt(env->symbol(env->create_symbol(2, "input 0 dim 0")));
  }
  NodeId x = g.add_input({DType::kF32, {2, 16, 1, 1}}, "", {n, SymInt(16), SymInt(1), SymInt(1)});
  NodeId w1 = g.add_input({DType::kF32, {24, 16, 1, 1}});
  NodeId b1 = g.add_input({DType::kF32, {24}});
  NodeId w2 = g.add_input({DType::kF32, {16, 24, 1, 1}});
  NodeId b2 = g.add_input({DType::kF32, {16}});
  NodeId f = g.add_input({DType::kF32, {2, 16, 5, 5}}, "", {n, SymInt(16), SymInt(5), SymInt(5)});
  NodeId other =
      g.add_input({DType::kF32, {2, 24, 1, 1}}, "", {n, SymInt(24), SymInt(1), SymInt(1)});
  Attrs a;
  a.window.strides = {1, 1};
  a.window.pads = {0, 0, 0, 0};
  a.window.dilations = {1, 1};
  auto scalar = [&g](double v) {
    Attrs s;
    s.dtype = DType::kF32;
    s.scalar = v;
    return add(g, OpKind::Full, {}, s);
  };
  se.first_conv = add(g, OpKind::Conv, {x, w1, b1}, a);
  NodeId h = act == OpKind::Relu
                 ? add(g, OpKind::Relu, {se.first_conv})
                 : add(g, act, {se.first_conv, scalar_act_operand ? scalar(0.5) : other});
  NodeId c2 = add(g, OpKind::Conv, {h, w2, b2}, a);
  NodeId hs = add(g, OpKind::Add, {add(g, OpKind::Mul, {c2, scalar(1.0 / 6)}), scalar(0.5)});
  hs = add(g, OpKind::Minimum, {add(g, OpKind::Maximum, {hs, scalar(0)}), scalar(1)});
  g.set_outputs({add(g, OpKind::Mul, {hs, f})});
  if (env) {
    g.canonicalize(*env);
    g.set_shape_env(nullptr);
  }
  return se;
}

// An elementwise op on a pointwise conv's output, with scalars for its other operands, moves
// before the view back to [N, C, 1, 1]: it joins the product's epilogue and the next conv reads
// it in place. The lowered graph has no node left unread and computes the block; an op with a
// tensor operand stays after the view.
TEST(ConvLowering, ElementwiseOpsMoveBeforeAPointwiseConvsView) {
  struct Variant {
    OpKind act;
    bool scalar_operand, moves;
  };
  std::mt19937 rng(11);
  for (const bool symbolic : {false, true}) {
    for (const Variant v : {Variant{OpKind::Relu, true, true}, Variant{OpKind::Mul, true, true},
                            Variant{OpKind::Add, false, false}}) {
      ShapeEnv env;
      const SqueezeExcite se = squeeze_excite(symbolic ? &env : nullptr, v.act, v.scalar_operand);
      const Graph& g = se.g;
      const std::string what = std::string(op_name(v.act)) + (symbolic ? ", symbolic batch" : "");
      auto lowered = lower_for_device(g, test::shuffle_options().caps);
      ASSERT_TRUE(lowered.ok() && lowered->has_value()) << what;
      const Graph& lg = **lowered;
      EXPECT_EQ(form_of(lg), "pointwise") << what << "\n" << lg.to_string();
      EXPECT_EQ(lg.node(lg.outputs()[0]).sym, g.node(g.outputs()[0]).sym) << what;
      std::vector<int> readers(lg.size(), 0);
      for (const Node& n : lg.nodes())
        for (NodeId in : n.inputs) ++readers[static_cast<size_t>(in)];
      for (NodeId o : lg.outputs()) ++readers[static_cast<size_t>(o)];
      for (const Node& n : lg.nodes()) {
        if (n.op == OpKind::Input || n.op == OpKind::Constant) continue;
        EXPECT_GT(readers[static_cast<size_t>(n.id)], 0) << what << ": %" << n.id << " unread\n"
                                                         << lg.to_string();
      }
      // Where the activation went: the second product reads it (through views) on the 2-D
      // product, or after the view on [N, 24, 1, 1].
      std::vector<NodeId> products;
      for (const Node& n : lg.nodes())
        if (n.op == OpKind::MatMul) products.push_back(n.id);
      ASSERT_EQ(products.size(), 2u) << what;
      NodeId operand = lg.node(products[1]).inputs[0];
      while (lg.node(operand).op == OpKind::Reshape) operand = lg.node(operand).inputs[0];
      EXPECT_EQ(lg.node(operand).op, v.act) << what << "\n" << lg.to_string();
      EXPECT_EQ(lg.node(operand).meta.rank(), v.moves ? 2u : 4u) << what << "\n" << lg.to_string();
      if (!symbolic) expect_same_values(g, lg, rng, what);
    }
  }
}

// A residual block as the lowering meets it: a 3x3 conv, its ReLU, a 1x1 conv on that, the sum of
// the two convs' outputs and a ReLU. The ops move before the views back to NCHW (onto the
// [N·H·W, C] products: each ReLU and the sum end up in a product's epilogue), and the 1x1 conv
// reads the first product's matrix as its im2col matrix: one im2col in all. What cannot move
// stays: an add with a per-channel [1, C, 1, 1] operand (a broadcast), a 1x1 conv with stride 2
// (its im2col picks positions). Static and symbolic sizes; values against the graph as built.
TEST(ConvLowering, ElementwiseOpsMoveOntoTheProductsAndA1x1ConvReadsTheMatrix) {
  std::mt19937 rng(13);
  for (const bool symbolic : {false, true}) {
    for (const bool stride2 : {false, true}) {
      ShapeEnv env;
      Graph g;
      if (symbolic) g.set_shape_env(&env);
      SymShape xs;
      if (symbolic)
        xs = {SymInt(env.symbol(env.create_symbol(2, "input 0 dim 0"))), SymInt(8),
              SymInt(env.symbol(env.create_symbol(9, "input 0 dim 2"))),
              SymInt(env.symbol(env.create_symbol(7, "input 0 dim 3")))};
      const NodeId x = g.add_input({DType::kF32, {2, 8, 9, 7}}, "", xs);
      const NodeId w3 = g.add_input({DType::kF32, {16, 8, 3, 3}});
      const NodeId w1 = g.add_input({DType::kF32, {16, 16, 1, 1}});
      const NodeId b1 = g.add_input({DType::kF32, {16}});
      const NodeId scale = g.add_input({DType::kF32, {1, 16, 1, 1}});
      Attrs pad1;
      pad1.window.strides = {1, 1};
      pad1.window.pads = {1, 1, 1, 1};
      pad1.window.dilations = {1, 1};
      Attrs one = pad1;
      one.window.pads = {0, 0, 0, 0};
      const NodeId c3 = add(g, OpKind::Conv, {x, w3}, pad1);
      const NodeId r = add(g, OpKind::Relu, {c3});
      const NodeId c1 = add(g, OpKind::Conv, {r, w1, b1}, one);
      const NodeId sum = add(g, OpKind::Add, {c1, r});
      const NodeId out = add(g, OpKind::Relu, {sum});
      NodeId last = add(g, OpKind::Mul, {out, scale});  // a broadcast operand: stays 4-D
      if (stride2) {
        Attrs s2 = one;
        s2.window.strides = {2, 2};
        last = add(g, OpKind::Conv, {out, w1}, s2);
      }
      g.set_outputs({last});
      if (symbolic) {
        g.canonicalize(env);
        g.set_shape_env(nullptr);
      }
      const std::string what =
          std::string(symbolic ? "symbolic" : "static") + (stride2 ? ", stride-2 1x1" : "");
      auto lowered = lower_for_device(g, test::shuffle_options().caps);
      ASSERT_TRUE(lowered.ok()) << what << ": " << lowered.status().to_string();
      ASSERT_TRUE(lowered->has_value()) << what;
      const Graph& lg = **lowered;
      EXPECT_EQ(lg.node(lg.outputs()[0]).sym, g.node(last).sym) << what;
      int im2cols = 0, moved = 0, mul4 = 0;
      for (const Node& n : lg.nodes()) {
        im2cols += n.op == OpKind::Im2col;
        moved += (n.op == OpKind::Relu || n.op == OpKind::Add) && n.meta.rank() == 2;
        mul4 += n.op == OpKind::Mul && n.meta.rank() == 4;
      }
      // The two ReLUs, the sum and the 1x1 conv's bias add on 2-D products.
      EXPECT_EQ(moved, 4) << what << "\n" << lg.to_string();
      EXPECT_EQ(im2cols, stride2 ? 2 : 1) << what << "\n" << lg.to_string();
      EXPECT_EQ(mul4, stride2 ? 0 : 1) << what << "\n" << lg.to_string();
      // The 1x1 conv's product reads the 3x3 conv's ReLU'd matrix itself.
      bool reads_relu = false;
      for (const Node& n : lg.nodes())
        if (n.op == OpKind::MatMul && lg.node(n.inputs[0]).op == OpKind::Relu)
          reads_relu |= lg.node(n.inputs[0]).meta.shape == Shape{2 * 9 * 7, 16};
      EXPECT_TRUE(reads_relu) << what << "\n" << lg.to_string();
      auto plan = plan_kernels(lg, test::shuffle_options());
      ASSERT_TRUE(plan.ok()) << what << ": " << plan.status().to_string();
      if (!symbolic) expect_same_values(g, lg, rng, what);
    }
  }
}

// A fire module between max pools (SqueezeNet's): the pools become 3-D pools over the products
// read as [N, 1, H, W, C], the concat of the expand convs a concat of their products' columns,
// and the 1x1 convs after the first conv's pool and after the second pool read matrices, not
// im2cols. The lowered graph against the graph as built on the interpreter, odd sizes.
TEST(ConvLowering, PoolsAndConcatsRunOnTheProducts) {
  std::mt19937 rng(17);
  // The last: symbolic batch and image (the pools' vec4 loads then read the product through a
  // reshape whose row count the sizes do not show equal to N·H·W).
  const std::vector<Shape> shapes = {{2, 3, 17, 15}, {3, 3, 9, 6}, {1, 3, 12, 12}, {2, 3, 17, 15}};
  for (size_t si = 0; si < shapes.size(); ++si) {
    const Shape& xs = shapes[si];
    const bool symbolic = si + 1 == shapes.size();
    // (Batch 1 with 36-position planes: the 1x1 convs over views still read the matrices,
    // not the direct form's transposed read.)
    ShapeEnv env;
    Graph g;
    SymShape xsym;
    if (symbolic) {
      g.set_shape_env(&env);
      xsym = {SymInt(env.symbol(env.create_symbol(xs[0], "input 0 dim 0"))), SymInt(xs[1]),
              SymInt(env.symbol(env.create_symbol(xs[2], "input 0 dim 2"))),
              SymInt(env.symbol(env.create_symbol(xs[3], "input 0 dim 3")))};
    }
    const NodeId x = g.add_input({DType::kF32, xs}, "", xsym);
    auto weight = [&](Shape s) { return g.add_input({DType::kF32, std::move(s)}); };
    auto conv = [&](NodeId in, NodeId w, int64_t pad) {
      Attrs a;
      a.window.strides = {1, 1};
      a.window.pads = {pad, pad, pad, pad};
      a.window.dilations = {1, 1};
      return add(g, OpKind::Conv, {in, w}, a);
    };
    auto pool = [&](NodeId in, int64_t pad, bool ceil) {
      Attrs a;
      a.window.kernel = {3, 3};
      a.window.strides = {2, 2};
      a.window.pads = {pad, pad, pad, pad};
      a.window.dilations = {1, 1};
      a.window.ceil_mode = ceil;
      return add(g, OpKind::MaxPool, {in}, a);
    };
    NodeId y = add(g, OpKind::Relu, {conv(x, weight({32, 3, 3, 3}), 1)});
    y = pool(y, 0, true);
    const NodeId sq = add(g, OpKind::Relu, {conv(y, weight({16, 32, 1, 1}), 0)});
    Attrs cat;
    cat.axis = 1;
    y = add(g, OpKind::Concat,
            {add(g, OpKind::Relu, {conv(sq, weight({32, 16, 1, 1}), 0)}),
             add(g, OpKind::Relu, {conv(sq, weight({32, 16, 3, 3}), 1)})},
            cat);
    y = pool(y, 1, false);
    g.set_outputs({conv(y, weight({20, 64, 1, 1}), 0)});
    if (symbolic) {
      g.canonicalize(env);
      g.set_shape_env(nullptr);
    }
    const std::string what = "fire module " + shape_str(xs) + (symbolic ? ", symbolic" : "");
    auto lowered = lower_for_device(g, test::shuffle_options().caps);
    ASSERT_TRUE(lowered.ok()) << what << ": " << lowered.status().to_string();
    ASSERT_TRUE(lowered->has_value()) << what;
    const Graph& lg = **lowered;
    int im2cols = 0, pools5 = 0, concats2 = 0;
    for (const Node& n : lg.nodes()) {
      im2cols += n.op == OpKind::Im2col;
      pools5 += n.op == OpKind::MaxPool && n.meta.rank() == 5;
      concats2 += n.op == OpKind::Concat && n.meta.rank() == 2;
    }
    EXPECT_EQ(im2cols, 2) << what << "\n" << lg.to_string();  // the two 3x3 convs'
    EXPECT_EQ(pools5, 2) << what << "\n" << lg.to_string();
    EXPECT_GE(concats2, 1) << what << "\n" << lg.to_string();
    auto plan = plan_kernels(lg, test::shuffle_options());
    ASSERT_TRUE(plan.ok()) << what << ": " << plan.status().to_string();
    // Both pools load 4 channels per tap (codegen/lower_pool_channels.cpp), through the second
    // one's concat too.
    int vec4_pools = 0;
    for (const Kernel& k : plan->kernels)
      vec4_pools +=
          k.name.ends_with("_max_pool") && k.glsl.find("vec4 kiln_x(") != std::string::npos;
    EXPECT_EQ(vec4_pools, 2) << what;
    // Five layers of weights in [-1, 1] without normalisation: values reach the hundreds, and
    // the products sum in another order than the convs (a wrong window would be off by O(1)).
    if (!symbolic) expect_same_values(g, lg, rng, what, 1e-4);
  }
}

/// im2col's attributes: a 3x3 window, unit strides and dilations, `pad` on every side.
Attrs im2col_3x3(int64_t pad) {
  Attrs a;
  a.window.kernel = {3, 3};
  a.window.strides = {1, 1};
  a.window.pads = {pad, pad, pad, pad};
  a.window.dilations = {1, 1};
  return a;
}

TEST(ConvLowering, Im2colShapeRuleRejectsWhatTheKernelCannotTake) {
  Graph g;
  NodeId x = g.add_input({DType::kF32, {1, 2, 5, 5}});
  const Attrs a = im2col_3x3(0);
  auto ok = g.add(OpKind::Im2col, {x}, a);
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(g.node(*ok).meta.shape, (Shape{9, 20}));  // 18 taps and 2 zeros per row
  Attrs big = a;
  big.window.kernel = {7, 7};
  EXPECT_FALSE(g.add(OpKind::Im2col, {x}, big).ok());
  NodeId h = g.add_input({DType::kF16, {1, 2, 5, 5}});
  EXPECT_FALSE(g.add(OpKind::Im2col, {h}, a).ok());
}

// The rows past the taps are zeros, whatever the input holds (NaN included).
TEST(ConvLowering, Im2colPadsItsRowsWithZeros) {
  Graph g;
  NodeId x = g.add_input({DType::kF32, {1, 3, 4, 4}});
  auto col = g.add(OpKind::Im2col, {x}, im2col_3x3(1));
  ASSERT_TRUE(col.ok()) << col.status().to_string();
  g.set_outputs({*col});
  ASSERT_EQ(g.node(*col).meta.shape, (Shape{16, 28}));
  HostTensor in(TensorMeta{DType::kF32, {1, 3, 4, 4}});
  for (int64_t i = 0; i < in.meta.numel(); ++i) in.ptr<float>()[i] = i == 5 ? NAN : float(i + 1);
  const HostTensor* ptr = &in;
  auto out = interpret(g, std::span<const HostTensor* const>(&ptr, 1), {});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const HostTensor& m = (*out)[0];
  for (int64_t p = 0; p < 16; ++p) {
    const int64_t oy = p / 4, ox = p % 4;
    for (int64_t t = 0; t < 28; ++t) {
      const float got = m.ptr<float>()[p * 28 + t];
      if (t >= 27) {
        EXPECT_EQ(got, 0.0f) << "row " << p << " tap " << t;
        continue;
      }
      const int64_t c = t / 9, iy = oy - 1 + t / 3 % 3, ix = ox - 1 + t % 3;
      const bool inside = iy >= 0 && iy < 4 && ix >= 0 && ix < 4;
      const float want = inside ? in.ptr<float>()[(c * 4 + iy) * 4 + ix] : 0.0f;
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(got)) << "row " << p << " tap " << t;
      else
        EXPECT_EQ(got, want) << "row " << p << " tap " << t;
    }
  }
}

/// An inverted-residual block (MobileNet's): a 1x1 expand conv 8 -> c with bias, ReLU, a
/// depthwise conv (`dw`: kernel, stride, pad, dilation), ReLU, a 1x1 project conv c -> 16.
struct DwCase {
  Shape x;
  int64_t c, k, stride, pad, dil;
  bool bias;
};

Graph inverted_residual(const DwCase& d, ShapeEnv* env) {
  Graph g;
  if (env != nullptr) g.set_shape_env(env);
  SymShape xs;
  if (env != nullptr)
    xs = {SymInt(env->symbol(env->create_symbol(d.x[0], "input 0 dim 0"))), SymInt(d.x[1]),
          SymInt(env->symbol(env->create_symbol(d.x[2], "input 0 dim 2"))),
          SymInt(env->symbol(env->create_symbol(d.x[3], "input 0 dim 3")))};
  const NodeId x = g.add_input({DType::kF32, d.x}, "", xs);
  const NodeId we = g.add_input({DType::kF32, {d.c, d.x[1], 1, 1}});
  const NodeId be = g.add_input({DType::kF32, {d.c}});
  const NodeId wd = g.add_input({DType::kF32, {d.c, 1, d.k, d.k}});
  const NodeId bd = g.add_input({DType::kF32, {d.c}});
  const NodeId wp = g.add_input({DType::kF32, {16, d.c, 1, 1}});
  Attrs one;
  one.window.strides = {1, 1};
  one.window.pads = {0, 0, 0, 0};
  one.window.dilations = {1, 1};
  Attrs dw;
  dw.window.strides = {d.stride, d.stride};
  dw.window.pads = {d.pad, d.pad, d.pad, d.pad};
  dw.window.dilations = {d.dil, d.dil};
  dw.window.groups = d.c;
  const NodeId e = add(g, OpKind::Relu, {add(g, OpKind::Conv, {x, we, be}, one)});
  std::vector<NodeId> dw_in{e, wd};
  if (d.bias) dw_in.push_back(bd);
  const NodeId h = add(g, OpKind::Relu, {add(g, OpKind::Conv, dw_in, dw)});
  g.set_outputs({add(g, OpKind::Conv, {h, wp}, one)});
  if (env != nullptr) {
    g.canonicalize(*env);
    g.set_shape_env(nullptr);
  }
  return g;
}

// A depthwise conv over an expand conv's product becomes depthwise_nhwc over the product read
// as [N, H, W, C] (its ReLU then moves onto its output matrix, and the project conv reads that
// matrix as its im2col: one im2col in all, the expand conv's); a channel count that is not a
// multiple of 4 keeps the conv. The lowered graph against the graph as built on the
// interpreter: strides, padding, dilation, odd and one-pixel maps.
TEST(ConvLowering, DepthwiseConvsRunOnTheProducts) {
  // (The expand conv needs 16 output channels to be lowered: form_of.)
  const std::vector<DwCase> cases = {
      {{2, 8, 9, 7}, 16, 3, 1, 1, 1, true},  {{3, 8, 11, 6}, 16, 5, 2, 2, 1, true},
      {{2, 8, 7, 9}, 20, 3, 2, 1, 1, false}, {{2, 8, 10, 10}, 24, 3, 1, 2, 2, true},
      {{2, 8, 2, 2}, 16, 3, 2, 1, 1, true},  {{2, 8, 9, 7}, 18, 3, 1, 1, 1, true},
  };
  std::mt19937 rng(17);
  for (const DwCase& d : cases) {
    for (const bool symbolic : {false, true}) {
      ShapeEnv env;
      const Graph g = inverted_residual(d, symbolic ? &env : nullptr);
      const std::string what = "x" + shape_str(d.x) + " c " + std::to_string(d.c) + " k " +
                               std::to_string(d.k) + " s " + std::to_string(d.stride) +
                               (symbolic ? " symbolic" : " static");
      auto lowered = lower_for_device(g, test::shuffle_options().caps);
      ASSERT_TRUE(lowered.ok()) << what << ": " << lowered.status().to_string();
      ASSERT_TRUE(lowered->has_value()) << what;
      const Graph& lg = **lowered;
      int dws = 0, convs = 0, im2cols = 0, relu2 = 0;
      for (const Node& n : lg.nodes()) {
        dws += n.op == OpKind::DepthwiseNhwc;
        convs += n.op == OpKind::Conv;
        im2cols += n.op == OpKind::Im2col;
        relu2 += n.op == OpKind::Relu && n.meta.rank() == 2;
      }
      const bool on_matrix = d.c % 4 == 0;
      EXPECT_EQ(dws, on_matrix ? 1 : 0) << what << "\n" << lg.to_string();
      EXPECT_EQ(convs, on_matrix ? 0 : 1) << what << "\n" << lg.to_string();
      EXPECT_EQ(relu2, on_matrix ? 2 : 1) << what << "\n" << lg.to_string();
      if (on_matrix) {
        EXPECT_EQ(im2cols, 1) << what << "\n" << lg.to_string();
      }
      auto plan = plan_kernels(lg, test::shuffle_options());
      ASSERT_TRUE(plan.ok()) << what << ": " << plan.status().to_string();
      if (on_matrix) {
        bool kernel = false;
        for (const Kernel& k : plan->kernels)
          kernel |= k.name.find("depthwise_nhwc") != std::string::npos;
        EXPECT_TRUE(kernel) << what;
        EXPECT_TRUE(compile_kernels(*plan, test::shuffle_options()).ok()) << what;
      }
      if (!symbolic) expect_same_values(g, lg, rng, what);
    }
  }
}

TEST(ConvLowering, DepthwiseNhwcShapeRuleRejectsWhatTheKernelCannotTake) {
  Graph g;
  const NodeId x = g.add_input({DType::kF32, {2, 5, 6, 8}});
  const NodeId w = g.add_input({DType::kF32, {8, 1, 3, 3}});
  const NodeId b = g.add_input({DType::kF32, {8}});
  Attrs a = im2col_3x3(1);
  a.window.strides = {2, 1};
  auto ok = g.add(OpKind::DepthwiseNhwc, {x, w, b}, a);
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(g.node(*ok).meta.shape, (Shape{2, 3, 6, 8}));
  EXPECT_TRUE(g.add(OpKind::DepthwiseNhwc, {x, w}, a).ok());  // no bias
  const NodeId w4 = g.add_input({DType::kF32, {4, 1, 3, 3}});
  EXPECT_FALSE(g.add(OpKind::DepthwiseNhwc, {x, w4, b}, a).ok());  // weight per channel
  const NodeId w2 = g.add_input({DType::kF32, {8, 2, 3, 3}});
  EXPECT_FALSE(g.add(OpKind::DepthwiseNhwc, {x, w2}, a).ok());  // one input channel each
  const NodeId w5 = g.add_input({DType::kF32, {8, 1, 5, 5}});
  EXPECT_FALSE(g.add(OpKind::DepthwiseNhwc, {x, w5}, a).ok());  // not the window's kernel
  const NodeId b4 = g.add_input({DType::kF32, {4}});
  EXPECT_FALSE(g.add(OpKind::DepthwiseNhwc, {x, w, b4}, a).ok());
  Attrs big = a;
  big.window.kernel = {9, 9};
  const NodeId w9 = g.add_input({DType::kF32, {8, 1, 9, 9}});
  EXPECT_FALSE(g.add(OpKind::DepthwiseNhwc, {x, w9}, big).ok());  // larger than the input
  const NodeId h = g.add_input({DType::kF16, {2, 5, 6, 8}});
  EXPECT_FALSE(g.add(OpKind::DepthwiseNhwc, {h, w}, a).ok());
  EXPECT_FALSE(g.add(OpKind::DepthwiseNhwc, {x}, a).ok());
}

// A depthwise conv over the concat of two expand convs' products: depthwise_nhwc where both
// parts are a multiple of 4 wide (16 + 20), the conv left as it is where they are not (18 + 18:
// the kernel's vec4 loads could not read them), and every plan compiles.
TEST(ConvLowering, DepthwiseOverAConcatNeedsPartsOfWholeVec4s) {
  for (const auto& [a, b] : std::vector<std::pair<int64_t, int64_t>>{{16, 20}, {18, 18}}) {
    Graph g;
    const NodeId x = g.add_input({DType::kF32, {2, 16, 6, 6}});
    const NodeId wa = g.add_input({DType::kF32, {a, 16, 1, 1}});
    const NodeId wb = g.add_input({DType::kF32, {b, 16, 1, 1}});
    const NodeId wd = g.add_input({DType::kF32, {a + b, 1, 3, 3}});
    Attrs one;
    one.window.strides = {1, 1};
    one.window.pads = {0, 0, 0, 0};
    one.window.dilations = {1, 1};
    Attrs dw = one;
    dw.window.pads = {1, 1, 1, 1};
    dw.window.groups = a + b;
    Attrs cat;
    cat.axis = 1;
    const NodeId c =
        add(g, OpKind::Concat,
            {add(g, OpKind::Conv, {x, wa}, one), add(g, OpKind::Conv, {x, wb}, one)}, cat);
    g.set_outputs({add(g, OpKind::Conv, {c, wd}, dw)});
    auto lowered = lower_for_device(g, test::shuffle_options().caps);
    ASSERT_TRUE(lowered.ok() && lowered->has_value());
    int dws = 0;
    for (const Node& n : (**lowered).nodes()) dws += n.op == OpKind::DepthwiseNhwc;
    EXPECT_EQ(dws, a % 4 == 0 ? 1 : 0) << a << " + " << b;
    auto plan = plan_kernels(**lowered, test::shuffle_options());
    EXPECT_TRUE(plan.ok()) << plan.status().to_string();
    std::mt19937 rng(5);
    expect_same_values(g, **lowered, rng, std::to_string(a) + " + " + std::to_string(b));
  }
}

}  // namespace
}  // namespace kiln
