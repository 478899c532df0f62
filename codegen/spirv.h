/// \file spirv.h
/// GLSL -> SPIR-V with glslang + spirv-opt (templates from shaders/, embedded at build time),
/// validation with SPIRV-Tools, and disassembly. Compiled modules are memoised in-process by source
/// hash. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln::cache {
class DiskCache;
}

namespace kiln {

/// Source of an embedded template or include ("elementwise.comp", "common/kiln_common.glsl").
Expected<std::string> embedded_shader(const std::string& name);

/// Expands `template_name` with the given macros and virtual include files into one
/// self-contained GLSL source (what dumps show and what the cache key hashes).
Expected<std::string> preprocess_glsl(const std::string& template_name,
                                      const std::map<std::string, std::string>& macros,
                                      const std::map<std::string, std::string>& virtual_files);

/// Where a compiled module may also be kept across processes (runtime/cache, docs/cache.md):
/// `key` names the file (Kernel::cache_key), `identity` the device + driver it was compiled for
/// (TargetCaps::device_key). An empty key or identity keeps the module in this process only.
struct PersistentKey {
  std::string key;
  std::string identity;
  cache::DiskCache* disk = nullptr;  // null: cache::DiskCache::global()
};

/// Compiles a self-contained compute shader for Vulkan 1.2 and runs spirv-val on the result.
/// Errors carry shaderc's or the validator's diagnostics. With a persistent key, a valid file
/// in the disk cache replaces the compile, and a compiled module is written there.
Expected<std::vector<uint32_t>> compile_glsl(const std::string& source, const std::string& name,
                                             const PersistentKey& persist = {});

/// Runs the SPIR-V validator (target Vulkan 1.2).
Status validate_spirv(const std::vector<uint32_t>& spirv);
/// Human-readable disassembly (.spvasm).
Expected<std::string> disassemble_spirv(const std::vector<uint32_t>& spirv);

/// 64-bit FNV-1a, as 16 hex digits: deterministic across runs and platforms.
std::string stable_hash(const std::string& data);

struct ShaderCompileStats {
  uint64_t compiles = 0;   // GLSL -> SPIR-V compilations
  uint64_t memo_hits = 0;  // modules served from the in-process memo
  uint64_t disk_hits = 0;  // modules read from the persistent cache (no compile)
};
ShaderCompileStats shader_compile_stats();

}  // namespace kiln
