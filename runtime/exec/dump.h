/// \file dump.h
/// KILN_DUMP_DIR: per compile of each graph segment, one folder `<function>[_g<segment>]_<n>`
/// holding graph.txt, guards.txt, fusion.txt, per kernel its .comp (GLSL), .spv, .spvasm and
/// .json, and manifest.json, which ties them together (docs/report.md): the function, compile
/// number and recompile reason, the guards with their provenance, the graph breaks, every node
/// (op, shape, dtype, inputs, source location, fusion decision, kernel), and every kernel
/// (nodes covered, fusion rule, bindings, files). With KILN_DUMP_TIMINGS=1 or KILN_LOGS=perf
/// each replay appends its per-kernel GPU times to timings.jsonl in the same folder.
#pragma once

#include <string>
#include <vector>

#include "exec/program.h"
#include "vk/device.h"

namespace kiln {

/// What a compile's dump records besides the Executable itself.
struct DumpRequest {
  std::string function;              // CompileOptions::name
  std::string prefix;                // the function's unique folder prefix (unique_dump_name)
  uint64_t compile = 0;              // compile number of the function, from 0
  int segment = 0;                   // graph segment of the program, from 0
  std::string reason;                // why it recompiled ("" for the first compile)
  std::string guards;                // one guard a line, with provenance
  const Program* program = nullptr;  // the traced program (its graph breaks)
  size_t step = 0;                   // the segment's step in it
};

/// Writes the dump of one compiled segment when KILN_DUMP_DIR is set. Failures are logged as
/// warnings, never thrown: dumping must not break a run.
void dump_compile(const DumpRequest& request, const Executable& exe);

/// The dump folder name of a new compiled function called `name`: `name` for the first one in
/// the process, `name-2`, `name-3`, ... for later ones, so that two functions with the same
/// (or the default) name never write into one folder.
std::string unique_dump_name(const std::string& name);

/// The dump folder of the compile that last dumped `plan` ("" when none).
std::string dump_folder_of(const KernelPlan* plan);

/// Whether replays should time their kernels for the dump (KILN_DUMP_DIR set and
/// KILN_DUMP_TIMINGS=1 or KILN_LOGS=perf).
bool dump_timings_wanted();

/// Appends one replay's per-dispatch GPU times to timings.jsonl in the dump folder of `plan`
/// (nothing when the plan was not dumped or `timings` is empty: no timestamp support).
void dump_timings(const KernelPlan* plan, const std::vector<vk::DispatchTiming>& timings,
                  double wall_ms);

}  // namespace kiln
