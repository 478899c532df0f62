/// \file executable.h
/// A graph compiled for one device: fused Vulkan kernels with their pipelines, or (for CPU
/// tensors, and as the logged fallback when codegen cannot handle a graph) the interpreter.
///
/// Threads: run() may be called from any number of threads at once. Each device call takes an
/// idle Replayer from the executable's pool (a new one when all are busy), so concurrent calls
/// never share an arena, an output bank or a recording.
///
/// Background compilation (CompileOptions::background): create() returns at once and calls run
/// on the interpreter while a worker thread plans, compiles, creates the pipelines and runs one
/// warm-up dispatch (drivers such as lavapipe compile at the first dispatch); then the device
/// code is published with one atomic store and later calls run it. Everything the device path
/// reads is written before that store and never changed after it.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "exec/replay.h"
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
  /// Where calls run now.
  enum class State : uint8_t {
    kInterpreter,  // CPU tensors, no device lowering, or a failed background compile
    kCompiling,    // on the interpreter while the device code compiles in the background
    kDevice,       // the compiled kernels
  };

  /// Plans, compiles and creates pipelines for `graph` on `device`. With options.background
  /// (and a Vulkan device) that happens on a worker thread (BackgroundCompiler); `warm_constants`
  /// (the graph's constants, by Constant index) then feed its warm-up dispatch, with zeros for
  /// the inputs. Without them the warm-up is skipped.
  static Expected<std::shared_ptr<Executable>> create(Graph graph, Device device,
                                                      const CompileOptions& options,
                                                      std::vector<Tensor> warm_constants = {});
  /// The canonical encoding of what create() depends on besides the graph: the device and the
  /// codegen switches in effect (CompileOptions::fuse / vectorize after the KILN_DISABLE_FUSION
  /// and KILN_DISABLE_VEC4 kill switches). With the graph it makes the GraphKey of the in-memory
  /// caches of executables (graph/graph_key.h). The name is left out: it only labels logs.
  static std::string target_key(Device device, const CompileOptions& options);

  /// inputs[i] feeds Input index i, constants[j] Constant index j. Returns the graph outputs.
  /// `symbol_values`: for a symbolic graph, one value per symbol id (at least num_symbols());
  /// empty: each symbol is read from an input dim that is exactly that symbol. One compiled
  /// plan serves every binding: sizes reach the kernels through a sizes buffer (replay.h).
  ///
  /// Unbacked symbols (ShapeEnv::create_unbacked_symbol): one that an input dim carries is read
  /// from that dim whatever `symbol_values` says; one a MaskedSelect of this graph defines is
  /// known only after the run, and is written to `(*resolved)[symbol]` when `resolved` is given
  /// (grown to fit). Calls where a carried one is below 2 run on the interpreter.
  Expected<std::vector<Tensor>> run(const std::vector<Tensor>& inputs,
                                    const std::vector<Tensor>& constants,
                                    std::span<const int64_t> symbol_values = {},
                                    std::vector<int64_t>* resolved = nullptr);

  /// One more than the largest symbol id the graph's shapes mention (0 for static graphs).
  int num_symbols() const { return num_symbols_; }

  const Graph& graph() const { return graph_; }
  /// The graph the device plan indexes: graph() as codegen lowered it for the device (convs as
  /// im2col + matmul, codegen/lower.h), or graph() itself.
  const Graph& device_graph() const { return lowered_ ? *lowered_ : graph_; }
  /// The kernels, when running on a device (nullptr for the interpreter and while compiling).
  const KernelPlan* plan() const { return on_device() ? &*plan_ : nullptr; }
  bool on_device() const { return state() == State::kDevice; }
  State state() const { return state_.load(std::memory_order_acquire); }
  /// Blocks until a background compile has finished (at once when there is none).
  void wait_ready() const;
  /// Calls `fn` once the background compile has finished (on the worker that finished it), or
  /// at once when there is none; for work that needs the kernels, such as the dump.
  void when_ready(std::function<void(const Executable&)> fn);
  /// Why the background compile failed ("" if it did not).
  std::string background_error() const;
  /// Milliseconds the background compile took on its worker (0 if none finished).
  double background_ms() const;
  /// The Vulkan device it runs on (null for the interpreter).
  const vk::VulkanDevice* vulkan_device() const { return vk_device_.get(); }
  double compile_ms() const { return compile_ms_; }
  /// Memory and recordings of the device path (zeros on the interpreter).
  ReplayReport replay_report() const;

 private:
  /// The symbol values of a call: `given`, or read from the inputs; checked against the inputs.
  Expected<std::vector<int64_t>> bind_symbols(const std::vector<Tensor>& inputs,
                                              std::span<const int64_t> given) const;
  /// Plans, compiles and creates the pipelines and the first replay slot. False (with a logged
  /// warning) when the graph has no device lowering.
  Expected<bool> compile_device(const CompileOptions& options);
  /// The worker's job: compile_device, the warm-up dispatch, then publish (or log the failure).
  void compile_in_background(const CompileOptions& options, const std::vector<Tensor>& constants);
  void publish(State state, std::string error, double ms);
  /// run() without reporting the unbacked symbols it resolved.
  Expected<std::vector<Tensor>> run_bound(const std::vector<Tensor>& inputs,
                                          const std::vector<Tensor>& constants,
                                          std::span<const int64_t> symbol_values);
  Expected<std::vector<Tensor>> run_interpreter(const std::vector<Tensor>& inputs,
                                                const std::vector<Tensor>& constants,
                                                std::span<const int64_t> values);
  Expected<std::vector<Tensor>> run_device(const std::vector<Tensor>& inputs,
                                           const std::vector<Tensor>& constants,
                                           std::span<const int64_t> values);

  Graph graph_;
  std::optional<Graph> lowered_;  // set by compile_device before the plan is published
  int num_symbols_ = 0;
  struct Defined {  // an unbacked symbol a MaskedSelect of this graph defines
    int symbol = -1;
    NodeId node = -1;
    SymInt most;  // the largest length: numel of its data
  };
  std::vector<Defined> defined_;
  std::vector<int> carried_;       // unbacked symbols that input dims bring in
  std::vector<int> used_symbols_;  // the symbols some shape mentions, sorted
  /// TargetCaps::loop_limit of the compiled kernels (0: none). A symbolic call at sizes where
  /// a kernel would loop longer runs on the interpreter (over_loop_limit), warning once.
  uint32_t loop_limit_ = 0;
  mutable std::atomic<bool> loop_limit_warned_{false};
  bool over_loop_limit(std::span<const int64_t> values) const;
  std::vector<SymInt> nonempty_;  // sizes the device kernels read through (run on the interpreter
                                  // when one is 0)
  std::mutex instance_mu_;        // guards the two below
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
  std::atomic<State> state_{State::kInterpreter};
  mutable std::mutex ready_mu_;  // guards the two below; ready_cv_ signals the end of kCompiling
  mutable std::condition_variable ready_cv_;
  std::string background_error_;
  double background_ms_ = 0;
  std::vector<std::function<void(const Executable&)>> on_ready_;
  std::optional<CompileOptions> check_;  // check mode (exec/check.h): the options to check with
};

/// Tests only: background compiles of executables whose name contains `name` fail with an
/// injected error ("" turns it off).
void inject_background_compile_failure(const std::string& name);

}  // namespace kiln
