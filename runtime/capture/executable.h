/// \file executable.h
/// A graph compiled for one device: fused Vulkan kernels with their pipelines, or (for CPU
/// tensors, and as the logged fallback when codegen cannot handle a graph) the interpreter.
///
/// Threads: run() may be called from any number of threads at once. Each device call takes an
/// idle Replayer from the executable's pool (a new one when all are busy), so concurrent calls
/// never share an arena, an output bank or a recording.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "capture/replay.h"
#include "codegen/kernel.h"
#include "graph/graph.h"
#include "kiln/compile.h"
#include "kiln/tensor.h"

namespace kiln {

namespace vk {
struct Pipeline;
class VulkanDevice;
}  // namespace vk

class Executable {
 public:
  /// Plans, compiles and creates pipelines for `graph` on `device`.
  static Expected<std::shared_ptr<Executable>> create(Graph graph, Device device,
                                                      const CompileOptions& options);
  /// The canonical encoding of what create() depends on besides the graph: the device and the
  /// codegen switches in effect (CompileOptions::fuse / vectorize after the KILN_DISABLE_FUSION
  /// and KILN_DISABLE_VEC4 kill switches). With the graph it makes the GraphKey of the in-memory
  /// caches of executables (graph/graph_key.h). The name is left out: it only labels logs.
  static std::string target_key(Device device, const CompileOptions& options);

  /// inputs[i] feeds Input index i, constants[j] Constant index j. Returns the graph outputs.
  /// `symbol_values`: for a symbolic graph, one value per symbol id (at least num_symbols());
  /// empty: each symbol is read from an input dim that is exactly that symbol. One compiled
  /// plan serves every binding: sizes reach the kernels through a sizes buffer (replay.h).
  Expected<std::vector<Tensor>> run(const std::vector<Tensor>& inputs,
                                    const std::vector<Tensor>& constants,
                                    std::span<const int64_t> symbol_values = {});

  /// One more than the largest symbol id the graph's shapes mention (0 for static graphs).
  int num_symbols() const { return num_symbols_; }

  const Graph& graph() const { return graph_; }
  /// The kernels, when running on a device (nullptr for the interpreter).
  const KernelPlan* plan() const { return plan_ ? &*plan_ : nullptr; }
  bool on_device() const { return plan_.has_value(); }
  /// The Vulkan device it runs on (null for the interpreter).
  const vk::VulkanDevice* vulkan_device() const { return vk_device_.get(); }
  double compile_ms() const { return compile_ms_; }
  /// Memory and recordings of the device path (zeros on the interpreter).
  ReplayReport replay_report() const;

 private:
  /// The symbol values of a call: `given`, or read from the inputs; checked against the inputs.
  Expected<std::vector<int64_t>> bind_symbols(const std::vector<Tensor>& inputs,
                                              std::span<const int64_t> given) const;
  Expected<std::vector<Tensor>> run_interpreter(const std::vector<Tensor>& inputs,
                                                const std::vector<Tensor>& constants,
                                                std::span<const int64_t> values);
  Expected<std::vector<Tensor>> run_device(const std::vector<Tensor>& inputs,
                                           const std::vector<Tensor>& constants,
                                           std::span<const int64_t> values);

  Graph graph_;
  int num_symbols_ = 0;
  std::vector<int> used_symbols_;  // the symbols some shape mentions, sorted
  std::vector<SymInt> nonempty_;   // sizes the device kernels read through (run on the interpreter
                                   // when one is 0)
  std::mutex instance_mu_;         // guards the two below
  std::vector<int64_t> instance_values_;   // the binding `instance_` was made for
  std::shared_ptr<const Graph> instance_;  // interpreter: the last instantiation
  Device device_ = Device::cpu();
  std::optional<KernelPlan> plan_;
  std::vector<const vk::Pipeline*> pipelines_;
  std::shared_ptr<vk::VulkanDevice> vk_device_;
  std::string name_;
  /// The replay slots (after plan_ and pipelines_: they refer to them). A call takes one from
  /// idle_ and puts it back when done; a new one is made when every slot is busy.
  mutable std::mutex pool_mu_;  // guards the two below
  std::vector<std::unique_ptr<Replayer>> replayers_;
  std::vector<Replayer*> idle_;
  double compile_ms_ = 0;
  std::optional<CompileOptions> check_;  // check mode (capture/check.h): the options to check with
};

}  // namespace kiln
