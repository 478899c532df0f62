/// \file onnx.h
/// The ONNX front end: imports an ONNX model (opsets 7-18, default domain) as a C++ function
/// over kiln::Tensor, which kiln::compile captures like any other (docs/onnx.md).
///
/// Every node maps to Kiln's Tensor API, so the rules of the C++ front end hold unchanged: an
/// op without a device lowering (Unique, NonMaxSuppression) is a graph break with its reason, a
/// value read on the host (a Reshape whose target shape is computed from data) is a graph break
/// guarded by that value. Shape subgraphs (Shape, Gather, Concat, arithmetic, comparisons,
/// Where, ScatterND ... on shapes) are folded at trace time over symbolic sizes, so graph
/// inputs whose dims are named (`dim_param`) stay symbolic: one compiled shape class serves
/// every size.
///
/// Element types Kiln lacks are computed in a wider or nearest type: double and bfloat16 as
/// f32; int8, uint8, int16, uint16 as i32; uint32 and uint64 as i64. ValueInfo::onnx_type keeps
/// the declared type. Strings and complex numbers are unsupported.
///
/// Errors: malformed files (truncated, wrong types, cycles, missing inputs, bad tensor data)
/// are invalid_argument; an op or attribute Kiln does not implement is unimplemented and
/// names the op, the node and the opset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kiln/compile.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::onnx {

/// ONNX TensorProto element type numbers (onnx.proto's TensorProto.DataType).
enum class OnnxType : int {
  kUndefined = 0,
  kFloat = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUint32 = 12,
  kUint64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBfloat16 = 16,
};
/// "FLOAT", "UINT8", ...
const char* onnx_type_name(OnnxType type);
/// The Kiln dtype an ONNX type is computed in, or unimplemented (strings, complex).
Expected<DType> kiln_dtype(OnnxType type);

/// A value of an ONNX graph input or output in full: a numeric tensor, a string tensor (host
/// only: Kiln's devices hold no strings), a sequence (ONNX SequenceProto) or an optional
/// (OptionalProto). Model::run_values takes and returns these.
struct Value {
  enum class Kind : uint8_t { kTensor, kStrings, kSequence, kOptional };
  Kind kind = Kind::kTensor;
  Tensor tensor;                              // kTensor
  OnnxType onnx_type = OnnxType::kUndefined;  // kTensor (as declared or read), kStrings
  std::vector<int64_t> shape;                 // kStrings
  std::vector<std::string> strings;           // kStrings, row-major
  std::vector<Value> elements;                // kSequence; kOptional: none (empty) or one
  static Value of(Tensor t, OnnxType type = OnnxType::kUndefined) {
    Value v;
    v.tensor = std::move(t);
    v.onnx_type = type;
    return v;
  }
};

/// A graph input or output.
struct ValueInfo {
  std::string name;
  OnnxType onnx_type = OnnxType::kUndefined;
  DType dtype = DType::kF32;
  /// One entry per dim: the size, or -1 where the dim is named or unknown.
  std::vector<int64_t> dims;
  /// One entry per dim: the dim_param name ("batch"), empty where the dim is a number/unknown.
  std::vector<std::string> dim_params;
  bool has_shape = false;  // the file declares a shape (rank known)
  /// What the value is: a numeric tensor (`dtype`), a STRING tensor, a sequence or an optional
  /// (`onnx_type` is then its innermost element type, when the file says).
  Value::Kind kind = Value::Kind::kTensor;
  std::string str() const;  // "input: FLOAT[batch, 16]"
};

/// What a file declares, without importing it: for tools that classify models.
struct ModelSummary {
  int64_t opset = 0;
  int64_t ir_version = 0;
  std::vector<std::string> op_types;  // distinct, in first-use order
  std::string producer;
};
Expected<ModelSummary> summarize(const std::string& path);

class ModelImpl;

/// An imported model. Copies share the imported graph.
class Model {
 public:
  /// Reads and imports `path`. Initializers are uploaded to `device` once.
  static Expected<Model> load(const std::string& path, Device device = Device::cpu());
  /// Imports the bytes of a whole .onnx file; `name` appears in messages.
  static Expected<Model> parse(std::span<const std::byte> bytes, Device device = Device::cpu(),
                               const std::string& name = "model");

