// NodeCtx (what an op handler sees of its node) and CompiledModel.
#include "kiln/logging.h"
#include "onnx/importer.h"

namespace kiln::onnx {

int64_t NodeCtx::opset() const {
  return model_.opset;
}

std::string NodeCtx::where() const {
  return node_.op_type() + " node '" + (node_.name().empty() ? node_.output(0) : node_.name()) +
         "' (opset " + std::to_string(model_.opset) + ")";
}

void NodeCtx::note_break(const Tensor& t, const std::string& why) {
  if (!t.is_traced()) return;
  model_.break_nodes.push_back(where());
  log(LogTopic::kGraphBreaks, "'" + model_.name + "': " + where() + " breaks the graph: " + why);
}

void NodeCtx::fail(const std::string& message) const {
  throw Error(invalid_argument(where() + ": " + message));
}

void NodeCtx::unsupported(const std::string& message) const {
  throw Error(unimplemented(where() + ": " + message));
}

bool NodeCtx::wants(size_t i) const {
  return i < out_.size() && !node_.output(static_cast<int>(i)).empty();
}

Val& NodeCtx::val(size_t i) {
  if (!has(i)) fail("input " + std::to_string(i) + " is missing");
  return *in_[i];
}

Tensor NodeCtx::in(size_t i) {
  Val& v = val(i);
  if (!v.t.defined()) v.t = kiln::onnx::materialize(model_, v);
  return v.t;
}

std::vector<SymSize> NodeCtx::ints(size_t i) {
  Val& v = val(i);
  if (v.shape) {
    if (v.rank() > 1) fail("input " + std::to_string(i) + " must be a scalar or 1-D");
    return *v.shape;
  }
  const Tensor& t = v.t;
  if (t.dim() > 1) fail("input " + std::to_string(i) + " must be a scalar or 1-D");
  if (!is_integral(t.dtype()) && t.dtype() != DType::kBool)
    fail("input " + std::to_string(i) + " must be an integer tensor, not " + dtype_name(t.dtype()));
  // A computed tensor: reading it is a host read (a graph break, guarded by the value).
  note_break(t, "input " + std::to_string(i) + " is read on the host");
  std::vector<SymSize> out;
  for (int64_t d : int_elements(t)) out.emplace_back(d);
  return out;
}

std::vector<int64_t> NodeCtx::int_values(size_t i) {
  std::vector<int64_t> out;
  for (const SymSize& s : ints(i)) out.push_back(s.value());
  return out;
}

std::vector<double> NodeCtx::doubles(size_t i) {
  Val& v = val(i);
  if (v.shape) {
    std::vector<double> out;
    for (const SymSize& s : *v.shape) out.push_back(static_cast<double>(s.value()));
    return out;
  }
  note_break(v.t, "input " + std::to_string(i) + " is read on the host");
  return v.t.to_doubles();
}

int64_t NodeCtx::scalar_int(size_t i) {
  const std::vector<int64_t> v = int_values(i);
  if (v.size() != 1)
    fail("input " + std::to_string(i) + " must hold one value, not " + std::to_string(v.size()));
  return v[0];
}

double NodeCtx::scalar_double(size_t i) {
  const std::vector<double> v = doubles(i);
  if (v.size() != 1)
    fail("input " + std::to_string(i) + " must hold one value, not " + std::to_string(v.size()));
  return v[0];
}

namespace {
const ::onnx::AttributeProto* find_attr(const ::onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
}  // namespace

bool NodeCtx::has_attr(const std::string& name) const {
  return find_attr(node_, name) != nullptr;
}

int64_t NodeCtx::attr_i(const std::string& name, int64_t dflt) const {
  const auto* a = find_attr(node_, name);
  if (!a) return dflt;
  if (a->type() != ::onnx::AttributeProto::INT) fail("attribute '" + name + "' must be an INT");
  return a->i();
}

double NodeCtx::attr_f(const std::string& name, double dflt) const {
  const auto* a = find_attr(node_, name);
  if (!a) return dflt;
  if (a->type() != ::onnx::AttributeProto::FLOAT) fail("attribute '" + name + "' must be a FLOAT");
  return a->f();
}

std::vector<int64_t> NodeCtx::attr_ints(const std::string& name) const {
  const auto* a = find_attr(node_, name);
  if (!a) return {};
  if (a->type() != ::onnx::AttributeProto::INTS) fail("attribute '" + name + "' must be INTS");
  return {a->ints().begin(), a->ints().end()};
}

const ::onnx::GraphProto& NodeCtx::attr_graph(const std::string& name) const {
  const auto* a = find_attr(node_, name);
  if (!a) fail("attribute '" + name + "' is missing");
  if (a->type() != ::onnx::AttributeProto::GRAPH || !a->has_g())
    fail("attribute '" + name + "' must be a GRAPH");
  return a->g();
}

OnnxType NodeCtx::declared_type(size_t i) const {
  if (i >= static_cast<size_t>(node_.input_size()) || node_.input(static_cast<int>(i)).empty())
    return OnnxType::kUndefined;
  const std::string& name = node_.input(static_cast<int>(i));
  for (const ValueInfo& v : model_.inputs)
    if (v.name == name) return v.onnx_type;
  const ::onnx::GraphProto& g = model_.graph;
  for (const auto& t : g.initializer())
    if (t.name() == name) return static_cast<OnnxType>(t.data_type());
  for (const auto& n : g.node())
    if (n.op_type() == "Constant" && n.output_size() == 1 && n.output(0) == name)
      for (const auto& a : n.attribute())
        if (a.name() == "value" && a.has_t()) return static_cast<OnnxType>(a.t().data_type());
  for (const auto& v : g.value_info())
    if (v.name() == name && v.type().has_tensor_type())
      return static_cast<OnnxType>(v.type().tensor_type().elem_type());
  return OnnxType::kUndefined;
}

std::vector<double> NodeCtx::attr_floats(const std::string& name) const {
  const auto* a = find_attr(node_, name);
  if (!a) return {};
  if (a->type() != ::onnx::AttributeProto::FLOATS) fail("attribute '" + name + "' must be FLOATS");
  return {a->floats().begin(), a->floats().end()};
}

std::vector<std::string> NodeCtx::attr_strings(const std::string& name) const {
  const auto* a = find_attr(node_, name);
  if (!a) return {};
  if (a->type() != ::onnx::AttributeProto::STRINGS)
    fail("attribute '" + name + "' must be STRINGS");
  return {a->strings().begin(), a->strings().end()};
}

std::string NodeCtx::attr_s(const std::string& name, const std::string& dflt) const {
  const auto* a = find_attr(node_, name);
  if (!a) return dflt;
  if (a->type() != ::onnx::AttributeProto::STRING)
    fail("attribute '" + name + "' must be a STRING");
  return a->s();
}

const ::onnx::TensorProto* NodeCtx::attr_t(const std::string& name) const {
  const auto* a = find_attr(node_, name);
  if (!a) return nullptr;
  if (a->type() != ::onnx::AttributeProto::TENSOR)
    fail("attribute '" + name + "' must be a TENSOR");
  return &a->t();
}

void NodeCtx::set(size_t i, Tensor t) {
  if (i >= out_.size()) return;
  out_[i] = Val{};
  out_[i].t = std::move(t);
}

void NodeCtx::set_val(size_t i, Val v) {
  if (i < out_.size()) out_[i] = std::move(v);
}

Tensor NodeCtx::materialize(const Val& v) {
  return kiln::onnx::materialize(model_, v);
}

Device NodeCtx::device() const {
  return model_.device;
}

void NodeCtx::set_shape(size_t i, std::vector<SymSize> v, DType dtype, bool scalar) {
  if (i >= out_.size()) return;
  if (scalar && v.size() != 1) fail("internal: a scalar shape value needs one element");
  out_[i] = Val{};
  out_[i].shape = std::move(v);
  out_[i].dtype = dtype;
  if (!scalar) out_[i].dims = {static_cast<int64_t>(out_[i].shape->size())};
}

void NodeCtx::set_known(size_t i, std::vector<SymSize> v, DType dtype, Shape dims) {
  if (i >= out_.size()) return;
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  if (static_cast<int64_t>(v.size()) != n)
    fail("internal: " + std::to_string(v.size()) + " known elements for dims " + shape_str(dims));
  out_[i] = Val{};
  out_[i].shape = std::move(v);
  out_[i].dtype = dtype;
  out_[i].dims = std::move(dims);
}

Tensor NodeCtx::constant(DType dtype, const Shape& shape, const std::vector<double>& values) {
  return model_.constant(dtype, shape, values);
}

Tensor NodeCtx::constant_i64(const std::vector<int64_t>& values, const Shape& shape) {
  return model_.constant(DType::kI64, shape, std::vector<double>(values.begin(), values.end()));
}

std::vector<int64_t> int_elements(const Tensor& t) {
  if (t.dtype() == DType::kI64) return t.to_vector<int64_t>();
  if (t.dtype() == DType::kI32) {
    const std::vector<int32_t> v = t.to_vector<int32_t>();
    return {v.begin(), v.end()};
  }
  std::vector<int64_t> out;
  for (double d : t.to_doubles()) out.push_back(d != 0);  // bool
  return out;
}

void check_size(const NodeCtx& ctx, const Sizes& shape) {
  constexpr int64_t kLimit = int64_t{1} << 31;
  int64_t n = 1;
  for (const SymSize& s : shape) {
    const int64_t d = s.hint();
    if (d < 0) ctx.fail("negative size " + std::to_string(d) + " in " + shape.str());
    if (d > 0 && n > kLimit / d) ctx.fail("shape " + shape.str() + " has more than 2^31 elements");
    n *= d;
  }
}

int64_t axis_of(const NodeCtx& ctx, int64_t axis, int64_t rank) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    ctx.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return a;
}

// ---- CompiledModel ------------------------------------------------------------------------

CompiledModel::CompiledModel(Model model, CompileOptions options)
    : model_(std::move(model)), core_(detail::make_core(std::move(options))) {}

std::vector<Tensor> CompiledModel::operator()(const std::vector<Tensor>& inputs) {
  const auto& infos = model_.inputs();
  if (inputs.size() != infos.size())
    throw Error(invalid_argument(model_.name() + ": " + std::to_string(inputs.size()) +
                                 " inputs given, the model has " + std::to_string(infos.size())));
  std::vector<Tensor> args;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined())
      throw Error(invalid_argument(model_.name() + ": input '" + infos[i].name + "' is undefined"));
    // The element type must be the one the model declares (as Kiln computes it): a silent cast
    // would turn 0.5 into true or 2.7 into 2, where ONNX Runtime reports the mismatch.
    if (inputs[i].dtype() != infos[i].dtype)
      throw Error(invalid_argument(model_.name() + ": input '" + infos[i].name + "' is " +
                                   dtype_name(inputs[i].dtype()) + ", the model expects " +
                                   onnx_type_name(infos[i].onnx_type) + " (computed as " +
                                   dtype_name(infos[i].dtype) + ")"));
    Tensor t = inputs[i].to(model_.device());
    for (size_t d = 0; d < infos[i].dim_params.size() && d < static_cast<size_t>(t.dim()); ++d)
      if (!infos[i].dim_params[d].empty() && t.shape()[d] >= 2)
        maybe_mark_dynamic(t, static_cast<int>(d));
    args.push_back(std::move(t));
  }
  ErasedFn fn = [model = model_](const std::vector<Tensor>& t, const std::vector<Scalar>&) {
    return model(t);
  };
  return detail::call(*core_, args, {}, fn);
}

