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

const char* glsl_compute_type(DType dtype);  // float, int, int64_t, bool (f16 computes in float)
const char* glsl_storage_type(DType dtype);  // float, float16_t, int, int64_t, uint8_t
/// Converts a compute-typed expression between dtypes.
std::string glsl_convert(const std::string& expr, DType from, DType to);
std::string glsl_literal(double value, DType dtype);

class Emitter {
 public:
  /// `vec4`: emit four consecutive innermost elements per invocation (all values f32).
  Emitter(const Graph& graph, const FusionDecision& fusion, bool vec4);

  /// GLSL expression of `node` at `index` (statements it needs are appended to body()).
  std::string value(NodeId node, const Index& index);
  /// Index of `node`'s input shape read by broadcasting to `out_shape` at `index`.
  static Index broadcast_index(const Index& index, const Shape& out_shape, const Shape& in_shape);
  /// Row-major linear offset (GLSL uint expression) of `index` in a contiguous `shape`.
  static std::string linear_index(const Shape& shape, const Index& index);
  /// Declares `uint` index variables for a row-major decomposition of `linear` over `shape`.
  Index decompose(const std::string& linear, const Shape& shape, const std::string& prefix,
                  int last_lane);

  /// Binding number of a stored node's buffer (assigned on first use; binding 0 is reserved
  /// for the kernel's output by calling bind_output first).
  int binding(NodeId node);
  void bind_output(NodeId node) { binding(node); }
  /// The output is stored as vec4 (binding 0 declared as a vec4 array).
  void store_output_vec4() { vec_use_[0] = true; }
  /// Buffer declarations for every binding used (readonly except binding 0).
  std::string declarations() const;

  /// The node being computed (not loaded) by this kernel.
  void set_root(NodeId root) { root_ = root; }
  /// The output's index and its linear form in an elementwise kernel: loads of same-shaped
  /// buffers at that index read element `linear` directly (vec4 mode: group `g`).
  void set_root_index(Index index, std::string linear) {
    root_index_ = std::move(index);
    root_linear_ = std::move(linear);
  }
  std::string take_body() { return std::move(body_); }
  void add_statement(const std::string& s) { body_ += "  " + s + "\n"; }
  void reset_scope() { memo_.clear(); }
  bool failed() const { return failed_; }  // vec4 mode hit something it cannot vectorise
  const std::vector<NodeId>& bindings() const { return bindings_; }
  const std::vector<NodeId>& fused_nodes() const { return fused_; }
  bool needs_int64() const { return int64_; }
  bool needs_16bit() const { return f16_; }
  bool needs_8bit() const { return i8_; }
  std::string vtype(DType dtype) const;  // compute type, or vec4 in vec4 mode

 private:
  std::string load(NodeId node, const Index& index);
  std::string index_op_value(const Node& n, const Index& index);
  std::string clamped_index(NodeId index_node, const Index& at, Dim size);
  std::string op_expr(const Node& n, const std::vector<std::string>& args,
                      const std::vector<DType>& arg_types);
  Index view_input_index(const Node& n, const Index& index);
  std::string fresh(const std::string& prefix);
  void note_dtype(DType d);

  const Graph& graph_;
  const FusionDecision& fusion_;
  bool vec4_;
  bool failed_ = false;
  bool int64_ = false, f16_ = false, i8_ = false;
  std::string body_;
  std::map<std::string, std::string> memo_;
  std::vector<NodeId> bindings_;
  std::vector<bool> vec_use_, scalar_use_;  // per binding
  std::vector<NodeId> fused_;
  int counter_ = 0;
  NodeId root_ = -1;
  Index root_index_;
  std::string root_linear_;
};

}  // namespace kiln
