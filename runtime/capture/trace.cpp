#include "capture/trace.h"

#include <map>
#include <mutex>

#include "capture/executable.h"
#include "eager/interpreter.h"

namespace kiln {
namespace {

thread_local TraceContext* t_current = nullptr;

}  // namespace

std::string loc_str(const Loc& loc) {
  std::string file = loc.file_name();
  size_t slash = file.find_last_of('/');
  if (slash != std::string::npos) file = file.substr(slash + 1);
  if (file.empty()) return "";
  return file + ":" + std::to_string(loc.line());
}

TraceContext* current_trace() {
  return t_current;
}

TraceScope::TraceScope(std::shared_ptr<TraceContext> trace) : trace_(std::move(trace)) {
  if (t_current) throw Error(invalid_argument("kiln::compile: nested tracing is not supported"));
  t_current = trace_.get();
}

TraceScope::~TraceScope() {
  trace_->active = false;
  t_current = nullptr;
}

Tensor TraceContext::placeholder(NodeId node) {
  auto impl = std::make_shared<TensorImpl>();
  impl->meta = graph.node(node).meta;
  impl->device = device_;
  impl->node = node;
  // The context owns its graph; placeholders keep it alive but are inert once `active` is false.
  impl->trace = std::shared_ptr<TraceContext>(std::shared_ptr<TraceContext>{}, this);
  return Tensor(std::move(impl));
}

Tensor TraceContext::input(const TensorMeta& meta, Device device) {
  device_ = device;
  return placeholder(graph.add_input(meta));
}

NodeId TraceContext::node_for(const Tensor& t, const std::string& loc) {
  TensorImpl* impl = t.impl();
  if (!impl) throw Error(invalid_argument("use of an undefined tensor at " + loc));
  if (impl->trace) {
    if (impl->trace.get() != this || !active)
      throw Error(invalid_argument("a tensor from another (finished) trace was used at " + loc));
    return impl->node;
  }
  if (impl->literal) {
    Attrs a;
    a.scalar = *impl->literal;
    a.dtype = impl->meta.dtype;
    return value_or_throw(graph.add(OpKind::Full, {}, a, loc));
  }
  if (auto it = captured_.find(impl); it != captured_.end()) return it->second;
  NodeId id = graph.add_constant(impl->meta, static_cast<int64_t>(constants.size()), loc);
  constants.push_back({t.impl_ptr(), impl->meta, impl->device, loc});
  captured_[impl] = id;
  return id;
}

Tensor apply_op(OpKind op, const std::vector<Tensor>& inputs, Attrs attrs, const Loc& loc) {
  std::string where = loc_str(loc);
  if (TraceContext* trace = current_trace()) {
    std::vector<NodeId> ids;
    for (const Tensor& t : inputs) ids.push_back(trace->node_for(t, where));
    NodeId id = value_or_throw(trace->graph.add(op, std::move(ids), std::move(attrs), where));
    return trace->placeholder(id);
  }
  // Eager: one op on the inputs' device.
  std::optional<Device> device;
  for (const Tensor& t : inputs) {
    TensorImpl* impl = t.impl();
    if (!impl)
      throw Error(invalid_argument(std::string(op_name(op)) + ": undefined tensor at " + where));
    if (impl->trace)
      throw Error(invalid_argument(std::string(op_name(op)) +
                                   ": a traced tensor escaped its compiled function (used at " +
                                   where + ")"));
    if (impl->literal) continue;
    if (device && *device != impl->device)
      throw Error(invalid_argument(std::string(op_name(op)) + " at " + where +
                                   ": tensors on different devices (" + device->str() + ", " +
                                   impl->device.str() + "); move one with .to()"));
    device = impl->device;
  }
  Graph g;
  std::vector<NodeId> ids;
  std::vector<Tensor> args;
  for (const Tensor& t : inputs) {
    if (t.impl()->literal) {
      Attrs a;
      a.scalar = *t.impl()->literal;
      a.dtype = t.impl()->meta.dtype;
      ids.push_back(value_or_throw(g.add(OpKind::Full, {}, a)));
    } else {
      ids.push_back(g.add_input(t.meta()));
      args.push_back(t);
    }
  }
  // Eager graphs carry no source locations, so equal ops at different call sites share a key.
  auto added = g.add(op, std::move(ids), std::move(attrs));
  if (!added.ok()) throw Error(added.status().with_context("at " + where));
  NodeId out = *added;
  g.set_outputs({out});
  Device dev = device.value_or(Device::cpu());
  if (dev.is_cpu()) {
    std::vector<const HostTensor*> hosts;
    for (const Tensor& t : args) hosts.push_back(t.impl()->host.get());
    auto result = interpret(g, hosts, {});
    if (!result.ok())
      throw Error(result.status().with_context(std::string(op_name(op)) + " at " + where));
    return from_host(std::move(result->at(0)), dev);
  }
  // Device eager: one kernel per op; equal ops share their compiled executable.
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<Executable>> cache;
  std::string key = g.to_string();
  std::shared_ptr<Executable> exe;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) exe = it->second;
  }
  if (!exe) {
    CompileOptions options;
    options.name = op_name(op);
    exe = value_or_throw(Executable::create(g, dev, options));
    std::lock_guard<std::mutex> lock(mu);
    cache.emplace(key, exe);
  }
  return value_or_throw(exe->run(args, {})).at(0);
}

}  // namespace kiln
