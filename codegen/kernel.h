/// \file kernel.h
/// What codegen produces: fused kernels as GLSL + SPIR-V with their binding layout, plus the
/// device capabilities codegen chooses variants from. No Vulkan types here.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "codegen/matmul_rates.h"
#include "graph/graph.h"

namespace kiln::cache {
class DiskCache;
}

namespace kiln {

/// The parts of a device that kernel selection depends on (filled from vk::DeviceInfo).
struct TargetCaps {
  uint32_t subgroup_size = 0;
  bool subgroup_shuffle = false;  // GL_KHR_shader_subgroup_shuffle in compute shaders
  bool subgroup_vote = false;     // GL_KHR_shader_subgroup_vote (subgroupAll) in compute shaders
  bool texel_rgba32f = false;     // rgba32f storage texel buffers (imageBuffer loads)
  bool texel_r32f = false;        // r32f storage texel buffers (scalar imageBuffer loads)
  uint64_t max_texel_elements = 0;
  /// maxStorageBufferRange: the most bytes one storage binding may cover (the Vulkan minimum,
  /// 128 MiB, unless the device says more).
  uint64_t max_storage_range = uint64_t{1} << 27;
  /// Every buffer a storage binding can take (maxStorageBufferRange) also fits the texel limit:
  /// an operand whose size is symbolic may then be a texel buffer. Otherwise only operands of
  /// static size within max_texel_elements are (SwiftShader: 65536 texels, 1 MiB).
  bool texels_cover_storage = false;
  /// The same for r32f texels (one float each): every storage buffer's floats, less a margin
  /// for the arena's rounding, fit max_texel_elements, so a scalar operand of symbolic size may
  /// be an r32f texel buffer (lavapipe: 2^27 texels against 2^25 floats).
  bool scalar_texels_cover_storage = false;
  uint32_t max_workgroup_invocations = 128;
  uint32_t max_workgroup_count_x = 65535;
  uint32_t max_shared_memory = 16384;
  bool shader_int64 = false;
  bool storage_buffer_16bit = false;
  bool storage_buffer_8bit = false;
  /// shaderSignedZeroInfNanPreserveFloat32: kernels declare SignedZeroInfNanPreserve, so the
  /// driver keeps IEEE NaN, inf and -0.0 through arithmetic (docs/ops.md, "Floating point").
  bool signed_zero_inf_nan_preserve = false;
  /// Loop iterations one invocation may run, all its loops together, before the driver ends
  /// them early without an error (0: no such limit). Mesa's gallivm (lavapipe, llvmpipe) stops
  /// every loop of an invocation once 65535 iterations have run (counted per SIMD vector of
  /// invocations); codegen keeps kernels under it or reports them unimplemented
  /// (docs/ops.md, "Loop limit").
  uint32_t loop_limit = 0;
  /// The device's measured kernel speeds (runtime/exec/calibration.h), or none: the matmul
  /// kernel choice weighs them (codegen/matmul_choice.h).
  MatmulRates matmul;
  std::string device_key;  // device + driver identity, part of every pipeline-cache key

  /// Capabilities assumed when no device is at hand (GLSL/SPIR-V tests).
  static TargetCaps generic();
};

struct CodegenOptions {
  bool fuse = true;       // false: one kernel per compute op (views still fold into index math)
  bool vectorize = true;  // vec4 loads/stores where legal
  TargetCaps caps;
  /// Where compiled kernels (SPIR-V) and compiled-graph records persist: the device's cache
  /// (null: cache::DiskCache::global()). Preprocessed GLSL, which depends on no device, always
  /// goes to the global one.
  cache::DiskCache* disk_cache = nullptr;
};

enum class KernelVariant {
  kElementwise,
  kElementwiseVec4,
  kReduceThread,
  kReduceWorkgroup,
  kRowNorm,
  kMatmulTiled,
  kMatmulRowBlock,  // f32 A·B / A·Bᵀ of stored operands: register row blocks, no shared memory
  kAttention,       // softmax(chain(Q·Kᵀ))·V with an online softmax (FusionRule::kAttention)
  kWindow,          // conv, max_pool, avg_pool: one invocation per output element, window loop
  kConvGemm,        // f32 conv without groups as an implicit GEMM: register row blocks of channels
  kResample,        // resize, grid_sample: one invocation per output element, weighted taps
  kScatter,         // scatter_elements, scatter_nd: one invocation per output element
  kFft,             // fft, ifft, rfft, irfft: one workgroup per row
  kComplexPart,     // real, imag, abs of complex64, view_as_real / view_as_complex
  kCompaction,      // masked_select, nonzero: one workgroup's stream compaction
  kScan,            // cumsum: teams of invocations scan lines in chunks with a running carry
  kIm2col,          // im2col: a conv's input windows as a matrix, an invocation per 4 elements
};
const char* kernel_variant_name(KernelVariant v);

/// Kernels index elements with uint32 arithmetic: no tensor of a lowered graph may hold more
/// elements (checked when planning static graphs and per call for symbolic ones).
inline constexpr int64_t kMaxKernelElements = 0xFFFFFFFFll;

/// Size slots: at most this many uint slots per kernel.
inline constexpr size_t kMaxSizeSlots = 32;

/// Sizes reach kernels two ways. Constant sizes are GLSL literals. Symbolic sizes are GLSL
/// expressions over size slots: slot i is a `uint` at byte offset 4 i of the kernel's sizes
/// buffer (a uniform buffer at binding `sizes_binding()`, after the tensors) holding
/// `size_slots[i]` evaluated at the call's symbol values. A buffer rather than push constants
/// lets one recorded command buffer serve every size of a shape class (the runtime rewrites
/// the slots before each replay). A slot is either a bare symbol
/// (sizes that are polynomials with non-negative coefficients are computed in the kernel from
/// those, exact in uint arithmetic) or a whole size expression the kernel cannot compute in uint
/// arithmetic (one with subtraction, floordiv, mod, min or max), evaluated on the host.
struct Kernel {
  std::string name;  // "k0_relu" — index and root op
  KernelVariant variant = KernelVariant::kElementwise;
  NodeId root = -1;                 // the node this kernel writes (binding 0)
  std::vector<NodeId> fused_nodes;  // compute nodes folded into this kernel, in graph order
  std::vector<NodeId> bindings;     // binding i holds the value of node bindings[i]; [0] = root
  std::string glsl;                 // preprocessed, self-contained compute shader
  std::vector<uint32_t> spirv;      // filled by compile_kernel
  uint32_t local_size = 1;
  /// Workgroup counts over the symbols, uncapped: evaluate with kernel_groups(), which caps
  /// them at the device limits (every kernel covers its work with grid-stride loops).
  std::array<SymInt, 3> groups{SymInt(1), SymInt(1), SymInt(1)};
  std::vector<SymExpr> size_slots;  // slot i's value; empty when every size is a literal
  /// Loop iterations (an upper bound) one invocation runs per item of its grid-stride loop,
  /// nested loops counting every inner iteration; 0 when the kernel's loops do not grow with
  /// its sizes. kernel_loop_iterations() adds the grid-stride repeats.
  SymInt loop_trips{0};
  /// Loop iterations of the helper functions one trip (or one item, without trips) calls: 1 +
  /// 64 per int64 pair remainder or power (shaders/common/kiln_int64_pairs.glsl), whose loops
  /// run once per bit. kernel_loop_iterations() multiplies it in.
  uint32_t helper_loop_factor = 1;
  std::string cache_key;  // hash of source, options and target; keys the pipeline cache

