// The ONNX importer's internals: the imported graph, values during a run, and the per-op
// handlers that map ONNX nodes onto the Tensor API.
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/onnx.h"

namespace kiln::onnx {

/// Decodes a TensorProto (raw_data or the typed fields) into a tensor on `device`; `what`
/// names it in errors.
Expected<ProtoTensor> decode_tensor(const ::onnx::TensorProto& proto, Device device,
                                    const std::string& what);
/// The value of a Constant node (decoded once, at import).
Expected<Tensor> decode_constant_node(const ::onnx::NodeProto& node, Device device);
/// Reads a ValueInfoProto's declared type and shape.
Expected<ValueInfo> decode_value_info(const ::onnx::ValueInfoProto& info);

/// One value while the graph runs. Small integer and bool tensors whose elements are known at
/// trace time (shapes, constants, shape arithmetic, masks of shape values) carry them as
/// `shape`: SymSizes that stay symbolic for dynamic dims (runtime/onnx/shape_fold.cpp). The
/// tensor is built from them only when an op needs it.
struct Val {
  Tensor t;
  std::optional<std::vector<SymSize>> shape;  // known elements, row-major
  Shape dims;                                 // their tensor's dims (with `shape` set)
  DType dtype = DType::kI64;                  // of `shape` values
  bool scalar() const { return dims.empty(); }
  size_t rank() const { return dims.size(); }
  // A Cast of known integers to a float type: `t` holds the floats, these the integers (Range
  // reads them, so torch.arange(S, dtype=float) keeps a symbolic length).
  std::optional<std::vector<SymSize>> cast_ints;
  // A value of the front end that is not a numeric tensor (ops_sequence.cpp, ops_string.cpp):
  // a sequence or optional holds its elements here (each a Val, traced as usual), a string
  // tensor (host only) its strings in `host`.
  Value::Kind kind = Value::Kind::kTensor;
  std::shared_ptr<const std::vector<Val>> items;
  std::shared_ptr<const Value> host;
  bool defined() const {
    return t.defined() || shape.has_value() || kind != Value::Kind::kTensor;
  }
};

class ModelImpl;

/// Known values (Val::shape) hold at most this many elements: constants up to this size fold,
/// and a folded result larger than this becomes a tensor.
constexpr int64_t kMaxKnownElements = 64;

/// What a handler sees of one node.
class NodeCtx {
 public:
  NodeCtx(ModelImpl& model, const ::onnx::NodeProto& node, std::vector<Val*> in,
          std::vector<Val>& out)
      : model_(model), node_(node), in_(std::move(in)), out_(out) {}

  const ::onnx::NodeProto& node() const { return node_; }
  ModelImpl& model() const { return model_; }
  /// Every value defined where this node runs (what a subgraph of it may refer to).
  const std::unordered_map<std::string, Val>* scope = nullptr;
  int64_t opset() const;
  size_t inputs() const { return in_.size(); }
  bool has(size_t i) const { return i < in_.size() && in_[i] && in_[i]->defined(); }
  size_t outputs() const { return out_.size(); }
  bool wants(size_t i) const;  // output i exists and has a name
  Val& val(size_t i);
  /// Input i as a tensor (built from known elements if needed).
  Tensor in(size_t i);
  /// Known integer elements of input i: folded shape values, a constant's data, or (for a
  /// computed tensor) a host read, which is a graph break guarded by the value.
  std::vector<SymSize> ints(size_t i);
  /// Input i's elements as plain integers / doubles (specialising symbolic ones).
  std::vector<int64_t> int_values(size_t i);
  std::vector<double> doubles(size_t i);
  /// The single element of input i (an error unless it has exactly one).
  int64_t scalar_int(size_t i);
  double scalar_double(size_t i);

  bool has_attr(const std::string& name) const;
  int64_t attr_i(const std::string& name, int64_t dflt) const;
  double attr_f(const std::string& name, double dflt) const;
  std::vector<int64_t> attr_ints(const std::string& name) const;
  std::vector<double> attr_floats(const std::string& name) const;
  std::vector<std::string> attr_strings(const std::string& name) const;
  std::string attr_s(const std::string& name, const std::string& dflt) const;
  const ::onnx::TensorProto* attr_t(const std::string& name) const;
  /// A GRAPH attribute (If's branches, Loop's and Scan's body), or a failure naming it.
  const ::onnx::GraphProto& attr_graph(const std::string& name) const;

  /// The ONNX element type input i is declared with (a graph input, an initializer, a Constant
  /// node or a value_info entry), or kUndefined when the file does not say.
  OnnxType declared_type(size_t i) const;

  void set(size_t i, Tensor t);
  void set_val(size_t i, Val v);
  Tensor materialize(const Val& v);
  Device device() const;
  void set_shape(size_t i, std::vector<SymSize> v, DType dtype, bool scalar);
  /// Output i as known elements of any rank (`dims` must hold v.size() elements).
  void set_known(size_t i, std::vector<SymSize> v, DType dtype, Shape dims);
  /// A constant tensor on the model's device (kept alive by the model, shared by content).
  Tensor constant(DType dtype, const Shape& shape, const std::vector<double>& values);
  Tensor constant_i64(const std::vector<int64_t>& values, const Shape& shape);

  /// Records that this node is about to break the graph (an op without device lowering, a
  /// host read), if `t` is traced: named in CompiledModel::explain() and KILN_LOGS=graph_breaks.
  void note_break(const Tensor& t, const std::string& why);

