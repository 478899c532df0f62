/// \file lower_internal.h
/// Shared pieces of the kernel builders (codegen/lower*.cpp). Not a public interface.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "codegen/emit.h"
#include "codegen/fusion.h"
#include "codegen/kernel.h"

namespace kiln {

/// KILN_DIV_<name>(t) and KILN_MOD_<name>(t): t / d and t % d for a template's index split
/// (Emitter::udiv / umod: no per-lane division by a symbolic size). Each symbolic divisor
/// takes a size slot, so a kernel defines only those it uses.
inline void add_divisor_macros(Emitter& e, std::map<std::string, std::string>& macros,
                               const std::string& name, const SymInt& d) {
  macros["KILN_DIV_" + name + "(t)"] = e.udiv("(t)", d);
  macros["KILN_MOD_" + name + "(t)"] = e.umod("(t)", d);
}

/// Workgroups for `work` items at `local_size` per group (uncapped: kernel_groups() caps them at
/// the device limit, and kernels use grid-stride loops, so a capped grid still covers everything).
SymInt groups_for(const SymInt& work, uint32_t local_size);
/// unimplemented when an invocation of `k` (static sizes) would run more loop iterations than
/// the target's loop limit (TargetCaps::loop_limit; none when 0).
Status check_loop_limit(const Kernel& k, const TargetCaps& caps);
/// Invocations of a workgroup that shares one line of `len_hint` elements, each looping
/// `passes` times over its 1 / size share: `base`, doubled (up to 1024, the device's
/// maximum and `bytes_per_invocation` x size of shared memory) while an invocation would still
/// loop more than 8192 times, so that lines of up to about 8192 x 1024 / passes elements stay
/// within a loop limit (TargetCaps::loop_limit). A power of two when `base` is one.
uint32_t line_workgroup_size(int64_t len_hint, uint32_t base, uint32_t passes,
                             uint32_t bytes_per_invocation, const TargetCaps& caps);
/// Local size, workgroups and loop trips of a reduce.comp kernel: one workgroup per output
/// (`workgroup`) or one invocation per output, over `r_count` reduced elements (`r_hint` at
/// the hints) with an accumulator of `acc_bytes` in shared memory. Returns the loads per loop
/// iteration of a workgroup's invocation (KILN_STEPS): more than 1 only where the device's
/// workgroups are too small to keep a long row under the loop limit.
uint32_t set_reduce_geometry(Kernel& k, bool workgroup, const SymInt& outputs,
                             const SymInt& r_count, int64_t r_hint, uint32_t acc_bytes,
                             const TargetCaps& caps);
/// log2 of a power of two.
uint32_t log2_u32(uint32_t v);
/// The #extension lines the emitted body needs, and the float-controls execution mode where
/// the target has it.
std::string extensions(const Emitter& e, const TargetCaps& caps);
/// unimplemented when the body needs a feature the device lacks.
Status check_caps(const Emitter& e, const std::string& name, const TargetCaps& caps);
/// A kernel for `root`: the emitter's bindings, the fused nodes (root included) in graph
/// order, the variant and the root op's name; unimplemented if the body needs a device feature
/// the target lacks.
Expected<Kernel> start_kernel(const Emitter& e, const Node& root, KernelVariant variant,
                              const TargetCaps& caps);
/// Scalar f32 loads of `e` through r32f texel buffers where the device has them
/// (Emitter::set_scalar_texel_loads); operands of symbolic size only where every storage
/// buffer fits the texel limit (TargetCaps::scalar_texels_cover_storage).
inline void use_scalar_texels(Emitter& e, const TargetCaps& caps) {
  if (caps.texel_r32f)
    e.set_scalar_texel_loads(caps.max_texel_elements, caps.scalar_texels_cover_storage);
}

/// Preprocesses `template_name` with the macros, the generated extensions and kernel body, and
/// records the emitter's size slots in `k` (unimplemented beyond
/// kMaxSizeSlots). Call after every Emitter::size() of the kernel.
Expected<std::string> kernel_source(const std::string& template_name, const Emitter& e,
                                    const std::string& body,
                                    std::map<std::string, std::string> macros, Kernel& k,
                                    const TargetCaps& caps);

/// The type values of `dtype` are compared in by the ordering kernels (topk_indices,
/// sort_slices): f16 as f32, bool as i32, the rest as themselves.
inline DType ordering_type(DType dtype) {
  return dtype == DType::kF16 ? DType::kF32 : dtype == DType::kBool ? DType::kI32 : dtype;
}

/// `<type of to> name(uint j)`: node `in`'s element at flat position j, converted to `to`'s
/// compute type, its elementwise producers folded in (for kernels that read an input at
/// positions they compute: the ordering, det and NMS kernels). Resets the emitter's scope.
std::string element_accessor(Emitter& e, const Node& in, const std::string& name, DType to);

/// kernel_source on shaders/scatter.comp's driver: `code` (kiln_element(uint o) and what it
/// calls) after the emitter's declarations, KILN_LOCAL_SIZE from `k`, KILN_OUTPUTS `outputs`
/// (the element count, taken with Emitter::size before this call).
Expected<std::string> scatter_driver_source(const Emitter& e, const std::string& code,
                                            const std::string& outputs, Kernel& k,
                                            const TargetCaps& caps);

/// Softmax, LogSoftmax and LayerNorm: one workgroup per normalised row (codegen/lower_norm.cpp).
Expected<Kernel> norm_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                             const CodegenOptions& opt);

