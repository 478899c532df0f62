/// \file elementwise_loops.h
/// Private to runtime/eager: the elementwise loop over tensors read and written in their own
/// storage type: f32 arithmetic (the common case of exported models) and the copies of the
/// movement ops (any type, as bits). Reads and writes the storage directly (no per-element
/// conversion calls), merges the dims that every operand walks contiguously (or broadcasts
/// alike) into one, runs the innermost dim as a plain loop the compiler vectorises, and splits
/// large tensors over the cores (parallel.h). Each element is computed by the same `fn` on the
/// same values as the generic loop, so results are identical.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <tuple>
#include <type_traits>
#include <vector>

#include "eager/parallel.h"
#include "eager/vector_loops.h"
#include "kiln/dtype.h"

namespace kiln::eager {

/// Elements per parallel range: below twice this an op runs on the calling thread.
inline constexpr int64_t kParallelGrain = int64_t{1} << 16;

/// A loop nest over the output's row-major index space: dims of size 1 dropped, neighbours
/// merged where every operand's strides allow, at least one dim.
template <size_t N>
struct LoopNest {
  std::vector<int64_t> shape;
  std::array<std::vector<int64_t>, N> strides;  // per operand, in elements
};

template <size_t N>
LoopNest<N> coalesce(std::span<const Dim> shape, std::span<const std::vector<int64_t>, N> strides) {
  LoopNest<N> nest;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    const bool merge = !nest.shape.empty() && [&] {
      for (size_t k = 0; k < N; ++k)
        if (nest.strides[k].back() != strides[k][d] * shape[d]) return false;
      return true;
    }();
    if (merge) {
      nest.shape.back() *= shape[d];
      for (size_t k = 0; k < N; ++k) nest.strides[k].back() = strides[k][d];
    } else {
      nest.shape.push_back(shape[d]);
      for (size_t k = 0; k < N; ++k) nest.strides[k].push_back(strides[k][d]);
    }
  }
  if (nest.shape.empty()) {
    nest.shape.push_back(1);
    for (size_t k = 0; k < N; ++k) nest.strides[k].push_back(0);
  }
  return nest;
}

