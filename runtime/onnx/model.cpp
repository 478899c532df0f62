// Importing a ModelProto (validation, topological order, initializers) and running it as a
// function over kiln::Tensor.
#include <algorithm>
#include <cstring>
#include <limits>
#include <set>
#include <unordered_set>

#include "onnx/importer.h"
#include "onnx/read_file.h"

namespace kiln::onnx {

namespace {

constexpr int64_t kMinOpset = 1;
constexpr int64_t kMaxOpset = 18;
constexpr const char* kTrainingDomain = "ai.onnx.preview.training";

std::string node_label(const ::onnx::NodeProto& n, int index) {
  return n.op_type() + " node '" + (n.name().empty() ? "#" + std::to_string(index) : n.name()) +
         "'";
}

Expected<int64_t> default_opset(const ::onnx::ModelProto& m) {
  int64_t opset = -1;
  bool other_known = false;  // a domain Kiln imports besides the default one
  for (const auto& o : m.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
    if (o.domain() == kTrainingDomain) other_known = true;
  }
  if (opset < 0 && other_known) return 0;  // no default-domain node may appear
  if (opset < 0 && m.opset_import_size() > 0)
    return unimplemented("the model imports only domain '" + m.opset_import(0).domain() +
                         "', which Kiln does not import");
  if (opset < 0) return invalid_argument("the model imports no opset of the default ONNX domain");
  return opset;
}

bool is_default_domain(const std::string& d) {
  return d.empty() || d == "ai.onnx";
}

/// The op table's key of a node: its op_type, prefixed by its domain outside the default one;
/// empty for a domain Kiln does not import.
std::string op_key(const ::onnx::NodeProto& n) {
  if (is_default_domain(n.domain())) return n.op_type();
  if (n.domain() == kTrainingDomain) return n.domain() + "." + n.op_type();
  return "";
}

/// The names a subgraph reads from the scopes around it (used inside, defined nowhere inside).
void outer_names(const ::onnx::GraphProto& g, std::set<std::string>& out) {
  std::unordered_set<std::string> local;
  for (const auto& i : g.initializer()) local.insert(i.name());
  for (const auto& i : g.input()) local.insert(i.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) local.insert(o);
  for (const auto& n : g.node()) {
    std::set<std::string> used(n.input().begin(), n.input().end());
    for (const auto& a : n.attribute())
      if (a.has_g()) outer_names(a.g(), used);
    for (const std::string& u : used)
      if (!u.empty() && !local.count(u)) out.insert(u);
  }
}

/// Every node of a subgraph (recursively): an op Kiln imports, of the default domain.
Status check_subgraph_ops(const ::onnx::GraphProto& g, const std::string& where, int64_t opset) {
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    if (op_key(n).empty())
      return unimplemented(where + ": " + node_label(n, i) + " is in domain '" + n.domain() +
                           "', which Kiln does not import");
    if (!op_table().count(op_key(n)))
      return unimplemented(where + ": unsupported ONNX op '" + n.op_type() + "' (" +
                           node_label(n, i) + ", opset " + std::to_string(opset) + ")");
    for (const auto& a : n.attribute()) {
      if (a.graphs_size() > 0)
        return unimplemented(where + ": " + node_label(n, i) + " has a GRAPHS attribute");
      if (a.has_g()) KILN_RETURN_IF_ERROR(check_subgraph_ops(a.g(), where, opset));
    }
  }
  return Status::ok_status();
}

/// Known elements of a small integer or bool constant, so shape arithmetic on it folds.
void fold_constant(Val& v) {
  const Tensor& t = v.t;
  if ((!is_integral(t.dtype()) && t.dtype() != DType::kBool) || t.numel() > kMaxKnownElements)
    return;
  std::vector<SymSize> s;
  for (int64_t d : int_elements(t)) s.emplace_back(d);
  v.shape = std::move(s);
  v.dims = t.shape();
  v.dtype = t.dtype();
}

}  // namespace

