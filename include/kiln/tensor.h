/// \file tensor.h
/// kiln::Tensor and the op functions: the C++ front end.
///
/// Outside kiln::compile, ops run eagerly: on CPU tensors through the interpreter, on Vulkan
/// tensors one dispatch per op (the unfused baseline). Inside a traced function they are
/// recorded into a graph instead. Errors (bad shapes, dtypes, devices) throw kiln::Error.
/// Tensors are reference-counted handles; copying one does not copy data. Threads: runtime.md.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <source_location>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/device.h"
#include "kiln/dtype.h"
#include "kiln/scalar.h"
#include "kiln/status.h"
#include "kiln/sym_size.h"

namespace kiln {

struct TensorImpl;
using Loc = std::source_location;

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  /// Copies `data` (row-major, numel(shape) elements) into a new tensor on `device`.
  template <typename T>
  static Tensor from_data(std::span<const T> data, Shape shape, Device device = Device::cpu()) {
    return from_bytes(dtype_of<T>(), std::move(shape), data.data(), data.size() * sizeof(T),
                      device);
  }
  template <typename T>
  static Tensor from_vector(const std::vector<T>& data, Shape shape,
                            Device device = Device::cpu()) {
    return from_data(std::span<const T>(data), std::move(shape), device);
  }
  static Tensor from_bytes(DType dtype, Shape shape, const void* data, size_t bytes,
                           Device device = Device::cpu());
  /// A tensor filled with `value` (host data; uploaded for Vulkan).
  static Tensor full(Shape shape, double value, DType dtype = DType::kF32,
                     Device device = Device::cpu());

  bool defined() const { return impl_ != nullptr; }
  DType dtype() const;
  /// Size of dim `dim` (negative counts from the end). Inside a compiled function a dynamic
  /// dim is a symbolic SymSize; see kiln/sym_size.h.
  SymSize size(int dim, Loc loc = Loc::current()) const;
  /// Every dim as a SymSize (symbolic where dynamic).
  Sizes sizes(Loc loc = Loc::current()) const;
  /// The integer shape. Inside a compiled function this specialises every dynamic dim (each
  /// gets a guard); use sizes() to keep them symbolic.
  const Shape& shape(Loc loc = Loc::current()) const;
  int dim() const;
  /// Element count (specialises dynamic dims, as shape()).
  int64_t numel(Loc loc = Loc::current()) const;
  Device device() const;
  TensorMeta meta() const;
  /// True while this tensor is a placeholder inside a trace (no data).
  bool is_traced() const;
  /// True for a scalar literal (`x * 2.0` makes one): it has no storage of its own and takes
  /// the device of the tensors it meets, so copy_from cannot write it.
  bool is_literal() const;

  /// Copies the data to the host. T must match dtype (float also reads f16).
  /// Inside kiln::compile this is a graph break guarded by the value read.
  template <typename T>
  std::vector<T> to_vector(Loc loc = Loc::current()) const {
    std::vector<T> out(static_cast<size_t>(numel()));
    read_into(dtype_of<T>(), out.data(), out.size() * sizeof(T), loc, "to_vector()");
    return out;
  }
  /// The single element of a one-element tensor, converted to T (a graph break when traced).
  template <typename T>
  T item(Loc loc = Loc::current()) const {
    if constexpr (std::is_same_v<T, bool>) {
      return item_double(loc) != 0.0;
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(item_int(loc));  // exact for int64
    } else {
      return static_cast<T>(item_double(loc));
    }
  }
  /// The single element as a kiln::Scalar (exact for integer dtypes). Inside kiln::compile
  /// this is a graph break, but the value is not guarded: used in tensor ops it is an input
  /// of the next graph (a new value does not recompile); converting it to a C++ number
  /// guards it (kiln/scalar.h).
  Scalar item(Loc loc = Loc::current()) const;
  /// Data-dependent control flow: `if (t)`. A graph break when traced; the value is guarded.
  explicit operator bool() const;
  /// Element values as doubles, whatever the dtype; complex64 gives 2 * numel() values, each
  /// element's real then imaginary part.
  std::vector<double> to_doubles(Loc loc = Loc::current()) const;
  /// A copy on `device` (this tensor if already there).
  Tensor to(Device device) const;
  /// Overwrites the data in place (same dtype and element count); bumps version().
  void copy_from(const void* data, size_t bytes);
  /// Copies the data (row-major, exactly nbytes of the meta) to `data`; the counterpart of
  /// copy_from. A graph break when traced, as to_vector().
  void copy_to(void* data, size_t bytes, Loc loc = Loc::current()) const;
  uint64_t version() const;

