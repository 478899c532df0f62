/// \file dump_reader.h
/// Reads a KILN_DUMP_DIR tree back (the manifest.json of every compile folder, the kernels'
/// GLSL and disassembly, timings.jsonl) for `kiln report` and `kiln inspect`.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kiln::tools {

/// GPU times of one kernel summed over the replays recorded in timings.jsonl.
struct KernelTime {
  uint64_t dispatches = 0;  // timed dispatches (a row-split kernel has several per call)
  double total_ms = 0;
};

struct DumpCompile {
  std::filesystem::path dir;
  nlohmann::json manifest;                  // manifest.json as written by the runtime
  uint64_t replays = 0;                     // timed replays in timings.jsonl
  std::map<std::string, KernelTime> times;  // per kernel name

  std::string folder() const { return manifest.value("folder", dir.filename().string()); }
  std::string prefix() const { return manifest.value("prefix", folder()); }
  const nlohmann::json& kernels() const { return manifest.at("kernels"); }
  /// The kernel's file `kind` ("glsl", "spvasm") as text ("" when missing).
  std::string kernel_file(const nlohmann::json& kernel, const std::string& kind) const;
};

/// A check-mode repro (check/<function>-<n>/check.json).
struct DumpCheck {
  std::filesystem::path dir;
  nlohmann::json info;  // check.json
};

struct Dump {
  std::vector<DumpCompile> compiles;  // by function prefix, then compile number, then segment
  std::vector<DumpCheck> checks;      // check mode's repros, by folder name
  std::vector<std::string> skipped;   // folders without a readable manifest.json, and why
};

/// Reads every `<dir>/*/manifest.json`. Throws std::runtime_error when `dir` is not a
/// directory; a folder whose manifest is missing or malformed is listed in `skipped`.
Dump read_dump(const std::filesystem::path& dir);

/// A file's text ("" when it cannot be read).
std::string read_text(const std::filesystem::path& path);

/// `text` with runs of blank lines dropped (the preprocessed GLSL keeps one per directive).
std::string drop_blank_lines(const std::string& text);

}  // namespace kiln::tools
