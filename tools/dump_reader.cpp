#include "tools/dump_reader.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kiln::tools {

namespace fs = std::filesystem;
using nlohmann::json;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string drop_blank_lines(const std::string& text) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(" \t\r") != std::string::npos) out += line + "\n";
  return out;
}

std::string DumpCompile::kernel_file(const json& kernel, const std::string& kind) const {
  if (!kernel.contains("files") || !kernel["files"].contains(kind)) return "";
  return read_text(dir / kernel["files"][kind].get<std::string>());
}

namespace {

void read_timings(DumpCompile& c) {
  std::ifstream in(c.dir / "timings.jsonl");
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.contains("dispatches")) continue;
    ++c.replays;
    for (const json& d : j["dispatches"]) {
      KernelTime& t = c.times[d.value("kernel", "")];
      ++t.dispatches;
      t.total_ms += d.value("ms", 0.0);
    }
  }
}

}  // namespace

Dump read_dump(const fs::path& dir) {
  if (!fs::is_directory(dir)) throw std::runtime_error(dir.string() + " is not a directory");
  Dump dump;
  std::vector<fs::path> folders;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory()) folders.push_back(e.path());
  std::sort(folders.begin(), folders.end());
  for (const fs::path& f : folders) {
    if (f.filename() == "check") {  // check mode's repros
      std::vector<fs::path> repros;
      for (const auto& e : fs::directory_iterator(f))
        if (fs::exists(e.path() / "check.json")) repros.push_back(e.path());
      std::sort(repros.begin(), repros.end());
      for (const fs::path& r : repros) {
        json info = json::parse(read_text(r / "check.json"), nullptr, false);
        if (info.is_discarded() || !info.contains("kernel"))
          dump.skipped.push_back("check/" + r.filename().string() + ": unreadable check.json");
        else
          dump.checks.push_back({r, std::move(info)});
      }
      continue;
    }
    const fs::path m = f / "manifest.json";
    if (!fs::exists(m)) {
      dump.skipped.push_back(f.filename().string() + ": no manifest.json");
      continue;
    }
    DumpCompile c;
    c.dir = f;
    c.manifest = json::parse(read_text(m), nullptr, /*allow_exceptions=*/false);
    if (c.manifest.is_discarded() || !c.manifest.contains("kernels") ||
        !c.manifest.contains("nodes")) {
      dump.skipped.push_back(f.filename().string() + ": manifest.json is not a Kiln manifest");
      continue;
    }
    read_timings(c);
    dump.compiles.push_back(std::move(c));
  }
  std::stable_sort(dump.compiles.begin(), dump.compiles.end(),
                   [](const DumpCompile& a, const DumpCompile& b) {
                     const auto key = [](const DumpCompile& c) {
                       return std::make_tuple(c.prefix(), c.manifest.value("compile", 0),
                                              c.manifest.value("segment", 0));
                     };
                     return key(a) < key(b);
                   });
  return dump;
}

}  // namespace kiln::tools
