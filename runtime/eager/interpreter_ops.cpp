// The CPU interpreter's kernels: one generic loop per op family, instantiated per compute type.
//
// Reference semantics (Vulkan kernels are tested against these; see interpreter_ops.h for the
// element conversions):
//   Elementwise ops broadcast per NumPy to the node's shape, reading inputs through stride-0
//   views (nothing is materialised). Each input is converted to the op's compute type:
//     * float output (f32 or f16): 32-bit float arithmetic; f16 results round via float_to_half.
//     * integer output (i32, i64): int64 arithmetic with two's complement wraparound, then i32
//       results are truncated to 32 bits.
//     * compare: both inputs converted to the compute type of promote_types(a, b) (float for
//       f16/f32, int64 otherwise), result bool. IEEE rules: NaN compares unequal to everything.
//     * where(c, x, y): x and y converted to the compute type of the output, c != 0 selects x.
//   Unary: neg; abs (integers wrap: abs(INT_MIN) = INT_MIN; abs(-0.0) = 0.0); sign (-1, 0, 1;
//     NaN and -0.0 pass through); exp, log, sqrt via std:: on float; tanh = tanh_float
//     (eager/float_math.h: within 1 ulp of the exact value); rsqrt = 1 / sqrt(x);
//     sigmoid = 1 / (1 + exp(-x)); relu = (x < 0 ? 0 : x) (NaN and -0 pass through; ints too);
//     gelu = 0.5 * x * (1 + erf(x / sqrt(2))) in float; erf = std::erf; silu = x * sigmoid(x);
//     gelu_tanh = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).
//     sin cos tan asin acos atan sinh cosh asinh acosh atanh: std:: on float (NaN outside the
//     domain). floor, ceil; round = std::nearbyint (half to even); integers pass through.
//     log1p = std::log1p (log(1 + x) without the cancellation for small x).
//   Binary: add, sub, mul; div is always float true division (IEEE: x/0 = +-inf, 0/0 = NaN);
//     maximum/minimum propagate NaN (if either operand is NaN the result is NaN); pow is
//     std::pow in float, exact by squaring for integers (negative exponents: 1 / a^|b| truncated).
//     mod: Python's % (sign of b; a zero result is +-0 by b's sign); fmod: C's fmod (sign of a);
//     integers: x mod 0 = 0. shift_left / shift_right: two's complement in the output's width,
//     right shifts arithmetic; amounts < 0 or >= the width give 0 (left) or the sign fill.
//   Cast: the input's natural compute type (float or int64) encoded into the target dtype:
//     float -> int truncates toward zero and clamps to the target range (NaN -> 0);
//     i64 -> i32 wraps; anything -> bool is (x != 0); bool -> number is 0/1.
//   Full: attrs.scalar (a double), or attrs.scalar_int (an exact int64), encoded into
//     attrs.dtype with the same rules as cast.
//   Sum: floating inputs accumulate in double, then round (double -> float -> half for f16);
//     integer/bool inputs accumulate in int64 with wraparound (bool sums are i64 counts).
//   Prod: like sum (double for floats, wrapping int64 otherwise); an empty product is 1.
//   Mean: double sum / count, rounded to the output dtype; an empty reduction gives NaN.
//   Max: float with NaN propagation, int64 for integers, logical "any" for bool.
//   Min: likewise, logical "all" for bool.
//   Matmul, softmax, layer norm, indexing, triu/tril, arange, argmax/argmin: interpreter_nn.cpp.
//   Reduction order: row-major over the reduced dims, sequential.
//   Reshape, Permute (out dim i = in dim perm[i]), Expand: contiguous row-major results.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>

#include "eager/elementwise_loops.h"
#include "eager/float_math.h"
#include "eager/interpreter_ops.h"

