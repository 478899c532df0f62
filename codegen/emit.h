/// \file emit.h
/// Expression emission: turns the fused producer tree of a kernel root into GLSL statements.
/// Views (reshape, permute, expand, broadcasting) become index arithmetic; nothing is copied.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "codegen/fusion.h"
#include "graph/graph.h"

namespace kiln {

/// One index of a tensor at the current point of a kernel: a GLSL uint expression, and how it
/// relates to the output's innermost index in vec4 mode (1: equal to it, 0: independent of it,
/// -1: unknown). The classes decide whether loads can be vec4.
struct IndexExpr {
  std::string expr;
  int lane = 0;
};
using Index = std::vector<IndexExpr>;

/// Symbolic shape helpers (codegen's view of graph sizes).
SymInt sym_numel(const SymShape& shape);
SymShape sym_contiguous_strides(const SymShape& shape);
inline bool is_const(const SymInt& v, int64_t c) {
  return v.is_constant() && v.constant_value() == c;
}
/// What codegen may assume about size symbols: every symbol is at least 2 (sizes 0 and 1 are
/// specialised to constants).
const SymFacts* size_facts();

/// How codegen stores and computes what the device lacks, set for the kernels of one
/// plan_kernels call (per thread) from the device's features; every function below that names a
/// type, a load or a store follows it.
///   int64_pairs: without shaderInt64, int64 is a uvec2 of its 32-bit words (low, high),
///     computed by the functions of shaders/common/kiln_int64_pairs.glsl.
///   bool_words: without 8-bit storage, bool buffers are uint arrays, four elements (bytes) a
///     word; loads extract the byte, stores set it with atomicAnd/atomicOr (kiln_store_bool).
///   half_words: without 16-bit storage, f16 buffers are uint arrays, two halves a word;
///     loads unpack the half, stores round to half (kiln_f16) and set it (kiln_store_f16).
bool int64_pairs();
bool bool_words();
bool half_words();
class StorageModeScope {
 public:
  StorageModeScope(bool int64_pairs, bool bool_words, bool half_words);
  ~StorageModeScope();
  StorageModeScope(const StorageModeScope&) = delete;
  StorageModeScope& operator=(const StorageModeScope&) = delete;

 private:
  bool previous_pairs_, previous_words_, previous_halves_;
};

const char* glsl_compute_type(DType dtype);  // float, int, int64_t (or uvec2), bool (f16: float)
const char* glsl_storage_type(DType dtype);  // float, float16_t, int, int64_t (or uvec2), uint8_t
/// Converts a compute-typed expression between dtypes, encoding it into `to` as the interpreter
/// stores a value of that dtype: into f16 it is rounded to the nearest half (overflowing to inf).
std::string glsl_convert(const std::string& expr, DType from, DType to);
/// Converts into `to`'s compute type only (into f16: a float, not rounded), as the interpreter
/// converts an op's operands before computing.
std::string glsl_compute_convert(const std::string& expr, DType from, DType to);
std::string glsl_literal(double value, DType dtype);
/// The value of a Full node: exact for integer values (Attrs::scalar_is_int).
std::string glsl_literal(const Attrs& full, DType dtype);
/// The statement (without ';') storing bool `value` at element `index` of binding 0.
std::string glsl_store_bool(const std::string& index, const std::string& value);
/// The statement (without ';') storing `value` (in `dtype`'s compute type; f16: a float) at
/// element `index` of binding 0, the kernel's output, of dtype `dtype`. In word modes the store
/// is two atomics on the element's word (clear its bits, set the new ones): correct while each
/// element has one writer, as in every kernel (scatters are written as gathers).
std::string glsl_store(const std::string& index, const std::string& value, DType dtype);
/// An exact integer literal of an integer dtype (int64 as a pair under int64_pairs()).
std::string glsl_int_literal(int64_t value, DType dtype);
/// A uint expression as a value of integer dtype `dtype` (int64: zero-extended).
std::string glsl_from_uint(const std::string& expr, DType dtype);
/// `a op b` on two values of dtype `dtype`, op one of + - * < <= > >= == !=: GLSL's operator,
/// or the kiln_i64_* function under int64_pairs().
std::string glsl_binary(const std::string& op, const std::string& a, const std::string& b,
                        DType dtype);

class Emitter {
 public:
  /// `vec4`: emit four consecutive innermost elements per invocation (all values f32).
  Emitter(const Graph& graph, const FusionDecision& fusion, bool vec4);

  /// GLSL expression of `node` at `index` (statements it needs are appended to body()).
  std::string value(NodeId node, const Index& index);
  /// Index of `node`'s input shape read by broadcasting to `out_shape` at `index` (a dim that is
  /// the constant 1 broadcasts; symbols are never 1).
  static Index broadcast_index(const Index& index, const SymShape& out_shape,
                               const SymShape& in_shape);
  /// Row-major linear offset (GLSL uint expression) of `index` in a contiguous `shape`.
  std::string linear_index(const SymShape& shape, const Index& index);
  /// Declares `uint` index variables for a row-major decomposition of `linear` over `shape`.
  Index decompose(const std::string& linear, const SymShape& shape, const std::string& prefix,
                  int last_lane);

