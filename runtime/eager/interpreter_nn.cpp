// The CPU interpreter's kernels for the transformer ops (reference semantics, PyTorch's):
//   MatMul: numpy.matmul with batch broadcasting; trans_a / trans_b read a / b with their last two
//     dims swapped. Float outputs: the operands are converted to f32 (f16 exactly, integers to the
//     nearest float) and each product is OpenBLAS's sgemm (float sums in its own order), then
//     rounded to the output dtype; docs/ops.md gives the tolerance this implies. Integer outputs
//     accumulate in int64 over k in order with two's complement wraparound (exact).
//   Softmax / LogSoftmax: per slice along the axis, m = max (float), s = sum exp(x - m) in double;
//     softmax = exp(x - m) / s, log_softmax = x - m - log(s) (exp within an ulp: float_math.h's
//     softmax_exp). A slice that is all -inf gives NaN.
//   LayerNorm: per row of the last k dims, mean and biased variance in double;
//     y = (x - mean) / sqrt(var + eps) * weight + bias, rounded to the output dtype.
//   Gather / IndexSelect: i32 or i64 indices; an index outside [0, size) is an error Status naming
//     the index and the bound (device kernels will clamp or check; they are not bound by this).
//   Concat: inputs converted to the promoted output dtype (copied as they are when already of
//     it), laid out along the axis in order.
//   Slice: Python slice rules (graph/op.h resolve_slice). Triu / Tril: element (r, c) of the last
//     two dims is kept when c - r >= k (triu) or c - r <= k (tril), otherwise zero.
//   Arange: element i = start + i * step computed in double, encoded into the dtype.
//   CumSum: running sums along the axis (exclusive, reverse), double for floats (each output
//     rounded), wrapping int64 for integers and bools.
//   ArgMax / ArgMin: the first index of the extreme value; a NaN counts as the extreme (the first
//     NaN wins), as in PyTorch.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "eager/elementwise_loops.h"
#include "eager/float_math.h"
#include "eager/gemm.h"
#include "eager/interpreter_ops.h"

