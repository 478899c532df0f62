// kiln report DIR -o FILE.html: one self-contained HTML page for a KILN_DUMP_DIR tree
// (docs/report.md). Graphs are laid out by Graphviz `dot` and embedded as SVG; kernels link to
// the graph nodes they cover and back.
#include <fmt/format.h>

#include <fstream>
#include <map>
#include <set>

#include "tools/commands.h"
#include "tools/dump_reader.h"
#include "tools/html.h"

namespace kiln::tools {
namespace {

using nlohmann::json;

std::string node_anchor(const DumpCompile& c, int64_t id) {
  return "n-" + html_id(c.folder()) + "-" + std::to_string(id);
}
std::string kernel_anchor(const DumpCompile& c, const std::string& kernel) {
  return "k-" + html_id(c.folder()) + "-" + html_id(kernel);
}
std::string num(double v, int digits = 3) {
  return fmt::format("{:.{}f}", v, digits);
}

std::string shape_str(const json& node) {
  return node.value("dtype", "?") + node.value("sym_shape", "[]");
}

/// The graph as DOT: one cluster per kernel (its nodes), inputs and constants as ellipses, the
/// graph break that ends this segment as a red octagon fed by the outputs.
std::string graph_dot(const DumpCompile& c) {
  const json& m = c.manifest;
  std::string dot =
      "digraph G {\n  rankdir=TB; bgcolor=\"transparent\";\n"
      "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", fontname=\"Helvetica\", "
      "fontsize=10];\n  edge [color=\"#777777\", arrowsize=0.6];\n";
  auto node_line = [&](const json& n) {
    const int64_t id = n["id"].get<int64_t>();
    const std::string op = n.value("op", "?");
    std::string label = "%" + std::to_string(id) + " " + op + "\n" + shape_str(n);
    if (!n.value("source", "").empty()) label += "\n" + n.value("source", "");
    std::string attrs = "id=\"" + node_anchor(c, id) + "\", label=\"" + dot_escape(label) +
                        "\", tooltip=\"" + dot_escape(n.value("fusion", "")) + "\"";
    if (op == "input" || op == "constant")
      attrs += ", shape=ellipse, fillcolor=\"#e8f0ff\"";
    else if (!n["kernel"].is_null())
      attrs += ", URL=\"#" + kernel_anchor(c, n["kernel"].get<std::string>()) + "\"";
    if (n.value("output", false)) attrs += ", penwidth=2, color=\"#226622\"";
    return "    n" + std::to_string(id) + " [" + attrs + "];\n";
  };
  std::map<std::string, std::vector<const json*>> by_kernel;
  for (const json& n : m["nodes"])
    if (!n["kernel"].is_null()) by_kernel[n["kernel"].get<std::string>()].push_back(&n);
  for (const json& k : c.kernels()) {
    const std::string name = k["name"].get<std::string>();
    dot += "  subgraph \"cluster_" + html_id(name) + "\" {\n    label=\"" + dot_escape(name) +
           " (" + dot_escape(k.value("rule", "")) + ")\"; id=\"cl-" + kernel_anchor(c, name) +
           "\"; URL=\"#" + kernel_anchor(c, name) +
           "\"; style=\"filled,rounded\"; fillcolor=\"#fff1e0\"; color=\"#cc6600\"; "
           "fontname=\"Helvetica\"; fontsize=11;\n";
    for (const json* n : by_kernel[name]) dot += node_line(*n);
    dot += "  }\n";
  }
  for (const json& n : m["nodes"])
    if (n["kernel"].is_null()) dot += node_line(n);
  for (const json& n : m["nodes"])
    for (const json& in : n["inputs"])
      dot += "  n" + std::to_string(in.get<int64_t>()) + " -> n" +
             std::to_string(n["id"].get<int64_t>()) + ";\n";
  auto break_node = [&](const char* id, const json& index, const std::string& what) {
    const json& b = m["breaks"][index.get<size_t>()];
    std::string label = what + ": " + b.value("reason", "");
    if (!b.value("loc", "").empty()) label += "\nat " + b.value("loc", "");
    dot += "  " + std::string(id) + " [id=\"" + id + "-" + html_id(c.folder()) +
           "\", shape=octagon, fillcolor=\"#ffe0e0\", color=\"#cc0000\", fontcolor=\"#990000\", "
           "label=\"" +
           dot_escape(label) + "\"];\n";
  };
  if (m.contains("break_before") && !m["break_before"].is_null()) {
    break_node("brk_in", m["break_before"], "after graph break");
    for (const json& in : m["inputs"])
      dot += "  brk_in -> n" + std::to_string(in.get<int64_t>()) + " [style=dashed, color=red];\n";
  }
  if (m.contains("break_after") && !m["break_after"].is_null()) {
    break_node("brk", m["break_after"], "graph break");
    for (const json& o : m["outputs"])
      dot += "  n" + std::to_string(o.get<int64_t>()) + " -> brk [style=dashed, color=red];\n";
  }
  return dot + "}\n";
}

std::string node_links(const DumpCompile& c, const json& ids) {
  std::string s;
  for (const json& id : ids)
    s += "<a href=\"#" + node_anchor(c, id.get<int64_t>()) + "\">%" +
         std::to_string(id.get<int64_t>()) + "</a> ";
  return s;
}

std::string node_table(const DumpCompile& c) {
  std::string s =
      "<table class=\"nodes\"><tr><th>Node</th><th>Op</th><th>Shape</th><th>Inputs</th>"
      "<th>Source</th><th>Fusion</th><th>Kernel</th></tr>\n";
  for (const json& n : c.manifest["nodes"]) {
    const std::string kernel = n["kernel"].is_null() ? "" : n["kernel"].get<std::string>();
    s += "<tr id=\"" + node_anchor(c, n["id"].get<int64_t>()) + "\"><td>%" +
         std::to_string(n["id"].get<int64_t>()) + "</td><td>" + html_escape(n.value("op", "")) +
         "</td><td>" + html_escape(shape_str(n)) + "</td><td>" + node_links(c, n["inputs"]) +
         "</td><td>" + html_escape(n.value("source", "")) + "</td><td>" +
         html_escape(n.value("fusion", "")) + "</td><td>" +
         (kernel.empty()
              ? ""
              : "<a href=\"#" + kernel_anchor(c, kernel) + "\">" + html_escape(kernel) + "</a>") +
         "</td></tr>\n";
  }
  return s + "</table>\n";
}

std::string kernel_table(const DumpCompile& c) {
  std::string s =
      "<table class=\"kernels\"><tr><th>Kernel</th><th>Variant</th><th>Fusion rule</th>"
      "<th>Nodes</th><th>Source</th><th>Dispatches / call</th><th>ms / call</th>"
      "<th>GFLOP/s</th><th>GB/s</th><th>Bindings</th></tr>\n";
  for (const json& k : c.kernels()) {
    const std::string name = k["name"].get<std::string>();
    std::string disp = "", ms = "", gflops = "", gbs = "";
    auto t = c.times.find(name);
    if (t != c.times.end() && c.replays > 0) {
      const double per_call = t->second.total_ms / static_cast<double>(c.replays);
      disp = num(static_cast<double>(t->second.dispatches) / static_cast<double>(c.replays), 1);
      ms = num(per_call, 4);
      if (per_call > 0) {
        gflops = num(k.value("flops", 0.0) / (per_call * 1e6), 2);
        gbs = num(k.value("bytes", 0.0) / (per_call * 1e6), 2);
      }
    }
    std::string sources;
    for (const json& src : k["sources"]) sources += html_escape(src.get<std::string>()) + " ";
    s += "<tr class=\"kernel-row\" id=\"kr-" + kernel_anchor(c, name) + "\"><td><a href=\"#" +
         kernel_anchor(c, name) + "\">" + html_escape(name) + "</a></td><td>" +
         html_escape(k.value("variant", "")) + "</td><td>" + html_escape(k.value("rule", "")) +
         "</td><td>" + node_links(c, k["source_nodes"]) + "</td><td>" + sources +
         "</td><td class=\"num\">" + disp + "</td><td class=\"num\">" + ms +
         "</td><td class=\"num\">" + gflops + "</td><td class=\"num\">" + gbs +
         "</td><td class=\"num\">" + std::to_string(k["bindings"].size()) + "</td></tr>\n";
  }
  return s + "</table>\n";
}

std::string kernel_details(const DumpCompile& c, const json& k, size_t asm_limit) {
  const std::string name = k["name"].get<std::string>();
  std::string spvasm = c.kernel_file(k, "spvasm");
  if (spvasm.size() > asm_limit) {  // unrolled loops make some modules megabytes of text
    const size_t cut = spvasm.rfind('\n', asm_limit);
    spvasm = spvasm.substr(0, cut == std::string::npos ? asm_limit : cut) + "\n; ... " +
             std::to_string(spvasm.size()) +
             " bytes in all: " + (c.dir / k["files"]["spvasm"].get<std::string>()).string() +
             " (or kiln report --asm-limit 0)\n";
  }
  std::string s =
      "<div class=\"kernel\" id=\"" + kernel_anchor(c, name) + "\"><h4>" + html_escape(name) +
      "</h4>\n<p>" + html_escape(k.value("variant", "")) + ", fusion rule <b>" +
      html_escape(k.value("rule", "")) + "</b>; root <a href=\"#" +
      node_anchor(c, k["root"].get<int64_t>()) + "\">%" + std::to_string(k["root"].get<int64_t>()) +
      "</a>; covers " + node_links(c, k["source_nodes"]) + "; local size " +
      std::to_string(k.value("local_size", 0)) + ", groups " + html_escape(k["groups"].dump()) +
      ", " + std::to_string(k.value("spirv_words", 0)) + " SPIR-V words. <a href=\"#kr-" +
      kernel_anchor(c, name) + "\">table row</a></p>\n";
  s += "<table class=\"bindings\"><tr><th>Binding</th><th>Kind</th><th>Access</th><th>Node</th>"
       "<th>Op</th><th>Type</th><th>Bytes</th></tr>\n";
  for (const json& b : k["bindings"]) {
    const std::string node = b["node"].is_null()
                                 ? ""
                                 : "<a href=\"#" + node_anchor(c, b["node"].get<int64_t>()) +
                                       "\">%" + std::to_string(b["node"].get<int64_t>()) + "</a>";
    s += "<tr><td>" + std::to_string(b.value("binding", 0)) + "</td><td>" +
         html_escape(b.value("kind", "")) + "</td><td>" + html_escape(b.value("access", "")) +
         "</td><td>" + node + "</td><td>" + html_escape(b.value("op", "")) + "</td><td>" +
         html_escape(b.value("meta", "")) + "</td><td class=\"num\">" +
         std::to_string(b.value("bytes", 0)) + "</td></tr>\n";
  }
  s += "</table>\n<details class=\"glsl-view\"><summary>GLSL</summary><pre class=\"glsl\">" +
       html_escape(drop_blank_lines(c.kernel_file(k, "glsl"))) +
       "</pre></details>\n<details class=\"spirv-view\"><summary>SPIR-V disassembly</summary>"
       "<pre class=\"spvasm\">" +
       html_escape(spvasm) + "</pre></details></div>\n";
  return s;
}

std::string compile_section(const DumpCompile& c, const ReportOptions& options) {
  const json& m = c.manifest;
  std::string s = "<section class=\"compile\" id=\"c-" + html_id(c.folder()) + "\"><h3>" +
                  html_escape(c.folder()) + ": compile " + std::to_string(m.value("compile", 0)) +
                  ", graph segment " + std::to_string(m.value("segment", 0)) + " (" +
                  html_escape(m.value("device", "")) + ", " + num(m.value("compile_ms", 0.0), 1) +
                  " ms)</h3>\n";
  s += "<p><b>Why:</b></p><pre class=\"reason\">" + html_escape(m.value("reason", "")) + "</pre>\n";
  s += "<details open class=\"guards\"><summary>Guards (" + std::to_string(m["guards"].size()) +
       ")</summary><pre class=\"guards\">";
  for (const json& g : m["guards"]) s += html_escape(g.get<std::string>()) + "\n";
  s += "</pre></details>\n";
  if (!m["breaks"].empty()) {
    s += "<p class=\"break\">Graph breaks of this program:</p><ol class=\"breaks\">";
    for (const json& b : m["breaks"])
      s += "<li>" + html_escape(b.value("reason", "")) +
           (b.value("loc", "").empty() ? "" : " at " + html_escape(b.value("loc", ""))) + "</li>";
    s += "</ol>\n";
  }
  if (c.kernels().empty()) {
    s += "<p class=\"note\">No kernels: this graph runs on the CPU interpreter.</p>\n";
  } else {
    s += kernel_table(c);
    if (c.replays == 0)
      s += "<p class=\"note\">No kernel timings: run with KILN_DUMP_TIMINGS=1 (or KILN_LOGS=perf) "
           "to record them.</p>\n";
    else
      s += "<p class=\"note\">Times: GPU timestamps averaged over " + std::to_string(c.replays) +
           " timed call(s); GFLOP/s and GB/s from the kernel's FLOP and byte estimates at the "
           "recorded sizes.</p>\n";
  }
  std::string error = "disabled by --no-graph";
  std::optional<std::string> svg;
  if (!options.no_graph) svg = dot_to_svg(graph_dot(c), &error);
  if (svg) {
    s += "<div class=\"graph\">" + *svg + "</div>\n";
  } else {
    s += "<p class=\"warn\">No graph picture: " + html_escape(error) + ". The nodes:</p>\n";
  }
  if (!svg) s += node_table(c);  // (with a picture, the SVG holds the node ids)
  for (const json& k : c.kernels())
    s += kernel_details(c, k, options.asm_limit == 0 ? std::string::npos : options.asm_limit);
  return s + "</section>\n";
}

/// Check mode's divergences: the kernel, its nodes and the error, the repro folder.
std::string check_section(const Dump& dump) {
  if (dump.checks.empty()) return "";
  std::string s =
      "<h2 id=\"check\">Check mode: kernels that differ from the interpreter</h2>\n<table "
      "class=\"checks\"><tr><th>Function</th><th>Kernel</th><th>Nodes</th><th>Sources</th>"
      "<th>Max error</th><th>Allowed</th><th>Device / interpreter at the worst element</th>"
      "<th>Repro</th></tr>\n";
  for (const DumpCheck& c : dump.checks) {
    const json& i = c.info;
    std::string nodes, sources;
    for (const json& n : i["nodes"]) nodes += "%" + n.dump() + " ";
    for (const json& src : i["sources"]) sources += html_escape(src.get<std::string>()) + "<br>";
    s += "<tr class=\"check-row\"><td>" + html_escape(i.value("function", "")) + "</td><td>" +
         html_escape(i.value("kernel", "")) + "</td><td>" + nodes + "</td><td>" + sources +
         "</td><td class=\"num\">" + fmt::format("{:.4g}", i.value("max_error", 0.0)) +
         "</td><td class=\"num\">" + fmt::format("{:.4g}", i.value("tolerance", 0.0)) +
         "</td><td class=\"num\">" +
         fmt::format("{:.6g} / {:.6g}", i.value("actual", 0.0), i.value("expected", 0.0)) +
         "</td><td>" + html_escape(c.dir.string()) + "</td></tr>\n";
  }
  return s + "</table>\n";
}

}  // namespace

int report_main(const ReportOptions& options) {
  Dump dump;
  try {
    dump = read_dump(options.dump_dir);
  } catch (const std::exception& e) {
    fmt::print(stderr, "kiln report: {}\n", e.what());
    return 1;
  }
  if (dump.compiles.empty()) {
    fmt::print(stderr, "kiln report: no compile with a manifest.json under {}\n", options.dump_dir);
    return 1;
  }
  std::map<std::string, std::vector<const DumpCompile*>> by_function;
  std::vector<std::string> order;
  size_t kernels = 0;
  for (const DumpCompile& c : dump.compiles) {
    if (!by_function.count(c.prefix())) order.push_back(c.prefix());
    by_function[c.prefix()].push_back(&c);
    kernels += c.kernels().size();
  }
  std::string html = html_page_begin("Kiln report: " + options.dump_dir);
  html += "<h1>Kiln report</h1>\n<p class=\"note\">" + html_escape(options.dump_dir) + ": " +
          std::to_string(order.size()) + " function(s), " + std::to_string(dump.compiles.size()) +
          " compiled graph(s), " + std::to_string(kernels) + " kernel(s).</p>\n<nav>";
  for (const std::string& f : order)
    html += "<a href=\"#f-" + html_id(f) + "\">" + html_escape(f) + "</a>";
  html += "</nav>\n";
  for (const std::string& s : dump.skipped)
    html += "<p class=\"warn\">Skipped " + html_escape(s) + "</p>\n";
  html += check_section(dump);
  if (!have_dot() && !options.no_graph)
    html +=
        "<p class=\"warn\">Graphviz 'dot' was not found: graphs are shown as node tables "
        "(Debian: apt-get install graphviz).</p>\n";
  for (const std::string& f : order) {
    const auto& compiles = by_function[f];
    html += "<h2 id=\"f-" + html_id(f) + "\">Function '" +
            html_escape(compiles.front()->manifest.value("function", f)) + "' (" + html_escape(f) +
            ")</h2>\n<table class=\"timeline\"><tr><th>Compile</th>"
            "<th>Segment</th><th>Folder</th><th>Reason</th><th>Device</th><th>Kernels</th>"
            "<th>Guards</th><th>Compile ms</th></tr>\n";
    for (const DumpCompile* c : compiles) {
      const json& m = c->manifest;
      html += "<tr><td class=\"num\">" + std::to_string(m.value("compile", 0)) +
              "</td><td class=\"num\">" + std::to_string(m.value("segment", 0)) +
              "</td><td><a href=\"#c-" + html_id(c->folder()) + "\">" + html_escape(c->folder()) +
              "</a></td><td><pre class=\"reason\">" + html_escape(m.value("reason", "")) +
              "</pre></td><td>" + html_escape(m.value("device", "")) + "</td><td class=\"num\">" +
              std::to_string(c->kernels().size()) + "</td><td class=\"num\">" +
              std::to_string(m["guards"].size()) + "</td><td class=\"num\">" +
              num(m.value("compile_ms", 0.0), 1) + "</td></tr>\n";
    }
    html += "</table>\n";
    for (const DumpCompile* c : compiles) html += compile_section(*c, options);
  }
  html += html_page_end();
  std::ofstream out(options.out, std::ios::binary);
  out << html;
  if (!out) {
    fmt::print(stderr, "kiln report: cannot write {}\n", options.out);
    return 1;
  }
  fmt::print("wrote {} ({} function(s), {} compile(s), {} kernel(s))\n", options.out, order.size(),
             dump.compiles.size(), kernels);
  return 0;
}

}  // namespace kiln::tools