  /// Graph inputs that are not initializers, in file order (the call's argument order).
  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  int64_t opset() const;
  Device device() const;
  const std::string& name() const;

  /// The model as a tensor function: runs every node through the Tensor API (recorded into a
  /// graph inside kiln::compile, one op at a time outside it). Inputs are in inputs() order
  /// with the dtypes inputs()[i].dtype; throws kiln::Error on a mismatch or a failing op.
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) const;
  /// The model on values of any kind (sequences, optionals, string tensors: the inputs and
  /// outputs whose ValueInfo::kind is not kTensor), run eagerly (one op at a time: on Vulkan one
  /// dispatch per op, never the interpreter). Throws kiln::Error.
  std::vector<Value> run_values(const std::vector<Value>& inputs) const;
  /// Whether every input and output is a numeric tensor (what operator() and CompiledModel take).
  bool tensors_only() const;

 private:
  friend class CompiledModel;
  explicit Model(std::shared_ptr<ModelImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<ModelImpl> impl_;
};

/// kiln::compile over a Model. Dims with a dim_param are marked dynamic on every call (sizes
/// 0 and 1 stay specialised, as everywhere in Kiln), so each named dim is one symbol.
class CompiledModel {
 public:
  explicit CompiledModel(Model model, CompileOptions options = {});
  /// Inputs in model.inputs() order; each is moved to the model's device and cast to the
  /// dtype the model computes in when needed. Throws kiln::Error.
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs);
  /// As operator(), with errors as a Status.
  Expected<std::vector<Tensor>> run(const std::vector<Tensor>& inputs);

  const Model& model() const { return model_; }
  CompileStats stats() const;
  /// Blocks until every background compile has finished (CompileOptions::background).
  void wait_ready() const;
  /// Compiles for inputs of these shapes ahead of use (one call on zeros of each input's dtype,
  /// then wait_ready()), so that the device's cache directory holds the kernels: what
  /// `kiln precompile` does (docs/cache.md, "Shipping a warm cache").
  Status precompile(const std::vector<std::vector<int64_t>>& input_shapes);
  /// kiln's explain report; each break reason of the latest trace is prefixed with the ONNX
  /// node that caused it ("Unique node '/Unique' (opset 17): unique has no device lowering ...").
  ExplainReport explain() const;

 private:
  Model model_;
  std::shared_ptr<CompiledCore> core_;
};

/// A TensorProto (a `.pb` file of ONNX's backend tests) decoded into a Kiln tensor.
struct ProtoTensor {
  std::string name;
  OnnxType onnx_type = OnnxType::kUndefined;
  Tensor tensor;  // in kiln_dtype(onnx_type), on the requested device
};
Expected<ProtoTensor> parse_tensor_proto(std::span<const std::byte> bytes,
                                         Device device = Device::cpu());
Expected<ProtoTensor> load_tensor_proto(const std::string& path, Device device = Device::cpu());
/// The seed of random nodes without a `seed` attribute (RandomUniform, RandomNormal, their Like
/// forms, Bernoulli, training-mode Dropout). Unset (the default), each such node draws a fresh
/// seed whenever it is traced; set, a node's seed is derived from this one and the node's
/// output name, so runs repeat and Vulkan gives the interpreter's bits. Process-wide.
void set_default_seed(std::optional<uint64_t> seed);

/// A `.pb` file holding a value of `kind`: a TensorProto (a numeric or STRING tensor), a
/// SequenceProto or an OptionalProto (of tensors or sequences, nested as the file has them).
Expected<Value> load_value_proto(const std::string& path, Value::Kind kind,
                                 Device device = Device::cpu());

/// Element values of `t` as the ONNX type `as` would hold them (wraps integers to the width of
/// uint8 and friends, truncates to bfloat16 as ONNX 1.12's Cast does), for comparisons.
std::vector<double> values_as(const Tensor& t, OnnxType as);

}  // namespace kiln::onnx