Expected<std::shared_ptr<ModelImpl>> import_model(::onnx::ModelProto proto, Device device,
                                                  const std::string& name) {
  auto m = std::make_shared<ModelImpl>();
  m->name = name;
  m->device = device;
  auto opset = default_opset(proto);
  if (!opset.ok()) return name.empty() ? opset.status() : opset.status().with_context(name);
  m->opset = *opset;
  if (m->opset != 0 && (m->opset < kMinOpset || m->opset > kMaxOpset))
    return unimplemented(name + ": opset " + std::to_string(m->opset) +
                         " is not supported (Kiln imports opsets " + std::to_string(kMinOpset) +
                         " to " + std::to_string(kMaxOpset) + ")");
  if (!proto.has_graph()) return invalid_argument(name + ": the model has no graph");
  m->graph = std::move(*proto.mutable_graph());
  const ::onnx::GraphProto& g = m->graph;

  std::unordered_set<std::string> defined;
  for (const auto& init : g.initializer()) {
    if (init.name().empty()) return invalid_argument(name + ": an initializer has no name");
    auto t = decode_tensor(init, device, "initializer '" + init.name() + "'");
    if (!t.ok()) return t.status().with_context(name);
    Val v;
    v.t = t->tensor;
    fold_constant(v);
    if (!m->initializers.emplace(init.name(), std::move(v)).second)
      return invalid_argument(name + ": initializer '" + init.name() + "' is defined twice");
    defined.insert(init.name());
  }
  for (const auto& in : g.input()) {
    if (m->initializers.count(in.name())) continue;  // IR < 4 lists initializers as inputs
    if (in.name().empty()) return invalid_argument(name + ": a graph input has no name");
    auto info = decode_value_info(in);
    if (!info.ok()) return info.status().with_context(name + ": graph input");
    if (!defined.insert(in.name()).second)
      return invalid_argument(name + ": graph input '" + in.name() + "' is defined twice");
    m->inputs.push_back(std::move(*info));
  }
  for (const auto& out : g.output()) {
    auto info = decode_value_info(out);
    if (!info.ok()) return info.status().with_context(name + ": graph output");
    m->outputs.push_back(std::move(*info));
  }
  if (m->outputs.empty()) return invalid_argument(name + ": the graph has no outputs");

  // Every node: a known op of the default domain; no value defined twice.
  const auto& table = op_table();
  std::unordered_map<std::string, int> producer;
  std::set<int> constant_nodes;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    if (op_key(n).empty())
      return unimplemented(name + ": " + node_label(n, i) + " is in domain '" + n.domain() +
                           "', which Kiln does not import");
    if (m->opset == 0 && is_default_domain(n.domain()))
      return invalid_argument(name + ": " + node_label(n, i) +
                              " is in the default domain, which the model does not import");
    if (!table.count(op_key(n)))
      return unimplemented(name + ": unsupported ONNX op '" + n.op_type() + "' (" +
                           node_label(n, i) + ", opset " + std::to_string(m->opset) + ")");
    for (const auto& a : n.attribute())
      if (a.has_g())
        KILN_RETURN_IF_ERROR(check_subgraph_ops(
            a.g(), name + ": " + node_label(n, i) + "'s '" + a.name() + "' subgraph", m->opset));
    if (n.op_type() == "Constant") {  // decoded once, like an initializer
      if (n.output_size() != 1 || n.output(0).empty())
        return invalid_argument(name + ": " + node_label(n, i) + " needs one output");
      auto t = decode_constant_node(n, device);
      if (!t.ok()) return t.status().with_context(name);
      Val v;
      v.t = *t;
      fold_constant(v);
      if (defined.count(n.output(0)) || producer.count(n.output(0)))
        return invalid_argument(name + ": value '" + n.output(0) + "' is defined twice");
      m->initializers.emplace(n.output(0), std::move(v));
      defined.insert(n.output(0));
      constant_nodes.insert(i);
      continue;
    }
    for (const auto& o : n.output()) {
      if (o.empty()) continue;
      if (defined.count(o) || !producer.emplace(o, i).second)
        return invalid_argument(name + ": value '" + o + "' (output of " + node_label(n, i) +
                                ") is defined twice");
    }
  }
  // Topological order (Kahn); inputs must exist; what is left over lies on a cycle.
  std::vector<int> pending(static_cast<size_t>(g.node_size()), 0);
  std::vector<std::vector<int>> users(static_cast<size_t>(g.node_size()));
  for (int i = 0; i < g.node_size(); ++i) {
    if (constant_nodes.count(i)) continue;
    // A subgraph's reads from this scope order the node after their producers too.
    std::set<std::string> inputs(g.node(i).input().begin(), g.node(i).input().end());
    for (const auto& a : g.node(i).attribute())
      if (a.has_g()) outer_names(a.g(), inputs);
    for (const auto& in : inputs) {
      if (in.empty() || defined.count(in)) continue;
      auto it = producer.find(in);
      if (it == producer.end())
        return invalid_argument(name + ": input '" + in + "' of " + node_label(g.node(i), i) +
                                " is not a graph input, an initializer or a node output");
      ++pending[static_cast<size_t>(i)];
      users[static_cast<size_t>(it->second)].push_back(i);
    }
  }
  std::vector<int> ready;
  for (int i = 0; i < g.node_size(); ++i)
    if (pending[static_cast<size_t>(i)] == 0 && !constant_nodes.count(i)) ready.push_back(i);
  for (size_t k = 0; k < ready.size(); ++k) {
    m->order.push_back(ready[k]);
    for (int u : users[static_cast<size_t>(ready[k])])
      if (--pending[static_cast<size_t>(u)] == 0) ready.push_back(u);
  }
  if (m->order.size() + constant_nodes.size() != static_cast<size_t>(g.node_size())) {
    for (int i = 0; i < g.node_size(); ++i)
      if (pending[static_cast<size_t>(i)] > 0)
        return invalid_argument(name + ": the graph has a cycle through " +
                                node_label(g.node(i), i));
  }
  for (const ValueInfo& o : m->outputs)
    if (!defined.count(o.name) && !producer.count(o.name))
      return invalid_argument(name + ": graph output '" + o.name + "' is never computed");
  return m;
}

