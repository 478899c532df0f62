/// \file commands.h
/// Entry points of the kiln CLI's subcommands.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

int kiln_devices_main();

namespace kiln::tools {

/// `kiln demo --chain`: the fused elementwise chain relu((x*a+b)*c-d).
struct ChainOptions {
  int64_t rows = 1024;
  int64_t cols = 4096;
  int iters = 10;
};
int chain_main(const ChainOptions& options);

/// `kiln demo`: the seed's text-encoder benchmark (docs/demo.md).
struct DemoOptions {
  bool small = false;  // the quick configuration (CI)
  bool json = false;   // one JSON document on stdout instead of tables
  std::vector<std::string> strategies = {"static", "dynamic", "auto", "warm-up"};
  std::vector<int64_t> lengths;  // empty: the configuration's lengths
  int repeat = 3;                // steady-state calls per length (median reported)
  std::string device = "vulkan";
  /// Compile in the background (CompileOptions::background): first calls are served by the
  /// interpreter or a covering entry; steady latencies are measured once the kernels are in.
  bool background = false;
};
int demo_main(const DemoOptions& options);

/// `kiln run MODEL.onnx -i NAME=FILE.npy ... -o OUTDIR` (docs/onnx.md).
struct RunOptions {
  std::string model;
  std::vector<std::string> inputs;  // NAME=FILE[,FILE...]: one file per run
  std::string out_dir;
  std::string device = "vulkan";
  bool dynamic = false;  // every dim symbolic (Dynamic::kTrue)
  bool explain = false;
  std::string dump_dir;
  bool check = false;  // kiln check: check mode (CompileOptions::check), reports printed
};
int run_main(const RunOptions& options);
/// `kiln check MODEL.onnx -i NAME=FILE.npy ...`: runs the model in check mode and prints, per
/// compiled segment, every kernel's comparison with the interpreter; exit 1 when one differs
/// (tools/check.cpp, docs/report.md).
int check_main(RunOptions options);

/// `kiln precompile MODEL.onnx --shape NAME=2x128 ... --cache-dir DIR` (docs/cache.md).
struct PrecompileOptions {
  std::string model;
  std::vector<std::string> shapes;  // NAME=SHAPE; the k-th of each input makes the k-th call
  std::string cache_dir;            // empty: the process's cache (KILN_CACHE_DIR, ~/.cache/kiln)
  bool dynamic = false;             // every dim symbolic (Dynamic::kTrue)
};
int precompile_main(const PrecompileOptions& options);

/// `kiln onnx-test DIR...`: ONNX backend test cases on the interpreter and Vulkan.
struct OnnxTestOptions {
  std::vector<std::string> dirs;
  std::vector<std::string> devices = {"cpu", "vulkan"};
  std::string filter;           // regex over case names
  double min_pass = 0;  // exit 1 if a device passes fewer than this fraction of all cases
  bool strict = false;  // exit 1 on a failing case or a pass that ran a graph on the interpreter
  std::string report;   // write a Markdown summary and the case lists here
  bool quiet = false;   // print only cases that did not pass
};
int onnx_test_main(const OnnxTestOptions& options);

/// `kiln bench`: the benchmark suite (tools/bench*.cpp, docs/perf.md).
struct BenchOptions {
  bool quick = false;             // small sizes, few repetitions (CI)
  bool json = false;              // one JSON document on stdout instead of tables
  std::vector<std::string> only;  // benchmark names; empty: all
  int repeat = 0;                 // timed repetitions per variant; 0: each benchmark's default
  std::string child;              // hidden: run as the child of the start benchmark
  std::string child_config = "full";
};
int bench_main(const BenchOptions& options);

/// `kiln bench MODEL.onnx -i NAME=FILE.npy ...`: one ONNX model's compile time, first call,
/// steady latency, kernels and per-kernel GPU times (tools/bench_model.cpp, docs/perf.md).
struct BenchModelOptions {
  std::string model;
  std::vector<std::string> inputs;   // NAME=FILE.npy per graph input
  std::vector<std::string> expects;  // NAME=FILE.npy: reference outputs to compare with
  std::string device = "vulkan";
  bool json = false;
  bool dynamic = false;  // every dim symbolic (Dynamic::kTrue)
  int repeat = 5;        // timed steady calls
  int warmup = 1;        // untimed calls after the first
  int profile = 1;       // calls with per-kernel GPU timestamps (Vulkan); 0: none
  int top = 10;          // kernels listed by time
  double flops = 0;      // FLOPs per call (for GFLOP/s); 0: unknown
  double tol = 1e-4;     // |kiln - expected| <= tol * (1 + |expected|)
};
int bench_model_main(const BenchModelOptions& options);

/// `kiln report DIR -o FILE.html`: one self-contained HTML page for a dump (docs/report.md).
struct ReportOptions {
  std::string dump_dir;
  std::string out = "kiln-report.html";
  bool no_graph = false;     // node tables instead of Graphviz pictures
  size_t asm_limit = 32768;  // bytes of SPIR-V disassembly embedded per kernel (0: all)
};
int report_main(const ReportOptions& options);

/// `kiln inspect DIR`: a dump in the terminal: list, one kernel, or two entries' guards.
struct InspectOptions {
  std::string dump_dir;
  std::string kernel;                    // show this kernel (name, or FOLDER/NAME)
  std::vector<std::string> diff_guards;  // two compile folders
  bool no_asm = false;                   // --kernel: leave out the SPIR-V disassembly
};
int inspect_main(const InspectOptions& options);

}  // namespace kiln::tools
