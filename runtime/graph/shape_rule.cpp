// ShapeRule: the two modes of a shape rule written once over symbolic sizes (shape_rule.h).
#include "graph/shape_rule.h"

namespace kiln {

ShapeRule::ShapeRule(OpKind op, std::span<const TensorMeta> metas, std::span<const SymShape> syms,
                     const Attrs& attrs, ShapeEnv* env, std::string provenance)
    : op_(op),
      metas_(metas),
      attrs_(attrs),
      env_(env),
      symbolic_(!syms.empty() || env != nullptr),
      prov_(std::move(provenance)) {
  if (syms.empty()) {
    for (const TensorMeta& m : metas) shapes_.push_back(sym_shape_of(m.shape));
  } else {
    shapes_.assign(syms.begin(), syms.end());
  }
}

Status ShapeRule::error(const std::string& what) const {
  return detail::op_error(op_, metas_, what);
}

Expected<SymInt> ShapeRule::equal(const SymInt& a, const SymInt& b, const std::string& what) {
  if (a == b) return a;
  if (!env_) {
    if (a.is_constant() && b.is_constant() && a.constant_value() == b.constant_value()) return a;
    return error(what + " " + a.str() + " and " + b.str() + " must be equal");
  }
  KILN_ASSIGN_OR_RETURN(bool eq, env_->evaluate_guarding(sym_eq(a, b), prov_));
  if (!eq) return error(what + " " + a.str() + " and " + b.str() + " must be equal");
  return env_->simplify(b.is_constant() ? b : a);
}

Status ShapeRule::expect_equal(const SymInt& a, const SymInt& b, const std::string& message) {
  if (a == b) return {};
  if (!env_) {
    if (a.is_constant() && b.is_constant() && a.constant_value() == b.constant_value()) return {};
    return error(message);
  }
  KILN_ASSIGN_OR_RETURN(bool eq, env_->evaluate_guarding(sym_eq(a, b), prov_));
  if (!eq) return error(message);
  return {};
}

Status ShapeRule::expect_same_shape(const SymShape& a, const SymShape& b,
                                    const std::string& message) {
  if (a.size() != b.size()) return error(message);
  for (size_t i = 0; i < a.size(); ++i) KILN_RETURN_IF_ERROR(expect_equal(a[i], b[i], message));
  return {};
}

Status ShapeRule::at_least(const SymInt& a, const SymInt& b, const std::string& what) {
  if (!env_) {
    if (a.is_constant() && b.is_constant()) {
      if (a.constant_value() >= b.constant_value()) return {};
      return error(what);
    }
    return error(what + " (sizes " + a.str() + " and " + b.str() + " are not constants)");
  }
  KILN_ASSIGN_OR_RETURN(bool ge, env_->evaluate_guarding(sym_ge(a, b), prov_));
  if (!ge) return error(what);
  return {};
}

Expected<int64_t> ShapeRule::constant(const SymInt& v) {
  if (v.is_constant()) return v.constant_value();
  if (!env_) return error("size " + v.str() + " must be static");
  KILN_ASSIGN_OR_RETURN(SymInt c, equal(v, SymInt(env_->hint(v))));
  return c.constant_value();
}

namespace detail {

ShapeRuleFn shape_rule(OpKind op) {
  static constexpr ShapeRuleFn kRules[] = {
#define KILN_OP(e, name, cat, arity, attrs) nullptr,
#define KILN_RULE_OP(e, name, cat, arity, attrs, rule) &rule##_shape,
#define KILN_KERNEL_OP(e, name, cat, arity, attrs, variant, stem) &stem##_shape,
#include "graph/ops.def"
#undef KILN_KERNEL_OP
#undef KILN_RULE_OP
#undef KILN_OP
  };
  return kRules[static_cast<size_t>(op)];
}

Expected<TensorMeta> eval_shape_rule(ShapeRuleFn rule, OpKind op, std::span<const TensorMeta> ins,
                                     const Attrs& attrs) {
  ShapeRule r(op, ins, {}, attrs, nullptr, op_name(op));
  KILN_ASSIGN_OR_RETURN(SymMeta m, rule(r));
  TensorMeta out{m.dtype, {}};
  for (const SymInt& d : m.shape) {
    if (!d.is_constant()) return internal_error(std::string(op_name(op)) + ": a symbolic size");
    if (d.constant_value() < 0) return op_error(op, ins, "negative output size " + d.str());
    out.shape.push_back(d.constant_value());
  }
  return out;
}

}  // namespace detail

}  // namespace kiln