namespace kiln::eager {
namespace {

/// A tensor seen as [outer, len, inner] around `axis`.
struct Split {
  int64_t outer = 1, len = 1, inner = 1;
};
Split split_at(const Shape& shape, int64_t axis) {
  Split s;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
    (d < axis ? s.outer : d == axis ? s.len : s.inner) *= shape[static_cast<size_t>(d)];
  return s;
}

int64_t axis_of(const Node& node, int rank) {
  int64_t a = node.attrs.axis;
  return a < 0 ? a + rank : a;
}

template <typename C>
std::vector<C> decode_all(const HostTensor& t) {
  Reader<C> rd = reader<C>(t);
  std::vector<C> v(static_cast<size_t>(t.meta.numel()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = rd(static_cast<int64_t>(i));
  return v;
}

int64_t wrap_mul_add(int64_t acc, int64_t a, int64_t b) {
  const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  return static_cast<int64_t>(u(acc) + u(a) * u(b));
}

/// One operand of a matmul as a batch of matrices with element strides.
struct MatView {
  Shape batch;
  int64_t rows = 1, cols = 1, row_stride = 0, col_stride = 0, matrix = 1;
};
MatView mat_view(const Shape& s, bool trans, bool is_a) {
  MatView v;
  if (s.size() == 1) {  // a: [1, K]; b: [K, 1]
    v.rows = is_a ? 1 : s[0];
    v.cols = is_a ? s[0] : 1;
    v.row_stride = is_a ? 0 : 1;
    v.col_stride = is_a ? 1 : 0;
    v.matrix = s[0];
    return v;
  }
  v.batch.assign(s.begin(), s.end() - 2);
  const int64_t r = s[s.size() - 2], c = s.back();
  v.matrix = r * c;
  v.rows = trans ? c : r;
  v.cols = trans ? r : c;
  v.row_stride = trans ? 1 : c;
  v.col_stride = trans ? c : 1;
  return v;
}

/// The batch of a matmul: the broadcast batch shape and each operand's element stride per
/// batch dim (0 where it is broadcast).
struct Batch {
  Shape shape;
  std::vector<int64_t> sa, sb;
};
Expected<Batch> batch_of(const MatView& va, const MatView& vb) {
  Batch bt;
  KILN_ASSIGN_OR_RETURN(bt.shape, broadcast_shapes(va.batch, vb.batch));
  bt.sa = broadcast_strides(va.batch, bt.shape);
  bt.sb = broadcast_strides(vb.batch, bt.shape);
  for (int64_t& s : bt.sa) s *= va.matrix;
  for (int64_t& s : bt.sb) s *= vb.matrix;
  return bt;
}

/// Integer matmul: exact int64 sums with wraparound, over k in order.
Status matmul_int(const Node& node, const HostTensor& a, const HostTensor& b, HostTensor& out) {
  const MatView va = mat_view(a.meta.shape, node.attrs.trans_a, true);
  const MatView vb = mat_view(b.meta.shape, node.attrs.trans_b, false);
  KILN_ASSIGN_OR_RETURN(const Batch bt, batch_of(va, vb));
  const std::vector<int64_t> da = decode_all<int64_t>(a), db = decode_all<int64_t>(b);
  const int64_t m = va.rows, k = va.cols, n = vb.cols;
  Writer<int64_t> wr = writer<int64_t>(out);
  int64_t o = 0;
  strided_for_each<2>(bt.shape, {std::span<const int64_t>(bt.sa), std::span<const int64_t>(bt.sb)},
                      [&](const std::array<int64_t, 2>& base) {
                        for (int64_t i = 0; i < m; ++i) {
                          for (int64_t j = 0; j < n; ++j) {
                            int64_t acc = 0;
                            int64_t pa = base[0] + i * va.row_stride;
                            int64_t pb = base[1] + j * vb.col_stride;
                            for (int64_t p = 0; p < k; ++p)
                              acc =
                                  wrap_mul_add(acc, da[static_cast<size_t>(pa + p * va.col_stride)],
                                               db[static_cast<size_t>(pb + p * vb.row_stride)]);
                            wr(o++, acc);
                          }
                        }
                      });
  return {};
}

/// A matrix of `v` at `data` as an sgemm operand.
GemmOperand gemm_operand(const MatView& v, const float* data) {
  if (v.col_stride == 1) return {data, v.row_stride, false};
  return {data, v.col_stride, true};  // row_stride == 1: stored transposed
}

/// Float matmul (f32 or f16 output): one sgemm per batch element, or one for the whole batch when
/// b is shared by every batch element and a's matrices are consecutive rows.
Status matmul_float(const Node& node, const HostTensor& a, const HostTensor& b, HostTensor& out) {
  const MatView va = mat_view(a.meta.shape, node.attrs.trans_a, true);
  const MatView vb = mat_view(b.meta.shape, node.attrs.trans_b, false);
  KILN_ASSIGN_OR_RETURN(const Batch bt, batch_of(va, vb));
  std::vector<float> sa, sb, so;
  const float* fa = as_floats(a, sa);
  const float* fb = as_floats(b, sb);
  float* fo = float_result(out, so);
  const int64_t m = va.rows, k = va.cols, n = vb.cols;
  const bool b_shared = std::all_of(bt.sb.begin(), bt.sb.end(), [](int64_t s) { return s == 0; });
  if (b_shared && !node.attrs.trans_a && va.batch == bt.shape) {
    const int64_t rows = numel(bt.shape) * m;  // a as [batch * m, k]
    sgemm(rows, n, k, {fa, va.row_stride, false}, gemm_operand(vb, fb), 0.0f, fo, n);
  } else {
    int64_t o = 0;
    strided_for_each<2>(bt.shape,
                        {std::span<const int64_t>(bt.sa), std::span<const int64_t>(bt.sb)},
                        [&](const std::array<int64_t, 2>& base) {
                          sgemm(m, n, k, gemm_operand(va, fa + base[0]),
                                gemm_operand(vb, fb + base[1]), 0.0f, fo + o * m * n, n);
                          ++o;
                        });
  }
  store_floats(out, so);
  return {};
}

/// A softmax slice's outputs from its exponentials ex[i] = exp(x[i] - mx): their sum s in
/// double in order, then ex[i] / s, or for log-softmax (x[i] - mx) - log(s), each rounded to
/// float.
template <typename Load, typename Store>
void softmax_store(int64_t len, bool log_form, float mx, const std::vector<double>& ex, Load load,
                   Store store) {
  double sum = 0;
  for (int64_t i = 0; i < len; ++i) sum += ex[static_cast<size_t>(i)];
  if (log_form) {
    const double log_sum = std::log(sum);
    for (int64_t i = 0; i < len; ++i)
      store(i, static_cast<float>((static_cast<double>(load(i)) - mx) - log_sum));
    return;
  }
  for (int64_t i = 0; i < len; ++i) store(i, static_cast<float>(ex[static_cast<size_t>(i)] / sum));
}

/// One softmax (or log-softmax) slice of `len` elements, load(i) reading element i as float and
/// store(i, v) writing it: m = max (float), s = sum of exp(x - m) in double (softmax_exp), each
/// exp(x - m) kept in `ex` so it is computed once.
template <typename Load, typename Store>
void softmax_slice(int64_t len, bool log_form, std::vector<double>& ex, Load load, Store store) {
  float mx = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < len; ++i) mx = std::max(mx, load(i));
  for (int64_t i = 0; i < len; ++i)
    ex[static_cast<size_t>(i)] = softmax_exp(static_cast<double>(load(i)) - mx);
  softmax_store(len, log_form, mx, ex, load, store);
}

/// The same slice of contiguous floats, its exponentials computed a vector at a time (the same
/// bits).
void softmax_slice_f32(int64_t len, bool log_form, std::vector<double>& ex, const float* x,
                       float* y) {
  // The sign of a zero maximum changes no x - mx.
  const float mx = max_ignoring_nan(x, len);
  softmax_exps(x, mx, ex.data(), len);
  softmax_store(
      len, log_form, mx, ex, [&](int64_t i) { return x[i]; },
      [&](int64_t i, float v) { y[i] = v; });
}

Status softmax(const Node& node, const HostTensor& x, HostTensor& out) {
  const Split s = split_at(x.meta.shape, axis_of(node, x.meta.rank()));
  const bool log_form = node.op == OpKind::LogSoftmax;
  if (s.len == 0) return {};
  // Slices split over the cores; f32 tensors read and written directly, others converted.
  const bool f32 = x.meta.dtype == DType::kF32 && out.meta.dtype == DType::kF32;
  const float* xf = reinterpret_cast<const float*>(x.data.data());
  float* of = reinterpret_cast<float*>(out.data.data());
  const Reader<float> rd = reader<float>(x);
  const Writer<float> wr = writer<float>(out);
  const int64_t len = s.len, step = s.inner;
  parallel_for(s.outer * s.inner, std::max<int64_t>(1, kParallelGrain / len),
               [&](int64_t b, int64_t e) {
                 std::vector<double> ex(static_cast<size_t>(len));
                 for (int64_t q = b; q < e; ++q) {
                   const int64_t base = q / step * len * step + q % step;
                   if (f32 && step == 1) {
                     softmax_slice_f32(len, log_form, ex, xf + base, of + base);
                   } else if (f32) {
                     softmax_slice(
                         len, log_form, ex, [&](int64_t i) { return xf[base + i * step]; },
                         [&](int64_t i, float v) { of[base + i * step] = v; });
                   } else {
                     softmax_slice(
                         len, log_form, ex, [&](int64_t i) { return rd(base + i * step); },
                         [&](int64_t i, float v) { wr(base + i * step, v); });
                   }
                 }
               });
  return {};
}

/// Running sums along the axis (exclusive: before the element; reverse: from the end): double
/// for floats, rounded per element; wrapping int64 for integers.
template <typename C>
Status cumsum(const Node& node, const HostTensor& x, HostTensor& out) {
  const Split s = split_at(x.meta.shape, axis_of(node, x.meta.rank()));
  const bool exclusive = (node.attrs.index & kCumSumExclusive) != 0;
  const bool reverse = (node.attrs.index & kCumSumReverse) != 0;
  Reader<C> rd = reader<C>(x);
  Writer<C> wr = writer<C>(out);
  auto add = [](C a, C b) {
    if constexpr (std::is_integral_v<C>)
      return static_cast<C>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    else
      return a + b;
  };
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t in = 0; in < s.inner; ++in) {
      const int64_t base = o * s.len * s.inner + in;
      C acc = 0;
      for (int64_t k = 0; k < s.len; ++k) {
        const int64_t at = base + (reverse ? s.len - 1 - k : k) * s.inner;
        const C v = rd(at);
        if (!exclusive) acc = add(acc, v);
        wr(at, acc);
        if (exclusive) acc = add(acc, v);
      }
    }
  }
  return {};
}

Status layer_norm(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out) {
  const HostTensor& x = *ins[0];
  const int64_t n = numel(std::span<const Dim>(x.meta.shape).last(node.attrs.index));
  if (x.meta.numel() == 0) return {};
  const std::vector<double> w = decode_all<double>(*ins[1]), b = decode_all<double>(*ins[2]);
  Reader<double> rd = reader<double>(x);
  Writer<double> wr = writer<double>(out);
  for (int64_t row = 0; row < x.meta.numel() / n; ++row) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < n; ++i) mean += rd(row * n + i);
    mean /= static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i) var += (rd(row * n + i) - mean) * (rd(row * n + i) - mean);
    const double inv = 1.0 / std::sqrt(var / static_cast<double>(n) + node.attrs.scalar);
    for (int64_t i = 0; i < n; ++i) {
      const auto k = static_cast<size_t>(i);
      wr(row * n + i, (rd(row * n + i) - mean) * inv * w[k] + b[k]);
    }
  }
  return {};
}

