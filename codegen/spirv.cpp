#include "codegen/spirv.h"

#include <glslang/Public/ResourceLimits.h>
#include <glslang/Public/ShaderLang.h>
#include <glslang/SPIRV/GlslangToSpv.h>
#include <glslang/build_info.h>
#include <spirv-tools/libspirv.hpp>
#include <spirv-tools/optimizer.hpp>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "cache/disk_cache.h"
#include "kiln/logging.h"

namespace kiln {

extern const std::pair<std::string_view, std::string_view> kEmbeddedShaders[];
extern const int kEmbeddedShaderCount;

#define KILN_STR2(x) #x
#define KILN_STR(x) KILN_STR2(x)
#define GLSLANG_VERSION_STRING_FOR_KILN \
  KILN_STR(GLSLANG_VERSION_MAJOR)       \
  "." KILN_STR(GLSLANG_VERSION_MINOR) "." KILN_STR(GLSLANG_VERSION_PATCH)

namespace {

struct Memo {
  std::mutex mu;
  std::unordered_map<std::string, std::vector<uint32_t>> modules;
  ShaderCompileStats stats;
};
Memo& memo() {
  static Memo m;
  return m;
}

/// glslang's process-wide state, initialised once and kept for the life of the process.
void ensure_glslang() {
  static const bool initialised = [] { return glslang::InitializeProcess(); }();
  (void)initialised;
}

/// Resolves #include against virtual files first, then the embedded shaders/ tree.
class Includer : public glslang::TShader::Includer {
 public:
  explicit Includer(const std::map<std::string, std::string>& files) : files_(files) {}

  IncludeResult* includeLocal(const char* name, const char*, size_t) override {
    return includeSystem(name, nullptr, 0);
  }
  IncludeResult* includeSystem(const char* name, const char*, size_t) override {
    std::string content;
    if (auto it = files_.find(name); it != files_.end()) {
      content = it->second;
    } else if (auto e = embedded_shader(name); e.ok()) {
      content = *e;
    } else {
      return nullptr;  // glslang reports the missing include
    }
    auto* text = new std::string(std::move(content));
    return new IncludeResult(name, text->data(), text->size(), text);
  }
  void releaseInclude(IncludeResult* result) override {
    if (!result) return;
    delete static_cast<std::string*>(result->userData);
    delete result;
  }

