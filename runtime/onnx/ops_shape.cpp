// Shape and indexing ops. Integer vectors known at trace time (Shape's output and arithmetic
// on it) stay SymSize vectors, so shape computations over dynamic dims fold symbolically.
#include <algorithm>
#include <cmath>

#include "onnx/importer.h"

namespace kiln::onnx {

namespace {

Sizes sizes_of(NodeCtx& c, size_t i) {
  Val& v = c.val(i);
  if (!v.t.defined() && v.shape) return Sizes(v.dims);
  return v.t.sizes();
}

int64_t rank_of(NodeCtx& c, size_t i) {
  return static_cast<int64_t>(sizes_of(c, i).size());
}

/// Python slice bounds for a dim of size n.
void clamp_bounds(int64_t n, int64_t step, int64_t& start, int64_t& end) {
  if (start < 0) start += n;
  if (end < 0) end += n;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, n);
    end = std::clamp<int64_t>(end, 0, n);
  } else {
    start = std::clamp<int64_t>(start, -1, n - 1);
    end = std::clamp<int64_t>(end, -1, n - 1);
  }
}

void unsqueeze_op(NodeCtx& c) {
  std::vector<int64_t> axes = c.opset() >= 13 ? c.int_values(1) : c.attr_ints("axes");
  const int64_t out_rank = rank_of(c, 0) + static_cast<int64_t>(axes.size());
  for (int64_t& a : axes) a = axis_of(c, a, out_rank);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) c.fail("axes repeat");
  Val& v = c.val(0);
  if (v.shape && v.scalar() && axes == std::vector<int64_t>{0}) {
    c.set_shape(0, *v.shape, v.dtype, false);
    return;
  }
  Tensor x = c.in(0);
  for (int64_t a : axes) x = unsqueeze(x, a);
  c.set(0, x);
}

void squeeze_op(NodeCtx& c) {
  const Sizes sizes = sizes_of(c, 0);
  const int64_t rank = static_cast<int64_t>(sizes.size());
  std::vector<int64_t> axes;
  if (c.opset() >= 13) {
    if (c.has(1)) axes = c.int_values(1);
  } else {
    axes = c.attr_ints("axes");
  }
  if (axes.empty()) {
    for (int64_t d = 0; d < rank; ++d)
      if (!sizes[static_cast<size_t>(d)].is_symbolic() && sizes[static_cast<size_t>(d)].hint() == 1)
        axes.push_back(d);
  }
  for (int64_t& a : axes) {
    a = axis_of(c, a, rank);
    if (sizes[static_cast<size_t>(a)].is_symbolic() || sizes[static_cast<size_t>(a)].hint() != 1)
      c.fail("cannot squeeze dim " + std::to_string(a) + " of size " +
             sizes[static_cast<size_t>(a)].str());
  }
  Val& v = c.val(0);
  if (v.shape && v.rank() == 1 && axes.size() == 1) {
    c.set_shape(0, *v.shape, v.dtype, true);
    return;
  }
  std::sort(axes.rbegin(), axes.rend());
  Tensor x = c.in(0);
  for (int64_t a : axes) x = squeeze(x, a);
  c.set(0, x);
}

void shape_op(NodeCtx& c) {
  const Sizes s = sizes_of(c, 0);
  const int64_t rank = static_cast<int64_t>(s.size());
  int64_t start = c.attr_i("start", 0), end = c.attr_i("end", rank);
  clamp_bounds(rank, 1, start, end);
  std::vector<SymSize> out;
  for (int64_t d = start; d < end; ++d) out.push_back(s[static_cast<size_t>(d)]);
  c.set_shape(0, std::move(out), DType::kI64, false);
}