  /// A size as a GLSL uint expression: a literal ("64u") when constant, else an expression over
  /// size slots (allocated on first use; see Kernel::size_slots).
  std::string size(const SymInt& v);
  /// `e / d` and `e % d` for a uint index `e` (GLSL, parenthesised): a constant `d` as GLSL's
  /// operators (the shader compiler turns them into multiplies), a symbolic one through
  /// kiln_udiv / kiln_umod (shaders/common/kiln_udiv.glsl) with its reciprocal in a size slot
  /// (while the kernel has fewer than half of kMaxSizeSlots): CPUs have no vector integer
  /// division, so a CPU driver divides lane by lane otherwise.
  std::string udiv(const std::string& e, const SymInt& d);
  std::string umod(const std::string& e, const SymInt& d);
  /// A new size slot holding `e` (never shared with another size); returns its index.
  int add_slot(const SymExpr& e) {
    push_.push_back(e);
    reserved_.resize(push_.size(), false);
    reserved_.back() = true;
    return static_cast<int>(push_.size()) - 1;
  }
  /// The size slots used so far, in slot order.
  const std::vector<SymExpr>& size_slots() const { return push_; }
  /// The sizes buffer's binding as declared by declarations() (-1 before, or without slots).
  int sizes_binding() const { return sizes_binding_; }

  /// Binding number of a stored node's buffer (assigned on first use; binding 0 is reserved
  /// for the kernel's output by calling bind_output first).
  int binding(NodeId node);
  void bind_output(NodeId node) { binding(node); }
  /// The output is stored as vec4 (binding 0 declared as a vec4 array).
  void store_output_vec4() { vec_use_[0] = true; }
  /// Declares binding `b` as a vec4 array (`b<b>v.data`) and/or a scalar one (`b<b>.data`), for
  /// kernels that address a stored buffer directly (codegen/lower_matmul_rowblock.cpp).
  void use_binding(int b, bool vec4, bool scalar) {
    vec_use_[static_cast<size_t>(b)] = vec_use_[static_cast<size_t>(b)] || vec4;
    scalar_use_[static_cast<size_t>(b)] = scalar_use_[static_cast<size_t>(b)] || scalar;
  }
  /// Buffer declarations for every binding used (readonly except binding 0), then the
  /// push-constant block when a size is symbolic. Call after every size() of the kernel.
  std::string declarations() const;
  /// vec4 mode: read bindings that are only ever loaded as whole vec4s, whose innermost size is
  /// a constant multiple of 4 and whose vec4 count (at the hints) is at most `max_texels`,
  /// through rgba32f storage texel buffers (`imageLoad`), which lavapipe fetches far cheaper
  /// than storage buffers. Loads go through `kiln_load<b>(i)` macros, defined by
  /// declarations() once every use of the binding is known.
  /// Inputs read as whole vec4s become texel buffers when they fit `max_texels`; one of
  /// symbolic size only when `symbolic_fits` (the texel limit covers any storage buffer).
  void set_texel_loads(uint64_t max_texels, bool symbolic_fits) {
    max_texels_ = max_texels;
    symbolic_texels_ = symbolic_fits;
  }
  /// The bindings declarations() declares as texel buffers (Kernel::texel_bindings).
  std::vector<uint32_t> texel_bindings() const { return bindings_of_kind(TexelKind::kRgba32f); }
  /// Scalar f32 loads of read bindings through r32f storage texel buffers (`imageLoad(..).x`):
  /// lavapipe gathers those, where a storage-buffer load of a lane-varying address is a loop
  /// over the lanes. Only for bindings read by load() alone (never as vec4s, never addressed
  /// directly) whose element count (at the hints) is within `max_texels` less a margin for the
  /// buffer's rounding; symbolic sizes only where `symbolic_fits` (every storage buffer fits).
  void set_scalar_texel_loads(uint64_t max_texels, bool symbolic_fits) {
    scalar_max_texels_ = max_texels;
    scalar_symbolic_texels_ = symbolic_fits;
  }
  /// `n` bindings that the lowerer declares as texel buffers itself (the row-block product's
  /// operands): they count against the four texel bindings a kernel may have.
  void reserve_texel_bindings(int n) { reserved_texels_ = n; }
  /// The bindings declared as r32f texel buffers (call after declarations()).
  std::vector<uint32_t> texel_r32f_bindings() const { return bindings_of_kind(TexelKind::kR32f); }

