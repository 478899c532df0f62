#include "capture/host_memo.h"

#include "capture/trace.h"
#include "exec/program.h"

namespace kiln {
namespace {
thread_local HostCallMemo* t_memo = nullptr;
}  // namespace

const std::vector<Tensor>* HostCallMemo::find(const std::string& key, size_t n,
                                              const std::vector<HostTensor>& inputs) const {
  auto it = records_.find(key);
  if (it == records_.end() || n >= it->second.size()) return nullptr;
  const Record& r = it->second[n];
  if (r.inputs.size() != inputs.size()) return nullptr;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!host_equal(r.inputs[i], inputs[i])) return nullptr;
  return &r.outputs;
}

void HostCallMemo::record(const std::string& key, size_t n, std::vector<HostTensor> inputs,
                          std::vector<Tensor> outputs) {
  std::vector<Record>& list = records_[key];
  if (list.size() <= n) list.resize(n + 1);
  list[n] = {std::move(inputs), std::move(outputs)};
}

std::vector<Tensor> run_host_function(const HostFunction& fn, const std::string& name,
                                      const std::vector<Tensor>& inputs, Device device,
                                      const std::string& loc) {
  PauseTrace pause;  // the function runs eagerly, even in the middle of a trace
  std::vector<Tensor> cpu;
  for (const Tensor& t : inputs) cpu.push_back(t.to(Device::cpu()));
  // Within one call of a compiled function, a host function reached again with equal inputs
  // (a later cache entry or the re-trace after a failed value guard) is not called again.
  HostCallMemo* memo = current_host_memo();
  // The closure's type tells apart different functions given the same name at one line.
  const std::string key = name + "@" + loc + "#" + fn.target_type().name();
  size_t occurrence = 0;
  std::vector<HostTensor> seen;
  if (memo) {
    occurrence = memo->next_occurrence(key);
    for (const Tensor& t : cpu) seen.push_back(to_host(t));
    if (const std::vector<Tensor>* done = memo->find(key, occurrence, seen)) {
      std::vector<Tensor> outs;
      for (const Tensor& o : *done) outs.push_back(o.to(device));
      return outs;
    }
  }
  std::vector<Tensor> outs = fn(cpu);
  for (Tensor& o : outs) {
    if (!o.defined() || o.is_traced())
      throw Error(
          invalid_argument("host function '" + name + "' returned an undefined or traced tensor"));
    o = o.to(device);
  }
  if (memo) memo->record(key, occurrence, std::move(seen), outs);
  return outs;
}

HostCallMemo* current_host_memo() {
  return t_memo;
}

HostMemoScope::HostMemoScope(HostCallMemo* memo) : saved_(t_memo) {
  t_memo = memo;
}
HostMemoScope::~HostMemoScope() {
  t_memo = saved_;
}

}  // namespace kiln