Expected<std::vector<Tensor>> CompiledModel::run(const std::vector<Tensor>& inputs) {
  try {
    return (*this)(inputs);
  } catch (const Error& e) {
    return e.status();
  }
}

CompileStats CompiledModel::stats() const {
  return detail::stats(*core_);
}

void CompiledModel::wait_ready() const {
  detail::wait_ready(*core_);
}

Status CompiledModel::precompile(const std::vector<std::vector<int64_t>>& input_shapes) {
  const auto& infos = model_.inputs();
  if (input_shapes.size() != infos.size())
    return invalid_argument(model_.name() + ": precompile: " + std::to_string(input_shapes.size()) +
                            " input shapes given, the model has " + std::to_string(infos.size()));
  std::vector<Tensor> args;
  try {
    // Zeros on the host (no device op to compile for them); the call moves them over.
    for (size_t i = 0; i < infos.size(); ++i)
      args.push_back(zeros(Sizes(input_shapes[i]), infos[i].dtype, Device::cpu()));
    (void)(*this)(args);
  } catch (const Error& e) {
    return e.status().with_context("precompiling " + model_.name());
  }
  wait_ready();
  return Status::ok_status();
}
ExplainReport CompiledModel::explain() const {
  ExplainReport r = detail::explain(*core_);
  // Name the ONNX node behind each break of the latest trace.
  const std::vector<std::string>& nodes = model_.impl_->break_nodes;
  if (nodes.size() == r.break_reasons.size())
    for (size_t i = 0; i < nodes.size(); ++i)
      r.break_reasons[i] = nodes[i] + ": " + r.break_reasons[i];
  return r;
}

}  // namespace kiln::onnx