void reshape_op(NodeCtx& c) {
  const std::vector<SymSize> target = c.ints(1);
  const bool allow_zero = c.attr_i("allowzero", 0) != 0;
  const Sizes in = sizes_of(c, 0);
  Sizes out;
  int minus_ones = 0;
  for (size_t i = 0; i < target.size(); ++i) {
    const SymSize& t = target[i];
    if (!t.is_symbolic() && t.hint() == 0 && !allow_zero) {
      if (i >= in.size())
        c.fail("a 0 in the shape at position " + std::to_string(i) + " has no input dim to copy");
      out.push_back(in[i]);
    } else if (!t.is_symbolic() && t.hint() == -1) {
      ++minus_ones;
      out.push_back(-1);
    } else if (!t.is_symbolic() && t.hint() < -1) {
      c.fail("shape holds " + std::to_string(t.hint()));
    } else {
      out.push_back(t);
    }
  }
  if (minus_ones > 1) c.fail("the shape has more than one -1");
  Val& v = c.val(0);
  if (v.shape && !out.is_symbolic()) {  // known values stay known, in any shape
    const int64_t n = static_cast<int64_t>(v.shape->size());
    int64_t rest = 1;
    for (const SymSize& d : out)
      if (d.hint() != -1) rest *= d.hint();
    Shape dims;
    for (const SymSize& d : out) dims.push_back(d.hint() == -1 ? (rest ? n / rest : 0) : d.hint());
    int64_t total = 1;
    for (int64_t d : dims) total *= d;
    if (total != n) c.fail("cannot reshape " + std::to_string(n) + " elements to " + out.str());
    c.set_known(0, *v.shape, v.dtype, std::move(dims));
    return;
  }
  c.set(0, reshape(c.in(0), out));
}

void flatten_op(NodeCtx& c) {
  const Sizes s = sizes_of(c, 0);
  const int64_t rank = static_cast<int64_t>(s.size());
  int64_t axis = c.attr_i("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank)
    c.fail("axis " + std::to_string(c.attr_i("axis", 1)) + " out of range");
  SymSize outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) {
      outer = outer * s[static_cast<size_t>(d)];
    } else {
      inner = inner * s[static_cast<size_t>(d)];
    }
  }
  c.set(0, reshape(c.in(0), {outer, inner}));
}

void concat_op(NodeCtx& c) {
  bool known = c.inputs() > 0;
  for (size_t i = 0; i < c.inputs(); ++i)
    known = known && c.has(i) && c.val(i).shape && c.val(i).rank() == 1;
  if (known) {
    std::vector<SymSize> out;
    DType dt = c.val(0).dtype;
    for (size_t i = 0; i < c.inputs(); ++i) {
      out.insert(out.end(), c.val(i).shape->begin(), c.val(i).shape->end());
      dt = promote_types(dt, c.val(i).dtype);
    }
    c.set_shape(0, std::move(out), dt, false);
    return;
  }
  std::vector<Tensor> parts;
  for (size_t i = 0; i < c.inputs(); ++i)
    if (c.has(i)) parts.push_back(c.in(i));
  if (parts.empty()) c.fail("no inputs");
  const int64_t axis = axis_of(c, c.attr_i("axis", 0), parts[0].dim());
  c.set(0, parts.size() == 1 ? parts[0] : concat(parts, axis));
}

