#include "tools/html.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace kiln::tools {

namespace fs = std::filesystem;

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string html_id(const std::string& text) {
  std::string out;
  for (char c : text)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '_';
  return out;
}

std::string dot_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

bool have_dot() {
  static const bool found = [] {
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "");
    for (std::string d; std::getline(dirs, d, ':');)
      if (!d.empty() && ::access((fs::path(d) / "dot").c_str(), X_OK) == 0) return true;
    return false;
  }();
  return found;
}

std::optional<std::string> dot_to_svg(const std::string& dot_source, std::string* error) {
  if (!have_dot()) {
    if (error) *error = "Graphviz 'dot' is not installed (Debian: apt-get install graphviz)";
    return std::nullopt;
  }
  // dot reads a file and writes one: no shell quoting of the source, no pipes to deadlock on.
  char dir_template[] = "/tmp/kiln-report-XXXXXX";
  const char* dir = ::mkdtemp(dir_template);
  if (!dir) {
    if (error) *error = "cannot create a temporary directory";
    return std::nullopt;
  }
  const fs::path in = fs::path(dir) / "graph.dot", out = fs::path(dir) / "graph.svg",
                 err = fs::path(dir) / "dot.err";
  std::ofstream(in) << dot_source;
  const std::string cmd =
      "dot -Tsvg '" + in.string() + "' -o '" + out.string() + "' 2>'" + err.string() + "'";
  const int rc = std::system(cmd.c_str());
  std::ifstream svg_in(out);
  std::stringstream svg;
  svg << svg_in.rdbuf();
  std::ifstream err_in(err);
  std::stringstream why;
  why << err_in.rdbuf();
  std::error_code ec;
  fs::remove_all(dir, ec);
  std::string text = svg.str();
  const size_t start = text.find("<svg");
  if (rc != 0 || start == std::string::npos) {
    if (error) *error = "dot failed (exit " + std::to_string(rc) + "): " + why.str();
    return std::nullopt;
  }
  return text.substr(start);
}

std::string html_page_begin(const std::string& title) {
  return R"(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>)" +
         html_escape(title) +
         R"(</title>
<style>
body{font-family:system-ui,sans-serif;margin:0 2em 2em 2em;color:#222;background:#fff}
h1{margin:.6em 0 .2em}h2{border-bottom:2px solid #c60;padding-bottom:.1em;margin-top:1.6em}
h3{margin:1.2em 0 .4em}
table{border-collapse:collapse;margin:.5em 0;font-size:13px}
th,td{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f3ede6}td.num{text-align:right;font-variant-numeric:tabular-nums}
pre{background:#f7f7f7;border:1px solid #ddd;padding:6px;overflow:auto;max-height:28em;
font-size:12px}
.note{color:#555;font-size:13px}.warn{color:#a30}.break{color:#c00;font-weight:bold}
.graph{overflow:auto;border:1px solid #ddd;max-height:44em;background:#fffdfa}
.graph svg{max-width:100%;height:auto}
pre.guards{max-height:8em}pre.reason{margin:0;white-space:pre-wrap}
:target{outline:3px solid #f90;background:#fff6e0}
details>summary{cursor:pointer;font-weight:600}
.kernel{border-left:4px solid #c60;padding-left:.8em;margin:1em 0}
nav a{margin-right:1em}
</style></head><body>
)";
}

std::string html_page_end() {
  return R"(<script>
// Highlight the graph node a kernel link points to (ids inside the inline SVG).
document.addEventListener('click', e => {
  const a = e.target.closest('a[href^="#n-"]');
  if (!a) return;
  document.querySelectorAll('g.node.hl').forEach(g => g.classList.remove('hl'));
  const g = document.getElementById(a.getAttribute('href').slice(1));
  if (g) g.classList.add('hl');
});
</script>
<style>g.node.hl polygon,g.node.hl ellipse{stroke:#f60;stroke-width:4px}</style>
</body></html>
)";
}

}  // namespace kiln::tools
