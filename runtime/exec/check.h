/// \file check.h
/// Check mode (KILN_CHECK=1 or CompileOptions::check): every call of a compiled device segment
/// also runs the segment on the CPU interpreter, and each kernel's output is compared with the
/// interpreter's value of the same graph node, in execution order. The first kernel outside
/// its tolerance is reported: a logged warning naming the kernel, its source nodes (with their
/// ONNX node names or C++ locations) and the max error, a CheckReport (check_reports()), and
/// under KILN_DUMP_DIR a minimal repro in check/<function>-<n>/: the kernel's inputs as .npy,
/// the expected and actual outputs, its GLSL and check.json. The call still returns the
/// device's results: check mode observes, it never changes what a program computes.
/// docs/report.md.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "kiln/compile.h"
#include "kiln/tensor.h"

namespace kiln {

class Executable;

/// One kernel's comparison.
struct KernelCheck {
  std::string kernel;                // its name in the run's plan
  std::vector<int32_t> nodes;        // the graph nodes it covers
  std::vector<std::string> sources;  // those nodes' source locations, deduplicated
  std::string dtype;
  double max_error = 0;  // max |device - interpreter|
  double tolerance = 0;  // the allowed error at the worst element
  int64_t worst_index = -1;
  double expected = 0, actual = 0;  // at the worst element
  bool compared = false;            // false: the check plan had no kernel writing this node
  bool ok = true;
};

/// One checked call of one segment.
struct CheckReport {
  std::string function;              // CompileOptions::name
  std::vector<KernelCheck> kernels;  // in execution order
  int first_divergence = -1;         // index into kernels, -1: every kernel matched
  std::string repro_dir;             // "" when none was written
  std::string note;                  // e.g. why a kernel was not compared
  /// Non-empty when the interpreter rejects the call (an index out of range, say) although the
  /// device returned a result: kernels clamp such indices (docs/ops.md), so that result is not
  /// the reference's and no kernel was compared. Counts as a failed check.
  std::string interpreter_error;
};

/// Whether executables compiled with `options` now run in check mode (options.check or
/// KILN_CHECK=1; never for the executables check mode compiles for itself).
bool check_enabled(const CompileOptions& options);

/// Runs the check of one call of `exe` (a device segment). Never throws: a failure of the
/// check itself is logged as a warning.
void check_segment(const Executable& exe, const CompileOptions& options, Device device,
                   const std::vector<Tensor>& inputs, const std::vector<Tensor>& constants,
                   std::span<const int64_t> symbol_values);

/// The reports of this process's checked calls, oldest first (at most the last 256).
std::vector<CheckReport> check_reports();
void clear_check_reports();

/// Test-only fault injection: while set, check mode perturbs the output of the kernel called
/// `kernel` (as read back from the device, before comparing) so that a test can see check mode
/// name it. "" turns it off. KILN_CHECK_FAULT=<kernel> sets it from the environment.
void set_check_fault(const std::string& kernel);

}  // namespace kiln