  [[noreturn]] void fail(const std::string& message) const;
  [[noreturn]] void unsupported(const std::string& message) const;
  std::string where() const;  // "Reshape node 'n3' (opset 17)"

 private:
  ModelImpl& model_;
  const ::onnx::NodeProto& node_;
  std::vector<Val*> in_;
  std::vector<Val>& out_;
};

using OpHandler = std::function<void(NodeCtx&)>;
/// Every supported op, keyed by op_type (default domain) or "domain.op_type" (the training
/// domain, ai.onnx.preview.training).
const std::map<std::string, OpHandler>& op_table();
void register_math_ops(std::map<std::string, OpHandler>& table);
void register_nn_ops(std::map<std::string, OpHandler>& table);
void register_shape_ops(std::map<std::string, OpHandler>& table);
void register_extra_ops(std::map<std::string, OpHandler>& table);
void register_recurrent_ops(std::map<std::string, OpHandler>& table);
void register_quant_ops(std::map<std::string, OpHandler>& table);
void register_signal_ops(std::map<std::string, OpHandler>& table);
void register_compress_ops(std::map<std::string, OpHandler>& table);
void register_control_ops(std::map<std::string, OpHandler>& table);
void register_training_ops(std::map<std::string, OpHandler>& table);
void register_resize_ops(std::map<std::string, OpHandler>& table);
void register_scatter_ops(std::map<std::string, OpHandler>& table);  // ops_scatter.cpp
void register_mel_weight_ops(std::map<std::string, OpHandler>& table);  // ops_mel_weight.cpp
void register_sequence_ops(std::map<std::string, OpHandler>& table);  // ops_sequence.cpp
void register_string_ops(std::map<std::string, OpHandler>& table);    // ops_string.cpp
void register_tfidf_ops(std::map<std::string, OpHandler>& table);     // ops_tfidf.cpp
// The handlers of every KILN_KERNEL_OP row of graph/ops.def: `register_<stem>_ops` in
// runtime/onnx/ops_<stem>.cpp (they build the node with kiln::apply_op, tensor/apply_op.h).
#define KILN_OP(e, name, cat, arity, attrs)
#define KILN_KERNEL_OP(e, name, cat, arity, attrs, variant, stem) \
  void register_##stem##_ops(std::map<std::string, OpHandler>& table);
#include "graph/ops.def"
#undef KILN_KERNEL_OP
#undef KILN_OP

/// The elements of an integer or bool tensor, exactly (i64 values are not rounded through
/// double). Reading a traced tensor is a host read (a graph break).
std::vector<int64_t> int_elements(const Tensor& t);
/// Fails naming the node when a shape would hold more than 2^31 elements (corrupt or hostile
/// size values), before anything is allocated.
void check_size(const NodeCtx& ctx, const Sizes& shape);

/// Evaluates a node whose inputs are all known values on their elements, so shape subgraphs
/// stay known (runtime/onnx/shape_fold.cpp); false when it declines (the op handler runs).
bool fold_known(NodeCtx& c);

/// The error for a sequence, optional or string value where an op needs a numeric tensor.
Status non_tensor_error(const Val& v);
/// Builds a tensor from known elements (a constant when static, symbolic sizes otherwise).
Tensor materialize(ModelImpl& model, const Val& v);
/// A Conv node's convolution of x by weight (+ bias) with the node's attributes.
Tensor conv_node(NodeCtx& c, const Tensor& x, const Tensor& weight, const Tensor& bias);
/// Normalises an axis against `rank`, or fails naming the node.
int64_t axis_of(const NodeCtx& ctx, int64_t axis, int64_t rank);

class ModelImpl {
 public:
  std::string name;
  Device device = Device::cpu();
  int64_t opset = 0;
  ::onnx::GraphProto graph;
  std::vector<ValueInfo> inputs, outputs;
  std::unordered_map<std::string, Val> initializers;
  std::vector<int> order;  // node indices in topological order

  std::vector<std::string> break_nodes;  // of the latest trace, in order

  Tensor constant(DType dtype, const Shape& shape, const std::vector<double>& values);
  std::vector<Tensor> run(const std::vector<Tensor>& inputs);
  /// Runs a subgraph (a branch or loop body) on `inputs`, seeing the values of `outer`; its
  /// outputs in order. Its nodes run in file order (ONNX requires them sorted).
  std::vector<Val> run_subgraph(const ::onnx::GraphProto& g,
                                const std::unordered_map<std::string, Val>& outer,
                                std::vector<Val> args);
  /// Runs one node of a graph on `env`, adding its outputs.
  void run_node(const ::onnx::NodeProto& node, int index,
                std::unordered_map<std::string, Val>& env);

 private:
  /// A subgraph's initializer or Constant node, decoded once and kept (a stable identity for
  /// the traces that capture it).
  Val subgraph_constant(const void* key, const std::function<Expected<Tensor>()>& decode);

  std::map<std::string, Tensor> constants_;  // by content: identity stays stable across traces
  std::mutex subgraph_mu_;
  std::map<const void*, Val> subgraph_constants_;
};

/// Validates and imports a parsed model.
Expected<std::shared_ptr<ModelImpl>> import_model(::onnx::ModelProto proto, Device device,
                                                  const std::string& name);

}  // namespace kiln::onnx
