// Symbolic shape rules: the output shape of every op over size symbols (an op whose ops.def row
// names its one rule runs that rule, graph/shape_rule.h; the others are the cases below). They
// run after the concrete rule (infer_meta) accepted the op at the hint sizes, so they only
// decide how the result is written symbolically; whenever that needs a fact about symbols (two sizes that
// broadcast must be equal, a reshape keeps the element count) the fact is recorded in the
// ShapeEnv as a guard with the op and source line as provenance.
#include <algorithm>

#include "graph/graph.h"
#include "graph/shape_rule.h"

namespace kiln {
namespace {

class SymRules {
 public:
  SymRules(OpKind op, ShapeEnv* env, const std::string& provenance)
      : op_(op), env_(env), prov_(provenance) {}

  /// `a` and `b` must be equal sizes: returns the (canonical) size, recording the equality.
  Expected<SymInt> unify(const SymInt& a, const SymInt& b) {
    if (a == b) return a;
    if (!env_) {
      if (a.is_constant() && b.is_constant() && a.constant_value() == b.constant_value()) return a;
      return invalid_argument(std::string(op_name(op_)) + ": sizes " + a.str() + " and " + b.str() +
                              " must be equal, and there is no shape environment to guard it");
    }
    KILN_ASSIGN_OR_RETURN(bool eq, env_->evaluate_guarding(sym_eq(a, b), prov_));
    if (!eq)
      return invalid_argument(std::string(op_name(op_)) + ": sizes " + a.str() + " and " + b.str() +
                              " differ");
    return env_->simplify(b.is_constant() ? b : a);
  }

  static bool is_one(const SymInt& d) { return d.is_constant() && d.constant_value() == 1; }

  /// Whether `d` broadcasts: the constant 1, or a derived size (x[3::3]'s length) that is 1 at
  /// the hints, which is then recorded as equal to 1 (the ShapeEnv replaces the expression by
  /// 1 from then on, in this node's input and in codegen's view of the graph, which
  /// broadcasts constant 1s only).
  Expected<bool> broadcasts(const SymInt& d) {
    if (is_one(d)) return true;
    if (d.is_constant() || !env_ || env_->hint(d) != 1) return false;
    return env_->evaluate_guarding(sym_eq(d, SymInt(1)), prov_ + " (broadcasts a size of 1)");
  }

  Expected<SymShape> broadcast(const SymShape& a, const SymShape& b) {
    const size_t rank = std::max(a.size(), b.size());
    SymShape out(rank);
    for (size_t i = 0; i < rank; ++i) {
      SymInt da = i < rank - a.size() ? SymInt(1) : a[i - (rank - a.size())];
      SymInt db = i < rank - b.size() ? SymInt(1) : b[i - (rank - b.size())];
      if (da == db) {
        out[i] = da;
        continue;
      }
      if (is_one(da) || is_one(db)) {
        out[i] = is_one(da) ? db : da;
        continue;
      }
      KILN_ASSIGN_OR_RETURN(bool one_a, broadcasts(da));
      KILN_ASSIGN_OR_RETURN(bool one_b, broadcasts(db));
      if (one_a) {
        out[i] = one_b ? SymInt(1) : db;
      } else if (one_b) {
        out[i] = da;
      } else {
        KILN_ASSIGN_OR_RETURN(out[i], unify(da, db));
      }
    }
    return out;
  }

  /// Records that two element counts are equal (a reshape).
  Status same_count(const SymShape& a, const SymShape& b) {
    SymInt na = 1, nb = 1;
    for (const SymInt& d : a) na = na * d;
    for (const SymInt& d : b) nb = nb * d;
    if (env_) {
      na = env_->simplify(na);
      nb = env_->simplify(nb);
    }
    if (na == nb) return {};
    if (!env_)
      return invalid_argument(std::string(op_name(op_)) + ": element counts " + na.str() + " and " +
                              nb.str() + " must be equal, and there is no shape environment");
    KILN_ASSIGN_OR_RETURN(bool eq, env_->evaluate_guarding(sym_eq(na, nb), prov_));
    if (!eq) return invalid_argument(std::string(op_name(op_)) + ": element counts differ");
    return {};
  }

  Expected<SymShape> matmul(const SymShape& a0, const SymShape& b0, const Attrs& at) {
    SymShape sa = a0, sb = b0;
    if (sa.size() == 1)
      sa.insert(sa.begin(), SymInt(1));
    else if (at.trans_a)
      std::swap(sa[sa.size() - 1], sa[sa.size() - 2]);
    if (sb.size() == 1)
      sb.push_back(SymInt(1));
    else if (at.trans_b)
      std::swap(sb[sb.size() - 1], sb[sb.size() - 2]);
    KILN_RETURN_IF_ERROR(unify(sa.back(), sb[sb.size() - 2]).status());
    KILN_ASSIGN_OR_RETURN(SymShape out, broadcast(SymShape(sa.begin(), sa.end() - 2),
                                                  SymShape(sb.begin(), sb.end() - 2)));
    if (a0.size() > 1) out.push_back(sa[sa.size() - 2]);
    if (b0.size() > 1) out.push_back(sb.back());
    return out;
  }