/// CumSum as a linear-work scan: teams of invocations walk each line in chunks with a running
/// carry (codegen/lower_scan.cpp, shaders/scan.comp).
Expected<Kernel> cumsum_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                               const CodegenOptions& opt);

/// A LayerNorm spelled out as ops (fusion.layer_norm_of[root], FusionRule::kLayerNorm) on the
/// row-norm kernel.
Expected<Kernel> layer_norm_pattern_kernel(const Graph& g, const FusionDecision& fusion,
                                           NodeId root, const CodegenOptions& opt);

/// The stored node whose buffer holds `id`: itself, or the source of a chain of unstored
/// reshapes (a reshape never changes the row-major layout: embedding's [b*s, d] -> [b, s, d]).
NodeId storage_of(const Graph& g, const FusionDecision& f, NodeId id);

/// Whether the target runs the row-block matmul kernel: subgroup shuffles over 8+ lanes.
inline bool rowblock_supported(const TargetCaps& caps) {
  return caps.subgroup_shuffle && caps.subgroup_size >= 8 && caps.max_workgroup_invocations >= 64;
}
/// MatMul fast path (codegen/lower_matmul_rowblock.cpp), chosen by matmul_uses_rowblock
/// (codegen/matmul_choice.h).
/// With `layout_root` (a kMatmulLayout permute), C [N·H·W, C_out] is stored as that NCHW
/// tensor instead.
Expected<Kernel> matmul_rowblock_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                                        const CodegenOptions& opt, NodeId epilogue_root,
                                        NodeId layout_root = -1);
/// The GLSL statements and value that store element `linear` of a matmul kernel's output: the
/// matmul value `acc` (a GLSL expression) itself, or, with an epilogue root, the root's
/// elementwise chain applied to it (kMatmulEpilogue). Returns the statements; `*value` is the
/// storage-typed expression to write.
std::string matmul_output_value(Emitter& e, const Graph& g, NodeId matmul, NodeId epilogue_root,
                                const std::string& linear, const std::string& acc, DType acc_type,
                                std::string* value);

/// An epilogue kernel computes the matmul too: adds it to the fused nodes and names the kernel
/// for both ops ("matmul_add").
void mark_epilogue(Kernel& k, const Node& matmul, const Node& root);

/// The flash-attention kernel writing `root` (fusion.attention_of[root];
/// codegen/lower_attention.cpp).
Expected<Kernel> attention_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                                  const CodegenOptions& opt);
/// Whether the target runs it: subgroup shuffles over at least 4 lanes.
inline bool attention_supported(const TargetCaps& caps) {
  return caps.subgroup_shuffle && caps.subgroup_vote && caps.subgroup_size >= 4 &&
         caps.max_workgroup_invocations >= 64;
}
/// Lanes of a subgroup that share one K / V row in the attention kernel: 8, or 4 on devices
/// whose subgroups are 4 wide (SwiftShader, some mobile GPUs).
inline uint32_t attention_lanes(const TargetCaps& caps) {
  return caps.subgroup_size >= 8 ? 8 : 4;
}