Status index_error(int64_t index, int64_t axis, int64_t size) {
  return invalid_argument("index " + std::to_string(index) + " is out of range for dim " +
                          std::to_string(axis) + " of size " + std::to_string(size) +
                          " (valid: 0.." + std::to_string(size - 1) + ")");
}

Status gather(const Node& node, const HostTensor& x, const HostTensor& idx, HostTensor& out) {
  const int64_t axis = axis_of(node, x.meta.rank());
  const size_t es = dtype_size(x.meta.dtype);
  const Split s = split_at(x.meta.shape, axis);
  Reader<int64_t> ri = reader<int64_t>(idx);
  auto copy = [&](int64_t dst, int64_t src) {
    std::memcpy(out.data.data() + dst * es, x.data.data() + src * es, es);
  };
  if (node.op == OpKind::IndexSelect) {
    const int64_t count = idx.meta.numel();
    for (int64_t j = 0; j < count; ++j) {
      const int64_t v = ri(j);
      if (v < 0 || v >= s.len) return index_error(v, axis, s.len);
      for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t in = 0; in < s.inner; ++in)
          copy((o * count + j) * s.inner + in, (o * s.len + v) * s.inner + in);
    }
    return {};
  }
  std::vector<int64_t> xs = contiguous_strides(x.meta.shape);
  const int64_t axis_stride = xs[static_cast<size_t>(axis)];
  xs[static_cast<size_t>(axis)] = 0;
  Status status;
  int64_t o = 0;
  strided_for_each<1>(idx.meta.shape, {std::span<const int64_t>(xs)},
                      [&](const std::array<int64_t, 1>& off) {
                        const int64_t v = ri(o);
                        if (v < 0 || v >= s.len) {
                          if (status.ok()) status = index_error(v, axis, s.len);
                        } else {
                          copy(o, off[0] + v * axis_stride);
                        }
                        ++o;
                      });
  return status;
}