namespace kiln::eager {

std::vector<int64_t> broadcast_strides(std::span<const Dim> in, std::span<const Dim> out) {
  std::vector<int64_t> contiguous = contiguous_strides(in);
  std::vector<int64_t> strides(out.size(), 0);
  const size_t lead = out.size() - in.size();
  for (size_t j = 0; j < in.size(); ++j) strides[lead + j] = in[j] == 1 ? 0 : contiguous[j];
  return strides;
}

namespace {

template <typename T>
using Id = std::type_identity<T>;

// ---- integer arithmetic with two's complement wraparound (no signed overflow UB) -----------
int64_t wrap(uint64_t v) {
  return static_cast<int64_t>(v);
}  // modular since C++20
uint64_t u(int64_t v) {
  return static_cast<uint64_t>(v);
}

template <typename C>
C add(C a, C b) {
  if constexpr (std::is_integral_v<C>)
    return wrap(u(a) + u(b));
  else
    return a + b;
}
template <typename C>
C sub(C a, C b) {
  if constexpr (std::is_integral_v<C>)
    return wrap(u(a) - u(b));
  else
    return a - b;
}
template <typename C>
C mul(C a, C b) {
  if constexpr (std::is_integral_v<C>)
    return wrap(u(a) * u(b));
  else
    return a * b;
}
template <typename C>
C neg(C a) {
  if constexpr (std::is_integral_v<C>)
    return wrap(0 - u(a));
  else
    return -a;
}
template <typename C>
bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>)
    return std::isnan(v);
  else
    return false;
}
template <typename C>
C maximum(C a, C b) {
  return (is_nan(a) || a > b) ? a : b;  // b wins ties and NaN b
}
template <typename C>
C minimum(C a, C b) {
  return (is_nan(a) || a < b) ? a : b;
}

/// std::pow in float; integers exactly by squaring with wraparound, a negative exponent
/// truncating 1 / a^|b| toward zero.
template <typename C>
C power(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) != 0 ? -1 : 1) : 0);
    uint64_t r = 1, x = u(a);
    for (uint64_t e = u(b); e != 0; e >>= 1) {
      if ((e & 1) != 0) r *= x;
      x *= x;
    }
    return wrap(r);
  } else {
    return b == C(2) ? a * a : std::pow(a, b);  // glibc's powf(x, 2) is x * x, bit for bit
  }
}

/// C's fmod (the sign of a); for integers a % 0 is 0 (and a % -1 is 0 without overflow).
template <typename C>
C fmod_of(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    return b == 0 || b == -1 ? C(0) : C(a % b);
  } else {
    return std::fmod(a, b);
  }
}

/// Python's % (the sign of b): fmod, plus b where the signs differ; a zero is +-0 by b's sign.
template <typename C>
C mod_of(C a, C b) {
  C r = fmod_of(a, b);
  if constexpr (std::is_floating_point_v<C>) {
    if (r == C(0)) return std::copysign(C(0), b);
  }
  if (r != C(0) && ((r < C(0)) != (b < C(0)))) r += b;
  return r;
}

/// Shifts in a `width`-bit two's-complement integer (the value already in that range): out of
/// range amounts give 0 (left) or the sign fill (right).
int64_t shift_of(bool left, int64_t a, int64_t b, int width) {
  if (b < 0 || b >= width) return left ? 0 : (a < 0 ? -1 : 0);
  return left ? wrap(u(a) << b) : a >> b;
}

/// Calls fn(Id<C>{}) with C the compute type of `dtype`: float for f16/f32, int64 otherwise.
template <typename Fn>
Status with_compute_type(DType dtype, Fn&& fn) {
  if (is_floating(dtype)) return fn(Id<float>{});
  return fn(Id<int64_t>{});
}

// ---- elementwise ------------------------------------------------------------------------------

