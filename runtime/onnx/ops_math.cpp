// Elementwise, comparison, reduction and contraction ops.
#include <cmath>
#include <limits>

#include "onnx/importer.h"

namespace kiln::onnx {

namespace {

using Unary = Tensor (*)(const Tensor&, Loc);
using Binary = Tensor (*)(const Tensor&, const Tensor&, Loc);

Tensor lit(double v, const Tensor& like) {
  return scalar(v, like.dtype());
}

bool is_int(DType d) {
  return d == DType::kI32 || d == DType::kI64 || d == DType::kBool;
}

void binary(std::map<std::string, OpHandler>& t, const char* name, Binary f, char fold) {
  t[name] = [f, fold](NodeCtx& c) {
    Tensor a = c.in(0), b = c.in(1);
    if (fold == '/' && is_int(a.dtype()) && is_int(b.dtype())) {
      // ONNX integer division truncates toward zero; Kiln's div is true division.
      const DType dt = promote_types(a.dtype(), b.dtype());
      c.set(0, cast(div(cast(a, DType::kF32), cast(b, DType::kF32)), dt));
      return;
    }
    c.set(0, f(a, b, Loc::current()));
  };
}

void unary(std::map<std::string, OpHandler>& t, const char* name, Unary f) {
  t[name] = [f](NodeCtx& c) { c.set(0, f(c.in(0), Loc::current())); };
}

template <typename F>
void unary_fn(std::map<std::string, OpHandler>& t, const char* name, F f) {
  t[name] = [f](NodeCtx& c) { c.set(0, f(c, c.in(0))); };
}

/// Variadic Min/Max/Sum/Mean: fold pairwise.
void variadic(std::map<std::string, OpHandler>& t, const char* name, Binary f, bool mean) {
  t[name] = [f, mean](NodeCtx& c) {
    if (c.inputs() == 0) c.fail("needs at least one input");
    Tensor r = c.in(0);
    for (size_t i = 1; i < c.inputs(); ++i) r = f(r, c.in(i), Loc::current());
    if (mean) r = div(r, scalar(static_cast<double>(c.inputs()), r.dtype()));
    c.set(0, r);
  };
}

/// The axes of a Reduce* node: an input from `input_from` on, an attribute before.
std::vector<int64_t> reduce_axes(NodeCtx& c, int64_t input_from, int64_t rank, bool* noop) {
  std::vector<int64_t> axes;
  if (c.opset() >= input_from) {
    if (c.has(1)) axes = c.int_values(1);
  } else {
    axes = c.attr_ints("axes");
  }
  *noop = axes.empty() && c.attr_i("noop_with_empty_axes", 0) != 0;
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  for (int64_t& a : axes) a = axis_of(c, a, rank);
  return axes;
}

using ReduceFn = Tensor (*)(NodeCtx&, const Tensor&, const std::vector<int64_t>&, bool);

void reduce(std::map<std::string, OpHandler>& t, const char* name, int64_t input_from, ReduceFn f) {
  t[name] = [input_from, f](NodeCtx& c) {
    Tensor x = c.in(0);
    bool noop = false;
    const auto axes = reduce_axes(c, input_from, x.dim(), &noop);
    if (noop) {
      c.set(0, x);
      return;
    }
    c.set(0, f(c, x, axes, c.attr_i("keepdims", 1) != 0));
  };
}

Tensor onnx_pow(const Tensor& a, const Tensor& b) {
  // ONNX Pow's result has the base's type.
  Tensor r = pow(a, b);
  return r.dtype() == a.dtype() ? r : cast(r, a.dtype());
}

Tensor softmax_like(NodeCtx& c, bool log_form) {
  Tensor x = c.in(0);
  const int64_t rank = x.dim();
  if (c.opset() >= 13) {
    const int64_t axis = axis_of(c, c.attr_i("axis", -1), rank);
    c.set(0, log_form ? log_softmax(x, axis) : softmax(x, axis));
    return x;
  }
  // Before opset 13: the input is coerced to 2-D at `axis` and normalised over the second dim.
  const int64_t axis = rank == 0 ? 0 : axis_of(c, c.attr_i("axis", 1), rank);
  Sizes sizes = x.sizes();
  SymSize outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) {
      outer = outer * sizes[static_cast<size_t>(d)];
    } else {
      inner = inner * sizes[static_cast<size_t>(d)];
    }
  }
  Tensor flat = reshape(x, {outer, inner});
  Tensor r = log_form ? log_softmax(flat, 1) : softmax(flat, 1);
  c.set(0, reshape(r, sizes));
  return x;
}

}  // namespace

