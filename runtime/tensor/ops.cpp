// The Tensor op functions: each builds its attributes and goes through apply_op.
#include <cmath>
#include <cstdio>

#include "capture/host_memo.h"
#include "capture/trace.h"
#include "tensor/apply_op.h"
#include "eager/host_ops.h"
#include "kiln/fft.h"

namespace kiln {
namespace {

Tensor binary(OpKind op, const Tensor& a, const Tensor& b, const Loc& loc) {
  return apply_op(op, {a, b}, {}, loc);
}
Tensor dims_op(OpKind op, const Tensor& a, std::vector<int64_t> dims, bool keepdim,
               const Loc& loc) {
  Attrs attrs;
  attrs.dims = std::move(dims);
  attrs.keepdim = keepdim;
  return apply_op(op, {a}, std::move(attrs), loc);
}

/// The dtype a C++ number takes next to tensor `t` (PyTorch's rule for Python scalars): the
/// tensor's, except that a floating-point number next to integers or bools is f32, and an
/// integer next to bools is i64. The kind decides, never the value (2.0 is a float), so the
/// result dtype is the same traced or not.
DType scalar_dtype_for(const Tensor& t, const Scalar& v) {
  DType d = t.dtype();
  if (is_floating(d)) return d;
  if (d == DType::kBool) return v.is_integral() ? DType::kI64 : DType::kF32;
  return v.is_integral() ? d : DType::kF32;
}

Tensor lit(const Tensor& like, const Scalar& v) {
  return scalar(v, scalar_dtype_for(like, v), Loc());
}

/// A shape argument as attribute dims (the hints) and, when it is symbolic inside a trace, the
/// symbolic target shape for Graph::add.
Tensor shape_op(OpKind op, std::vector<Tensor> ins, Attrs attrs, const Sizes& shape,
                const Loc& loc) {
  attrs.dims = shape.hints();
  SymShape target;
  if (current_trace() && shape.is_symbolic())
    for (const SymSize& d : shape) target.push_back(to_sym_int(d));
  return apply_op(op, ins, std::move(attrs), loc, std::move(target));
}

SymSize sym_numel(const Tensor& a, const Loc& loc) {
  SymSize n = 1;
  for (const SymSize& d : a.sizes(loc)) n = n * d;
  return n;
}

}  // namespace

Tensor scalar(const Scalar& value, DType dtype, Loc loc) {
  if (value.is_traced()) return traced_scalar_tensor(value, dtype, loc);
  auto impl = std::make_shared<TensorImpl>();
  impl->meta = TensorMeta{dtype, {}};
  impl->literal = value.hint_double();
  if (value.is_integral()) impl->literal_int = value.hint_int();
  return Tensor(std::move(impl));
}

Tensor eq(const Tensor& a, const Tensor& b, Loc loc) {
  return binary(OpKind::Eq, a, b, loc);
}
Tensor ne(const Tensor& a, const Tensor& b, Loc loc) {
  return binary(OpKind::Ne, a, b, loc);
}
Tensor lt(const Tensor& a, const Tensor& b, Loc loc) {
  return binary(OpKind::Lt, a, b, loc);
}
Tensor le(const Tensor& a, const Tensor& b, Loc loc) {
  return binary(OpKind::Le, a, b, loc);
}
Tensor gt(const Tensor& a, const Tensor& b, Loc loc) {
  return binary(OpKind::Gt, a, b, loc);
}
Tensor ge(const Tensor& a, const Tensor& b, Loc loc) {
  return binary(OpKind::Ge, a, b, loc);
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, Loc loc) {
  return apply_op(OpKind::Where, {cond, a, b}, {}, loc);
}

Tensor cast(const Tensor& a, DType dtype, Loc loc) {
  // real -> complex64: (x, 0) pairs viewed as complex; complex64 -> complex64 is the tensor.
  if (dtype == DType::kC64 && a.defined()) {
    if (is_complex(a.dtype())) return a;
    const Tensor re = cast(a, DType::kF32, loc);
    const Tensor im = zeros(a.sizes(loc), DType::kF32, a.device(), loc);
    return view_as_complex(concat({unsqueeze(re, -1, loc), unsqueeze(im, -1, loc)}, -1, loc), loc);
  }
  Attrs attrs;
  attrs.dtype = dtype;
  return apply_op(OpKind::Cast, {a}, std::move(attrs), loc);
}

Tensor sum(const Tensor& a, std::vector<int64_t> axes, bool keepdim, Loc loc) {
  return dims_op(OpKind::Sum, a, std::move(axes), keepdim, loc);
}
Tensor prod(const Tensor& a, std::vector<int64_t> axes, bool keepdim, Loc loc) {
  return dims_op(OpKind::Prod, a, std::move(axes), keepdim, loc);
}
Tensor mean(const Tensor& a, std::vector<int64_t> axes, bool keepdim, Loc loc) {
  return dims_op(OpKind::Mean, a, std::move(axes), keepdim, loc);
}
Tensor max(const Tensor& a, std::vector<int64_t> axes, bool keepdim, Loc loc) {
  return dims_op(OpKind::Max, a, std::move(axes), keepdim, loc);
}
Tensor min(const Tensor& a, std::vector<int64_t> axes, bool keepdim, Loc loc) {
  return dims_op(OpKind::Min, a, std::move(axes), keepdim, loc);
}
Tensor argmax(const Tensor& a, int64_t axis, bool keepdim, Loc loc) {
  return dims_op(OpKind::ArgMax, a, {axis}, keepdim, loc);
}
Tensor argmin(const Tensor& a, int64_t axis, bool keepdim, Loc loc) {
  return dims_op(OpKind::ArgMin, a, {axis}, keepdim, loc);
}
Tensor reshape(const Tensor& a, Sizes shape, Loc loc) {
  int infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i].is_symbolic() || shape[i].hint() != -1) continue;
    if (infer >= 0)
      throw Error(
          invalid_argument("reshape at " + loc_str(loc) + ": more than one -1 in " + shape.str()));
    infer = static_cast<int>(i);
  }
  if (infer >= 0) {
    SymSize known = 1;
    for (size_t i = 0; i < shape.size(); ++i)
      if (static_cast<int>(i) != infer) known = known * shape[i];
    if (!known.is_symbolic() && known.hint() == 0)
      throw Error(invalid_argument("reshape at " + loc_str(loc) + ": cannot infer -1 in " +
                                   shape.str() + " (other dims have 0 elements)"));
    const SymSize numel = sym_numel(a, loc);
    // A symbolic product that divides the element count term by term gives the quotient as
    // it stands ((16*s2)/s2 = 16), with no guard that the product is nonzero: a data-dependent
    // one could not be guarded, and where it is 0 so is the element count, and the shape is
    // empty either way.
    std::optional<SymInt> exact;
    if (known.is_symbolic() && numel.is_symbolic())
      exact = sym_exact_quotient(to_sym_int(numel), to_sym_int(known));
    shape[static_cast<size_t>(infer)] =
        exact ? make_sym_size(*exact, known.node()->loc) : numel / known;
  }
  return shape_op(OpKind::Reshape, {a}, {}, shape, loc);
}
Tensor permute(const Tensor& a, std::vector<int64_t> perm, Loc loc) {
  return dims_op(OpKind::Permute, a, std::move(perm), false, loc);
}
Tensor expand(const Tensor& a, Sizes shape, Loc loc) {
  const size_t off = shape.size() >= static_cast<size_t>(a.dim()) ? shape.size() - a.dim() : 0;
  for (size_t i = off; i < shape.size(); ++i)
    if (!shape[i].is_symbolic() && shape[i].hint() == -1)
      shape[i] = a.size(static_cast<int>(i - off), loc);
  return shape_op(OpKind::Expand, {a}, {}, shape, loc);
}

