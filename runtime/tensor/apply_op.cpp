// apply_op: every Tensor op goes through here. Inside a trace it records a node; eagerly it runs
// one op: on the CPU through the interpreter, on a device through a one-node executable from the
// device's eager-op cache.
#include "tensor/apply_op.h"

#include <optional>

#include "capture/trace.h"
#include "eager/interpreter.h"
#include "exec/executable_cache.h"

namespace kiln {

Tensor apply_op(OpKind op, const std::vector<Tensor>& inputs, Attrs attrs, const Loc& loc,
                SymShape target) {
  std::string where = loc_str(loc);
  if (TraceContext* trace = current_trace()) {
    trace->sync_unbacked(inputs);
    std::vector<NodeId> ids;
    for (const Tensor& t : inputs) ids.push_back(trace->node_for(t, where));
    NodeId id = value_or_throw(
        trace->graph().add(op, std::move(ids), std::move(attrs), where, std::move(target)));
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
      set_full_value(
          a, t.impl()->literal_int ? Scalar(*t.impl()->literal_int) : Scalar(*t.impl()->literal));
      a.dtype = t.impl()->meta.dtype;
      ids.push_back(value_or_throw(g.add(OpKind::Full, {}, a)));
    } else {
      ids.push_back(g.add_input(t.meta()));
      args.push_back(t);
    }
  }
  Device dev = device.value_or(Device::cpu());
  // A compaction on a device: its length is an unbacked symbol of the graph's own ShapeEnv,
  // read back by the run (on the CPU the interpreter sizes its result; index -1).
  ShapeEnv env;
  const bool unbacked = op_category(op) == OpCategory::kCompaction && !dev.is_cpu();
  if (unbacked) {
    g.set_shape_env(&env);
    attrs.index =
        env.create_unbacked_symbol(attrs.dims.at(0), "the length of " + std::string(op_name(op)));
  }
  // Eager graphs carry no source locations, so equal ops at different call sites share a key.
  auto added = g.add(op, std::move(ids), std::move(attrs));
  if (!added.ok()) throw Error(added.status().with_context("at " + where));
  g.set_outputs({*added});
  if (unbacked) {
    g.canonicalize(env);
    g.set_shape_env(nullptr);
  }
  if (dev.is_cpu()) {
    std::vector<const HostTensor*> hosts;
    for (const Tensor& t : args) hosts.push_back(t.impl()->host.get());
    auto result = interpret(g, hosts, {});
    if (!result.ok())
      throw Error(result.status().with_context(std::string(op_name(op)) + " at " + where));
    return from_host(std::move(result->at(0)), dev);
  }
  // Device eager: one kernel per op; structurally equal ops share their compiled executable.
  CompileOptions options;
  options.name = op_name(op);
  const GraphKey key(g, Executable::target_key(dev, options));
  const std::shared_ptr<ExecutableCache> cache = eager_executable_cache(dev.id());
  std::shared_ptr<Executable> exe = cache->find(key);
  if (!exe) {
    exe = value_or_throw(Executable::create(g, dev, options));
    cache->insert(key, exe);
  }
  return value_or_throw(exe->run(args, {})).at(0);
}

}  // namespace kiln