Status concat(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out) {
  const int64_t axis = axis_of(node, out.meta.rank());
  const Split so = split_at(out.meta.shape, axis);
  const bool fp = is_floating(out.meta.dtype);
  int64_t at = 0;  // position along the axis
  const size_t es = dtype_size(out.meta.dtype);
  for (const HostTensor* t : ins) {
    const Split si = split_at(t->meta.shape, axis);
    const int64_t chunk = si.len * si.inner;
    if (t->meta.dtype == out.meta.dtype) {  // the same bits the conversion below would store
      if (chunk > 0)
        for (int64_t o = 0; o < si.outer; ++o)
          std::memcpy(
              out.data.data() + static_cast<size_t>(o * so.len * so.inner + at * so.inner) * es,
              t->data.data() + static_cast<size_t>(o * chunk) * es,
              static_cast<size_t>(chunk) * es);
      at += si.len;
      continue;
    }
    Reader<float> rf = reader<float>(*t);
    Reader<int64_t> ri = reader<int64_t>(*t);
    Writer<float> wf = writer<float>(out);
    Writer<int64_t> wi = writer<int64_t>(out);
    for (int64_t o = 0; o < si.outer; ++o) {
      for (int64_t e = 0; e < chunk; ++e) {
        const int64_t dst = o * so.len * so.inner + at * so.inner + e, src = o * chunk + e;
        if (fp)
          wf(dst, rf(src));
        else
          wi(dst, ri(src));
      }
    }
    at += si.len;
  }
  return {};
}

Status slice(const Node& node, const HostTensor& x, HostTensor& out) {
  const int64_t axis = axis_of(node, x.meta.rank());
  const Split s = split_at(x.meta.shape, axis);
  const std::vector<int64_t>& d = node.attrs.dims;
  const SliceRange r = resolve_slice(d[0], d[1], d[2], s.len);
  const size_t es = dtype_size(x.meta.dtype);
  const auto row = static_cast<size_t>(s.inner) * es;
  if (out.data.empty()) return {};  // memcpy from an empty vector's null data() is undefined
  std::byte* dst = out.data.data();
  if (d[2] == 1) {  // each outer index keeps one contiguous run
    const size_t run = row * static_cast<size_t>(r.length);
    for (int64_t o = 0; o < s.outer; ++o, dst += run)
      std::memcpy(dst, x.data.data() + static_cast<size_t>((o * s.len + r.start) * s.inner) * es,
                  run);
    return {};
  }
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t j = 0; j < r.length; ++j, dst += row) {
      const int64_t src = (o * s.len + r.start + j * d[2]) * s.inner;
      std::memcpy(dst, x.data.data() + static_cast<size_t>(src) * es, row);
    }
  }
  return {};
}

