/// \file gen_state.h
/// The program generator's state (graph_gen.cpp: sizes, leaves, elementwise ops and
/// reductions; graph_gen_ops.cpp: matmul, normalisation, views, indexing, creation, breaks).
#pragma once

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <optional>
#include <vector>

#include "fuzz/graph_gen.h"

namespace kiln::fuzz::gen {

constexpr int kMaxInputs = 6;
constexpr int64_t kMaxNumel = 256;
constexpr double kBig = 1e30;

/// Integer scalars above 1e9 for the default slice: distinct in their first 9 digits.
inline const std::vector<double> kLargeScalars = {2147483647.0, -2147483648.0, 4294967296.0,
                                                  1099511627776.0, 9007199254740991.0};

struct Val {
  DType dtype = DType::kF32;
  GShape shape;
  double bound = 4;
  bool exact = true;
  bool special = false;
  bool pos = false;
  bool lowp = false;  // a float computed from f16 values: f16 tolerance (a result rounded to
                      // half differs by a half ulp where float results differ in the last bit)
  // may hold finite values near the f32 limit: sums and products overflow in float on the
  // device, not in the interpreter's double accumulators
  bool huge = false;
  bool is_index = false;  // integers in [0, index_bound)
  GDim index_bound;
};

inline bool numeric(const Val& v) {
  return v.dtype != DType::kBool;
}
inline bool floating(const Val& v) {
  return is_floating(v.dtype);
}

/// The unary and binary rows of kiln/elementwise_ops.def the generator draws (graph_gen.cpp:
/// every row but the named exclusions).
const std::vector<OpKind>& unary_ops();
const std::vector<OpKind>& binary_ops();

class Gen {
 public:
  Gen(uint64_t seed, uint64_t index, GenOptions opt) : r_(mix_seed(seed, index)), opt_(opt) {
    p_.seed = seed;
    p_.index = index;
  }

  Program run();

 private:
  // ---- sizes and shapes ---------------------------------------------------------------------
  void choose_sizes();

  int64_t lo(const GDim& d) const { return d.at(nmin_); }
  int64_t hi(const GDim& d) const { return d.at(nmax_); }
  int64_t numel_hi(const GShape& s) const {
    int64_t n = 1;
    for (const GDim& d : s) n *= std::max<int64_t>(hi(d), 1);
    return n;
  }
  static bool has_var(const GShape& s) {
    return std::any_of(s.begin(), s.end(), [](const GDim& d) { return d.var(); });
  }
  /// True if some call makes dim d exactly 1 while it is not the constant 1.
  bool ever_one(const GDim& d) const {
    if (!d.var()) return false;
    return std::any_of(p_.sizes.begin(), p_.sizes.end(), [&](int64_t n) { return d.at(n) == 1; });
  }
  GDim var_dim() {
    return r_.chance(0.8) ? GDim{0, 1} : (r_.chance(0.5) ? GDim{0, 2} : GDim{1, 1});
  }
  GDim rand_dim(bool allow_var) {
    if (allow_var && r_.chance(0.35)) return var_dim();
    return GDim{r_.pick(std::vector<int64_t>{1, 1, 2, 3, 3, 4, 2, 3, 0}), 0};
  }
  GShape rand_shape(int rank, bool allow_var) {
    for (int tries = 0; tries < 20; ++tries) {
      GShape s;
      for (int i = 0; i < rank; ++i) s.push_back(rand_dim(allow_var));
      if (numel_hi(s) <= kMaxNumel) return s;
    }
    return GShape(static_cast<size_t>(rank), GDim{2, 0});
  }
  /// A shape that broadcasts with `a` to exactly `a`: leading dims dropped, some dims set to 1.
  GShape partner_shape(const GShape& a) {
    GShape s = a;
    if (!s.empty() && r_.chance(0.3))
      s.erase(s.begin(), s.begin() + r_.range(1, static_cast<int64_t>(s.size())));
    for (GDim& d : s)
      if (r_.chance(0.25)) d = GDim{1, 0};
    return s;
  }
  std::optional<GShape> broadcast(const GShape& a, const GShape& b) const {
    GShape out(std::max(a.size(), b.size()));
    for (size_t i = 0; i < out.size(); ++i) {
      const GDim* x = i < a.size() ? &a[a.size() - 1 - i] : nullptr;
      const GDim* y = i < b.size() ? &b[b.size() - 1 - i] : nullptr;
      GDim& o = out[out.size() - 1 - i];
      if (!x)
        o = *y;
      else if (!y)
        o = *x;
      else if (*x == *y)
        o = *x;
      else if (*x == GDim{1, 0} && !ever_one(*y))
        o = *y;
      else if (*y == GDim{1, 0} && !ever_one(*x))
        o = *x;
      else
        return std::nullopt;
    }
    if (numel_hi(out) > kMaxNumel) return std::nullopt;
    return out;
  }

