// Sequences, optionals and string tensors of the ONNX front end: the Val forms, the conversion
// from and to the public onnx::Value at a model's inputs and outputs, Model::run_values, and
// reading SequenceProto / OptionalProto / STRING TensorProto files.
#include "onnx/host_values.h"

#include <onnx/onnx-data_pb.h>

#include <limits>

#include "onnx/read_file.h"

namespace kiln::onnx {

Val sequence_val(std::vector<Val> items) {
  Val v;
  v.kind = Value::Kind::kSequence;
  v.items = std::make_shared<const std::vector<Val>>(std::move(items));
  return v;
}

Val optional_val(std::optional<Val> item) {
  Val v;
  v.kind = Value::Kind::kOptional;
  std::vector<Val> items;
  if (item) items.push_back(std::move(*item));
  v.items = std::make_shared<const std::vector<Val>>(std::move(items));
  return v;
}

Val strings_val(std::vector<int64_t> shape, std::vector<std::string> strings) {
  auto h = std::make_shared<Value>();
  h->kind = Value::Kind::kStrings;
  h->onnx_type = OnnxType::kString;
  h->shape = std::move(shape);
  h->strings = std::move(strings);
  Val v;
  v.kind = Value::Kind::kStrings;
  v.host = std::move(h);
  return v;
}

std::string kind_name(const Val& v) {
  return kind_name(v.kind);
}

std::string kind_name(Value::Kind kind) {
  switch (kind) {
    case Value::Kind::kSequence:
      return "a sequence";
    case Value::Kind::kOptional:
      return "an optional";
    case Value::Kind::kStrings:
      return "a string tensor";
    case Value::Kind::kTensor:
      break;
  }
  return "a tensor";
}

Status non_tensor_error(const Val& v) {
  if (v.kind == Value::Kind::kStrings)
    return unimplemented(
        "a string tensor reaches an op that computes on numbers (strings are "
        "host values: Cast them to a number type first)");
  return invalid_argument(kind_name(v) + " is given where a tensor is expected");
}

namespace {

const Val& input_of_kind(NodeCtx& c, size_t i, Value::Kind kind, const char* what) {
  if (!c.has(i)) c.fail("input " + std::to_string(i) + " (" + what + ") is missing");
  const Val& v = c.val(i);
  if (v.kind != kind)
    c.fail("input " + std::to_string(i) + " must be " + what + ", not " + kind_name(v));
  return v;
}

}  // namespace

const std::vector<Val>& sequence_items(NodeCtx& c, size_t i) {
  return *input_of_kind(c, i, Value::Kind::kSequence, "a sequence").items;
}
const std::vector<Val>& optional_items(NodeCtx& c, size_t i) {
  return *input_of_kind(c, i, Value::Kind::kOptional, "an optional").items;
}
const Value& string_tensor(NodeCtx& c, size_t i) {
  return *input_of_kind(c, i, Value::Kind::kStrings, "a string tensor").host;
}

// ---- model inputs and outputs --------------------------------------------------------------

namespace {

Val to_val(const Value& v, Device device, const std::string& what) {
  switch (v.kind) {
    case Value::Kind::kTensor: {
      if (!v.tensor.defined()) throw Error(invalid_argument(what + " is undefined"));
      Val out;
      out.t = v.tensor.to(device);
      return out;
    }
    case Value::Kind::kStrings: {
      int64_t n = 1;
      for (int64_t d : v.shape) {
        if (d < 0 || (d > 0 && n > std::numeric_limits<int32_t>::max() / d))
          throw Error(invalid_argument(what + ": bad string tensor shape"));
        n *= d;
      }
      if (static_cast<size_t>(n) != v.strings.size())
        throw Error(invalid_argument(what + ": " + std::to_string(v.strings.size()) +
                                     " strings for " + std::to_string(n) + " elements"));
      return strings_val(v.shape, v.strings);
    }
    case Value::Kind::kSequence:
    case Value::Kind::kOptional: {
      if (v.kind == Value::Kind::kOptional && v.elements.size() > 1)
        throw Error(invalid_argument(what + ": an optional holds at most one value"));
      std::vector<Val> items;
      for (size_t k = 0; k < v.elements.size(); ++k)
        items.push_back(to_val(v.elements[k], device, what + " element " + std::to_string(k)));
      if (v.kind == Value::Kind::kSequence) return sequence_val(std::move(items));
      return optional_val(items.empty() ? std::nullopt : std::optional<Val>(items[0]));
    }
  }
  throw Error(invalid_argument(what + ": unknown value kind"));
}

Value to_value(ModelImpl& m, const Val& v, OnnxType type) {
  Value out;
  out.kind = v.kind;
  switch (v.kind) {
    case Value::Kind::kTensor:
      out.tensor = materialize(m, v);
      out.onnx_type = type;
      return out;
    case Value::Kind::kStrings:
      return *v.host;
    case Value::Kind::kSequence:
    case Value::Kind::kOptional:
      for (const Val& e : *v.items) out.elements.push_back(to_value(m, e, type));
      out.onnx_type = type;
      return out;
  }
  return out;
}

}  // namespace

std::vector<Value> run_values(ModelImpl& m, const std::vector<Value>& args) {
  if (args.size() != m.inputs.size())
    throw Error(invalid_argument(m.name + ": " + std::to_string(args.size()) +
                                 " inputs given, the model has " +
                                 std::to_string(m.inputs.size())));
  std::unordered_map<std::string, Val> env = m.initializers;
  for (size_t i = 0; i < args.size(); ++i) {
    const ValueInfo& info = m.inputs[i];
    const std::string what = m.name + ": input '" + info.name + "'";
    if (args[i].kind != info.kind)
      throw Error(invalid_argument(what + " is " + kind_name(args[i].kind) +
                                   ", the model declares " + info.str()));
    if (info.kind == Value::Kind::kTensor && args[i].tensor.defined() &&
        args[i].tensor.dtype() != info.dtype)
      throw Error(invalid_argument(what + " is " + dtype_name(args[i].tensor.dtype()) +
                                   ", the model expects " + onnx_type_name(info.onnx_type)));
    env[info.name] = to_val(args[i], m.device, what);
  }
  for (int index : m.order) m.run_node(m.graph.node(index), index, env);
  std::vector<Value> results;
  for (const ValueInfo& o : m.outputs) results.push_back(to_value(m, env.at(o.name), o.onnx_type));
  return results;
}

std::vector<Value> Model::run_values(const std::vector<Value>& inputs) const {
  return onnx::run_values(*impl_, inputs);
}

bool Model::tensors_only() const {
  for (const ValueInfo& v : impl_->inputs)
    if (v.kind != Value::Kind::kTensor) return false;
  for (const ValueInfo& v : impl_->outputs)
    if (v.kind != Value::Kind::kTensor) return false;
  return true;
}

// ---- .pb files -----------------------------------------------------------------------------

namespace {

constexpr int kMaxNesting = 16;

Expected<Value> tensor_value(const ::onnx::TensorProto& p, Device device, const std::string& what) {
  if (p.data_type() == ::onnx::TensorProto::STRING) {
    Value v;
    v.kind = Value::Kind::kStrings;
    v.onnx_type = OnnxType::kString;
    int64_t n = 1;
    for (int64_t d : p.dims()) {
      if (d < 0 || (d > 0 && n > std::numeric_limits<int32_t>::max() / d))
        return invalid_argument(what + ": bad string tensor dims");
      n *= d;
      v.shape.push_back(d);
    }
    if (p.string_data_size() != n)
      return invalid_argument(what + ": " + std::to_string(p.string_data_size()) +
                              " strings stored for " + std::to_string(n) + " elements");
    v.strings.assign(p.string_data().begin(), p.string_data().end());
    return v;
  }
  KILN_ASSIGN_OR_RETURN(ProtoTensor t, decode_tensor(p, device, what));
  return Value::of(t.tensor, t.onnx_type);
}

Expected<Value> optional_value(const ::onnx::OptionalProto& p, Device device,
                               const std::string& what, int depth);

Expected<Value> sequence_value(const ::onnx::SequenceProto& p, Device device,
                               const std::string& what, int depth) {
  if (depth > kMaxNesting) return invalid_argument(what + ": nested too deeply");
  Value v;
  v.kind = Value::Kind::kSequence;
  for (const auto& t : p.tensor_values()) {
    KILN_ASSIGN_OR_RETURN(Value e, tensor_value(t, device, what + " element"));
    v.elements.push_back(std::move(e));
  }
  for (const auto& s : p.sequence_values()) {
    KILN_ASSIGN_OR_RETURN(Value e, sequence_value(s, device, what, depth + 1));
    v.elements.push_back(std::move(e));
  }
  for (const auto& o : p.optional_values()) {
    KILN_ASSIGN_OR_RETURN(Value e, optional_value(o, device, what, depth + 1));
    v.elements.push_back(std::move(e));
  }
  if (p.map_values_size() > 0 || p.sparse_tensor_values_size() > 0)
    return unimplemented(what + ": sequences of maps or sparse tensors are not supported");
  return v;
}

Expected<Value> optional_value(const ::onnx::OptionalProto& p, Device device,
                               const std::string& what, int depth) {
  if (depth > kMaxNesting) return invalid_argument(what + ": nested too deeply");
  Value v;
  v.kind = Value::Kind::kOptional;
  if (p.has_tensor_value()) {
    KILN_ASSIGN_OR_RETURN(Value e, tensor_value(p.tensor_value(), device, what));
    v.elements.push_back(std::move(e));
  } else if (p.has_sequence_value()) {
    KILN_ASSIGN_OR_RETURN(Value e, sequence_value(p.sequence_value(), device, what, depth + 1));
    v.elements.push_back(std::move(e));
  } else if (p.has_optional_value()) {
    KILN_ASSIGN_OR_RETURN(Value e, optional_value(p.optional_value(), device, what, depth + 1));
    v.elements.push_back(std::move(e));
  } else if (p.has_map_value() || p.has_sparse_tensor_value()) {
    return unimplemented(what + ": optionals of maps or sparse tensors are not supported");
  }
  return v;
}

template <typename Proto>
Expected<Proto> parse(const std::string& data, const std::string& path, const char* what) {
  Proto p;
  if (data.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !p.ParseFromArray(data.data(), static_cast<int>(data.size())))
    return invalid_argument(path + ": not a valid " + what +
                            " (truncated or corrupt protobuf data)");
  return p;
}

}  // namespace

Expected<Value> load_value_proto(const std::string& path, Value::Kind kind, Device device) {
  KILN_ASSIGN_OR_RETURN(std::string data, read_file(path));
  switch (kind) {
    case Value::Kind::kTensor:
    case Value::Kind::kStrings: {
      KILN_ASSIGN_OR_RETURN(auto p, parse<::onnx::TensorProto>(data, path, "TensorProto"));
      return tensor_value(p, device, path);
    }
    case Value::Kind::kSequence: {
      KILN_ASSIGN_OR_RETURN(auto p, parse<::onnx::SequenceProto>(data, path, "SequenceProto"));
      return sequence_value(p, device, path, 0);
    }
    case Value::Kind::kOptional: {
      KILN_ASSIGN_OR_RETURN(auto p, parse<::onnx::OptionalProto>(data, path, "OptionalProto"));
      return optional_value(p, device, path, 0);
    }
  }
  return invalid_argument(path + ": unknown value kind");
}

}  // namespace kiln::onnx
