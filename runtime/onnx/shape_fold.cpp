// Shape subgraphs folded at trace time. Exported models compute the shapes they reshape, pad,
// expand and slice with from `Shape` through arithmetic, comparisons, `Where`, `ConstantOfShape`,
// `Expand`, `ScatterND`, reductions and casts. When every input of such a node is a known value
// (Val::shape: small integer or bool tensors whose elements are SymSizes), the node is evaluated
// here on those elements, so its result stays known, symbolic where the sizes are, and the op
// that consumes it needs no host read (no graph break). A comparison of symbolic sizes that
// their ranges do not decide records a guard (kiln::size_relation_holds); nothing here fixes a
// size to one value. A node this file declines (a float value, an unknown input, a result of more
// than kMaxKnownElements) goes to its op handler as before.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "onnx/shape_fold.h"

namespace kiln::onnx {

namespace fold {

int64_t numel(const Shape& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

Shape strides_of(const Shape& dims) {
  Shape s(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) s[d - 1] = s[d] * dims[d];
  return s;
}

std::optional<Shape> concrete(const Val& v) {
  Shape out;
  for (const SymSize& s : *v.shape) {
    if (s.is_symbolic()) return std::nullopt;
    out.push_back(s.hint());
  }
  return out;
}

}  // namespace fold

namespace {

using namespace fold;  // NOLINT: this file's own helpers

bool holds(const SymSize& a, SizeRelation r, const SymSize& b) {
  return size_relation_holds(a, r, b);
}

/// Numpy broadcasting of the operands' dims; false when they do not broadcast.
bool broadcast_dims(const std::vector<const Val*>& ops, Shape& out) {
  size_t rank = 0;
  for (const Val* v : ops) rank = std::max(rank, v->rank());
  out.assign(rank, 1);
  for (const Val* v : ops)
    for (size_t i = 0; i < v->rank(); ++i) {
      int64_t& o = out[rank - v->rank() + i];
      const int64_t d = v->dims[i];
      if (o == 1) {
        o = d;
      } else if (d != 1 && d != o) {
        return false;
      }
    }
  return true;
}

/// The flat index into `v` of output position `flat` of a broadcast with output dims `out`.
size_t source_index(const Val& v, const Shape& out, int64_t flat) {
  const Shape os = strides_of(out), vs = strides_of(v.dims);
  size_t at = 0;
  const size_t lead = out.size() - v.rank();
  for (size_t d = 0; d < out.size(); ++d) {
    const int64_t i = (flat / os[d]) % out[d];
    if (d >= lead && v.dims[d - lead] != 1) at += static_cast<size_t>(i * vs[d - lead]);
  }
  return at;
}

/// An element-wise node over broadcast operands: `f` maps one element of each to the result.
template <typename F>
bool elementwise(NodeCtx& c, const std::vector<const Val*>& ops, DType dtype, F f) {
  Shape out;
  if (!broadcast_dims(ops, out) || numel(out) > kMaxKnownElements) return false;
  Elems r;
  std::vector<SymSize> args(ops.size());
  for (int64_t k = 0; k < numel(out); ++k) {
    for (size_t o = 0; o < ops.size(); ++o)
      args[o] = (*ops[o]->shape)[source_index(*ops[o], out, k)];
    std::optional<SymSize> e = f(args);
    if (!e) return false;
    // A 32-bit result that wraps: the op handler computes it in the declared type.
    if (dtype == DType::kI32 && !e->is_symbolic() &&
        (e->hint() < INT32_MIN || e->hint() > INT32_MAX))
      return false;
    r.push_back(*e);
  }
  c.set_known(0, std::move(r), dtype, std::move(out));
  return true;
}

DType promoted(const std::vector<const Val*>& ops) {
  DType d = ops.at(0)->dtype;
  for (const Val* v : ops) d = promote_types(d, v->dtype);
  return d;
}

std::vector<const Val*> present(const std::vector<const Val*>& in) {
  std::vector<const Val*> out;
  for (const Val* v : in)
    if (v) out.push_back(v);
  return out;
}

/// Integer division as ONNX defines it (truncation toward zero).
std::optional<SymSize> trunc_div(const SymSize& p, const SymSize& q) {
  if (!p.is_symbolic() && !q.is_symbolic()) {
    if (q.hint() == 0) return std::nullopt;  // the handler reports it
    return SymSize(p.hint() / q.hint());
  }
  // Floor division equals truncation when both are non-negative.
  if (!holds(p, SizeRelation::kGe, 0) || !holds(q, SizeRelation::kGt, 0)) return std::nullopt;
  return p / q;
}

bool arithmetic(NodeCtx& c, const std::vector<const Val*>& in, const std::string& op) {
  const std::vector<const Val*> ops = present(in);
  if (ops.empty() || promoted(ops) == DType::kBool) return false;
  const bool fmod = c.attr_i("fmod", 0) != 0;
  return elementwise(c, ops, promoted(ops), [&](const Elems& a) -> std::optional<SymSize> {
    SymSize r = a[0];
    for (size_t i = 1; i < a.size(); ++i) {
      const SymSize& q = a[i];
      if (op == "Add" || op == "Sum") {
        r = r + q;
      } else if (op == "Sub") {
        r = r - q;
      } else if (op == "Mul") {
        r = r * q;
      } else if (op == "Div") {
        auto d = trunc_div(r, q);
        if (!d) return std::nullopt;
        r = *d;
      } else if (op == "Mod") {
        if (!q.is_symbolic() && q.hint() == 0) return std::nullopt;
        if (fmod) {  // the sign of the dividend: concrete values only
          if (r.is_symbolic() || q.is_symbolic()) return std::nullopt;
          r = SymSize(r.hint() % q.hint());
        } else {
          r = r % q;  // Python's modulo: the sign of the divisor
        }
      } else if (op == "Min") {
        r = sym_min(r, q);
      } else {
        r = sym_max(r, q);
      }
    }
    return r;
  });
}

bool unary(NodeCtx& c, const std::vector<const Val*>& in, const std::string& op) {
  const Val& x = *in.at(0);
  if (op == "Not") {
    if (x.dtype != DType::kBool) return false;
    return elementwise(c, {&x}, DType::kBool, [](const Elems& a) {
      return std::optional<SymSize>(SymSize(a[0].hint() == 0 ? 1 : 0));
    });
  }
  if (x.dtype == DType::kBool) return false;
  return elementwise(c, {&x}, x.dtype, [&](const Elems& a) -> std::optional<SymSize> {
    if (op == "Neg") return SymSize(0) - a[0];
    if (op == "Abs") return holds(a[0], SizeRelation::kGe, 0) ? a[0] : SymSize(0) - a[0];
    return holds(a[0], SizeRelation::kGt, 0)   ? SymSize(1)  // Sign
           : holds(a[0], SizeRelation::kEq, 0) ? SymSize(0)
                                               : SymSize(-1);
  });
}

bool compare(NodeCtx& c, const std::vector<const Val*>& in, SizeRelation rel) {
  return elementwise(c, {in.at(0), in.at(1)}, DType::kBool, [rel](const Elems& a) {
    return std::optional<SymSize>(SymSize(holds(a[0], rel, a[1]) ? 1 : 0));
  });
}

bool logic(NodeCtx& c, const std::vector<const Val*>& in, const std::string& op) {
  if (in.at(0)->dtype != DType::kBool || in.at(1)->dtype != DType::kBool) return false;
  return elementwise(c, {in[0], in[1]}, DType::kBool, [&](const Elems& a) {
    const bool p = a[0].hint() != 0, q = a[1].hint() != 0;
    const bool r = op == "And" ? p && q : op == "Or" ? p || q : p != q;
    return std::optional<SymSize>(SymSize(r ? 1 : 0));
  });
}

bool where(NodeCtx& c, const std::vector<const Val*>& in) {
  if (in.at(0)->dtype != DType::kBool) return false;
  const DType dtype = promote_types(in.at(1)->dtype, in.at(2)->dtype);
  return elementwise(c, {in[0], in[1], in[2]}, dtype, [](const Elems& a) {
    return std::optional<SymSize>(a[0].hint() != 0 ? a[1] : a[2]);
  });
}

bool constant_of_shape(NodeCtx& c, const std::vector<const Val*>& in) {
  if (in.at(0)->rank() != 1) return false;
  const auto dims = concrete(*in[0]);
  if (!dims || std::any_of(dims->begin(), dims->end(), [](int64_t d) { return d < 0; }) ||
      numel(*dims) > kMaxKnownElements)
    return false;
  int64_t value = 0;
  DType dtype = DType::kF32;
  if (const auto* t = c.attr_t("value")) {
    auto p = decode_tensor(*t, Device::cpu(), "attribute 'value'");
    if (!p.ok() || p->tensor.numel() != 1) return false;  // the handler reports it
    dtype = p->tensor.dtype();
    if (!is_integral(dtype) && dtype != DType::kBool) return false;
    value = int_elements(p->tensor).at(0);
  }
  if (!is_integral(dtype) && dtype != DType::kBool) return false;
  c.set_known(0, Elems(static_cast<size_t>(numel(*dims)), SymSize(value)), dtype, *dims);
  return true;
}

/// Expand: the input broadcast to concrete dims.
bool expand(NodeCtx& c, const std::vector<const Val*>& in) {
  const Val& x = *in.at(0);
  const auto target = concrete(*in.at(1));
  if (!target || in[1]->rank() != 1) return false;
  Val shape_only;  // a value of the target's dims, for the broadcast rule
  shape_only.dims = *target;
  Shape out;
  if (!broadcast_dims({&x, &shape_only}, out) || numel(out) > kMaxKnownElements) return false;
  Elems r;
  for (int64_t k = 0; k < numel(out); ++k) r.push_back((*x.shape)[source_index(x, out, k)]);
  c.set_known(0, std::move(r), x.dtype, std::move(out));
  return true;
}

bool tile(NodeCtx& c, const std::vector<const Val*>& in) {
  const Val& x = *in.at(0);
  const auto reps = concrete(*in.at(1));
  if (!reps || reps->size() != x.rank()) return false;
  Shape out(x.rank());
  for (size_t d = 0; d < x.rank(); ++d) out[d] = x.dims[d] * (*reps)[d];
  if (numel(out) > kMaxKnownElements) return false;
  const Shape os = strides_of(out), xs = strides_of(x.dims);
  Elems r;
  for (int64_t k = 0; k < numel(out); ++k) {
    int64_t at = 0;
    for (size_t d = 0; d < out.size(); ++d) at += ((k / os[d]) % out[d]) % x.dims[d] * xs[d];
    r.push_back((*x.shape)[static_cast<size_t>(at)]);
  }
  c.set_known(0, std::move(r), x.dtype, std::move(out));
  return true;
}

}  // namespace

namespace fold {

bool elementwise_op(NodeCtx& c, const std::string& op, const std::vector<const Val*>& in) {
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Mod" || op == "Min" ||
      op == "Max" || op == "Sum")
    return arithmetic(c, in, op);
  if (op == "Neg" || op == "Abs" || op == "Sign" || op == "Not") return unary(c, in, op);
  if (op == "Equal") return compare(c, in, SizeRelation::kEq);
  if (op == "Less") return compare(c, in, SizeRelation::kLt);
  if (op == "LessOrEqual") return compare(c, in, SizeRelation::kLe);
  if (op == "Greater") return compare(c, in, SizeRelation::kGt);
  if (op == "GreaterOrEqual") return compare(c, in, SizeRelation::kGe);
  if (op == "And" || op == "Or" || op == "Xor") return logic(c, in, op);
  if (op == "Where") return where(c, in);
  if (op == "ConstantOfShape") return constant_of_shape(c, in);
  if (op == "Expand") return expand(c, in);
  if (op == "Tile") return tile(c, in);
  return false;
}

}  // namespace fold

bool fold_known(NodeCtx& c) {
  const ::onnx::NodeProto& n = c.node();
  if (!n.domain().empty() && n.domain() != "ai.onnx") return false;
  if (c.inputs() == 0) return false;
  std::vector<const Val*> in;
  for (size_t i = 0; i < c.inputs(); ++i) {
    if (!c.has(i)) {
      in.push_back(nullptr);
      continue;
    }
    const Val& v = c.val(i);
    if (!v.shape) return false;
    in.push_back(&v);
  }
  if (!in[0]) return false;
  return fold::elementwise_op(c, n.op_type(), in) || fold::layout_op(c, n.op_type(), in);
}

}  // namespace kiln::onnx