Tensor ModelImpl::constant(DType dtype, const Shape& shape, const std::vector<double>& values) {
  std::string key = std::string(dtype_name(dtype)) + shape_str(shape);
  key.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double));
  auto it = constants_.find(key);
  if (it != constants_.end()) return it->second;
  // Encode through a typed buffer per dtype.
  std::vector<std::byte> bytes(values.size() * dtype_size(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    std::byte* p = bytes.data() + i * dtype_size(dtype);
    switch (dtype) {
      case DType::kF32: {
        float v = static_cast<float>(values[i]);
        std::memcpy(p, &v, 4);
        break;
      }
      case DType::kF16: {
        uint16_t v = float_to_half(static_cast<float>(values[i]));
        std::memcpy(p, &v, 2);
        break;
      }
      case DType::kI32: {
        const auto v = static_cast<int32_t>(std::clamp(values[i], -2147483648.0, 2147483647.0));
        std::memcpy(p, &v, 4);
        break;
      }
      case DType::kI64: {
        // Clamp: INT64_MAX (a common "to the end" bound) is not representable as a double.
        const double d = values[i];
        const int64_t v = d >= 9.2e18    ? INT64_MAX
                          : d <= -9.2e18 ? INT64_MIN
                                         : static_cast<int64_t>(d);
        std::memcpy(p, &v, 8);
        break;
      }
      case DType::kBool: {
        uint8_t v = values[i] != 0;
        std::memcpy(p, &v, 1);
        break;
      }
      case DType::kC64: {  // (value, 0)
        const float v[2] = {static_cast<float>(values[i]), 0.0f};
        std::memcpy(p, v, 8);
        break;
      }
    }
  }
  Tensor t = Tensor::from_bytes(dtype, shape, bytes.data(), bytes.size(), device);
  constants_.emplace(std::move(key), t);
  return t;
}