  /// A size the op's structure depends on (a window extent, gather_nd's index length) as a
  /// constant: a symbolic one is specialised to its hint with a guard.
  Expected<int64_t> specialise(const SymInt& v) {
    if (v.is_constant()) return v.constant_value();
    if (!env_)
      return invalid_argument(std::string(op_name(op_)) + ": size " + v.str() +
                              " must be static, and there is no shape environment to guard it");
    KILN_ASSIGN_OR_RETURN(SymInt c, unify(v, SymInt(env_->hint(v))));
    return c.constant_value();
  }

  /// Conv / MaxPool / AvgPool: [N, C_out, O1, ..., Ok], each O from window_output_size over
  /// the symbols. The window must fit the padded input (with ceil_mode, overhang it by at most
  /// stride - 1): recorded as a guard.
  Expected<SymShape> window(std::span<const SymShape> ins, const Attrs& at) {
    const Attrs::Window& w = at.window;
    const SymShape& x = ins[0];
    const size_t k = x.size() - 2;
    SymShape result = {x[0], op_ == OpKind::Conv ? ins[1][0] : x[1]};
    if (op_ == OpKind::Conv) {
      KILN_RETURN_IF_ERROR(unify(x[1], ins[1][1] * SymInt(w.groups)).status());
      if (ins.size() == 3) KILN_RETURN_IF_ERROR(unify(ins[2][0], ins[1][0]).status());
    }
    for (size_t i = 0; i < k; ++i) {
      const SymInt& d = x[i + 2];
      int64_t kernel = 0;
      if (op_ == OpKind::Conv) {
        KILN_ASSIGN_OR_RETURN(kernel, specialise(ins[1][i + 2]));
      } else {
        kernel = w.kernel[i];
      }
      const int64_t s = w.strides[i], pb = w.pads[i], pe = w.pads[i + k];
      const int64_t extent = w.dilations[i] * (kernel - 1) + 1;
      const bool ceil = op_ != OpKind::Conv && w.ceil_mode;
      if (d.is_constant()) {
        result.push_back(SymInt(
            window_output_size(d.constant_value(), kernel, s, pb, pe, w.dilations[i], ceil)));
        continue;
      }
      if (env_) {
        const int64_t overhang = ceil ? s - 1 : 0;
        KILN_ASSIGN_OR_RETURN(
            bool fits,
            env_->evaluate_guarding(sym_ge(d, SymInt(extent - pb - pe - overhang)), prov_));
        if (!fits) return invalid_argument(std::string(op_name(op_)) + ": window exceeds input");
      }
      const SymInt span = d + SymInt(pb + pe - extent);
      if (!ceil) {
        result.push_back(sym_floordiv(span, SymInt(s)) + SymInt(1));
      } else {  // windows may not start in the end padding
        result.push_back(sym_min(sym_floordiv(span + SymInt(s - 1), SymInt(s)),
                                 sym_floordiv(d + SymInt(pb - 1), SymInt(s))) +
                         SymInt(1));
      }
    }
    return result;
  }