void register_math_ops(std::map<std::string, OpHandler>& t) {
  binary(t, "Add", add, '+');
  binary(t, "Sub", sub, '-');
  binary(t, "Mul", mul, '*');
  binary(t, "Div", div, '/');
  binary(t, "Equal", eq, 0);
  binary(t, "Greater", gt, 0);
  binary(t, "Less", lt, 0);
  binary(t, "GreaterOrEqual", ge, 0);
  binary(t, "LessOrEqual", le, 0);
  t["Pow"] = [](NodeCtx& c) { c.set(0, onnx_pow(c.in(0), c.in(1))); };
  variadic(t, "Max", maximum, false);
  variadic(t, "Min", minimum, false);
  variadic(t, "Sum", add, false);
  variadic(t, "Mean", add, true);

  unary(t, "Sqrt", sqrt);
  unary(t, "Exp", exp);
  unary(t, "Log", log);
  unary(t, "Tanh", tanh);
  unary(t, "Sigmoid", sigmoid);
  unary(t, "Relu", relu);
  unary(t, "Erf", erf);
  unary(t, "Neg", neg);
  unary(t, "Abs", abs);
  unary(t, "Sign", sign);
  unary(t, "Sin", sin);
  unary(t, "Cos", cos);
  unary(t, "Tan", tan);
  unary(t, "Asin", asin);
  unary(t, "Acos", acos);
  unary(t, "Atan", atan);
  unary(t, "Sinh", sinh);
  unary(t, "Cosh", cosh);
  unary(t, "Asinh", asinh);
  unary(t, "Acosh", acosh);
  unary(t, "Atanh", atanh);
  unary(t, "Floor", floor);
  unary(t, "Ceil", ceil);
  unary(t, "Round", round);
  t["Mod"] = [](NodeCtx& c) {
    Tensor a = c.in(0), b = c.in(1);
    const bool fmod_attr = c.attr_i("fmod", 0) != 0;
    if (!fmod_attr && (is_floating(a.dtype()) || is_floating(b.dtype())))
      c.fail("fmod must be 1 for floating-point inputs");
    c.set(0, fmod_attr ? fmod(a, b) : mod(a, b));
  };
  t["BitShift"] = [](NodeCtx& c) {
    const std::string dir = c.attr_s("direction", "");
    if (dir != "LEFT" && dir != "RIGHT")
      c.fail("direction must be LEFT or RIGHT, not '" + dir + "'");
    c.set(0, dir == "LEFT" ? shift_left(c.in(0), c.in(1)) : shift_right(c.in(0), c.in(1)));
  };
  t["CumSum"] = [](NodeCtx& c) {
    Tensor x = c.in(0);
    const int64_t axis = axis_of(c, c.scalar_int(1), x.dim());
    c.set(0, cumsum(x, axis, c.attr_i("exclusive", 0) != 0, c.attr_i("reverse", 0) != 0));
  };
  t["Identity"] = [](NodeCtx& c) { c.set_val(0, c.val(0)); };
  unary_fn(t, "Reciprocal", [](NodeCtx&, const Tensor& x) { return div(lit(1, x), x); });
  unary_fn(t, "Softplus", [](NodeCtx&, const Tensor& x) { return log(add(exp(x), lit(1, x))); });
  unary_fn(t, "Softsign", [](NodeCtx&, const Tensor& x) { return div(x, add(abs(x), lit(1, x))); });
  unary_fn(t, "LeakyRelu", [](NodeCtx& c, const Tensor& x) {
    return where(lt(x, lit(0, x)), mul(x, lit(c.attr_f("alpha", 0.01), x)), x);
  });
  unary_fn(t, "Elu", [](NodeCtx& c, const Tensor& x) {
    Tensor e = mul(sub(exp(x), lit(1, x)), lit(c.attr_f("alpha", 1.0), x));
    return where(lt(x, lit(0, x)), e, x);
  });
  unary_fn(t, "HardSigmoid", [](NodeCtx& c, const Tensor& x) {
    Tensor y = add(mul(x, lit(c.attr_f("alpha", 0.2), x)), lit(c.attr_f("beta", 0.5), x));
    return minimum(maximum(y, lit(0, x)), lit(1, x));
  });
  unary_fn(t, "HardSwish", [](NodeCtx&, const Tensor& x) {
    Tensor y = add(mul(x, lit(1.0 / 6, x)), lit(0.5, x));
    return mul(x, minimum(maximum(y, lit(0, x)), lit(1, x)));
  });
  unary_fn(t, "Gelu", [](NodeCtx& c, const Tensor& x) {
    const std::string approx = c.attr_s("approximate", "none");
    if (approx == "tanh") return gelu_tanh(x);
    if (approx != "none") c.fail("approximate must be 'none' or 'tanh', not '" + approx + "'");
    return gelu(x);
  });
  unary_fn(t, "Celu", [](NodeCtx& c, const Tensor& x) {  // max(0, x) + min(0, a (e^(x/a) - 1))
    const double alpha = c.attr_f("alpha", 1.0);
    if (alpha == 0) c.fail("alpha must not be 0");
    Tensor e = mul(sub(exp(div(x, lit(alpha, x))), lit(1, x)), lit(alpha, x));
    return add(maximum(x, lit(0, x)), minimum(e, lit(0, x)));
  });
  unary_fn(t, "Shrink", [](NodeCtx& c, const Tensor& in) {
    // x < -lambd: x + bias; x > lambd: x - bias; else 0; integers compute in f32.
    const Tensor x = is_floating(in.dtype()) ? in : cast(in, DType::kF32);
    const double lambd = c.attr_f("lambd", 0.5), bias = c.attr_f("bias", 0.0);
    Tensor y = where(lt(x, lit(-lambd, x)), add(x, lit(bias, x)),
                     where(gt(x, lit(lambd, x)), sub(x, lit(bias, x)), lit(0, x)));
    return y.dtype() == in.dtype() ? y : cast(y, in.dtype());
  });
  // x != x holds for NaN alone (and for no integer).
  unary_fn(t, "IsNaN", [](NodeCtx&, const Tensor& x) { return ne(x, x); });
  unary_fn(t, "IsInf", [](NodeCtx& c, const Tensor& x) {
    const bool pos = c.attr_i("detect_positive", 1) != 0,
               neg_inf = c.attr_i("detect_negative", 1) != 0;
    if (!is_floating(x.dtype()) || (!pos && !neg_inf)) return lt(x, x);  // false everywhere
    const double inf = std::numeric_limits<double>::infinity();
    if (pos && neg_inf) return eq(abs(x), lit(inf, x));
    if (pos) return eq(x, lit(inf, x));
    return eq(x, lit(-inf, x));
  });
  t["PRelu"] = [](NodeCtx& c) {
    Tensor x = c.in(0);
    c.set(0, where(lt(x, lit(0, x)), mul(x, c.in(1)), x));
  };
  t["Not"] = [](NodeCtx& c) { c.set(0, eq(c.in(0), scalar(0, DType::kBool))); };
  t["And"] = [](NodeCtx& c) {
    c.set(0,
          ne(mul(cast(c.in(0), DType::kI32), cast(c.in(1), DType::kI32)), scalar(0, DType::kI32)));
  };
  t["Or"] = [](NodeCtx& c) {
    c.set(0,
          ne(add(cast(c.in(0), DType::kI32), cast(c.in(1), DType::kI32)), scalar(0, DType::kI32)));
  };
  t["Xor"] = [](NodeCtx& c) { c.set(0, ne(c.in(0), c.in(1))); };
  t["Where"] = [](NodeCtx& c) { c.set(0, where(c.in(0), c.in(1), c.in(2))); };
  t["Clip"] = [](NodeCtx& c) {
    Tensor x = c.in(0);
    if (c.opset() < 11) {
      const double lo = c.attr_f("min", -std::numeric_limits<double>::infinity());
      const double hi = c.attr_f("max", std::numeric_limits<double>::infinity());
      c.set(0, minimum(maximum(x, lit(lo, x)), lit(hi, x)));
      return;
    }
    if (c.has(1)) x = maximum(x, cast(c.in(1), x.dtype()));
    if (c.has(2)) x = minimum(x, cast(c.in(2), x.dtype()));
    c.set(0, x);
  };

  reduce(t, "ReduceSum", 13, [](NodeCtx&, const Tensor& x, const std::vector<int64_t>& a, bool k) {
    return sum(x, a, k);
  });
  reduce(t, "ReduceProd", 18, [](NodeCtx&, const Tensor& x, const std::vector<int64_t>& a, bool k) {
    return prod(x, a, k);
  });
  reduce(t, "ReduceMean", 18, [](NodeCtx&, const Tensor& x, const std::vector<int64_t>& a, bool k) {
    return mean(x, a, k);
  });
  reduce(t, "ReduceMax", 18, [](NodeCtx&, const Tensor& x, const std::vector<int64_t>& a, bool k) {
    return max(x, a, k);
  });
  reduce(t, "ReduceMin", 18, [](NodeCtx&, const Tensor& x, const std::vector<int64_t>& a, bool k) {
    return min(x, a, k);
  });
  reduce(t, "ReduceSumSquare", 18,
         [](NodeCtx&, const Tensor& x, const std::vector<int64_t>& a, bool k) {
           return sum(mul(x, x), a, k);
         });
  reduce(t, "ReduceL1", 18, [](NodeCtx&, const Tensor& x, const std::vector<int64_t>& a, bool k) {
    return sum(abs(x), a, k);
  });
  reduce(t, "ReduceL2", 18, [](NodeCtx&, const Tensor& x, const std::vector<int64_t>& a, bool k) {
    Tensor s = sum(mul(x, x), a, k);
    return is_int(x.dtype()) ? cast(sqrt(cast(s, DType::kF32)), x.dtype()) : sqrt(s);
  });
  reduce(t, "ReduceLogSum", 18,
         [](NodeCtx&, const Tensor& x, const std::vector<int64_t>& a, bool k) {
           return log(sum(x, a, k));
         });
  reduce(t, "ReduceLogSumExp", 18,
         [](NodeCtx&, const Tensor& x, const std::vector<int64_t>& a, bool k) {
           Tensor m = max(x, a, true);
           Tensor r = add(log(sum(exp(sub(x, m)), a, true)), m);
           if (k) return r;
           Tensor out = r;
           for (auto it = a.rbegin(); it != a.rend(); ++it) out = squeeze(out, *it);
           return out;
         });

  t["Softmax"] = [](NodeCtx& c) { softmax_like(c, false); };
  t["LogSoftmax"] = [](NodeCtx& c) { softmax_like(c, true); };
  t["MatMul"] = [](NodeCtx& c) { c.set(0, matmul(c.in(0), c.in(1))); };
  t["Gemm"] = [](NodeCtx& c) {
    Tensor a = c.in(0), b = c.in(1);
    if (a.dim() != 2 || b.dim() != 2) c.fail("A and B must be 2-D");
    Tensor y = matmul(a, b, c.attr_i("transA", 0) != 0, c.attr_i("transB", 0) != 0);
    const double alpha = c.attr_f("alpha", 1.0), beta = c.attr_f("beta", 1.0);
    if (alpha != 1.0) y = mul(y, lit(alpha, y));
    if (c.has(2) && beta != 0.0) {
      Tensor bias = c.in(2);
      y = add(y, beta == 1.0 ? bias : mul(bias, lit(beta, bias)));
    }
    c.set(0, y);
  };
}

const std::map<std::string, OpHandler>& op_table() {
  static const std::map<std::string, OpHandler> table = [] {
    std::map<std::string, OpHandler> t;
    register_math_ops(t);
    register_nn_ops(t);
    register_shape_ops(t);
    register_extra_ops(t);
    register_recurrent_ops(t);
    register_quant_ops(t);
    register_signal_ops(t);
    register_compress_ops(t);
    register_control_ops(t);
    register_training_ops(t);
    register_resize_ops(t);
    register_scatter_ops(t);
    register_mel_weight_ops(t);
    register_sequence_ops(t);
    register_string_ops(t);  // after the numeric Cast and CastLike, which it wraps
    register_tfidf_ops(t);
#define KILN_OP(e, name, cat, arity, attrs)
#define KILN_KERNEL_OP(e, name, cat, arity, attrs, variant, stem) register_##stem##_ops(t);
#include "graph/ops.def"
#undef KILN_KERNEL_OP
#undef KILN_OP
    return t;
  }();
  return table;
}

}  // namespace kiln::onnx
