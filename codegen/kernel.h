/// \file kernel.h
/// What codegen produces: fused kernels as GLSL + SPIR-V with their binding layout, plus the
/// device capabilities codegen chooses variants from. No Vulkan types here.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace kiln {

/// The parts of a device that kernel selection depends on (filled from vk::DeviceInfo).
struct TargetCaps {
  uint32_t subgroup_size = 0;
  uint32_t max_workgroup_invocations = 128;
  uint32_t max_workgroup_count_x = 65535;
  uint32_t max_shared_memory = 16384;
  bool shader_int64 = false;
  bool storage_buffer_16bit = false;
  bool storage_buffer_8bit = false;
  std::string device_key;  // device + driver identity, part of every pipeline-cache key

  /// Capabilities assumed when no device is at hand (GLSL/SPIR-V tests).
  static TargetCaps generic();
};

struct CodegenOptions {
  bool fuse = true;       // false: one kernel per compute op (views still fold into index math)
  bool vectorize = true;  // vec4 loads/stores where legal
  TargetCaps caps;
};

enum class KernelVariant {
  kElementwise,
  kElementwiseVec4,
  kReduceThread,
  kReduceWorkgroup,
  kRowNorm,
  kMatmulTiled,
};
const char* kernel_variant_name(KernelVariant v);

struct Kernel {
  std::string name;  // "k0_relu" — index and root op
  KernelVariant variant = KernelVariant::kElementwise;
  NodeId root = -1;                 // the node this kernel writes (binding 0)
  std::vector<NodeId> fused_nodes;  // compute nodes folded into this kernel, in graph order
  std::vector<NodeId> bindings;     // binding i holds the value of node bindings[i]; [0] = root
  std::string glsl;                 // preprocessed, self-contained compute shader
  std::vector<uint32_t> spirv;      // filled by compile_kernel
  uint32_t local_size = 1;
  std::array<uint32_t, 3> groups{1, 1, 1};
  std::string cache_key;  // hash of source, options and target; keys the pipeline cache
};

/// Which nodes get their own buffer and why (the fusion decision), and the kernels.
struct KernelPlan {
  std::vector<Kernel> kernels;       // in execution order
  std::vector<NodeId> materialized;  // compute nodes written to memory (kernel roots)
  std::string fusion_log;            // one line per decision, for KILN_LOGS=fusion
};

}  // namespace kiln
