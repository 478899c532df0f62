#include "capture/host_memo.h"

#include "capture/program.h"

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
