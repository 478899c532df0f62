// kiln inspect DIR: a KILN_DUMP_DIR tree in the terminal (docs/report.md): the functions,
// compiles and kernels; one kernel's source nodes, GLSL and disassembly; the guards of two
// compiles side by side.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "tools/commands.h"
#include "tools/dump_reader.h"

namespace kiln::tools {
namespace {

using nlohmann::json;

void list(const Dump& dump) {
  std::string last;
  for (const DumpCompile& c : dump.compiles) {
    const json& m = c.manifest;
    if (c.prefix() != last) {
      fmt::print("function '{}' ({})\n", m.value("function", c.prefix()), c.prefix());
      last = c.prefix();
    }
    std::string reason = m.value("reason", "");
    std::replace(reason.begin(), reason.end(), '\n', ' ');
    fmt::print("  {}: compile {}, segment {}, {}, {} guard(s), {} kernel(s); {}\n", c.folder(),
               m.value("compile", 0), m.value("segment", 0), m.value("device", ""),
               m["guards"].size(), c.kernels().size(), reason);
    for (const json& k : c.kernels()) {
      std::string nodes;
      for (const json& n : k["source_nodes"]) nodes += " %" + std::to_string(n.get<int64_t>());
      std::string time;
      auto t = c.times.find(k["name"].get<std::string>());
      if (t != c.times.end() && c.replays > 0)
        time = fmt::format(", {:.4f} ms/call", t->second.total_ms / static_cast<double>(c.replays));
      fmt::print("    {:<24} {:<18} {:<16} nodes{}{}\n", k["name"].get<std::string>(),
                 k.value("variant", ""), k.value("rule", ""), nodes, time);
    }
  }
  for (const DumpCheck& c : dump.checks) {
    std::string nodes;
    for (const json& n : c.info["nodes"]) nodes += " %" + n.dump();
    fmt::print("check mode: '{}' kernel {} differs (max error {:.3g}), nodes{}; repro {}\n",
               c.info.value("function", ""), c.info.value("kernel", ""),
               c.info.value("max_error", 0.0), nodes, c.dir.string());
  }
  for (const std::string& s : dump.skipped) fmt::print("skipped {}\n", s);
}

int show_kernel(const Dump& dump, const std::string& spec, bool no_asm) {
  std::string folder, name = spec;
  if (const size_t slash = spec.find('/'); slash != std::string::npos) {
    folder = spec.substr(0, slash);
    name = spec.substr(slash + 1);
  }
  int shown = 0;
  for (const DumpCompile& c : dump.compiles) {
    if (!folder.empty() && c.folder() != folder) continue;
    for (const json& k : c.kernels()) {
      if (k["name"] != name) continue;
      if (shown++) {  // the same name in several compiles: the first, and where the others are
        fmt::print("(also in {}: kiln inspect DIR --kernel {}/{})\n", c.folder(), c.folder(), name);
        continue;
      }
      fmt::print("kernel {} of {} ({}, fusion rule {})\nsource nodes:\n", name, c.folder(),
                 k.value("variant", ""), k.value("rule", ""));
      std::set<int64_t> covered;
      for (const json& n : k["source_nodes"]) covered.insert(n.get<int64_t>());
      covered.insert(k["root"].get<int64_t>());
      for (const json& n : c.manifest["nodes"]) {
        if (!covered.count(n["id"].get<int64_t>())) continue;
        std::string ins;
        for (const json& i : n["inputs"]) ins += (ins.empty() ? "%" : ", %") + i.dump();
        fmt::print("  %{} = {}({}) : {}{}  # {}  [{}]\n", n["id"].get<int64_t>(), n.value("op", ""),
                   ins, n.value("dtype", ""), n.value("sym_shape", ""), n.value("source", ""),
                   n.value("fusion", ""));
      }
      fmt::print("bindings:\n");
      for (const json& b : k["bindings"])
        fmt::print("  {}: {} {} {} {} ({} bytes)\n", b.value("binding", 0), b.value("kind", ""),
                   b.value("access", ""), b["node"].is_null() ? "sizes" : "%" + b["node"].dump(),
                   b.value("meta", ""), b.value("bytes", 0));
      fmt::print("--- GLSL ({}) ---\n{}\n", k["files"].value("glsl", ""),
                 drop_blank_lines(c.kernel_file(k, "glsl")));
      if (!no_asm)
        fmt::print("--- SPIR-V disassembly ({}) ---\n{}\n", k["files"].value("spvasm", ""),
                   c.kernel_file(k, "spvasm"));
    }
  }
  if (shown == 0) {
    fmt::print(stderr, "kiln inspect: no kernel '{}' in the dump\n", spec);
    return 1;
  }
  return 0;
}

int diff_guards(const Dump& dump, const std::string& a, const std::string& b) {
  const DumpCompile *ca = nullptr, *cb = nullptr;
  for (const DumpCompile& c : dump.compiles) {
    if (c.folder() == a) ca = &c;
    if (c.folder() == b) cb = &c;
  }
  if (!ca || !cb) {
    fmt::print(stderr, "kiln inspect: no compile folder '{}'\n", !ca ? a : b);
    return 1;
  }
  std::vector<std::string> ga, gb;
  for (const json& g : ca->manifest["guards"]) ga.push_back(g.get<std::string>());
  for (const json& g : cb->manifest["guards"]) gb.push_back(g.get<std::string>());
  const std::set<std::string> sa(ga.begin(), ga.end()), sb(gb.begin(), gb.end());
  fmt::print("--- {}\n+++ {}\n", a, b);
  size_t differ = 0;
  for (const std::string& g : ga)
    if (!sb.count(g)) fmt::print("- {}\n", g), ++differ;
  for (const std::string& g : gb)
    if (!sa.count(g)) fmt::print("+ {}\n", g), ++differ;
  fmt::print(
      "{} guard(s) differ, {} in common\n", differ,
      std::count_if(ga.begin(), ga.end(), [&](const std::string& g) { return sb.count(g); }));
  fmt::print("reason for {}: {}\n", b, cb->manifest.value("reason", ""));
  return 0;
}

}  // namespace

int inspect_main(const InspectOptions& options) {
  Dump dump;
  try {
    dump = read_dump(options.dump_dir);
  } catch (const std::exception& e) {
    fmt::print(stderr, "kiln inspect: {}\n", e.what());
    return 1;
  }
  if (!options.kernel.empty()) return show_kernel(dump, options.kernel, options.no_asm);
  if (options.diff_guards.size() == 2)
    return diff_guards(dump, options.diff_guards[0], options.diff_guards[1]);
  list(dump);
  return dump.compiles.empty() ? 1 : 0;
}

}  // namespace kiln::tools
