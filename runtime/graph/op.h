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
#define KILN_OP(e, name, cat, arity, attrs) e,
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
  kMovement,
  kContraction,    // MatMul
  kNormalization,  // Softmax, LogSoftmax, LayerNorm
  kIndexing,       // Gather, IndexSelect, Concat, Slice (not folded as views by codegen)
  kTriangular,     // Triu, Tril: elementwise, masked by the element's (row, column)
  kWindow,         // Conv, ConvTranspose, MaxPool, AvgPool, Resize, GridSample: a window per
                   // output element
  kScatter,        // ScatterElements, ScatterND: data with updates written at indices
  kSpectral,       // Fft, Ifft, Rfft, Irfft over the last dim; Real, Imag, ComplexAbs,
                   // ViewAsReal, ViewAsComplex (complex64 <-> f32)
  kCompaction      // MaskedSelect, NonZero: the selected elements (or their coordinates), in
                   // order; the result's length is an unbacked symbol (known once the op ran)
};

const char* op_name(OpKind op);
OpCategory op_category(OpKind op);
int op_arity(OpKind op);
/// The attributes `op` reads, as its ops.def row lists them (the spec Attrs::str prints by).
const char* op_attrs(OpKind op);
/// Looks an op up by its printed name; false if there is none.
bool op_from_name(std::string_view name, OpKind* out);

/// Elementwise: unary, binary, compare, ternary, cast.
bool is_elementwise(OpKind op);
/// A unary op that keeps an integer input's dtype (KeepsInts in kiln/elementwise_ops.def);
/// false for every other op.
bool unary_keeps_ints(OpKind op);
/// A binary op that computes integers in f32 (ToFloat: div) / takes integer tensors only
/// (IntsOnly: the shifts); false for every other op.
bool binary_to_float(OpKind op);
bool binary_ints_only(OpKind op);
bool is_reduce(OpKind op);
/// Ops that read their inputs at computed indices (slice, index_select, gather, concat,
/// triu/tril, arange): codegen folds them into consumers like elementwise ops.
bool is_index_op(OpKind op);
bool is_movement(OpKind op);
bool is_source(OpKind op);
/// An op described whole by its ops.def row (KILN_KERNEL_OP): its shape rule, interpreter,
/// kernel builder and ONNX handlers are found by the row's stem, and it gets its own kernel.
bool is_kernel_op(OpKind op);

/// Typed attributes. Which fields an op reads:
///   Input/Constant: index (position in the input / captured-constant list)
///   Full: scalar (value), dims (shape) and dtype (element type)
///   Arange: range = {start, end, step} (step != 0) and dtype.
///   Cast: dtype.  Sum/Mean/Max/Min: dims (axes, sorted, non-negative), keepdim.
///   ArgMax/ArgMin: dims (exactly one axis), keepdim; the output is i64.
///   Reshape/Expand: dims (target shape).  Permute: dims (permutation).
///   MatMul: trans_a / trans_b swap the last two dims of a / b before the product (ignored for
///     1-D operands), so a transpose folds into the op instead of being a Permute.
///   Softmax/LogSoftmax: axis (negative counts from the end).
///   CumSum: axis; index bit 0 = exclusive, bit 1 = reverse (kCumSumExclusive, kCumSumReverse).
///   LayerNorm: index = k, the number of trailing dims normalised; scalar = epsilon.
///   Gather/IndexSelect/Concat: axis.  Slice: axis and dims = {start, end, step} as written by
///     the caller (Python rules: negative counts from the end, out-of-range clamps; step > 0).
///   Triu/Tril: index = diagonal offset (0 = main diagonal, > 0 above, < 0 below).
///   GatherND: index = batch_dims.
///   Conv/MaxPool/AvgPool/MaxPoolIndices: window (below); Conv reads groups, the pools kernel,
///     ceil_mode, (AvgPool) count_include_pad and (MaxPoolIndices) storage_order.
///   Resize: dims = the output size of every axis (-1: the input's size), resample (below).
///   GridSample: resample's mode, padding and align_corners.
/// Resample modes (Attrs::Resample::mode).
inline constexpr int64_t kResampleNearest = 0;
inline constexpr int64_t kResampleLinear = 1;
inline constexpr int64_t kResampleCubic = 2;
/// Coordinate transformations of Resize (Attrs::Resample::coord), ONNX's names.
enum class ResizeCoord : int64_t {
  kHalfPixel,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize
};
/// Rounding of Resize's nearest mode (Attrs::Resample::nearest).
enum class NearestMode : int64_t { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };
///   ConvTranspose: window's strides, pads, dilations, groups and output_padding (the window
///     is the weight's; pads trim the full transposed output, output_padding extends its end).
///   ScatterElements: axis (normalised) and index = reduction; ScatterND: index = reduction
///     (kScatterNone, kScatterAdd, kScatterMul).
///   Fft/Ifft/Rfft/Irfft: over the last dim; dims = {n}, the transform length (-1: the
///     input's last dim, or 2 * (m - 1) for Irfft); index = norm (kFftNormBackward, ...).
///   MaskedSelect: inputs data and a bool mask of data's shape; index = the size symbol of the
///     result (unbacked: ShapeEnv::create_unbacked_symbol; -1 in an instantiated graph), dims =
///     {the result's size in the node's concrete meta} (the hint; Graph::instantiate writes the
///     bound value).
///   NonZero: the i64 coordinates [length, rank] of the input's non-zero elements (rank >= 1);
///     index and dims as MaskedSelect's.
/// CumSum's flags in Attrs::index.
inline constexpr int64_t kCumSumExclusive = 1;
inline constexpr int64_t kCumSumReverse = 2;
/// Scatter reductions in Attrs::index: how an update combines with the element it lands on.
inline constexpr int64_t kScatterNone = 0;
inline constexpr int64_t kScatterAdd = 1;
inline constexpr int64_t kScatterMul = 2;
/// FFT normalisations in Attrs::index (torch.fft's norm): which direction is scaled by 1/n
/// (backward: the inverse; forward: the forward one; ortho: both by 1/sqrt(n)).
inline constexpr int64_t kFftNormBackward = 0;
inline constexpr int64_t kFftNormForward = 1;
inline constexpr int64_t kFftNormOrtho = 2;

