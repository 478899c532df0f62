/// \file lower.h
/// The codegen pipeline: fusion decision -> one kernel per stored node -> GLSL from the
/// templates in shaders/ -> SPIR-V (shaderc) -> spirv-val.
#pragma once

#include <optional>

#include "codegen/kernel.h"
#include "kiln/status.h"

namespace kiln {

/// The graph a device with `caps` runs for `graph`: convs the row-block product serves become
/// im2col + matmul + a view back to NCHW (codegen/conv_lowering.cpp); nullopt when nothing
/// changes. Inputs, constants and outputs keep their order; node ids do not.
Expected<std::optional<Graph>> lower_for_device(const Graph& graph, const TargetCaps& caps);

/// Fuses and emits GLSL for every kernel of `graph` (SPIR-V not yet compiled).
/// Unsupported dtype/feature combinations return unimplemented (the caller falls back).
Expected<KernelPlan> plan_kernels(const Graph& graph, const CodegenOptions& options);

/// Compiles every kernel's GLSL to validated SPIR-V and sets its cache key; SPIR-V comes from
/// the persistent cache when it holds it (codegen/compile_cache.cpp, docs/cache.md).
Status compile_kernels(KernelPlan& plan, const CodegenOptions& options);

/// Key of the persisted record of `graph` compiled with `options`: GraphKey::hex() of the graph
/// (its structure, graph/graph_key.h) under codegen_target_key(options).
std::string graph_cache_key(const Graph& graph, const CodegenOptions& options);
/// The canonical encoding of `options` (fusion and vec4 switches, every target capability and
/// the device identity) as a GraphKey target.
std::string codegen_target_key(const CodegenOptions& options);

}  // namespace kiln