  /// Row-block matmuls can run as several dispatches over row ranges, each binding a window of
  /// A (binding a_binding) and C (binding 0), when those exceed maxStorageBufferRange. Size slot
  /// rows_slot holds the rows of one dispatch, slot row0_slot its first row (0 when not split).
  struct RowSplit {
    int rows_slot = -1, row0_slot = -1;
    uint32_t a_binding = 1;
    uint64_t a_row_bytes = 0;
    SymInt c_row_elements;        // C's row length (4-byte elements)
    uint32_t rows_per_group = 1;  // groups on row_axis = ceil(rows / rows_per_group)
    uint32_t row_axis = 1;        // the grid axis of row blocks (0 or 1)
    /// C is bound whole and its rows are not contiguous (kMatmulLayout's NCHW stores, indexed
    /// by row0 + i): only A is split into windows.
    bool c_whole = false;
  };
  std::optional<RowSplit> row_split;
  /// Bindings read as rgba32f storage texel buffers (imageBuffer) rather than storage buffers.
  std::vector<uint32_t> texel_bindings;
  /// Bindings read as r32f storage texel buffers (scalar loads; Emitter::set_scalar_texel_loads).
  std::vector<uint32_t> texel_r32f_bindings;

  /// The sizes buffer's binding (meaningful when size_slots is non-empty).
  uint32_t sizes_binding() const { return static_cast<uint32_t>(bindings.size()); }
  /// Tensor bindings plus the sizes buffer.
  uint32_t num_bindings() const {
    return static_cast<uint32_t>(bindings.size() + (size_slots.empty() ? 0 : 1));
  }
  uint32_t sizes_bytes() const { return static_cast<uint32_t>(4 * size_slots.size()); }
};

/// A masked_select kernel's output buffer holds this many elements more than the largest
/// result (numel of its data), for the count: a uint at byte masked_select_count_offset.
inline constexpr int64_t kMaskedSelectExtra = 8;
inline uint64_t masked_select_count_offset(uint64_t most, uint64_t width) {
  return (most * width + 3) / 4 * 4;
}

/// The kernel's workgroup counts at symbol values `values` (one per symbol id; may be empty for
/// static kernels), each capped at `max_count`.
std::array<uint32_t, 3> kernel_groups(const Kernel& k, std::span<const int64_t> values,
                                      const std::array<uint32_t, 3>& max_count);

/// The loop iterations (an upper bound) one invocation of `k` runs at symbol values `values`,
/// its grid-stride repeats at workgroup counts capped at `max_count` included; 0 when the
/// kernel's loops do not grow with its sizes. Compared with TargetCaps::loop_limit.
int64_t kernel_loop_iterations(const Kernel& k, std::span<const int64_t> values,
                               const std::array<uint32_t, 3>& max_count);

/// Lets nlohmann::json (dumps) print symbolic sizes: a number when constant, else "s0*64".
template <typename Json>
void to_json(Json& j, const SymInt& v) {
  if (v.is_constant())
    j = v.constant_value();
  else
    j = v.str();
}

/// Which nodes get their own buffer and why (the fusion decision), and the kernels.
struct KernelPlan {
  std::vector<Kernel> kernels;       // in execution order
  std::vector<NodeId> materialized;  // compute nodes written to memory (kernel roots)
  std::string fusion_log;            // one line per decision, for KILN_LOGS=fusion
  std::string graph_key;             // keys the graph's record in the persistent cache
};

}  // namespace kiln
