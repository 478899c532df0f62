// kiln check MODEL.onnx -i NAME=FILE.npy ...: `kiln run` in check mode (capture/check.h). Prints
// every checked kernel; exits 1 when a kernel differs from the interpreter, with its repro under
// the dump directory.
#include <fmt/format.h>

#include "capture/check.h"
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
  int diverged = 0;
  size_t kernels = 0;
  for (size_t r = 0; r < reports.size(); ++r) {
    const CheckReport& report = reports[r];
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
  fmt::print("check: {} kernel run(s) compared in {} checked call(s); {}\n", kernels,
             reports.size(),
             diverged ? fmt::format("{} call(s) with a diverging kernel", diverged)
                      : std::string("every kernel matches the interpreter"));
  return diverged ? 1 : 0;
}

}  // namespace kiln::tools
