// Shape-subgraph folding (shape_fold.cpp) of the nodes that move, select or combine known
// elements: Transpose, Squeeze, Unsqueeze, Concat, Slice, ScatterND, the reductions, Cast to
// bool and Range. Each declines (returns false, and the op handler runs) on what it cannot
// evaluate exactly here: symbolic slice bounds or indices, a result over kMaxKnownElements, a
// reduction mode other than none.
#include <algorithm>
#include <limits>

#include "onnx/shape_fold.h"

namespace kiln::onnx::fold {

namespace {

/// The axes given by input `i` (opset ≥ 13 forms) or by the `axes` attribute.
std::optional<std::vector<int64_t>> axes_of(NodeCtx& c, const std::vector<const Val*>& in,
                                            size_t i) {
  if (i < in.size() && in[i]) {
    auto a = concrete(*in[i]);
    if (!a) return std::nullopt;
    return std::vector<int64_t>(a->begin(), a->end());
  }
  return c.attr_ints("axes");
}

bool normalise(std::vector<int64_t>& axes, int64_t rank) {
  for (int64_t& a : axes) {
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) return false;
  }
  std::sort(axes.begin(), axes.end());
  return std::adjacent_find(axes.begin(), axes.end()) == axes.end();
}

/// Gathers x's elements at the positions `src(k)` for each output position k.
template <typename F>
void gather_into(NodeCtx& c, const Val& x, Shape out, DType dtype, F src) {
  Elems r;
  for (int64_t k = 0; k < numel(out); ++k) r.push_back((*x.shape)[static_cast<size_t>(src(k))]);
  c.set_known(0, std::move(r), dtype, std::move(out));
}

bool transpose(NodeCtx& c, const Val& x) {
  std::vector<int64_t> perm = c.attr_ints("perm");
  if (perm.empty())
    for (size_t d = x.rank(); d-- > 0;) perm.push_back(static_cast<int64_t>(d));
  if (perm.size() != x.rank()) return false;
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(x.rank())) return false;
    out.push_back(x.dims[static_cast<size_t>(p)]);
  }
  const Shape os = strides_of(out), xs = strides_of(x.dims);
  gather_into(c, x, out, x.dtype, [&](int64_t k) {
    int64_t at = 0;
    for (size_t d = 0; d < os.size(); ++d)
      at += (k / os[d]) % out[d] * xs[static_cast<size_t>(perm[d])];
    return at;
  });
  return true;
}

bool squeeze(NodeCtx& c, const std::vector<const Val*>& in, bool un) {
  const Val& x = *in[0];
  auto axes = axes_of(c, in, 1);
  if (!axes) return false;
  Shape out = x.dims;
  if (un) {
    const int64_t rank = static_cast<int64_t>(x.rank() + axes->size());
    if (!normalise(*axes, rank)) return false;
    for (int64_t a : *axes) out.insert(out.begin() + a, 1);
  } else {
    if (axes->empty()) {
      out.clear();
      for (int64_t d : x.dims)
        if (d != 1) out.push_back(d);
    } else {
      if (!normalise(*axes, static_cast<int64_t>(x.rank()))) return false;
      for (size_t k = axes->size(); k-- > 0;) {
        if (out[static_cast<size_t>((*axes)[k])] != 1) return false;  // the handler reports it
        out.erase(out.begin() + (*axes)[k]);
      }
    }
  }
  c.set_known(0, *x.shape, x.dtype, std::move(out));
  return true;
}