/// out[i] = fn(in_0[i], ..., in_{N-1}[i]) with inputs read as C through broadcast strides and the
/// R result encoded into out's dtype.
template <typename C, typename R, size_t N, typename Fn>
Status map_elementwise(std::span<const HostTensor* const> ins, HostTensor& out, Fn fn) {
  if (ins.size() != N) return internal_error("elementwise arity mismatch");
  std::array<Reader<C>, N> rd;
  std::array<std::vector<int64_t>, N> st;
  std::array<std::span<const int64_t>, N> spans;
  for (size_t k = 0; k < N; ++k) {
    rd[k] = reader<C>(*ins[k]);
    st[k] = broadcast_strides(ins[k]->meta.shape, out.meta.shape);
    spans[k] = st[k];
  }
  if constexpr (std::is_same_v<C, float> && std::is_same_v<R, float>) {
    const bool all_f32 = out.meta.dtype == DType::kF32 &&
                         std::all_of(ins.begin(), ins.end(), [](const HostTensor* t) {
                           return t->meta.dtype == DType::kF32;
                         });
    if (all_f32) {
      std::array<const float*, N> p;
      for (size_t k = 0; k < N; ++k) p[k] = reinterpret_cast<const float*>(ins[k]->data.data());
      typed_elementwise<float, N>(out.meta.shape, p, std::span<const std::vector<int64_t>, N>(st),
                                  reinterpret_cast<float*>(out.data.data()), fn);
      return {};
    }
  }
  Writer<R> wr = writer<R>(out);
  int64_t o = 0;
  strided_for_each<N>(out.meta.shape, spans, [&](const std::array<int64_t, N>& off) {
    std::array<C, N> v;
    for (size_t k = 0; k < N; ++k) v[k] = rd[k](off[k]);
    wr(o++, static_cast<R>(std::apply(fn, v)));
  });
  return {};
}

/// tanh of an f32 tensor into an f32 output: tanh_floats over ranges split over the cores.
bool tanh_f32(std::span<const HostTensor* const> ins, HostTensor& out) {
  if (ins.size() != 1 || ins[0]->meta.dtype != DType::kF32 || out.meta.dtype != DType::kF32 ||
      ins[0]->meta.numel() != out.meta.numel())
    return false;
  const float* x = reinterpret_cast<const float*>(ins[0]->data.data());
  float* y = reinterpret_cast<float*>(out.data.data());
  parallel_for(out.meta.numel(), kParallelGrain,
               [&](int64_t b, int64_t e) { tanh_floats(x + b, y + b, e - b); });
  return true;
}

/// The unary op's element function, handed to run(fn) (which applies it over its elements).
template <typename C, typename Run>
Status unary_kernel(OpKind op, const TensorMeta& out, Run&& run) {
  switch (op) {
    case OpKind::Neg:
      return run([](C x) { return neg(x); });
    case OpKind::Relu:
      return run([](C x) { return x < C(0) ? C(0) : x; });
    case OpKind::Abs:
      return run([](C x) { return x < C(0) ? neg(x) : (x == C(0) ? C(0) : x); });
    case OpKind::Sign:
      return run([](C x) { return x > C(0) ? C(1) : (x < C(0) ? C(-1) : x); });
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Round:
      if constexpr (std::is_floating_point_v<C>) {
        if (op == OpKind::Floor) return run([](C x) { return std::floor(x); });
        if (op == OpKind::Ceil) return run([](C x) { return std::ceil(x); });
        return run([](C x) { return std::nearbyint(x); });  // ties to even (default mode)
      }
      return run([](C x) { return x; });
    default:
      break;
  }
  if constexpr (std::is_floating_point_v<C>) {
    switch (op) {
      case OpKind::Exp:
        return run([](C x) { return std::exp(x); });
      case OpKind::Log:
        return run([](C x) { return std::log(x); });
      case OpKind::Sqrt:
        return run([](C x) { return std::sqrt(x); });
      case OpKind::Rsqrt:
        return run([](C x) { return C(1) / std::sqrt(x); });
      case OpKind::Tanh:
        return run([](C x) { return tanh_float(x); });
      case OpKind::Sigmoid:
        return run([](C x) { return C(1) / (C(1) + std::exp(-x)); });
      case OpKind::Gelu:
        return run([](C x) { return C(0.5) * x * (C(1) + std::erf(x / std::sqrt(C(2)))); });
      case OpKind::Erf:
        return run([](C x) { return std::erf(x); });
      case OpKind::Sin:
        return run([](C x) { return std::sin(x); });
      case OpKind::Cos:
        return run([](C x) { return std::cos(x); });
      case OpKind::Tan:
        return run([](C x) { return std::tan(x); });
      case OpKind::Asin:
        return run([](C x) { return std::asin(x); });
      case OpKind::Acos:
        return run([](C x) { return std::acos(x); });
      case OpKind::Atan:
        return run([](C x) { return std::atan(x); });
      case OpKind::Sinh:
        return run([](C x) { return std::sinh(x); });
      case OpKind::Cosh:
        return run([](C x) { return std::cosh(x); });
      case OpKind::Asinh:
        return run([](C x) { return std::asinh(x); });
      case OpKind::Acosh:
        return run([](C x) { return std::acosh(x); });
      case OpKind::Atanh:
        return run([](C x) { return std::atanh(x); });
      case OpKind::Log1p:
        return run([](C x) { return std::log1p(x); });
      case OpKind::Silu:
        return run([](C x) { return x * (C(1) / (C(1) + std::exp(-x))); });
      case OpKind::GeluTanh:
        return run([](C x) {
          const C k = C(0.7978845608028654);  // sqrt(2 / pi)
          return C(0.5) * x * (C(1) + tanh_float(k * (x + C(0.044715) * x * x * x)));
        });
      default:
        break;
    }
  }
  return internal_error(std::string("no ") + op_name(op) + " kernel for " + out.str());
}

