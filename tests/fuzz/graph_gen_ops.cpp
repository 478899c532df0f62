// The program generator's structural steps: matmul and linear layers, softmax and layer_norm,
// views (reshape, permute, squeeze, expand), slice and concat, gathers, triangles, creation
// ops and graph breaks.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "fuzz/gen_state.h"

namespace kiln::fuzz::gen {

void Gen::matmul_op() {
  int a = pick([](const Val& v) { return floating(v) && !v.shape.empty() && !v.huge; });
  if (a < 0) return;
  Val x = val(a);
  const size_t rank = x.shape.size();
  Step s;
  s.kind = StepKind::kMatMul;
  s.flag = rank >= 2 && r_.chance(0.2);  // trans_a
  const GDim k = s.flag ? x.shape[rank - 2] : x.shape[rank - 1];
  GShape lead;  // a's dims before its matrix dims, then M
  if (rank >= 2) {
    lead.assign(x.shape.begin(), x.shape.end() - 2);
    lead.push_back(s.flag ? x.shape[rank - 1] : x.shape[rank - 2]);
  }
  int b = -1;
  GShape out;
  if (rank >= 2 && !s.flag && r_.chance(0.2)) {  // a · aᵀ
    b = a;
    s.flag2 = true;
    out = lead;
    out.push_back(lead.back());
  } else {
    const GDim n = GDim{r_.range(1, 6), 0};
    s.flag2 = r_.chance(0.4);
    GShape bs;
    const double u = r_.unit();
    if (u < 0.15 && rank >= 2) {  // b is 1-D: a matrix-vector product
      bs = {k};
      s.flag2 = false;
      out = lead;
    } else {
      if (u < 0.35 && rank >= 3) bs.assign(x.shape.begin(), x.shape.end() - 2);  // batched
      if (s.flag2) {
        bs.push_back(n);
        bs.push_back(k);
      } else {
        bs.push_back(k);
        bs.push_back(n);
      }
      out = lead;
      if (rank == 1) out.clear();
      out.push_back(n);
    }
    b = leaf(x.dtype, bs, Fill::kNormal);
    if (b < 0) return;
  }
  if (numel_hi(out) > kMaxNumel) return;
  s.args = {a, b};
  Val v;
  v.dtype = x.dtype;
  v.shape = out;
  v.exact = false;
  v.special = x.special || val(b).special;
  v.bound = x.bound * val(b).bound * static_cast<double>(std::max<int64_t>(hi(k), 1));
  if (!caps_ok(v)) return;
  const int m = add_step(s, v);
  // A linear layer: x · Wᵀ + bias, then an activation, as nn::Linear writes it.
  if (s.flag2 && b != a && val(b).shape.size() == 2 && r_.chance(0.5)) {
    const int bias = leaf(v.dtype, {out.back()}, Fill::kNormal);
    if (bias < 0) return;
    Step t;
    t.kind = StepKind::kBinary;
    t.op = OpKind::Add;
    t.args = {m, bias};
    v.bound += 4;
    int y = add_step(t, v);
    if (r_.chance(0.6)) {
      Step act;
      act.kind = StepKind::kUnary;
      act.op =
          r_.pick(std::vector<OpKind>{OpKind::Relu, OpKind::Gelu, OpKind::Silu, OpKind::GeluTanh});
      act.args = {y};
      v.bound += 1;
      add_step(act, v);
    }
  }
}

void Gen::softmax_op() {
  int a = pick([](const Val& v) { return floating(v) && !v.shape.empty(); });
  if (a < 0) return;
  Val v = val(a);
  const auto rank = static_cast<int64_t>(v.shape.size());
  const int64_t axis = r_.range(-rank, rank - 1);
  const GDim d = v.shape[static_cast<size_t>(axis < 0 ? axis + rank : axis)];
  if (!v.exact && v.bound > 1e4) return;
  Step s;
  s.kind = StepKind::kSoftmax;
  s.flag = r_.chance(0.35);
  s.args = {a};
  s.ints = {axis};
  v.exact = false;
  v.pos = false;
  v.bound =
      s.flag ? 2 * v.bound + std::log(static_cast<double>(std::max<int64_t>(hi(d), 1))) + 1 : 1.0;
  add_step(s, v);
}

void Gen::layer_norm_op() {
  int a = pick([](const Val& v) { return floating(v) && !v.shape.empty(); });
  if (a < 0) return;
  Val v = val(a);
  if (v.huge) return;
  const size_t rank = v.shape.size();
  const int64_t nd = rank >= 2 && r_.chance(0.3) ? 2 : 1;
  GShape trailing(v.shape.end() - nd, v.shape.end());
  int64_t count = 1;
  for (const GDim& d : trailing) {
    if (d.var() || d.c < 1) return;
    count *= d.c;
  }
  if (!v.exact && v.bound > 1e4) return;
  const int w = leaf(v.dtype, trailing, r_.chance(0.3) ? Fill::kPositive : Fill::kNormal);
  if (w < 0) return;
  const int b = leaf(v.dtype, trailing, Fill::kNormal);
  if (b < 0) return;
  Step s;
  s.kind = StepKind::kLayerNorm;
  s.args = {a, w, b};
  s.ints = {nd};
  // eps 1e-5 over near-constant rows amplifies float rounding (the interpreter normalises in
  // double) past any useful f32 tolerance: the smallest eps drawn is 1e-3.
  s.scalar = r_.pick(std::vector<double>{1e-3, 1e-3, 1e-2, 0.1});
  v.exact = false;
  v.pos = false;
  v.is_index = false;
  v.bound = 4 * std::sqrt(static_cast<double>(count)) * 4 + 4;
  add_step(s, v);
}

void Gen::view_op() {
  int a = pick([](const Val&) { return true; });
  if (a < 0) return;
  Val v = val(a);
  const auto rank = static_cast<int64_t>(v.shape.size());
  Step s;
  s.args = {a};
  const int which = static_cast<int>(r_.range(0, 6));
  if (which == 0 && rank >= 2) {  // merge two adjacent dims
    const int64_t d = r_.range(0, rank - 2);
    const GDim x = v.shape[static_cast<size_t>(d)], y = v.shape[static_cast<size_t>(d + 1)];
    if (x.var() && y.var()) return;
    s.kind = StepKind::kMerge;
    s.ints = {d};
    v.shape[static_cast<size_t>(d)] = GDim{x.c * y.c, x.k * y.c + y.k * x.c};
    v.shape.erase(v.shape.begin() + d + 1);
  } else if (which == 1 && rank >= 1 && rank < 5) {  // split a dim by a factor
    const int64_t d = r_.range(0, rank - 1);
    const GDim x = v.shape[static_cast<size_t>(d)];
    std::vector<int64_t> factors;
    for (int64_t f = 2; f <= 4; ++f)
      if (x.c % f == 0 && x.k % f == 0 && (x.var() || x.c > f)) factors.push_back(f);
    if (factors.empty()) return;
    const int64_t f = r_.pick(factors);
    s.kind = StepKind::kSplit;
    s.ints = {d, f};
    v.shape[static_cast<size_t>(d)] = GDim{x.c / f, x.k / f};
    v.shape.insert(v.shape.begin() + d, GDim{f, 0});
  } else if (which == 2 && rank >= 1) {  // flatten
    GDim n{1, 0};
    for (const GDim& d : v.shape) {
      if (n.var() && d.var()) return;
      n = GDim{n.c * d.c, n.k * d.c + d.k * n.c};
    }
    s.kind = StepKind::kFlatten;
    v.shape = {n};
  } else if (which == 3 && rank >= 2) {
    std::vector<int64_t> perm(static_cast<size_t>(rank));
    std::iota(perm.begin(), perm.end(), 0);
    for (size_t i = perm.size() - 1; i > 0; --i)
      std::swap(perm[i], perm[static_cast<size_t>(r_.range(0, static_cast<int64_t>(i)))]);
    s.kind = StepKind::kPermute;
    s.ints = perm;
    GShape out;
    for (int64_t p : perm) out.push_back(v.shape[static_cast<size_t>(p)]);
    v.shape = out;
  } else if (which == 4 && rank < 5) {
    const int64_t axis = r_.range(-rank - 1, rank);
    s.kind = StepKind::kUnsqueeze;
    s.ints = {axis};
    v.shape.insert(v.shape.begin() + (axis < 0 ? axis + rank + 1 : axis), GDim{1, 0});
  } else if (which == 5 && rank >= 1) {
    const int64_t axis = r_.range(-rank, rank - 1);
    const size_t d = static_cast<size_t>(axis < 0 ? axis + rank : axis);
    if (ever_one(v.shape[d])) return;  // squeezed at some sizes only
    s.kind = StepKind::kSqueeze;
    s.ints = {axis};
    if (v.shape[d] == GDim{1, 0}) v.shape.erase(v.shape.begin() + static_cast<ptrdiff_t>(d));
  } else if (which == 6) {  // expand size-1 dims (and maybe add a leading dim)
    GShape out;
    std::vector<int64_t> ints;
    auto grow = [&](GDim& to) {
      // A symbolic size from an existing value's dim, or a constant.
      if (r_.chance(0.4)) {
        for (int tries = 0; tries < 4; ++tries) {
          int o = static_cast<int>(r_.range(0, static_cast<int64_t>(vals_.size()) - 1));
          const Val& ov = val(o);
          if (ov.shape.empty()) continue;
          const int64_t od = r_.range(0, static_cast<int64_t>(ov.shape.size()) - 1);
          const GDim g = ov.shape[static_cast<size_t>(od)];
          if (ever_one(g)) continue;
          ints.push_back(o);
          ints.push_back(od);
          to = g;
          return;
        }
      }
      const int64_t c = r_.range(2, 4);
      ints.push_back(-1);
      ints.push_back(c);
      to = GDim{c, 0};
    };
    bool changed = false;
    if (rank < 4 && r_.chance(0.3)) {
      GDim g;
      grow(g);
      out.push_back(g);
      changed = true;
    }
    for (const GDim& d : v.shape) {
      GDim g = d;
      if (d == GDim{1, 0} && r_.chance(0.7)) {
        grow(g);
        changed = true;
      } else {
        ints.push_back(-1);
        ints.push_back(-1);
      }
      out.push_back(g);
    }
    if (!changed || numel_hi(out) > kMaxNumel) return;
    s.kind = StepKind::kExpand;
    s.ints = ints;
    v.shape = out;
  } else {
    return;
  }
  add_step(s, v);
}

void Gen::slice_op() {
  int a = pick([](const Val& v) { return !v.shape.empty(); });
  if (a < 0) return;
  Val v = val(a);
  const auto rank = static_cast<int64_t>(v.shape.size());
  const int64_t axis = r_.range(0, rank - 1);
  GDim& d = v.shape[static_cast<size_t>(axis)];
  int64_t start, end, step = 1;
  if (!d.var()) {
    const int64_t c = d.c;
    start = r_.range(-c - 2, c + 2);
    end = r_.chance(0.3) ? (int64_t{1} << 40) : r_.range(-c - 2, c + 2);
    step = r_.pick(std::vector<int64_t>{1, 1, 2, 3});
    auto norm = [c](int64_t i) { return i < 0 ? std::max<int64_t>(i + c, 0) : std::min(i, c); };
    const int64_t s0 = norm(start), e0 = norm(end);
    d = GDim{e0 > s0 ? (e0 - s0 + step - 1) / step : 0, 0};
  } else {
    const int64_t l = lo(d);
    const int which = static_cast<int>(r_.range(0, 2));
    if (which == 0) {  // [s:]
      start = r_.range(0, l);
      end = int64_t{1} << 40;
      d = GDim{d.c - start, d.k};
    } else if (which == 1 && l >= 1) {  // [-m:]
      const int64_t m = r_.range(1, l);
      start = -m;
      end = int64_t{1} << 40;
      d = GDim{m, 0};
    } else {  // [:-e]
      const int64_t e = r_.range(0, l);
      start = 0;
      end = -e;
      if (e == 0) end = int64_t{1} << 40;
      d = GDim{d.c - e, d.k};
    }
    if (ever_one(d)) return;
  }
  Step s;
  s.kind = StepKind::kSlice;
  s.args = {a};
  s.ints = {r_.chance(0.2) ? axis - rank : axis, start, end, step};
  add_step(s, v);
}

void Gen::concat_op() {
  int a = pick([](const Val& v) { return !v.shape.empty(); });
  if (a < 0) return;
  Val v = val(a);
  const auto rank = static_cast<int64_t>(v.shape.size());
  const int64_t axis = r_.range(0, rank - 1);
  const int parts = static_cast<int>(r_.range(1, 2));
  Step s;
  s.kind = StepKind::kConcat;
  s.args = {a};
  GDim total = v.shape[static_cast<size_t>(axis)];
  for (int i = 0; i < parts; ++i) {
    GShape ps = v.shape;
    int b = -1;
    if (r_.chance(0.35)) {
      b = pick([&](const Val& o) {
        if (o.shape.size() != v.shape.size()) return false;
        for (size_t j = 0; j < o.shape.size(); ++j)
          if (static_cast<int64_t>(j) != axis && !(o.shape[j] == v.shape[j])) return false;
        return true;
      });
    }
    if (b < 0) {
      if (r_.chance(0.6)) ps[static_cast<size_t>(axis)] = GDim{r_.range(0, 3), 0};
      DType dt = r_.chance(0.7) ? v.dtype : rand_dtype();
      b = leaf(dt, ps, rand_fill(dt));
      if (b < 0) return;
    }
    const Val& o = val(b);
    const GDim g = o.shape[static_cast<size_t>(axis)];
    total = GDim{total.c + g.c, total.k + g.k};
    v.dtype = promote_types(v.dtype, o.dtype);
    v.exact = v.exact && o.exact;
    v.special = v.special || o.special;
    v.bound = std::max(v.bound, o.bound);
    v.pos = v.pos && o.pos;
    v.is_index = v.is_index && o.is_index && o.index_bound == v.index_bound;
    s.args.push_back(b);
  }
  v.shape[static_cast<size_t>(axis)] = total;
  if (numel_hi(v.shape) > kMaxNumel) return;
  s.ints = {r_.chance(0.2) ? axis - rank : axis};
  add_step(s, v);
}

void Gen::index_op() {
  const int which = static_cast<int>(r_.range(0, 2));
  if (which == 2) {  // embedding
    int w = pick([](const Val& v) {
      return v.shape.size() == 2 && !v.shape[0].var() && v.shape[0].c >= 1 &&
             v.dtype != DType::kBool;
    });
    if (w < 0 || r_.chance(0.5)) {
      w = leaf(DType::kF32, {GDim{r_.range(3, 10), 0}, GDim{r_.range(1, 6), 0}}, Fill::kNormal);
      if (w < 0) return;
    }
    const GDim vocab = val(w).shape[0];
    int ids = pick([&](const Val& v) { return v.is_index && v.index_bound == vocab; });
    if (ids < 0 || r_.chance(0.3)) {
      ids = leaf(r_.chance(0.5) ? DType::kI64 : DType::kI32,
                 rand_shape(static_cast<int>(r_.range(0, 2)), true), Fill::kIndex, vocab);
      if (ids < 0) return;
    }
    Val v = val(w);
    v.shape = val(ids).shape;
    v.shape.push_back(val(w).shape[1]);
    if (numel_hi(v.shape) > kMaxNumel) return;
    Step s;
    s.kind = StepKind::kEmbedding;
    s.args = {w, ids};
    add_step(s, v);
    return;
  }
  int a = pick([](const Val& v) { return !v.shape.empty(); });
  if (a < 0) return;
  Val v = val(a);
  const auto rank = static_cast<int64_t>(v.shape.size());
  const int64_t axis = r_.range(0, rank - 1);
  const GDim bound = v.shape[static_cast<size_t>(axis)];
  Step s;
  s.ints = {r_.chance(0.2) ? axis - rank : axis};
  int idx = -1;
  if (which == 0) {  // gather: index of a's rank, equal dims off the axis
    s.kind = StepKind::kGather;
    idx = pick([&](const Val& o) {
      if (!o.is_index || !(o.index_bound == bound) || o.shape.size() != v.shape.size())
        return false;
      for (size_t j = 0; j < o.shape.size(); ++j)
        if (static_cast<int64_t>(j) != axis && !(o.shape[j] == v.shape[j])) return false;
      return true;
    });
    if (idx < 0) {
      GShape is = v.shape;
      is[static_cast<size_t>(axis)] = GDim{r_.range(1, 4), 0};
      idx = leaf(r_.chance(0.5) ? DType::kI64 : DType::kI32, is, Fill::kIndex, bound);
    }
  } else {  // index_select: a 1-D index
    s.kind = StepKind::kIndexSelect;
    idx = pick(
        [&](const Val& o) { return o.is_index && o.index_bound == bound && o.shape.size() == 1; });
    if (idx < 0 || r_.chance(0.5))
      idx = leaf(r_.chance(0.5) ? DType::kI64 : DType::kI32, {GDim{r_.range(0, 5), 0}},
                 Fill::kIndex, bound);
  }
  if (idx < 0) return;
  const Val& iv = val(idx);
  if (s.kind == StepKind::kGather)
    v.shape = iv.shape;
  else
    v.shape[static_cast<size_t>(axis)] = iv.shape[0];
  if (numel_hi(v.shape) > kMaxNumel) return;
  s.args = {a, idx};
  v.pos = v.pos && numel_hi(v.shape) > 0;
  add_step(s, v);
}

void Gen::triangle_op() {
  int a = pick([](const Val& v) { return v.shape.size() >= 2; });
  if (a < 0) return;
  Val v = val(a);
  Step s;
  s.kind = StepKind::kTriangle;
  s.flag = r_.chance(0.5);
  s.args = {a};
  s.ints = {r_.range(-2, 2)};
  v.pos = false;
  v.is_index = v.is_index && v.index_bound.at(nmin_) >= 1;
  add_step(s, v);
}

void Gen::creation_op() {
  Step s;
  Val v;
  if (r_.chance(0.5)) {  // arange over a dim of an existing value
    int a = pick([](const Val& o) { return !o.shape.empty(); });
    if (a < 0) return;
    const int64_t d = r_.range(0, static_cast<int64_t>(val(a).shape.size()) - 1);
    s.kind = StepKind::kArange;
    s.args = {a};
    s.ints = {d};
    s.dtype = r_.pick(std::vector<DType>{DType::kI64, DType::kI64, DType::kI32, DType::kF32});
    v.dtype = s.dtype;
    v.shape = {val(a).shape[static_cast<size_t>(d)]};
    v.bound = static_cast<double>(hi(v.shape[0]));
    v.is_index = !is_floating(s.dtype);
    v.index_bound = v.shape[0];
    add_step(s, v);
    return;
  }
  // full: sizes taken from existing values' dims (symbolic) or constants.
  const int rank = static_cast<int>(r_.range(0, 3));
  GShape shape;
  for (int i = 0; i < rank; ++i) {
    int o = static_cast<int>(r_.range(0, static_cast<int64_t>(vals_.size()) - 1));
    const Val& ov = val(o);
    if (!ov.shape.empty() && r_.chance(0.6)) {
      const int64_t od = r_.range(0, static_cast<int64_t>(ov.shape.size()) - 1);
      s.ints.push_back(o);
      s.ints.push_back(od);
      shape.push_back(ov.shape[static_cast<size_t>(od)]);
    } else {
      const int64_t c = r_.range(1, 4);
      s.ints.push_back(-1);
      s.ints.push_back(c);
      shape.push_back(GDim{c, 0});
    }
  }
  if (numel_hi(shape) > kMaxNumel) return;
  s.kind = StepKind::kFull;
  s.dtype = rand_dtype();
  s.scalar = s.dtype == DType::kBool ? (r_.chance(0.5) ? 1.0 : 0.0) : scalar_for(s.dtype, true);
  v.dtype = s.dtype;
  v.shape = shape;
  v.bound = std::isfinite(s.scalar) ? std::max(std::fabs(s.scalar), 1.0) : 1.0;
  v.special = !std::isfinite(s.scalar) || std::signbit(s.scalar);
  if (!is_floating(s.dtype) && v.bound > 1e9) v.bound = 9.3e18;
  v.pos = is_floating(s.dtype) && s.scalar >= 0.25;
  add_step(s, v);
}

void Gen::break_op() {
  // A host call or host read may take a value computed from captured constants alone
  // (regression case ReplayOfHostCallsOnACapturedConstant).
  if (r_.chance(0.5)) {
    int a = pick([&](const Val& v) { return numeric(v); });
    if (a < 0) return;
    Step s;
    s.kind = StepKind::kHostCall;
    s.args = {a};
    Val v = val(a);
    v.bound = 2 * v.bound + 1;
    v.exact = v.exact && v.dtype == DType::kF32;
    v.is_index = false;
    if (!caps_ok(v)) return;
    add_step(s, v);
    p_.has_break = true;
    return;
  }
  // a * sum(b).item(): the item is a host read (a value guard inside compile).
  int a = pick([](const Val& v) { return numeric(v); });
  if (a < 0) return;
  const bool fa = floating(val(a));
  int b = pick([&](const Val& o) {
    if (o.huge) return false;
    if (fa) return floating(o) && o.bound * static_cast<double>(numel_hi(o.shape)) <= 1e4;
    return !floating(o) && o.bound * static_cast<double>(numel_hi(o.shape)) <= 1e7;
  });
  if (b < 0) return;
  Step s;
  s.kind = StepKind::kItemScale;
  s.args = {a, b};
  for (int64_t d = 0; d < static_cast<int64_t>(val(b).shape.size()); ++d) s.ints.push_back(d);
  Val v = val(a);
  v.bound *= std::max(1.0, val(b).bound * static_cast<double>(numel_hi(val(b).shape)));
  v.exact = v.exact && !fa;
  v.special = v.special || val(b).special;
  v.is_index = false;
  v.pos = false;
  if (!fa && v.dtype == DType::kBool) v.dtype = DType::kI64;
  if (!caps_ok(v)) return;
  if (!fa) v.bound = std::min(v.bound, 9.3e18);
  add_step(s, v);
  p_.has_break = true;
}

}  // namespace kiln::fuzz::gen
