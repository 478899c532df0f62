/// \file shape_rule.h
/// Shape rules written once, over symbolic sizes. A rule computes an op's output dtype and
/// symbolic shape from its inputs through a ShapeRule, which answers the questions a rule asks
/// about sizes (are two equal, is one at least another, what constant is one) in two modes:
///   * concrete (infer_meta): every size is a constant, there is no shape environment, and a
///     question is answered by arithmetic; a failed check is the op's error, naming the op and
///     its input metas (detail::op_error);
///   * symbolic (Graph::add): sizes are the inputs' symbolic shapes, and each answer is
///     recorded in the graph's ShapeEnv as a guard with the op and source line as provenance.
/// So the concrete shape is the rule evaluated at constant sizes, and an op written this way
/// (a KILN_RULE_OP or KILN_KERNEL_OP row of ops.def) has no second, concrete rule.
#pragma once

#include <array>
#include <span>
#include <string>

#include "graph/graph.h"
#include "graph/op.h"

namespace kiln {

/// An output as a rule gives it.
struct SymMeta {
  DType dtype = DType::kF32;
  SymShape shape;
};

class ShapeRule {
 public:
  /// `metas` are the inputs' metas (their shapes the hints); `syms` their symbolic shapes, or
  /// empty for the concrete mode (the metas' shapes as constants).
  ShapeRule(OpKind op, std::span<const TensorMeta> metas, std::span<const SymShape> syms,
            const Attrs& attrs, ShapeEnv* env, std::string provenance);

  OpKind op() const { return op_; }
  const Attrs& attrs() const { return attrs_; }
  size_t inputs() const { return metas_.size(); }
  DType dtype(size_t i) const { return metas_[i].dtype; }
  int rank(size_t i) const { return metas_[i].rank(); }
  /// Input `i`'s sizes (constants in the concrete mode).
  const SymShape& shape(size_t i) const { return shapes_[i]; }
  /// Input `i`'s meta: its sizes are the traced (hint) sizes. A check on them records no guard;
  /// it holds at the sizes the graph was traced at, and Graph::instantiate checks it again at
  /// others (the checks a rule makes of sizes it does not guard).
  const TensorMeta& meta(size_t i) const { return metas_[i]; }
  /// Whether the sizes are the inputs' symbolic shapes (Graph::add's second run).
  bool symbolic() const { return symbolic_; }

  /// The op's error: "op(f32[2, 3], ...): what".
  Status error(const std::string& what) const;
  /// `a` and `b` must be equal: the (canonical) size, or an error naming both.
  Expected<SymInt> equal(const SymInt& a, const SymInt& b, const std::string& what = "sizes");
  /// `a` and `b` must be equal, else error(message), the message whole.
  Status expect_equal(const SymInt& a, const SymInt& b, const std::string& message);
  /// `a` and `b` must have one rank and equal sizes, else error(message).
  Status expect_same_shape(const SymShape& a, const SymShape& b, const std::string& message);
  /// `a` >= `b` must hold, else error(what).
  Status at_least(const SymInt& a, const SymInt& b, const std::string& what);
  /// A size the rule's structure depends on, as a constant (a symbolic one is specialised to
  /// its hint with a guard).
  Expected<int64_t> constant(const SymInt& v);

 private:
  OpKind op_;
  std::span<const TensorMeta> metas_;
  std::vector<SymShape> shapes_;
  const Attrs& attrs_;
  ShapeEnv* env_;
  bool symbolic_;
  std::string prov_;
};

using ShapeRuleFn = Expected<SymMeta> (*)(ShapeRule&);

namespace detail {
// The shape rule of every KILN_RULE_OP row, `<rule>_shape`, and of every KILN_KERNEL_OP row,
// `<stem>_shape`, defined in runtime/graph/op_rules_<rule or stem>.cpp.
#define KILN_OP(e, name, cat, arity, attrs)
#define KILN_RULE_OP(e, name, cat, arity, attrs, rule) Expected<SymMeta> rule##_shape(ShapeRule& r);
#define KILN_KERNEL_OP(e, name, cat, arity, attrs, variant, stem) \
  Expected<SymMeta> stem##_shape(ShapeRule& r);
#include "graph/ops.def"
#undef KILN_KERNEL_OP
#undef KILN_RULE_OP
#undef KILN_OP

/// The output sizes of Attrs::window, a 2-D window (kernel, strides, dilations of 2, pads of 4),
/// over input 0's dims `first` and `first + 1`; errors for a malformed window or one larger
/// than the padded input at the traced sizes (runtime/graph/op_rules_im2col.cpp: im2col's and
/// depthwise_nhwc's rules).
Expected<std::array<SymInt, 2>> window_2d_output(ShapeRule& r, size_t first);

/// The rule of `op`'s row, or null for an op whose rules are written by category.
ShapeRuleFn shape_rule(OpKind op);
/// infer_meta of a rule: evaluated at the inputs' constant sizes.
Expected<TensorMeta> eval_shape_rule(ShapeRuleFn rule, OpKind op, std::span<const TensorMeta> ins,
                                     const Attrs& attrs);
}  // namespace detail

}  // namespace kiln