template <typename C>
Status eval_unary(OpKind op, std::span<const HostTensor* const> ins, HostTensor& out) {
  if constexpr (std::is_same_v<C, float>) {
    if (op == OpKind::Tanh && tanh_f32(ins, out)) return {};
  }
  return unary_kernel<C>(op, out.meta,
                         [&](auto fn) { return map_elementwise<C, C, 1>(ins, out, fn); });
}

/// The binary op Op on C.
template <BinaryRowOp Op, typename C>
C binary_fn(C a, C b) {
  if constexpr (Op == BinaryRowOp::kAdd) return add(a, b);
  if constexpr (Op == BinaryRowOp::kSub) return sub(a, b);
  if constexpr (Op == BinaryRowOp::kMul) return mul(a, b);
  if constexpr (Op == BinaryRowOp::kDiv) return a / b;  // floating point only
  if constexpr (Op == BinaryRowOp::kMax) return maximum(a, b);
  if constexpr (Op == BinaryRowOp::kMin) return minimum(a, b);
}
/// Op's element function for C; for f32 it also names the vector_loops row that computes the
/// same function (elementwise_loops.h's typed_row runs rows through it).
template <typename C, BinaryRowOp Op>
struct BinaryFn {
  C operator()(C a, C b) const { return binary_fn<Op>(a, b); }
};
template <BinaryRowOp Op>
struct BinaryFn<float, Op> {
  static constexpr BinaryRowOp kRowOp = Op;
  float operator()(float a, float b) const { return binary_fn<Op>(a, b); }
};

/// The binary op's element function, handed to run(fn).
template <typename C, typename Run>
Status binary_kernel(OpKind op, const TensorMeta& out, Run&& run) {
  switch (op) {
    case OpKind::Add:
      return run(BinaryFn<C, BinaryRowOp::kAdd>{});
    case OpKind::Sub:
      return run(BinaryFn<C, BinaryRowOp::kSub>{});
    case OpKind::Mul:
      return run(BinaryFn<C, BinaryRowOp::kMul>{});
    case OpKind::Maximum:
      return run(BinaryFn<C, BinaryRowOp::kMax>{});
    case OpKind::Minimum:
      return run(BinaryFn<C, BinaryRowOp::kMin>{});
    case OpKind::Pow:
      return run([](C a, C b) { return power(a, b); });
    case OpKind::Mod:
      return run([](C a, C b) { return mod_of(a, b); });
    case OpKind::FMod:
      return run([](C a, C b) { return fmod_of(a, b); });
    case OpKind::ShiftLeft:
    case OpKind::ShiftRight:
      if constexpr (std::is_integral_v<C>) {
        const int width = out.dtype == DType::kI32 ? 32 : 64;
        const bool left = op == OpKind::ShiftLeft;
        return run([width, left](C a, C b) { return shift_of(left, a, b, width); });
      }
      break;
    case OpKind::Div:
      if constexpr (std::is_floating_point_v<C>) return run(BinaryFn<C, BinaryRowOp::kDiv>{});
      break;
    default:
      break;
  }
  return internal_error(std::string("no ") + op_name(op) + " kernel for " + out.str());
}