bool concat(NodeCtx& c, const std::vector<const Val*>& in) {
  std::vector<const Val*> parts;
  for (const Val* v : in)
    if (v) parts.push_back(v);
  const int64_t rank = static_cast<int64_t>(parts[0]->rank());
  int64_t axis = c.attr_i("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return false;
  const size_t ax = static_cast<size_t>(axis);
  Shape out = parts[0]->dims;
  out[ax] = 0;
  DType dtype = parts[0]->dtype;
  for (const Val* p : parts) {
    if (p->rank() != parts[0]->rank()) return false;
    for (size_t d = 0; d < out.size(); ++d)
      if (d != ax && p->dims[d] != out[d]) return false;
    out[ax] += p->dims[ax];
    dtype = promote_types(dtype, p->dtype);
  }
  if (numel(out) > kMaxKnownElements) return false;
  // Row-major: for each outer index, each part's block along the axis in turn.
  int64_t outer = 1;
  for (size_t d = 0; d < ax; ++d) outer *= out[d];
  Elems r;
  for (int64_t o = 0; o < outer; ++o)
    for (const Val* p : parts) {
      const int64_t block = numel(p->dims) / std::max<int64_t>(outer, 1);
      for (int64_t k = 0; k < block; ++k)
        r.push_back((*p->shape)[static_cast<size_t>(o * block + k)]);
    }
  c.set_known(0, std::move(r), dtype, std::move(out));
  return true;
}

bool slice(NodeCtx& c, const std::vector<const Val*>& in) {
  if (c.opset() < 10 || in.size() < 3) return false;
  const Val& x = *in[0];
  const int64_t rank = static_cast<int64_t>(x.rank());
  const auto starts = concrete(*in[1]), ends = concrete(*in[2]);
  if (!starts || !ends || starts->size() != ends->size()) return false;
  std::vector<int64_t> axes, steps(starts->size(), 1);
  if (in.size() > 3 && in[3]) {
    auto a = concrete(*in[3]);
    if (!a) return false;
    axes.assign(a->begin(), a->end());
  } else {
    for (size_t i = 0; i < starts->size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (in.size() > 4 && in[4]) {
    auto s = concrete(*in[4]);
    if (!s) return false;
    steps.assign(s->begin(), s->end());
  }
  if (axes.size() != starts->size() || steps.size() != starts->size()) return false;
  // Per dim: the source positions it keeps.
  std::vector<std::vector<int64_t>> keep(x.rank());
  for (size_t d = 0; d < x.rank(); ++d)
    for (int64_t i = 0; i < x.dims[d]; ++i) keep[d].push_back(i);
  std::vector<bool> seen(x.rank());
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t a = axes[k] < 0 ? axes[k] + rank : axes[k];
    if (a < 0 || a >= rank || seen[static_cast<size_t>(a)] || steps[k] == 0) return false;
    seen[static_cast<size_t>(a)] = true;
    const int64_t n = x.dims[static_cast<size_t>(a)], step = steps[k];
    int64_t s = (*starts)[k], e = (*ends)[k];
    if (s < 0) s += n;
    if (e < 0) e += n;
    s = step > 0 ? std::clamp<int64_t>(s, 0, n) : std::clamp<int64_t>(s, -1, n - 1);
    e = step > 0 ? std::clamp<int64_t>(e, 0, n) : std::clamp<int64_t>(e, -1, n - 1);
    std::vector<int64_t>& kept = keep[static_cast<size_t>(a)];
    kept.clear();
    for (int64_t i = s; step > 0 ? i < e : i > e; i += step) kept.push_back(i);
  }
  Shape out;
  for (const auto& k : keep) out.push_back(static_cast<int64_t>(k.size()));
  const Shape os = strides_of(out), xs = strides_of(x.dims);
  gather_into(c, x, out, x.dtype, [&](int64_t k) {
    int64_t at = 0;
    for (size_t d = 0; d < os.size(); ++d)
      at += keep[d][static_cast<size_t>((k / os[d]) % out[d])] * xs[d];
    return at;
  });
  return true;
}

bool scatter_nd(NodeCtx& c, const std::vector<const Val*>& in) {
  if (in.size() < 3 || !in[1] || !in[2] || c.attr_s("reduction", "none") != "none") return false;
  const Val &x = *in[0], &index = *in[1], &updates = *in[2];
  const auto idx = concrete(index);
  if (!idx || index.rank() == 0) return false;
  const size_t k = static_cast<size_t>(index.dims.back());
  if (k == 0 || k > x.rank()) return false;
  const Shape xs = strides_of(x.dims);
  int64_t slice = 1;
  for (size_t d = k; d < x.rank(); ++d) slice *= x.dims[d];
  const int64_t rows = numel(index.dims) / static_cast<int64_t>(k);
  if (numel(updates.dims) != rows * slice) return false;
  Elems r = *x.shape;
  for (int64_t row = 0; row < rows; ++row) {
    int64_t at = 0;
    for (size_t d = 0; d < k; ++d) {
      int64_t i = (*idx)[static_cast<size_t>(row) * k + d];
      if (i < 0) i += x.dims[d];
      if (i < 0 || i >= x.dims[d]) return false;  // the handler reports it
      at += i * xs[d];
    }
    for (int64_t e = 0; e < slice; ++e)
      r[static_cast<size_t>(at + e)] = (*updates.shape)[static_cast<size_t>(row * slice + e)];
  }
  c.set_known(0, std::move(r), promote_types(x.dtype, updates.dtype), x.dims);
  return true;
}

bool reduce(NodeCtx& c, const std::vector<const Val*>& in, const std::string& op) {
  const Val& x = *in[0];
  if (x.dtype == DType::kBool) return false;
  const bool axes_input = op == "ReduceSum" ? c.opset() >= 13 : c.opset() >= 18;
  auto axes = axes_of(c, axes_input ? in : std::vector<const Val*>{in[0]}, 1);
  if (!axes) return false;
  const int64_t rank = static_cast<int64_t>(x.rank());
  if (axes->empty()) {
    if (c.attr_i("noop_with_empty_axes", 0) != 0) {
      c.set_known(0, *x.shape, x.dtype, x.dims);
      return true;
    }
    for (int64_t d = 0; d < rank; ++d) axes->push_back(d);
  }
  if (!normalise(*axes, rank)) return false;
  const bool keep = c.attr_i("keepdims", 1) != 0;
  Shape out, kept_dims = x.dims;  // kept_dims: reduced dims as 1
  for (int64_t a : *axes) kept_dims[static_cast<size_t>(a)] = 1;
  for (size_t d = 0; d < x.rank(); ++d)
    if (keep || !std::binary_search(axes->begin(), axes->end(), static_cast<int64_t>(d)))
      out.push_back(kept_dims[d]);
  if (numel(x.dims) == 0 && op != "ReduceSum" && op != "ReduceProd") return false;
  const Shape ks = strides_of(kept_dims), xs = strides_of(x.dims);
  std::vector<std::optional<SymSize>> acc(static_cast<size_t>(numel(kept_dims)));
  for (int64_t k = 0; k < numel(x.dims); ++k) {
    int64_t at = 0;
    for (size_t d = 0; d < x.rank(); ++d)
      if (kept_dims[d] != 1 || x.dims[d] == 1) at += (k / xs[d]) % x.dims[d] * ks[d];
    std::optional<SymSize>& a = acc[static_cast<size_t>(at)];
    const SymSize& v = (*x.shape)[static_cast<size_t>(k)];
    if (!a) {
      a = v;
    } else if (op == "ReduceSum") {
      a = *a + v;
    } else if (op == "ReduceProd") {
      a = *a * v;
    } else {
      a = op == "ReduceMin" ? sym_min(*a, v) : sym_max(*a, v);
    }
  }
  Elems r;
  for (auto& a : acc) r.push_back(a ? *a : SymSize(op == "ReduceSum" ? 0 : 1));
  c.set_known(0, std::move(r), x.dtype, std::move(out));
  return true;
}

bool cast_to_bool(NodeCtx& c, const Val& x) {
  if (c.attr_i("to", 0) != 9) return false;  // BOOL; integer targets: the Cast handler
  Elems r;
  for (const SymSize& s : *x.shape)
    r.push_back(SymSize(size_relation_holds(s, SizeRelation::kNe, 0) ? 1 : 0));
  c.set_known(0, std::move(r), DType::kBool, x.dims);
  return true;
}

bool range(NodeCtx& c, const std::vector<const Val*>& in) {
  if (in.size() != 3 || !in[1] || !in[2]) return false;
  for (const Val* v : in)
    if (v->rank() != 0 || (*v->shape)[0].is_symbolic()) return false;  // symbolic: the handler
  const int64_t start = (*in[0]->shape)[0].hint(), limit = (*in[1]->shape)[0].hint(),
                delta = (*in[2]->shape)[0].hint();
  if (delta == 0) return false;
  const int64_t n = std::max<int64_t>(0, (limit - start + delta + (delta > 0 ? -1 : 1)) / delta);
  if (n > kMaxKnownElements) return false;
  Elems r;
  for (int64_t i = 0; i < n; ++i) r.emplace_back(start + i * delta);
  c.set_known(0, std::move(r), in[0]->dtype, {n});
  return true;
}

}  // namespace

bool layout_op(NodeCtx& c, const std::string& op, const std::vector<const Val*>& in) {
  if (op == "Transpose") return transpose(c, *in[0]);
  if (op == "Squeeze" || op == "Unsqueeze") return squeeze(c, in, op == "Unsqueeze");
  if (op == "Concat") return concat(c, in);
  if (op == "Slice") return slice(c, in);
  if (op == "ScatterND") return scatter_nd(c, in);
  if (op == "ReduceSum" || op == "ReduceProd" || op == "ReduceMin" || op == "ReduceMax")
    return reduce(c, in, op);
  if (op == "Cast") return cast_to_bool(c, *in[0]);
  if (op == "Range") return range(c, in);
  return false;
}

}  // namespace kiln::onnx::fold