Tensor materialize(ModelImpl& model, const Val& v) {
  if (v.t.defined()) return v.t;
  if (v.kind != Value::Kind::kTensor || !v.shape) throw Error(non_tensor_error(v));
  const std::vector<SymSize>& s = *v.shape;
  const Shape& shape = v.dims;
  bool symbolic = false;
  for (const SymSize& x : s) symbolic |= x.is_symbolic();
  if (!symbolic) {
    std::vector<double> d;
    for (const SymSize& x : s) d.push_back(static_cast<double>(x.hint()));
    return model.constant(v.dtype, shape, d);
  }
  // A symbolic size as a tensor: the length of a vector of ones of that size.
  std::vector<Tensor> parts;
  for (const SymSize& x : s) {
    Tensor e = x.is_symbolic() ? sum(ones({x}, DType::kI64, model.device), {0})
                               : model.constant(DType::kI64, {}, {static_cast<double>(x.hint())});
    parts.push_back(v.scalar() ? e : unsqueeze(e, 0));
  }
  Tensor out = v.scalar() ? parts.at(0) : concat(parts, 0);
  if (v.rank() > 1) out = reshape(out, Sizes(shape));
  return v.dtype == DType::kI64 ? out : cast(out, v.dtype);
}

std::vector<Tensor> ModelImpl::run(const std::vector<Tensor>& args) {
  if (args.size() != inputs.size())
    throw Error(invalid_argument(name + ": " + std::to_string(args.size()) +
                                 " inputs given, the model has " + std::to_string(inputs.size())));
  bool tracing = false;
  for (const Tensor& t : args) tracing = tracing || (t.defined() && t.is_traced());
  if (tracing) break_nodes.clear();
  std::unordered_map<std::string, Val> env = initializers;
  for (size_t i = 0; i < args.size(); ++i) {
    const ValueInfo& info = inputs[i];
    const Tensor& t = args[i];
    if (!t.defined())
      throw Error(invalid_argument(name + ": input '" + info.name + "' is undefined"));
    if (t.dtype() != info.dtype)
      throw Error(invalid_argument(name + ": input '" + info.name + "' is " +
                                   dtype_name(t.dtype()) + ", the model expects " +
                                   onnx_type_name(info.onnx_type) + " (computed as " +
                                   dtype_name(info.dtype) + ")"));
    Val v;
    v.t = t;
    env[info.name] = std::move(v);
  }
  for (int index : order) run_node(graph.node(index), index, env);
  std::vector<Tensor> results;
  for (const ValueInfo& o : outputs) results.push_back(materialize(*this, env.at(o.name)));
  return results;
}

void ModelImpl::run_node(const ::onnx::NodeProto& node, int index,
                         std::unordered_map<std::string, Val>& env) {
  std::vector<Val*> in;
  for (const auto& name_in : node.input())
    in.push_back(name_in.empty() ? nullptr : &env.at(name_in));
  std::vector<Val> out(static_cast<size_t>(node.output_size()));
  NodeCtx ctx(*this, node, std::move(in), out);
  ctx.scope = &env;
  const SourceLabel source(node_label(node, index));  // names the graph nodes it records
  try {
    if (!fold_known(ctx)) op_table().at(op_key(node))(ctx);
  } catch (const Error& e) {
    if (e.status().message().find(" node '") != std::string::npos) throw;
    throw Error(e.status().with_context(ctx.where()));
  }
  for (size_t o = 0; o < out.size(); ++o) {
    if (node.output(static_cast<int>(o)).empty()) continue;
    if (!out[o].defined())
      throw Error(unimplemented(ctx.where() + ": output " + std::to_string(o) +
                                " is not produced by Kiln's import of this op"));
    env[node.output(static_cast<int>(o))] = std::move(out[o]);
  }
}

Val ModelImpl::subgraph_constant(const void* key, const std::function<Expected<Tensor>()>& decode) {
  std::lock_guard<std::mutex> lock(subgraph_mu_);
  auto it = subgraph_constants_.find(key);
  if (it != subgraph_constants_.end()) return it->second;
  Expected<Tensor> t = decode();
  if (!t.ok()) throw Error(t.status());
  Val v;
  v.t = *t;
  fold_constant(v);
  return subgraph_constants_.emplace(key, std::move(v)).first->second;
}