Tensor squeeze(const Tensor& a, int64_t axis, Loc loc) {
  Sizes shape = a.sizes(loc);
  int64_t d = value_or_throw(normalize_axis(axis, static_cast<int>(shape.size())));
  // An input's symbolic size is >= 2, but a derived one (x[-1:]'s length) may be 1 at the
  // hints: it is squeezed under a guard that it equals 1 (the ShapeEnv then replaces the
  // expression by 1), as PyTorch specialises a size that squeeze tests.
  const SymSize& size = shape[static_cast<size_t>(d)];
  if (size.hint() != 1 || (size.is_symbolic() && size.value(loc) != 1)) return a;
  shape.erase(static_cast<size_t>(d));
  return reshape(a, std::move(shape), loc);
}
Tensor unsqueeze(const Tensor& a, int64_t axis, Loc loc) {
  Sizes shape = a.sizes(loc);
  int64_t d = value_or_throw(normalize_axis(axis, static_cast<int>(shape.size()) + 1));
  shape.insert(static_cast<size_t>(d), 1);
  return reshape(a, std::move(shape), loc);
}

#define KILN_DEFINE_BINARY_OPERATOR(sym, fn)               \
  Tensor operator sym(const Tensor& a, const Operand& b) { \
    return fn(a, b.tensor, b.loc);                         \
  }                                                        \
  Tensor operator sym(const Tensor& a, Number b) {         \
    return fn(a, lit(a, b.value), b.loc);                  \
  }                                                        \
  Tensor operator sym(Number a, const Operand& b) {        \
    return fn(lit(b.tensor, a.value), b.tensor, a.loc);    \
  }
