// The interpreter's fused elementwise chains (eager/interpreter_chain.h): which nodes form a
// chain, and that a graph evaluated with them gives the bits of evaluating each node on its
// own (interpret_op), for activations as exported models write them out (hard-swish, tanh-GELU),
// broadcast operands, sizes 0, 1, odd and large enough for several blocks and threads, and
// values that must stay materialised (graph outputs, reads from outside the chain).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "eager/interpreter.h"
#include "eager/interpreter_chain.h"
#include "graph/graph.h"
#include "graph/op.h"

namespace kiln {
namespace {

NodeId add(Graph& g, OpKind op, std::vector<NodeId> ins, const Attrs& a = {}) {
  auto r = g.add(op, std::move(ins), a);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : NodeId{-1};
}

NodeId scalar(Graph& g, double v) {
  return add(g, OpKind::Full, {}, Attrs{.scalar = v, .dtype = DType::kF32});
}

HostTensor random_f32(const Shape& shape, std::mt19937& rng) {
  HostTensor t(TensorMeta{DType::kF32, shape});
  std::uniform_real_distribution<float> real(-6.0f, 6.0f);
  auto* p = reinterpret_cast<float*>(t.data.data());
  for (int64_t i = 0; i < t.meta.numel(); ++i) p[i] = real(rng);
  if (t.meta.numel() > 3) {  // special values travel through both ways alike
    p[0] = std::numeric_limits<float>::quiet_NaN();
    p[1] = -std::numeric_limits<float>::infinity();
    p[2] = -0.0f;
  }
  return t;
}

/// Every node evaluated on its own with interpret_op, in graph order: the reference.
std::vector<HostTensor> node_by_node(const Graph& g, const std::vector<const HostTensor*>& inputs) {
  std::map<NodeId, HostTensor> value;
  for (const Node& n : g.nodes()) {
    if (n.op == OpKind::Input) {
      value[n.id] = *inputs[static_cast<size_t>(n.attrs.index)];
      continue;
    }
    std::vector<const HostTensor*> args;
    for (NodeId in : n.inputs) args.push_back(&value.at(in));
    auto r = interpret_op(n.op, args, n.attrs);
    EXPECT_TRUE(r.ok()) << op_name(n.op) << ": " << r.status().to_string();
    if (!r.ok()) return {};
    value[n.id] = std::move(r).value();
  }
  std::vector<HostTensor> outs;
  for (NodeId o : g.outputs()) outs.push_back(value.at(o));
  return outs;
}

void expect_same_bits(const Graph& g, const std::vector<const HostTensor*>& inputs,
                      const std::string& what) {
  auto fused = interpret(g, inputs, {});
  ASSERT_TRUE(fused.ok()) << what << ": " << fused.status().to_string();
  const std::vector<HostTensor> want = node_by_node(g, inputs);
  ASSERT_EQ(fused->size(), want.size()) << what;
  for (size_t o = 0; o < want.size(); ++o) {
    const HostTensor& a = (*fused)[o];
    const HostTensor& b = want[o];
    ASSERT_EQ(a.meta, b.meta) << what;
    int bad = 0;
    for (int64_t i = 0; i < a.meta.numel() && bad < 5; ++i) {
      float x, y;
      std::memcpy(&x, a.data.data() + 4 * i, 4);
      std::memcpy(&y, b.data.data() + 4 * i, 4);
      if (std::memcmp(&x, &y, 4) != 0 && !(std::isnan(x) && std::isnan(y))) {
        ++bad;
        ADD_FAILURE() << what << ", output " << o << " element " << i << ": " << x << ", want "
                      << y;
      }
    }
  }
}

/// hard-swish as torch exports it: x * min(max(x + 3, 0), 6) / 6, its constants created
/// between the arithmetic nodes.
NodeId hard_swish(Graph& g, NodeId x) {
  NodeId t = add(g, OpKind::Add, {x, scalar(g, 3.0)});
  t = add(g, OpKind::Maximum, {t, scalar(g, 0.0)});
  t = add(g, OpKind::Minimum, {t, scalar(g, 6.0)});
  t = add(g, OpKind::Mul, {x, t});
  return add(g, OpKind::Div, {t, scalar(g, 6.0)});
}

/// tanh-GELU written out: 0.5 x (1 + tanh(0.79788 (x + 0.044715 x^3))), 0.5 x first.
NodeId gelu_tanh(Graph& g, NodeId x) {
  NodeId half = add(g, OpKind::Mul, {x, scalar(g, 0.5)});
  NodeId cube = add(g, OpKind::Pow, {x, scalar(g, 3.0)});
  NodeId t = add(g, OpKind::Mul, {cube, scalar(g, 0.044715)});
  t = add(g, OpKind::Add, {x, t});
  t = add(g, OpKind::Mul, {t, scalar(g, 0.7978845608028654)});
  t = add(g, OpKind::Tanh, {t});
  t = add(g, OpKind::Add, {t, scalar(g, 1.0)});
  return add(g, OpKind::Mul, {half, t});
}

TEST(InterpreterChain, ActivationsWrittenOutAreOneChain) {
  Graph g;
  NodeId x = g.add_input({DType::kF32, {2, 3}});
  g.set_outputs({hard_swish(g, x)});
  auto chains = eager::find_chains(g);
  ASSERT_EQ(chains.size(), 1u);
  EXPECT_EQ(chains[0].size(), 5u);  // the five arithmetic nodes, not the constants

  Graph h;
  NodeId y = h.add_input({DType::kF32, {4, 7}});
  h.set_outputs({gelu_tanh(h, y)});
  chains = eager::find_chains(h);
  ASSERT_EQ(chains.size(), 1u);
  EXPECT_EQ(chains[0].size(), 8u);
}

TEST(InterpreterChain, ValuesReadOutsideStayMaterialised) {
  // A graph output in the middle ends the chain before it: t1 is an output, so the chain is
  // t2..t3 (t1 is read by it from memory).
  Graph g;
  NodeId x = g.add_input({DType::kF32, {5}});
  NodeId t1 = add(g, OpKind::Add, {x, x});
  NodeId t2 = add(g, OpKind::Mul, {t1, x});
  NodeId t3 = add(g, OpKind::Sub, {t2, t1});
  g.set_outputs({t1, t3});
  for (const auto& c : eager::find_chains(g))
    for (size_t pos : c) EXPECT_NE(static_cast<NodeId>(pos), t1) << "t1 is a graph output";
  // A value another op reads (a reduction) is not fused away either.
  Graph h;
  NodeId y = h.add_input({DType::kF32, {3, 4}});
  NodeId u1 = add(h, OpKind::Exp, {y});
  NodeId u2 = add(h, OpKind::Neg, {u1});
  NodeId s = add(h, OpKind::Sum, {u1}, Attrs{.dims = {1}, .keepdim = true});
  NodeId u3 = add(h, OpKind::Mul, {u2, s});
  h.set_outputs({u3});
  for (const auto& c : eager::find_chains(h))
    for (size_t pos : c) EXPECT_NE(static_cast<NodeId>(pos), u1) << "u1 is read by the sum";
  std::mt19937 rng(3);
  const HostTensor a = random_f32({5}, rng), b = random_f32({3, 4}, rng);
  expect_same_bits(g, {&a}, "output in the middle");
  expect_same_bits(h, {&b}, "read by a reduction");
}

TEST(InterpreterChain, GivesTheNodeByNodeBitsAtEverySize) {
  std::mt19937 rng(7);
  // Sizes: empty, one element, odd, and several blocks of 4096 split over threads.
  for (const Shape& s : std::vector<Shape>{{0, 5}, {1}, {3, 37}, {2, 96, 1031}}) {
    Graph g;
    NodeId x = g.add_input({DType::kF32, s});
    NodeId row = g.add_input({DType::kF32, {s.back()}});  // broadcast along the rows
    NodeId t = hard_swish(g, x);
    t = add(g, OpKind::Mul, {t, row});
    t = gelu_tanh(g, t);
    t = add(g, OpKind::Sub, {row, t});  // the broadcast operand first
    g.set_outputs({t});
    EXPECT_FALSE(eager::find_chains(g).empty());
    const HostTensor a = random_f32(s, rng), r = random_f32({s.back()}, rng);
    expect_same_bits(g, {&a, &r}, "chain over " + shape_str(s));
  }
}

TEST(InterpreterChain, OperandsOfEveryBroadcastPattern) {
  // Column, middle-dim and scalar-tensor operands, and a chain member reading the same value
  // twice.
  std::mt19937 rng(11);
  Graph g;
  NodeId x = g.add_input({DType::kF32, {3, 5, 300}});
  NodeId col = g.add_input({DType::kF32, {3, 5, 1}});
  NodeId mid = g.add_input({DType::kF32, {1, 5, 1}});
  NodeId one = g.add_input({DType::kF32, {}});
  NodeId t = add(g, OpKind::Add, {x, col});
  t = add(g, OpKind::Mul, {t, t});
  t = add(g, OpKind::Div, {mid, t});
  t = add(g, OpKind::Maximum, {t, one});
  t = add(g, OpKind::Sqrt, {t});
  g.set_outputs({t});
  ASSERT_EQ(eager::find_chains(g).size(), 1u);
  const HostTensor a = random_f32({3, 5, 300}, rng), c = random_f32({3, 5, 1}, rng),
                   m = random_f32({1, 5, 1}, rng), o = random_f32({}, rng);
  expect_same_bits(g, {&a, &c, &m, &o}, "broadcast operands");
}

}  // namespace
}  // namespace kiln
