#include "exec/dump.h"

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "codegen/spirv.h"
#include "kiln/logging.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

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

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

/// The dump folder of each dumped plan, by address, with what identifies the plan: an address
/// reused by another Executable's plan (one never dumped, like check mode's) does not match.
struct Folder {
  std::string dir;
  std::string identity;
};
std::mutex folders_mu;
std::atomic<bool> any_dumped{false};  // some compile registered a folder
std::map<const KernelPlan*, Folder>& folders() {
  static std::map<const KernelPlan*, Folder> m;
  return m;
}
std::string identity_of(const KernelPlan& plan) {
  std::string id = plan.graph_key;
  for (const Kernel& k : plan.kernels) id += "|" + k.name + ":" + k.cache_key;
  return id;
}

/// Per node: the fusion decision of fusion.txt ("%13 matmul: matmul_epilogue [...]").
std::map<NodeId, std::string> fusion_rules(const std::string& fusion_log) {
  std::map<NodeId, std::string> rules;
  for (const std::string& line : lines_of(fusion_log)) {
    if (line.size() < 2 || line[0] != '%') continue;
    const size_t colon = line.find(": ");
    if (colon == std::string::npos) continue;
    try {
      rules[static_cast<NodeId>(std::stoll(line.substr(1)))] = line.substr(colon + 2);
    } catch (const std::exception&) {
    }
  }
  return rules;
}

/// "matmul_epilogue" from "matmul_epilogue [row-block kernel; ...]" or "epilogue_root (stored)".
std::string rule_name(const std::string& decision) {
  const size_t end = decision.find_first_of(" [(");
  return decision.substr(0, end);
}

uint64_t numel(const Shape& s) {
  uint64_t n = 1;
  for (Dim d : s) n *= static_cast<uint64_t>(std::max<Dim>(d, 0));
  return n;
}

/// Arithmetic of a kernel at the recorded sizes: 2*M*N*K per matmul (a multiply-add counts 2),
/// one per output element for every other compute node. An estimate for GFLOP/s.
uint64_t flops_of(const Graph& g, const Kernel& k) {
  uint64_t flops = 0;
  for (NodeId id : k.fused_nodes) {
    const Node& n = g.node(id);
    const uint64_t out = numel(n.meta.shape);
    if (n.op == OpKind::MatMul && !n.inputs.empty()) {
      const Shape& a = g.node(n.inputs[0]).meta.shape;
      flops += 2 * out * static_cast<uint64_t>(a.empty() ? 1 : a.back());
    } else if (op_category(n.op) != OpCategory::kMovement) {
      flops += out;
    }
  }
  return flops;
}

json node_json(const Node& n, const std::map<NodeId, std::string>& rules,
               const std::map<NodeId, std::string>& kernel_of, bool output) {
  json j;
  j["id"] = n.id;
  j["op"] = op_name(n.op);
  j["dtype"] = dtype_name(n.meta.dtype);
  j["shape"] = n.meta.shape;
  j["sym_shape"] = sym_shape_str(n.sym);
  j["attrs"] = n.attrs.str(n.op);
  j["inputs"] = n.inputs;
  j["source"] = n.loc;
  auto r = rules.find(n.id);
  j["fusion"] = r == rules.end() ? "" : r->second;
  auto k = kernel_of.find(n.id);
  j["kernel"] = k == kernel_of.end() ? json(nullptr) : json(k->second);
  j["output"] = output;
  return j;
}

}  // namespace

std::string unique_dump_name(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, int> seen;
  std::lock_guard<std::mutex> lock(mu);
  const int n = ++seen[name];
  return n == 1 ? name : name + "-" + std::to_string(n);
}

std::string dump_folder_of(const KernelPlan* plan) {
  if (plan == nullptr) return "";
  std::lock_guard<std::mutex> lock(folders_mu);
  auto it = folders().find(plan);
  return it == folders().end() || it->second.identity != identity_of(*plan) ? "" : it->second.dir;
}