void slice_op(NodeCtx& c) {
  std::vector<SymSize> starts, ends;
  std::vector<int64_t> axes, steps;
  if (c.opset() >= 10) {
    starts = c.ints(1);
    ends = c.ints(2);
    if (c.has(3)) axes = c.int_values(3);
    if (c.has(4)) steps = c.int_values(4);
  } else {
    for (int64_t v : c.attr_ints("starts")) starts.emplace_back(v);
    for (int64_t v : c.attr_ints("ends")) ends.emplace_back(v);
    axes = c.attr_ints("axes");
  }
  if (starts.size() != ends.size()) c.fail("starts and ends differ in length");
  const Sizes sizes = sizes_of(c, 0);
  const int64_t rank = static_cast<int64_t>(sizes.size());
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    c.fail("axes or steps length differs from starts");
  Val& v = c.val(0);
  if (v.shape && v.rank() == 1 && axes.size() == 1) {  // slicing a known vector
    const int64_t n = static_cast<int64_t>(v.shape->size());
    int64_t s = starts[0].value(), e = ends[0].value(), st = steps[0];
    if (st == 0) c.fail("step is 0");
    clamp_bounds(n, st, s, e);
    std::vector<SymSize> out;
    for (int64_t i = s; st > 0 ? i < e : i > e; i += st)
      out.push_back((*v.shape)[static_cast<size_t>(i)]);
    c.set_shape(0, std::move(out), v.dtype, false);
    return;
  }
  Tensor x = c.in(0);
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t axis = axis_of(c, axes[k], rank);
    const int64_t step = steps[k];
    if (step == 0) c.fail("step is 0");
    const SymSize dim = x.sizes()[static_cast<size_t>(axis)];
    if (step == 1 && ends[k].is_symbolic() && !starts[k].is_symbolic() && starts[k].hint() >= 0) {
      // An end computed from a dynamic size: positions start .. end - 1 stay symbolic.
      Tensor idx = arange(ends[k] - starts[k], DType::kI64, c.device());
      if (starts[k].hint() != 0)
        idx = add(idx, scalar(static_cast<double>(starts[k].hint()), DType::kI64));
      x = index_select(x, axis, idx);
      continue;
    }
    int64_t s = starts[k].value(), e = ends[k].value();
    if (step > 0 && !dim.is_symbolic()) {
      x = slice(x, axis, s, e, step);
    } else if (step > 0) {
      x = slice(x, axis, s, e, step);  // bounds past a symbolic dim specialise it
    } else {
      const int64_t n = dim.value();
      clamp_bounds(n, step, s, e);
      std::vector<int64_t> idx;
      for (int64_t i = s; i > e; i += step) idx.push_back(i);
      if (idx.empty()) {
        x = slice(x, axis, 0, 0);
      } else {
        x = index_select(x, axis, c.constant_i64(idx, {static_cast<int64_t>(idx.size())}));
      }
    }
  }
  c.set(0, x);
}

void gather_op(NodeCtx& c) {
  Val& data = c.val(0);
  Val& index = c.val(1);
  const Sizes ds = sizes_of(c, 0);
  const int64_t axis = axis_of(c, c.attr_i("axis", 0), static_cast<int64_t>(ds.size()));
  if (data.shape && data.rank() == 1 && index.shape && index.rank() <= 1) {  // shape[i]
    const int64_t n = static_cast<int64_t>(data.shape->size());
    std::vector<SymSize> out;
    for (const SymSize& i : *index.shape) {
      int64_t k = i.value();
      if (k < 0) k += n;
      if (k < 0 || k >= n)
        c.fail("index " + std::to_string(i.hint()) + " out of range for " + std::to_string(n) +
               " elements");
      out.push_back((*data.shape)[static_cast<size_t>(k)]);
    }
    c.set_shape(0, std::move(out), data.dtype, index.scalar());
    return;
  }
  Tensor x = c.in(0);
  Tensor idx;
  Sizes is;
  if (index.shape) {  // known indices: normalise negatives now
    std::vector<int64_t> v;
    for (const SymSize& s : *index.shape) {
      int64_t k = s.value();
      if (k < 0) k += ds[static_cast<size_t>(axis)].value();
      v.push_back(k);
    }
    idx = c.constant_i64(v, {static_cast<int64_t>(v.size())});
    is = Sizes(index.dims);
  } else {
    Tensor raw = c.in(1);
    is = raw.sizes();
    Tensor flat = reshape(raw, {-1});
    Tensor n = scalar(static_cast<double>(ds[static_cast<size_t>(axis)].value()), flat.dtype());
    idx = where(lt(flat, scalar(0, flat.dtype())), add(flat, n), flat);
  }
  Tensor r = index_select(x, axis, idx);
  Sizes out;
  for (int64_t d = 0; d < axis; ++d) out.push_back(ds[static_cast<size_t>(d)]);
  for (const SymSize& s : is) out.push_back(s);
  for (size_t d = static_cast<size_t>(axis) + 1; d < ds.size(); ++d) out.push_back(ds[d]);
  c.set(0, reshape(r, out));
}