struct Attrs {
  // The fields are the rows of runtime/graph/attrs.def.
#define KILN_ATTR(type, name, init) type name = init;
#include "graph/attrs.def"
#undef KILN_ATTR
  struct Window {
#define KILN_WINDOW_ATTR(type, name, init) type name = init;
#include "graph/attrs.def"
#undef KILN_WINDOW_ATTR
    bool operator==(const Window&) const = default;
  } window;
  struct Resample {
#define KILN_RESAMPLE_ATTR(type, name, init) type name = init;
#include "graph/attrs.def"
#undef KILN_RESAMPLE_ATTR
    bool operator==(const Resample&) const = default;
  } resample;

  bool operator==(const Attrs&) const = default;
  std::string str(OpKind op) const;
};

/// NumPy broadcasting of two shapes.
Expected<Shape> broadcast_shapes(std::span<const Dim> a, std::span<const Dim> b);

/// The shape/dtype rule of `op`: output meta from input metas, or a clear error.
Expected<TensorMeta> infer_meta(OpKind op, std::span<const TensorMeta> inputs, const Attrs& attrs);

/// Resolves a Python-style slice [start:end:step] (step > 0) on a dim of `size`: the first
/// index and the number of elements taken.
struct SliceRange {
  int64_t start = 0;
  int64_t length = 0;
};
SliceRange resolve_slice(int64_t start, int64_t end, int64_t step, int64_t size);

/// Normalises one axis (negative counts from the end) against `rank`, or an error naming it.
Expected<int64_t> normalize_axis(int64_t axis, int rank);

namespace detail {
/// "op(f32[2, 3], ...): what" as an invalid_argument Status.
Status op_error(OpKind op, std::span<const TensorMeta> ins, const std::string& what);
/// Shape rules of the Contraction, Normalization, Indexing and Triangular categories and of
/// Arange (op_rules_nn.cpp).
Expected<TensorMeta> infer_meta_nn(OpKind op, std::span<const TensorMeta> ins, const Attrs& attrs);
/// Attrs::str of Resize and GridSample (op_rules_resize.cpp).
std::string resample_str(OpKind op, const std::vector<int64_t>& dims, const Attrs::Resample& r);
/// Resize's shape rule (op_rules_resize.cpp).
Expected<TensorMeta> infer_meta_resample(OpKind op, std::span<const TensorMeta> ins,
                                         const Attrs& attrs);
/// Shape rules of the Window category and GatherND (op_rules_window.cpp).
Expected<TensorMeta> infer_meta_window(OpKind op, std::span<const TensorMeta> ins,
                                       const Attrs& attrs);
/// The transform length of an FFT node whose input's last dim is `m` (resolves n = -1).
int64_t fft_length(OpKind op, int64_t m, const Attrs& attrs);
}  // namespace detail

/// Output length of one spatial dim of a Conv / MaxPool / AvgPool window:
/// floor((in + pad_begin + pad_end - dilation * (kernel - 1) - 1) / stride) + 1, or with
/// ceil_mode the ceiling, less a last window that would start in the end padding.
int64_t window_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin,
                           int64_t pad_end, int64_t dilation, bool ceil_mode);

/// Output length of one spatial dim of a ConvTranspose (ONNX):
/// stride * (in - 1) + output_padding + dilation * (kernel - 1) + 1 - pad_begin - pad_end.
int64_t conv_transpose_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin,
                                   int64_t pad_end, int64_t dilation, int64_t output_padding);

/// Normalises reduction axes (negative -> positive, sorted, unique) against `rank`.
Expected<std::vector<int64_t>> normalize_axes(std::span<const int64_t> axes, int rank);

}  // namespace kiln