bool dump_timings_wanted() {
  // Every replay asks: a process that never dumped answers without reading the environment.
  if (!any_dumped.load(std::memory_order_relaxed)) return false;
  const char* root = std::getenv("KILN_DUMP_DIR");
  if (!root || !*root) return false;
  const char* t = std::getenv("KILN_DUMP_TIMINGS");
  return (t && *t && std::string(t) != "0") || log_enabled(LogTopic::kPerf);
}

void dump_timings(const KernelPlan* plan, const std::vector<vk::DispatchTiming>& timings,
                  double wall_ms) {
  if (timings.empty()) return;
  const std::string dir = dump_folder_of(plan);
  if (dir.empty()) return;
  json j;
  j["wall_ms"] = wall_ms;
  json ks = json::array();
  for (const vk::DispatchTiming& t : timings) ks.push_back({{"kernel", t.label}, {"ms", t.gpu_ms}});
  j["dispatches"] = ks;
  std::lock_guard<std::mutex> lock(folders_mu);  // one writer at a time per process
  std::ofstream f(fs::path(dir) / "timings.jsonl", std::ios::app);
  f << j.dump() << "\n";
}

void dump_compile(const DumpRequest& req, const Executable& exe) {
  const char* root = std::getenv("KILN_DUMP_DIR");
  if (!root || !*root) return;
  const std::string folder =
      safe_name(req.prefix + (req.segment ? "_g" + std::to_string(req.segment) : "")) + "_" +
      std::to_string(req.compile);
  fs::path dir = fs::path(root) / folder;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    log(LogTopic::kWarning, "KILN_DUMP_DIR: cannot create " + dir.string() + ": " + ec.message());
    return;
  }
  // The graph the kernels index: the traced one as codegen lowered it for the device.
  const Graph& graph = exe.device_graph();
  bool ok = write_text(dir / "graph.txt", graph.to_string());
  ok &= write_text(dir / "guards.txt", req.guards);

  json m;
  m["format"] = "kiln-dump/1";
  m["function"] = req.function;
  m["prefix"] = req.prefix;
  m["folder"] = folder;
  m["compile"] = req.compile;
  m["segment"] = req.segment;
  m["reason"] = req.reason.empty() ? "first call" : req.reason;
  m["recompile"] = !req.reason.empty();
  m["device"] = exe.on_device() ? "vulkan" : "cpu interpreter";
  m["compile_ms"] = exe.compile_ms();
  m["guards"] = lines_of(req.guards);
  // Every graph break of the program, and the ones just before and after this segment.
  json breaks = json::array();
  json before = nullptr, after = nullptr;
  if (req.program) {
    const std::vector<ProgramStep>& steps = req.program->steps;
    for (size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].kind == ProgramStep::Kind::kSegment || !steps[i].is_break) continue;
      if (i < req.step) before = breaks.size();
      if (i > req.step && after.is_null()) after = breaks.size();
      breaks.push_back({{"reason", steps[i].where.reason}, {"loc", steps[i].where.loc}});
    }
  }
  m["breaks"] = breaks;
  m["break_before"] = before;
  m["break_after"] = after;
  m["inputs"] = graph.inputs();
  m["outputs"] = graph.outputs();

  std::map<NodeId, std::string> rules, kernel_of;
  json kernels = json::array();
  if (const KernelPlan* plan = exe.plan()) {
    {
      std::lock_guard<std::mutex> lock(folders_mu);
      folders()[plan] = {dir.string(), identity_of(*plan)};
      any_dumped.store(true, std::memory_order_relaxed);
    }
    ok &= write_text(dir / "fusion.txt", plan->fusion_log);
    rules = fusion_rules(plan->fusion_log);
    for (const Kernel& k : plan->kernels) {
      for (NodeId id : k.fused_nodes) kernel_of.emplace(id, k.name);
      kernel_of[k.root] = k.name;
    }
    for (const Kernel& k : plan->kernels) {
      ok &= write_text(dir / (k.name + ".comp"), k.glsl);
      ok &= write_file(dir / (k.name + ".spv"), k.spirv.data(), k.spirv.size() * sizeof(uint32_t));
      auto text = disassemble_spirv(k.spirv);
      ok &= write_text(dir / (k.name + ".spvasm"), text.ok() ? *text : text.status().to_string());
      json j;
      j["name"] = k.name;
      j["variant"] = kernel_variant_name(k.variant);
      j["local_size"] = k.local_size;
      j["groups"] = k.groups;
      j["cache_key"] = k.cache_key;
      j["root"] = k.root;
      j["source_nodes"] = k.fused_nodes;
      json bindings = json::array();
      uint64_t bytes = 0;
      for (size_t i = 0; i < k.bindings.size(); ++i) {
        const Node& n = graph.node(k.bindings[i]);
        const uint64_t b = n.meta.nbytes();
        bytes += b;
        const bool texel = std::find(k.texel_bindings.begin(), k.texel_bindings.end(), i) !=
                           k.texel_bindings.end();
        const bool r32f = std::find(k.texel_r32f_bindings.begin(), k.texel_r32f_bindings.end(),
                                    i) != k.texel_r32f_bindings.end();
        bindings.push_back({{"binding", i},
                            {"node", n.id},
                            {"op", op_name(n.op)},
                            {"meta", n.meta.str()},
                            {"bytes", b},
                            {"kind", texel  ? "texel buffer"
                                     : r32f ? "texel buffer (r32f)"
                                            : "storage buffer"},
                            {"access", i == 0 ? "write" : "read"}});
      }
      if (!k.size_slots.empty())
        bindings.push_back({{"binding", k.sizes_binding()},
                            {"node", nullptr},
                            {"op", "sizes"},
                            {"meta", "u32[" + std::to_string(k.size_slots.size()) + "]"},
                            {"bytes", k.sizes_bytes()},
                            {"kind", "uniform buffer"},
                            {"access", "read"}});
      j["bindings"] = bindings;
      j["size_slots"] = k.size_slots.size();
      j["spec_constants"] = json::array();
      ok &= write_text(dir / (k.name + ".json"), j.dump(2) + "\n");

      // The manifest's entry: the same, plus what ties the kernel to the graph.
      std::set<std::string> kernel_rules;
      for (NodeId id : k.fused_nodes) {
        auto r = rules.find(id);
        if (r != rules.end()) kernel_rules.insert(rule_name(r->second));
      }
      auto root_rule = rules.find(k.root);
      j["rule"] = root_rule == rules.end() ? "" : rule_name(root_rule->second);
      j["rules"] = kernel_rules;
      std::vector<std::string> sources;
      for (NodeId id : k.fused_nodes)
        if (!graph.node(id).loc.empty() &&
            std::find(sources.begin(), sources.end(), graph.node(id).loc) == sources.end())
          sources.push_back(graph.node(id).loc);
      j["sources"] = sources;
      j["bytes"] = bytes;
      j["flops"] = flops_of(graph, k);
      j["row_split"] = k.row_split.has_value();
      j["spirv_words"] = k.spirv.size();
      j["files"] = {{"glsl", k.name + ".comp"},
                    {"spirv", k.name + ".spv"},
                    {"spvasm", k.name + ".spvasm"},
                    {"json", k.name + ".json"}};
      kernels.push_back(std::move(j));
    }
  } else {
    ok &= write_text(dir / "interpreter.txt", "this graph runs on the CPU interpreter\n");
  }
  std::set<NodeId> outputs(graph.outputs().begin(), graph.outputs().end());
  json nodes = json::array();
  for (const Node& n : graph.nodes())
    nodes.push_back(node_json(n, rules, kernel_of, outputs.count(n.id) > 0));
  m["nodes"] = nodes;
  m["kernels"] = kernels;
  ok &= write_text(dir / "manifest.json", m.dump(1) + "\n");
  if (!ok)
    log(LogTopic::kWarning, "KILN_DUMP_DIR: failed to write some files under " + dir.string());
}

}  // namespace kiln