KILN_DEFINE_BINARY_OPERATOR(+, add)
KILN_DEFINE_BINARY_OPERATOR(-, sub)
KILN_DEFINE_BINARY_OPERATOR(*, mul)
KILN_DEFINE_BINARY_OPERATOR(/, div)
KILN_DEFINE_BINARY_OPERATOR(<, lt)
KILN_DEFINE_BINARY_OPERATOR(<=, le)
KILN_DEFINE_BINARY_OPERATOR(>, gt)
KILN_DEFINE_BINARY_OPERATOR(>=, ge)
#undef KILN_DEFINE_BINARY_OPERATOR
Tensor operator-(const Operand& a) {
  return neg(a.tensor, a.loc);
}

// --- Creation and neural-network ops ----------------------------------------------------------

Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value, Loc loc) {
  return where(mask, scalar(value, x.dtype(), loc), x, loc);
}

Tensor full(Sizes shape, const Scalar& value, DType dtype, Device device, Loc loc) {
  if (value.is_traced()) return expand(scalar(value, dtype, loc), std::move(shape), loc);
  if (!current_trace())
    return from_host(filled_host(TensorMeta{dtype, shape.hints()}, value), device);
  Attrs attrs;
  set_full_value(attrs, value);
  attrs.dtype = dtype;
  return shape_op(OpKind::Full, {}, std::move(attrs), shape, loc);
}
Tensor zeros(Sizes shape, DType dtype, Device device, Loc loc) {
  return full(std::move(shape), 0.0, dtype, device, loc);
}
Tensor ones(Sizes shape, DType dtype, Device device, Loc loc) {
  return full(std::move(shape), 1.0, dtype, device, loc);
}

Tensor arange(double start, double end, double step, DType dtype, Device device, Loc loc) {
  Attrs attrs;
  attrs.range = {start, end, step};
  attrs.dtype = dtype;
  Tensor t = apply_op(OpKind::Arange, {}, std::move(attrs), loc);
  return current_trace() ? t : t.to(device);
}

Tensor arange(SymSize end, DType dtype, Device device, Loc loc) {
  if (!end.is_symbolic() || !current_trace())
    return arange(0.0, static_cast<double>(end.value(loc)), 1.0, dtype, device, loc);
  Attrs attrs;
  attrs.range = {0.0, static_cast<double>(end.hint()), 1.0};
  attrs.dtype = dtype;
  // end is a size (>= 2 as a symbol), so the length is end itself.
  return apply_op(OpKind::Arange, {}, std::move(attrs), loc, {to_sym_int(end)});
}

Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a, bool trans_b, Loc loc) {
  Attrs attrs;
  attrs.trans_a = trans_a;
  attrs.trans_b = trans_b;
  return apply_op(OpKind::MatMul, {a, b}, std::move(attrs), loc);
}

namespace {
Tensor axis_op(OpKind op, std::vector<Tensor> ins, int64_t axis, const Loc& loc) {
  Attrs attrs;
  attrs.axis = axis;
  return apply_op(op, ins, std::move(attrs), loc);
}
}  // namespace

