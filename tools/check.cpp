// kiln check MODEL.onnx -i NAME=FILE.npy ...: `kiln run` in check mode (exec/check.h). Prints
// every checked kernel; exits 1 when a kernel differs from the interpreter, with its repro under
// the dump directory, or when the interpreter rejects a call the device ran (an index out of
// range, which kernels clamp).
#include <fmt/format.h>

#include "exec/check.h"
#include "tools/commands.h"

namespace kiln::tools {

int check_main(RunOptions options) {
  options.check = true;
  if (options.dump_dir.empty()) options.dump_dir = "kiln-check";
  clear_check_reports();
  const int rc = run_main(options);
  if (rc != 0) return rc;
  const std::vector<CheckReport> reports = check_reports();
  if (reports.empty()) {
    fmt::print("check: no device kernel ran (nothing to compare)\n");
    return 0;
  }
  int diverged = 0, rejected = 0;
  size_t kernels = 0;
  for (size_t r = 0; r < reports.size(); ++r) {
    const CheckReport& report = reports[r];
    if (!report.interpreter_error.empty()) {
      ++rejected;
      fmt::print(
          "check {} ('{}'): REJECTED by the interpreter, yet the device returned a result "
          "(not compared): {}\n",
          r, report.function, report.interpreter_error);
      continue;
    }
    fmt::print("check {} ('{}'):{}\n", r, report.function,
               report.note.empty() ? "" : " " + report.note);
    for (const KernelCheck& k : report.kernels) {
      std::string nodes;
      for (int32_t id : k.nodes) nodes += " %" + std::to_string(id);
      fmt::print("  {:<24} {:<5} {:<4} max error {:.3g} (allowed {:.3g}) nodes{}\n", k.kernel,
                 k.dtype, k.ok ? "ok" : "DIFF", k.max_error, k.tolerance, nodes);
      ++kernels;
    }
    if (report.first_divergence >= 0) {
      ++diverged;
      const KernelCheck& bad = report.kernels[static_cast<size_t>(report.first_divergence)];
      std::string sources;
      for (const std::string& s : bad.sources) sources += " " + s;
      fmt::print("  first divergence: {} (from{}); repro: {}\n", bad.kernel, sources,
                 report.repro_dir.empty() ? "none written" : report.repro_dir);
    }
  }
  std::string verdict;
  if (diverged) verdict = fmt::format("{} call(s) with a diverging kernel", diverged);
  if (rejected)
    verdict +=
        fmt::format("{}{} call(s) the interpreter rejects", verdict.empty() ? "" : ", ", rejected);
  if (verdict.empty()) verdict = "every kernel matches the interpreter";
  fmt::print("check: {} kernel run(s) compared in {} checked call(s); {}\n", kernels,
             reports.size(), verdict);
  return diverged || rejected ? 1 : 0;
}

}  // namespace kiln::tools