  // ---- dtypes, fills, scalars -----------------------------------------------------------------
  DType rand_dtype() {
    const double u = r_.unit();
    if (u < 0.55) return DType::kF32;
    if (u < 0.65) return DType::kF16;
    if (u < 0.75) return DType::kI32;
    if (u < 0.9) return DType::kI64;
    return DType::kBool;
  }
  DType rand_numeric_dtype() {
    DType d;
    do d = rand_dtype();
    while (d == DType::kBool);
    return d;
  }
  Fill rand_fill(DType dt) {
    if (is_floating(dt)) {
      const double u = r_.unit();
      return u < 0.6 ? Fill::kNormal : (u < 0.8 ? Fill::kSpecial : Fill::kPositive);
    }
    if (dt == DType::kBool) return Fill::kNormal;
    return r_.chance(0.25) ? Fill::kLargeInt : Fill::kNormal;
  }
  double int_scalar() {
    if (r_.chance(0.15)) {
      if (opt_.known_defects && r_.chance(0.5))
        return std::ldexp(1.0, static_cast<int>(r_.range(31, 62))) +
               static_cast<double>(r_.range(0, 9));
      return r_.pick(kLargeScalars);
    }
    return static_cast<double>(r_.range(-9, 9));
  }
  double float_scalar(bool allow_special) {
    const double u = r_.unit();
    if (allow_special && u < 0.1) {
      const std::vector<double> sp = {std::numeric_limits<double>::infinity(),
                                      -std::numeric_limits<double>::infinity(), std::nan(""), -0.0};
      return r_.pick(sp);
    }
    if (u < 0.3) return r_.pick(std::vector<double>{0.0, 1.0, -1.0, 0.5, 2.0, 3.0});
    return std::round((-4.0 + 8.0 * r_.unit()) * 1024.0) / 1024.0;
  }
  double scalar_for(DType dt, bool allow_special) {
    return is_floating(dt) ? float_scalar(allow_special) : int_scalar();
  }

  // ---- values -------------------------------------------------------------------------------
  int leaf(DType dt, const GShape& shape, Fill fill, GDim bound = {}, bool force_input = false) {
    bool captured = !has_var(shape) && !force_input && (inputs_ >= kMaxInputs || r_.chance(0.4));
    if (fill == Fill::kIndex && bound.var()) captured = false;
    if (!captured && inputs_ >= kMaxInputs) return -1;
    if (fill == Fill::kIndex && lo(bound) < 1 && numel_hi(shape) > 0) return -1;
    if (!captured) ++inputs_;
    Leaf l;
    l.dtype = dt;
    l.shape = shape;
    l.fill = fill;
    l.bound = bound;
    l.captured = captured;
    p_.leaves.push_back(l);
    Val v;
    v.dtype = dt;
    v.shape = shape;
    v.exact = true;
    if (is_floating(dt)) {
      v.special = fill == Fill::kSpecial;
      v.huge = fill == Fill::kSpecial && dt == DType::kF32;
      v.pos = fill == Fill::kPositive;
      v.bound = 4;
    } else if (dt == DType::kBool) {
      v.bound = 1;
    } else {
      v.bound = fill == Fill::kLargeInt ? 9.3e18 : 20;
      if (fill == Fill::kIndex) {
        v.bound = static_cast<double>(hi(bound));
        v.is_index = true;
        v.index_bound = bound;
      }
    }
    Step s;
    s.kind = StepKind::kLeaf;
    s.ints = {static_cast<int64_t>(p_.leaves.size()) - 1};
    return add_step(s, v);
  }
  int add_step(Step s, Val v) {
    for (int a : s.args) {
      const Val& in = val(a);
      v.lowp = v.lowp || in.lowp || (in.dtype == DType::kF16 && !in.exact);
      v.huge = v.huge || in.huge;
    }
    if (!is_floating(v.dtype)) v.lowp = v.huge = false;
    if (is_floating(v.dtype)) {
      const double cap = v.dtype == DType::kF16 ? 2e4 : 1e12;
      if (v.bound > cap) v.special = true;
      v.bound = std::min(v.bound, kBig);
    }
    s.out_dtype = v.dtype;
    s.out_shape = v.shape;
    if (s.kind != StepKind::kLeaf) ++ops_;
    p_.steps.push_back(std::move(s));
    vals_.push_back(std::move(v));
    return static_cast<int>(vals_.size()) - 1;
  }
  const Val& val(int i) const { return vals_[static_cast<size_t>(i)]; }

