// compile_kernels: GLSL -> SPIR-V for a kernel plan through the persistent cache, and the
// persisted record of each compiled graph (its kernel keys), logged under KILN_LOGS=cache.
#include <algorithm>
#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cache/disk_cache.h"
#include "codegen/lower.h"
#include "codegen/spirv.h"
#include "graph/graph_key.h"
#include "kiln/logging.h"

namespace kiln {
namespace {

/// The record of a compiled graph: one "name key" line per kernel, in execution order.
std::string entry_payload(const KernelPlan& plan) {
  std::string s = "kernels " + std::to_string(plan.kernels.size()) + "\n";
  for (const Kernel& k : plan.kernels) s += k.name + " " + k.cache_key + "\n";
  return s;
}

/// The first kernel whose key differs between two records, for the log.
std::string first_difference(const std::string& stored, const std::string& now) {
  size_t a = 0, b = 0;
  while (a < stored.size() && b < now.size()) {
    const size_t ea = stored.find('\n', a), eb = now.find('\n', b);
    std::string la = stored.substr(a, ea - a), lb = now.substr(b, eb - b);
    if (la != lb) return "stored '" + la + "', now '" + lb + "'";
    if (ea == std::string::npos || eb == std::string::npos) break;
    a = ea + 1;
    b = eb + 1;
  }
  return "kernel count differs";
}

}  // namespace

std::string codegen_target_key(const CodegenOptions& options) {
  KeyWriter w;
  w.str("codegen");
  w.boolean(options.fuse);
  w.boolean(options.vectorize);
  // Every capability, in declaration order: the structured binding stops compiling when a field
  // is added to TargetCaps (add it here and bump kGraphKeyFormat).
  const auto& [subgroup_size, subgroup_shuffle, subgroup_vote, texel_rgba32f, texel_r32f,
               max_texel_elements, max_storage_range, texels_cover_storage,
               scalar_texels_cover_storage, max_workgroup_invocations, max_workgroup_count_x,
               max_shared_memory, shader_int64, storage_buffer_16bit, storage_buffer_8bit,
               signed_zero_inf_nan_preserve, loop_limit, matmul, device_key] = options.caps;
  w.u32(subgroup_size);
  w.boolean(subgroup_shuffle);
  w.boolean(subgroup_vote);
  w.boolean(texel_rgba32f);
  w.boolean(texel_r32f);
  w.u64(max_texel_elements);
  w.u64(max_storage_range);
  w.boolean(texels_cover_storage);
  w.boolean(scalar_texels_cover_storage);
  w.u32(max_workgroup_invocations);
  w.u32(max_workgroup_count_x);
  w.u32(max_shared_memory);
  w.boolean(shader_int64);
  w.boolean(storage_buffer_16bit);
  w.boolean(storage_buffer_8bit);
  w.boolean(signed_zero_inf_nan_preserve);
  w.u32(loop_limit);
  // The matmul kernel choice follows the measured rates: a graph compiled under other rates
  // (or under none) is another entry.
  w.boolean(matmul.measured);
  w.f64(matmul.rowblock_flops_per_ms);
  w.f64(matmul.tiled_flops_per_ms);
  w.f64(matmul.copy_bytes_per_ms);
  w.u8(static_cast<uint8_t>(matmul.force));
  w.u64(matmul.max_binding_bytes);
  w.str(device_key);
  return w.take();
}

std::string graph_cache_key(const Graph& graph, const CodegenOptions& options) {
  return GraphKey(graph, codegen_target_key(options)).hex();
}

Status compile_kernels(KernelPlan& plan, const CodegenOptions& options) {
  for (Kernel& k : plan.kernels)
    k.cache_key = stable_hash(k.glsl + "|ls=" + std::to_string(k.local_size) +
                              "|shaderc:vulkan1.2:spv1.3:O|" + options.caps.device_key);
  const std::string& identity = options.caps.device_key;
  cache::DiskCache& disk =
      options.disk_cache != nullptr ? *options.disk_cache : cache::DiskCache::global();
  const bool persist = !identity.empty() && !plan.graph_key.empty() && disk.enabled();
  const std::string payload = entry_payload(plan);
  const std::string label =
      "graph " + plan.graph_key + " (" + std::to_string(plan.kernels.size()) + " kernels)";
  bool entry_valid = false;
  if (persist) {
    std::optional<std::string> stored =
        disk.load(cache::EntryKind::kEntry, plan.graph_key, identity, label);
    if (stored && *stored != payload)
      log(LogTopic::kCache,
          "entry " + label + ": stale (" + first_difference(*stored, payload) + ") - rewriting");
    entry_valid = stored && *stored == payload;
  }
  const ShaderCompileStats before = shader_compile_stats();
  // Kernels compile side by side (glslang and spirv-opt take one core each; the memo and the
  // disk cache are thread-safe); the first error in kernel order is returned.
  std::vector<Status> status(plan.kernels.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < plan.kernels.size(); i = next++) {
      Kernel& k = plan.kernels[i];
      PersistentKey key;
      if (persist) key = {k.cache_key, identity, &disk};
      Expected<std::vector<uint32_t>> spirv = compile_glsl(k.glsl, k.name, key);
      if (spirv.ok()) {
        k.spirv = std::move(spirv).value();
      } else {
        status[i] = spirv.status();
      }
    }
  };
  const size_t threads =
      std::min<size_t>({plan.kernels.size(), std::max(1U, std::thread::hardware_concurrency()), 8});
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (const Status& st : status) KILN_RETURN_IF_ERROR(st);
  if (!persist) return {};
  const ShaderCompileStats after = shader_compile_stats();
  const uint64_t compiled = after.compiles - before.compiles;
  if (entry_valid && log_enabled(LogTopic::kCache))
    log(LogTopic::kCache,
        "entry " + label + ": " +
            (compiled == 0
                 ? "hit, no kernel compiled (" +
                       std::to_string(after.disk_hits - before.disk_hits) + " from disk, " +
                       std::to_string(after.memo_hits - before.memo_hits) + " from memory)"
                 : "partial hit, " + std::to_string(compiled) +
                       " kernel(s) recompiled (SPIR-V file missing or rejected)"));
  if (!entry_valid) disk.store(cache::EntryKind::kEntry, plan.graph_key, identity, label, payload);
  return {};
}

}  // namespace kiln
