/// \file differential.h
/// Runs one generated program three ways and compares: the CPU interpreter (eager, the
/// reference), eager Vulkan (one dispatch per op) and kiln::compile on Vulkan, at every size of
/// the program's call list (one compiled function across the calls, so symbolic sizes,
/// recompiles and value guards are exercised).
#pragma once

#include <cstdint>
#include <string>

#include "fuzz/graph_gen.h"

namespace kiln::fuzz {

struct DiffResult {
  bool ok = true;
  std::string report;  // on a mismatch: the seed, the program, the max error, the graphs
  int calls = 0;       // compiled calls made
};

/// Per-dtype tolerance for floats: |got - want| <= abs * scale + rel * |want|, where scale is
/// the largest finite magnitude among the reference's values (cancellation leaves absolute,
/// not relative, error). NaN must match NaN; infinities must match exactly; integers and bools
/// are exact.
struct FloatTol {
  double rel;
  double abs;
};
FloatTol tolerance(DType dtype);

DiffResult check_program(const Program& p);

}  // namespace kiln::fuzz