 private:
  const std::map<std::string, std::string>& files_;
};

constexpr auto kMessages =
    static_cast<EShMessages>(EShMsgDefault | EShMsgSpvRules | EShMsgVulkanRules);

/// The compiler half of a persistent SPIR-V file's identity (the device half is the caller's).
constexpr const char* kCompilerIdentity =
    "|glslang " GLSLANG_VERSION_STRING_FOR_KILN " vulkan1.2 spv1.3 spirv-opt-performance";

/// A persisted module from the disk cache, if there is a valid one (a non-SPIR-V payload is
/// rejected like a corrupt file).
std::optional<std::vector<uint32_t>> load_persisted(const PersistentKey& persist,
                                                    const std::string& name) {
  cache::DiskCache& disk = persist.disk != nullptr ? *persist.disk : cache::DiskCache::global();
  std::optional<std::string> bytes = disk.load(
      cache::EntryKind::kSpirv, persist.key, persist.identity + kCompilerIdentity, name);
  if (!bytes) return std::nullopt;
  std::vector<uint32_t> words(bytes->size() / 4);
  if (!words.empty()) std::memcpy(words.data(), bytes->data(), words.size() * 4);
  if (bytes->size() % 4 != 0 || words.size() < 5 || words[0] != 0x07230203u) {
    log(LogTopic::kCache, "spirv " + name + ": rejected (payload is not SPIR-V) - rebuilding");
    return std::nullopt;
  }
  return words;
}

/// What a preprocessed source depends on besides the embedded shaders: template, macros and
/// virtual include files, spelled out (stored in the cache file and compared on a hit).
std::string preprocess_inputs(const std::string& template_name,
                              const std::map<std::string, std::string>& macros,
                              const std::map<std::string, std::string>& virtual_files) {
  std::string s = "template " + template_name + "\n";
  for (const auto& [k, v] : macros) s += "macro " + k + "=" + v + "\n";
  for (const auto& [k, v] : virtual_files)
    s += "file " + k + " " + std::to_string(v.size()) + "\n" + v + "\n";
  return s + "\x01\n";
}

/// The identity of preprocessed sources: the preprocessor and every embedded shader.
const std::string& preprocess_identity() {
  static const std::string id = [] {
    std::string all;
    for (int i = 0; i < kEmbeddedShaderCount; ++i)
      all.append(kEmbeddedShaders[i].first).append(1, '\0').append(kEmbeddedShaders[i].second);
    return "glslang " GLSLANG_VERSION_STRING_FOR_KILN " preprocessor; shaders " + stable_hash(all);
  }();
  return id;
}

void configure(glslang::TShader& shader) {
  shader.setEnvInput(glslang::EShSourceGlsl, EShLangCompute, glslang::EShClientVulkan, 100);
  shader.setEnvClient(glslang::EShClientVulkan, glslang::EShTargetVulkan_1_2);
  shader.setEnvTarget(glslang::EShTargetSpv, glslang::EShTargetSpv_1_3);
}

}  // namespace

Expected<std::string> embedded_shader(const std::string& name) {
  for (int i = 0; i < kEmbeddedShaderCount; ++i)
    if (kEmbeddedShaders[i].first == name) return std::string(kEmbeddedShaders[i].second);
  return invalid_argument("no embedded shader named '" + name + "'");
}

Expected<std::string> preprocess_glsl(const std::string& template_name,
                                      const std::map<std::string, std::string>& macros,
                                      const std::map<std::string, std::string>& virtual_files) {
  // Preprocessing needs glslang's built-in symbol tables (tens of ms to set up per process): the
  // persistent cache keeps its output so that a warm process never starts glslang.
  const std::string inputs = preprocess_inputs(template_name, macros, virtual_files);
  const std::string key = stable_hash(inputs);
  cache::DiskCache& disk = cache::DiskCache::global();
  if (std::optional<std::string> hit =
          disk.load(cache::EntryKind::kGlsl, key, preprocess_identity(), template_name)) {
    if (hit->starts_with(inputs)) return hit->substr(inputs.size());
    log(LogTopic::kCache, "glsl " + template_name + ": rejected (inputs differ) - rebuilding");
  }
  ensure_glslang();
  KILN_ASSIGN_OR_RETURN(std::string source, embedded_shader(template_name));
  std::string preamble;
  for (const auto& [k, v] : macros) preamble += "#define " + k + " " + v + "\n";
  glslang::TShader shader(EShLangCompute);
  const char* text = source.c_str();
  const char* name = template_name.c_str();
  shader.setStringsWithLengthsAndNames(&text, nullptr, &name, 1);
  shader.setPreamble(preamble.c_str());
  configure(shader);
  Includer includer(virtual_files);
  std::string out;
  if (!shader.preprocess(GetDefaultResources(), 450, ENoProfile, false, false, kMessages, &out,
                         includer))
    return internal_error("preprocessing " + template_name + " failed:\n" + shader.getInfoLog());
  disk.store(cache::EntryKind::kGlsl, key, preprocess_identity(), template_name, inputs + out);
  return out;
}

Expected<std::vector<uint32_t>> compile_glsl(const std::string& source, const std::string& name,
                                             const PersistentKey& persist) {
  // The memo is keyed by the whole source, so no two kernels can share an entry by a hash
  // collision.
  const std::string& key = source;
  {
    Memo& m = memo();
    std::lock_guard<std::mutex> lock(m.mu);
    if (auto it = m.modules.find(key); it != m.modules.end()) {
      ++m.stats.memo_hits;
      return it->second;
    }
  }
  const bool persistent = !persist.key.empty() && !persist.identity.empty();
  if (persistent) {
    if (std::optional<std::vector<uint32_t>> words = load_persisted(persist, name)) {
      Memo& m = memo();
      std::lock_guard<std::mutex> lock(m.mu);
      ++m.stats.disk_hits;
      m.modules.emplace(key, *words);
      return std::move(*words);
    }
  }
  ensure_glslang();
  glslang::TShader shader(EShLangCompute);
  const char* text = source.c_str();
  const char* file = name.c_str();
  shader.setStringsWithLengthsAndNames(&text, nullptr, &file, 1);
  configure(shader);
  std::map<std::string, std::string> no_files;
  Includer includer(no_files);
  if (!shader.parse(GetDefaultResources(), 450, false, kMessages, includer))
    return internal_error("GLSL compile of kernel " + name + " failed:\n" + shader.getInfoLog());
  glslang::TProgram program;
  program.addShader(&shader);
  if (!program.link(kMessages))
    return internal_error("GLSL link of kernel " + name + " failed:\n" + program.getInfoLog());
  std::vector<uint32_t> spirv;
  spv::SpvBuildLogger logger;
  glslang::SpvOptions spv_options;
  spv_options.disableOptimizer = true;  // spirv-opt runs below, with the performance recipe
  glslang::GlslangToSpv(*program.getIntermediate(EShLangCompute), spirv, &logger, &spv_options);
  spvtools::Optimizer optimizer(SPV_ENV_VULKAN_1_2);
  optimizer.RegisterPerformancePasses();
  std::vector<uint32_t> optimized;
  if (optimizer.Run(spirv.data(), spirv.size(), &optimized)) spirv = std::move(optimized);
  KILN_RETURN_IF_ERROR(validate_spirv(spirv).with_context("kernel " + name));
  if (persistent)
    (persist.disk != nullptr ? *persist.disk : cache::DiskCache::global()).store(
        cache::EntryKind::kSpirv, persist.key, persist.identity + kCompilerIdentity, name,
        std::string_view(reinterpret_cast<const char*>(spirv.data()), spirv.size() * 4));
  Memo& m = memo();
  std::lock_guard<std::mutex> lock(m.mu);
  ++m.stats.compiles;
  m.modules.emplace(key, spirv);
  return spirv;
}

Status validate_spirv(const std::vector<uint32_t>& spirv) {
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_2);
  std::string diagnostics;
  tools.SetMessageConsumer(
      [&](spv_message_level_t, const char*, const spv_position_t& pos, const char* message) {
        diagnostics +=
            "spirv-val: " + std::string(message) + " (word " + std::to_string(pos.index) + ")\n";
      });
  if (!tools.Validate(spirv)) return internal_error("SPIR-V validation failed:\n" + diagnostics);
  return {};
}

Expected<std::string> disassemble_spirv(const std::vector<uint32_t>& spirv) {
  spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_2);
  std::string text;
  if (!tools.Disassemble(
          spirv, &text,
          SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES | SPV_BINARY_TO_TEXT_OPTION_INDENT))
    return internal_error("SPIR-V disassembly failed");
  return text;
}

std::string stable_hash(const std::string& data) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

ShaderCompileStats shader_compile_stats() {
  Memo& m = memo();
  std::lock_guard<std::mutex> lock(m.mu);
  return m.stats;
}

}  // namespace kiln
