/// \file interpreter_ops.h
/// Private to runtime/eager: element conversions, strided iteration and the per-node kernels of
/// the CPU interpreter.
///
/// Conversion rules (the reference semantics the Vulkan kernels are checked against):
///   * Storage types are the ctypes of KILN_DTYPES: f32 float, f16 uint16_t (IEEE half bits),
///     i32 int32_t, i64 int64_t, bool uint8_t (0 or 1), c64 std::complex<float>. The generic
///     element paths read a complex64 element as its real part; only the Spectral ops
///     (interpreter_fft.cpp) and reshape take complex64 tensors.
///   * Compute types are float (f16 and f32 ops; f16 is decoded with half_to_float), int64_t
///     (i32, i64 and bool ops) and double (float sums and HostTensor::get/set).
///   * decode<C>(s): stored value -> compute type. f16 -> float exactly; bool -> 0/1;
///     int -> float rounds to nearest; float -> int truncates toward zero, clamps to the
///     integer range, and maps NaN to 0.
///   * encode<S>(v): compute value -> storage. -> f32 rounds to nearest; -> f16 rounds to float
///     first, then float_to_half (nearest even); -> i32 from int64 wraps (two's complement
///     truncation); -> integer from floating truncates toward zero with clamping (NaN -> 0);
///     -> bool is (v != 0), so NaN -> true.
#pragma once

#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

#include "eager/elementwise_loops.h"
#include "eager/host_tensor.h"
#include "graph/graph.h"
#include "kiln/status.h"

