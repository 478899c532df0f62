/// \file graph_builders.h
/// Small graphs shared by the codegen tests (tests/null/*codegen*, golden_test).
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "codegen/kernel.h"
#include "graph/graph.h"

namespace kiln::test {

/// Adds a node, failing the test (and returning the error's -1) if the shape rule rejects it.
inline NodeId add(Graph& g, OpKind op, std::vector<NodeId> in, Attrs a = {}) {
  auto r = g.add(op, std::move(in), std::move(a));
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : -1;
}

inline CodegenOptions generic_options(bool fuse = true) {
  CodegenOptions o;
  o.fuse = fuse;
  o.caps = TargetCaps::generic();
  return o;
}

/// generic_options() on a device with subgroup shuffle and vote (the attention kernel's needs).
inline CodegenOptions shuffle_options() {
  CodegenOptions o = generic_options();
  o.caps.subgroup_shuffle = o.caps.subgroup_vote = true;
  return o;
}

/// y = relu((x * a + b) * c - d), x f32[rows, cols], a..d f32[cols] (broadcast).
inline Graph chain_graph(Dim rows, Dim cols) {
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

}  // namespace kiln::test