void expand_op(NodeCtx& c) {
  const std::vector<SymSize> shape = c.ints(1);
  const Sizes in = sizes_of(c, 0);
  const size_t rank = std::max(shape.size(), in.size());
  Sizes out;
  for (size_t i = 0; i < rank; ++i) {
    const bool has_a = i + in.size() >= rank, has_b = i + shape.size() >= rank;
    const SymSize a = has_a ? in[i + in.size() - rank] : SymSize(1);
    const SymSize b = has_b ? shape[i + shape.size() - rank] : SymSize(1);
    if (!a.is_symbolic() && a.hint() == 1) {
      out.push_back(b);
    } else if (!b.is_symbolic() && b.hint() == 1) {
      out.push_back(a);
    } else {
      if (!a.is_symbolic() && !b.is_symbolic() && a.hint() != b.hint())
        c.fail("cannot expand " + in.str() + " to " + Sizes(shape).str());
      out.push_back(a);
    }
  }
  check_size(c, out);
  c.set(0, expand(c.in(0), out));
}

void constant_of_shape_op(NodeCtx& c) {
  const std::vector<SymSize> shape = c.ints(0);
  double value = 0;
  DType dtype = DType::kF32;
  if (const auto* t = c.attr_t("value")) {
    auto p = decode_tensor(*t, Device::cpu(), "attribute 'value'");
    if (!p.ok()) throw Error(p.status());
    if (p->tensor.numel() != 1) c.fail("value must have one element");
    value = p->tensor.to_doubles()[0];
    dtype = p->tensor.dtype();
  }
  check_size(c, Sizes(shape));
  c.set(0, full(Sizes(shape), value, dtype, c.device()));
}

/// Input i of Range as an integer known while tracing: a known size value, a Cast of one to a
/// float type, or an untraced (constant) scalar holding an integer.
std::optional<SymSize> known_int(NodeCtx& c, size_t i) {
  Val& v = c.val(i);
  if (v.shape && v.shape->size() == 1) return v.shape->at(0);
  if (v.cast_ints && v.cast_ints->size() == 1) return v.cast_ints->at(0);
  if (v.t.defined() && !v.t.is_traced() && v.t.numel() == 1) {
    const double x = v.t.to_doubles().at(0);
    if (std::isfinite(x) && std::floor(x) == x && std::fabs(x) < 9007199254740992.0)
      return SymSize(static_cast<int64_t>(x));
  }
  return std::nullopt;
}

void range_op(NodeCtx& c) {
  const std::optional<SymSize> ka = known_int(c, 0), kb = known_int(c, 1), kd = known_int(c, 2);
  if (ka && kb && kd && (ka->is_symbolic() || kb->is_symbolic())) {
    Val& a = c.val(0);
    const DType dtype = a.shape ? a.dtype : a.t.dtype();
    const SymSize start = *ka, limit = *kb;
    const int64_t delta = kd->value();
    if (delta == 0) c.fail("delta is 0");
    if (delta < 0) c.unsupported("a negative delta with symbolic bounds");
    const SymSize n = sym_max(SymSize(0), (limit - start + (delta - 1)) / delta);
    Tensor r = arange(n, dtype, c.device());
    if (delta != 1) r = mul(r, scalar(static_cast<double>(delta), dtype));
    Val first;
    first.shape = std::vector<SymSize>{start};
    first.dtype = dtype;
    r = add(r, c.materialize(first));
    c.set(0, r);
    return;
  }
  const double start = c.scalar_double(0), limit = c.scalar_double(1), delta = c.scalar_double(2);
  if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
    c.fail("start, limit and delta must be finite and delta non-zero");
  if ((limit - start) / delta > 2147483648.0) c.fail("the range has more than 2^31 elements");
  c.set(0, arange(start, limit, delta, c.in(0).dtype(), c.device()));
}

}  // namespace