  /// A random value satisfying `pred`, biased to recent ones; -1 if none.
  template <typename Pred>
  int pick(Pred pred) {
    std::vector<int> ok;
    for (int i = 0; i < static_cast<int>(vals_.size()); ++i)
      if (pred(val(i))) ok.push_back(i);
    if (ok.empty()) return -1;
    if (r_.chance(0.6)) return ok.back();
    return r_.pick(ok);
  }

  /// v itself if its sign is reliable (exact or >= 0.25), else abs(v) + 0.5 (float) as new steps.
  int stable(int v) {
    if (val(v).exact || val(v).pos || !floating(val(v))) return v;
    Step s;
    s.kind = StepKind::kUnary;
    s.op = OpKind::Abs;
    s.args = {v};
    Val av = val(v);
    int a = add_step(s, av);
    Step t;
    t.kind = StepKind::kBinaryScalar;
    t.op = OpKind::Add;
    t.args = {a};
    t.scalar = 0.5;
    av.pos = true;
    av.bound += 0.5;
    return add_step(t, av);
  }

  /// An operand for a binary op with `a`: an existing value that broadcasts with it, or a new
  /// leaf with a partner shape. -1 if none fits.
  int partner(int a, bool allow_bool) {
    if (r_.chance(0.45)) {
      int b = pick([&](const Val& v) {
        return (allow_bool || numeric(v)) && broadcast(val(a).shape, v.shape).has_value();
      });
      if (b >= 0 && (b != a || r_.chance(0.3))) return b;
    }
    DType dt = r_.chance(0.7) ? val(a).dtype : (allow_bool ? rand_dtype() : rand_numeric_dtype());
    if (!allow_bool && dt == DType::kBool) dt = DType::kF32;
    GShape s = partner_shape(val(a).shape);
    if (r_.chance(0.15) && numel_hi(s) * 3 <= kMaxNumel) s.insert(s.begin(), GDim{3, 0});
    return leaf(dt, s, rand_fill(dt));
  }

  // ---- steps ----------------------------------------------------------------------------------
  void one_step();

  void unary();

  static bool caps_ok(const Val& v) {
    if (!is_floating(v.dtype)) return true;
    return v.bound <= (v.dtype == DType::kF16 ? 2e4 : 1e12);
  }

  void binary(bool compare);

  void binary_scalar();

  int bool_operand(const GShape& like) {
    int c = pick([&](const Val& v) {
      return v.dtype == DType::kBool && broadcast(like, v.shape).has_value();
    });
    if (c >= 0 && r_.chance(0.6)) return c;
    return leaf(DType::kBool, partner_shape(like), Fill::kNormal);
  }

  void where_op();

  void masked_fill_op();

  void cast_op();

  std::vector<int64_t> rand_axes(int rank) {
    std::vector<int64_t> axes;
    for (int d = 0; d < rank; ++d)
      if (r_.chance(0.4)) axes.push_back(d);
    if (axes.empty()) axes.push_back(r_.range(0, rank - 1));
    return axes;
  }

  void reduce_op();

  void arg_reduce();

  void matmul_op();
  void softmax_op();
  void layer_norm_op();
  void view_op();
  void slice_op();
  void concat_op();
  void index_op();
  void triangle_op();
  void creation_op();
  void break_op();

  Rng r_;
  GenOptions opt_;
  Program p_;
  std::vector<Val> vals_;
  int inputs_ = 0;
  int64_t nmin_ = 0;
  int64_t nmax_ = 0;
  int ops_ = 0;  // non-leaf steps
};

}  // namespace kiln::fuzz::gen
