// kiln: the command-line tool.
#include <CLI/CLI.hpp>

#include "tools/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"kiln: compile tensor programs into fused Vulkan compute shaders"};
  app.require_subcommand(1);

  app.add_subcommand("devices", "List Vulkan devices and their compute limits and features");

  kiln::tools::DemoOptions demo;
  kiln::tools::ChainOptions chain;
  bool run_chain = false;
  auto* demo_cmd = app.add_subcommand(
      "demo",
      "The seed's benchmark: a text encoder compiled static, dynamic, auto and warmed up over a "
      "sweep of sequence lengths (docs/demo.md)");
  demo_cmd->add_flag("--small", demo.small,
                     "Quick configuration: d_model 64, 2 heads, FFN 128, 1 layer, vocab 1000, "
                     "batch 2, S in {16,32,64,96,128}");
  demo_cmd->add_flag("--json", demo.json, "Print one JSON document (config, rows, summary)");
  demo_cmd->add_flag("--background", demo.background,
                     "Compile on a worker thread; the 'served' column says what answered each "
                     "first call, 'worst' the slowest call against 3x steady + 20 ms");
  demo_cmd
      ->add_option("--strategies", demo.strategies,
                   "Comma-separated subset of static,dynamic,auto,warm-up")
      ->delimiter(',')
      ->check(CLI::IsMember({"static", "dynamic", "auto", "warm-up"}));
  demo_cmd->add_option("--lengths", demo.lengths, "Comma-separated sequence lengths")
      ->delimiter(',')
      ->check(CLI::Range(int64_t{2}, int64_t{1} << 20));
  demo_cmd->add_option("--repeat", demo.repeat, "Steady-state calls per length (median)")
      ->check(CLI::PositiveNumber);
  demo_cmd->add_option("--device", demo.device, "vulkan (default) or cpu (the interpreter)")
      ->check(CLI::IsMember({"vulkan", "cpu"}));
  auto* chain_flag = demo_cmd->add_flag(
      "--chain", run_chain,
      "Instead: compile relu((x*a+b)*c-d); fused vs unfused vs eager timings and kernel count");
  demo_cmd->add_option("--rows", chain.rows, "--chain: rows of x")
      ->check(CLI::PositiveNumber)
      ->needs(chain_flag);
  demo_cmd->add_option("--cols", chain.cols, "--chain: columns of x (and length of a, b, c, d)")
      ->check(CLI::PositiveNumber)
      ->needs(chain_flag);
  demo_cmd->add_option("--iters", chain.iters, "--chain: timed iterations per variant")
      ->check(CLI::PositiveNumber)
      ->needs(chain_flag);

  kiln::tools::PrecompileOptions pre;
  auto* pre_cmd = app.add_subcommand(
      "precompile",
      "Compile an ONNX model for given input shapes into a cache directory an application can "
      "ship (docs/cache.md)");
  pre_cmd->add_option("model", pre.model, "The .onnx file")->required()->check(CLI::ExistingFile);
  pre_cmd->add_option("--shape", pre.shapes,
                      "NAME=SHAPE (e.g. input_ids=1x128); repeat a name for more calls");
  pre_cmd->add_option("--cache-dir", pre.cache_dir,
                      "The cache directory to fill (default: KILN_CACHE_DIR, else ~/.cache/kiln)");
  pre_cmd->add_flag("--dynamic", pre.dynamic, "Trace every dim as a size symbol");

  kiln::tools::RunOptions run;
  auto* run_cmd = app.add_subcommand("run", "Run an ONNX model on .npy inputs (docs/onnx.md)");
  run_cmd->add_option("model", run.model, "The .onnx file")->required()->check(CLI::ExistingFile);
  run_cmd->add_option("-i,--input", run.inputs,
                      "NAME=FILE.npy for each graph input; NAME=A.npy,B.npy runs once per file");
  run_cmd->add_option("-o,--out", run.out_dir, "Directory for one <output>.npy per graph output");
  run_cmd
      ->add_option("--device", run.device,
                   "vulkan (default), cpu (the interpreter) or auto (Device::best(): a GPU if "
                   "there is one, else the interpreter; says why)")
      ->check(CLI::IsMember({"vulkan", "cpu", "auto"}));
  run_cmd->add_flag("--dynamic", run.dynamic, "Trace every dim as a size symbol");
  run_cmd->add_flag("--explain", run.explain, "Print graphs, breaks, guards and compiles");
  run_cmd->add_option("--dump", run.dump_dir, "Write graphs and kernels per compile here");

  kiln::tools::OnnxTestOptions onnx_test;
  auto* onnx_test_cmd = app.add_subcommand(
      "onnx-test",
      "Run ONNX backend test cases on the interpreter and Vulkan (docs/conformance.md)");
  onnx_test_cmd->add_option("dirs", onnx_test.dirs, "Case directories or directories of cases")
      ->required();
  onnx_test_cmd->add_option("--device", onnx_test.devices, "cpu,vulkan (default both)")
      ->delimiter(',')
      ->check(CLI::IsMember({"vulkan", "cpu"}));
  onnx_test_cmd->add_option("--filter", onnx_test.filter, "Only cases whose name matches");
  onnx_test_cmd
      ->add_option("--min-pass", onnx_test.min_pass,
                   "Exit 1 if a device passes fewer than this fraction of all cases")
      ->check(CLI::Range(0.0, 1.0));
  onnx_test_cmd->add_flag("--strict", onnx_test.strict,
                          "Exit 1 on any failing case, or a pass that ran a graph on the "
                          "interpreter (no Vulkan kernel)");
  onnx_test_cmd->add_option("--report", onnx_test.report, "Write a Markdown summary here");
  onnx_test_cmd->add_flag("-q,--quiet", onnx_test.quiet, "Print only cases that did not pass");

  kiln::tools::BenchOptions bench;
  kiln::tools::BenchModelOptions bench_model;
  auto* bench_cmd = app.add_subcommand(
      "bench",
      "The benchmark suite: fused vs unfused chain, copy bandwidth, GEMM (against the host's FMA "
      "peak on a CPU Vulkan device), a 3x3 conv on the device and the interpreter, per-call "
      "overhead, "
      "cold vs warm start, peak memory; measured values, ratios and goals. With MODEL.onnx: "
      "that model's compile time, first call, steady latency and per-kernel GPU times "
      "(docs/perf.md)");
  auto* model_opt =
      bench_cmd
          ->add_option("model", bench_model.model,
                       "An .onnx file to benchmark instead of the suite (inputs with -i)")
          ->check(CLI::ExistingFile);
  bench_cmd->add_flag("--quick", bench.quick, "Small sizes and few repetitions (CI)")
      ->excludes(model_opt);
  bench_cmd->add_flag("--json", bench.json, "Print one JSON document instead of tables");
  bench_cmd
      ->add_option("--only", bench.only,
                   "Comma-separated subset of chain,copy,gemm,conv,overhead,start,memory")
      ->delimiter(',')
      ->check(CLI::IsMember({"chain", "copy", "gemm", "conv", "overhead", "start", "memory"}))
      ->excludes(model_opt);
  bench_cmd
      ->add_option("--repeat", bench.repeat,
                   "Timed repetitions per variant (with MODEL: steady calls, default 5)")
      ->check(CLI::PositiveNumber);
  bench_cmd->add_option("-i,--input", bench_model.inputs, "MODEL: NAME=FILE.npy per graph input")
      ->needs(model_opt);
  bench_cmd
      ->add_option("--expect", bench_model.expects,
                   "MODEL: NAME=FILE.npy, a reference output to compare with")
      ->needs(model_opt);
  bench_cmd
      ->add_option("--tol", bench_model.tol,
                   "MODEL: outputs match when |diff| <= tol * (1 + |expected|) (default 1e-4)")
      ->needs(model_opt);
  bench_cmd
      ->add_option("--device", bench_model.device,
                   "MODEL: vulkan (default), cpu (the interpreter) or auto (Device::best())")
      ->check(CLI::IsMember({"vulkan", "cpu", "auto"}))
      ->needs(model_opt);
  bench_cmd->add_flag("--dynamic", bench_model.dynamic, "MODEL: trace every dim as a size symbol")
      ->needs(model_opt);
  bench_cmd
      ->add_option("--warmup", bench_model.warmup,
                   "MODEL: untimed calls after the first (default 1)")
      ->check(CLI::NonNegativeNumber)
      ->needs(model_opt);
  bench_cmd
      ->add_option("--profile", bench_model.profile,
                   "MODEL: extra calls timed per kernel with GPU timestamps (default 1; 0: none)")
      ->check(CLI::NonNegativeNumber)
      ->needs(model_opt);
  bench_cmd->add_option("--top", bench_model.top, "MODEL: kernels listed by time (default 10)")
      ->check(CLI::PositiveNumber)
      ->needs(model_opt);
  bench_cmd
      ->add_option("--flops", bench_model.flops,
                   "MODEL: FLOPs per call (a multiply-add counts 2), for GFLOP/s")
      ->check(CLI::NonNegativeNumber)
      ->needs(model_opt);
  bench_cmd->add_option("--child", bench.child)->group("");
  bench_cmd->add_option("--child-config", bench.child_config)->group("");

  kiln::tools::RunOptions check;
  auto* check_cmd = app.add_subcommand(
      "check",
      "Run an ONNX model in check mode: every kernel compared with the CPU interpreter; the "
      "first divergence named, with a repro (docs/report.md)");
  check_cmd->add_option("model", check.model, "The .onnx file")
      ->required()
      ->check(CLI::ExistingFile);
  check_cmd->add_option("-i,--input", check.inputs,
                        "NAME=FILE.npy for each graph input; NAME=A.npy,B.npy runs once per file");
  check_cmd->add_flag("--dynamic", check.dynamic, "Trace every dim as a size symbol");
  check_cmd->add_option("--dump", check.dump_dir, "Dump and repro directory (default kiln-check)");

  kiln::tools::ReportOptions report;
  auto* report_cmd = app.add_subcommand(
      "report", "Turn a KILN_DUMP_DIR tree into one self-contained HTML page (docs/report.md)");
  report_cmd->add_option("dir", report.dump_dir, "The dump directory")
      ->required()
      ->check(CLI::ExistingDirectory);
  report_cmd->add_option("-o,--out", report.out, "The HTML file to write");
  report_cmd->add_flag("--no-graph", report.no_graph, "Node tables instead of Graphviz pictures");
  report_cmd->add_option("--asm-limit", report.asm_limit,
                         "Bytes of SPIR-V disassembly embedded per kernel (default 32768; 0: all)");

  kiln::tools::InspectOptions inspect;
  auto* inspect_cmd = app.add_subcommand(
      "inspect",
      "A KILN_DUMP_DIR tree in the terminal: functions, compiles and kernels; one kernel's "
      "source nodes, GLSL and disassembly; two compiles' guards (docs/report.md)");
  inspect_cmd->add_option("dir", inspect.dump_dir, "The dump directory")
      ->required()
      ->check(CLI::ExistingDirectory);
  auto* kernel_opt = inspect_cmd->add_option(
      "-k,--kernel", inspect.kernel, "Show this kernel (NAME, or FOLDER/NAME for one compile)");
  inspect_cmd->add_option("--diff-guards", inspect.diff_guards, "Two compile folders: guard diff")
      ->expected(2)
      ->excludes(kernel_opt);
  inspect_cmd->add_flag("--no-asm", inspect.no_asm, "--kernel: leave out the SPIR-V disassembly")
      ->needs(kernel_opt);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every usage error (an unknown option, a missing file) exits 1
    // with CLI11's message, as every other error of the tool does.
    return app.exit(e) == 0 ? 0 : 1;
  }
  if (app.got_subcommand("check")) return kiln::tools::check_main(check);
  if (app.got_subcommand("report")) return kiln::tools::report_main(report);
  if (app.got_subcommand("inspect")) return kiln::tools::inspect_main(inspect);
  if (app.got_subcommand("bench") && !bench_model.model.empty()) {
    bench_model.json = bench.json;
    if (bench.repeat > 0) bench_model.repeat = bench.repeat;
    return kiln::tools::bench_model_main(bench_model);
  }
  if (app.got_subcommand("bench")) return kiln::tools::bench_main(bench);
  if (app.got_subcommand("run")) return kiln::tools::run_main(run);
  if (app.got_subcommand("onnx-test")) return kiln::tools::onnx_test_main(onnx_test);
  if (app.got_subcommand("devices")) return kiln_devices_main();
  if (app.got_subcommand("precompile")) return kiln::tools::precompile_main(pre);
  if (app.got_subcommand("demo"))
    return run_chain ? kiln::tools::chain_main(chain) : kiln::tools::demo_main(demo);
  return 1;
}