template <typename C>
Status eval_binary(OpKind op, std::span<const HostTensor* const> ins, HostTensor& out) {
  return binary_kernel<C>(op, out.meta,
                          [&](auto fn) { return map_elementwise<C, C, 2>(ins, out, fn); });
}

template <typename C>
Status eval_compare(OpKind op, std::span<const HostTensor* const> ins, HostTensor& out) {
  auto run = [&](auto fn) { return map_elementwise<C, bool, 2>(ins, out, fn); };
  switch (op) {
    case OpKind::Eq:
      return run([](C a, C b) { return a == b; });
    case OpKind::Ne:
      return run([](C a, C b) { return a != b; });
    case OpKind::Lt:
      return run([](C a, C b) { return a < b; });
    case OpKind::Le:
      return run([](C a, C b) { return a <= b; });
    case OpKind::Gt:
      return run([](C a, C b) { return a > b; });
    case OpKind::Ge:
      return run([](C a, C b) { return a >= b; });
    default:
      break;
  }
  return internal_error(std::string("no compare kernel for ") + op_name(op));
}

Status eval_elementwise(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out) {
  const OpKind op = node.op;
  switch (op_category(op)) {
    case OpCategory::kUnary:
      return with_compute_type(out.meta.dtype, [&](auto c) {
        return eval_unary<typename decltype(c)::type>(op, ins, out);
      });
    case OpCategory::kBinary:
      return with_compute_type(out.meta.dtype, [&](auto c) {
        return eval_binary<typename decltype(c)::type>(op, ins, out);
      });
    case OpCategory::kCompare: {
      DType promoted = promote_types(ins[0]->meta.dtype, ins[1]->meta.dtype);
      return with_compute_type(
          promoted, [&](auto c) { return eval_compare<typename decltype(c)::type>(op, ins, out); });
    }
    case OpCategory::kTernary:
      if (ins[0]->meta.dtype == DType::kBool && ins[1]->meta.dtype == DType::kF32 &&
          ins[2]->meta.dtype == DType::kF32 && out.meta.dtype == DType::kF32) {
        // A bool mask selecting between floats (attention masks): the mask as 0 / 1 floats,
        // then the float loop, with the same test (cond != 0) as the generic loop.
        HostTensor mask = HostTensor::uninitialized(TensorMeta{DType::kF32, ins[0]->meta.shape});
        const auto* m = reinterpret_cast<const uint8_t*>(ins[0]->data.data());
        auto* f = reinterpret_cast<float*>(mask.data.data());
        for (int64_t i = 0; i < mask.meta.numel(); ++i) f[i] = m[i] != 0 ? 1.0f : 0.0f;
        const HostTensor* operands[3] = {&mask, ins[1], ins[2]};
        return map_elementwise<float, float, 3>(
            operands, out, [](float cond, float x, float y) { return cond != 0.0f ? x : y; });
      }
      return with_compute_type(out.meta.dtype, [&](auto c) {
        using C = typename decltype(c)::type;
        return map_elementwise<C, C, 3>(ins, out,
                                        [](C cond, C x, C y) { return cond != C(0) ? x : y; });
      });
    case OpCategory::kCast:  // read in the input's natural type; the writer applies the rules
      return with_compute_type(ins[0]->meta.dtype, [&](auto c) {
        using C = typename decltype(c)::type;
        return map_elementwise<C, C, 1>(ins, out, [](C x) { return x; });
      });
    default:
      break;
  }
  return internal_error(std::string("not elementwise: ") + op_name(op));
}

/// fn over output elements [begin, end) of a node from f32 block operands, through its nest.
template <size_t N, typename Fn>
Status run_block(const LoopNest<N>& nest, std::span<const BlockOperand> ins, float* out,
                 int64_t out_origin, int64_t begin, int64_t end, Fn& fn) {
  if (ins.size() != N || nest.shape.empty()) return internal_error("elementwise arity mismatch");
  std::array<const float*, N> p;
  std::array<int64_t, N> origin;
  for (size_t k = 0; k < N; ++k) {
    p[k] = ins[k].data;
    origin[k] = ins[k].origin;
  }
  typed_range<float, N>(nest, p, origin, out, out_origin, begin, end, fn);
  return {};
}

}  // namespace