namespace kiln::eager {

/// Calls fn(std::type_identity<S>{}) with S the storage ctype of `dtype`.
template <typename Fn>
decltype(auto) visit_storage(DType dtype, Fn&& fn) {
  switch (dtype) {
#define KILN_VISIT_CASE(name, str, ctype, size) \
  case DType::name:                             \
    return fn(std::type_identity<ctype>{});
    KILN_DTYPES(KILN_VISIT_CASE)
#undef KILN_VISIT_CASE
  }
  unreachable("bad dtype");
}

/// Truncates toward zero; clamps to I's range; NaN -> 0.
template <typename I, typename F>
I float_to_int(F f) {
  if (std::isnan(f)) return 0;
  if (f <= static_cast<F>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  // static_cast<F>(max) rounds up to a power of two, which is out of range itself.
  if (f >= static_cast<F>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(f);
}

/// Stored element -> compute type C (float, double or int64_t).
template <typename C, typename S>
C decode(S s) {
  if constexpr (std::is_same_v<S, std::complex<float>>) {
    return decode<C>(s.real());  // only HostTensor::get reads complex64 this way
  } else if constexpr (std::is_same_v<S, uint16_t>) {
    return decode<C>(half_to_float(s));
  } else if constexpr (std::is_same_v<S, uint8_t>) {
    return static_cast<C>(s != 0 ? 1 : 0);
  } else if constexpr (std::is_floating_point_v<S> && std::is_integral_v<C>) {
    return float_to_int<C>(s);
  } else {
    return static_cast<C>(s);
  }
}

/// Compute value -> storage type S.
template <typename S, typename C>
S encode(C v) {
  if constexpr (std::is_same_v<S, std::complex<float>>) {
    return S(static_cast<float>(v), 0.0f);
  } else if constexpr (std::is_same_v<S, uint8_t>) {
    return v != C(0) ? 1 : 0;
  } else if constexpr (std::is_same_v<S, uint16_t>) {
    return float_to_half(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<S> && std::is_floating_point_v<C>) {
    return float_to_int<S>(v);
  } else {
    return static_cast<S>(v);  // int64 -> int32 wraps (modular since C++20)
  }
}

template <typename C>
using LoadFn = C (*)(const std::byte* base, int64_t i);
template <typename C>
using StoreFn = void (*)(std::byte* base, int64_t i, C v);

template <typename C, typename S>
C load_as(const std::byte* base, int64_t i) {
  S s;
  std::memcpy(&s, base + i * static_cast<int64_t>(sizeof(S)), sizeof(S));
  return decode<C>(s);
}

template <typename C, typename S>
void store_as(std::byte* base, int64_t i, C v) {
  S s = encode<S>(v);
  std::memcpy(base + i * static_cast<int64_t>(sizeof(S)), &s, sizeof(S));
}

/// Reads elements of a tensor (by flat element offset) converted to C.
template <typename C>
struct Reader {
  const std::byte* base = nullptr;
  LoadFn<C> load = nullptr;
  C operator()(int64_t i) const { return load(base, i); }
};

/// Writes C values into a tensor (by flat element offset), converted to its dtype.
template <typename C>
struct Writer {
  std::byte* base = nullptr;
  StoreFn<C> store = nullptr;
  void operator()(int64_t i, C v) const { store(base, i, v); }
};

template <typename C>
Reader<C> reader(const HostTensor& t) {
  LoadFn<C> fn = visit_storage(t.meta.dtype, [](auto tag) -> LoadFn<C> {
    return &load_as<C, typename decltype(tag)::type>;
  });
  return {t.data.data(), fn};
}

template <typename C>
Writer<C> writer(HostTensor& t) {
  StoreFn<C> fn = visit_storage(t.meta.dtype, [](auto tag) -> StoreFn<C> {
    return &store_as<C, typename decltype(tag)::type>;
  });
  return {t.data.data(), fn};
}

/// Strides (in elements) that read a contiguous tensor of shape `in` as if broadcast to `out`
/// (NumPy rules: dims aligned on the right, stride 0 on missing and size-1 dims).
std::vector<int64_t> broadcast_strides(std::span<const Dim> in, std::span<const Dim> out);

/// Visits every index of `shape` in row-major order and calls fn(offsets), where
/// offsets[k] = sum_d index[d] * strides[k][d]. Rank 0 visits one element; any size-0 dim, none.
template <size_t N, typename Fn>
void strided_for_each(std::span<const Dim> shape,
                      const std::array<std::span<const int64_t>, N>& strides, Fn&& fn) {
  if (numel(shape) == 0) return;
  std::array<int64_t, N> off{};
  const int rank = static_cast<int>(shape.size());
  if (rank == 0) {
    fn(off);
    return;
  }
  std::vector<int64_t> idx(shape.size(), 0);
  const int last = rank - 1;
  for (;;) {
    std::array<int64_t, N> o = off;  // innermost dim as a plain loop
    for (Dim i = 0; i < shape[last]; ++i) {
      fn(o);
      for (size_t k = 0; k < N; ++k) o[k] += strides[k][last];
    }
    int d = last - 1;  // odometer over the outer dims
    for (; d >= 0; --d) {
      if (++idx[d] < shape[d]) {
        for (size_t k = 0; k < N; ++k) off[k] += strides[k][d];
        break;
      }
      for (size_t k = 0; k < N; ++k) off[k] -= strides[k][d] * (shape[d] - 1);
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

/// True for the ops whose kernels live in interpreter_nn.cpp (matmul, normalisation, indexing,
/// triangular masks, arange, argmax/argmin).
bool is_nn_kernel(OpKind op);
/// Evaluates a node for which is_nn_kernel() holds (same contract as eval_node).
Status eval_nn(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out);

/// Resize and GridSample (interpreter_resize.cpp).
Status eval_resample(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out);
/// True for Conv, MaxPool, AvgPool, Resize, GridSample and GatherND (interpreter_window.cpp).
bool is_window_kernel(OpKind op);
Status eval_window(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out);
/// An f32 Conv node followed by Relu, in one pass over the outputs (the interpreter's fusion of
/// a Conv whose only reader is a Relu): out = relu(conv(ins)), as the two nodes give it.
Status eval_conv_relu(const Node& conv_node, std::span<const HostTensor* const> ins,
                      HostTensor& out);
class PointwiseChain;
/// An f32 Conv node followed by the chain of elementwise ops that alone reads it (HardSwish,
/// SiLU, GELU written out), applied to each run of outputs as the conv writes it: out is the
/// chain's value, as the nodes give it (interpreter_chain.h).
Status eval_conv_then(const Node& conv_node, std::span<const HostTensor* const> ins,
                      HostTensor& out, const PointwiseChain& chain);
/// The interpreter of every KILN_KERNEL_OP row of graph/ops.def: `eval_<stem>` in the op's
/// interpreter_<stem>.cpp (same contract as eval_node).
#define KILN_OP(e, name, cat, arity, attrs)
#define KILN_KERNEL_OP(e, name, cat, arity, attrs, variant, stem) \
  Status eval_##stem(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out);
#include "graph/ops.def"
#undef KILN_KERNEL_OP
#undef KILN_OP
/// ScatterElements and ScatterND (interpreter_scatter.cpp).
Status eval_scatter(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out);
/// Fft, Ifft, Rfft, Irfft and the complex part ops (interpreter_fft.cpp).
Status eval_spectral(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out);
/// MaskedSelect (interpreter_select.cpp): sizes `out` itself (the result's length is the
/// mask's count, which the node's meta only bounds).
Status eval_compaction(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out);
/// MaxPool, MaxPoolIndices and AvgPool (interpreter_pool.cpp), dispatched by eval_window.
Status eval_pool(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out);
/// ConvTranspose (interpreter_conv_transpose.cpp), dispatched by eval_window.
Status conv_transpose(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out);

/// An f32 operand of an elementwise node evaluated over a block of its output (fused chains,
/// interpreter_chain.cpp): `data` holds the operand's element at offset `origin` (a whole tensor:
/// 0; a chain's block buffer: the block's first element); `contiguous` when the operand is
/// read through the node's own row-major strides.
struct BlockOperand {
  const float* data = nullptr;
  int64_t origin = 0;
  bool contiguous = false;
};

/// An elementwise node's loop nest over its output shape, its operands read through given
/// strides (broadcast to that shape): built once per chain member, used for every block.
struct BlockPlan {
  LoopNest<1> unary;
  LoopNest<2> binary;
};

/// True for the ops eval_elementwise_block evaluates: the unary and binary arithmetic ops.
bool block_elementwise(OpKind op);

/// The plan of `node` (block_elementwise) with operand k read through strides[k].
BlockPlan plan_block(const Node& node, std::span<const std::vector<int64_t>> strides);

/// The output elements [begin, end) of an f32 unary or binary node (inputs and output f32) into
/// `out`, which holds output element `out_origin`: each element the same function of the same
/// values as eval_node computes, so the bits are the same.
Status eval_elementwise_block(const Node& node, const BlockPlan& plan,
                              std::span<const BlockOperand> ins, float* out, int64_t out_origin,
                              int64_t begin, int64_t end);

/// True for the ops whose kernels write every element of their output, whatever its previous
/// contents (eval_node may then be given an uninitialized output); the others get zeros.
bool writes_every_element(OpKind op);

/// Evaluates one non-source node. `ins` match the node's input metas; `out` is allocated with
/// node.meta (zeroed unless writes_every_element(node.op)).
Status eval_node(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out);

}  // namespace kiln::eager
