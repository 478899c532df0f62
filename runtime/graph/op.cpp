#include "graph/op.h"

#include "graph/shape_rule.h"

#include <algorithm>

namespace kiln {
namespace {

struct OpInfo {
  const char* name;
  OpCategory category;
  int arity;
  const char* attrs;
  bool kernel_row;  // a KILN_KERNEL_OP row
};

constexpr OpInfo kOps[] = {
#define KILN_OP(e, name, cat, arity, attrs) {name, OpCategory::k##cat, arity, attrs, false},
#define KILN_KERNEL_OP(e, name, cat, arity, attrs, variant, stem) \
  {name, OpCategory::k##cat, arity, attrs, true},
#include "graph/ops.def"
#undef KILN_KERNEL_OP
#undef KILN_OP
};

// The dtype columns of kiln/elementwise_ops.def, indexed by OpKind.
enum class ElementwiseDtypes : uint8_t { kNone, KeepsInts, ToFloat, Promote, IntsOnly };
constexpr ElementwiseDtypes kElementwiseDtypes[] = {
#define KILN_OP(e, name, cat, arity, attrs) ElementwiseDtypes::kNone,
#define KILN_UNARY(e, name, ints, glsl) ElementwiseDtypes::ints,
#define KILN_BINARY(e, name, dtypes, glsl) ElementwiseDtypes::dtypes,
#include "graph/ops.def"
#undef KILN_BINARY
#undef KILN_UNARY
#undef KILN_OP
};

const OpInfo& info(OpKind op) {
  return kOps[static_cast<size_t>(op)];
}

}  // namespace

bool unary_keeps_ints(OpKind op) {
  return kElementwiseDtypes[static_cast<size_t>(op)] == ElementwiseDtypes::KeepsInts;
}
bool binary_to_float(OpKind op) {
  return kElementwiseDtypes[static_cast<size_t>(op)] == ElementwiseDtypes::ToFloat &&
         op_category(op) == OpCategory::kBinary;
}
bool binary_ints_only(OpKind op) {
  return kElementwiseDtypes[static_cast<size_t>(op)] == ElementwiseDtypes::IntsOnly;
}

namespace {

std::string dims_str(std::span<const int64_t> d) {
  return shape_str(d);
}

}  // namespace

namespace detail {
Status op_error(OpKind op, std::span<const TensorMeta> ins, const std::string& what) {
  std::string msg = std::string(op_name(op)) + "(";
  for (size_t i = 0; i < ins.size(); ++i) msg += (i ? ", " : "") + ins[i].str();
  return invalid_argument(msg + "): " + what);
}
}  // namespace detail
using detail::op_error;

const char* op_name(OpKind op) {
  return info(op).name;
}
OpCategory op_category(OpKind op) {
  return info(op).category;
}
int op_arity(OpKind op) {
  return info(op).arity;
}
const char* op_attrs(OpKind op) {
  return info(op).attrs;
}

bool op_from_name(std::string_view name, OpKind* out) {
  for (size_t i = 0; i < std::size(kOps); ++i) {
    if (name == kOps[i].name) {
      *out = static_cast<OpKind>(i);
      return true;
    }
  }
  return false;
}

bool is_elementwise(OpKind op) {
  switch (op_category(op)) {
    case OpCategory::kUnary:
    case OpCategory::kBinary:
    case OpCategory::kCompare:
    case OpCategory::kTernary:
    case OpCategory::kCast:
      return true;
    default:
      return false;
  }
}
bool is_index_op(OpKind op) {
  return op_category(op) == OpCategory::kIndexing || op_category(op) == OpCategory::kTriangular ||
         op == OpKind::Arange;
}
bool is_reduce(OpKind op) {
  return op_category(op) == OpCategory::kReduce;
}
bool is_movement(OpKind op) {
  return op_category(op) == OpCategory::kMovement;
}
bool is_kernel_op(OpKind op) {
  return info(op).kernel_row;
}
bool is_source(OpKind op) {
  return op_category(op) == OpCategory::kSource;
}

Expected<Shape> broadcast_shapes(std::span<const Dim> a, std::span<const Dim> b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    Dim da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    Dim db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      return invalid_argument("shapes " + shape_str(a) + " and " + shape_str(b) +
                              " are not broadcastable (dim " + std::to_string(i) + ": " +
                              std::to_string(da) + " vs " + std::to_string(db) + ")");
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Expected<int64_t> normalize_axis(int64_t axis, int rank) {
  int64_t n = axis < 0 ? axis + rank : axis;
  if (n < 0 || n >= rank)
    return invalid_argument("axis " + std::to_string(axis) + " is out of range for rank " +
                            std::to_string(rank));
  return n;
}

SliceRange resolve_slice(int64_t start, int64_t end, int64_t step, int64_t size) {
  auto clamp = [size](int64_t v) {
    if (v < 0) v += size;
    return std::clamp<int64_t>(v, 0, size);
  };
  SliceRange r;
  r.start = clamp(start);
  const int64_t stop = clamp(end);
  r.length = stop > r.start && step > 0 ? (stop - r.start + step - 1) / step : 0;
  return r;
}

Expected<std::vector<int64_t>> normalize_axes(std::span<const int64_t> axes, int rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    int64_t n = a < 0 ? a + rank : a;
    if (n < 0 || n >= std::max(rank, 1) || (rank == 0))
      return invalid_argument("axis " + std::to_string(a) + " is out of range for rank " +
                              std::to_string(rank));
    out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end())
    return invalid_argument("repeated axis in " + dims_str(axes));
  return out;
}

Expected<TensorMeta> infer_meta(OpKind op, std::span<const TensorMeta> ins, const Attrs& attrs) {
  if (op_arity(op) >= 0 && static_cast<int>(ins.size()) != op_arity(op))
    return op_error(op, ins, "expects " + std::to_string(op_arity(op)) + " inputs");
  // complex64 goes into the Spectral and movement ops only; no other op makes it.
  if (op_category(op) != OpCategory::kSpectral && !is_movement(op)) {
    for (const TensorMeta& m : ins)
      if (is_complex(m.dtype))
        return op_error(op, ins,
                        "is not defined for complex64 tensors (they go into fft, ifft, rfft, "
                        "irfft, real, imag, abs, view_as_real, reshape, permute and expand)");
    if ((op == OpKind::Full || op == OpKind::Arange || op == OpKind::Cast) &&
        is_complex(attrs.dtype))
      return op_error(op, ins, "cannot make complex64 (view_as_complex does)");
  }
  // An op with a rule over symbolic sizes: the rule evaluated at the inputs' sizes.
  if (ShapeRuleFn rule = detail::shape_rule(op))
    return detail::eval_shape_rule(rule, op, ins, attrs);
  switch (op_category(op)) {
    case OpCategory::kSource:
      if (op == OpKind::Arange) return detail::infer_meta_nn(op, ins, attrs);
      if (op == OpKind::Full) {
        for (Dim d : attrs.dims)
          if (d < 0) return op_error(op, ins, "negative size in shape " + dims_str(attrs.dims));
        return TensorMeta{attrs.dtype, attrs.dims};
      }
      return op_error(op, ins, "input and constant nodes carry their own meta");
    case OpCategory::kUnary: {
      DType dt = ins[0].dtype;
      if (dt == DType::kBool) return op_error(op, ins, "not defined for bool tensors");
      // exp(int) -> f32, as in PyTorch (the ints column of kiln/elementwise_ops.def)
      if (!unary_keeps_ints(op) && !is_floating(dt)) dt = DType::kF32;
      return TensorMeta{dt, ins[0].shape};
    }
    case OpCategory::kBinary:
    case OpCategory::kCompare: {
      auto b = broadcast_shapes(ins[0].shape, ins[1].shape);
      if (!b.ok()) return op_error(op, ins, b.status().message());
      Shape shape = std::move(b).value();
      DType dt = promote_types(ins[0].dtype, ins[1].dtype);
      if (op_category(op) == OpCategory::kCompare) return TensorMeta{DType::kBool, shape};
      if (dt == DType::kBool) return op_error(op, ins, "arithmetic is not defined on bool tensors");
      // The dtypes column of kiln/elementwise_ops.def: true division, shifts.
      if (binary_to_float(op) && !is_floating(dt)) dt = DType::kF32;
      if (binary_ints_only(op) && is_floating(dt))
        return op_error(op, ins, "needs integer tensors");
      return TensorMeta{dt, shape};
    }
    case OpCategory::kTernary: {
      if (ins[0].dtype != DType::kBool)
        return op_error(op, ins,
                        "condition must be bool, got " + std::string(dtype_name(ins[0].dtype)));
      auto s1 = broadcast_shapes(ins[0].shape, ins[1].shape);
      if (!s1.ok()) return op_error(op, ins, s1.status().message());
      auto s2 = broadcast_shapes(*s1, ins[2].shape);
      if (!s2.ok()) return op_error(op, ins, s2.status().message());
      return TensorMeta{promote_types(ins[1].dtype, ins[2].dtype), *s2};
    }
    case OpCategory::kCast:
      return TensorMeta{attrs.dtype, ins[0].shape};
    case OpCategory::kReduce: {
      auto axes = normalize_axes(attrs.dims, ins[0].rank());
      if (!axes.ok()) return op_error(op, ins, axes.status().message());
      if (*axes != attrs.dims) return op_error(op, ins, "axes must be normalised (sorted, >= 0)");
      if (axes->empty()) return op_error(op, ins, "needs at least one axis");
      DType dt = ins[0].dtype;
      const bool arg = op == OpKind::ArgMax || op == OpKind::ArgMin;
      const bool extremum = arg || op == OpKind::Max || op == OpKind::Min;
      if (dt == DType::kBool && !extremum) dt = DType::kI64;
      if (op == OpKind::Mean && !is_floating(dt))
        return op_error(op, ins, "mean needs a floating-point input");
      if (arg && axes->size() != 1)
        return op_error(op, ins, "needs exactly one axis, got " + dims_str(*axes));
      if (arg) dt = DType::kI64;
      if (extremum) {
        for (int64_t a : *axes)
          if (ins[0].shape[a] == 0)
            return op_error(op, ins, std::string(op_name(op)) + " over an empty axis");
      }
      Shape out;
      for (int i = 0; i < ins[0].rank(); ++i) {
        bool reduced = std::find(axes->begin(), axes->end(), i) != axes->end();
        if (!reduced)
          out.push_back(ins[0].shape[i]);
        else if (attrs.keepdim)
          out.push_back(1);
      }
      return TensorMeta{dt, out};
    }
    case OpCategory::kMovement: {
      const Shape& in = ins[0].shape;
      if (op == OpKind::Reshape) {
        int64_t count = 1;
        for (Dim d : attrs.dims) {
          if (d < 0) return op_error(op, ins, "negative size in shape " + dims_str(attrs.dims));
          if (__builtin_mul_overflow(count, d, &count))
            return op_error(op, ins,
                            "shape " + dims_str(attrs.dims) + " has more than 2^63 elements");
        }
        if (count != numel(in))
          return op_error(op, ins,
                          "cannot reshape to " + dims_str(attrs.dims) + " (" +
                              std::to_string(numel(in)) + " elements vs " +
                              std::to_string(numel(attrs.dims)) + ")");
        return TensorMeta{ins[0].dtype, attrs.dims};
      }
      if (op == OpKind::Permute) {
        std::vector<int64_t> sorted = attrs.dims;
        std::sort(sorted.begin(), sorted.end());
        bool ok = static_cast<int>(sorted.size()) == ins[0].rank();
        for (size_t i = 0; ok && i < sorted.size(); ++i) ok = sorted[i] == static_cast<int64_t>(i);
        if (!ok) return op_error(op, ins, dims_str(attrs.dims) + " is not a permutation");
        Shape out;
        for (int64_t p : attrs.dims) out.push_back(in[p]);
        return TensorMeta{ins[0].dtype, out};
      }
      // Expand: NumPy broadcasting of `in` to exactly attrs.dims.
      for (Dim d : attrs.dims)
        if (d < 0) return op_error(op, ins, "negative size in shape " + dims_str(attrs.dims));
      if (attrs.dims.size() < in.size())
        return op_error(op, ins, "cannot expand to fewer dims " + dims_str(attrs.dims));
      auto b = broadcast_shapes(in, attrs.dims);
      if (!b.ok() || *b != attrs.dims)
        return op_error(op, ins, "cannot expand to " + dims_str(attrs.dims));
      return TensorMeta{ins[0].dtype, attrs.dims};
    }
    case OpCategory::kIndexing:
      return detail::infer_meta_nn(op, ins, attrs);
    case OpCategory::kContraction:
    case OpCategory::kNormalization:
    case OpCategory::kTriangular:
      return detail::infer_meta_nn(op, ins, attrs);
    case OpCategory::kWindow:
      return detail::infer_meta_window(op, ins, attrs);
    case OpCategory::kScatter:  // every op's row names its rule
    case OpCategory::kSpectral:
    case OpCategory::kCompaction:
      break;
  }
  return internal_error(std::string(op_name(op)) + ": no shape rule");
}

}  // namespace kiln
