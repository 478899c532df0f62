/// \file executable.h
/// A graph compiled for one device: fused Vulkan kernels with their pipelines, or (for CPU
/// tensors, and as the logged fallback when codegen cannot handle a graph) the interpreter.
#pragma once

#include <memory>
#include <optional>
#include <vector>

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

  /// inputs[i] feeds Input index i, constants[j] Constant index j. Returns the graph outputs.
  Expected<std::vector<Tensor>> run(const std::vector<Tensor>& inputs,
                                    const std::vector<Tensor>& constants);

  const Graph& graph() const { return graph_; }
  /// The kernels, when running on a device (nullptr for the interpreter).
  const KernelPlan* plan() const { return plan_ ? &*plan_ : nullptr; }
  bool on_device() const { return plan_.has_value(); }
  double compile_ms() const { return compile_ms_; }

 private:
  Expected<std::vector<Tensor>> run_interpreter(const std::vector<Tensor>& inputs,
                                                const std::vector<Tensor>& constants);
  Expected<std::vector<Tensor>> run_device(const std::vector<Tensor>& inputs,
                                           const std::vector<Tensor>& constants);

  Graph graph_;
  Device device_ = Device::cpu();
  std::optional<KernelPlan> plan_;
  std::vector<const vk::Pipeline*> pipelines_;
  std::shared_ptr<vk::VulkanDevice> vk_device_;
  double compile_ms_ = 0;
};

}  // namespace kiln