  /// The node being computed (not loaded) by this kernel.
  void set_root(NodeId root) { root_ = root; }
  /// `node` reads as the GLSL expression `expr` (a matmul's accumulator in its epilogue, a
  /// row norm's normalised value); several nodes may be overridden at once.
  void set_override(NodeId node, std::string expr) { overrides_[node] = std::move(expr); }
  void clear_overrides() { overrides_.clear(); }
  /// The output's index and its linear form in an elementwise kernel: loads of same-shaped
  /// buffers at that index read element `linear` directly (vec4 mode: vec4 group `group`).
  void set_root_index(Index index, std::string linear, std::string group = "g") {
    root_index_ = std::move(index);
    root_linear_ = std::move(linear);
    root_group_ = std::move(group);
  }
  std::string take_body() { return std::move(body_); }
  void add_statement(const std::string& s) { body_ += "  " + s + "\n"; }
  void reset_scope() { memo_.clear(); }
  bool failed() const { return failed_; }  // vec4 mode hit something it cannot vectorise
  const std::vector<NodeId>& bindings() const { return bindings_; }
  const std::vector<NodeId>& fused_nodes() const { return fused_; }
  bool needs_int64() const { return int64_; }  // the int64 extension (not int64 pairs)
  /// Calls of int64 pair helpers that loop over 64 bits (remainder, power) in the code so far.
  uint32_t helper_loops() const { return helper_loops_; }
  bool needs_16bit() const { return f16_; }
  bool needs_8bit() const { return i8_; }
  std::string vtype(DType dtype) const;  // compute type, or vec4 in vec4 mode

 private:
  std::string load(NodeId node, const Index& index);
  /// Whether binding b may be an rgba32f / an r32f texel buffer, and what each binding is.
  bool texel_binding(size_t b) const;
  bool scalar_texel_binding(size_t b) const;
  enum class TexelKind { kNone, kRgba32f, kR32f };
  std::vector<TexelKind> texel_kinds() const;
  std::vector<uint32_t> bindings_of_kind(TexelKind kind) const;
  std::string index_op_value(const Node& n, const Index& index);
  /// vec4 mode: a concat along the last dim whose parts are multiples of 4 wide.
  std::string concat_vec4(const Node& n, const Index& index);
  std::string clamped_index(NodeId index_node, const Index& at, const SymInt& size);
  std::string slot(const SymExpr& e);
  std::string op_expr(const Node& n, const std::vector<std::string>& args,
                      const std::vector<DType>& arg_types);
  /// op_expr of an op whose operands are int64 pairs (int64_pairs()).
  std::string int64_pair_expr(const Node& n, const std::vector<std::string>& args,
                              const std::vector<DType>& arg_types, DType operand);
  /// A float add, sub, mul or div with a literal +0.0 operand as a kiln_*_zero helper
  /// (shaders/common/kiln_common.glsl: drivers may fold such arithmetic by the constant);
  /// empty for every other op.
  std::string zero_operand_expr(const Node& n, const std::vector<std::string>& args,
                                const std::vector<DType>& arg_types);
  /// `id` is the constant +0.0 (a Full zero, or a triu / tril that keeps no element, through
  /// views and casts, not loaded).
  bool is_literal_pos_zero(NodeId id) const;
  /// A matmul whose inner dimension is the constant 0 (its result is +0 everywhere).
  bool empty_inner_dim(const Node& matmul) const;
  Index view_input_index(const Node& n, const Index& index);
  /// Reshape index through groups of dims with equal size products; false if there are none.
  bool grouped_reshape_index(const SymShape& in_shape, const SymShape& out_shape,
                             const Index& index, Index& in);
  std::string fresh(const std::string& prefix);
  void note_dtype(DType d);

  const Graph& graph_;
  const FusionDecision& fusion_;
  bool vec4_;
  uint64_t max_texels_ = 0;  // > 0: texel loads (set_texel_loads)
  bool symbolic_texels_ = false;
  uint64_t scalar_max_texels_ = 0;
  bool scalar_symbolic_texels_ = false;
  int reserved_texels_ = 0;      // texel bindings declared outside declarations()
  std::vector<bool> sload_use_;  // per binding: read through kiln_sload<b> (scalar f32 loads)
  bool failed_ = false;
  bool int64_ = false, f16_ = false, i8_ = false;
  bool pairs_ = false;  // kiln_int64_pairs.glsl defined in declarations()
  uint32_t helper_loops_ = 0;
  bool bool_words_ = false;  // a bool binding stored as words: kiln_store_bool defined
  bool half_words_ = false;  // an f16 binding stored as words: kiln_store_f16 defined
  bool pow_ = false;  // kiln_pow / kiln_ipow defined in declarations()
  bool div_ = false;                 // kiln_div defined in declarations()
  bool mod64_ = false;               // int64 kiln_mod / kiln_fmod defined in declarations()
  std::string body_;
  std::map<std::string, std::string> memo_;
  std::vector<NodeId> bindings_;
  std::vector<bool> vec_use_, scalar_use_;  // per binding
  std::vector<NodeId> fused_;
  int counter_ = 0;
  std::vector<SymExpr> push_;
  NodeId root_ = -1;
  mutable int sizes_binding_ = -1;
  std::vector<bool> reserved_;  // push slots from add_slot: never shared by slot()
  std::map<NodeId, std::string> overrides_;
  Index root_index_;
  std::string root_linear_, root_group_;
};

}  // namespace kiln