std::vector<Val> ModelImpl::run_subgraph(const ::onnx::GraphProto& g,
                                         const std::unordered_map<std::string, Val>& outer,
                                         std::vector<Val> args) {
  const std::string what = "subgraph '" + g.name() + "'";
  if (args.size() != static_cast<size_t>(g.input_size()))
    throw Error(invalid_argument(what + " takes " + std::to_string(g.input_size()) +
                                 " inputs, given " + std::to_string(args.size())));
  std::unordered_map<std::string, Val> env = outer;
  for (const auto& init : g.initializer())
    env[init.name()] = subgraph_constant(&init, [&]() -> Expected<Tensor> {
      auto t = decode_tensor(init, device, "initializer '" + init.name() + "' of " + what);
      if (!t.ok()) return t.status();
      return t->tensor;
    });
  for (size_t i = 0; i < args.size(); ++i)
    env[g.input(static_cast<int>(i)).name()] = std::move(args[i]);
  for (int i = 0; i < g.node_size(); ++i) {
    const ::onnx::NodeProto& n = g.node(i);
    if (n.op_type() == "Constant") {
      env[n.output(0)] = subgraph_constant(&n, [&]() -> Expected<Tensor> {
        auto t = decode_constant_node(n, device);
        if (!t.ok()) return t.status().with_context(what);
        return *t;
      });
      continue;
    }
    for (const auto& in : n.input())
      if (!in.empty() && !env.count(in))
        throw Error(invalid_argument(what + ": input '" + in + "' of " + node_label(n, i) +
                                     " is not defined before it (nodes must be sorted)"));
    run_node(n, i, env);
  }
  std::vector<Val> out;
  for (const auto& o : g.output()) {
    auto it = env.find(o.name());
    if (it == env.end())
      throw Error(invalid_argument(what + ": output '" + o.name() + "' is never computed"));
    out.push_back(it->second);
  }
  return out;
}

// ---- public API ---------------------------------------------------------------------------

Expected<Model> Model::parse(std::span<const std::byte> bytes, Device device,
                             const std::string& name) {
  ::onnx::ModelProto proto;
  if (bytes.empty())
    return invalid_argument((name.empty() ? std::string("the model") : name) +
                            ": empty, not an ONNX model");
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return invalid_argument(name + ": not a valid ONNX model (truncated or corrupt protobuf data)");
  auto impl = import_model(std::move(proto), device, name);
  if (!impl.ok()) return impl.status();
  return Model(std::move(impl).value());
}

Expected<Model> Model::load(const std::string& path, Device device) {
  KILN_ASSIGN_OR_RETURN(std::string data, read_file(path));
  return parse(
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(data.data()), data.size()),
      device, path);
}

const std::vector<ValueInfo>& Model::inputs() const {
  return impl_->inputs;
}
const std::vector<ValueInfo>& Model::outputs() const {
  return impl_->outputs;
}
int64_t Model::opset() const {
  return impl_->opset;
}
Device Model::device() const {
  return impl_->device;
}
const std::string& Model::name() const {
  return impl_->name;
}
std::vector<Tensor> Model::operator()(const std::vector<Tensor>& inputs) const {
  if (!tensors_only())
    throw Error(invalid_argument(impl_->name + ": the model takes or returns sequences, "
                                 "optionals or strings: run it with run_values"));
  return impl_->run(inputs);
}

Expected<ModelSummary> summarize(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::string data, read_file(path));
  ::onnx::ModelProto proto;
  if (data.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !proto.ParseFromArray(data.data(), static_cast<int>(data.size())))
    return invalid_argument(path + ": not a valid ONNX model (truncated or corrupt protobuf data)");
  ModelSummary s;
  s.ir_version = proto.ir_version();
  s.producer = proto.producer_name();
  auto opset = default_opset(proto);
  s.opset = opset.ok() ? *opset : 0;
  std::set<std::string> seen;
  for (const auto& n : proto.graph().node())
    if (seen.insert(n.op_type()).second) s.op_types.push_back(n.op_type());
  return s;
}

}  // namespace kiln::onnx
