#include "capture/dump.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include <nlohmann/json.hpp>

#include "codegen/spirv.h"
#include "kiln/logging.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

bool write_file(const fs::path& path, const void* data, size_t size) {
  std::ofstream f(path, std::ios::binary);
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  return static_cast<bool>(f);
}
bool write_text(const fs::path& path, const std::string& text) {
  return write_file(path, text.data(), text.size());
}

std::string safe_name(const std::string& name) {
  std::string s;
  for (char c : name)
    s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '_';
  return s.empty() ? "fn" : s;
}

}  // namespace

std::string unique_dump_name(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, int> seen;
  std::lock_guard<std::mutex> lock(mu);
  const int n = ++seen[name];
  return n == 1 ? name : name + "-" + std::to_string(n);
}

void dump_compile(const std::string& fn_name, uint64_t index, const Executable& exe,
                  const std::string& guards) {
  const char* root = std::getenv("KILN_DUMP_DIR");
  if (!root || !*root) return;
  fs::path dir = fs::path(root) / (safe_name(fn_name) + "_" + std::to_string(index));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    log(LogTopic::kWarning, "KILN_DUMP_DIR: cannot create " + dir.string() + ": " + ec.message());
    return;
  }
  bool ok = write_text(dir / "graph.txt", exe.graph().to_string());
  ok &= write_text(dir / "guards.txt", guards);
  if (const KernelPlan* plan = exe.plan()) {
    ok &= write_text(dir / "fusion.txt", plan->fusion_log);
    for (const Kernel& k : plan->kernels) {
      ok &= write_text(dir / (k.name + ".comp"), k.glsl);
      ok &= write_file(dir / (k.name + ".spv"), k.spirv.data(), k.spirv.size() * sizeof(uint32_t));
      auto text = disassemble_spirv(k.spirv);
      ok &= write_text(dir / (k.name + ".spvasm"), text.ok() ? *text : text.status().to_string());
      nlohmann::json j;
      j["name"] = k.name;
      j["variant"] = kernel_variant_name(k.variant);
      j["local_size"] = k.local_size;
      j["groups"] = k.groups;
      j["cache_key"] = k.cache_key;
      j["root"] = k.root;
      j["source_nodes"] = k.fused_nodes;
      nlohmann::json bindings = nlohmann::json::array();
      for (size_t i = 0; i < k.bindings.size(); ++i) {
        const Node& n = exe.graph().node(k.bindings[i]);
        bindings.push_back({{"binding", i},
                            {"node", n.id},
                            {"op", op_name(n.op)},
                            {"meta", n.meta.str()},
                            {"access", i == 0 ? "write" : "read"}});
      }
      j["bindings"] = bindings;
      j["size_slots"] = k.size_slots.size();
      j["spec_constants"] = nlohmann::json::array();
      ok &= write_text(dir / (k.name + ".json"), j.dump(2) + "\n");
    }
  } else {
    ok &= write_text(dir / "interpreter.txt", "this graph runs on the CPU interpreter\n");
  }
  if (!ok)
    log(LogTopic::kWarning, "KILN_DUMP_DIR: failed to write some files under " + dir.string());
}

}  // namespace kiln