  std::string str() const;  // "Tensor(f32[2, 3], vulkan)"
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

 private:
  void read_into(DType as, void* out, size_t bytes, const Loc& loc, const char* what) const;
  double item_double(const Loc& loc) const;
  int64_t item_int(const Loc& loc) const;
  std::shared_ptr<TensorImpl> impl_;
};

// Elementwise (NumPy broadcasting, dtype promotion bool < i32 < i64 < f16 < f32).
/// The elementwise binary ops (add, sub, mul, div, maximum, minimum, pow, mod, fmod,
/// shift_left, shift_right, ...), declared from their table, kiln/elementwise_ops.def, which
/// lists and documents each one.
#define KILN_BINARY(e, name, dtypes, glsl) \
  Tensor name(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
#include "kiln/elementwise_ops.def"
#undef KILN_BINARY
/// The elementwise unary ops (neg, exp, log, sqrt, tanh, relu, gelu, sin, floor, ...), declared
/// from their table, kiln/elementwise_ops.def, which lists and documents each one.
#define KILN_UNARY(e, name, ints, glsl) Tensor name(const Tensor& a, Loc loc = Loc::current());
#include "kiln/elementwise_ops.def"
#undef KILN_UNARY
Tensor eq(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor ne(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor lt(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor le(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor gt(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor ge(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor cast(const Tensor& a, DType dtype, Loc loc = Loc::current());
/// A scalar with the dtype it will be used at (rank 0).
Tensor scalar(const Scalar& value, DType dtype = DType::kF32, Loc loc = Loc::current());
/// `x` with `value` where `mask` (bool, broadcast) is true: where(mask, value, x).
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value,
                   Loc loc = Loc::current());

// Creation. Inside a trace these are graph nodes (Full, Arange) and `device` is ignored: the
// graph runs on the device of its inputs.
Tensor full(Sizes shape, const Scalar& value, DType dtype = DType::kF32,
            Device device = Device::cpu(), Loc loc = Loc::current());
Tensor zeros(Sizes shape, DType dtype = DType::kF32, Device device = Device::cpu(),
             Loc loc = Loc::current());
Tensor ones(Sizes shape, DType dtype = DType::kF32, Device device = Device::cpu(),
            Loc loc = Loc::current());
/// start, start + step, ... below `end` (above it for step < 0): 1-D, ceil((end - start) / step)
/// elements, each computed as start + i * step in double and converted to `dtype`.
Tensor arange(double start, double end, double step = 1, DType dtype = DType::kI64,
              Device device = Device::cpu(), Loc loc = Loc::current());
/// 0, 1, ..., end - 1; `end` may be a symbolic size (the length stays symbolic).
Tensor arange(SymSize end, DType dtype = DType::kI64, Device device = Device::cpu(),
              Loc loc = Loc::current());

// Reductions over `axes` (negative counts from the end).
Tensor sum(const Tensor& a, std::vector<int64_t> axes, bool keepdim = false,
           Loc loc = Loc::current());
Tensor mean(const Tensor& a, std::vector<int64_t> axes, bool keepdim = false,
            Loc loc = Loc::current());
/// Running sum along `axis` (ONNX CumSum): element i sums elements 0..i (exclusive: 0..i-1;
/// reverse: i..n-1, or i+1..n-1 exclusive). Same dtype (bools as i64); integers wrap.
Tensor cumsum(const Tensor& a, int64_t axis, bool exclusive = false, bool reverse = false,
              Loc loc = Loc::current());
/// Product; like sum, bools count as i64 and integers wrap; an empty reduction is 1.
Tensor prod(const Tensor& a, std::vector<int64_t> axes, bool keepdim = false,
            Loc loc = Loc::current());
Tensor max(const Tensor& a, std::vector<int64_t> axes, bool keepdim = false,
           Loc loc = Loc::current());
Tensor min(const Tensor& a, std::vector<int64_t> axes, bool keepdim = false,
           Loc loc = Loc::current());
/// Index (i64) of the first maximum / minimum along `axis`; NaN counts as the extreme.
Tensor argmax(const Tensor& a, int64_t axis, bool keepdim = false, Loc loc = Loc::current());
Tensor argmin(const Tensor& a, int64_t axis, bool keepdim = false, Loc loc = Loc::current());

// Neural-network ops (PyTorch semantics). None has a Vulkan kernel yet: a compiled graph that
// holds one runs on the CPU interpreter (with a warning for Vulkan tensors).
/// numpy.matmul: batch dims broadcast; a 1-D a is a row, a 1-D b a column (the added dim is
/// dropped). trans_a / trans_b use a / b with their last two dims swapped (folded, no copy).
Tensor matmul(const Tensor& a, const Tensor& b, bool trans_a = false, bool trans_b = false,
              Loc loc = Loc::current());
Tensor softmax(const Tensor& a, int64_t axis, Loc loc = Loc::current());
Tensor log_softmax(const Tensor& a, int64_t axis, Loc loc = Loc::current());
/// Normalises over the last `normalized_dims` dims (biased variance); weight and bias have
/// that trailing shape.
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias,
                  int64_t normalized_dims = 1, double eps = 1e-5, Loc loc = Loc::current());
/// NumPy / ONNX einsum: `equation` names each operand's dims with letters ("bij,bjk->bik"),
/// "..." standing for any number of leading broadcast dims; without "->" the output is the
/// ellipsis dims then the letters named once, alphabetically. A letter repeated within one
/// operand takes its diagonal; letters absent from the output are summed. Lowered onto
/// permute, reshape, sum, index_select and one batched matmul per pair of operands (left to
/// right). An invalid equation is an error naming it.
Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands,
              Loc loc = Loc::current());
/// torch.gather: out[..i..] = a[..index[..i..] on `axis`..]; index has a's rank (i32/i64).
/// Indices outside [0, size) are an error.
Tensor gather(const Tensor& a, int64_t axis, const Tensor& index, Loc loc = Loc::current());
/// torch.index_select with a 1-D i32/i64 index.
Tensor index_select(const Tensor& a, int64_t axis, const Tensor& index, Loc loc = Loc::current());
/// Rows of `weight` [V, D] picked by `ids` (any shape): ids.shape + [D].
Tensor embedding(const Tensor& weight, const Tensor& ids, Loc loc = Loc::current());
/// Joins tensors along `axis` (same shape elsewhere; dtypes promote).
Tensor concat(const std::vector<Tensor>& tensors, int64_t axis, Loc loc = Loc::current());
/// a[start:end:step] along `axis` (Python rules: negative bounds count from the end, bounds
/// outside the dim clamp; step > 0).
Tensor slice(const Tensor& a, int64_t axis, int64_t start, int64_t end, int64_t step = 1,
             Loc loc = Loc::current());
/// Upper / lower triangle of the last two dims (elements with col - row >= / <= diagonal).
Tensor triu(const Tensor& a, int64_t diagonal = 0, Loc loc = Loc::current());
Tensor tril(const Tensor& a, int64_t diagonal = 0, Loc loc = Loc::current());
/// ONNX GatherND: `indices` (i32/i64, rank q >= 1, last dim m) picks slices of `data` (rank r):
/// the first `batch_dims` dims of both are batch dims and must be equal; the result has shape
/// indices.shape[:-1] + data.shape[batch_dims + m:]. Negative indices count from the end of
/// their dim; indices outside [-size, size) are an error (the device clamps them).
Tensor gather_nd(const Tensor& data, const Tensor& indices, int64_t batch_dims = 0,
                 Loc loc = Loc::current());
/// How a scattered update combines with the element it lands on: replaces it, adds to it or
/// multiplies it (ONNX's reduction attribute). Floats combine in float, integers wrap around.
enum class ScatterReduction { kNone, kAdd, kMul };
/// ONNX ScatterElements (and Scatter): a copy of `data` where, for every element j of
/// `indices` (i32/i64, data's rank, each dim but `axis` no larger than data's), the element at
/// j with j[axis] replaced by indices[j] combines with updates[j] (updates: indices' shape,
/// data's dtype). Updates apply in row-major order, so with duplicate indices and kNone the
/// last wins. Negative indices count from the end; indices outside [-size, size) are an error
/// (on the device they match no element and are ignored).
Tensor scatter_elements(const Tensor& data, int64_t axis, const Tensor& indices,
                        const Tensor& updates, ScatterReduction reduction = ScatterReduction::kNone,
                        Loc loc = Loc::current());
/// ONNX ScatterND: a copy of `data` where, for every index tuple i of `indices` [..., m]
/// (1 <= m <= data's rank), the slice data[indices[i], ...] combines with updates[i, ...]
/// (updates: indices.shape[:-1] + data.shape[m:], data's dtype), in row-major order of i.
/// Negative indices count from the end; indices outside [-size, size) are an error (on the
/// device they match no element and are ignored).
Tensor scatter_nd(const Tensor& data, const Tensor& indices, const Tensor& updates,
                  ScatterReduction reduction = ScatterReduction::kNone, Loc loc = Loc::current());

// Convolution and pooling (ONNX semantics) over x = [N, C, D1, ..., Dk], k = 1, 2 or 3 spatial
// dims. Per spatial dim: strides (default 1), dilations (default 1); pads holds the k begin
// pads then the k end pads (default 0), as ONNX orders them. An empty vector takes the
// defaults. Output length per dim: floor((D + pad_begin + pad_end - dilation * (kernel - 1) - 1)
// / stride) + 1; ceil_mode rounds up instead, dropping a last window that would start in the
// end padding (so a window may overhang the padded input by up to stride - 1 positions, as in
// ONNX and PyTorch). auto_pad is the caller's: pass the explicit pads.
/// ONNX Conv: weight [C_out, C / groups, K1, ..., Kk], optional bias [C_out] (pass Tensor() for
/// none); the result is [N, C_out, O1, ..., Ok]. Floating point, accumulated in float.
Tensor conv(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
            std::vector<int64_t> strides = {}, std::vector<int64_t> pads = {},
            std::vector<int64_t> dilations = {}, int64_t groups = 1, Loc loc = Loc::current());
/// ONNX ConvTranspose (the gradient of conv with respect to its input): weight
/// [C, C_out / groups, K1, ..., Kk], optional bias [C_out]; the result is [N, C_out, O1, ...,
/// Ok] with O = stride * (D - 1) + output_padding + dilation * (K - 1) + 1 - pad_begin -
/// pad_end, where each input element x[n, ci, i..] adds x * w[ci, co', k..] at output position
/// i * stride - pad_begin + k * dilation. output_padding (default 0) extends the end of each
/// dim; a negative pad extends the output too (those positions hold the bias). Floating point,
/// accumulated in float.
Tensor conv_transpose(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor(),
                      std::vector<int64_t> strides = {}, std::vector<int64_t> pads = {},
                      std::vector<int64_t> dilations = {}, int64_t groups = 1,
                      std::vector<int64_t> output_padding = {}, Loc loc = Loc::current());
/// ONNX MaxPool (the values output): the maximum over each window, padding ignored; NaN
/// propagates. Floating point or integer.
Tensor max_pool(const Tensor& x, std::vector<int64_t> kernel_shape,
                std::vector<int64_t> strides = {}, std::vector<int64_t> pads = {},
                std::vector<int64_t> dilations = {}, bool ceil_mode = false,
                Loc loc = Loc::current());
/// ONNX MaxPool's second output (Indices), i64 of max_pool's shape: the flat index into x (over
/// N, C and the spatial dims) of each window's first maximum in window order (row-major over
/// the window; a NaN counts as the maximum). storage_order 1 flattens the spatial dims
/// column-major (ONNX storage_order), 0 row-major.
Tensor max_pool_indices(const Tensor& x, std::vector<int64_t> kernel_shape,
                        std::vector<int64_t> strides = {}, std::vector<int64_t> pads = {},
                        std::vector<int64_t> dilations = {}, bool ceil_mode = false,
                        int64_t storage_order = 0, Loc loc = Loc::current());
/// ONNX AveragePool: the mean over each window. count_include_pad = false divides by the
/// number of window elements inside the input; true by the number inside the padded input
/// (pad_begin .. D + pad_end; positions past that, which ceil_mode can add, never count).
/// Floating point.
Tensor avg_pool(const Tensor& x, std::vector<int64_t> kernel_shape,
                std::vector<int64_t> strides = {}, std::vector<int64_t> pads = {},
                std::vector<int64_t> dilations = {}, bool ceil_mode = false,
                bool count_include_pad = false, Loc loc = Loc::current());

/// How interpolate() samples (ONNX Resize's mode, coordinate_transformation_mode and
/// nearest_mode; docs/ops.md).
enum class InterpMode { kNearest, kLinear, kCubic };
enum class CoordTransform {
  kHalfPixel,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize
};
enum class NearestRounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };
struct InterpolateOptions {
  InterpMode mode = InterpMode::kNearest;
  CoordTransform coord = CoordTransform::kHalfPixel;
  NearestRounding nearest = NearestRounding::kRoundPreferFloor;
  double cubic_a = -0.75;        // cubic: Keys' coefficient
  bool exclude_outside = false;  // cubic: taps outside the input get weight 0, renormalised
  /// One per axis, the scale the coordinate transform divides by; empty or 0: size ratio.
  std::vector<double> scales;
  /// kTfCropAndResize: every axis' start, then every end (normalised); outside it the
  /// extrapolation value.
  std::vector<double> roi;
  double extrapolation_value = 0.0;
};
/// ONNX Resize: x resampled to `sizes` (one per axis, -1 keeps the axis) by nearest, n-linear
/// or cubic interpolation over the resized axes. Floating point; nearest takes integers. A size
/// may be symbolic (`x.size(2) * 2`): one compile then serves every input size.
Tensor interpolate(const Tensor& x, Sizes sizes, const InterpolateOptions& opt = {},
                   Loc loc = Loc::current());
/// ONNX GridSample / PyTorch grid_sample: x [N, C, H, W] sampled at grid [N, H_out, W_out, 2]
/// ((x, y) in [-1, 1]); mode kNearest, kLinear (bilinear) or kCubic (bicubic); padding 0 zeros,
/// 1 border, 2 reflection.
Tensor grid_sample(const Tensor& x, const Tensor& grid, InterpMode mode = InterpMode::kLinear,
                   int padding = 0, bool align_corners = false, Loc loc = Loc::current());

// Views: never copy inside a compiled graph (folded into index math).
/// One dim of `shape` may be -1 (inferred from the element count).
Tensor reshape(const Tensor& a, Sizes shape, Loc loc = Loc::current());
Tensor permute(const Tensor& a, std::vector<int64_t> perm, Loc loc = Loc::current());
/// A -1 keeps the input's size for that dim.
Tensor expand(const Tensor& a, Sizes shape, Loc loc = Loc::current());
/// Removes dim `axis` if it has size 1 (otherwise returns `a`, as PyTorch). A reshape.
Tensor squeeze(const Tensor& a, int64_t axis, Loc loc = Loc::current());
/// Inserts a size-1 dim at `axis` (in [-rank - 1, rank]). A reshape.
Tensor unsqueeze(const Tensor& a, int64_t axis, Loc loc = Loc::current());

/// An operator operand that remembers where the expression was written. Operators cannot take
/// a defaulted std::source_location, but an implicit conversion can, and its default argument
/// is evaluated at the operator's call site.
struct Operand {
  Operand(const Tensor& t, Loc l = Loc::current()) : tensor(t), loc(l) {}  // NOLINT: implicit
  Tensor tensor;
  Loc loc;
};
/// A C++ number (or a kiln::Scalar) next to a tensor; takes the tensor's dtype (PyTorch's rule
/// for Python numbers). Integers stay exact (int64), also above 2^53.
struct Number {
  template <std::integral T>
  Number(T v, Loc l = Loc::current()) : value(v), loc(l) {}  // NOLINT: implicit
  template <std::floating_point T>
  Number(T v, Loc l = Loc::current()) : value(v), loc(l) {}              // NOLINT: implicit
  Number(const Scalar& v, Loc l = Loc::current()) : value(v), loc(l) {}  // NOLINT: implicit
  /// A size: specialised to its value (as the conversion to int64_t does).
  Number(const SymSize& v, Loc l = Loc::current()) : value(v.value(l)), loc(l) {}  // NOLINT
  Scalar value;
  Loc loc;
};

#define KILN_DECLARE_BINARY_OPERATOR(sym)                 \
  Tensor operator sym(const Tensor& a, const Operand& b); \
  Tensor operator sym(const Tensor& a, Number b);         \
  Tensor operator sym(Number a, const Operand& b);
KILN_DECLARE_BINARY_OPERATOR(+)
KILN_DECLARE_BINARY_OPERATOR(-)
KILN_DECLARE_BINARY_OPERATOR(*)
KILN_DECLARE_BINARY_OPERATOR(/)
KILN_DECLARE_BINARY_OPERATOR(<)
KILN_DECLARE_BINARY_OPERATOR(<=)
KILN_DECLARE_BINARY_OPERATOR(>)
KILN_DECLARE_BINARY_OPERATOR(>=)
#undef KILN_DECLARE_BINARY_OPERATOR
Tensor operator-(const Operand& a);

/// The elements of `x` where `mask` (bool; the two broadcast) is true, in row-major order, as a
/// 1-D tensor: PyTorch's `x[mask]` / `torch.masked_select`. Inside kiln::compile its length is
/// a data-dependent size (no graph break): the kernel compacts on the device and the length is
/// read back once the graph has run; the graph ends there and later ops start a new one with
/// the length as a size symbol (docs/capture.md). Eagerly, the length is read back before it
/// returns.
Tensor masked_select(const Tensor& x, const Tensor& mask, Loc loc = Loc::current());
/// The coordinates of the non-zero elements (NaN counts), row-major: i64[count, rank]
/// (torch.nonzero). A data-dependent length like masked_select's; of a rank-0 tensor it is a
/// host op (a graph break inside kiln::compile).
Tensor nonzero(const Tensor& a, Loc loc = Loc::current());
/// The k largest (or smallest) elements along the last dim, sorted; values and i64 indices.
/// Equal elements keep the lower index first; NaN counts as the largest (first for largest,
/// last for smallest); -0.0 equals 0.0. A kernel op (topk_indices) ranks each row and a gather
/// reads the values, so inside kiln::compile it is no graph break. k outside [0, N] and a
/// rank-0 tensor are invalid_argument errors.
std::pair<Tensor, Tensor> topk(const Tensor& a, int64_t k, bool largest = true,
                               Loc loc = Loc::current());
/// The determinants of the [M, M] matrices of `a`'s last two dims (f32 or f16): [...] of a's
/// dtype (torch.linalg.det), by LU with partial pivoting. A kernel op (det) on Vulkan, one
/// invocation per matrix in f32 (M up to 32; larger runs on the interpreter with a warning);
/// the interpreter computes in double. M is fixed per compile.
Tensor det(const Tensor& a, Loc loc = Loc::current());

/// Options of non_max_suppression (ONNX NonMaxSuppression's inputs and attribute).
struct NmsOptions {
  int64_t max_per_class = 0;              ///< the most boxes kept per (batch, class); 0 keeps none
  double iou_threshold = 0.0;             ///< a box overlapping a kept one by IoU > this is dropped
  std::optional<double> score_threshold;  ///< only boxes scoring above it are kept
  bool center_boxes = false;  ///< boxes are [x center, y center, w, h], not [y1, x1, y2, x2]
};
/// Greedy non-maximum suppression per batch and class (ONNX NonMaxSuppression): boxes
/// [B, N, 4], scores [B, C, N] (floating point); i64 [K, 3] rows (batch, class, box), by batch
/// and class, each class's boxes by descending score (equal scores by position). Boxes with a
/// NaN score are never kept; boxes that do not intersect never suppress each other; IoU > t is
/// tested in f32 as intersection > t * union. Device ops throughout (topk_indices, the
/// nms_select kernel, nonzero, gather_nd): K is a data-dependent size, so inside kiln::compile the
/// graph ends at the result (as masked_select's). Every size may be symbolic, N a data-dependent
/// one.
Tensor non_max_suppression(const Tensor& boxes, const Tensor& scores, const NmsOptions& options,
                           Loc loc = Loc::current());

/// The results of unique (ONNX Unique's four outputs; numpy.unique's).
struct UniqueResult {
  Tensor values;   ///< the unique elements (or slices along the axis)
  Tensor indices;  ///< i64 [K]: where each first occurs in x (along the axis)
  Tensor inverse;  ///< i64 [n]: for each element (slice) of x, its place in `values`
  Tensor counts;   ///< i64 [K]: how often each occurs
};
/// The unique elements of `x` flattened, or its unique slices along `axis` (ONNX Unique,
/// numpy.unique with return_index, return_inverse and return_counts): sorted ascending
/// (slices lexicographically) when `sorted`, else in the order they first occur. NaN sorts
/// after every number and equals NaN; -0.0 == 0.0. Device ops throughout (the sort_slices
/// kernel op, then gathers, scatters, a cumsum and masked_select): K is a data-dependent size,
/// so inside kiln::compile a graph ends at each result (as masked_select's). x: f32, f16, i32,
/// i64 or bool.
UniqueResult unique(const Tensor& x, std::optional<int64_t> axis = std::nullopt, bool sorted = true,
                    Loc loc = Loc::current());

// --- Ops without a device lowering, and host interaction -------------------------------------
// Inside kiln::compile each of these is a graph break: the graph so far is compiled and run,
// the op runs on the CPU interpreter, and capture resumes in a new graph after it.

/// Prints `label: values` to stdout; inside a compiled function it prints on every call.
void print(const std::string& label, const Tensor& t, Loc loc = Loc::current());

/// A function from outside Kiln (another library) run on CPU tensors. Inside kiln::compile it
/// is a graph break and is called again on every replay.
using HostFunction = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
std::vector<Tensor> call_host(const std::string& name, const HostFunction& fn,
                              const std::vector<Tensor>& args, Loc loc = Loc::current());

}  // namespace kiln