bool block_elementwise(OpKind op) {
  const OpCategory cat = op_category(op);
  return cat == OpCategory::kUnary || cat == OpCategory::kBinary;
}

BlockPlan plan_block(const Node& node, std::span<const std::vector<int64_t>> strides) {
  BlockPlan plan;
  if (strides.size() == 1)
    plan.unary = coalesce<1>(node.meta.shape, std::span<const std::vector<int64_t>, 1>(strides));
  if (strides.size() == 2)
    plan.binary = coalesce<2>(node.meta.shape, std::span<const std::vector<int64_t>, 2>(strides));
  return plan;
}

Status eval_elementwise_block(const Node& node, const BlockPlan& plan,
                              std::span<const BlockOperand> ins, float* out, int64_t out_origin,
                              int64_t begin, int64_t end) {
  if (op_category(node.op) == OpCategory::kBinary)
    return binary_kernel<float>(node.op, node.meta, [&](auto fn) {
      return run_block<2>(plan.binary, ins, out, out_origin, begin, end, fn);
    });
  if (op_category(node.op) != OpCategory::kUnary)
    return internal_error(std::string("not a block elementwise op: ") + op_name(node.op));
  if (node.op == OpKind::Tanh && ins.size() == 1 && ins[0].contiguous) {  // the batch tanh
    tanh_floats(ins[0].data + (begin - ins[0].origin), out + (begin - out_origin), end - begin);
    return {};
  }
  return unary_kernel<float>(node.op, node.meta, [&](auto fn) {
    return run_block<1>(plan.unary, ins, out, out_origin, begin, end, fn);
  });
}