/// MatMul: tiled, shared-memory staged, batched (codegen/lower_matmul.cpp). `root` is the
/// matmul; `epilogue_root` (or -1) the stored node of its kMatmulEpilogue chain, which the
/// kernel writes instead of the product.
Expected<Kernel> matmul_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                               const CodegenOptions& opt, NodeId epilogue_root = -1);

/// A f32 max pool over [N, 1, H, W, C] with a window of 1 along C, C a multiple of 4 (the conv
/// lowering's pool over an NHWC product): an invocation per position and 4 channels, vec4 loads
/// and stores (codegen/lower_pool_channels.cpp). window_kernel calls it.
bool pool_channels_applies(const Graph& g, const Node& n);
Expected<Kernel> pool_channels_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                                      const CodegenOptions& opt);

/// depthwise_nhwc (lower_depthwise_nhwc.cpp) that stores `exit`, the end of its kWindowEpilogue
/// region, instead of its own output.
Expected<Kernel> depthwise_nhwc_epilogue_kernel(const Graph& g, const FusionDecision& fusion,
                                                NodeId root, const CodegenOptions& opt,
                                                KernelVariant variant, NodeId exit);

/// Conv, MaxPool, AvgPool: one invocation per output element looping over its window, the
/// inputs' elementwise producers folded into the loads (codegen/lower_window.cpp).
Expected<Kernel> window_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                               const CodegenOptions& opt);

/// Resize and GridSample: one invocation per output element gathering its taps with weights
/// (codegen/lower_resize.cpp, shaders/resample.comp).
Expected<Kernel> resample_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                                 const CodegenOptions& opt);
/// The kernel builder of every KILN_KERNEL_OP row of graph/ops.def: `<stem>_kernel` in
/// codegen/lower_<stem>.cpp; `variant` is the row's KernelVariant, which the kernel reports.
#define KILN_OP(e, name, cat, arity, attrs)
#define KILN_KERNEL_OP(e, name, cat, arity, attrs, variant, stem)                           \
  Expected<Kernel> stem##_kernel(const Graph& g, const FusionDecision& fusion, NodeId root, \
                                 const CodegenOptions& opt, KernelVariant variant);
#include "graph/ops.def"
#undef KILN_KERNEL_OP
#undef KILN_OP
/// ScatterElements and ScatterND: one invocation per output element applying the updates that
/// land on it in order (codegen/lower_scatter.cpp, shaders/scatter.comp).
Expected<Kernel> scatter_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                                const CodegenOptions& opt);

/// The Spectral ops (codegen/lower_fft.cpp, shaders/fft.comp): the FFTs one workgroup per row
/// (a shared-memory Stockham radix-2 FFT for powers of two, a direct DFT otherwise); real,
/// imag, abs, view_as_real and view_as_complex one invocation per output element.
Expected<Kernel> spectral_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                                 const CodegenOptions& opt);

/// MaskedSelect (codegen/lower_select.cpp, shaders/select.comp): one workgroup's stream
/// compaction; the count follows the largest possible result.
Expected<Kernel> select_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                               const CodegenOptions& opt);

/// ConvTranspose as a gather: one invocation per output position and block of output channels
/// (codegen/lower_conv_transpose.cpp, shaders/conv_transpose.comp); window_kernel calls it.
Expected<Kernel> conv_transpose_kernel(const Graph& g, const FusionDecision& fusion, NodeId root,
                                       const CodegenOptions& opt);

/// Conv as an implicit GEMM (codegen/lower_conv_gemm.cpp, shaders/conv_gemm.comp): f32, no
/// groups, at least 16 output channels, on targets with the row-block kernel's subgroup
/// shuffles. window_kernel emits it with window.comp's functions and macros plus
/// KILN_POSITIONS (N times the output's spatial sizes).
inline constexpr uint32_t kConvGemmLocalSize = 32;
bool conv_gemm_applies(const Graph& g, const Node& conv, const TargetCaps& caps);
/// Output channels per invocation for `c_out` of them: 32, or fewer channels rounded up to a
/// multiple of 8 (a 16-channel stem would otherwise compute twice its outputs).
uint32_t conv_gemm_rows(int64_t c_out);
/// kiln_conv_block(rb, cb): `rows` output channels x `cols` positions per lane.
std::string conv_gemm_block(uint32_t rows, uint32_t cols);
/// Workgroups along x: blocks of `rows` output channels.
SymInt conv_gemm_row_blocks(const SymInt& channels, uint32_t rows);

}  // namespace kiln