 private:
  OpKind op_;
  ShapeEnv* env_;
  const std::string& prov_;
};

}  // namespace

SymSliceRange resolve_sym_slice(int64_t start, int64_t end, int64_t step, const SymInt& size,
                                const SymFacts* facts) {
  if (size.is_constant()) {
    SliceRange r = resolve_slice(start, end, step, size.constant_value());
    return {SymInt(r.start), SymInt(r.length)};
  }
  const SymExpr n = size.expr();
  auto clamp = [&](int64_t v) {
    if (v < 0) return sym_max(n + SymExpr::constant(v), SymExpr::constant(0), facts);
    return sym_min(SymExpr::constant(v), n, facts);
  };
  const SymExpr s = clamp(start), e = clamp(end);
  const SymExpr len =
      sym_max(sym_floordiv(e - s + SymExpr::constant(step - 1), SymExpr::constant(step), facts),
              SymExpr::constant(0), facts);
  return {SymInt(s), SymInt(len)};
}

Expected<SymShape> infer_sym_shape(OpKind op, std::span<const SymShape> ins, const Attrs& attrs,
                                   const TensorMeta& out, const SymShape& target, ShapeEnv* env,
                                   const std::string& provenance,
                                   std::span<const TensorMeta> metas) {
  SymRules r(op, env, provenance);
  SymShape result;
  if (ShapeRuleFn rule = detail::shape_rule(op)) {  // the op's rule over symbolic sizes
    if (metas.size() != ins.size())
      return internal_error(provenance + ": the shape rule needs the inputs' metas");
    ShapeRule sr(op, metas, ins, attrs, env, provenance);
    KILN_ASSIGN_OR_RETURN(SymMeta m, rule(sr));
    result = std::move(m.shape);
  } else {
    switch (op_category(op)) {
      case OpCategory::kSource:
      case OpCategory::kMovement: {
        if (op == OpKind::Permute) {
          for (int64_t p : attrs.dims) result.push_back(ins[0][static_cast<size_t>(p)]);
          break;
        }
        if (target.empty()) {
          result = sym_shape_of(out.shape);
        } else if (op == OpKind::Arange) {
          if (target.size() != 1) return invalid_argument("arange: the symbolic length has 1 dim");
          result = target;
        } else {
          if (target.size() != out.shape.size())
            return invalid_argument(std::string(op_name(op)) + ": symbolic shape " +
                                    sym_shape_str(target) + " has the wrong rank for " + out.str());
          result = target;
        }
        if (op == OpKind::Reshape) {
          KILN_RETURN_IF_ERROR(r.same_count(ins[0], result));
        } else if (op == OpKind::Expand) {
          const size_t off = result.size() - ins[0].size();
          for (size_t i = 0; i < ins[0].size(); ++i) {
            if (SymRules::is_one(ins[0][i]) || ins[0][i] == result[i + off]) continue;
            KILN_ASSIGN_OR_RETURN(bool one, r.broadcasts(ins[0][i]));
            if (one) continue;
            KILN_ASSIGN_OR_RETURN(result[i + off], r.unify(ins[0][i], result[i + off]));
          }
        }
        break;
      }
      case OpCategory::kUnary:
      case OpCategory::kCast:
      case OpCategory::kTriangular:
        result = ins[0];
        break;
      case OpCategory::kNormalization:
        result = ins[0];
        if (op == OpKind::LayerNorm) {
          const size_t k = static_cast<size_t>(attrs.index);
          for (size_t i = 1; i < 3; ++i)
            for (size_t j = 0; j < k; ++j)
              KILN_RETURN_IF_ERROR(r.unify(result[result.size() - k + j], ins[i][j]).status());
        }
        break;
      case OpCategory::kBinary:
      case OpCategory::kCompare: {
        KILN_ASSIGN_OR_RETURN(result, r.broadcast(ins[0], ins[1]));
        break;
      }
      case OpCategory::kTernary: {
        KILN_ASSIGN_OR_RETURN(SymShape s, r.broadcast(ins[0], ins[1]));
        KILN_ASSIGN_OR_RETURN(result, r.broadcast(s, ins[2]));
        break;
      }
      case OpCategory::kReduce:
        for (size_t i = 0; i < ins[0].size(); ++i) {
          const bool reduced = std::find(attrs.dims.begin(), attrs.dims.end(),
                                         static_cast<int64_t>(i)) != attrs.dims.end();
          if (!reduced)
            result.push_back(ins[0][i]);
          else if (attrs.keepdim)
            result.push_back(SymInt(1));
        }
        break;
      case OpCategory::kContraction: {
        KILN_ASSIGN_OR_RETURN(result, r.matmul(ins[0], ins[1], attrs));
        break;
      }
      case OpCategory::kWindow: {
        if (op == OpKind::Resize) {  // a size per axis (symbolic: the target), or the input's (-1)
          if (!target.empty() && target.size() != ins[0].size())
            return invalid_argument("resize: symbolic sizes " + sym_shape_str(target) +
                                    " have the wrong rank for " + out.str());
          for (size_t i = 0; i < ins[0].size(); ++i)
            result.push_back(attrs.dims[i] < 0 ? ins[0][i]
                             : !target.empty() ? target[i]
                                               : SymInt(attrs.dims[i]));
          break;
        }
        KILN_ASSIGN_OR_RETURN(result, r.window(ins, attrs));
        break;
      }
      case OpCategory::kScatter:  // every op's row names its rule
      case OpCategory::kSpectral:
      case OpCategory::kCompaction:
        return internal_error(provenance + ": no shape rule");
      case OpCategory::kIndexing: {
        const size_t rank = ins[0].size();
        const size_t d = static_cast<size_t>(
            attrs.axis < 0 ? attrs.axis + static_cast<int64_t>(rank) : attrs.axis);
        if (op == OpKind::Gather) {
          result = ins[1];
        } else if (op == OpKind::IndexSelect) {
          result = ins[0];
          result[d] = ins[1][0];
        } else if (op == OpKind::Concat) {
          result = ins[0];
          for (size_t i = 1; i < ins.size(); ++i) {
            for (size_t j = 0; j < rank; ++j) {
              if (j == d) continue;
              KILN_ASSIGN_OR_RETURN(result[j], r.unify(result[j], ins[i][j]));
            }
            result[d] = result[d] + ins[i][d];
          }
        } else {  // Slice
          result = ins[0];
          result[d] =
              resolve_sym_slice(attrs.dims[0], attrs.dims[1], attrs.dims[2], result[d], env).length;
        }
        break;
      }
    }
  }
  if (env)
    for (SymInt& d : result) d = env->simplify(d);
  // The symbolic shape must reproduce the concrete one at the hints.
  bool ok = result.size() == out.shape.size();
  for (size_t i = 0; ok && i < result.size(); ++i)
    ok = (env ? env->hint(result[i])
              : (result[i].is_constant() ? result[i].constant_value() : out.shape[i])) ==
         out.shape[i];
  if (!ok)
    return internal_error(provenance + ": symbolic shape " + sym_shape_str(result) +
                          " does not match " + out.str());
  return result;
}

}  // namespace kiln