namespace {

// ---- reductions -------------------------------------------------------------------------------

/// For each output element: acc = init; acc = step(acc, x) over the reduced elements in
/// row-major order; out = finish(acc). Values are read and accumulated as A.
template <typename A, typename Step, typename Finish>
void reduce_loop(const HostTensor& in, HostTensor& out, std::span<const int64_t> axes, A init,
                 Step step, Finish finish) {
  const std::vector<int64_t> strides = contiguous_strides(in.meta.shape);
  Shape kept_shape, red_shape;
  std::vector<int64_t> kept_strides, red_strides;
  for (int d = 0; d < in.meta.rank(); ++d) {
    bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    (reduced ? red_shape : kept_shape).push_back(in.meta.shape[d]);
    (reduced ? red_strides : kept_strides).push_back(strides[d]);
  }
  const int64_t count = numel(red_shape);
  Reader<A> rd = reader<A>(in);
  Writer<A> wr = writer<A>(out);
  int64_t o = 0;
  strided_for_each<1>(kept_shape, {std::span<const int64_t>(kept_strides)},
                      [&](const std::array<int64_t, 1>& base) {
                        A acc = init;
                        strided_for_each<1>(red_shape, {std::span<const int64_t>(red_strides)},
                                            [&](const std::array<int64_t, 1>& off) {
                                              acc = step(acc, rd(base[0] + off[0]));
                                            });
                        wr(o++, finish(acc, count));
                      });
}

/// Sum and Mean of an f32 tensor over trailing axes (each output a contiguous run of the input),
/// in the order and precision of reduce_loop, outputs split over the cores. False when the
/// reduction has another form.
bool reduce_rows_f32(const Node& node, const HostTensor& in, HostTensor& out) {
  if ((node.op != OpKind::Sum && node.op != OpKind::Mean) || in.meta.dtype != DType::kF32 ||
      out.meta.dtype != DType::kF32)
    return false;
  const int rank = in.meta.rank();
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  for (int64_t a : node.attrs.dims) {
    if (a < 0 || a >= rank) return false;
    reduced[static_cast<size_t>(a)] = true;
  }
  int64_t rows = 1, len = 1;
  bool in_suffix = false;
  for (int d = 0; d < rank; ++d) {
    const bool r = reduced[static_cast<size_t>(d)];
    if (in_suffix && !r) return false;
    in_suffix = in_suffix || r;
    (r ? len : rows) *= in.meta.shape[static_cast<size_t>(d)];
  }
  if (len == 0 || rows == 0) return false;
  const float* x = reinterpret_cast<const float*>(in.data.data());
  float* o = reinterpret_cast<float*>(out.data.data());
  const bool mean = node.op == OpKind::Mean;
  const auto finish = [&](double acc) {
    return static_cast<float>(mean ? acc / static_cast<double>(len) : acc);
  };
  parallel_for(rows, std::max<int64_t>(1, kParallelGrain / len), [&](int64_t b, int64_t e) {
    // Eight rows at a time, each its own sum in row order: eight independent chains of double
    // additions instead of one (an addition's latency bounds one chain), the same bits.
    constexpr int64_t kRows = 8;
    int64_t r = b;
    for (; r + kRows <= e; r += kRows) {
      const float* xr = x + r * len;
      std::array<double, kRows> acc{};
      for (int64_t i = 0; i < len; ++i)
        for (int64_t k = 0; k < kRows; ++k) acc[k] += double(xr[k * len + i]);
      for (int64_t k = 0; k < kRows; ++k) o[r + k] = finish(acc[k]);
    }
    for (; r < e; ++r) {
      const float* xr = x + r * len;
      double acc = 0.0;
      for (int64_t i = 0; i < len; ++i) acc += double(xr[i]);
      o[r] = finish(acc);
    }
  });
  return true;
}

Status eval_reduce(const Node& node, const HostTensor& in, HostTensor& out) {
  const std::vector<int64_t>& axes = node.attrs.dims;
  auto keep = [](auto acc, int64_t) { return acc; };
  const bool fp = is_floating(in.meta.dtype);
  if (reduce_rows_f32(node, in, out)) return {};
  switch (node.op) {
    case OpKind::Sum:
      if (fp)
        reduce_loop<double>(in, out, axes, 0.0, add<double>, keep);
      else
        reduce_loop<int64_t>(in, out, axes, 0, add<int64_t>, keep);
      return {};
    case OpKind::Prod:
      if (fp)
        reduce_loop<double>(in, out, axes, 1.0, mul<double>, keep);
      else
        reduce_loop<int64_t>(in, out, axes, 1, mul<int64_t>, keep);
      return {};
    case OpKind::Mean:
      if (!fp) return internal_error("mean of a non-floating tensor");
      reduce_loop<double>(in, out, axes, 0.0, add<double>, [](double acc, int64_t count) {
        return count == 0 ? std::nan("") : acc / static_cast<double>(count);
      });
      return {};
    case OpKind::Max:
      if (fp) {
        reduce_loop<float>(in, out, axes, -std::numeric_limits<float>::infinity(), maximum<float>,
                           keep);
      } else {
        reduce_loop<int64_t>(in, out, axes, std::numeric_limits<int64_t>::min(), maximum<int64_t>,
                             keep);
      }
      return {};
    case OpKind::Min:
      if (fp) {
        reduce_loop<float>(in, out, axes, std::numeric_limits<float>::infinity(), minimum<float>,
                           keep);
      } else {
        reduce_loop<int64_t>(in, out, axes, std::numeric_limits<int64_t>::max(), minimum<int64_t>,
                             keep);
      }
      return {};
    default:
      break;
  }
  return internal_error(std::string("not a reduction: ") + op_name(node.op));
}

// ---- movement and sources ---------------------------------------------------------------------

/// out (contiguous) = the view of `in` with out's shape and the given element strides.
void copy_strided(const HostTensor& in, HostTensor& out, std::span<const int64_t> strides) {
  const size_t es = dtype_size(in.meta.dtype);
  const auto typed = [&](auto zero) {  // copied as bits through an unsigned type of the size
    using T = decltype(zero);
    const std::array<std::vector<int64_t>, 1> st = {
        std::vector<int64_t>(strides.begin(), strides.end())};
    typed_elementwise<T, 1>(out.meta.shape, {reinterpret_cast<const T*>(in.data.data())},
                            std::span<const std::vector<int64_t>, 1>(st),
                            reinterpret_cast<T*>(out.data.data()), [](T v) { return v; });
  };
  if (out.data.empty()) return;
  switch (es) {
    case 1:
      return typed(uint8_t{});
    case 2:
      return typed(uint16_t{});
    case 4:
      return typed(uint32_t{});
    case 8:
      return typed(uint64_t{});
    default:
      break;
  }
  std::byte* dst = out.data.data();
  strided_for_each<1>(out.meta.shape, {strides}, [&](const std::array<int64_t, 1>& off) {
    std::memcpy(dst, in.data.data() + static_cast<size_t>(off[0]) * es, es);
    dst += es;
  });
}

Status eval_movement(const Node& node, const HostTensor& in, HostTensor& out) {
  switch (node.op) {
    case OpKind::Reshape:  // row-major reinterpretation: the bytes are unchanged
      if (!out.data.empty()) std::memcpy(out.data.data(), in.data.data(), out.data.size());
      return {};
    case OpKind::Permute: {
      const std::vector<int64_t> in_strides = contiguous_strides(in.meta.shape);
      std::vector<int64_t> strides;
      for (int64_t p : node.attrs.dims) strides.push_back(in_strides[static_cast<size_t>(p)]);
      copy_strided(in, out, strides);
      return {};
    }
    case OpKind::Expand:
      copy_strided(in, out, broadcast_strides(in.meta.shape, out.meta.shape));
      return {};
    default:
      break;
  }
  return internal_error(std::string("not a movement op: ") + op_name(node.op));
}

Status eval_full(const Node& node, HostTensor& out) {
  return visit_storage(out.meta.dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    const S value =
        node.attrs.scalar_is_int ? encode<S>(node.attrs.scalar_int) : encode<S>(node.attrs.scalar);
    for (int64_t i = 0; i < out.meta.numel(); ++i)
      std::memcpy(out.data.data() + static_cast<size_t>(i) * sizeof(S), &value, sizeof(S));
    return Status{};
  });
}

}  // namespace

