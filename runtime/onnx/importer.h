// The ONNX importer's internals: the imported graph, values during a run, and the per-op
// handlers that map ONNX nodes onto the Tensor API.
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
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

/// One value while the graph runs. Integer tensors whose elements are known at trace time
/// (shapes, constants, shape arithmetic) carry them as `shape`: SymSizes that stay symbolic for
/// dynamic dims. The tensor is built from them only when an op needs it.
struct Val {
  Tensor t;
  std::optional<std::vector<SymSize>> shape;  // known elements (rank 0 or 1)
  bool scalar = false;                        // rank 0 (with `shape` set)
  DType dtype = DType::kI64;                  // of `shape` values
  bool defined() const { return t.defined() || shape.has_value(); }
};

class ModelImpl;

/// What a handler sees of one node.
class NodeCtx {
 public:
  NodeCtx(ModelImpl& model, const ::onnx::NodeProto& node, std::vector<Val*> in,
          std::vector<Val>& out)
      : model_(model), node_(node), in_(std::move(in)), out_(out) {}

  const ::onnx::NodeProto& node() const { return node_; }
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
  std::string attr_s(const std::string& name, const std::string& dflt) const;
  const ::onnx::TensorProto* attr_t(const std::string& name) const;

  void set(size_t i, Tensor t);
  void set_val(size_t i, Val v);
  Tensor materialize(const Val& v);
  Device device() const;
  void set_shape(size_t i, std::vector<SymSize> v, DType dtype, bool scalar);
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
/// Every supported op, keyed by op_type (default domain).
const std::map<std::string, OpHandler>& op_table();
void register_math_ops(std::map<std::string, OpHandler>& table);
void register_nn_ops(std::map<std::string, OpHandler>& table);
void register_shape_ops(std::map<std::string, OpHandler>& table);
void register_extra_ops(std::map<std::string, OpHandler>& table);
void register_scatter_ops(std::map<std::string, OpHandler>& table);  // ops_scatter.cpp

/// The elements of an integer or bool tensor, exactly (i64 values are not rounded through
/// double). Reading a traced tensor is a host read (a graph break).
std::vector<int64_t> int_elements(const Tensor& t);
/// Fails naming the node when a shape would hold more than 2^31 elements (corrupt or hostile
/// size values), before anything is allocated.
void check_size(const NodeCtx& ctx, const Sizes& shape);

/// Builds a tensor from known elements (a constant when static, symbolic sizes otherwise).
Tensor materialize(ModelImpl& model, const Val& v);
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

 private:
  std::map<std::string, Tensor> constants_;  // by content: identity stays stable across traces
};

/// Validates and imports a parsed model.
Expected<std::shared_ptr<ModelImpl>> import_model(::onnx::ModelProto proto, Device device,
                                                  const std::string& name);

}  // namespace kiln::onnx