Status triangular(const Node& node, const HostTensor& x, HostTensor& out) {
  const int64_t rows = x.meta.shape[x.meta.shape.size() - 2], cols = x.meta.shape.back();
  const size_t es = dtype_size(x.meta.dtype);
  const int64_t k = node.attrs.index;
  const bool upper = node.op == OpKind::Triu;
  if (out.data.empty()) return {};  // memset of an empty vector's null data() is undefined
  std::memset(out.data.data(), 0, out.data.size());
  for (int64_t e = 0; e < x.meta.numel(); ++e) {
    const int64_t c = e % cols, r = (e / cols) % rows;
    if (upper ? c - r >= k : c - r <= k)
      std::memcpy(out.data.data() + e * es, x.data.data() + e * es, es);
  }
  return {};
}

Status arange(const Node& node, HostTensor& out) {
  Writer<double> wr = writer<double>(out);
  const std::vector<double>& r = node.attrs.range;
  for (int64_t i = 0; i < out.meta.numel(); ++i) wr(i, r[0] + static_cast<double>(i) * r[2]);
  return {};
}

template <typename C>
Status arg_extreme(const Node& node, const HostTensor& x, HostTensor& out) {
  const Split s = split_at(x.meta.shape, node.attrs.dims.at(0));
  const bool want_max = node.op == OpKind::ArgMax;
  Reader<C> rd = reader<C>(x);
  int64_t* dst = out.ptr<int64_t>();
  auto nan = [](C v) {
    if constexpr (std::is_floating_point_v<C>) return std::isnan(v);
    return false;
  };
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t in = 0; in < s.inner; ++in) {
      const int64_t base = o * s.len * s.inner + in;
      C best = rd(base);
      int64_t at = 0;
      for (int64_t i = 1; i < s.len && !nan(best); ++i) {
        const C v = rd(base + i * s.inner);
        if (nan(v) || (want_max ? v > best : v < best)) best = v, at = i;
      }
      dst[o * s.inner + in] = at;
    }
  }
  return {};
}

}  // namespace

bool is_nn_kernel(OpKind op) {
  switch (op) {
    case OpKind::Arange:
    case OpKind::ArgMax:
    case OpKind::ArgMin:
      return true;
    default:
      break;
  }
  switch (op_category(op)) {
    case OpCategory::kContraction:
    case OpCategory::kNormalization:
    case OpCategory::kIndexing:
    case OpCategory::kTriangular:
      return true;
    default:
      return false;
  }
}

Status eval_nn(const Node& node, std::span<const HostTensor* const> ins, HostTensor& out) {
  switch (node.op) {
    case OpKind::MatMul:
      if (is_floating(out.meta.dtype)) return matmul_float(node, *ins[0], *ins[1], out);
      return matmul_int(node, *ins[0], *ins[1], out);
    case OpKind::Softmax:
    case OpKind::LogSoftmax:
      return softmax(node, *ins[0], out);
    case OpKind::LayerNorm:
      return layer_norm(node, ins, out);
    case OpKind::CumSum:
      if (is_floating(out.meta.dtype)) return cumsum<double>(node, *ins[0], out);
      return cumsum<int64_t>(node, *ins[0], out);
    case OpKind::Gather:
    case OpKind::IndexSelect:
      return gather(node, *ins[0], *ins[1], out);
    case OpKind::Concat:
      return concat(node, ins, out);
    case OpKind::Slice:
      return slice(node, *ins[0], out);
    case OpKind::Triu:
    case OpKind::Tril:
      return triangular(node, *ins[0], out);
    case OpKind::Arange:
      return arange(node, out);
    case OpKind::ArgMax:
    case OpKind::ArgMin:
      if (is_floating(ins[0]->meta.dtype)) return arg_extreme<float>(node, *ins[0], out);
      return arg_extreme<int64_t>(node, *ins[0], out);
    default:
      break;
  }
  return internal_error(std::string("no interpreter kernel for ") + op_name(node.op));
}

}  // namespace kiln::eager
