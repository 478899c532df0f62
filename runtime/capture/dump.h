/// \file dump.h
/// KILN_DUMP_DIR: per compile, the captured graph, guards, fusion decisions, and per kernel
/// its .comp (GLSL), .spv, .spvasm and .json (bindings, variant, source nodes).
#pragma once

#include <string>

#include "capture/executable.h"

namespace kiln {

/// Writes the dump for compile number `index` of `fn_name` when KILN_DUMP_DIR is set.
/// Failures are logged as warnings, never thrown: dumping must not break a run.
void dump_compile(const std::string& fn_name, uint64_t index, const Executable& exe,
                  const std::string& guards);

/// The dump folder name of a new compiled function called `name`: `name` for the first one in
/// the process, `name-2`, `name-3`, ... for later ones, so that two functions with the same
/// (or the default) name never write into one folder.
std::string unique_dump_name(const std::string& name);

}  // namespace kiln
