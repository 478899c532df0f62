/// \file op.h
/// The op registry: OpKind (generated from ops.def), categories, attributes and shape/dtype rules.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kiln/dtype.h"
#include "kiln/status.h"

namespace kiln {

enum class OpKind : uint8_t {
#define KILN_OP(e, name, cat, arity) e,
#include "graph/ops.def"
#undef KILN_OP
};

enum class OpCategory : uint8_t {
  kSource,
  kUnary,
  kBinary,
  kCompare,
  kTernary,
  kCast,
  kReduce,
  kMovement
};

const char* op_name(OpKind op);
OpCategory op_category(OpKind op);
int op_arity(OpKind op);
/// Looks an op up by its printed name; false if there is none.
bool op_from_name(std::string_view name, OpKind* out);

/// Elementwise: unary, binary, compare, ternary, cast.
bool is_elementwise(OpKind op);
bool is_reduce(OpKind op);
bool is_movement(OpKind op);
bool is_source(OpKind op);

/// Typed attributes. Which fields an op reads:
///   Input/Constant: index (position in the input / captured-constant list)
///   Full: scalar (value), dims (shape) and dtype (element type)
///   Cast: dtype.  Sum/Mean/Max: dims (axes, sorted, non-negative), keepdim.
///   Reshape/Expand: dims (target shape).  Permute: dims (permutation).
struct Attrs {
  int64_t index = 0;
  double scalar = 0.0;
  DType dtype = DType::kF32;
  std::vector<int64_t> dims;
  bool keepdim = false;

  bool operator==(const Attrs&) const = default;
  std::string str(OpKind op) const;
};

/// NumPy broadcasting of two shapes.
Expected<Shape> broadcast_shapes(std::span<const Dim> a, std::span<const Dim> b);

/// The shape/dtype rule of `op`: output meta from input metas, or a clear error.
Expected<TensorMeta> infer_meta(OpKind op, std::span<const TensorMeta> inputs, const Attrs& attrs);

/// Normalises reduction axes (negative -> positive, sorted, unique) against `rank`.
Expected<std::vector<int64_t>> normalize_axes(std::span<const int64_t> axes, int rank);

}  // namespace kiln