bool writes_every_element(OpKind op) {
  switch (op) {
    case OpKind::Full:
    case OpKind::Conv:
    case OpKind::MaxPool:
    case OpKind::MaxPoolIndices:
    case OpKind::AvgPool:
    case OpKind::MatMul:
    case OpKind::Softmax:
    case OpKind::LogSoftmax:
    case OpKind::LayerNorm:
    case OpKind::Concat:
    case OpKind::Slice:
      return true;
    default:
      break;
  }
  return is_elementwise(op) || is_reduce(op) || is_movement(op);
}

Status eval_node(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out) {
  switch (node.op) {  // the ops whose rows name their interpreter
#define KILN_OP(e, name, cat, arity, attrs)
#define KILN_KERNEL_OP(e, name, cat, arity, attrs, variant, stem) \
  case OpKind::e:                                                 \
    return eval_##stem(node, ins, out);
#include "graph/ops.def"
#undef KILN_KERNEL_OP
#undef KILN_OP
    default:
      break;
  }
  if (node.op == OpKind::Full) return eval_full(node, out);
  if (is_window_kernel(node.op)) return eval_window(node, ins, out);
  if (op_category(node.op) == OpCategory::kScatter) return eval_scatter(node, ins, out);
  if (op_category(node.op) == OpCategory::kSpectral) return eval_spectral(node, ins, out);
  if (op_category(node.op) == OpCategory::kCompaction) return eval_compaction(node, ins, out);
  if (is_nn_kernel(node.op)) return eval_nn(node, ins, out);
  if (is_elementwise(node.op)) return eval_elementwise(node, ins, out);
  if (is_reduce(node.op)) return eval_reduce(node, *ins[0], out);
  if (is_movement(node.op)) return eval_movement(node, *ins[0], out);
  return internal_error(std::string("cannot evaluate ") + op_name(node.op) + " as an op");
}

}  // namespace kiln::eager