void register_shape_ops(std::map<std::string, OpHandler>& t) {
  t["Shape"] = shape_op;
  t["Size"] = [](NodeCtx& c) {
    SymSize n = 1;
    for (const SymSize& s : sizes_of(c, 0)) n = n * s;
    c.set_shape(0, {n}, DType::kI64, true);
  };
  t["Reshape"] = reshape_op;
  t["Flatten"] = flatten_op;
  t["Transpose"] = [](NodeCtx& c) {
    Tensor x = c.in(0);
    std::vector<int64_t> perm = c.attr_ints("perm");
    if (perm.empty())
      for (int64_t d = x.dim() - 1; d >= 0; --d) perm.push_back(d);
    c.set(0, permute(x, perm));
  };
  t["Concat"] = concat_op;
  t["Slice"] = slice_op;
  t["Gather"] = gather_op;
  t["GatherElements"] = [](NodeCtx& c) {
    Tensor x = c.in(0), idx = c.in(1);
    const int64_t axis = axis_of(c, c.attr_i("axis", 0), x.dim());
    Tensor n =
        scalar(static_cast<double>(x.sizes()[static_cast<size_t>(axis)].value()), idx.dtype());
    c.set(0, gather(x, axis, where(lt(idx, scalar(0, idx.dtype())), add(idx, n), idx)));
  };
  t["GatherND"] = [](NodeCtx& c) {
    c.set(0, gather_nd(c.in(0), c.in(1), c.attr_i("batch_dims", 0)));
  };
  t["Unsqueeze"] = unsqueeze_op;
  t["Squeeze"] = squeeze_op;
  t["Expand"] = expand_op;
  t["ConstantOfShape"] = constant_of_shape_op;
  t["Range"] = range_op;
  t["Constant"] = [](NodeCtx& c) { c.fail("internal: Constant nodes are decoded at import"); };
  t["Cast"] = [](NodeCtx& c) {
    auto to = kiln_dtype(static_cast<OnnxType>(c.attr_i("to", 0)));
    if (!to.ok()) throw Error(to.status());
    Val& v = c.val(0);
    if (v.shape && is_integral(*to)) {
      c.set_known(0, *v.shape, *to, v.dims);
      return;
    }
    if (v.shape) {
      Val out;
      out.cast_ints = *v.shape;
      out.t = cast(c.in(0), *to);
      c.set_val(0, std::move(out));
      return;
    }
    c.set(0, cast(c.in(0), *to));
  };
  t["CastLike"] = [](NodeCtx& c) { c.set(0, cast(c.in(0), c.in(1).dtype())); };
  t["Trilu"] = [](NodeCtx& c) {
    const int64_t k = c.has(1) ? c.scalar_int(1) : 0;
    Tensor x = c.in(0);
    c.set(0, c.attr_i("upper", 1) != 0 ? triu(x, k) : tril(x, k));
  };
  t["NonZero"] = [](NodeCtx& c) {
    Tensor x = c.in(0);
    if (x.dim() == 0) c.note_break(x, "nonzero of a scalar has no device lowering");
    c.set(0, permute(nonzero(x), {1, 0}));
  };
  t["Split"] = [](NodeCtx& c) {
    Tensor x = c.in(0);
    const int64_t axis = axis_of(c, c.attr_i("axis", 0), x.dim());
    const int64_t n = x.sizes()[static_cast<size_t>(axis)].value();
    std::vector<int64_t> split = c.opset() >= 13
                                     ? (c.has(1) ? c.int_values(1) : std::vector<int64_t>{})
                                     : c.attr_ints("split");
    const int64_t parts = static_cast<int64_t>(c.outputs());
    if (split.empty()) {
      const int64_t each = (n + parts - 1) / parts;
      for (int64_t p = 0, left = n; p < parts; ++p, left -= each)
        split.push_back(std::min(each, left));
    }
    if (static_cast<int64_t>(split.size()) != parts) c.fail("split sizes do not match the outputs");
    int64_t at = 0;
    for (int64_t p = 0; p < parts; ++p) {
      c.set(static_cast<size_t>(p), slice(x, axis, at, at + split[static_cast<size_t>(p)]));
      at += split[static_cast<size_t>(p)];
    }
  };
}

}  // namespace kiln::onnx