Tensor softmax(const Tensor& a, int64_t axis, Loc loc) {
  return axis_op(OpKind::Softmax, {a}, axis, loc);
}
Tensor log_softmax(const Tensor& a, int64_t axis, Loc loc) {
  return axis_op(OpKind::LogSoftmax, {a}, axis, loc);
}
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                  int64_t normalized_dims, double eps, Loc loc) {
  Attrs attrs;
  attrs.index = normalized_dims;
  attrs.scalar = eps;
  return apply_op(OpKind::LayerNorm, {x, weight, bias}, std::move(attrs), loc);
}
Tensor gather(const Tensor& a, int64_t axis, const Tensor& index, Loc loc) {
  return axis_op(OpKind::Gather, {a, index}, axis, loc);
}
Tensor index_select(const Tensor& a, int64_t axis, const Tensor& index, Loc loc) {
  return axis_op(OpKind::IndexSelect, {a, index}, axis, loc);
}
Tensor embedding(const Tensor& weight, const Tensor& ids, Loc loc) {
  if (weight.dim() != 2)
    throw Error(invalid_argument("embedding: weight must be [V, D], got " + weight.str()));
  Sizes out = ids.sizes(loc);
  out.push_back(weight.size(1, loc));
  Tensor rows = index_select(weight, 0, reshape(ids, {-1}, loc), loc);
  return reshape(rows, std::move(out), loc);
}
Tensor concat(const std::vector<Tensor>& tensors, int64_t axis, Loc loc) {
  return axis_op(OpKind::Concat, tensors, axis, loc);
}
Tensor slice(const Tensor& a, int64_t axis, int64_t start, int64_t end, int64_t step, Loc loc) {
  Attrs attrs;
  attrs.axis = axis;
  attrs.dims = {start, end, step};
  return apply_op(OpKind::Slice, {a}, std::move(attrs), loc);
}
Tensor triu(const Tensor& a, int64_t diagonal, Loc loc) {
  Attrs attrs;
  attrs.index = diagonal;
  return apply_op(OpKind::Triu, {a}, std::move(attrs), loc);
}
Tensor tril(const Tensor& a, int64_t diagonal, Loc loc) {
  Attrs attrs;
  attrs.index = diagonal;
  return apply_op(OpKind::Tril, {a}, std::move(attrs), loc);
}

// --- Ops without a device lowering ------------------------------------------------------------

namespace {

/// Runs a CPU-only op: eagerly on a CPU copy, or as a graph break when traced.
std::vector<Tensor> host_op(const std::string& name, const std::vector<Tensor>& args,
                            const HostFunction& fn, const Loc& loc) {
  for (const Tensor& a : args)
    if (!a.defined()) throw Error(invalid_argument(name + ": undefined tensor at " + loc_str(loc)));
  if (TraceContext* trace = current_trace())
    return trace->host_call(name, fn, args, name + " has no device lowering", loc_str(loc));
  Device device = args.empty() ? Device::cpu() : args[0].device();
  return run_host_function(fn, name, args, device, loc_str(loc));
}

}  // namespace

Tensor nonzero_host(const Tensor& a, Loc loc) {
  return host_op(
             "nonzero", {a},
             [](const std::vector<Tensor>& in) {
               return std::vector<Tensor>{from_host(host_nonzero(to_host(in[0])), Device::cpu())};
             },
             loc)
      .at(0);
}

std::pair<Tensor, Tensor> topk(const Tensor& a, int64_t k, bool largest, Loc loc) {
  if (!a.defined()) throw Error(invalid_argument("topk: undefined tensor at " + loc_str(loc)));
  if (a.dim() == 0) throw Error(invalid_argument("topk of a rank-0 tensor at " + loc_str(loc)));
  const TensorMeta meta = a.meta();  // the traced sizes, as the op's shape rule checks k <= N
  if (k < 0 || k > meta.shape.back())
    throw Error(invalid_argument("topk: k = " + std::to_string(k) + " is out of range for " +
                                 meta.str() + " at " + loc_str(loc)));
  Attrs attrs;
  attrs.dims = {k};
  attrs.index = largest ? 1 : 0;
  Tensor indices = apply_op(OpKind::TopKIndices, {a}, std::move(attrs), loc);
  return {gather(a, a.dim() - 1, indices, loc), indices};
}

Tensor det(const Tensor& a, Loc loc) {
  if (!a.defined()) throw Error(invalid_argument("det: undefined tensor at " + loc_str(loc)));
  return apply_op(OpKind::Det, {a}, Attrs{}, loc);
}

void print(const std::string& label, const Tensor& t, Loc loc) {
  if (TraceContext* trace = current_trace()) {
    trace->print(label, t, loc_str(loc));
    return;
  }
  std::printf("%s\n", format_tensor(label, to_host(t)).c_str());
}

std::vector<Tensor> call_host(const std::string& name, const HostFunction& fn,
                              const std::vector<Tensor>& args, Loc loc) {
  if (TraceContext* trace = current_trace())
    return trace->host_call(name, fn, args, "call to host function '" + name + "'", loc_str(loc));
  Device device = args.empty() ? Device::cpu() : args[0].device();
  return run_host_function(fn, name, args, device, loc_str(loc));
}

}  // namespace kiln