/// o[i] = fn(p_0[i * s_0], ...) for i < n, with the stride patterns of real graphs (every
/// operand contiguous, or one broadcast scalar; for three operands, a contiguous first one) as
/// loops without strides.
template <typename T, size_t N, typename Fn>
void typed_row(T* __restrict o, const std::array<const T*, N>& p, const std::array<int64_t, N>& s,
               int64_t n, Fn& fn) {
  // f32 arithmetic that names its BinaryRowOp: the AVX-512 / AVX2 clones of binary_row.
  using Op = std::remove_cvref_t<Fn>;
  if constexpr (N == 2 && std::is_same_v<T, float> && requires { Op::kRowOp; }) {
    if ((s[0] == 1 && (s[1] == 1 || s[1] == 0)) || (s[0] == 0 && s[1] == 1)) {
      binary_row(Op::kRowOp, o, p[0], s[0], p[1], s[1], n);
      return;
    }
  }
  if constexpr (N == 1) {
    const T* __restrict a = p[0];
    if (s[0] == 1) {
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(fn(a[i]));
      return;
    }
  } else if constexpr (N == 2) {
    const T* __restrict a = p[0];
    const T* __restrict b = p[1];
    if (s[0] == 1 && s[1] == 1) {
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(fn(a[i], b[i]));
      return;
    }
    if (s[0] == 1 && s[1] == 0) {
      const T bv = *b;
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(fn(a[i], bv));
      return;
    }
    if (s[0] == 0 && s[1] == 1) {
      const T av = *a;
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(fn(av, b[i]));
      return;
    }
  } else if constexpr (N == 3) {  // where(mask, x, y): a mask row over rows of x, y a scalar
    const T* __restrict a = p[0];
    const T* __restrict b = p[1];
    const T* __restrict c = p[2];
    if (s[0] == 1 && s[1] == 1 && s[2] == 1) {
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(fn(a[i], b[i], c[i]));
      return;
    }
    if (s[0] == 1 && s[1] == 1 && s[2] == 0) {
      const T cv = *c;
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(fn(a[i], b[i], cv));
      return;
    }
    if (s[0] == 1 && s[1] == 0 && s[2] == 1) {
      const T bv = *b;
      for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(fn(a[i], bv, c[i]));
      return;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    std::array<T, N> v;
    for (size_t k = 0; k < N; ++k) v[k] = p[k][i * s[k]];
    o[i] = static_cast<T>(std::apply(fn, v));
  }
}

/// The output elements [begin, end) of an elementwise loop nest, on the calling thread: out[i] =
/// fn(in_0[...], ...). Operand k's pointer `in[k]` holds its element at offset `origin[k]` of
/// the full operand (0 for a whole tensor; a chain's block buffer starts at the block's first
/// element), and `out` holds output element `out_origin`.
template <typename T, size_t N, typename Fn>
void typed_range(const LoopNest<N>& nest, const std::array<const T*, N>& in,
                 const std::array<int64_t, N>& origin, T* out, int64_t out_origin, int64_t begin,
                 int64_t end, Fn& fn) {
  const size_t rank = nest.shape.size();
  const int64_t inner = nest.shape.back();
  // The multi-index of `begin`, then rows of the innermost dim until `end` (on the stack for
  // the ranks of real graphs: a chain calls this per block).
  std::array<int64_t, 8> small{};
  std::vector<int64_t> large(rank > small.size() ? rank : 0, 0);
  int64_t* idx = rank > small.size() ? large.data() : small.data();
  int64_t rest = begin;
  for (size_t d = rank; d-- > 0;) {
    idx[d] = rest % nest.shape[d];
    rest /= nest.shape[d];
  }
  std::array<const T*, N> p;
  for (size_t k = 0; k < N; ++k) {
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d) off += idx[d] * nest.strides[k][d];
    p[k] = in[k] + (off - origin[k]);
  }
  std::array<int64_t, N> s;
  for (size_t k = 0; k < N; ++k) s[k] = nest.strides[k][rank - 1];
  for (int64_t at = begin; at < end;) {
    const int64_t n = std::min(inner - idx[rank - 1], end - at);
    typed_row<T, N>(out + (at - out_origin), p, s, n, fn);
    at += n;
    idx[rank - 1] += n;
    if (at == end) break;  // (a pointer past the operand's last row is never formed)
    for (size_t k = 0; k < N; ++k) p[k] += n * s[k];
    // Carry into the outer dims (walking back each operand's pointer along the finished dim).
    for (size_t d = rank - 1; d > 0 && idx[d] == nest.shape[d]; --d) {
      for (size_t k = 0; k < N; ++k)
        p[k] += nest.strides[k][d - 1] - nest.shape[d] * nest.strides[k][d];
      idx[d] = 0;
      ++idx[d - 1];
    }
  }
}

/// out[i] = fn(in_0[i], ...) over `shape` (out contiguous; operand k read at `strides[k]`).
/// `fn` returns a value converted to T.
template <typename T, size_t N, typename Fn>
void typed_elementwise(std::span<const Dim> shape, const std::array<const T*, N>& in,
                       std::span<const std::vector<int64_t>, N> strides, T* out, Fn fn) {
  const LoopNest<N> nest = coalesce<N>(shape, strides);
  int64_t total = 1;
  for (int64_t d : nest.shape) total *= d;
  if (total == 0) return;
  const std::array<int64_t, N> origin{};
  parallel_for(total, kParallelGrain, [&](int64_t begin, int64_t end) {
    typed_range<T, N>(nest, in, origin, out, 0, begin, end, fn);
  });
}

}  // namespace kiln::eager
